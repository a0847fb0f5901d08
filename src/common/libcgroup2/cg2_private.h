/* cg2_private.h - internals of libcgroup2 shared with its unit tests */
#ifndef PIN_CG2_PRIVATE_H
#define PIN_CG2_PRIVATE_H

#include <stddef.h>

#include "cg2.h"

#define CG2_MAX_DEPTH 32           /* components in a relative path */
#define CG2_READ_MAX (1024 * 1024) /* largest file cg2 reads */
#define CG2_MAX_ENTRIES 65536      /* entries listed in one directory */

/* Normalize a path relative to the root into `out` ("a/b", "" for the
 * root): leading, trailing and repeated '/' dropped; '.', '..', control
 * characters, more than CG2_MAX_DEPTH components or `size` bytes refused
 * (-1, EINVAL or ENAMETOOLONG, errp filled). */
int cg2_relpath_normalize (const char *rel,
                           char *out,
                           size_t size,
                           pin_error_t *errp);

/* The mount point of the first cgroup2 file system in a mountinfo file
 * (absolute path), into buf.  -1 with errno ENOENT if there is none. */
int cg2_mountinfo_find (const char *mountinfo,
                        char *buf,
                        size_t size,
                        pin_error_t *errp);

/* Parse the text of cpu.stat; unknown keys ignored, missing ones 0;
 * usage_usec is required.  st is written only on success. */
int cg2_parse_cpu_stat (const char *text,
                        struct cg2_cpu_stat *st,
                        pin_error_t *errp);

/* Is the root a real cgroup2 mount (statfs), as opposed to the seam? */
bool cg2_is_cgroup2fs (const cg2_t *cg);

#endif /* !PIN_CG2_PRIVATE_H */
