/* mkdirp.h - mkdir -p for a process that may run as root
 *
 * A directory root makes must not be made through, or inside, anything a
 * user controls.  mkdir_p() therefore walks down from "/" one component
 * at a time with openat(O_PATH|O_DIRECTORY|O_NOFOLLOW), and checks each
 * component by the rule of libutil/safefile.h (owned by root or the
 * caller's euid, not writable by group or others unless it is a sticky
 * directory of root's *above* the last component, never a symbolic link)
 * BEFORE it looks at or makes the next one.  So with StateDir=/tmp/x/state
 * and a user's /tmp/x (or a user's symlink /tmp/x), nothing is created
 * under /tmp/x: the walk stops at /tmp/x and says why.  A component it
 * makes itself is looked at again after mkdirat() (another process may
 * have made it first: then it must pass the same checks).
 */
#ifndef PIN_MKDIRP_H
#define PIN_MKDIRP_H

#include <sys/types.h>

#include "errprintf.h"

/* Make the directory `path` (absolute) and its missing parents: new
 * parents get `parent_mode`, `path` itself `mode` (before the umask).
 * Directories that exist are fine and keep their modes.  Every component,
 * old or new, must pass safefile_check_stat() for owner geteuid().
 * 0, or -1 with errno and errp (may be NULL) naming the component
 * ("PATH: why", or "PATH: above it, COMPONENT: why"):
 *   ELOOP    a component is a symbolic link (not followed);
 *   ENOTDIR  a component is not a directory;
 *   EPERM    a wrong owner or group/other-writable (nothing made below);
 *   EINVAL   not absolute, '..', a control character; ENAMETOOLONG;
 *   or mkdirat's errno.  Nothing is removed again on failure. */
int mkdir_p (const char *path,
             mode_t parent_mode,
             mode_t mode,
             pin_error_t *errp);

#endif /* !PIN_MKDIRP_H */
