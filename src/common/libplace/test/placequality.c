/* placequality.c - how good a placement is (see placequality.h)
 *
 * Plain loops over libtopo's PU table, recounted from the definitions
 * for every task; nothing shared with place.c or placecheck.c.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placequality.h"

enum { S_OUT = 0, S_FREE, S_TAKEN };

struct qm {
    const topo_t *t;
    unsigned n, nd[TOPO_NLEVELS];
    unsigned char *st;       /* [n] S_* */
    unsigned *owner;         /* [n] task holding a taken PU */
    bool *busy;              /* [n] in the request's busy set */
    bool *in;                /* [n] in the current task */
    unsigned *csize, *cfree; /* [ncore] */
    unsigned *wcap;          /* [nnuma] PUs on wholly free cores */
    bool *wunused;           /* [nnuma] a wholly free core the task left */
    unsigned *mark;          /* [max domains] */
    unsigned gen;
    int maxkind;
    unsigned *kfree;  /* [nnuma * (maxkind + 2)] free PUs per kind */
    unsigned *kwfree; /* the same, on wholly free cores only */
};

static void qm_free (struct qm *m)
{
    free (m->st);
    free (m->owner);
    free (m->busy);
    free (m->in);
    free (m->csize);
    free (m->cfree);
    free (m->wcap);
    free (m->wunused);
    free (m->mark);
    free (m->kfree);
    free (m->kwfree);
}

static unsigned distinct_in (struct qm *m, enum topo_level l)
{
    unsigned cnt = 0;
    m->gen++;
    for (unsigned i = 0; i < m->n; i++) {
        unsigned id = topo_pu (m->t, i)->dom[l];
        if (m->in[i] && m->mark[id] != m->gen) {
            m->mark[id] = m->gen;
            cnt++;
        }
    }
    return cnt;
}

static bool core_wholly_free (const struct qm *m, unsigned core)
{
    return m->cfree[core] == m->csize[core];
}

static unsigned spread (const unsigned *v, const bool *use, unsigned n)
{
    unsigned lo = ~0u, hi = 0;
    for (unsigned i = 0; i < n; i++) {
        if (!use[i])
            continue;
        if (v[i] < lo)
            lo = v[i];
        if (v[i] > hi)
            hi = v[i];
    }
    return hi >= lo && lo != ~0u ? hi - lo : 0;
}

void placequality_free (struct placequality *q)
{
    if (q) {
        free (q->task);
        free (q->numa_tasks);
        free (q->pkg_tasks);
        memset (q, 0, sizeof (*q));
    }
}

int placequality (const topo_t *t,
                  const struct place_request *req,
                  const struct place_plan *plan,
                  struct placequality *q)
{
    struct qm m = {.t = t};
    unsigned maxd = 1;
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    bool *numa_eligible = NULL, *pkg_eligible = NULL;

    memset (q, 0, sizeof (*q));
    m.n = topo_npus (t);
    for (int l = 0; l < TOPO_NLEVELS; l++) {
        m.nd[l] = topo_ndomains (t, l);
        if (m.nd[l] > maxd)
            maxd = m.nd[l];
    }
    m.maxkind = -1;
    for (unsigned i = 0; i < m.n; i++)
        if (topo_pu (t, i)->kind > m.maxkind)
            m.maxkind = topo_pu (t, i)->kind;
    unsigned nk = (unsigned)(m.maxkind + 2); /* kind -1 is slot 0 */
    unsigned nnuma = m.nd[TOPO_NUMA], npkg = m.nd[TOPO_PKG];
    unsigned ncore = m.nd[TOPO_CORE];

