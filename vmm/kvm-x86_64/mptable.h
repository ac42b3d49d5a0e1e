/* SPDX-License-Identifier: GPL-2.0 */
/* The Intel MultiProcessor table through which the guest finds its CPUs. */
#ifndef ARCH_X86_64_MPTABLE_H
#define ARCH_X86_64_MPTABLE_H

#include <stddef.h>
#include <stdint.h>

/* Size of the table for ncpus (floating pointer included). */
size_t mptable_size(unsigned ncpus);
/* Writes the table for ncpus into buf (mptable_size bytes) placed at gpa. */
void mptable_write(uint8_t *buf, uint64_t gpa, unsigned ncpus);

#endif
