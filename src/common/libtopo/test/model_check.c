/* model_check.c - invariants of the flattened topology model */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libtopo/topo_private.h"
#include "model_check.h"

static const char *level_name[TOPO_NLEVELS] = {
    "core",
    "l2",
    "l3",
    "numa",
    "pkg",
};

const char *model_fmt (hwloc_const_bitmap_t set)
{
    static char buf[4][4096];
    static int next;
    char *s;
    char *out = buf[next];

    next = (next + 1) % 4;
    if (!set || !(s = topo_list_format (set))) {
        snprintf (out, sizeof (buf[0]), "(null)");
        return out;
    }
    snprintf (out, sizeof (buf[0]), "%s", s);
    free (s);
    return out;
}

unsigned model_local_numa (const topo_t *t)
{
    unsigned n = 0;
    for (unsigned i = 0; i < topo_ndomains (t, TOPO_NUMA); i++)
        if (topo_numa_is_local (t, i))
            n++;
    return n;
}

/* Every PU of domain `inner` i has the same index at level `outer`. */
static void check_nested (const topo_t *t,
                          const char *name,
                          enum topo_level inner,
                          enum topo_level outer)
{
    unsigned n = topo_ndomains (t, inner);
    int *outer_of = malloc (n * sizeof (*outer_of));

    ck_assert_ptr_nonnull (outer_of);
    for (unsigned i = 0; i < n; i++)
        outer_of[i] = -1;
    for (unsigned i = 0; i < topo_npus (t); i++) {
        const struct topo_pu *pu = topo_pu (t, i);
        unsigned d = pu->dom[inner];
        if (outer_of[d] < 0)
            outer_of[d] = (int)pu->dom[outer];
        ck_assert_msg (outer_of[d] == (int)pu->dom[outer],
                       "%s: %s domain %u straddles %s domains %d and %u "
                       "(PU P#%u)",
                       name,
                       level_name[inner],
                       d,
                       level_name[outer],
                       outer_of[d],
                       pu->dom[outer],
                       pu->os);
    }
    free (outer_of);
}