    m.st = calloc (m.n + 1, sizeof (*m.st));
    m.owner = calloc (m.n + 1, sizeof (*m.owner));
    m.busy = calloc (m.n + 1, sizeof (*m.busy));
    m.in = calloc (m.n + 1, sizeof (*m.in));
    m.csize = calloc (ncore + 1, sizeof (*m.csize));
    m.cfree = calloc (ncore + 1, sizeof (*m.cfree));
    m.wcap = calloc (nnuma + 1, sizeof (*m.wcap));
    m.wunused = calloc (nnuma + 1, sizeof (*m.wunused));
    m.mark = calloc (maxd + 1, sizeof (*m.mark));
    m.kfree = calloc ((nnuma + 1) * nk, sizeof (*m.kfree));
    m.kwfree = calloc ((nnuma + 1) * nk, sizeof (*m.kwfree));
    numa_eligible = calloc (nnuma + 1, sizeof (*numa_eligible));
    pkg_eligible = calloc (npkg + 1, sizeof (*pkg_eligible));
    q->ntasks = plan->ntasks;
    q->nnuma = nnuma;
    q->npkg = npkg;
    q->task = calloc (plan->ntasks + 1, sizeof (*q->task));
    q->numa_tasks = calloc (nnuma + 1, sizeof (*q->numa_tasks));
    q->pkg_tasks = calloc (npkg + 1, sizeof (*q->pkg_tasks));
    if (!mems || !m.st || !m.owner || !m.busy || !m.in || !m.csize || !m.cfree
        || !m.wcap || !m.wunused || !m.mark || !m.kfree || !m.kwfree
        || !numa_eligible || !pkg_eligible || !q->task || !q->numa_tasks
        || !q->pkg_tasks)
        goto nomem;

    for (unsigned i = 0; i < m.n; i++) {
        const struct topo_pu *p = topo_pu (t, i);
        m.busy[i] = req->busy && hwloc_bitmap_isset (req->busy, p->os);
        bool allowed =
            !req->allowed || hwloc_bitmap_isset (req->allowed, p->os);
        m.st[i] = allowed && !m.busy[i] ? S_FREE : S_OUT;
        m.csize[p->dom[TOPO_CORE]]++;
        if (m.st[i] == S_FREE)
            pkg_eligible[p->dom[TOPO_PKG]] = true;
    }

