/* SPDX-License-Identifier: GPL-2.0 */
/*
 * QEMU as a host of the boundary in vmm/host/host.h (docs/HOSTS.md), over
 * a qvm (vmm/qemu/qemu-vm.h). One thread drives it: the one that opened it,
 * created the tracer and calls host_qemu_step; the tracer's hooks run on
 * it while QEMU is stopped, so pausing from a hook is a no-op. The gdbstub
 * is one conversation, held by one thread at a time: the driver's, or,
 * between its pause and resume, another thread's (the control socket's,
 * attaching a client). Such a pause is a request the driver serves at its
 * next step: it stops QEMU, hands the conversation over and waits for the
 * resume. Another thread asks for a stop (host_ops.stop, request_stop) the
 * same way: the driver carries it out at its next step.
 *
 * The stub and its rings live in padding of the kernel image that every
 * boot phase maps (docs/STUB-PLACEMENT.md): arm64 the 8 KiB below _etext
 * (the stub's page, then its doorbell's) with rings in the init data's
 * tail [__rela_end, __init_end), which they leave at the hand-over, or
 * where they cannot move and that tail is not larger, in
 * [init_pg_end, _end); riscv64 the 8 KiB below __init_begin with rings in
 * [_end, ALIGN(_end, 2M)). x86_64's stub has a region of its own in RAM
 * memmap= keeps (host-qemu-x86.c). loongarch64's stub lives in the low
 * 2 MiB Linux always reserves, its rings in a region the device tree the
 * host writes reserves (la64-boot.h), both in the kernel's direct-mapped
 * window in every phase.
 */
#ifndef VMM_QEMU_HOST_QEMU_H
#define VMM_QEMU_HOST_QEMU_H

#include <pthread.h>
#include <stdatomic.h>

#include "vmm/guest/a64-guard.h"
#include "vmm/host/console.h"
#include "vmm/host/host.h"
#include "vmm/qemu/qemu-vm.h"

struct elf_image;
struct kernel_image;
struct symtab;

/* memmap=SIZE$START at a fixed width, so that it can be rewritten in place. */
/* x86_64's region: the stub's page tables, its code from here, its rings from here (2 MiB pages). */
#define HQ_X86_CODE 0x10000ULL
#define HQ_X86_DATA 0x200000ULL
#define HOST_QEMU_MEMMAP_FMT "memmap=0x%016llx$0x%016llx"

struct host_qemu {
	struct host h;
	struct qvm *q;
	struct qvm qh;		/* what q points to */
	char *cmdline;
	int sfd;			/* SIGINT, SIGTERM, SIGHUP, read between steps */
	int signo;			/* the signal that stopped the guest */
	/* The console: QEMU's serial port is the other end of con_fd; a thread reads it. */
	struct console con;
	int con_fd, con_running;
	pthread_t con_thread;
	/* Every vCPU's registers where the guest stopped, kept before QEMU ends. */
	char regs[HOST_MAX_CPUS][1024];
	uint64_t regs_pc[HOST_MAX_CPUS];
	int image_arch;			/* IMAGE_ARCH_* */
	int64_t bias;			/* RAM offset where QEMU put the image, minus its first paddr */
	pthread_t driver;
	struct host_hooks hooks;
	int started;			/* the guest has run */
	uint64_t clock_khz;

	/* Breakpoints: what each vCPU wants, and their union as set in QEMU. */
	uint64_t want[HOST_MAX_CPUS][4];
	unsigned nwant[HOST_MAX_CPUS];
	uint64_t set[HOST_MAX_CPUS * 4 + 4];
	unsigned nset;
	uint64_t doorbell;		/* the stub's vt_stub_doorbell (VA), 0: none */
	/* The one-page arm64 stub with no padding below it: a full ring waits in the stub, no breakpoint. */
	int doorbell_waits;
	/*
	 * machine_restart, _power_off, _halt: the guest's end, caught before
	 * QEMU exits, so that a vCPU still inside the stub (riscv64 does not
	 * stop its other CPUs before a restart) finishes its record first.
	 */
	uint64_t end_bp[3];
	const uint8_t *stub_cfg;	/* the stub's configuration block (host view) */

