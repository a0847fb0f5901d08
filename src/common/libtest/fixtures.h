/* fixtures.h - topologies the unit tests run on
 *
 * Two sources:
 *  - fixtures_shared(): every hwloc XML file in the shared fixture
 *    directory (../shared/topologies and its derived/ folder, or
 *    $PIN_TOPOLOGIES) and every synthetic string of its INDEX.md table.
 *    Returns -1 with errno = ENOENT when that directory is absent, so the
 *    caller can say the fixture tests were skipped.
 *  - fixtures_own[]: the project's own synthetic machines, always there.
 */
#ifndef PIN_FIXTURES_H
#define PIN_FIXTURES_H

#include <stddef.h>

struct fixture {
    const char *name; /* file name relative to the directory, or name */
    const char *src;  /* path to XML, or synthetic description */
};

/* NULL-terminated (name == NULL) table of the project's own machines. */
extern const struct fixture fixtures_own[];

/* The shared fixture directory in use (may not exist). */
const char *fixtures_dir (void);

/* Load the shared fixtures into a NULL-terminated array; caller frees
 * with fixtures_free().  -1 (errno ENOENT) if the directory is absent. */
int fixtures_shared (struct fixture **out, size_t *count);
void fixtures_free (struct fixture *f);

#endif /* !PIN_FIXTURES_H */