void model_check (const topo_t *t, const char *name)
{
    unsigned npus = topo_npus (t);
    hwloc_const_bitmap_t all = topo_cpuset (t);
    hwloc_bitmap_t u = hwloc_bitmap_alloc ();
    hwloc_bitmap_t nodes_seen = hwloc_bitmap_alloc ();

    ck_assert_ptr_nonnull (u);
    ck_assert_ptr_nonnull (nodes_seen);
    ck_assert_msg (npus > 0, "%s: no PU", name);
    ck_assert_msg (hwloc_bitmap_weight (all) == (int)npus,
                   "%s: topo_cpuset %s has %d PUs, table has %u",
                   name,
                   model_fmt (all),
                   hwloc_bitmap_weight (all),
                   npus);
    ck_assert_ptr_null (topo_pu (t, npus));

    /* the table: distinct OS indexes, all in topo_cpuset, reverse map */
    for (unsigned i = 0; i < npus; i++) {
        const struct topo_pu *pu = topo_pu (t, i);
        ck_assert_ptr_nonnull (pu);
        ck_assert_msg (hwloc_bitmap_isset (all, pu->os),
                       "%s: PU P#%u not in topo_cpuset",
                       name,
                       pu->os);
        ck_assert_msg (topo_pu_index (t, pu->os) == (int)i,
                       "%s: topo_pu_index(%u) = %d, expected %u",
                       name,
                       pu->os,
                       topo_pu_index (t, pu->os),
                       i);
        ck_assert_msg (pu->kind >= -1,
                       "%s: PU P#%u kind %d",
                       name,
                       pu->os,
                       pu->kind);
    }
    ck_assert_int_eq (topo_pu_index (t, (unsigned)hwloc_bitmap_last (all) + 1),
                      -1);

    for (int lvl = 0; lvl < TOPO_NLEVELS; lvl++) {
        unsigned ndom = topo_ndomains (t, lvl);
        unsigned next = 0;
        int total = 0;

        ck_assert_msg (ndom >= 1 && ndom <= npus,
                       "%s: %u %s domains",
                       name,
                       ndom,
                       level_name[lvl]);
        ck_assert_ptr_null (topo_domain_cpuset (t, lvl, ndom));
        for (unsigned i = 0; i < npus; i++) {
            const struct topo_pu *pu = topo_pu (t, i);
            unsigned d = pu->dom[lvl];
            ck_assert_msg (d < ndom,
                           "%s: PU P#%u %s domain %u >= %u",
                           name,
                           pu->os,
                           level_name[lvl],
                           d,
                           ndom);
            /* dense, numbered in the order of their first PU */
            ck_assert_msg (d <= next,
                           "%s: %s domain %u appears before %u",
                           name,
                           level_name[lvl],
                           d,
                           next);
            if (d == next)
                next++;
            ck_assert_msg (hwloc_bitmap_isset (topo_domain_cpuset (t, lvl, d),
                                               pu->os),
                           "%s: PU P#%u not in the cpuset of its %s domain %u",
                           name,
                           pu->os,
                           level_name[lvl],
                           d);
        }
        ck_assert_msg (next == ndom,
                       "%s: %s domains %u..%u have no PU",
                       name,
                       level_name[lvl],
                       next,
                       ndom - 1);
        /* the domain cpusets partition topo_cpuset: each PU is in its
         * own domain (above) and the sizes add up to the PU count */
        hwloc_bitmap_zero (u);
        for (unsigned d = 0; d < ndom; d++) {
            hwloc_const_bitmap_t s = topo_domain_cpuset (t, lvl, d);
            ck_assert_msg (!hwloc_bitmap_iszero (s),
                           "%s: %s domain %u empty",
                           name,
                           level_name[lvl],
                           d);
            total += hwloc_bitmap_weight (s);
            hwloc_bitmap_or (u, u, s);
        }
        ck_assert_msg (total == (int)npus && hwloc_bitmap_isequal (u, all),
                       "%s: %s domains do not partition %s",
                       name,
                       level_name[lvl],
                       model_fmt (all));
    }

    check_nested (t, name, TOPO_CORE, TOPO_L2);
    check_nested (t, name, TOPO_CORE, TOPO_NUMA);
    check_nested (t, name, TOPO_CORE, TOPO_PKG);
    check_nested (t, name, TOPO_CORE, TOPO_L3);

    /* NUMA nodesets: non-empty, within the machine's nodes; a real node
     * belongs to one domain; a pseudo domain offers every node */
    for (unsigned d = 0; d < topo_ndomains (t, TOPO_NUMA); d++) {
        hwloc_const_bitmap_t ns = topo_numa_nodeset (t, d);
        ck_assert_ptr_nonnull (ns);
        ck_assert_msg (!hwloc_bitmap_iszero (ns),
                       "%s: NUMA domain %u has "
                       "an empty nodeset",
                       name,
                       d);
        ck_assert_msg (hwloc_bitmap_isincluded (ns, topo_nodeset (t)),
                       "%s: NUMA domain %u nodeset %s not in %s",
                       name,
                       d,
                       model_fmt (ns),
                       model_fmt (topo_nodeset (t)));
        if (topo_numa_is_local (t, d)) {
            ck_assert_msg (!hwloc_bitmap_intersects (ns, nodes_seen),
                           "%s: node(s) of NUMA domain %u (%s) also in "
                           "another domain",
                           name,
                           d,
                           model_fmt (ns));
            hwloc_bitmap_or (nodes_seen, nodes_seen, ns);
        } else
            ck_assert_msg (hwloc_bitmap_isequal (ns, topo_nodeset (t)),
                           "%s: pseudo NUMA domain %u nodeset %s, expected "
                           "all nodes %s",
                           name,
                           d,
                           model_fmt (ns),
                           model_fmt (topo_nodeset (t)));
    }
    ck_assert_ptr_null (topo_numa_nodeset (t, topo_ndomains (t, TOPO_NUMA)));
    hwloc_bitmap_free (u);
    hwloc_bitmap_free (nodes_seen);
}

