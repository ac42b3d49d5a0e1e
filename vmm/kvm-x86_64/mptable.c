// SPDX-License-Identifier: GPL-2.0
/*
 * MP Specification 1.4 tables: processors, one ISA bus, one I/O APIC with
 * ISA IRQ n on pin n (KVM's default GSI routing), LINT0 ExtINT, LINT1 NMI.
 * Linux uses them when ACPI is off (acpi=off, or no ACPI tables).
 */
#include <string.h>

#include "vmm/kvm-x86_64/layout.h"
#include "vmm/kvm-x86_64/mptable.h"

struct mpf_intel {
	char signature[4];
	uint32_t physptr;
	uint8_t length, specification, checksum, feature1;
	uint8_t feature2, feature3, feature4, feature5;
} __attribute__((packed));

struct mpc_table {
	char signature[4];
	uint16_t length;
	uint8_t spec, checksum;
	char oem[8], productid[12];
	uint32_t oemptr;
	uint16_t oemsize, oemcount;
	uint32_t lapic;
	uint16_t ext_length;
	uint8_t ext_checksum, reserved;
} __attribute__((packed));

struct mpc_cpu {
	uint8_t type, apicid, apicver, cpuflag;
	uint32_t cpufeature, featureflag, reserved[2];
} __attribute__((packed));

struct mpc_bus {
	uint8_t type, busid;
	char bustype[6];
} __attribute__((packed));

struct mpc_ioapic {
	uint8_t type, apicid, apicver, flags;
	uint32_t apicaddr;
} __attribute__((packed));

struct mpc_intsrc {
	uint8_t type, irqtype;
	uint16_t irqflag;
	uint8_t srcbus, srcbusirq, dstapic, dstirq;
} __attribute__((packed));

_Static_assert(sizeof(struct mpf_intel) == 16, "MP floating pointer is 16 bytes");
_Static_assert(sizeof(struct mpc_table) == 44, "MP config header is 44 bytes");
_Static_assert(sizeof(struct mpc_cpu) == 20, "MP processor entry is 20 bytes");
_Static_assert(sizeof(struct mpc_bus) == 8, "MP bus entry is 8 bytes");
_Static_assert(sizeof(struct mpc_ioapic) == 8, "MP I/O APIC entry is 8 bytes");
_Static_assert(sizeof(struct mpc_intsrc) == 8, "MP interrupt entry is 8 bytes");

enum { MP_PROCESSOR, MP_BUS, MP_IOAPIC, MP_INTSRC, MP_LINTSRC };
enum { MP_IRQ_INT, MP_IRQ_NMI, MP_IRQ_SMI, MP_IRQ_EXTINT };

#define MP_ISA_IRQS    16
#define MP_APIC_VER    0x14
#define MP_IOAPIC_VER  0x11
#define MP_CPU_ENABLED 0x01
#define MP_CPU_BSP     0x02

size_t mptable_size(unsigned ncpus)
{
	return sizeof(struct mpf_intel) + sizeof(struct mpc_table) +
	       ncpus * sizeof(struct mpc_cpu) + sizeof(struct mpc_bus) +
	       sizeof(struct mpc_ioapic) + (MP_ISA_IRQS + 2) * sizeof(struct mpc_intsrc);
}

static uint8_t mp_checksum(const uint8_t *p, size_t len)
{
	uint8_t sum = 0;

	while (len--)
		sum += *p++;
	return (uint8_t)-sum;
}

static uint8_t *mp_put(uint8_t *p, const void *entry, size_t len)
{
	memcpy(p, entry, len);
	return p + len;
}

void mptable_write(uint8_t *buf, uint64_t gpa, unsigned ncpus)
{
	struct mpf_intel *mpf = (struct mpf_intel *)buf;
	struct mpc_table *mpc = (struct mpc_table *)(mpf + 1);
	uint8_t *p = (uint8_t *)(mpc + 1);
	uint8_t ioapic_id = (uint8_t)ncpus;
	uint16_t count = 0;

	memset(buf, 0, mptable_size(ncpus));
	for (unsigned i = 0; i < ncpus; i++, count++) {
		struct mpc_cpu cpu = {
			.type = MP_PROCESSOR, .apicid = (uint8_t)i, .apicver = MP_APIC_VER,
			.cpuflag = MP_CPU_ENABLED | (i == 0 ? MP_CPU_BSP : 0),
			.cpufeature = 0x600, .featureflag = 0x201,	/* family 6; FPU, APIC */
		};
		p = mp_put(p, &cpu, sizeof(cpu));
	}
	struct mpc_bus bus = { .type = MP_BUS, .busid = 0, .bustype = "ISA   " };
	p = mp_put(p, &bus, sizeof(bus)), count++;
	struct mpc_ioapic ioapic = { MP_IOAPIC, ioapic_id, MP_IOAPIC_VER, 1, (uint32_t)LAYOUT_IOAPIC };
	p = mp_put(p, &ioapic, sizeof(ioapic)), count++;
	for (unsigned irq = 0; irq < MP_ISA_IRQS; irq++, count++) {
		struct mpc_intsrc src = { MP_INTSRC, MP_IRQ_INT, 0, 0, (uint8_t)irq, ioapic_id, (uint8_t)irq };
		p = mp_put(p, &src, sizeof(src));
	}
	/* Local interrupts of every LAPIC (0xff): LINT0 ExtINT, LINT1 NMI. */
	struct mpc_intsrc lint0 = { MP_LINTSRC, MP_IRQ_EXTINT, 0, 0, 0, 0xff, 0 };
	struct mpc_intsrc lint1 = { MP_LINTSRC, MP_IRQ_NMI, 0, 0, 0, 0xff, 1 };
	p = mp_put(p, &lint0, sizeof(lint0)), count++;
	p = mp_put(p, &lint1, sizeof(lint1)), count++;

	memcpy(mpc->signature, "PCMP", 4);
	mpc->length = (uint16_t)(p - (uint8_t *)mpc);
	mpc->spec = 4;
	memcpy(mpc->oem, "VMMTRACE", 8);
	memcpy(mpc->productid, "vmmtrace    ", 12);
	mpc->oemcount = count;
	mpc->lapic = (uint32_t)LAYOUT_LAPIC;
	mpc->checksum = mp_checksum((uint8_t *)mpc, mpc->length);

	memcpy(mpf->signature, "_MP_", 4);
	mpf->physptr = (uint32_t)(gpa + sizeof(*mpf));
	mpf->length = 1;
	mpf->specification = 4;
	mpf->checksum = mp_checksum((uint8_t *)mpf, sizeof(*mpf));
}