    unsigned cpt = plan->cpus_per_task;
    bool none = plan->policy == PLACE_NONE;
    bool local_mems = plan->policy == PLACE_NUMA_LOCAL
                      || plan->policy == PLACE_CACHE_SHARED
                      || plan->policy == PLACE_NUMA_SPREAD;
    for (unsigned ti = 0; ti < plan->ntasks && !none; ti++) {
        const struct place_task *pt = &plan->tasks[ti];
        struct pq_task *r = &q->task[ti];

        /* the machine as the task found it */
        memset (m.cfree, 0, ncore * sizeof (*m.cfree));
        memset (m.wcap, 0, nnuma * sizeof (*m.wcap));
        memset (m.kfree, 0, nnuma * nk * sizeof (*m.kfree));
        memset (m.kwfree, 0, nnuma * nk * sizeof (*m.kwfree));
        for (unsigned i = 0; i < m.n; i++) {
            const struct topo_pu *p = topo_pu (t, i);
            m.in[i] = hwloc_bitmap_isset (pt->cpus, p->os);
            if (m.st[i] == S_FREE) {
                m.cfree[p->dom[TOPO_CORE]]++;
                m.kfree[p->dom[TOPO_NUMA] * nk + (unsigned)(p->kind + 1)]++;
            }
        }
        m.gen++;
        for (unsigned i = 0; i < m.n; i++) {
            const struct topo_pu *p = topo_pu (t, i);
            unsigned core = p->dom[TOPO_CORE];
            if (core_wholly_free (&m, core)) {
                m.kwfree[p->dom[TOPO_NUMA] * nk + (unsigned)(p->kind + 1)]++;
                if (m.mark[core] != m.gen) {
                    m.mark[core] = m.gen;
                    m.wcap[p->dom[TOPO_NUMA]] += m.csize[core];
                }
            }
        }
        if (ti == 0)
            for (unsigned d = 0; d < nnuma; d++)
                numa_eligible[d] = m.wcap[d] > 0;

        /* wholly free cores of each domain the task left unused */
        memset (m.wunused, 0, nnuma * sizeof (*m.wunused));
        bool *core_in = calloc (ncore + 1, sizeof (*core_in));
        if (!core_in)
            goto nomem;
        for (unsigned i = 0; i < m.n; i++)
            if (m.in[i])
                core_in[topo_pu (t, i)->dom[TOPO_CORE]] = true;
        /* a task of one CPU kind could only have used a wholly free
         * core of its kind (doc/policies.md, CPU kinds) */
        int tkind = -2;
        bool tmixed = false;
        for (unsigned i = 0; i < m.n; i++) {
            if (!m.in[i])
                continue;
            if (tkind == -2)
                tkind = topo_pu (t, i)->kind;
            else if (topo_pu (t, i)->kind != tkind)
                tmixed = true;
        }
        for (unsigned i = 0; i < m.n; i++) {
            const struct topo_pu *p = topo_pu (t, i);
            unsigned core = p->dom[TOPO_CORE];
            if (core_wholly_free (&m, core) && !core_in[core]
                && (tmixed || p->kind == tkind))
                m.wunused[p->dom[TOPO_NUMA]] = true;
        }

        /* sharing: each core of the task once */
        bool room_any = false;
        for (unsigned d = 0; d < nnuma; d++)
            if (m.wcap[d] >= cpt)
                room_any = true;
        bool *dom_in = calloc (nnuma + 1, sizeof (*dom_in));
        if (!dom_in) {
            free (core_in);
            goto nomem;
        }
        for (unsigned i = 0; i < m.n; i++)
            if (m.in[i])
                dom_in[topo_pu (t, i)->dom[TOPO_NUMA]] = true;
        bool room_elsewhere = false;
        for (unsigned d = 0; d < nnuma; d++)
            if (!dom_in[d] && m.wcap[d] >= cpt)
                room_elsewhere = true;
        /* per core: a PU of an earlier task, a busy PU, the task's domain */
        unsigned char *cflag = calloc (ncore + 1, 1);
        unsigned *cdom = calloc (ncore + 1, sizeof (*cdom));
        if (!cflag || !cdom) {
            free (cflag);
            free (cdom);
            free (core_in);
            free (dom_in);
            goto nomem;
        }
        for (unsigned i = 0; i < m.n; i++) {
            const struct topo_pu *p = topo_pu (t, i);
            unsigned c = p->dom[TOPO_CORE];
            if (m.in[i])
                cdom[c] = p->dom[TOPO_NUMA];
            if (m.st[i] == S_TAKEN)
                cflag[c] |= 1;
            if (m.busy[i])
                cflag[c] |= 2;
        }
        for (unsigned c = 0; c < ncore; c++) {
            if (!core_in[c] || core_wholly_free (&m, c))
                continue;
            r->shared_task += (cflag[c] & 1) != 0;
            r->shared_busy += (cflag[c] & 2) != 0;
            if (m.wunused[cdom[c]])
                r->avoidable_same_numa = true;
            if (room_any)
                r->avoidable_any_numa = true;
        }
        free (cflag);
        free (cdom);
        free (core_in);
        if (r->shared_task > 0 && room_elsewhere)
            q->numa_stacked++;
        q->avoidable_same_numa += r->avoidable_same_numa;
        q->avoidable_any_numa += r->avoidable_any_numa;

        /* domains */
        r->ncores = distinct_in (&m, TOPO_CORE);
        r->nl2 = distinct_in (&m, TOPO_L2);
        r->nl3 = distinct_in (&m, TOPO_L3);
        r->nnuma = distinct_in (&m, TOPO_NUMA);
        r->npkg = distinct_in (&m, TOPO_PKG);
        for (unsigned d = 0; d < nnuma; d++)
            q->numa_tasks[d] += dom_in[d];
        free (dom_in);
        m.gen++;
        for (unsigned i = 0; i < m.n; i++) {
            unsigned pk = topo_pu (t, i)->dom[TOPO_PKG];
            if (m.in[i] && m.mark[pk] != m.gen) {
                m.mark[pk] = m.gen;
                q->pkg_tasks[pk]++;
            }
        }

        /* memory */
        hwloc_bitmap_zero (mems);
        for (unsigned i = 0; i < m.n; i++)
            if (m.in[i])
                hwloc_bitmap_or (mems,
                                 mems,
                                 topo_numa_nodeset (t,
                                                    topo_pu (t, i)
                                                        ->dom[TOPO_NUMA]));
        r->mems_local = hwloc_bitmap_isequal (mems, pt->mems);
        if (local_mems && !r->mems_local)
            q->mems_wrong++;

        /* kinds */
        int k0 = -2;
        for (unsigned i = 0; i < m.n; i++) {
            if (!m.in[i])
                continue;
            int k = topo_pu (t, i)->kind;
            if (k0 == -2)
                k0 = k;
            else if (k != k0)
                r->mixed_kinds = true;
        }
        if (r->mixed_kinds) {
            bool kind_room = false, kind_wroom = false, wroom = false;
            q->mixed_kinds++;
            for (unsigned d = 0; d < nnuma; d++) {
                wroom |= m.wcap[d] >= cpt;
                for (unsigned k = 0; k < nk; k++) {
                    kind_room |= m.kfree[d * nk + k] >= cpt;
                    kind_wroom |= m.kwfree[d * nk + k] >= cpt;
                }
            }
            /* one kind had c free PUs in one domain */
            r->mixed_avoidable = kind_room;
            q->mixed_avoidable += r->mixed_avoidable;
            /* ... without sharing a core that mixing would have kept
             * whole (separation comes first: doc/policies.md) */
            r->mixed_needless = kind_wroom || (!wroom && kind_room);
            q->mixed_needless += r->mixed_needless;
        }

        /* the task's PUs are taken for the next one */
        for (unsigned i = 0; i < m.n; i++) {
            if (m.in[i]) {
                m.st[i] = S_TAKEN;
                m.owner[i] = ti;
            }
        }
    }