void model_same (const topo_t *a, const topo_t *b, const char *name)
{
    /* I/O devices and NUMA distances (devices.c) */
    ck_assert_uint_eq (topo_ndevs (a), topo_ndevs (b));
    for (unsigned i = 0; i < topo_ndevs (a); i++) {
        const struct topo_dev *x = topo_dev (a, i), *y = topo_dev (b, i);
        ck_assert_msg (x->kind == y->kind && x->index == y->index
                           && x->fabric == y->fabric && x->numa == y->numa
                           && !strcmp (x->name, y->name)
                           && !strcmp (x->names, y->names)
                           && !strcmp (x->busid, y->busid)
                           && hwloc_bitmap_isequal (x->cpuset, y->cpuset)
                           && hwloc_bitmap_isequal (x->nodeset, y->nodeset),
                       "%s: device %u differs",
                       name,
                       i);
    }
    for (unsigned i = 0; i < topo_ndomains (a, TOPO_NUMA); i++)
        for (unsigned j = 0; j < topo_ndomains (a, TOPO_NUMA); j++)
            ck_assert_uint_eq (topo_numa_distance (a, i, j),
                               topo_numa_distance (b, i, j));

    hwloc_bitmap_t ca = hwloc_bitmap_alloc ();
    hwloc_bitmap_t cb = hwloc_bitmap_alloc ();
    char id[16];
    unsigned ncores = 0;

    ck_assert_uint_eq (topo_npus (a), topo_npus (b));
    for (unsigned i = 0; i < topo_npus (a); i++) {
        const struct topo_pu *p = topo_pu (a, i);
        const struct topo_pu *q = topo_pu (b, i);
        ck_assert_msg (p->os == q->os && p->kind == q->kind
                           && p->slurm_core == q->slurm_core
                           && memcmp (p->dom, q->dom, sizeof (p->dom)) == 0,
                       "%s: PU %u differs",
                       name,
                       i);
        if (p->slurm_core >= 0 && (unsigned)p->slurm_core + 1 > ncores)
            ncores = (unsigned)p->slurm_core + 1;
    }
    for (int lvl = 0; lvl < TOPO_NLEVELS; lvl++) {
        ck_assert_uint_eq (topo_ndomains (a, lvl), topo_ndomains (b, lvl));
        for (unsigned d = 0; d < topo_ndomains (a, lvl); d++)
            ck_assert_msg (hwloc_bitmap_isequal (topo_domain_cpuset (a,
                                                                     lvl,
                                                                     d),
                                                 topo_domain_cpuset (b,
                                                                     lvl,
                                                                     d)),
                           "%s: level %d domain %u differs",
                           name,
                           lvl,
                           d);
    }
    for (unsigned d = 0; d < topo_ndomains (a, TOPO_NUMA); d++) {
        ck_assert (hwloc_bitmap_isequal (topo_numa_nodeset (a, d),
                                         topo_numa_nodeset (b, d)));
        ck_assert (topo_numa_is_local (a, d) == topo_numa_is_local (b, d));
    }
    ck_assert (hwloc_bitmap_isequal (topo_cpuset (a), topo_cpuset (b)));
    ck_assert (hwloc_bitmap_isequal (topo_nodeset (a), topo_nodeset (b)));
    /* every core id, and one past the end (the same error from both) */
    for (unsigned c = 0; c <= ncores; c++) {
        int ra, rb;
        snprintf (id, sizeof (id), "%u", c);
        ra = topo_slurm_cores_to_cpuset (a, id, ca, NULL);
        rb = topo_slurm_cores_to_cpuset (b, id, cb, NULL);
        ck_assert_msg (ra == rb,
                       "%s: Slurm core %u: %d vs %d",
                       name,
                       c,
                       ra,
                       rb);
        if (ra == 0)
            ck_assert_msg (hwloc_bitmap_isequal (ca, cb),
                           "%s: Slurm core %u: %s vs %s",
                           name,
                           c,
                           model_fmt (ca),
                           model_fmt (cb));
    }
    hwloc_bitmap_free (ca);
    hwloc_bitmap_free (cb);
}

void model_round_trip (const topo_t *t, const char *name)
{
    char dir[] = "/tmp/model_rt.XXXXXX";
    char xml[64], model[64];
    pin_error_t e = {{0}};
    topo_t *m;

    ck_assert_ptr_nonnull (mkdtemp (dir));
    snprintf (xml, sizeof (xml), "%s/t.xml", dir);
    snprintf (model, sizeof (model), "%s/t.xml.model", dir);
    ck_assert_msg (topo_export_xml (t, xml, &e) == 0, "%s", e.text);
    ck_assert_msg (topo_export_model (t, "fp", xml, model, &e) == 0,
                   "%s",
                   e.text);
    m = topo_load_model (model, "fp", xml, &e);
    ck_assert_msg (m != NULL, "%s: %s", name, e.text);
    model_check (m, name);
    model_same (t, m, name);
    /* no hwloc topology behind a model */
    ck_assert_int_eq (topo_export_xml (m, xml, NULL), -1);
    ck_assert_int_eq (errno, ENOTSUP);
    topo_destroy (m);
    /* another fingerprint, or the XML changed: not used */
    ck_assert_ptr_null (topo_load_model (model, "other", xml, NULL));
    ck_assert_int_eq (truncate (xml, 10), 0);
    ck_assert_ptr_null (topo_load_model (model, "fp", xml, NULL));
    unlink (model);
    unlink (xml);
    rmdir (dir);
}
