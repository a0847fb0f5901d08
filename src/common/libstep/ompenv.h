/* ompenv.h - OMP_PLACES / OMP_PROC_BIND consistent with a task's mask
 *
 * The plugin exports OpenMP placement variables that match each task's
 * CPUs, never overrides what the user set, and never lets a value it set
 * in one step (e.g. the batch step) pass for the user's own in a later
 * step: whatever it sets it also records in SLURM_PIN_<NAME>, and a
 * current value equal to the recorded one is the plugin's, not the user's.
 * Pure functions, no environment access: the plugin does the getenv and
 * setenv through SPANK.
 */
#ifndef PIN_STEP_OMPENV_H
#define PIN_STEP_OMPENV_H

#include <hwloc.h>

/* The variable that records what the plugin set for `name`
 * ("OMP_PLACES" -> "SLURM_PIN_OMP_PLACES"). */
#define OMPENV_RECORD_PREFIX "SLURM_PIN_"

/* OMP_PLACES for a set of CPUs: one place per PU in ascending OS index,
 * "{0},{2},{4},{6}".  NULL (errno EINVAL) for an empty set, or ENOMEM.
 * Caller frees. */
char *ompenv_places (hwloc_const_bitmap_t cpus);

/* OMP_PROC_BIND for a policy (enum place_policy): "spread" for
 * numa-spread, "close" for the other binding policies, NULL for none. */
const char *ompenv_proc_bind (int policy);

enum ompenv_action {
    OMPENV_KEEP = 0, /* leave the variable as it is (the user's, or unset) */
    OMPENV_SET,      /* set it (and its record) to ours */
    OMPENV_UNSET,    /* remove it and its record: a stale plugin value */
};

/* What to do with one variable.  `current`: its value in the task's
 * environment (NULL if unset); `recorded`: the value of its SLURM_PIN_
 * record (NULL if unset); `ours`: what this task should get (NULL when the
 * step is not bound, e.g. policy none).
 *   current unset                 -> SET if ours, else KEEP
 *   current == recorded (ours)    -> SET if ours, else UNSET
 *   otherwise (the user's value)  -> KEEP
 */
enum ompenv_action ompenv_decide (const char *current,
                                  const char *recorded,
                                  const char *ours);

#endif /* !PIN_STEP_OMPENV_H */
