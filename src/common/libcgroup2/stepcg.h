/* stepcg.h - where a step's cgroups are, and what other steps hold
 *
 * Slurm's layout on top of cg2.h: Slurm's step directory names, finding
 * Slurm's own step cgroup in a process's cgroup path (nested mode), and
 * reading the PUs that other running steps of a job were given from the
 * cgroup tree (cg2_busy_cpus_filter() with the plugin's rules).  Every
 * path is walked by cg2 from its root fd without following symlinks.
 * Paths are relative to the cg2 root, with or without a leading '/'.
 * Nothing here logs; errors go to errp.
 */
#ifndef PIN_CG2_STEPCG_H
#define PIN_CG2_STEPCG_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cg2.h"
#include "libutil/errprintf.h"

/* Slurm's name of a step's cgroup directory: "step_3", "step_batch",
 * "step_extern", "step_interactive".  Returns buf (size n). */
const char *stepcg_step_dir (uint32_t step, char *buf, size_t n);

/* The length of a SLUID as Slurm prints it: "sEKNKTV3WPV500". */
#define STEPCG_SLUID_LEN 14

/* Is name[0..len) a SLUID as Slurm 26.05 names a job's cgroup: 's' and
 * 13 upper-case characters of Crockford's base 32? */
bool stepcg_is_sluid (const char *name, size_t len);

/* If `pid_path` (a process's cgroup, e.g. from cg2_pid_path()) lies in
 * Slurm's tree of this step, ".../JOBDIR/step_<step>[/...]", copy the
 * part through the step directory into out (size n) and return 0;
 * otherwise (or if it does not fit) return -1.  JOBDIR is "job_<job>"
 * (Slurm up to 25.11, and 26.05 with CgroupJobIdPaths=yes) or the job's
 * SLUID (26.05's default).  A SLUID is random to us (it is made from
 * the submit time, not the job id), so any SLUID-shaped JOBDIR matches:
 * pass only the cgroup of slurmstepd itself, which Slurm alone places
 * (doc/security.md), never a task's.  A component must match whole:
 * job_12 does not match job_123. */
int stepcg_find_slurm_step (const char *pid_path,
                            uint32_t job,
                            uint32_t step,
                            char *out,
                            size_t n);

/* Is `controller` listed in relpath's cgroup.controllers (i.e. may its
 * children use it)?  False if the file cannot be read. */
bool stepcg_has_controller (cg2_t *cg,
                            const char *relpath,
                            const char *controller);

/* PUs held by the running steps of a job, from the tree below job_rel:
 * the union of cpuset.cpus of every populated "task_<n>" directory with a
 * non-empty cpuset.cpus, found as job_rel/step_<id>/task_<n> (standalone
 * tree) or job_rel/step_<id>/user/task_<n> (Slurm's tree, nested mode).
 * The step directory named `self` (e.g. "step_3", may be NULL) and the
 * batch, extern and interactive steps are skipped.  Task directories
 * whose cpuset.cpus is empty (Slurm's own) or that hold no process (a
 * crashed step: "populated 1" missing from cgroup.events) hold nothing.
 * Symlinks are not followed (a symlinked job_rel is an error).  A missing
 * job_rel is an empty set.  Results are added to `busy`. */
int stepcg_busy (cg2_t *cg,
                 const char *job_rel,
                 const char *self,
                 hwloc_bitmap_t busy,
                 pin_error_t *errp);

#endif /* !PIN_CG2_STEPCG_H */
