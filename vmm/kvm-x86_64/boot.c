// SPDX-License-Identifier: GPL-2.0
/*
 * The x86_64 64-bit boot protocol (Documentation/arch/x86/boot.rst): the
 * vmlinux PT_LOAD segments at their physical addresses, a zero page with the
 * setup header, E820 map, command line and initrd, identity-mapped page
 * tables and a flat GDT; the boot vCPU enters startup_64 in long mode.
 */
#include <asm/bootparam.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/kvm/arch.h"
#include "vmm/kvm-x86_64/cpu.h"
#include "vmm/kvm-x86_64/devices.h"
#include "vmm/kvm-x86_64/layout.h"
#include "vmm/kvm-x86_64/mptable.h"
#include "vmm/kvm-x86_64/regs.h"
#include "vmm/image/image.h"
#include "vmm/kvm/kvm.h"
#include "vmm/kvm/vm.h"

#define SETUP_HDR_OFFSET   0x1f1
#define LOADER_TYPE_UNDEF  0xff
#define INITRD_MAX_DEFAULT 0x37ffffffULL
#define E820_TYPE_RAM      1
#define E820_TYPE_RESERVED 2

_Static_assert(sizeof(struct boot_params) == 4096, "zero page is one page");

static uint64_t ram_below_hole(const struct vm *vm)
{
	return vm->ram_size < LAYOUT_MMIO_HOLE ? vm->ram_size : LAYOUT_MMIO_HOLE;
}

int arch_guest_arch(void)
{
	return IMAGE_ARCH_X86_64;
}

const char *arch_name(void)
{
	return "x86_64";
}

int arch_kernel_check(const struct kernel_image *img, struct errbuf *err)
{
	return image_require_arch(img, IMAGE_ARCH_X86_64, err);
}

const struct arch_optional arch_optional = {
	.compat_detect = x86_compat_detect,
	.compat_assist_name = x86_compat_assist_name,
	.vcpu_nmi = x86_vcpu_nmi,
	.vcpu_nmi_busy = x86_vcpu_nmi_busy,
	.vm_msr_intercept = x86_vm_msr_intercept,
	.vcpu_cpuid = x86_vcpu_cpuid,
};

int arch_vm_init(struct vm *vm, struct errbuf *err)
{
	struct kvm_pit_config pit = { .flags = KVM_PIT_SPEAKER_DUMMY };
	uint64_t low = ram_below_hole(vm);
	int rc;

	/* The port bus and its devices' state (devices.c), freed by arch_vm_remove_devices. */
	if (!(vm->arch_state = calloc(1, sizeof(struct x86_state))))
		return err_set(err, ENOMEM, "out of memory for the VM");
	rc = kvm_ioctl_val(vm->vm_fd, KVM_SET_TSS_ADDR, LAYOUT_TSS, "KVM_SET_TSS_ADDR", err);
	if (rc < 0)
		return rc;
	uint64_t idmap = LAYOUT_IDENTITY_PAGE;
	if ((rc = kvm_ioctl(vm->vm_fd, KVM_SET_IDENTITY_MAP_ADDR, &idmap, err)) < 0)
		return rc;
	if ((rc = kvm_ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, NULL, err)) < 0)
		return rc;
	if ((rc = kvm_ioctl(vm->vm_fd, KVM_CREATE_PIT2, &pit, err)) < 0)
		return rc;
	if ((rc = vm_add_region(vm, 0, low, vm->ram, err)))
		return rc;
	if (vm->ram_size > low)
		rc = vm_add_region(vm, LAYOUT_4G, vm->ram_size - low, vm->ram + low, err);
	return rc;
}

const char *arch_default_cmdline(void)
{
	/*
	 * No ACPI tables and no PCI bus are emulated: the MP table describes
	 * the CPUs. panic=-1 turns a panic into a reset the VMM reports.
	 */
	return "console=ttyS0 nokaslr pci=off acpi=off panic=-1";
}

