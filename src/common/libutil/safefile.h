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

#include <stdbool.h>
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

struct stat;

/* The same rule for a path that may go through symbolic links (pin.conf:
 * /etc/slurm/pin.conf -> /shared/slurm/pin.conf).  A link is followed
 * only if it is owned by root or `owner` (its own mode means nothing)
 * and sits in a directory that passed; then its target is checked,
 * component by component, by the same rule (at most 40 links).  On
 * success *out (may be NULL) is the lstat of the file finally reached:
 * compare its st_dev/st_ino with the fstat of the descriptor opened, to
 * check after opening.  Errors as safefile_check(), and EPERM for a link
 * of another user's. */
int safefile_check_follow (const char *path,
                           uid_t owner,
                           struct stat *out,
                           pin_error_t *errp);

/* The rule above for one component already looked at (lstat or fstat):
 * `shown` names it in the error, `last` says whether it is the path
 * itself (a sticky root directory is accepted only above it).  0, or -1
 * with errno EPERM and errp.  For walkers such as mkdir_p(). */
int safefile_check_stat (const struct stat *st,
                         const char *shown,
                         bool last,
                         uid_t owner,
                         pin_error_t *errp);

#endif /* !PIN_SAFEFILE_H */
