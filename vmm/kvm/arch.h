/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KVM VM core asks of the host's architecture: vmm/kvm-x86_64/
 * and vmm/kvm-arm64/ implement it, one chosen at link time (the
 * Makefile's HOSTARCH).
 */
#ifndef VMM_KVM_ARCH_H
#define VMM_KVM_ARCH_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/host/host-exits.h"
#include "vmm/util/error.h"

struct elf_image;
struct kernel_image;
struct symtab;
struct vcpu;
struct vm;


/* Command line for the console and this class of host; compat and --fast-boot add more. */
const char *arch_default_cmdline(void);
/* An option of the kernel command line, and why the host adds it (-v says). */
struct cmdline_opt {
	const char *opt, *why;
};
/*
 * The options this host arch adds for one reason (NULL-terminated):
 * ARCH_CMDLINE_COMPAT, what the guest cannot run without on a host that
 * needs the compat layer; ARCH_CMDLINE_FAST_BOOT, what only makes a boot on
 * such a host shorter, skipping the kernel's own checks (--fast-boot);
 * ARCH_CMDLINE_TRACED, what a traced guest cannot run without (arm64:
 * nokaslr), after every other option.
 */
enum arch_cmdline { ARCH_CMDLINE_COMPAT, ARCH_CMDLINE_FAST_BOOT, ARCH_CMDLINE_TRACED };
const struct cmdline_opt *arch_cmdline_opts(enum arch_cmdline why);

/* The guest arch (enum image_arch) this host arch boots, and its name ("x86_64"). */
int arch_guest_arch(void);
const char *arch_name(void);
/* 0 when this host arch boots img, else -ENOEXEC with a line naming it. */
int arch_kernel_check(const struct kernel_image *img, struct errbuf *err);
/* Console input for the guest's UART: how many of len bytes it took (0: its buffer is full). */
size_t arch_console_input(struct vm *vm, const uint8_t *buf, size_t len);
/* The UART's partial output line, written out (the guest stopped). */
void arch_console_flush(struct vm *vm);

/* In-kernel irqchip and timers, the guest-physical memory map. */
int arch_vm_init(struct vm *vm, struct errbuf *err);
/* Emulated devices at their arch addresses, and their removal (idempotent). */
int arch_vm_add_devices(struct vm *vm, struct errbuf *err);
void arch_vm_remove_devices(struct vm *vm);
/* Kernel, initrd, boot parameters and boot-time tables into guest memory. */
int arch_vm_load(struct vm *vm, const struct kernel_image *img,
		 const uint8_t *initrd, size_t initrd_size, struct errbuf *err);
int arch_vcpu_init(struct vcpu *vcpu, struct errbuf *err);

/*
 * An exit the generic loop does not handle (e.g. emulation failures).
 * Returns 0 when handled and the vCPU may continue; otherwise it has asked
 * the VM to stop with a diagnosis.
 */
int arch_vcpu_exit(struct vcpu *vcpu);
/* Where a KVM_EXIT_DEBUG stopped the vCPU (the generic loop hands it on). */
int arch_vcpu_debug_pc(struct vcpu *vcpu, uint64_t *pc);
/* One-line register summary for diagnoses ("rip 0x... cs 0x10 ..."). */
void arch_vcpu_describe(struct vcpu *vcpu, char *buf, size_t len);
/*
 * Every register a post-mortem wants (general, instruction pointer, flags,
 * control), as lines of text, each ending in a newline; *pc gets the
 * instruction pointer (0 when unavailable). A stopped vCPU only.
 */
void arch_vcpu_registers(struct vcpu *vcpu, char *buf, size_t len, uint64_t *pc);


/*
 * The ioctl requests a running VM of this host arch makes beyond KVM_RUN
 * and the generic ones (registers, interrupts, clocks): the seccomp
 * sandbox's list (vmm/cli/sandbox.c). *n gets their number.
 */
const unsigned long *arch_sandbox_ioctls(size_t *n);

/* Tracing support. */
struct slot_ops;
/* The slot encodings of the host arch's guests. */
const struct slot_ops *arch_slot_ops(void);
/*
 * Execution breakpoints (up to 4 guest-virtual addresses; n = 0 clears
 * them), through KVM's guest debugging. Call from the vCPU's own thread
 * or before it runs.
 */
int arch_vcpu_set_breakpoints(struct vcpu *vcpu, const uint64_t *addrs, unsigned n,
			      struct errbuf *err);
/* The vCPU's instruction pointer (a paused vCPU, or from its own thread). */
int arch_vcpu_pc(struct vcpu *vcpu, uint64_t *pc);
/*
 * The same, on the vCPU's own thread right after KVM_RUN returned and
 * before anything changed its registers: from what KVM left in kvm_run
 * where it can (no ioctl), else as arch_vcpu_pc.
 */
int arch_vcpu_exit_pc(struct vcpu *vcpu, uint64_t *pc);
/* At a function's first instruction: the stack pointer and the return address. */
int arch_vcpu_entry_frame(struct vcpu *vcpu, uint64_t *sp, uint64_t *ret);
/*
 * Inside a leaf function (the guest stopped at an exit in it): the return
 * address into the function it works for, found among the top
 * ARCH_CALLER_WORDS words of the stack as the first that follows a call
 * instruction. -ENOENT when none does, -EFAULT when the stack cannot be
 * read. For naming who made an MSR access through native_write_msr.
 */
#define ARCH_CALLER_WORDS 4
int arch_vcpu_caller(struct vcpu *vcpu, uint64_t *ret);
/* The guest's timestamp-counter frequency in kHz, as KVM reports it. */
int arch_vcpu_tsc_khz(struct vcpu *vcpu, uint64_t *khz);
/*
 * The HOST_EV_* kinds this arch's exits bring without asking: x86_64 port
 * I/O, MMIO and the CPUID table; arm64 MMIO only.
 */
unsigned arch_vm_exit_kinds(void);
/*
 * Brings the guest's hypercalls to the VMM, which answers them and reports
 * each (vm_hooks.exit, VM_EXIT_HYPERCALL): 0, or -EOPNOTSUPP with *why
 * (static text) when this host's KVM answers them itself, or another
 * -errno with err set. Before the vCPUs run.
 */
int arch_vm_hypercall_exits(struct vm *vm, const char **why, struct errbuf *err);
/*
 * On the vCPU's own thread before each KVM_RUN: what another vCPU asked of
 * it meanwhile (arm64: PSCI CPU_ON, which resets it and starts it at the
 * entry given). Cheap when nothing is asked.
 */
void arch_vcpu_before_run(struct vcpu *vcpu);
/* The guest's timestamp counter now (the zero of trace timestamps). */
int arch_vcpu_read_tsc(struct vcpu *vcpu, uint64_t *tsc);

/*
 * Where the tracer's guest-physical addresses start: it takes them from
 * the kernel image (vmm/image), whose addresses are the guest's on x86_64
 * (0) and relative to the start of RAM for an arm64 Image.
 */
uint64_t arch_image_base(const struct vm *vm);
/*
 * Whether the stub lives inside the kernel's own image (arm64: in its
 * padding, docs/STUB-PLACEMENT.md), where room is short and the rings move
 * at the hand-over: then the host offers arch_stub_room and
 * arch_rings_area (host_ops.stub_room, .rings_area); x86_64's stub has a
 * region of its own and needs neither.
 */
int arch_stub_in_image(void);
int arch_stub_room(struct vm *vm, const struct elf_image *elf, const struct symtab *syms, uint64_t *bytes,
		   struct errbuf *err);
int arch_rings_area(struct vm *vm, uint8_t **host, uint64_t *va, uint64_t *size, struct errbuf *err);
/*
 * A breakpoint exit at pc, which may be one of the host arch's own
 * (arm64: the stub's doorbell; where the stub's guard page gets mapped):
 * ARCH_BREAK_NONE, the tracer's; ARCH_BREAK_DOORBELL, the stub's doorbell,
 * *ring the ring whose header the stub holds (UINT32_MAX: none the host
 * knows), and once the tracer drained it arch_stub_doorbell_leave sends
 * the vCPU on as the doorbell's own code would; ARCH_BREAK_DONE, the host
 * arch did what it stopped there for (or asked the VM to stop, saying
 * why) and the vCPU goes on.
 */
enum arch_break { ARCH_BREAK_NONE, ARCH_BREAK_DOORBELL, ARCH_BREAK_DONE };
enum arch_break arch_vcpu_host_break(struct vcpu *vcpu, uint64_t pc, uint32_t *ring);
int arch_stub_doorbell_leave(struct vcpu *vcpu);

/*
 * What only some host arches have (x86_64 all of it; arm64 none: no
 * compat layer, no NMI to give, no MSRs, no CPUID): each NULL where the
 * arch has none, and the VM core does without.
 */
struct arch_optional {
	/* The host-compatibility layer (compat.h): 1 when this host needs it; each assist's name, or NULL. */
	int (*compat_detect)(void);
	const char *(*compat_assist_name)(unsigned assist);
	/* Queues an NMI for the guest; from the vCPU's own thread, outside KVM_RUN. */
	int (*vcpu_nmi)(struct vcpu *vcpu, struct errbuf *err);
	/*
	 * Non-zero while KVM still holds an NMI the guest has not taken (queued,
	 * or being injected): another one now could be merged with it. From the
	 * vCPU's own thread, outside KVM_RUN; 0 when KVM cannot say.
	 */
	int (*vcpu_nmi_busy)(struct vcpu *vcpu);
	/*
	 * Brings the guest's accesses to MSRs [r[0], r[1]] of each range to the
	 * VMM, which completes them through KVM and reports them (vm_hooks.exit,
	 * VM_EXIT_MSR). -EOPNOTSUPP when this host's KVM cannot. Before the
	 * vCPUs run.
	 */
	int (*vm_msr_intercept)(struct vm *vm, const uint32_t (*ranges)[2], unsigned n, struct errbuf *err);
	/*
	 * The CPUID table KVM holds for the vCPU (what KVM_SET_CPUID2 offered the
	 * guest), up to max leaves; *n says how many.
	 */
	int (*vcpu_cpuid)(struct vcpu *vcpu, struct host_cpuid_leaf *out, unsigned max, unsigned *n);
};
extern const struct arch_optional arch_optional;

#endif