static int boot_load_segments(struct vm *vm, const struct elf_image *elf,
			      uint64_t *kernel_end, struct errbuf *err)
{
	uint64_t low = ram_below_hole(vm), end = 0;

	for (unsigned i = 0; i < elf->ehdr->e_phnum; i++) {
		const Elf64_Phdr *ph = &elf->phdr[i];
		uint8_t *dst;

		if (ph->p_type != PT_LOAD || !ph->p_memsz)
			continue;
		if (ph->p_paddr < LAYOUT_HIGH_MEM || ph->p_paddr + ph->p_memsz > low ||
		    ph->p_paddr + ph->p_memsz < ph->p_paddr) {
			if (ph->p_paddr >= LAYOUT_HIGH_MEM && ph->p_paddr + ph->p_memsz > low &&
			    ph->p_paddr + ph->p_memsz <= LAYOUT_MMIO_HOLE)
				return err_set(err, ENOMEM, "--mem %llu MiB is too small for the kernel (it needs more than %llu MiB)",
					       (unsigned long long)(vm->ram_size >> 20),
					       (unsigned long long)((ph->p_paddr + ph->p_memsz) >> 20) + 1);
			return err_set(err, ENOEXEC, "kernel segment %u at physical 0x%llx+0x%llx is outside guest RAM",
				       i, (unsigned long long)ph->p_paddr, (unsigned long long)ph->p_memsz);
		}
		dst = vm_gpa_ptr(vm, ph->p_paddr, ph->p_memsz);
		memcpy(dst, elf->data + ph->p_offset, ph->p_filesz);
		memset(dst + ph->p_filesz, 0, ph->p_memsz - ph->p_filesz);
		if (ph->p_paddr + ph->p_memsz > end)
			end = ph->p_paddr + ph->p_memsz;
	}
	if (!end)
		return err_set(err, ENOEXEC, "kernel ELF has no loadable segments");
	*kernel_end = end;
	return 0;
}

static void boot_setup_header(struct boot_params *bp, const struct kernel_image *img)
{
	if (img->is_bzimage) {
		/* The header runs from 0x1f1 to 0x202 + the jump's offset byte. */
		size_t end = 0x202 + img->setup[0x201];

		if (end > img->setup_size)
			end = img->setup_size;
		if (end > SETUP_HDR_OFFSET + sizeof(bp->hdr))
			end = SETUP_HDR_OFFSET + sizeof(bp->hdr);
		memcpy(&bp->hdr, img->setup + SETUP_HDR_OFFSET, end - SETUP_HDR_OFFSET);
	} else {
		bp->hdr.boot_flag = 0xaa55;
		bp->hdr.header = 0x53726448;	/* "HdrS" */
		bp->hdr.version = 0x020f;
		bp->hdr.loadflags = LOADED_HIGH;
		bp->hdr.kernel_alignment = 0x1000000;
		bp->hdr.initrd_addr_max = INITRD_MAX_DEFAULT;
		bp->hdr.cmdline_size = LAYOUT_CMDLINE_MAX - 1;
	}
	bp->hdr.type_of_loader = LOADER_TYPE_UNDEF;
	bp->hdr.loadflags |= CAN_USE_HEAP;
	bp->hdr.heap_end_ptr = 0xfe00;
}

static void boot_add_e820(struct boot_params *bp, uint64_t addr, uint64_t size, uint32_t type)
{
	struct boot_e820_entry *e = &bp->e820_table[bp->e820_entries++];

	e->addr = addr;
	e->size = size;
	e->type = type;
}

static void boot_setup_e820(struct vm *vm, struct boot_params *bp)
{
	uint64_t low = ram_below_hole(vm);

	boot_add_e820(bp, 0, LAYOUT_EBDA, E820_TYPE_RAM);
	boot_add_e820(bp, LAYOUT_EBDA, LAYOUT_EBDA_END - LAYOUT_EBDA, E820_TYPE_RESERVED);
	boot_add_e820(bp, LAYOUT_BIOS, LAYOUT_HIGH_MEM - LAYOUT_BIOS, E820_TYPE_RESERVED);
	boot_add_e820(bp, LAYOUT_HIGH_MEM, low - LAYOUT_HIGH_MEM, E820_TYPE_RAM);
	if (vm->ram_size > low)
		boot_add_e820(bp, LAYOUT_4G, vm->ram_size - low, E820_TYPE_RAM);
}

static int boot_place_initrd(struct vm *vm, struct boot_params *bp, uint64_t kernel_end,
			     const uint8_t *initrd, size_t size, struct errbuf *err)
{
	uint64_t max = bp->hdr.initrd_addr_max ? bp->hdr.initrd_addr_max : INITRD_MAX_DEFAULT;
	uint64_t top = ram_below_hole(vm), addr;

	if (!size)
		return 0;
	if (bp->hdr.version >= 0x020c && (bp->hdr.xloadflags & XLF_CAN_BE_LOADED_ABOVE_4G))
		max = top - 1;
	if (top > max + 1)
		top = max + 1;
	/* Keep room above the kernel for its early allocations. */
	if (size > top || ((top - size) & ~0xfffULL) < kernel_end + (16ULL << 20))
		return err_set(err, ENOMEM, "--mem %llu MiB is too small for the kernel and a %zu KiB initrd",
			       (unsigned long long)(vm->ram_size >> 20), size >> 10);
	addr = (top - size) & ~0xfffULL;
	memcpy(vm_gpa_ptr(vm, addr, size), initrd, size);
	bp->hdr.ramdisk_image = (uint32_t)addr;
	bp->hdr.ramdisk_size = (uint32_t)size;
	bp->ext_ramdisk_image = (uint32_t)(addr >> 32);
	bp->ext_ramdisk_size = (uint32_t)((uint64_t)size >> 32);
	return 0;
}

