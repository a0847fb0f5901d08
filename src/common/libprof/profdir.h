/* profdir.h - where pin.so keeps profiles, and finding a job's
 *
 * pin.so writes the profile of each step on each node to
 * ProfileDir/JOB.STEP.NODE.jsonl (doc/profiling.md): JOB the job id, STEP
 * the step id or Slurm's name of a special step (batch, interactive),
 * NODE Slurm's node name (characters other than [A-Za-z0-9._-] become
 * '_').  These helpers turn "JOB[.STEP]" into the files of a directory.
 */
#ifndef PIN_PROFDIR_H
#define PIN_PROFDIR_H

#include <stddef.h>
#include <stdint.h>

#include "libutil/errprintf.h"

/* Parse "JOB" or "JOB.STEP" (STEP digits, batch, interactive or extern).
 * step gets "" when absent.  -1 with errno EINVAL and errp naming the
 * value and what is valid. */
int profdir_spec_parse (const char *spec,
                        uint32_t *job,
                        char *step,
                        size_t n,
                        pin_error_t *errp);

struct profdir_entry {
    char *path; /* DIR/NAME */
    uint32_t job;
    char step[16];
    char node[256];
};

/* The profiles in `dir` of `spec`, sorted by step (numbers in order, then
 * batch, interactive, ...) and node.  0 with *out (free with
 * profdir_free) and *count (may be 0), or -1 with errp (the directory
 * cannot be read, a bad spec). */
int profdir_find (const char *dir,
                  const char *spec,
                  struct profdir_entry **out,
                  size_t *count,
                  pin_error_t *errp);
void profdir_free (struct profdir_entry *v, size_t count);

/* The free space a profile in `profile_dir` must leave for root's
 * accounting journal in `journal_dir` (doc/profiling.md, "Room for the
 * journal"): `journal_max` (JournalMaxSize; PROFDIR_JOURNAL_RESERVE when
 * it is 0) when the two are on one file system (st_dev; a directory not
 * made yet counts as the nearest one above it that exists), else 0. */
#define PROFDIR_JOURNAL_RESERVE (64ULL << 20)
uint64_t profdir_journal_reserve (const char *profile_dir,
                                  const char *journal_dir,
                                  uint64_t journal_max);

#endif /* !PIN_PROFDIR_H */
