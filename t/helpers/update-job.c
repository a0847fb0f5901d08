/* update-job.c - slurm_update_job() with a --pin-policy in spank_job_env
 *
 *   update-job JOBID POLICY
 *
 * Sends slurmctld an update of job JOBID that carries only
 * _SLURM_SPANK_OPTION_pin_pin_policy=POLICY in spank_job_env, as any user
 * can through the API (scontrol has no way to set it), so that
 * job_submit_pin's job_modify() decides on it.  Prints "accepted", or
 * "refused: MESSAGE" (slurm_strerror of the error) and exits 1; 2 on a
 * usage error.  Used by t/t3020-job-modify.t.
 */
#include <errno.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "slurm_compat.h"

int main (int argc, char **argv)
{
    job_desc_msg_t desc;
    char entry[1024];
    char *env[2] = {entry, NULL};
    char *end;
    unsigned long id;

    if (argc != 3) {
        fprintf (stderr, "usage: update-job JOBID POLICY\n");
        return 2;
    }
    errno = 0;
    id = strtoul (argv[1], &end, 10);
    if (errno || *end || id == 0 || id > UINT32_MAX) {
        fprintf (stderr, "update-job: %s: not a job id\n", argv[1]);
        return 2;
    }
    snprintf (entry,
              sizeof (entry),
              "_SLURM_SPANK_OPTION_pin_pin_policy=%s",
              argv[2]);
    slurm_init (NULL);
    slurm_init_job_desc_msg (&desc);
    pin_job_desc_set_job_id (&desc, (uint32_t)id);
    desc.spank_job_env = env;
    desc.spank_job_env_size = 1;
    if (slurm_update_job (&desc) != SLURM_SUCCESS) {
        int e = errno; /* slurm_get_errno() is gone in 24.11 */
        printf ("refused: %s\n", slurm_strerror (e));
        slurm_fini ();
        return 1;
    }
    printf ("accepted\n");
    slurm_fini ();
    return 0;
}
