/* pinopt.h - the value of --pin-policy and other untrusted strings
 *
 * The request side of the site's rules, shared by pin.so (the option in
 * srun, sbatch, salloc and slurmstepd), job_submit_pin.so (through
 * libsubmit: it must accept exactly what pin.so accepts) and slurm-pin:
 * parse "POLICY[,verbose]", quote hostile text for a log line, recognise
 * a --cpu-bind that conflicts with a pin policy, and derive the seed of
 * the `random` policy from the job and step ids.  Pure, unit-tested
 * without Slurm; nothing here logs.  --pin-profile's value is parsed by
 * pin_conf_parse_profile() (conf.h), as Profile= is.
 */
#ifndef PIN_CONF_PINOPT_H
#define PIN_CONF_PINOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "libutil/errprintf.h"

/* Longest --pin-policy value accepted (bytes, without the NUL). */
#define PINOPT_VALUE_MAX 64

/* srun marks a job it creates for its own step in the job control
 * environment (spank_job_control_setenv; the job's spank_job_env holds
 * NAME=VALUE, the prolog and epilog see SPANK_NAME):
 * job_submit_pin.so may then reshape a numa-spread job
 * (doc/job-submit.md). */
#define PINOPT_SRUN_MARK_NAME "PIN_ALLOC_BY"
#define PINOPT_SRUN_MARK_VALUE "srun"

/* Longest NAME of ",nic=NAME". */
#define PINOPT_NIC_MAX 31

struct pin_option {
    int policy;   /* enum place_policy */
    bool verbose; /* ",verbose" was given */
    bool nic;     /* ",nic" or ",nic=NAME" was given */
    char nic_name[PINOPT_NIC_MAX + 1]; /* NAME, "" for the default NIC */
};

/* Parse an option value "POLICY[,verbose][,nic[=NAME]]" (the policy
 * first, then flags separated by ','; a flag may repeat, the last nic
 * wins).  NAME: [A-Za-z0-9._:-], at most PINOPT_NIC_MAX characters (a
 * device name, index or PCI bus id: doc/policies.md, "GPUs and NICs").  On failure returns -1 with errno
 * EINVAL and one line in errp that names the value and what is valid:
 *   "--pin-policy=numa-locl: unknown policy 'numa-locl'; known: numa-local,
 * ..." `opt` is only written on success.  Nothing to free.
 */
int pinopt_parse (const char *value,
                  struct pin_option *opt,
                  pin_error_t *errp);

/* The value Slurm handed for an option whose argument is optional
 * (`--pin-profile` rather than `--pin-profile=2s`): NULL when it was
 * given without one.  Slurm 22.05 passes that as NULL in srun, sbatch and
 * salloc, but as the text "(null)" wherever it went through the job's
 * environment (_SLURM_SPANK_OPTION_pin_pin_profile=(null) in
 * spank_job_env, SLURM_SPANK__SLURM_SPANK_OPTION_pin_pin_profile=(null)
 * in a batch script's environment, hence slurmstepd and every srun inside
 * the job).  No option of pin.so takes "(null)" as a value.  Returns
 * `value` otherwise. */
const char *pinopt_slurm_optarg (const char *value);

/* Copy at most `max` characters of untrusted `s` into buf (size n) for a
 * log line: non-printable bytes become '?', a longer string ends in "...".
 * NULL becomes "(null)".  Returns buf. */
const char *pinopt_quote (const char *s, size_t max, char *buf, size_t n);

/* Does a SLURM_CPU_BIND_TYPE value name explicit CPUs or domains
 * (map_cpu:, mask_cpu:, map_ldom:, mask_ldom:)?  Those conflict with any
 * pin policy other than none; NULL or other types do not. */
bool pinopt_cpu_bind_conflicts (const char *cpu_bind_type);

/* The variable pin.so sets in every task (task_init) to the task's own
 * SLURM_CPU_BIND, the binding Slurm gave it: an srun the task runs copies
 * both into its step's environment, and reads SLURM_CPU_BIND as its
 * --cpu-bind, so the two equal (pinopt_cpu_bind_same) means the binding
 * was inherited, not asked for. */
#define PINOPT_TASK_CPU_BIND "SLURM_PIN_TASK_CPU_BIND"

/* Do two SLURM_CPU_BIND values name the same binding?  srun rewrites the
 * masks it reads ("quiet,mask_cpu:0x1" becomes "quiet,mask_cpu:1"), so
 * each ',' or ':' separated item is compared without case, a leading
 * "0x" and leading zeros.  NULL equals nothing. */
bool pinopt_cpu_bind_same (const char *a, const char *b);

/* Seed of the `random` policy for a job step: a fixed 64-bit mix of the
 * two ids (the same on every node and every run of the step), so that
 * `slurm-pin plan --seed` can reproduce it. */
uint64_t pinopt_seed (uint32_t job, uint32_t step);

#endif /* !PIN_CONF_PINOPT_H */
