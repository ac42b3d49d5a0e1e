// SPDX-License-Identifier: GPL-2.0
/*
 * VM events' pure parts (vmm/output/vmevent.c): --event globs over the
 * event names, --msr lists (numbers, ranges, the limits, every malformed
 * shape refused), the host tracepoints' text, and the raw writer and reader
 * carrying a VM event between function entries without disturbing them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "vmm/output/raw-read.h"
#include "vmm/output/raw.h"
#include "vmm/trace/vmev-select.h"

static void test_select(void)
{
	uint32_t m = 0;

	CHECK(!vmev_select("kvm:pio", &m) && m == VMEV_MASK(VMEV_PIO), "kvm:pio selects kvm:pio only");
	m = 0;
	CHECK(!vmev_select("kvm:*", &m) && m == (VMEV_MASK(VMEV_PIO) | VMEV_MASK(VMEV_MMIO) |
		VMEV_MASK(VMEV_MSR) | VMEV_MASK(VMEV_EXIT) | VMEV_MASK(VMEV_HYPERCALL) | VMEV_MASK(VMEV_CPUID)), "kvm:* selects all");
	m = 0;
	CHECK(!vmev_select("*:m*", &m) && m == (VMEV_MASK(VMEV_MMIO) | VMEV_MASK(VMEV_MSR)),
	      "*:m* selects kvm:mmio and kvm:msr");
	m = VMEV_MASK(VMEV_EXIT);
	CHECK(!vmev_select("kvm:p?o", &m) && m == (VMEV_MASK(VMEV_EXIT) | VMEV_MASK(VMEV_PIO)),
	      "selections add up");
	m = 0;
	CHECK(vmev_select("kvm:nope", &m) == -ENOENT && !m, "an unknown name is refused");
	CHECK(vmev_select("pio", &m) == -ENOENT, "a name without its group is refused");
	CHECK(vmev_select("", &m) == -ENOENT, "an empty glob is refused");
	CHECK(vmev_name(VMEV_MSR) && !strcmp(vmev_name(VMEV_MSR), "kvm:msr") && !vmev_name(0) &&
	      !vmev_name(VMEV_NKINDS), "names by kind, NULL out of range");
}

static void test_msr_lists(void)
{
	static const char *const bad[] = {
		"", ",", "0x10,", ",0x10", "0x10,,0x11", "x10", "-1", " 1", "1 ", "0x", "0x10-",
		"0x10-0x0f", "0x100000000", "1-2-3", "0x10-0x110", "+5", "0x10;0x11", "0x4b564d01 ",
	};
	struct vmev_msr_set s = { .n = 0 };

	CHECK(!vmev_msr_parse("0x10", &s) && s.n == 1 && s.r[0].first == 0x10 && s.r[0].last == 0x10,
	      "one MSR");
	CHECK(!vmev_msr_parse("27,0xc0000100-0xc0000102", &s) && s.n == 3 && s.r[1].first == 27 &&
	      s.r[2].first == 0xc0000100 && s.r[2].last == 0xc0000102, "a number and a range, appended");
	CHECK(!vmev_msr_parse("0xffffffff,0-255", &s) && s.n == 5 && s.r[3].first == 0xffffffff &&
	      s.r[4].last == 255, "the largest MSR and a range of 256");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vmev_msr_set t = { .n = 0 };

		CHECK(vmev_msr_parse(bad[i], &t) == -EINVAL, "--msr '%s' is refused", bad[i]);
	}
	s.n = 0;
	CHECK(!vmev_msr_parse("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16", &s) && s.n == 16, "16 ranges");
	CHECK(vmev_msr_parse("17", &s) == -E2BIG && s.n == 16, "a 17th is refused");
	vmev_msr_defaults(&s);
	CHECK(s.n == 2 && s.r[0].first == 0x11 && s.r[0].last == 0x12 && s.r[1].first == 0x4b564d00 &&
	      s.r[1].last == 0x4b564d08, "the defaults: the KVM PV MSRs");
}

static struct ring_event vmev(unsigned kind, unsigned bits, uint64_t a, uint64_t b)
{
	return (struct ring_event){ .tsc = 1000, .func = 0xffffffff81001234ull, .parent = a, .arg = b,
				    .flags = vmev_flags(kind, bits), .cpu = 1, .ring = 1, .seq = 7 };
}

static void test_format(void)
{
	static const struct {
		unsigned flags;
		uint32_t fid, ret;
		uint64_t x1;
		const char *want, *why;
	} calls[] = {
		{ VMEV_FLAG_SMC, 0x8400000a, 0xffffffff, 0xc400000e, ": SMC at ", "through SMC" },
		{ 0, 0x8400000a, 0xffffffff, 0xc400000e, " PSCI_FEATURES(PSCI_SYSTEM_SUSPEND_64) = NOT_SUPPORTED",
		  "a feature asked about by name, the SMC64 form said" },
		{ 0, 0x8400000a, 0, 0x8400000e, " PSCI_FEATURES(PSCI_SYSTEM_SUSPEND) = SUCCESS", "the SMC32 form's plain name" },
		{ 0, 0x84000000, 0x10001, 0x1234, " PSCI_VERSION() = 1.1", "no argument shown for a call that takes none" },
		{ 0, 0x84000009, 0xfffffffa, 0, " PSCI_SYSTEM_RESET() = no return", "a reset that went ahead" },
		{ 0, 0x8600ff01, 0xb66fb428, 0, " VENDOR_HYP_CALL_UID() = KVM", "KVM's UID" },
		{ 0, 0xc2000005, 0xfffffffd, 0x77, " SMCCC(0x77, ...) = INVALID_PARAMETER", "a call not known: its x1, SMCCC's codes" },
		{ 0, 0xc4000004, 2, 1, " PSCI_AFFINITY_INFO(0x1, ...) = ON_PENDING", "AFFINITY_INFO's answers by name" },
	};
	struct ring_event ev;
	char buf[256];

	ev = vmev(VMEV_PIO, VMEV_FLAG_WRITE, 0x3f8 | 1u << 16 | 1ull << 32, 0x41);
	CHECK(vmev_is(&ev) && vmev_kind_of(&ev) == VMEV_PIO, "a pio event is a VM event of its kind");
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_pio: pio_write at 0x3f8 size 1 count 1 val 0x41 "), "kvm_pio: %s", buf);
	ev = vmev(VMEV_PIO, 0, 0x1f0 | 2u << 16 | 256ull << 32, 0xffff);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_pio: pio_read at 0x1f0 size 2 count 256 val 0xffff (...)"), "rep: %s", buf);
	ev = vmev(VMEV_MMIO, 4 << VMEV_LEN_SHIFT, 0xfed00000, 0xffffffff);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_mmio: mmio read len 4 gpa 0xfed00000 val 0xffffffff"), "kvm_mmio: %s", buf);
	ev = vmev(VMEV_MSR, VMEV_FLAG_WRITE, 0x4b564d01, 0x19a2001);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_msr: msr_write 4b564d01 = 0x19a2001"), "kvm_msr: %s", buf);
	ev = vmev(VMEV_MSR, VMEV_FLAG_GP, 0x12, 0);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_msr: msr_read 12 = 0x0 (#GP)"), "a failed read: %s", buf);
	/* The caller rides in parent's high half; the text names the MSR alone. */
	ev = vmev(VMEV_MSR, VMEV_FLAG_WRITE, vmev_msr_pack(0x4b564d03, 0xffffffff8104a1b2ull), 1);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_msr: msr_write 4b564d03 = 0x1") && vmev_msr_index(&ev) == 0x4b564d03 &&
	      vmev_msr_caller(&ev) == 0xffffffff8104a1b2ull, "kvm_msr with a caller: %s", buf);
	CHECK(vmev_msr_pack(0x10, 0x7fff12345678ull) == 0x10 && vmev_msr_pack(0x10, 0) == 0x10,
	      "a caller outside the kernel's top 2 GiB is not kept");
	ev = vmev(VMEV_EXIT, 0, 2, 0);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_userspace_exit: reason IO (2)"), "kvm_userspace_exit: %s", buf);
	ev = vmev(VMEV_EXIT, 0, 1000, 0);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_userspace_exit: reason UNKNOWN (1000)"), "an unknown reason: %s", buf);
	ev = vmev(VMEV_CPUID, 0, 0x4b4d564bull << 32 | 0x40000001, 0x4dull << 32 | 0x564b4d56);
	ev.func = 0x40000000;
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_cpuid: func 40000000 idx 0 rax 40000001 rbx 4b4d564b rcx 564b4d56 rdx 4d, "
		      "cpuid entry offered"), "kvm_cpuid: %s", buf);
	/* kvm:hypercall (arm64): the host's kvm_hvc_arm64 layout, the call named, its argument and answer. */
	ev = vmev(VMEV_HYPERCALL, 0, vmev_hypercall_pack(0xc4000003, 0), 1);
	ev.func = 0xffffffc00801a9f4ull;
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_hvc_arm64: HVC at 0xffffffc00801a9f4 (r0: 0xc4000003) PSCI_CPU_ON(0x1, ...) = SUCCESS"),
	      "kvm_hvc_arm64, CPU_ON: %s", buf);
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		ev = vmev(VMEV_HYPERCALL, calls[i].flags, vmev_hypercall_pack(calls[i].fid, calls[i].ret), calls[i].x1);
		vmev_format(&ev, buf, sizeof(buf));
		CHECK(strstr(buf, calls[i].want) != NULL, "%s: %s", calls[i].why, buf);
	}
	ev = vmev(0x7f, 0, 0, 0);
	vmev_format(&ev, buf, sizeof(buf));
	CHECK(!strcmp(buf, "kvm_unknown: kind 127"), "an unknown kind: %s", buf);
}

