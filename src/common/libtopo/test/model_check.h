/* model_check.h - invariants every flattened topology must satisfy
 * (shared by the libtopo unit tests; uses check's assertions) */
#ifndef PIN_TOPO_MODEL_CHECK_H
#define PIN_TOPO_MODEL_CHECK_H

#include "libtopo/topo.h"

/* Assert the invariants of the model (topo.h) on t; `name` labels the
 * failure messages. */
void model_check (const topo_t *t, const char *name);

/* Number of NUMA domains that are real nodes (topo_numa_is_local). */
unsigned model_local_numa (const topo_t *t);

/* Format a set for comparisons in assertions; returns a static buffer
 * (one of 4 rotating ones), "(null)" for NULL. */
const char *model_fmt (hwloc_const_bitmap_t set);

/* Assert that a and b are the same model: PU table (Slurm core ids
 * included), domains and their cpusets, NUMA nodesets and locality, and
 * the Slurm core mapping of every core id. */
void model_same (const topo_t *a, const topo_t *b, const char *name);

/* Write t (loaded with TOPO_WHOLE_SYSTEM, with its hwloc topology) as XML
 * and as a model cache into a temporary directory, load the model back
 * (no hwloc topology then: topo_export_xml fails), assert model_same,
 * and remove the files. */
void model_round_trip (const topo_t *t, const char *name);

#endif /* !PIN_TOPO_MODEL_CHECK_H */
