/* safeio.h - open a file named by a user, as root may be asked to
 *
 * Reading: a path a user can write to may hold a FIFO or a device, on
 * which a plain open() or read() blocks for ever (or never ends).  Every
 * reader of a named file opens it with safein_open(): O_NONBLOCK while
 * opening, then fstat, and anything but a regular file is refused with
 * one line ("/tmp/x/p.jsonl: a FIFO, not a regular file").
 *
 * Writing: root is asked to write into a user's directory
 * (`slurm-pin plot -o ~u/results/cpu.png`, `profile --record`).  The last
 * component is never followed (O_NOFOLLOW, O_EXCL, or a new file renamed
 * over it); the directories above it are walked one component at a time
 * with openat(O_PATH|O_NOFOLLOW) from "/" (or from the current directory
 * for a relative path), reading each symbolic link met and following it
 * only by this rule:
 *   - a link that is owned by root or by the caller (euid) and sits in a
 *     directory only root or the caller can change (owned by one of them
 *     and not writable by group or others, or sticky) is followed;
 *   - otherwise the link is the work of another user U (its owner, or
 *     the owner of the directory it sits in, who can rename any link into
 *     it): it is followed only if the directory the file is finally
 *     created in belongs to U too.  A user's link may lead root only to
 *     where that user can write anyway (~u/results -> /scratch/u/res);
 *   - a link in a directory that group or others can write (not sticky)
 *     is never followed, nor one whose path needs the links of two users.
 * The file is then created with openat() in the directory the walk
 * ended in, which nobody can swap any more.
 */
#ifndef PIN_SAFEIO_H
#define PIN_SAFEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "errprintf.h"

/* "a FIFO", "a directory", "a character device", "a block device", "a
 * socket", "a symbolic link", "a regular file", "an unknown file type":
 * the kind of a file, for messages. */
const char *safein_kind (mode_t mode);

/* Open `path` for reading (O_RDONLY|O_CLOEXEC|O_NOCTTY, plus `flags`
 * such as O_NOFOLLOW) without blocking on a FIFO or device; the fd (in
 * blocking mode again), or -1 with errno and errp:
 *   EINVAL   not a regular file ("PATH: a FIFO, not a regular file");
 *   else open's errno ("PATH: cannot open: why"). */
int safein_open (const char *path, int flags, pin_error_t *errp);

/* The same, as a stdio stream the caller fcloses. */
FILE *safein_fopen (const char *path, pin_error_t *errp);

/* The directory `path`'s last component is in, walked by the rule above;
 * an O_PATH fd the caller closes, and in *name (a buffer of NAME_MAX + 1)
 * the last component.  -1 with errno and errp ("PATH: why"):
 *   EPERM    a link not followed by the rule above;
 *   ELOOP    more than 40 links;  ENOTDIR a component is not a directory;
 *   EISDIR   the path ends in '/', '.' or '..' (no file name);
 *   EINVAL   empty, a control character; ENAMETOOLONG; or openat's. */
int safeout_dir (const char *path, char *name, pin_error_t *errp);

enum safeout_how {
    SAFEOUT_EXCL,      /* O_EXCL: an existing file is an error (EEXIST) */
    SAFEOUT_NEW_INODE, /* remove an existing entry, then O_EXCL */
    SAFEOUT_APPEND,    /* O_APPEND, created if missing; an existing entry
                        * must be a regular file (EINVAL) */
};

/* Create `path` (walked by safeout_dir()) for writing:
 * O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC|O_NOCTTY with `mode`
 * (before the umask), or as `how` says.  The fd, or -1 with errno and
 * errp. */
int safeout_create (const char *path,
                    enum safeout_how how,
                    mode_t mode,
                    pin_error_t *errp);

/* Remove `path` (a file this process created), walked the same way.
 * 0 (also when it is gone), or -1 with errno and errp. */
int safeout_unlink (const char *path, pin_error_t *errp);

/* Write `len` bytes of `buf` to a new file `path` (mode 0666 before the
 * umask).  Without `replace` an existing `path` is an error (EEXIST);
 * with it the bytes go to a new file beside it (O_EXCL in the same
 * directory) renamed over it, so that whatever was there, a link
 * included, is replaced and never written through.  0, or -1 with errno
 * and errp; nothing is left behind on failure. */
int safeout_write_file (const char *path,
                        const void *buf,
                        size_t len,
                        bool replace,
                        pin_error_t *errp);

#endif /* !PIN_SAFEIO_H */
