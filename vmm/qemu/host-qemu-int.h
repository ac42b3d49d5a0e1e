/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the QEMU host (host-qemu.c, host-qemu-stub.c, host-qemu-x86.c):
 * what each guest arch needs of it, and the helpers its files share.
 */
#ifndef VMM_QEMU_HOST_QEMU_INT_H
#define VMM_QEMU_HOST_QEMU_INT_H

#include "arch/slot.h"
#include "vmm/qemu/host-qemu.h"

/* The stub's page and its doorbell's (guest-stub/<arch>/stub.S). */
#define STUB_CODE_ROOM 8192
/* x86_64: the return address at a function's entry is on the stack, not in a register. */
#define RET_ON_STACK UINT32_MAX

/*
 * What differs by guest under QEMU: where the stub and its rings go
 * (docs/STUB-PLACEMENT.md), the 'g' offsets of the registers the host
 * reads (the stack pointer and return address at a function's entry, the
 * ring header the stub holds at its doorbell), and the rate of the counter
 * the stub reads. QEMU 7.2's arm64 generic timer counts at 62.5 MHz
 * (GTIMER_SCALE, 16 ns); its riscv64 virt machine's timebase is 10 MHz
 * (RISCV_ACLINT_DEFAULT_TIMEBASE_FREQ); loongarch64's constant timer
 * 100 MHz (TIMER_PERIOD, 10 ns: target/loongarch/constant_timer.c); an
 * x86 guest's TSC is the host's (measured). x86_64 places its stub in a region of its own
 * (host-qemu-x86.c), not in the image's padding: no code_end.
 */
struct qguest {
	const char *code_end;		/* the stub fills the STUB_CODE_ROOM bytes below this symbol */
	const char *data_start, *data_end;
	/*
	 * Where the rings go when [data_start, data_end) is not known or
	 * empty (NULL: nowhere): memory the guest frees after the hand-over,
	 * so the rings must move there (rings_area).
	 */
	const char *early_start, *early_end;
	uint64_t data_end_align;
	/*
	 * Without padding below code_end, the stub may take the start of
	 * [data_start, data_end) when code_past_end names a symbol that is not
	 * 2 MiB-aligned (riscv64: __init_data_begin, which STRICT_KERNEL_RWX
	 * aligns; without it the image's last block is executable throughout).
	 */
	const char *code_past_end;
	/*
	 * Without padding below code_end, nor code_past_end: the page at this
	 * symbol, the guard page the kernel leaves unmapped after its image
	 * (arm64: _end), when the early page tables map it (not 2 MiB-aligned)
	 * and the host can map it in the final ones (hq_guard_map).
	 */
	const char *code_guard;
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
/* arm64 6.9 on: the guest at hq->guard_bp on vCPU cpu, its tables built: the stub's guard page mapped in them. */
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
