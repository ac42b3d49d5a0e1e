/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the QEMU host (host-qemu.c, host-qemu-stub.c, host-qemu-x86.c):
 * what each guest arch needs of it, and the helpers its files share.
 */
#ifndef VMM_QEMU_HOST_QEMU_INT_H
#define VMM_QEMU_HOST_QEMU_INT_H

#include "arch/slot.h"
#include "vmm/guest/stub-place.h"
#include "vmm/qemu/host-qemu.h"

/* x86_64: the return address at a function's entry is on the stack, not in a register. */
#define RET_ON_STACK UINT32_MAX

/*
 * What differs by guest under QEMU (where the stub goes is the guest's:
 * vmm/guest/stub-place.h): the 'g' offsets of the registers the host
 * reads (the stack pointer and return address at a function's entry, the
 * ring header the stub holds at its doorbell), and the rate of the counter
 * the stub reads. QEMU 7.2's arm64 generic timer counts at 62.5 MHz
 * (GTIMER_SCALE, 16 ns); its riscv64 virt machine's timebase is 10 MHz
 * (RISCV_ACLINT_DEFAULT_TIMEBASE_FREQ); loongarch64's constant timer
 * 100 MHz (TIMER_PERIOD, 10 ns: target/loongarch/constant_timer.c); an
 * x86 guest's TSC is the host's (measured).
 */
struct qguest {
	unsigned sp_off, ret_off, ring_reg_off;
	uint64_t clock_khz;
};

/* By IMAGE_ARCH_* (host-qemu-stub.c). */
extern const struct qguest host_qemu_guests[];

static inline struct host_qemu *hq_of(struct host *h)
{
	return (struct host_qemu *)h;
}

static inline const struct qguest *hq_guest(const struct host_qemu *hq)
{
	return &host_qemu_guests[hq->image_arch];
}

/* The tracer's guest-physical addresses are the image's; QEMU put it elsewhere. */
static inline uint64_t hq_real(const struct host_qemu *hq, uint64_t gpa)
{
	return hq->q->arch.ram_gpa + (uint64_t)((int64_t)gpa + hq->bias);
}

/* host-qemu.c: guest RAM at an image-relative address; whether rc says QEMU is gone; breakpoints as wanted. */
void *hq_gpa_ptr(struct host *h, uint64_t gpa, uint64_t len);
int hq_gone(struct host_qemu *hq, int rc);
int hq_sync_breaks(struct host_qemu *hq, struct errbuf *err);

/* host-qemu-stub.c: the stub's place, install and the rings' later area (host_ops). */
int hq_stub_room(struct host *h, const struct elf_image *elf, const struct symtab *syms, uint64_t *bytes,
		 struct errbuf *err);
int hq_stub_install(struct host *h, const struct elf_image *elf, const struct symtab *syms,
		    uint64_t data_size, struct stub_region *r, struct errbuf *err);
int hq_rings_area(struct host *h, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err);
/* arm64 6.9 on: the guest at hq->guard.bp on vCPU cpu, its tables built: the stub's guard page mapped in them. */
int hq_guard_map_now(struct host_qemu *hq, unsigned cpu, struct errbuf *err);
void hq_stub_free(struct host *h, struct stub_region *r);

/* host-qemu-boot.c: the guest's life (host_ops). */
int hq_start(struct host *h, struct errbuf *err);
enum vm_stop_reason hq_run(struct host *h, int *signo);
const char *hq_stop_msg(struct host *h);
void hq_vcpu_registers(struct host *h, unsigned cpu, char *buf, size_t len, uint64_t *pc);
void hq_report(struct host *h, FILE *f);
void hq_destroy(struct host *h);

/*
 * After QEMU started (hq->q set): the host over it for the kernel elf of
 * image_arch, which QEMU loaded into guest RAM, found there by its first
 * bytes (head, hlen; NULL: not looked for, an untraced boot).
 */
int host_qemu_init(struct host_qemu *hq, int image_arch, const struct elf_image *elf,
		   const uint8_t *head, size_t hlen, const char *kernel_path, struct errbuf *err);
void host_qemu_destroy(struct host_qemu *hq);

#endif
