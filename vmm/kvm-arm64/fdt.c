// SPDX-License-Identifier: GPL-2.0
/*
 * The device tree vmmtrace's arm64 KVM host gives its guest, written with
 * libfdt's sequential writer: memory, the CPUs (PSCI 0.2 through HVC, which
 * KVM answers), the GICv3, the architected timer, the PL011 with its
 * clock, and /chosen with the command line, the console and the initrd.
 */
#include <errno.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>

#include "vmm/kvm-arm64/a64.h"
#include "vmm/kvm/vm.h"

#define PH_GIC	1
#define PH_CLK	2
/* Interrupt specifiers (bindings/interrupt-controller/arm,gic-v3.yaml): type, number, flags. */
#define GIC_SPI	0
#define GIC_PPI	1
#define IRQ_LEVEL_HIGH 4

static int a64_fdt_build(void *fdt, size_t size, const struct vm *vm, uint64_t initrd, uint64_t initrd_size)
{
	char name[64];
	int rc = 0;

#define F(call) do { if ((rc = (call))) return rc; } while (0)
	F(fdt_create(fdt, (int)size));
	F(fdt_finish_reservemap(fdt));
	F(fdt_begin_node(fdt, ""));
	F(fdt_property_string(fdt, "compatible", "linux,dummy-virt"));
	F(fdt_property_u32(fdt, "#address-cells", 2));
	F(fdt_property_u32(fdt, "#size-cells", 2));
	F(fdt_property_u32(fdt, "interrupt-parent", PH_GIC));

	F(fdt_begin_node(fdt, "chosen"));
	F(fdt_property_string(fdt, "bootargs", vm->cfg.cmdline ? vm->cfg.cmdline : ""));
	snprintf(name, sizeof(name), "/pl011@%llx", (unsigned long long)A64_UART);
	F(fdt_property_string(fdt, "stdout-path", name));
	if (initrd_size) {
		F(fdt_property_u64(fdt, "linux,initrd-start", initrd));
		F(fdt_property_u64(fdt, "linux,initrd-end", initrd + initrd_size));
	}
	F(fdt_end_node(fdt));

	snprintf(name, sizeof(name), "memory@%llx", (unsigned long long)A64_RAM);
	F(fdt_begin_node(fdt, name));
	F(fdt_property_string(fdt, "device_type", "memory"));
	{
		fdt64_t reg[2] = { cpu_to_fdt64(A64_RAM), cpu_to_fdt64(vm->ram_size) };

		F(fdt_property(fdt, "reg", reg, sizeof(reg)));
	}
	F(fdt_end_node(fdt));

	F(fdt_begin_node(fdt, "cpus"));
	F(fdt_property_u32(fdt, "#address-cells", 1));
	F(fdt_property_u32(fdt, "#size-cells", 0));
	for (unsigned i = 0; i < vm->cfg.ncpus; i++) {
		snprintf(name, sizeof(name), "cpu@%u", i);
		F(fdt_begin_node(fdt, name));
		F(fdt_property_string(fdt, "device_type", "cpu"));
		F(fdt_property_string(fdt, "compatible", "arm,arm-v8"));
		F(fdt_property_string(fdt, "enable-method", "psci"));
		F(fdt_property_u32(fdt, "reg", i));
		F(fdt_end_node(fdt));
	}
	F(fdt_end_node(fdt));

	F(fdt_begin_node(fdt, "psci"));
	F(fdt_property_string(fdt, "compatible", "arm,psci-0.2"));
	F(fdt_property_string(fdt, "method", "hvc"));
	F(fdt_end_node(fdt));

	snprintf(name, sizeof(name), "intc@%llx", (unsigned long long)A64_GICD);
	F(fdt_begin_node(fdt, name));
	F(fdt_property_string(fdt, "compatible", "arm,gic-v3"));
	F(fdt_property_u32(fdt, "#interrupt-cells", 3));
	F(fdt_property(fdt, "interrupt-controller", NULL, 0));
	{
		fdt64_t reg[4] = { cpu_to_fdt64(A64_GICD), cpu_to_fdt64(0x10000), cpu_to_fdt64(A64_GICR),
				   cpu_to_fdt64(A64_GICR_EACH * vm->cfg.ncpus) };

		F(fdt_property(fdt, "reg", reg, sizeof(reg)));
	}
	F(fdt_property_u32(fdt, "phandle", PH_GIC));
	F(fdt_end_node(fdt));

	F(fdt_begin_node(fdt, "timer"));
	F(fdt_property_string(fdt, "compatible", "arm,armv8-timer"));
	{
		/* Secure, non-secure physical, virtual, hypervisor: PPIs 13, 14, 11, 10. */
		static const unsigned ppi[4] = { 13, 14, 11, 10 };
		fdt32_t irq[12];

		for (unsigned i = 0; i < 4; i++) {
			irq[3 * i] = cpu_to_fdt32(GIC_PPI);
			irq[3 * i + 1] = cpu_to_fdt32(ppi[i]);
			irq[3 * i + 2] = cpu_to_fdt32(IRQ_LEVEL_HIGH);
		}
		F(fdt_property(fdt, "interrupts", irq, sizeof(irq)));
	}
	F(fdt_property(fdt, "always-on", NULL, 0));
	F(fdt_end_node(fdt));

	F(fdt_begin_node(fdt, "apb-pclk"));
	F(fdt_property_string(fdt, "compatible", "fixed-clock"));
	F(fdt_property_u32(fdt, "#clock-cells", 0));
	F(fdt_property_u32(fdt, "clock-frequency", 24000000));
	F(fdt_property_string(fdt, "clock-output-names", "clk24mhz"));
	F(fdt_property_u32(fdt, "phandle", PH_CLK));
	F(fdt_end_node(fdt));

	snprintf(name, sizeof(name), "pl011@%llx", (unsigned long long)A64_UART);
	F(fdt_begin_node(fdt, name));
	{
		static const char compat[] = "arm,pl011\0arm,primecell";
		static const char clocks[] = "uartclk\0apb_pclk";
		fdt64_t reg[2] = { cpu_to_fdt64(A64_UART), cpu_to_fdt64(0x1000) };
		fdt32_t irq[3] = { cpu_to_fdt32(GIC_SPI), cpu_to_fdt32(A64_UART_SPI), cpu_to_fdt32(IRQ_LEVEL_HIGH) };
		fdt32_t clk[2] = { cpu_to_fdt32(PH_CLK), cpu_to_fdt32(PH_CLK) };

		F(fdt_property(fdt, "compatible", compat, sizeof(compat)));
		F(fdt_property(fdt, "reg", reg, sizeof(reg)));
		F(fdt_property(fdt, "interrupts", irq, sizeof(irq)));
		F(fdt_property(fdt, "clocks", clk, sizeof(clk)));
		F(fdt_property(fdt, "clock-names", clocks, sizeof(clocks)));
	}
	F(fdt_end_node(fdt));

	F(fdt_end_node(fdt));
	F(fdt_finish(fdt));
#undef F
	return 0;
}

int a64_fdt(const struct vm *vm, uint64_t initrd, uint64_t initrd_size, void **out, size_t *len,
	    struct errbuf *err)
{
	size_t size = 64 << 10;
	void *fdt = calloc(1, size);
	int rc;

	if (!fdt)
		return err_set(err, ENOMEM, "out of memory for the device tree");
	if ((rc = a64_fdt_build(fdt, size, vm, initrd, initrd_size))) {
		free(fdt);
		return err_set(err, EINVAL, "cannot write the device tree: %s", fdt_strerror(rc));
	}
	*out = fdt;
	*len = fdt_totalsize(fdt);
	return 0;
}