    /* cores holding PUs of two or more tasks, or of a task and a step */
    if (!none) {
        unsigned *first = malloc ((ncore + 1) * sizeof (*first));
        unsigned char *cf = calloc (ncore + 1, 1);
        if (!first || !cf) {
            free (first);
            free (cf);
            goto nomem;
        }
        for (unsigned c = 0; c < ncore; c++)
            first[c] = ~0u;
        for (unsigned i = 0; i < m.n; i++) {
            unsigned c = topo_pu (t, i)->dom[TOPO_CORE];
            if (m.busy[i])
                cf[c] |= 2;
            if (m.st[i] != S_TAKEN)
                continue;
            cf[c] |= 1;
            if (first[c] == ~0u)
                first[c] = m.owner[i];
            else if (m.owner[i] != first[c])
                cf[c] |= 4;
        }
        for (unsigned c = 0; c < ncore; c++) {
            q->shared_cores += (cf[c] & 4) != 0;
            q->shared_busy += (cf[c] & 3) == 3;
        }
        free (first);
        free (cf);
    }
    q->numa_imbalance = spread (q->numa_tasks, numa_eligible, nnuma);
    q->pkg_imbalance = spread (q->pkg_tasks, pkg_eligible, npkg);

    qm_free (&m);
    free (numa_eligible);
    free (pkg_eligible);
    hwloc_bitmap_free (mems);
    return 0;
nomem:
    qm_free (&m);
    free (numa_eligible);
    free (pkg_eligible);
    hwloc_bitmap_free (mems);
    placequality_free (q);
    errno = ENOMEM;
    return -1;
}

const char *placequality_string (const struct placequality *q,
                                 char *buf,
                                 size_t len)
{
    size_t used = 0;
    int rc = snprintf (buf,
                       len,
                       "shared-cores %u shared-busy %u "
                       "avoidable same-numa %u any-numa %u stacked %u "
                       "mems-wrong %u mixed %u/%u numa",
                       q->shared_cores,
                       q->shared_busy,
                       q->avoidable_same_numa,
                       q->avoidable_any_numa,
                       q->numa_stacked,
                       q->mems_wrong,
                       q->mixed_kinds,
                       q->mixed_avoidable);
    if (rc < 0 || (size_t)rc >= len)
        return buf;
    used = (size_t)rc;
    for (unsigned d = 0; d < q->nnuma && used < len; d++) {
        rc = snprintf (buf + used,
                       len - used,
                       "%s%u",
                       d ? "/" : " ",
                       q->numa_tasks[d]);
        if (rc < 0)
            return buf;
        used += (size_t)rc;
    }
    if (used < len)
        snprintf (buf + used,
                  len - used,
                  " (imbalance %u) packages "
                  "imbalance %u",
                  q->numa_imbalance,
                  q->pkg_imbalance);
    return buf;
}
