/* SPDX-License-Identifier: GPL-2.0 */
/* The raw reader's record decoder (raw-decode.c), apart from its chunk walk (raw-read.c). */
#ifndef VMM_OUTPUT_RAW_DECODE_H
#define VMM_OUTPUT_RAW_DECODE_H

#include <stdint.h>

#include "vmm/output/event.h"

/*
 * Decodes count records from p to end (an event chunk's payload after its
 * struct raw_events) into out[0..count), written by format version
 * version; records of kinds it does not know are skipped and counted in
 * *skipped. Returns the events decoded, or -EINVAL unless the records
 * fill the bytes exactly and each is well formed.
 */
long raw_decode_records(const uint8_t *p, const uint8_t *end, uint32_t count, unsigned version,
			struct ring_event *out, uint64_t *skipped);

#endif
