/* deliver_spawn.h - start 'slurm-pin deliver --job N' at job end */
#ifndef PIN_DELIVER_SPAWN_H
#define PIN_DELIVER_SPAWN_H

#include <stdbool.h>
#include <stdint.h>

#include "libutil/errprintf.h"

/* Start `cmd deliver --job JOB --journal JOURNAL --timeout TIMEOUT` detached (double fork,
 * new session, stdio on /dev/null, no other descriptors) so that the
 * epilog does not wait for it; the child's own --timeout bounds it and
 * SIGKILL follows TIMEOUT + 10 s later through alarm(2) in the child
 * before exec.  `cmd` must be an absolute path to a regular executable
 * owned by root and not writable by group or others (it runs as root).
 * Returns 0 once the intermediate child is reaped, -1 with errp. */
/* True when the Slurm that loaded pin.so stores accounting in slurmdbd
 * (AccountingStorageType=accounting_storage/slurmdbd in the slurm.conf it
 * read): only then is there anywhere to deliver to. */
bool deliver_wanted (void);

int deliver_spawn (const char *cmd, uint32_t job, const char *journal,
                   unsigned timeout, pin_error_t *errp);

#endif /* !PIN_DELIVER_SPAWN_H */
