/* tap.h - run a check suite and print TAP on stdout
 *
 * check's own TAP lines (one per case), then one "ok N # SKIP reason" per
 * case that could not run on this machine, then the plan, so that every
 * case is counted on its own by automake's TAP driver and a skipped case
 * is never reported as a pass.
 */
#ifndef PIN_TAP_H
#define PIN_TAP_H

#include <check.h>

/* Run `s` (and free its runner).  `skips` (may be NULL when nskips is 0)
 * are the reasons of the cases left out.  Returns EXIT_SUCCESS if no case
 * failed and at least one case ran or was skipped, else EXIT_FAILURE. */
int tap_run (Suite *s, const char *const *skips, int nskips);

#endif /* !PIN_TAP_H */
