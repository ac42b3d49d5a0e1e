/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the image reader's tests share: a fixture written to a file in the
 * test's directory and opened as a user's kernel is, and the check that a
 * bad one is refused in one line that names it, leaving nothing open.
 * The including test sets image_files_dir first.
 */
#ifndef TESTS_UNIT_IMAGE_FILES_H
#define TESTS_UNIT_IMAGE_FILES_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/check.h"
#include "tests/unit/fixtures.h"
#include "vmm/image/image.h"

static const char *image_files_dir;

static inline const char *path_of(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", image_files_dir, name);
	return path;
}

/* Opens buf written to a file called name; image_open reads it back. */
static inline int open_file(const char *name, const struct fx_buf *buf, struct kernel_image *img,
			    struct errbuf *err)
{
	const char *path = path_of(name);

	if (fx_write(path, buf))
		return err_set(err, EIO, "cannot write %s", path);
	return image_open(path, img, err);
}

/* A bad file must fail in one line naming it (with msg_part, if given), and leave img empty. */
static inline void expect_bad(const char *name, const struct fx_buf *buf, const char *msg_part)
{
	struct kernel_image img;
	struct errbuf err = { "" };
	int rc = open_file(name, buf, &img, &err);

	CHECK(rc < 0 && strstr(err.msg, name) && (!msg_part || strstr(err.msg, msg_part)) &&
	      !strchr(err.msg, '\n') && !img.file && !img.vmlinux,
	      "%s is rejected%s%s%s (rc %d: %s)", name, msg_part ? " with '" : "",
	      msg_part ? msg_part : "", msg_part ? "'" : "", rc, err.msg);
	if (!rc)
		image_close(&img);
}

#endif
