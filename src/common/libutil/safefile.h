/* safefile.h - may a process running as root trust this path?
 *
 * One rule for every file or directory slurm-pin reads or writes as root
 * where a user could otherwise plant something: StateDir, its claims/ and
 * lock, and the topology cache.  A path is safe when
 *   - it is absolute, with no '..' component and no control character;
 *   - no component is a symbolic link (each is looked at with
 *     AT_SYMLINK_NOFOLLOW, walking down from "/" with O_PATH|O_NOFOLLOW);
 *   - the path itself and every directory above it are owned by root or
 *     by `owner` (pass geteuid(), or 0 to ask "safe for root?");
 *   - none of them is writable by group or others, except a directory
 *     *above* the path that is root's and sticky (/tmp): there nobody but
 *     root and an entry's owner can rename or remove the entry.
 * Checked after opening (or before, on a chain that only root can change)
 * this leaves no window: a chain that passes can only be changed by root
 * or `owner`.
 */
#ifndef PIN_SAFEFILE_H
#define PIN_SAFEFILE_H

#include <sys/types.h>

#include "errprintf.h"

/* 0 if `path` is safe (see above); -1 with errno and errp naming the
 * component at fault and what to do:
 *   ENOENT   the path or a directory above it does not exist;
 *   ELOOP    a component is a symbolic link;
 *   ENOTDIR  a component above the last is not a directory;
 *   EPERM    a wrong owner or group/other-writable;
 *   EINVAL   not absolute, '..', a control character; ENAMETOOLONG. */
int safefile_check (const char *path, uid_t owner, pin_error_t *errp);

#endif /* !PIN_SAFEFILE_H */
