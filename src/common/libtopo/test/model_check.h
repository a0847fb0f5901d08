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

#endif /* !PIN_TOPO_MODEL_CHECK_H */