static int boot_set_cmdline(struct vm *vm, struct boot_params *bp, struct errbuf *err)
{
	size_t len = strlen(vm->cfg.cmdline);
	size_t max = bp->hdr.version >= 0x0206 ? bp->hdr.cmdline_size : 255;

	if (max > LAYOUT_CMDLINE_MAX - 1)
		max = LAYOUT_CMDLINE_MAX - 1;
	if (len > max)
		return err_set(err, E2BIG, "kernel command line is %zu bytes, the kernel accepts %zu", len, max);
	memcpy(vm_gpa_ptr(vm, LAYOUT_CMDLINE, len + 1), vm->cfg.cmdline, len + 1);
	bp->hdr.cmd_line_ptr = (uint32_t)LAYOUT_CMDLINE;
	return 0;
}

static void boot_setup_paging(struct vm *vm)
{
	uint64_t *pml4 = vm_gpa_ptr(vm, LAYOUT_PML4, 4096);
	uint64_t *pdpt = vm_gpa_ptr(vm, LAYOUT_PDPT, 4096);
	uint64_t *pd = vm_gpa_ptr(vm, LAYOUT_PD, 4096 * LAYOUT_IDENTITY_GIB);
	uint64_t *gdt = vm_gpa_ptr(vm, LAYOUT_GDT, LAYOUT_GDT_ENTRIES * 8);

	memset(pml4, 0, 4096);
	memset(pdpt, 0, 4096);
	pml4[0] = LAYOUT_PDPT | X86_PTE_P | X86_PTE_W;
	for (unsigned g = 0; g < LAYOUT_IDENTITY_GIB; g++) {
		pdpt[g] = (LAYOUT_PD + g * 4096) | X86_PTE_P | X86_PTE_W;
		for (unsigned i = 0; i < X86_PT_ENTRIES; i++)
			pd[g * X86_PT_ENTRIES + i] = ((g * X86_PT_ENTRIES + i) * X86_PAGE_SIZE_2M) |
						     X86_PTE_P | X86_PTE_W | X86_PTE_PS;
	}
	gdt[0] = 0;
	gdt[1] = 0;
	gdt[LAYOUT_SEL_CODE / 8] = 0x00af9b000000ffffULL;	/* 64-bit code */
	gdt[LAYOUT_SEL_DATA / 8] = 0x00cf93000000ffffULL;
	gdt[LAYOUT_SEL_TSS / 8] = 0x008f8b000000ffffULL;
}

int arch_vm_load(struct vm *vm, const struct kernel_image *img,
		 const uint8_t *initrd, size_t initrd_size, struct errbuf *err)
{
	struct boot_params *bp;
	uint64_t kernel_end = 0;
	int rc;

	if (vm->ram_size < LAYOUT_MIN_MEM)
		return err_set(err, ENOMEM, "--mem %llu MiB is too small (at least %llu MiB)",
			       (unsigned long long)(vm->ram_size >> 20),
			       (unsigned long long)(LAYOUT_MIN_MEM >> 20));
	rc = boot_load_segments(vm, &img->elf, &kernel_end, err);
	if (rc)
		return rc;
	bp = vm_gpa_ptr(vm, LAYOUT_ZERO_PAGE, sizeof(*bp));
	memset(bp, 0, sizeof(*bp));
	boot_setup_header(bp, img);
	boot_setup_e820(vm, bp);
	if ((rc = boot_set_cmdline(vm, bp, err)))
		return rc;
	if ((rc = boot_place_initrd(vm, bp, kernel_end, initrd, initrd_size, err)))
		return rc;
	mptable_write(vm_gpa_ptr(vm, LAYOUT_EBDA, mptable_size(vm->cfg.ncpus)), LAYOUT_EBDA, vm->cfg.ncpus);
	boot_setup_paging(vm);
	vm->boot_entry = img->elf.ehdr->e_entry;
	vm->boot_arg = LAYOUT_ZERO_PAGE;
	return 0;
}