	/*
	 * A pause by another thread: pause_lock makes it one at a time (held
	 * from pause to resume); under lock, pause_want asks the driver, which
	 * sets handed once QEMU is stopped and waits (cond) for pause_want to
	 * clear; holder is then the gdbstub's user. closed: the driver serves
	 * no more pauses (the guest ended).
	 */
	pthread_mutex_t pause_lock;
	pthread_cond_t cond;
	/* Written when another thread asks something of the driver: its wait for a stop ends at once. */
	int wake_fd;
	int inited;			/* host_qemu_init ran: its locks exist */
	int pause_want, closed, pause_failed;
	atomic_int handed;
	pthread_t holder;

	/* Stopping: asked from any thread, carried out by the driver. */
	pthread_mutex_t lock;
	int asked;
	enum vm_stop_reason ask_reason;
	char ask_msg[512];
	atomic_int stopping;
	enum vm_stop_reason reason;
	char msg[512];
	atomic_ullong doorbells;
	atomic_int dead;		/* the gdbstub's connection is gone: QEMU died or ended */

	/*
	 * arm64: a region of RAM the device tree reserves (but leaves in the
	 * linear map) for the rings from the hand-over on (area_size 0: none;
	 * set by the caller, which made the tree; loongarch64: the rings'
	 * only place, from the first call), and what places it in the
	 * linear map: memstart_addr's location, and VA_BITS from _text.
	 */
	uint64_t area_pa, area_size;
	/*
	 * x86_64: the command line's memmap= as written (HOST_QEMU_MEMMAP_FMT),
	 * rewritten in guest memory at startup_64 once the region is placed.
	 */
	char memmap[64];
	uint64_t boot_params;		/* x86_64: the zero page startup_64 got (its rsi) */
	/* riscv64: the rest of the image's last 2 MiB block, reserved in the device tree (0: none). */
	uint64_t past_end_pa, past_end_size;
	unsigned a64_page_shift;	/* an arm64 Image's page size, from its header (0: not said) */
	/*
	 * arm64 kernels that map themselves from C (6.9 on): the host maps the
	 * stub's guard page in the kernel's own tables when a vCPU first
	 * reaches guard.bp (vmm/guest/a64-guard.h; 0: nothing left to map).
	 */
	struct a64_guard guard;
	uint64_t memstart_pa;
	unsigned va_bits;
};

/* The most vCPUs this host runs. */
#define HOST_QEMU_MAX_CPUS QVM_MAX_CPUS

/*
 * QEMU started for b's kernel (stopped before its first instruction; an
 * x86_64 one, traced, at its kernel's entry), ready for a tracer. A signal
 * meanwhile leaves it stopping (host_ops.stopping), its run returning at
 * once. *out is freed by its destroy operation.
 */
int host_qemu_create(struct host **out, const struct host_boot *b, struct errbuf *err);
/* Whether QEMU's own loaders take the kernel: an x86_64 bzImage, a plain arm64 or riscv64 Image, a loongarch64 ELF vmlinux. */
int host_qemu_loads(const struct kernel_image *img);

/*
 * x86_64 (host-qemu-x86.c): the ring memory the region at area_pa holds,
 * the stub placed there, the host's TSC rate (an x86 guest's under TCG).
 */
int host_qemu_x86_room(const struct host_qemu *hq, uint64_t *bytes, struct errbuf *err);
int host_qemu_x86_install(struct host_qemu *hq, const struct elf_image *elf, const struct symtab *syms,
			  uint64_t data_size, struct stub_region *r, struct errbuf *err);
int host_qemu_x86_tsc_khz(uint64_t *khz);

/* Runs the guest: lets it go (first call) and handles one stop, waiting at most timeout_ms. */
enum host_qemu_state { HOST_QEMU_RUNNING, HOST_QEMU_ENDED };
enum host_qemu_state host_qemu_step(struct host_qemu *hq, int timeout_ms);

#endif
