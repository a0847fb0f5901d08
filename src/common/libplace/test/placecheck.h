/* placecheck.h - invariants of a placement, computed independently
 *
 * The checker replays a plan task by task on its own copy of the machine
 * (taken from libtopo's PU table, not from libplace) and checks every
 * rule of doc/policies.md that can be stated without choosing among ties:
 * sizes, disjointness, allowed-minus-busy, NUMA domains, distinct L2 /
 * cores, balance, core filling, mems and the fallback bits; the cleanest
 * L2 units and fewest L3 inside each domain of numa-spread and of
 * numa-local across domains, the shares of those domains, numa-spread's
 * choice of domains per package, cache-shared's single L3 and its
 * domains taken whole but one; for a request larger than its limit, the
 * rules of the fallback (even load, free PUs before busy ones, the
 * oversubscribed and shared-with-step bits).
 */
#ifndef PIN_PLACECHECK_H
#define PIN_PLACECHECK_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "libplace/place.h"
#include "libtopo/topo.h"

/* Check `plan` (computed by place_compute for `req` on `t`).  Returns 0
 * if every invariant holds, else -1 with a description in msg. */
int placecheck (const topo_t *t,
                const struct place_request *req,
                const struct place_plan *plan,
                char *msg,
                size_t len);

/* Number of PUs in allowed-minus-busy for req (the free PUs). */
unsigned placecheck_navail (const topo_t *t, const struct place_request *req);

/* The size limit of req: the PUs in allowed-minus-busy, or in allowed for
 * none, which ignores busy PUs (doc/policies.md). */
unsigned placecheck_limit (const topo_t *t, const struct place_request *req);

/* Every policy, in a fixed order. */
extern const enum place_policy placecheck_policies[];
#define PLACECHECK_NPOLICIES 5

/* Check with ck_assert a grid of requests on t: every policy, 1-4 and 8
 * tasks, 1, 2, 3, 4, 7, 8, 16, a quarter, half, all but one, all and one
 * more than all PUs per task, four allowed sets (all, random PUs, random
 * whole cores, half the packages) and five busy sets (none, 25% and 50%
 * of the PUs, 40% of the cores, an earlier step's PUs) drawn from `seed`; for
 * random also same seed => same plan, and another seed
 * => another plan where there are more than 1e9 possible subsets.  Every
 * plan goes through placecheck(), the fallback plans of too large
 * requests too; with req.refuse set every too large request must fail. */
void placecheck_grid (const char *name, const topo_t *t, uint64_t seed);

/* Run a suite with its results as TAP on stdout (one line per test
 * case); returns the exit status (0 when nothing failed). */
int placecheck_run_tap (Suite *s);

#endif /* !PIN_PLACECHECK_H */
