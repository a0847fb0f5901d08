/* deliver.h - start 'slurm-pin deliver --job N' at job end
 *
 * pin.so calls it in slurmd's epilog process when the Slurm that loaded
 * it stores accounting in slurmdbd (doc/accounting-slurmdbd.md).
 */
#ifndef PIN_ACCT_DELIVER_H
#define PIN_ACCT_DELIVER_H

#include <stdint.h>

#include "libutil/errprintf.h"

/* Start `cmd deliver --job JOB --journal JOURNAL --timeout TIMEOUT`
 * detached (double fork, new session, stdio on /dev/null, no other
 * descriptors) so that the epilog does not wait for it; the child's own
 * --timeout bounds it and SIGKILL follows TIMEOUT + 10 s later through
 * alarm(2) in the child before exec.  `cmd` must be an absolute path to a
 * regular executable owned by root and not writable by group or others
 * (it runs as root).  Returns 0 once the intermediate child is reaped,
 * -1 with errp. */
int acct_deliver_spawn (const char *cmd,
                        uint32_t job,
                        const char *journal,
                        unsigned timeout,
                        pin_error_t *errp);

#endif /* !PIN_ACCT_DELIVER_H */