struct collect {
	struct ring_event ev[8];
	unsigned n;
};

static int collect(void *opaque, const struct ring_event *ev)
{
	struct collect *c = opaque;

	if (c->n < 8)
		c->ev[c->n] = *ev;
	c->n++;
	return 0;
}

/* entry, VM event, entry through the raw writer and reader: all three as they were. */
static void test_raw(void)
{
	char path[] = "/tmp/test-vmevent.XXXXXX";
	struct ring_event in[3] = {
		{ .tsc = 5000, .func = 0xffffffff81000100ull, .parent = 0xffffffff81000200ull, .seq = 0 },
		vmev(VMEV_MMIO, VMEV_FLAG_WRITE | 8 << VMEV_LEN_SHIFT, 0xfed00010, UINT64_MAX),
		{ .tsc = 6000, .func = 0xffffffff81000300ull, .parent = 0xffffffff81000100ull, .seq = 1 },
	};
	const struct trace_meta meta = { .tsc_khz = 1000, .ncpus = 2 };
	struct raw_reader *r = NULL;
	struct trace_writer *w;
	struct collect c = { .n = 0 };
	struct errbuf err;
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	in[1].tsc = 5500;
	if (!f || trace_writer_raw.open(&w, f, &meta, &err)) {
		CHECK(0, "raw writer opens");
		return;
	}
	for (unsigned i = 0; i < 3; i++)
		trace_writer_raw.event(w, &in[i]);
	CHECK(!trace_writer_raw.close(w, NULL, &err) && !fclose(f), "raw writer closes");
	CHECK(!raw_read_open(&r, path, &err) && !raw_read_replay(r, collect, &c) && c.n == 3,
	      "raw reader: three events back (%u)", c.n);
	for (unsigned i = 0; i < 3 && c.n == 3; i++)
		CHECK(!memcmp(&c.ev[i], &in[i], sizeof(in[i])), "event %u as written", i);
	CHECK(r && raw_read_report(r)->skipped_records == 0, "nothing skipped");
	raw_read_close(r);
	unlink(path);
}

int main(void)
{
	test_select();
	test_msr_lists();
	test_format();
	test_raw();
	return check_exit();
}
