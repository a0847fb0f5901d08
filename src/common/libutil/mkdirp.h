/* mkdirp.h - mkdir -p */
#ifndef PIN_MKDIRP_H
#define PIN_MKDIRP_H

#include <sys/types.h>

/* Make the directory `path` (absolute) and its missing parents: new
 * parents get `parent_mode`, `path` itself `mode` (before the umask).
 * Directories that exist are fine and keep their modes.  0, or -1 with
 * errno (ENOTDIR: a component is not a directory; EINVAL: not absolute;
 * ENAMETOOLONG).  Nothing is removed again on failure. */
int mkdir_p (const char *path, mode_t parent_mode, mode_t mode);

#endif /* !PIN_MKDIRP_H */
