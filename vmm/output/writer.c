// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of trace writers (writer.h): every output format by its
 * name, and the one a file name implies. A new format is one line in
 * trace_writers[] (and, if it has its own extensions, one in
 * trace_writer_exts[]).
 */
#include <string.h>
#include <strings.h>

#include "vmm/output/dat.h"
#include "vmm/output/perfetto.h"
#include "vmm/output/raw.h"
#include "vmm/output/writer.h"

static const struct trace_writer_ops *const trace_writers[] = {
	&trace_writer_text,
	&trace_writer_raw,
	&trace_writer_dat,
	&trace_writer_perfetto,
};

/* File-name endings and the format's name; anything else is raw. */
static const struct { const char *ext, *format; } trace_writer_exts[] = {
	{ ".dat", "dat" },
	{ ".perfetto", "perfetto" },
	{ ".pftrace", "perfetto" },
	{ ".pb", "perfetto" },
	{ ".txt", "text" },
	{ ".trace", "text" },
	{ ".raw", "raw" },
	{ ".vtr", "raw" },
};

const struct trace_writer_ops *trace_writer_find(const char *name)
{
	for (size_t i = 0; i < sizeof(trace_writers) / sizeof(trace_writers[0]); i++)
		if (!strcmp(trace_writers[i]->name, name))
			return trace_writers[i];
	return NULL;
}

const struct trace_writer_ops *trace_writer_for_path(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot = strrchr(base ? base + 1 : path, '.');

	for (size_t i = 0; dot && i < sizeof(trace_writer_exts) / sizeof(trace_writer_exts[0]); i++)
		if (!strcasecmp(dot, trace_writer_exts[i].ext))
			return trace_writer_find(trace_writer_exts[i].format);
	return &trace_writer_raw;
}

