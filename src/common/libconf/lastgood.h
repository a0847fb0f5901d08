/* lastgood.h - the last good pin.conf of slurmctld, kept on disk
 *
 * Since Slurm 23.11 `scontrol reconfigure` restarts slurmctld, so
 * job_submit_pin.so loses the rules it held in memory.  Started with a
 * broken pin.conf it must not fall back to the defaults (which allow every
 * policy): it reads the copy of the last pin.conf that loaded without an
 * error, which this module writes beside slurmctld's state
 * (StateSaveLocation/pin.conf.last-good) each time a good one is loaded.
 *
 * The copy is a pin.conf (read by the same parser) owned by the process
 * that wrote it (root, or SlurmUser), mode 0600.  Before anything is
 * written or read, the directory must pass libutil/safefile.h's rule for
 * that owner (trusted links followed, nobody else can write on the way);
 * the copy itself is never a symbolic link (O_NOFOLLOW), must be a
 * regular file owned by root or the caller and writable by nobody else.
 */
#ifndef PIN_LASTGOOD_H
#define PIN_LASTGOOD_H

#include <stddef.h>

#include "conf.h"
#include "libutil/errprintf.h"

/* The copy's name in the state directory. */
#define PIN_LASTGOOD_NAME "pin.conf.last-good"

/* "DIR/pin.conf.last-good" into buf (size n).  0, or -1 with errno
 * EINVAL (no DIR, not absolute) or ENAMETOOLONG. */
int pin_lastgood_path (char *buf, size_t n, const char *state_dir);

/* Copy the pin.conf at `conf_path` (just loaded without error) to `saved`:
 * its bytes (at most 1 MiB) go to a new file beside `saved`, which must
 * load without error itself, and is then renamed over `saved`.  0, or -1
 * with errno and errp ("SAVED: why"); on failure `saved` is as it was and
 * nothing is left beside it. */
int pin_lastgood_save (const char *conf_path,
                       const char *saved,
                       pin_error_t *errp);

/* Load the copy `saved` over `conf` (start from pin_conf_defaults()).
 * 0; or -1 with errno ENOENT (no copy), ELOOP (a symbolic link), EPERM
 * (not trusted) or EINVAL (does not parse) and errp; `conf` unchanged on
 * failure.  On success conf->path is `saved`. */
int pin_lastgood_load (struct pin_conf *conf,
                       const char *saved,
                       pin_error_t *errp);

#endif /* !PIN_LASTGOOD_H */
