/* placecheck.c - invariants of a placement (see placecheck.h)
 *
 * Deliberately simple and slow: plain loops over the PU table, nothing
 * shared with place.c.  Where place.c uses a clever structure, this file
 * recounts from the definitions.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placecheck.h"

struct model {
    const topo_t *t;
    unsigned n;
    unsigned nd[TOPO_NLEVELS];
    const struct topo_pu **pu;
    bool *free;              /* [n] free before the current task */
    bool *taken;             /* [n] taken by an earlier task of the step */
    bool *in;                /* [n] in the current task */
    bool *khid;              /* [n] free, but hidden by the kind rule */
    unsigned *mark;          /* scratch, sized to the largest level */
    unsigned gen;            /* current mark */
    unsigned *dstart, *dpus; /* PUs of each NUMA domain (CSR) */
    unsigned *din;           /* [nnuma] PUs of the current task in each */
    unsigned *dtasks;        /* [nnuma] earlier tasks of the step in each */
    unsigned *ptasks;        /* [npkg] earlier tasks of the step in each */
    unsigned *uq; /* [nl2] rating of each free L2 unit (domain_info) */
    unsigned *csize, *cfree, *cnuma, *cin; /* per core, see core_counts() */
    unsigned *cl3;                         /* [ncore] L3 domain of the core */
    unsigned *cvis; /* [ncore] its free PUs the kind rule leaves */
    /* scratch of domain_info(), allocated once */
    unsigned *sv;         /* [ncore + nl3 + 1] */
    unsigned *stot, *sfr; /* [nl2 + 1] */
    bool *swf;            /* [nl2 + 1] */
    unsigned maxd;
};

struct dinfo {
    unsigned nfree, nl2, ncore;
    unsigned wcap;   /* PUs of wholly free cores */
    unsigned nwcore; /* wholly free cores */
    unsigned nwl2;   /* L2 units with a wholly free core */
    unsigned kmin;   /* fewest wholly free cores reaching C, or 0 */
    unsigned tier;   /* cleanest rating with C free L2 units */
    unsigned l3min;  /* fewest L3 holding C such units, or 0 */
    bool local;
};

static int pc_fail (char *msg, size_t len, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));

static int pc_fail (char *msg, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (msg, len, fmt, ap);
    va_end (ap);
    return -1;
}

static int cmp_desc (const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Fewest of the values (largest first) whose sum reaches need; 0 if the
 * sum of all does not. */
static unsigned greedy_count (unsigned *v, unsigned n, unsigned need)
{
    unsigned sum = 0;
    qsort (v, n, sizeof (*v), cmp_desc);
    for (unsigned i = 0; i < n; i++) {
        sum += v[i];
        if (sum >= need)
            return i + 1;
    }
    return 0;
}

/* Number of distinct domains at `level` among PUs i with sel[i] (and, if
 * numa >= 0, in that NUMA domain). */
static unsigned distinct (struct model *m,
                          const bool *sel,
                          int numa,
                          enum topo_level level)
{
    unsigned cnt = 0;
    unsigned lo = numa >= 0 ? m->dstart[numa] : 0;
    unsigned hi = numa >= 0 ? m->dstart[numa + 1] : m->n;
    m->gen++;
    for (unsigned j = lo; j < hi; j++) {
        unsigned i = numa >= 0 ? m->dpus[j] : j;
        if (!sel[i])
            continue;
        unsigned id = m->pu[i]->dom[level];
        if (m->mark[id] != m->gen) {
            m->mark[id] = m->gen;
            cnt++;
        }
    }
    return cnt;
}

/* Per core: PUs in the table, free ones, NUMA domain of its first PU. */
static void core_counts (struct model *m)
{
    unsigned ncore = m->nd[TOPO_CORE];
    memset (m->csize, 0, ncore * sizeof (*m->csize));
    memset (m->cfree, 0, ncore * sizeof (*m->cfree));
    memset (m->cvis, 0, ncore * sizeof (*m->cvis));
    for (unsigned i = m->n; i-- > 0;) {
        unsigned c = m->pu[i]->dom[TOPO_CORE];
        m->csize[c]++;
        m->cfree[c] += m->free[i] || m->khid[i];
        m->cvis[c] += m->free[i];
        m->cnuma[c] = m->pu[i]->dom[TOPO_NUMA];
        m->cl3[c] = m->pu[i]->dom[TOPO_L3];
    }
}

static void domain_info (struct model *m,
                         unsigned d,
                         unsigned cpt,
                         struct dinfo *di)
{
    unsigned ncore = m->nd[TOPO_CORE];
    unsigned *v = m->sv;
    unsigned nv = 0;

    memset (di, 0, sizeof (*di));
    di->local = topo_numa_is_local (m->t, d);
    for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++)
        di->nfree += m->free[m->dpus[j]];
    di->nl2 = distinct (m, m->free, (int)d, TOPO_L2);
    di->ncore = distinct (m, m->free, (int)d, TOPO_CORE);

    /* wholly free cores of d */
    for (unsigned c = 0; c < ncore; c++) {
        if (m->cnuma[c] != d || m->cfree[c] != m->csize[c] || m->cvis[c] == 0)
            continue;
        v[nv++] = m->cvis[c];
        di->wcap += m->cvis[c];
        di->nwcore++;
    }
    di->kmin = greedy_count (v, nv, cpt);

    /* free L2 units of d: rated 0 (every PU of the unit in d free), 1 (a
     * free PU on a wholly free core), 2 (other); per L3 */
    unsigned nl2 = m->nd[TOPO_L2], nl3 = m->nd[TOPO_L3];
    unsigned *tot = m->stot;
    unsigned *fr = m->sfr;
    bool *wf = m->swf;
    memset (tot, 0, nl2 * sizeof (*tot));
    memset (fr, 0, nl2 * sizeof (*fr));
    memset (wf, 0, nl2 * sizeof (*wf));
    unsigned nq[3] = {0, 0, 0};
    for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
        unsigned i = m->dpus[j];
        unsigned l2 = m->pu[i]->dom[TOPO_L2];
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        tot[l2]++;
        if (m->free[i]) {
            fr[l2]++;
            if (m->cfree[core] == m->csize[core])
                wf[l2] = true;
        }
    }
    for (unsigned l = 0; l < nl2; l++) {
        if (fr[l] > 0)
            nq[fr[l] == tot[l] ? 0 : wf[l] ? 1 : 2]++;
        if (wf[l])
            di->nwl2++;
    }
    di->tier = nq[0] >= cpt ? 0 : nq[0] + nq[1] >= cpt ? 1 : 2;
    memset (v, 0, nl3 * sizeof (*v));
    m->gen++;
    for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
        unsigned i = m->dpus[j];
        unsigned l = m->pu[i]->dom[TOPO_L2];
        if (fr[l] == 0 || m->mark[l] == m->gen)
            continue;
        m->mark[l] = m->gen;
        unsigned q = fr[l] == tot[l] ? 0 : wf[l] ? 1 : 2;
        if (q <= di->tier)
            v[m->pu[i]->dom[TOPO_L3]]++;
        m->uq[l] = q;
    }
    di->l3min = greedy_count (v, nl3, cpt);
}

/* ---- CPU kinds ---------------------------------------------------------- */

/* Number of kind slots (the highest hwloc cpukind index + 1). */
static unsigned kind_count (const struct model *m)
{
    int mx = -1;
    for (unsigned i = 0; i < m->n; i++)
        if (m->pu[i]->kind > mx)
            mx = m->pu[i]->kind;
    return (unsigned)(mx + 1);
}

/* PUs of kind k (-1: any) in domain d that are free, and of those the
 * ones on wholly free cores (every PU of the core free, any kind), and
 * their distinct L2 units and cores. */
struct kinfo {
    unsigned nfree, nwhole, wl2, wcore;
};

static void kind_info (struct model *m, int k, unsigned d, struct kinfo *ki)
{
    memset (ki, 0, sizeof (*ki));
    for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
        unsigned i = m->dpus[j];
        if (!m->free[i] || (k >= 0 && m->pu[i]->kind != k))
            continue;
        ki->nfree++;
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        if (m->cfree[core] == m->csize[core])
            ki->nwhole++;
    }
    /* distinct L2 units and cores holding such PUs on wholly free cores */
    for (int lv = 0; lv < 2; lv++) {
        enum topo_level l = lv == 0 ? TOPO_L2 : TOPO_CORE;
        unsigned cnt = 0;
        m->gen++;
        for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
            unsigned i = m->dpus[j];
            unsigned core = m->pu[i]->dom[TOPO_CORE];
            if (!m->free[i] || (k >= 0 && m->pu[i]->kind != k)
                || m->cfree[core] != m->csize[core])
                continue;
            unsigned id = m->pu[i]->dom[l];
            if (m->mark[id] != m->gen) {
                m->mark[id] = m->gen;
                cnt++;
            }
        }
        if (lv == 0)
            ki->wl2 = cnt;
        else
            ki->wcore = cnt;
    }
}

/* The kind a task of cpt PUs must take (-1: kinds may mix), recomputed
 * from doc/policies.md ("CPU kinds"); preference: the highest index.
 * numa-local: (1) a kind with cpt PUs on wholly free cores in a domain,
 * by locality, then the level of its best domain (local, fewest tasks of
 * the step, level), then preference; (2) none, but every kind together
 * has: mix; (3) a kind with cpt free PUs in a domain, by locality, most
 * PUs on wholly free cores, preference; (4) mix.
 * cache-shared: over every kind and then "any kind", the domains with
 * cpt free PUs, by locality, no partial core, then that order.
 * numa-spread: the first kind, in preference order, with cpt wholly free
 * cores (cores with a PU of the kind, every PU of the core free) over all
 * domains; else mix. */
static int expected_kind (struct model *m,
                          enum place_policy pol,
                          unsigned cpt,
                          unsigned nk)
{
    unsigned nnuma = m->nd[TOPO_NUMA];
    struct kinfo ki;
    unsigned bk[3] = {~0u, ~0u, ~0u};
    int best = -2;

    if (pol == PLACE_NUMA_SPREAD) {
        for (unsigned r = 0; r < nk; r++) {
            int k = (int)(nk - 1 - r);
            unsigned cores = 0;
            for (unsigned d = 0; d < nnuma; d++) {
                kind_info (m, k, d, &ki);
                cores += ki.wcore;
            }
            if (cores >= cpt)
                return k;
        }
        return -1;
    }
    if (pol == PLACE_CACHE_SHARED) {
        for (unsigned r = 0; r <= nk; r++) {
            int k = r == nk ? -1 : (int)(nk - 1 - r);
            for (unsigned d = 0; d < nnuma; d++) {
                kind_info (m, k, d, &ki);
                if (ki.nfree < cpt)
                    continue;
                unsigned key[3] = {!topo_numa_is_local (m->t, d),
                                   ki.nwhole < cpt,
                                   r};
                if ((key[0] < bk[0]
                     || (key[0] == bk[0]
                         && (key[1] < bk[1]
                             || (key[1] == bk[1] && key[2] < bk[2]))))) {
                    memcpy (bk, key, sizeof (key));
                    best = k;
                }
            }
        }
        return best < -1 ? -1 : best;
    }
    /* numa-local (1) */
    for (unsigned r = 0; r < nk; r++) {
        int k = (int)(nk - 1 - r);
        unsigned dk[3] = {~0u, ~0u, ~0u}; /* pseudo, tasks, level */
        for (unsigned d = 0; d < nnuma; d++) {
            kind_info (m, k, d, &ki);
            if (ki.nwhole < cpt)
                continue;
            unsigned lvl = ki.wl2 >= cpt ? 1 : ki.wcore >= cpt ? 2 : 3;
            unsigned key[3] = {!topo_numa_is_local (m->t, d),
                               m->dtasks[d],
                               lvl};
            if (key[0] < dk[0]
                || (key[0] == dk[0]
                    && (key[1] < dk[1]
                        || (key[1] == dk[1] && key[2] < dk[2]))))
                memcpy (dk, key, sizeof (key));
        }
        if (dk[0] == ~0u)
            continue;
        unsigned key[3] = {dk[0], dk[2], r};
        if (key[0] < bk[0]
            || (key[0] == bk[0]
                && (key[1] < bk[1] || (key[1] == bk[1] && key[2] < bk[2])))) {
            memcpy (bk, key, sizeof (key));
            best = k;
        }
    }
    if (best >= 0)
        return best;
    /* (2) */
    for (unsigned d = 0; d < nnuma; d++) {
        kind_info (m, -1, d, &ki);
        if (ki.nwhole >= cpt)
            return -1;
    }
    /* (3) */
    for (unsigned r = 0; r < nk; r++) {
        int k = (int)(nk - 1 - r);
        for (unsigned d = 0; d < nnuma; d++) {
            kind_info (m, k, d, &ki);
            if (ki.nfree < cpt)
                continue;
            unsigned key[3] = {!topo_numa_is_local (m->t, d),
                               ~0u - ki.nwhole,
                               r};
            if (key[0] < bk[0]
                || (key[0] == bk[0]
                    && (key[1] < bk[1]
                        || (key[1] == bk[1] && key[2] < bk[2])))) {
                memcpy (bk, key, sizeof (key));
                best = k;
            }
        }
    }
    return best < -1 ? -1 : best;
}

static bool numa_has (struct model *m, const bool *sel, unsigned d)
{
    (void)sel;
    return m->din[d] > 0;
}

static unsigned count_in (struct model *m, const bool *sel, unsigned d)
{
    (void)sel;
    return m->din[d];
}

#define FAIL(...) return pc_fail (msg, len, __VA_ARGS__)
#define NIL_CORE UINT32_MAX

/* Package of NUMA domain d: that of its first PU. */
static unsigned numa_pkg (struct model *m, unsigned d)
{
    return m->pu[m->dpus[m->dstart[d]]]->dom[TOPO_PKG];
}

/* numa-local's choice of k = m->din[d] PUs inside domain d (numa-spread
 * and numa-local across domains pick each domain's share so): k distinct
 * L2 units of the cleanest rating that has k of them, in the fewest L3;
 * else k distinct cores, only wholly free ones if the domain has k of
 * them, over as many L2 units as possible; else every free core. */
static int check_share (struct model *m,
                        unsigned task,
                        unsigned d,
                        const struct dinfo *dd,
                        char *msg,
                        size_t len)
{
    unsigned k = m->din[d];
    unsigned l2 = distinct (m, m->in, (int)d, TOPO_L2);
    unsigned wl2 = k <= dd->nl2                        ? k
                   : k <= dd->ncore && dd->nwcore >= k ? dd->nwl2
                                                       : dd->nl2;
    struct dinfo x;

    if (l2 != wl2)
        FAIL ("task %u: %u CPUs on %u L2 of domain %u (expected %u)",
              task,
              k,
              l2,
              d,
              wl2);

    if (k > dd->nl2) {
        if (k > dd->ncore || dd->nwcore < k)
            return 0;
        for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
            unsigned i = m->dpus[j];
            unsigned core = m->pu[i]->dom[TOPO_CORE];
            if (m->in[i] && m->cfree[core] != m->csize[core])
                FAIL (
                    "task %u: CPU %u of domain %u beside a busy sibling "
                    "while its %u wholly free cores were enough for %u",
                    task,
                    m->pu[i]->os,
                    d,
                    dd->nwcore,
                    k);
        }
        return 0;
    }
    domain_info (m, d, k, &x); /* ratings of d's units into m->uq */
    for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
        unsigned i = m->dpus[j];
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        if (!m->in[i])
            continue;
        if (m->uq[m->pu[i]->dom[TOPO_L2]] > x.tier)
            FAIL (
                "task %u: CPU %u of domain %u in an L2 unit rated %u, "
                "rating %u suffices for %u",
                task,
                m->pu[i]->os,
                d,
                m->uq[m->pu[i]->dom[TOPO_L2]],
                x.tier,
                k);
        if (x.tier <= 1 && m->cfree[core] != m->csize[core])
            FAIL ("task %u: CPU %u of domain %u beside a busy sibling",
                  task,
                  m->pu[i]->os,
                  d);
    }
    unsigned nl3 = distinct (m, m->in, (int)d, TOPO_L3);
    if (nl3 != x.l3min)
        FAIL ("task %u: %u CPUs of domain %u in %u L3, %u would do",
              task,
              k,
              d,
              nl3,
              x.l3min);
    return 0;
}

/* numa-spread's share of domain d (doc/policies.md, numa-spread 5): no PU
 * on a core that is not wholly free (an earlier task's or another step's
 * PU on it) while a wholly free core of d gets none; the share is
 * numa-local's choice (check_share) or, where that choice would break the
 * rule, numa-local's choice on the wholly free cores alone (they hold the
 * share) or one PU on each of them and the rest elsewhere. */
static int check_share_spread (struct model *m,
                               unsigned task,
                               unsigned d,
                               const struct dinfo *dd,
                               char *msg,
                               size_t len)
{
    unsigned k = m->din[d];
    unsigned ncore = m->nd[TOPO_CORE];
    bool shared = false;
    unsigned at = 0, unused = NIL_CORE;

    m->gen++;
    for (unsigned j = m->dstart[d]; j < m->dstart[d + 1]; j++) {
        unsigned i = m->dpus[j];
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        if (!m->in[i])
            continue;
        m->mark[core] = m->gen;
        if (m->cfree[core] != m->csize[core] && !shared) {
            shared = true;
            at = m->pu[i]->os;
        }
    }
    for (unsigned c = 0; c < ncore && unused == NIL_CORE; c++)
        if (m->cnuma[c] == d && m->cfree[c] == m->csize[c] && m->cvis[c] > 0
            && m->mark[c] != m->gen)
            unused = c;
    if (shared && unused != NIL_CORE)
        FAIL (
            "task %u: CPU %u of domain %u shares a core with another task "
            "or step while wholly free core %u of the domain stays unused",
            task,
            at,
            d,
            unused);
    if (check_share (m, task, d, dd, msg, len) == 0 || shared)
        return 0;
    /* on the wholly free cores alone: the same rules in that view */
    bool *keep = malloc ((m->n + 1) * sizeof (*keep));
    if (!keep)
        FAIL ("out of memory");
    memcpy (keep, m->free, m->n * sizeof (*keep));
    for (unsigned i = 0; i < m->n; i++) {
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        if (m->cfree[core] != m->csize[core])
            m->free[i] = false;
    }
    core_counts (m);
    struct dinfo x;
    domain_info (m, d, k, &x);
    int rc = check_share (m, task, d, &x, msg, len);
    memcpy (m->free, keep, m->n * sizeof (*keep));
    free (keep);
    core_counts (m);
    return rc;
}

/* numa-local.  cand (NULL: every domain) limits the domains the levels
 * choose among when a domain has room: those with the fewest tasks of the
 * step (check_numa_local_step). */
static int check_numa_local (struct model *m,
                             unsigned task,
                             unsigned cpt,
                             unsigned fb,
                             struct dinfo *di,
                             const bool *cand,
                             char *msg,
                             size_t len)
{
    unsigned nnuma = m->nd[TOPO_NUMA];
    unsigned nused = distinct (m, m->in, -1, TOPO_NUMA);
    unsigned ncores = distinct (m, m->in, -1, TOPO_CORE);
    unsigned nl2 = distinct (m, m->in, -1, TOPO_L2);
    unsigned level = 4;
    bool pseudo_used = false;

    for (unsigned d = 0; d < nnuma; d++) {
        unsigned l = di[d].nl2 >= cpt     ? 1
                     : di[d].ncore >= cpt ? 2
                     : di[d].nfree >= cpt ? 3
                                          : 4;
        if (l < level && (!cand || cand[d]))
            level = l;
        if (numa_has (m, m->in, d) && !di[d].local)
            pseudo_used = true;
    }
    if (!!(fb & PLACE_FB_NO_LOCAL_NUMA) != pseudo_used)
        FAIL ("task %u: no-local-numa is %s but a pseudo domain is %s",
              task,
              fb & PLACE_FB_NO_LOCAL_NUMA ? "set" : "unset",
              pseudo_used ? "used" : "unused");
    fb &= ~PLACE_FB_NO_LOCAL_NUMA;
    if (level == 4) {
        unsigned *v = calloc (nnuma + 1, sizeof (*v));
        unsigned sumcores = 0;
        for (unsigned d = 0; d < nnuma; d++) {
            v[d] = di[d].nfree;
            if (numa_has (m, m->in, d))
                sumcores += di[d].ncore;
        }
        unsigned need = greedy_count (v, nnuma, cpt);
        unsigned nloc = 0, suml2 = 0;
        for (unsigned d = 0; d < nnuma; d++) {
            if (di[d].local)
                v[nloc++] = di[d].nfree;
            if (numa_has (m, m->in, d))
                suml2 += di[d].nl2;
        }
        unsigned need_local = greedy_count (v, nloc, cpt);
        free (v);
        if (nused != need)
            FAIL (
                "task %u: no domain has room; %u domains used, the fewest "
                "is %u",
                task,
                nused,
                need);
        if (!(fb & PLACE_FB_MULTI_NUMA))
            FAIL ("task %u: spans %u domains without multi-numa", task, nused);
        if (pseudo_used && need_local == need)
            FAIL (
                "task %u: a pseudo domain is used while %u local ones "
                "would do",
                task,
                need);
        unsigned want = sumcores < cpt ? sumcores : cpt;
        if (ncores != want)
            FAIL ("task %u: %u distinct cores over its domains, expected %u",
                  task,
                  ncores,
                  want);
        /* the shares: up to the free L2 units of each domain first, then
         * up to its free cores; each share picked as numa-local does */
        for (unsigned d = 0; d < nnuma; d++) {
            if (!numa_has (m, m->in, d))
                continue;
            unsigned k = m->din[d];
            if (suml2 >= cpt ? k > di[d].nl2 : k < di[d].nl2)
                FAIL (
                    "task %u: %u CPUs in domain %u with %u free L2 units "
                    "(%u over its domains for %u CPUs)",
                    task,
                    k,
                    d,
                    di[d].nl2,
                    suml2,
                    cpt);
            if (sumcores >= cpt ? k > di[d].ncore : k < di[d].ncore)
                FAIL (
                    "task %u: %u CPUs in domain %u with %u free cores "
                    "(%u over its domains for %u CPUs)",
                    task,
                    k,
                    d,
                    di[d].ncore,
                    sumcores,
                    cpt);
            if (check_share (m, task, d, &di[d], msg, len) < 0)
                return -1;
        }
        if (!!(fb & PLACE_FB_SHARED_CORE) != (ncores < cpt)
            || !!(fb & PLACE_FB_SHARED_L2) != (nl2 < cpt))
            FAIL (
                "task %u: fallback 0x%x does not match %u cores / %u L2 "
                "for %u CPUs",
                task,
                fb,
                ncores,
                nl2,
                cpt);
        return 0;
    }
    if (nused != 1)
        FAIL (
            "task %u: a domain has room (level %u) but %u domains are "
            "used",
            task,
            level,
            nused);
    unsigned d = 0;
    while (!numa_has (m, m->in, d))
        d++;
    /* eligible at this level, and local before pseudo */
    bool any_local = false;
    unsigned best_l3 = ~0u, best_l2 = 0, best_core = 0, best_tier = 3;
    for (unsigned e = 0; e < nnuma; e++) {
        bool ok = level == 1   ? di[e].nl2 >= cpt
                  : level == 2 ? di[e].ncore >= cpt
                               : di[e].nfree >= cpt;
        if (ok && di[e].local && (!cand || cand[e]))
            any_local = true;
    }
    /* level 2: wholly free cores only where some domain has enough */
    bool whole = false;
    for (unsigned e = 0; e < nnuma; e++)
        if (level == 2 && di[e].ncore >= cpt && di[e].local == any_local
            && di[e].nwcore >= cpt && (!cand || cand[e]))
            whole = true;
    for (unsigned e = 0; e < nnuma; e++) {
        bool ok = level == 1   ? di[e].nl2 >= cpt
                  : level == 2 ? di[e].ncore >= cpt
                               : di[e].nfree >= cpt;
        if (!ok || di[e].local != any_local || (cand && !cand[e]))
            continue;
        if (level == 2 && whole && di[e].nwcore < cpt)
            continue;
        if (level == 2 && (whole ? di[e].nwl2 : di[e].nl2) > best_l2)
            best_l2 = whole ? di[e].nwl2 : di[e].nl2;
        if (level == 1 && di[e].tier < best_tier) {
            best_tier = di[e].tier;
            best_l3 = ~0u;
        }
        if (level == 1 && di[e].tier == best_tier && di[e].l3min < best_l3)
            best_l3 = di[e].l3min;
        if (di[e].ncore > best_core)
            best_core = di[e].ncore;
    }
    if (cand && !cand[d])
        FAIL (
            "task %u: domain %u holds %u tasks of the step, another with "
            "room fewer",
            task,
            d,
            m->dtasks[d]);
    if (di[d].local != any_local)
        FAIL (
            "task %u: pseudo domain %u chosen while a local one was "
            "eligible",
            task,
            d);
    if (level == 1) {
        if (di[d].nl2 < cpt)
            FAIL (
                "task %u: domain %u has %u free L2 < %u while another "
                "had enough",
                task,
                d,
                di[d].nl2,
                cpt);
        if (nl2 != cpt)
            FAIL ("task %u: %u distinct L2 for %u CPUs", task, nl2, cpt);
        if (di[d].tier != best_tier)
            FAIL (
                "task %u: domain %u needs L2 units of rating %u, another "
                "has enough of rating %u",
                task,
                d,
                di[d].tier,
                best_tier);
        unsigned nl3 = distinct (m, m->in, -1, TOPO_L3);
        if (nl3 != best_l3)
            FAIL ("task %u: %u L3 used, %u would do", task, nl3, best_l3);
        /* domain_info (d) ran last for the highest d: recompute ratings */
        domain_info (m, d, cpt, &di[d]);
        for (unsigned i = 0; i < m->n; i++) {
            if (!m->in[i])
                continue;
            unsigned core = m->pu[i]->dom[TOPO_CORE];
            if (m->uq[m->pu[i]->dom[TOPO_L2]] > di[d].tier)
                FAIL (
                    "task %u: CPU %u in an L2 unit rated %u, rating %u "
                    "suffices",
                    task,
                    m->pu[i]->os,
                    m->uq[m->pu[i]->dom[TOPO_L2]],
                    di[d].tier);
            if (di[d].tier <= 1 && m->cfree[core] != m->csize[core])
                FAIL ("task %u: CPU %u beside a busy sibling",
                      task,
                      m->pu[i]->os);
        }
        if (fb != 0)
            FAIL ("task %u: fallback 0x%x on an ideal placement", task, fb);
    } else if (level == 2) {
        if (ncores != cpt)
            FAIL ("task %u: %u distinct cores for %u CPUs", task, ncores, cpt);
        unsigned dl2 = whole ? di[d].nwl2 : di[d].nl2;
        if (whole && di[d].nwcore < cpt)
            FAIL (
                "task %u: domain %u has %u wholly free cores < %u, another "
                "has enough",
                task,
                d,
                di[d].nwcore,
                cpt);
        if (nl2 != dl2 || nl2 != best_l2)
            FAIL ("task %u: %u distinct L2 (domain has %u, best %u)",
                  task,
                  nl2,
                  dl2,
                  best_l2);
        for (unsigned i = 0; whole && i < m->n; i++) {
            unsigned core = m->pu[i]->dom[TOPO_CORE];
            if (m->in[i] && m->cfree[core] != m->csize[core])
                FAIL (
                    "task %u: CPU %u beside a busy sibling while %u "
                    "wholly free cores were enough",
                    task,
                    m->pu[i]->os,
                    di[d].nwcore);
        }
        if (fb != PLACE_FB_SHARED_L2)
            FAIL ("task %u: fallback 0x%x, expected shared-l2", task, fb);
    } else {
        if (ncores != di[d].ncore || ncores != best_core)
            FAIL ("task %u: %u distinct cores (domain has %u, best %u)",
                  task,
                  ncores,
                  di[d].ncore,
                  best_core);
        if (fb != (PLACE_FB_SHARED_L2 | PLACE_FB_SHARED_CORE))
            FAIL ("task %u: fallback 0x%x, expected shared-l2,shared-core",
                  task,
                  fb);
    }
    return 0;
}

/* Tasks of cpt PUs the wholly free cores of domain d hold, its `skip`
 * largest wholly free cores left out: the largest cores first, each task
 * on the fewest cores. */
static unsigned whole_fit (struct model *m,
                           unsigned d,
                           unsigned skip,
                           unsigned cpt)
{
    unsigned ncore = m->nd[TOPO_CORE];
    unsigned *v = calloc (ncore + 1, sizeof (*v));
    unsigned nv = 0, tasks = 0, sum = 0;
    for (unsigned c = 0; c < ncore; c++)
        if (m->cnuma[c] == d && m->csize[c] > 0 && m->cfree[c] == m->csize[c])
            v[nv++] = m->csize[c];
    qsort (v, nv, sizeof (*v), cmp_desc);
    for (unsigned i = skip; i < nv; i++) {
        sum += v[i];
        if (sum >= cpt) {
            tasks++;
            sum = 0;
        }
    }
    free (v);
    return tasks;
}

/* Max - min tasks per domain after `rest` more tasks, one at a time, each
 * to the domain with the fewest tasks among those with room left (the
 * lowest index on ties); only domains with a task or room count. */
static unsigned sim_imbalance (const unsigned *cnt0,
                               const unsigned *fit0,
                               unsigned n,
                               unsigned rest)
{
    unsigned *cnt = calloc (n + 1, sizeof (*cnt));
    unsigned *fit = calloc (n + 1, sizeof (*fit));
    memcpy (cnt, cnt0, n * sizeof (*cnt));
    memcpy (fit, fit0, n * sizeof (*fit));
    for (unsigned r = 0; r < rest; r++) {
        int best = -1;
        for (unsigned e = 0; e < n; e++)
            if (fit[e] > 0 && (best < 0 || cnt[e] < cnt[best]))
                best = (int)e;
        if (best < 0)
            break;
        cnt[best]++;
        fit[best]--;
    }
    unsigned lo = ~0u, hi = 0;
    for (unsigned e = 0; e < n; e++) {
        if (cnt0[e] == 0 && fit0[e] == 0)
            continue;
        if (cnt[e] < lo)
            lo = cnt[e];
        if (cnt[e] > hi)
            hi = cnt[e];
    }
    free (cnt);
    free (fit);
    return lo == ~0u ? 0 : hi - lo;
}

/* numa-local for one task of a step (doc/policies.md, "numa-local"):
 *  - some domain has cpt PUs on wholly free cores: the task uses only
 *    wholly free cores, chosen by the levels on those cores alone; it
 *    spreads (one core per CPU) only if the wholly free cores left hold
 *    the rest of the step, else it takes the fewest wholly free cores;
 *  - else, in the domain with cpt free PUs whose wholly free cores hold
 *    the most PUs: all of those, then the rest;
 *  - else the multi-domain rules. */
static int check_numa_local_step (struct model *m,
                                  unsigned task,
                                  unsigned cpt,
                                  unsigned ntasks,
                                  unsigned fb,
                                  struct dinfo *di,
                                  char *msg,
                                  size_t len)
{
    unsigned nnuma = m->nd[TOPO_NUMA];
    bool clean_room = false, room = false, room_local = false;

    for (unsigned d = 0; d < nnuma; d++) {
        if (di[d].wcap >= cpt)
            clean_room = true;
        if (di[d].nfree >= cpt) {
            room = true;
            room_local |= di[d].local;
        }
    }
    if (!room)
        return check_numa_local (m, task, cpt, fb, di, NULL, msg, len);
    unsigned nused = distinct (m, m->in, -1, TOPO_NUMA);
    unsigned ncores = distinct (m, m->in, -1, TOPO_CORE);
    unsigned nl2 = distinct (m, m->in, -1, TOPO_L2);
    if (nused != 1)
        FAIL ("task %u: a domain has room but %u domains are used",
              task,
              nused);
    unsigned d = 0;
    while (!numa_has (m, m->in, d))
        d++;
    if (!!(fb & PLACE_FB_NO_LOCAL_NUMA) != !di[d].local)
        FAIL ("task %u: no-local-numa wrong (fallback 0x%x)", task, fb);

    if (!clean_room) {
        /* the domain whose wholly free cores hold the most PUs */
        for (unsigned e = 0; e < nnuma; e++) {
            if (di[e].nfree < cpt || di[e].local != room_local)
                continue;
            if (di[e].wcap > di[d].wcap)
                FAIL (
                    "task %u: domain %u has %u PUs on wholly free cores, "
                    "domain %u %u",
                    task,
                    d,
                    di[d].wcap,
                    e,
                    di[e].wcap);
        }
        if (di[d].local != room_local)
            FAIL ("task %u: pseudo domain %u chosen over a local one",
                  task,
                  d);
        unsigned onwhole = 0;
        for (unsigned i = 0; i < m->n; i++) {
            unsigned core = m->pu[i]->dom[TOPO_CORE];
            onwhole += m->in[i] && m->cfree[core] == m->csize[core];
        }
        if (onwhole != di[d].wcap)
            FAIL (
                "task %u: %u of its CPUs on wholly free cores, domain %u "
                "has %u",
                task,
                onwhole,
                d,
                di[d].wcap);
        fb &= ~(unsigned)PLACE_FB_NO_LOCAL_NUMA;
        unsigned want = (ncores < cpt ? PLACE_FB_SHARED_CORE : 0)
                        | (nl2 < cpt ? PLACE_FB_SHARED_L2 : 0);
        if (fb != want)
            FAIL ("task %u: fallback 0x%x, expected 0x%x", task, fb, want);
        return 0;
    }

    /* every CPU on a wholly free core */
    for (unsigned i = 0; i < m->n; i++) {
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        if (m->in[i] && m->cfree[core] != m->csize[core])
            FAIL (
                "task %u: CPU %u on a core that is not wholly free while "
                "a domain has %u CPUs on wholly free cores",
                task,
                m->pu[i]->os,
                cpt);
    }
    /* the rules again, on wholly free cores alone */
    bool *saved = malloc ((m->n + 1) * sizeof (*saved));
    memcpy (saved, m->free, m->n * sizeof (*saved));
    for (unsigned i = 0; i < m->n; i++) {
        unsigned core = m->pu[i]->dom[TOPO_CORE];
        if (m->cfree[core] != m->csize[core])
            m->free[i] = false;
    }
    core_counts (m);
    for (unsigned e = 0; e < nnuma; e++)
        domain_info (m, e, cpt, &di[e]);
    /* the domains the levels choose among: room, local ones if any has
     * room, and of those the fewest tasks of the step (NUMA balance) */
    bool *cand = calloc (nnuma + 1, sizeof (*cand));
    unsigned tmin = ~0u;
    bool loc = false;
    for (unsigned e = 0; e < nnuma; e++)
        loc |= di[e].nfree >= cpt && di[e].local;
    for (unsigned e = 0; e < nnuma; e++)
        if (di[e].nfree >= cpt && di[e].local == loc && m->dtasks[e] < tmin)
            tmin = m->dtasks[e];
    for (unsigned e = 0; e < nnuma; e++)
        cand[e] =
            di[e].nfree >= cpt && di[e].local == loc && m->dtasks[e] == tmin;
    /* the step budget: the wholly free cores left hold the rest, and the
     * rest ends no less balanced than if this task were packed */
    unsigned k = di[d].ncore < cpt ? di[d].ncore : cpt;
    unsigned rest = ntasks - task - 1, fit = 0;
    unsigned *cnt = calloc (nnuma + 1, sizeof (*cnt));
    unsigned *fv = calloc (nnuma + 1, sizeof (*fv));
    for (unsigned e = 0; e < nnuma; e++) {
        cnt[e] = m->dtasks[e] + (e == d);
        fv[e] = whole_fit (m, e, e == d ? k : 0, cpt);
        fit += fv[e];
    }
    bool spread = rest == 0 || fit >= rest;
    if (spread && rest > 0 && di[d].kmin > 0 && di[d].kmin < k) {
        unsigned imb = sim_imbalance (cnt, fv, nnuma, rest);
        fv[d] = whole_fit (m, d, di[d].kmin, cpt);
        spread = imb <= sim_imbalance (cnt, fv, nnuma, rest);
    }
    free (cnt);
    free (fv);
    int r = 0;
    if (spread)
        r = check_numa_local (m, task, cpt, fb, di, cand, msg, len);
    else {
        /* packed: the fewest wholly free cores, each filled but one */
        unsigned level = 4;
        bool any_local = false;
        for (unsigned e = 0; e < nnuma; e++) {
            unsigned l = di[e].nl2 >= cpt     ? 1
                         : di[e].ncore >= cpt ? 2
                         : di[e].nfree >= cpt ? 3
                                              : 4;
            if (l < level && cand[e])
                level = l;
        }
        for (unsigned e = 0; e < nnuma; e++) {
            bool ok = level == 1   ? di[e].nl2 >= cpt
                      : level == 2 ? di[e].ncore >= cpt
                                   : di[e].nfree >= cpt;
            any_local |= ok && di[e].local && cand[e];
        }
        bool ok = level == 1   ? di[d].nl2 >= cpt
                  : level == 2 ? di[d].ncore >= cpt
                               : di[d].nfree >= cpt;
        unsigned unfilled = 0;
        memset (m->cin, 0, m->nd[TOPO_CORE] * sizeof (*m->cin));
        for (unsigned i = 0; i < m->n; i++)
            m->cin[m->pu[i]->dom[TOPO_CORE]] += m->in[i];
        for (unsigned c = 0; c < m->nd[TOPO_CORE]; c++)
            unfilled += m->cin[c] > 0 && m->cin[c] < m->cvis[c];
        unsigned want = (ncores < cpt ? PLACE_FB_SHARED_CORE : 0)
                        | (nl2 < cpt ? PLACE_FB_SHARED_L2 : 0)
                        | (di[d].local ? 0 : PLACE_FB_NO_LOCAL_NUMA);
        if (!ok || di[d].local != any_local || !cand[d])
            r = pc_fail (msg,
                         len,
                         "task %u: domain %u not eligible at "
                         "level %u",
                         task,
                         d,
                         level);
        else if (ncores != di[d].kmin || unfilled > 1)
            r = pc_fail (msg,
                         len,
                         "task %u: packed on %u cores (%u left "
                         "partly used), the fewest wholly free cores "
                         "reaching %u is %u",
                         task,
                         ncores,
                         unfilled,
                         cpt,
                         di[d].kmin);
        else if (fb != want)
            r = pc_fail (msg,
                         len,
                         "task %u: packed, fallback 0x%x, "
                         "expected 0x%x",
                         task,
                         fb,
                         want);
    }
    memcpy (m->free, saved, m->n * sizeof (*saved));
    free (saved);
    free (cand);
    core_counts (m);
    return r;
}

static int check_numa_spread (struct model *m,
                              unsigned task,
                              unsigned cpt,
                              unsigned fb,
                              struct dinfo *di,
                              char *msg,
                              size_t len)
{
    unsigned nnuma = m->nd[TOPO_NUMA];
    unsigned ncand = 0, nused = 0, sumcores = 0;
    bool pseudo_used = false, local_unused = false;
    unsigned lo = ~0u, hi = 0;

    for (unsigned d = 0; d < nnuma; d++) {
        if (di[d].nfree == 0)
            continue;
        ncand++;
        if (numa_has (m, m->in, d)) {
            nused++;
            sumcores += di[d].ncore;
            if (!di[d].local)
                pseudo_used = true;
        } else if (di[d].local)
            local_unused = true;
    }
    unsigned k = cpt < ncand ? cpt : ncand;
    if (nused != k)
        FAIL (
            "task %u: %u domains used, expected min(%u CPUs, %u with "
            "free PUs)",
            task,
            nused,
            cpt,
            ncand);
    if (pseudo_used && local_unused)
        FAIL ("task %u: a pseudo domain is used while a local one is not",
              task);
    bool by_pu = sumcores < cpt;
    for (unsigned a = 0; a < nnuma; a++) {
        if (!numa_has (m, m->in, a))
            continue;
        unsigned ca = count_in (m, m->in, a);
        unsigned cap = by_pu ? di[a].nfree : di[a].ncore;
        if (ca > cap)
            FAIL ("task %u: %u CPUs in domain %u with room for %u",
                  task,
                  ca,
                  a,
                  cap);
        if (ca < lo)
            lo = ca;
        if (ca > hi)
            hi = ca;
        unsigned cores = distinct (m, m->in, (int)a, TOPO_CORE);
        if (cores != (ca < di[a].ncore ? ca : di[a].ncore))
            FAIL ("task %u: %u CPUs on %u cores of domain %u (%u free)",
                  task,
                  ca,
                  cores,
                  a,
                  di[a].ncore);
        if (check_share_spread (m, task, a, &di[a], msg, len) < 0)
            return -1;
        for (unsigned b = 0; b < nnuma; b++) {
            if (!numa_has (m, m->in, b))
                continue;
            unsigned cb = count_in (m, m->in, b);
            unsigned capb = by_pu ? di[b].nfree : di[b].ncore;
            if (ca > cb + 1 && cb != capb)
                FAIL ("task %u: domain %u has %u, domain %u only %u of %u",
                      task,
                      a,
                      ca,
                      b,
                      cb,
                      capb);
        }
    }
    /* the domains: inside a package the one with the fewest tasks of
     * the step first, then the emptiest (most free cores, then most free
     * PUs, then index), and the packages in turn: so the used domains
     * are a prefix of each package's order, and two packages differ by
     * at most one used domain unless one is used up.  Pseudo domains
     * come after every local one (checked above). */
    for (unsigned a = 0; a < nnuma; a++) {
        if (!numa_has (m, m->in, a))
            continue;
        for (unsigned b = 0; b < nnuma; b++) {
            if (numa_has (m, m->in, b) || di[b].nfree == 0
                || di[b].local != di[a].local
                || numa_pkg (m, b) != numa_pkg (m, a))
                continue;
            bool better =
                m->dtasks[b] != m->dtasks[a] ? m->dtasks[b] < m->dtasks[a]
                : di[b].ncore != di[a].ncore ? di[b].ncore > di[a].ncore
                : di[b].nfree != di[a].nfree ? di[b].nfree > di[a].nfree
                                             : b < a;
            if (better)
                FAIL (
                    "task %u: domain %u (%u tasks, %u free cores, %u PUs) "
                    "used, domain %u of the same package (%u, %u, %u) not",
                    task,
                    a,
                    m->dtasks[a],
                    di[a].ncore,
                    di[a].nfree,
                    b,
                    m->dtasks[b],
                    di[b].ncore,
                    di[b].nfree);
        }
    }
    unsigned npkg = m->nd[TOPO_PKG];
    unsigned *pu_used = calloc (2 * npkg + 1, sizeof (*pu_used));
    unsigned *pu_cand = pu_used + npkg;
    for (int loc = 0; loc < 2; loc++) {
        memset (pu_used, 0, 2 * npkg * sizeof (*pu_used));
        for (unsigned a = 0; a < nnuma; a++) {
            if (di[a].nfree == 0 || di[a].local != (loc == 1))
                continue;
            pu_cand[numa_pkg (m, a)]++;
            pu_used[numa_pkg (m, a)] += numa_has (m, m->in, a);
        }
        for (unsigned p = 0; p < npkg; p++) {
            for (unsigned q = 0; q < npkg; q++) {
                if (pu_used[p] > pu_used[q] + 1 && pu_used[q] < pu_cand[q]) {
                    unsigned up = pu_used[p], uq = pu_used[q];
                    free (pu_used);
                    FAIL (
                        "task %u: %u domains used in package %u, %u in "
                        "package %u which has more",
                        task,
                        up,
                        p,
                        uq,
                        q);
                }
            }
        }
        /* the last, partial round: package p got its domain of round
         * pu_used[p] - 1 while package q (with a domain left) got none of
         * round pu_used[q] == pu_used[p] - 1.  Then p comes first in that
         * round: fewer tasks of the step in the package, then the domain
         * with more free cores, more free PUs, then the package index.
         * The rotation of issue 10: -n 2 -c 1 gives one task per package. */
        for (unsigned p = 0; p < npkg; p++) {
            for (unsigned q = 0; q < npkg; q++) {
                if (p == q || pu_used[p] != pu_used[q] + 1
                    || pu_used[q] >= pu_cand[q])
                    continue;
                /* p's domain of that round: its used domain ranked last;
                 * q's: its unused domain ranked first */
                int dp = -1, dq = -1;
                for (unsigned a = 0; a < nnuma; a++) {
                    if (di[a].nfree == 0 || di[a].local != (loc == 1))
                        continue;
                    bool used = numa_has (m, m->in, a);
                    if (numa_pkg (m, a) == p && used
                        && (dp < 0 || m->dtasks[a] > m->dtasks[dp]
                            || (m->dtasks[a] == m->dtasks[dp]
                                && (di[a].ncore < di[dp].ncore
                                    || (di[a].ncore == di[dp].ncore
                                        && (di[a].nfree < di[dp].nfree
                                            || (di[a].nfree == di[dp].nfree
                                                && (int)a > dp)))))))
                        dp = (int)a;
                    if (numa_pkg (m, a) == q && !used
                        && (dq < 0 || m->dtasks[a] < m->dtasks[dq]
                            || (m->dtasks[a] == m->dtasks[dq]
                                && (di[a].ncore > di[dq].ncore
                                    || (di[a].ncore == di[dq].ncore
                                        && (di[a].nfree > di[dq].nfree
                                            || (di[a].nfree == di[dq].nfree
                                                && (int)a < dq)))))))
                        dq = (int)a;
                }
                if (dp < 0 || dq < 0)
                    continue;
                unsigned kp[4] = {m->ptasks[p],
                                  ~0u - di[dp].ncore,
                                  ~0u - di[dp].nfree,
                                  p};
                unsigned kq[4] = {m->ptasks[q],
                                  ~0u - di[dq].ncore,
                                  ~0u - di[dq].nfree,
                                  q};
                int cmp = 0;
                for (int i = 0; i < 4 && cmp == 0; i++)
                    cmp = kp[i] < kq[i] ? -1 : kp[i] > kq[i];
                if (cmp > 0) {
                    unsigned round = pu_used[q];
                    free (pu_used);
                    FAIL (
                        "task %u: package %u (%u tasks of the step) got a "
                        "domain of round %u before package %u (%u tasks)",
                        task,
                        p,
                        m->ptasks[p],
                        round,
                        q,
                        m->ptasks[q]);
                }
            }
        }
    }
    free (pu_used);
    unsigned ncores = distinct (m, m->in, -1, TOPO_CORE);
    if (!by_pu && ncores != cpt)
        FAIL ("task %u: %u distinct cores for %u CPUs with %u free",
              task,
              ncores,
              cpt,
              sumcores);
    if (!!(fb & PLACE_FB_UNBALANCED) != (hi - lo > 1))
        FAIL ("task %u: counts %u..%u but fallback 0x%x", task, lo, hi, fb);
    if (!!(fb & PLACE_FB_SHARED_CORE) != (ncores < cpt))
        FAIL ("task %u: %u cores for %u CPUs but fallback 0x%x",
              task,
              ncores,
              cpt,
              fb);
    if (!!(fb & PLACE_FB_NO_LOCAL_NUMA) != pseudo_used)
        FAIL ("task %u: no-local-numa wrong (fallback 0x%x)", task, fb);
    if (fb & (PLACE_FB_MULTI_NUMA | PLACE_FB_PARTIAL_CORE))
        FAIL ("task %u: fallback 0x%x not possible for numa-spread", task, fb);
    return 0;
}

static int check_cache_shared (struct model *m,
                               unsigned task,
                               unsigned cpt,
                               unsigned fb,
                               struct dinfo *di,
                               char *msg,
                               size_t len)
{
    unsigned nnuma = m->nd[TOPO_NUMA];
    unsigned nused = distinct (m, m->in, -1, TOPO_NUMA);
    bool room = false, room_local = false, pseudo_used = false;

    for (unsigned d = 0; d < nnuma; d++) {
        if (di[d].nfree >= cpt) {
            room = true;
            if (di[d].local)
                room_local = true;
        }
        if (numa_has (m, m->in, d) && !di[d].local)
            pseudo_used = true;
    }
    if (!!(fb & PLACE_FB_NO_LOCAL_NUMA) != pseudo_used)
        FAIL ("task %u: no-local-numa wrong (fallback 0x%x)", task, fb);
    if (fb & (PLACE_FB_SHARED_L2 | PLACE_FB_SHARED_CORE | PLACE_FB_UNBALANCED))
        FAIL ("task %u: fallback 0x%x not possible for cache-shared",
              task,
              fb);

    /* every core the task touches: filled (all its free PUs) but one */
    unsigned ncore = m->nd[TOPO_CORE];
    unsigned unfilled = 0, ncores = 0;
    bool partial_used = false;
    unsigned *cin = m->cin;
    memset (cin, 0, ncore * sizeof (*cin));
    for (unsigned i = 0; i < m->n; i++)
        cin[m->pu[i]->dom[TOPO_CORE]] += m->in[i];
    for (unsigned c = 0; c < ncore; c++) {
        if (cin[c] == 0)
            continue;
        ncores++;
        if (cin[c] < m->cvis[c])
            unfilled++;
        if (m->cfree[c] < m->csize[c])
            partial_used = true;
    }
    if (!room) {
        unsigned *v = calloc (nnuma + 1, sizeof (*v));
        for (unsigned d = 0; d < nnuma; d++)
            v[d] = di[d].nfree;
        unsigned need = greedy_count (v, nnuma, cpt);
        free (v);
        if (nused != need || !(fb & PLACE_FB_MULTI_NUMA))
            FAIL ("task %u: %u domains used (fewest %u), fallback 0x%x",
                  task,
                  nused,
                  need,
                  fb);
        unsigned partly = 0;
        for (unsigned d = 0; d < nnuma; d++)
            if (numa_has (m, m->in, d) && m->din[d] < di[d].nfree)
                partly++;
        if (partly > 1)
            FAIL ("task %u: %u of its domains only partly used", task, partly);
        if (!!(fb & PLACE_FB_PARTIAL_CORE) != partial_used)
            FAIL ("task %u: partial-core wrong (fallback 0x%x)", task, fb);
        return 0;
    }
    if (nused != 1)
        FAIL ("task %u: a domain has room but %u are used", task, nused);
    unsigned d = 0;
    while (!numa_has (m, m->in, d))
        d++;
    if (di[d].local != room_local)
        FAIL ("task %u: pseudo domain %u chosen over a local one", task, d);
    if (unfilled > 1)
        FAIL ("task %u: %u cores left partly unused", task, unfilled);
    bool whole_ok = false;
    unsigned best_kmin = ~0u;
    for (unsigned e = 0; e < nnuma; e++) {
        if (di[e].nfree >= cpt && di[e].local == room_local
            && di[e].wcap >= cpt) {
            whole_ok = true;
            if (di[e].kmin < best_kmin)
                best_kmin = di[e].kmin;
        }
    }
    if (di[d].wcap >= cpt) {
        if (partial_used || (fb & PLACE_FB_PARTIAL_CORE))
            FAIL (
                "task %u: partially free core used (fallback 0x%x) while "
                "domain %u has %u PUs on wholly free cores",
                task,
                fb,
                d,
                di[d].wcap);
        if (ncores != di[d].kmin || ncores != best_kmin)
            FAIL (
                "task %u: %u cores used; the fewest wholly free cores "
                "reaching %u is %u here, %u in the best domain",
                task,
                ncores,
                cpt,
                di[d].kmin,
                best_kmin);
        if (fb != (pseudo_used ? PLACE_FB_NO_LOCAL_NUMA : 0))
            FAIL ("task %u: fallback 0x%x on an ideal placement", task, fb);
        /* one L3 when a domain as good has one L3 whose wholly free
         * cores reach C with that many cores */
        unsigned nl3 = distinct (m, m->in, -1, TOPO_L3);
        for (unsigned e = 0; e < nnuma && nl3 > 1; e++) {
            if (di[e].nfree < cpt || di[e].local != room_local
                || di[e].wcap < cpt || di[e].kmin != best_kmin)
                continue;
            for (unsigned l3 = 0; l3 < m->nd[TOPO_L3]; l3++) {
                unsigned *v = calloc (ncore + 1, sizeof (*v));
                unsigned nv = 0;
                for (unsigned c = 0; c < ncore; c++) {
                    if (m->cnuma[c] == e && m->cfree[c] == m->csize[c]
                        && m->cl3[c] == l3)
                        v[nv++] = m->csize[c];
                }
                unsigned k = greedy_count (v, nv, cpt);
                free (v);
                if (k > 0 && k <= best_kmin)
                    FAIL (
                        "task %u: %u L3 used while L3 %u of domain %u "
                        "reaches %u with %u wholly free cores",
                        task,
                        nl3,
                        l3,
                        e,
                        cpt,
                        k);
            }
        }
    } else {
        if (whole_ok)
            FAIL (
                "task %u: domain %u needs partial cores while another "
                "has enough wholly free ones",
                task,
                d);
        if (!(fb & PLACE_FB_PARTIAL_CORE))
            FAIL ("task %u: partial-core not set", task);
        /* every wholly free core of d is used in full */
        for (unsigned c = 0; c < ncore; c++) {
            if (m->cnuma[c] == d && m->cfree[c] == m->csize[c]
                && m->cvis[c] > 0 && cin[c] != m->cvis[c])
                FAIL (
                    "task %u: wholly free core %u not used in full while "
                    "partial cores are",
                    task,
                    c);
        }
    }
    return 0;
}

unsigned placecheck_navail (const topo_t *t, const struct place_request *req)
{
    unsigned n = 0;
    for (unsigned i = 0; i < topo_npus (t); i++) {
        unsigned os = topo_pu (t, i)->os;
        if (req->allowed && !hwloc_bitmap_isset (req->allowed, os))
            continue;
        if (req->busy && hwloc_bitmap_isset (req->busy, os))
            continue;
        n++;
    }
    return n;
}

unsigned placecheck_limit (const topo_t *t, const struct place_request *req)
{
    struct place_request r = *req;
    if (req->policy == PLACE_NONE)
        r.busy = NULL;
    return placecheck_navail (t, &r);
}

/* The rules of a request larger than its limit (doc/policies.md, "Too
 * large"), recounted from the PU table: every task has min(C, allowed)
 * allowed PUs and the mems of their NUMA domains (none: the allowed set
 * and every node); the tasks per allowed PU differ by at most one (so no
 * PU holds two tasks while one holds none, and a request that fits in
 * allowed uses no PU twice); a PU held by more other steps (busy PUs by
 * req->load, at least one each, free ones by none) never holds more tasks
 * than one held by fewer, so a busy PU never holds more than a free one
 * and the least-loaded busy PUs are taken first; a task is oversubscribed
 * exactly when it asked for more PUs than allowed or holds a PU that another
 * task holds, shared-with-step exactly when it holds a busy PU, and has no
 * other reason. */
static int check_too_large (const topo_t *t,
                            const struct place_request *req,
                            const struct place_plan *plan,
                            char *msg,
                            size_t len)
{
    unsigned n = topo_npus (t);
    unsigned *load = calloc (n + 1, sizeof (*load));
    bool *in = calloc (n + 1, sizeof (*in));
    unsigned *busy = calloc (n + 1, sizeof (*busy)); /* other steps */
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    unsigned m = 0;
    int rc = -1;

    if (!load || !in || !busy || !mems) {
        pc_fail (msg, len, "out of memory");
        goto out;
    }
    for (unsigned i = 0; i < n; i++) {
        unsigned os = topo_pu (t, i)->os;
        in[i] = !req->allowed || hwloc_bitmap_isset (req->allowed, os);
        busy[i] = in[i] && req->policy != PLACE_NONE && req->busy
                  && hwloc_bitmap_isset (req->busy, os);
        if (busy[i] && req->load && os < req->nload && req->load[os] > 1)
            busy[i] = req->load[os] < PLACE_MAX_LOAD ? req->load[os]
                                                     : PLACE_MAX_LOAD;
        m += in[i];
    }
    if (plan->ntasks != req->ntasks || plan->policy != req->policy
        || plan->cpus_per_task != req->cpus_per_task) {
        pc_fail (msg, len, "plan header does not match the request");
        goto out;
    }
    /* none: every task gets the whole allowed set */
    unsigned k = req->cpus_per_task < m && req->policy != PLACE_NONE
                     ? req->cpus_per_task
                     : m;
    for (unsigned task = 0; task < plan->ntasks; task++) {
        const struct place_task *pt = &plan->tasks[task];
        unsigned got = 0;
        hwloc_bitmap_zero (mems);
        for (unsigned i = 0; i < n; i++) {
            const struct topo_pu *pu = topo_pu (t, i);
            if (!hwloc_bitmap_isset (pt->cpus, pu->os))
                continue;
            if (!in[i]) {
                pc_fail (msg,
                         len,
                         "too large: task %u has PU %u outside "
                         "allowed",
                         task,
                         pu->os);
                goto out;
            }
            got++;
            load[i]++;
            hwloc_bitmap_or (mems,
                             mems,
                             topo_numa_nodeset (t, pu->dom[TOPO_NUMA]));
        }
        if (req->policy == PLACE_NONE)
            hwloc_bitmap_copy (mems, topo_nodeset (t));
        if (got != k || hwloc_bitmap_weight (pt->cpus) != (int)k) {
            pc_fail (msg,
                     len,
                     "too large: task %u has %d PUs, expected %u",
                     task,
                     hwloc_bitmap_weight (pt->cpus),
                     k);
            goto out;
        }
        if (!hwloc_bitmap_isequal (mems, pt->mems)) {
            pc_fail (msg,
                     len,
                     "too large: task %u: mems are not those of "
                     "its PUs",
                     task);
            goto out;
        }
    }
    unsigned lo = UINT32_MAX, hi = 0, busy_hi = 0, free_lo = UINT32_MAX;
    for (unsigned i = 0; i < n; i++) {
        if (!in[i])
            continue;
        lo = load[i] < lo ? load[i] : lo;
        hi = load[i] > hi ? load[i] : hi;
        if (busy[i] && load[i] > busy_hi)
            busy_hi = load[i];
        if (!busy[i] && load[i] < free_lo)
            free_lo = load[i];
    }
    if (req->policy != PLACE_NONE && hi - lo > 1) {
        pc_fail (msg,
                 len,
                 "too large: tasks per allowed PU range from %u "
                 "to %u",
                 lo,
                 hi);
        goto out;
    }
    if (free_lo != UINT32_MAX && busy_hi > free_lo) {
        pc_fail (msg,
                 len,
                 "too large: a busy PU holds %u tasks, a free one "
                 "%u",
                 busy_hi,
                 free_lo);
        goto out;
    }
    /* the tasks per PU are lo or hi (above): the PUs given hi tasks are
     * held by no more other steps than any PU given lo */
    if (req->policy != PLACE_NONE && hi > lo) {
        unsigned held_hi = 0, held_lo = UINT32_MAX, at_hi = 0, at_lo = 0;
        for (unsigned i = 0; i < n; i++) {
            if (!in[i])
                continue;
            if (load[i] == hi && busy[i] >= held_hi) {
                held_hi = busy[i];
                at_hi = topo_pu (t, i)->os;
            }
            if (load[i] == lo && busy[i] < held_lo) {
                held_lo = busy[i];
                at_lo = topo_pu (t, i)->os;
            }
        }
        if (held_hi > held_lo) {
            pc_fail (msg,
                     len,
                     "too large: PU %u, held by %u other steps, "
                     "got %u tasks, PU %u, held by %u, only %u",
                     at_hi,
                     held_hi,
                     hi,
                     at_lo,
                     held_lo,
                     lo);
            goto out;
        }
    }
    for (unsigned task = 0; task < plan->ntasks; task++) {
        const struct place_task *pt = &plan->tasks[task];
        unsigned want = req->cpus_per_task > m || req->policy == PLACE_NONE
                            ? PLACE_FB_OVERSUBSCRIBED
                            : 0;
        for (unsigned i = 0; i < n; i++) {
            if (!in[i] || !hwloc_bitmap_isset (pt->cpus, topo_pu (t, i)->os))
                continue;
            if (load[i] > 1)
                want |= PLACE_FB_OVERSUBSCRIBED;
            if (busy[i])
                want |= PLACE_FB_SHARED_WITH_STEP;
        }
        if (pt->fallback != want) {
            char a[128], b[128];
            pc_fail (msg,
                     len,
                     "too large: task %u has fallback '%s', "
                     "expected '%s'",
                     task,
                     place_fallback_string (pt->fallback, a, sizeof (a)),
                     place_fallback_string (want, b, sizeof (b)));
            goto out;
        }
    }
    rc = 0;
out:
    free (load);
    free (in);
    free (busy);
    hwloc_bitmap_free (mems);
    return rc;
}

int placecheck (const topo_t *t,
                const struct place_request *req,
                const struct place_plan *plan,
                char *msg,
                size_t len)
{
    if ((uint64_t)req->ntasks * req->cpus_per_task > placecheck_limit (t, req))
        return check_too_large (t, req, plan, msg, len);

    struct model m = {.t = t};
    struct dinfo *di = NULL;
    hwloc_bitmap_t mems = hwloc_bitmap_alloc ();
    hwloc_bitmap_t allowed = hwloc_bitmap_dup (topo_cpuset (t));
    int rc = -1;

    m.n = topo_npus (t);
    for (int l = 0; l < TOPO_NLEVELS; l++) {
        m.nd[l] = topo_ndomains (t, l);
        if (m.nd[l] > m.maxd)
            m.maxd = m.nd[l];
    }
    m.pu = calloc (m.n, sizeof (*m.pu));
    m.free = calloc (m.n, sizeof (*m.free));
    m.taken = calloc (m.n + 1, sizeof (*m.taken));
    m.in = calloc (m.n, sizeof (*m.in));
    m.khid = calloc (m.n + 1, sizeof (*m.khid));
    m.mark = calloc (m.maxd + 1, sizeof (*m.mark));
    m.csize = calloc (m.nd[TOPO_CORE] + 1, sizeof (*m.csize));
    m.cfree = calloc (m.nd[TOPO_CORE] + 1, sizeof (*m.cfree));
    m.cnuma = calloc (m.nd[TOPO_CORE] + 1, sizeof (*m.cnuma));
    m.cin = calloc (m.nd[TOPO_CORE] + 1, sizeof (*m.cin));
    m.cl3 = calloc (m.nd[TOPO_CORE] + 1, sizeof (*m.cl3));
    m.cvis = calloc (m.nd[TOPO_CORE] + 1, sizeof (*m.cvis));
    m.sv = calloc (m.nd[TOPO_CORE] + m.nd[TOPO_L3] + 1, sizeof (*m.sv));
    m.stot = calloc (m.nd[TOPO_L2] + 1, sizeof (*m.stot));
    m.sfr = calloc (m.nd[TOPO_L2] + 1, sizeof (*m.sfr));
    m.swf = calloc (m.nd[TOPO_L2] + 1, sizeof (*m.swf));
    m.dstart = calloc (m.nd[TOPO_NUMA] + 2, sizeof (*m.dstart));
    m.dpus = calloc (m.n + 1, sizeof (*m.dpus));
    m.din = calloc (m.nd[TOPO_NUMA] + 1, sizeof (*m.din));
    m.dtasks = calloc (m.nd[TOPO_NUMA] + 1, sizeof (*m.dtasks));
    m.ptasks = calloc (m.nd[TOPO_PKG] + 1, sizeof (*m.ptasks));
    m.uq = calloc (m.nd[TOPO_L2] + 1, sizeof (*m.uq));
    di = calloc (m.nd[TOPO_NUMA] + 1, sizeof (*di));
    if (!m.pu || !m.free || !m.taken || !m.in || !m.khid || !m.mark || !m.csize
        || !m.cfree || !m.cnuma || !m.cin || !m.cl3 || !m.cvis || !m.dstart
        || !m.dpus || !m.din || !m.dtasks || !m.ptasks || !m.uq || !m.sv
        || !m.stot || !m.sfr || !m.swf || !di || !mems || !allowed) {
        pc_fail (msg, len, "out of memory");
        goto out;
    }
    if (req->allowed)
        hwloc_bitmap_and (allowed, allowed, req->allowed);
    for (unsigned i = 0; i < m.n; i++)
        m.dstart[topo_pu (t, i)->dom[TOPO_NUMA] + 1]++;
    for (unsigned d = 0; d < m.nd[TOPO_NUMA]; d++)
        m.dstart[d + 1] += m.dstart[d];
    for (unsigned i = 0; i < m.n; i++)
        m.dpus[m.din[topo_pu (t, i)->dom[TOPO_NUMA]]++
               + m.dstart[topo_pu (t, i)->dom[TOPO_NUMA]]] = i;
    for (unsigned i = 0; i < m.n; i++) {
        m.pu[i] = topo_pu (t, i);
        unsigned os = m.pu[i]->os;
        m.free[i] = hwloc_bitmap_isset (allowed, os)
                    && !(req->busy && hwloc_bitmap_isset (req->busy, os));
    }
    if (plan->ntasks != req->ntasks || plan->policy != req->policy
        || plan->cpus_per_task != req->cpus_per_task) {
        pc_fail (msg, len, "plan header does not match the request");
        goto out;
    }
    unsigned cpt = req->cpus_per_task;
    for (unsigned task = 0; task < plan->ntasks; task++) {
        const struct place_task *pt = &plan->tasks[task];
        unsigned fb = pt->fallback;

        if (req->policy == PLACE_NONE) {
            if (!hwloc_bitmap_isequal (pt->cpus, allowed)
                || !hwloc_bitmap_isequal (pt->mems, topo_nodeset (t))
                || fb != 0) {
                pc_fail (msg,
                         len,
                         "task %u: none must give the allowed set, "
                         "all nodes and no fallback",
                         task);
                goto out;
            }
            continue;
        }
        /* size, inside the free set */
        if (hwloc_bitmap_weight (pt->cpus) != (int)cpt) {
            pc_fail (msg,
                     len,
                     "task %u: %d CPUs instead of %u",
                     task,
                     hwloc_bitmap_weight (pt->cpus),
                     cpt);
            goto out;
        }
        int os;
        hwloc_bitmap_foreach_begin (os, pt->cpus)
        {
            int idx = topo_pu_index (t, (unsigned)os);
            if (idx < 0 || !m.free[idx]) {
                pc_fail (msg,
                         len,
                         "task %u: CPU %d is not free (offline, "
                         "disallowed, busy or taken by an earlier task)",
                         task,
                         os);
                goto out;
            }
        }
        hwloc_bitmap_foreach_end ();
        hwloc_bitmap_zero (mems);
        memset (m.din, 0, m.nd[TOPO_NUMA] * sizeof (*m.din));
        for (unsigned i = 0; i < m.n; i++) {
            m.in[i] = hwloc_bitmap_isset (pt->cpus, m.pu[i]->os);
            m.din[m.pu[i]->dom[TOPO_NUMA]] += m.in[i];
            if (m.in[i])
                hwloc_bitmap_or (mems,
                                 mems,
                                 topo_numa_nodeset (t,
                                                    m.pu[i]->dom[TOPO_NUMA]));
        }
        if (!hwloc_bitmap_isequal (mems, pt->mems)) {
            pc_fail (msg,
                     len,
                     "task %u: mems are not the nodes of its "
                     "domains",
                     task);
            goto out;
        }
        core_counts (&m);
        /* CPU kinds: numa-local, numa-spread and cache-shared keep a task
         * to the kind the rule names (the other kinds' PUs are hidden for
         * the checks below, their cores still count as wholly free);
         * mixed-kinds is set exactly when the task's PUs are of several
         * kinds */
        {
            bool mixed = false;
            int k0 = -2;
            for (unsigned i = 0; i < m.n; i++) {
                if (!m.in[i])
                    continue;
                if (k0 == -2)
                    k0 = m.pu[i]->kind;
                else if (m.pu[i]->kind != k0)
                    mixed = true;
            }
            bool kinded = req->policy == PLACE_NUMA_LOCAL
                          || req->policy == PLACE_NUMA_SPREAD
                          || req->policy == PLACE_CACHE_SHARED;
            if (!!(fb & PLACE_FB_MIXED_KINDS) != (kinded && mixed)) {
                pc_fail (msg,
                         len,
                         "task %u: mixed-kinds is %s, the task's "
                         "CPUs are of %s kind",
                         task,
                         fb & PLACE_FB_MIXED_KINDS ? "set" : "unset",
                         mixed ? "more than one" : "one");
                goto out;
            }
            fb &= ~(unsigned)PLACE_FB_MIXED_KINDS;
            unsigned nk = kind_count (&m);
            int want = kinded && nk >= 2
                           ? expected_kind (&m, req->policy, cpt, nk)
                           : -1;
            if (want >= 0) {
                for (unsigned i = 0; i < m.n; i++) {
                    if (m.in[i] && m.pu[i]->kind != want) {
                        pc_fail (msg,
                                 len,
                                 "task %u: CPU %u of kind %d, the "
                                 "kind rule wants kind %d only",
                                 task,
                                 m.pu[i]->os,
                                 m.pu[i]->kind,
                                 want);
                        goto out;
                    }
                    if (m.free[i] && m.pu[i]->kind != want) {
                        m.free[i] = false;
                        m.khid[i] = true;
                    }
                }
                core_counts (&m);
            }
        }
        for (unsigned d = 0; d < m.nd[TOPO_NUMA]; d++)
            domain_info (&m, d, cpt, &di[d]);
        /* shared-with-task: a core of the task holds a PU of an earlier
         * task of the step (every policy that sets bits but random) */
        if (req->policy != PLACE_RANDOM) {
            bool with_task = false;
            memset (m.cin, 0, m.nd[TOPO_CORE] * sizeof (*m.cin));
            for (unsigned i = 0; i < m.n; i++)
                if (m.taken[i])
                    m.cin[m.pu[i]->dom[TOPO_CORE]] = 1;
            for (unsigned i = 0; i < m.n; i++)
                if (m.in[i] && m.cin[m.pu[i]->dom[TOPO_CORE]])
                    with_task = true;
            if (!!(fb & PLACE_FB_SHARED_WITH_TASK) != with_task) {
                pc_fail (msg,
                         len,
                         "task %u: shared-with-task is %s but a "
                         "core of the task %s a PU of an earlier task",
                         task,
                         fb & PLACE_FB_SHARED_WITH_TASK ? "set" : "unset",
                         with_task ? "holds" : "holds no");
                goto out;
            }
            fb &= ~(unsigned)PLACE_FB_SHARED_WITH_TASK;
        }
        int r = 0;
        switch (req->policy) {
            case PLACE_NUMA_LOCAL:
                r = check_numa_local_step (&m,
                                           task,
                                           cpt,
                                           req->ntasks,
                                           fb,
                                           di,
                                           msg,
                                           len);
                break;
            case PLACE_NUMA_SPREAD:
                r = check_numa_spread (&m, task, cpt, fb, di, msg, len);
                break;
            case PLACE_CACHE_SHARED:
                r = check_cache_shared (&m, task, cpt, fb, di, msg, len);
                break;
            case PLACE_RANDOM: {
                bool pseudo = false;
                for (unsigned i = 0; i < m.n; i++)
                    if (m.in[i]
                        && !topo_numa_is_local (t, m.pu[i]->dom[TOPO_NUMA]))
                        pseudo = true;
                if (fb != (pseudo ? PLACE_FB_NO_LOCAL_NUMA : 0)) {
                    pc_fail (msg,
                             len,
                             "task %u: random fallback 0x%x",
                             task,
                             fb);
                    r = -1;
                }
                break;
            }
            default:
                pc_fail (msg, len, "unknown policy");
                r = -1;
        }
        if (r < 0)
            goto out;
        for (unsigned i = 0; i < m.n; i++)
            if (m.khid[i]) {
                m.khid[i] = false;
                m.free[i] = true;
            }
        for (unsigned i = 0; i < m.n; i++)
            if (m.in[i]) {
                m.free[i] = false;
                m.taken[i] = true;
            }
        for (unsigned d = 0; d < m.nd[TOPO_NUMA]; d++)
            m.dtasks[d] += m.din[d] > 0;
        for (unsigned p = 0; p < m.nd[TOPO_PKG]; p++) {
            bool has = false;
            for (unsigned i = 0; i < m.n && !has; i++)
                has = m.in[i] && m.pu[i]->dom[TOPO_PKG] == p;
            m.ptasks[p] += has;
        }
    }
    rc = 0;
out:
    free (m.pu);
    free (m.free);
    free (m.taken);
    free (m.in);
    free (m.khid);
    free (m.cvis);
    free (m.mark);
    free (m.csize);
    free (m.cfree);
    free (m.cnuma);
    free (m.cin);
    free (m.cl3);
    free (m.sv);
    free (m.stot);
    free (m.sfr);
    free (m.swf);
    free (m.dstart);
    free (m.dpus);
    free (m.din);
    free (m.dtasks);
    free (m.ptasks);
    free (m.uq);
    free (di);
    hwloc_bitmap_free (mems);
    hwloc_bitmap_free (allowed);
    return rc;
}

int placecheck_run_tap (Suite *s)
{
    SRunner *sr = srunner_create (s);
    int failed;

    /* check forks per test: keep stdout empty across fork() */
    setvbuf (stdout, NULL, _IOLBF, 0);
    srunner_set_tap (sr, "-");
    srunner_run_all (sr, CK_SILENT);
    failed = srunner_ntests_failed (sr);
    srunner_free (sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- the grid of requests ---------------------------------------------- */

/* The test's own generator (xorshift64*), independent of libplace's. */
static uint64_t rng_next (uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dULL;
}

static bool rng_chance (uint64_t *s, unsigned percent)
{
    return rng_next (s) % 100 < percent;
}

enum { NALLOWED = 4, NBUSY = 5 };

/* Allowed set variant v: 0 all, 1 random PUs (70%), 2 random whole cores
 * (60%), 3 the PUs of the first half of the packages (at least one). */
static hwloc_bitmap_t make_allowed (const topo_t *t, int v, uint64_t *rs)
{
    if (v == 0)
        return NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    unsigned npkg = topo_ndomains (t, TOPO_PKG);
    unsigned ncore = topo_ndomains (t, TOPO_CORE);
    bool *keep = calloc (ncore + 1, sizeof (*keep));
    for (unsigned c = 0; c < ncore; c++)
        keep[c] = rng_chance (rs, 60);
    for (unsigned i = 0; i < topo_npus (t); i++) {
        const struct topo_pu *p = topo_pu (t, i);
        bool in = v == 1   ? rng_chance (rs, 70)
                  : v == 2 ? keep[p->dom[TOPO_CORE]]
                           : p->dom[TOPO_PKG] < (npkg + 1) / 2;
        if (in)
            hwloc_bitmap_set (set, p->os);
    }
    free (keep);
    /* a PU outside the machine must be ignored */
    hwloc_bitmap_set (set, 100000);
    return set;
}

/* Busy set variant v: 0 none; 1 25% and 2 50% of the PUs; 3 40% of the
 * cores, whole; 4 what an earlier step holds: a numa-local plan of 2 tasks
 * of an eighth of the machine each.  Drawn over all PUs, so some busy PUs
 * fall outside allowed, as they may in practice. */
static hwloc_bitmap_t make_busy (const topo_t *t, int v, uint64_t *rs)
{
    if (v == 0)
        return NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc ();
    unsigned ncore = topo_ndomains (t, TOPO_CORE);
    bool *keep = calloc (ncore + 1, sizeof (*keep));
    for (unsigned c = 0; c < ncore; c++)
        keep[c] = rng_chance (rs, 40);
    if (v == 4) {
        struct place_request req = {
            .policy = PLACE_NUMA_LOCAL,
            .ntasks = 2,
            .cpus_per_task = topo_npus (t) / 8 ? topo_npus (t) / 8 : 1,
        };
        struct place_plan *plan = place_compute (t, &req, NULL);
        for (unsigned i = 0; plan && i < plan->ntasks; i++)
            hwloc_bitmap_or (set, set, plan->tasks[i].cpus);
        place_plan_destroy (plan);
    }
    for (unsigned i = 0; v < 4 && i < topo_npus (t); i++) {
        const struct topo_pu *p = topo_pu (t, i);
        bool in = v == 1   ? rng_chance (rs, 25)
                  : v == 2 ? rng_chance (rs, 50)
                           : keep[p->dom[TOPO_CORE]];
        if (in)
            hwloc_bitmap_set (set, p->os);
    }
    free (keep);
    return set;
}

const enum place_policy placecheck_policies[] = {
    PLACE_NUMA_LOCAL,
    PLACE_NUMA_SPREAD,
    PLACE_CACHE_SHARED,
    PLACE_RANDOM,
    PLACE_NONE,
};

/* log of the binomial coefficient (n choose k) */
static double log_choose (unsigned n, unsigned k)
{
    return lgamma (n + 1.0) - lgamma (k + 1.0) - lgamma (n - k + 1.0);
}

static bool plans_equal (const struct place_plan *a,
                         const struct place_plan *b)
{
    for (unsigned i = 0; i < a->ntasks; i++)
        if (!hwloc_bitmap_isequal (a->tasks[i].cpus, b->tasks[i].cpus))
            return false;
    return true;
}

struct counts {
    unsigned plans, fallbacks, errors;
};

static void run_case (const char *name,
                      const topo_t *t,
                      struct place_request *req,
                      struct counts *cnt)
{
    pin_error_t err = {{0}};
    char msg[512];
    unsigned navail = placecheck_limit (t, req);
    uint64_t total = (uint64_t)req->ntasks * req->cpus_per_task;
    struct place_plan *plan = place_compute (t, req, &err);

    if (total > navail) {
        /* the fallback places it (and placecheck checks its rules) ... */
        bool empty =
            req->allowed
            && !hwloc_bitmap_intersects (req->allowed, topo_cpuset (t));
        ck_assert_msg (plan != NULL || empty,
                       "%s: %s -n %u -c %u (%u "
                       "available): no fallback: %s",
                       name,
                       place_policy_name (req->policy),
                       req->ntasks,
                       req->cpus_per_task,
                       navail,
                       err.text);
        if (plan) {
            int rc = placecheck (t, req, plan, msg, sizeof (msg));
            ck_assert_msg (rc == 0,
                           "%s: %s -n %u -c %u (%u available): %s",
                           name,
                           place_policy_name (req->policy),
                           req->ntasks,
                           req->cpus_per_task,
                           navail,
                           msg);
            /* the busy PUs held by 1-4 other steps each (req.load): the
             * same rules, the least-loaded first; held by one each, the
             * plan of no load at all */
            if (!req->load && req->busy
                && hwloc_bitmap_intersects (req->busy, topo_cpuset (t))) {
                int last = hwloc_bitmap_last (topo_cpuset (t));
                unsigned nl = last < 0 ? 1 : (unsigned)last + 1;
                unsigned *ld = calloc (nl, sizeof (*ld));
                uint64_t rs = req->seed;
                ck_assert_ptr_nonnull (ld);
                struct place_request lr = *req;
                lr.load = ld;
                lr.nload = nl;
                for (unsigned i = 0; i < nl; i++)
                    ld[i] = 1;
                struct place_plan *ones = place_compute (t, &lr, &err);
                ck_assert_msg (ones && plans_equal (plan, ones),
                               "%s: %s -n "
                               "%u -c %u: load 1 everywhere changed the plan",
                               name,
                               place_policy_name (req->policy),
                               req->ntasks,
                               req->cpus_per_task);
                place_plan_destroy (ones);
                for (unsigned i = 0; i < nl; i++)
                    ld[i] = 1 + (unsigned)(rng_next (&rs) % 4);
                struct place_plan *lp = place_compute (t, &lr, &err);
                ck_assert_msg (lp != NULL,
                               "%s: %s with load: %s",
                               name,
                               place_policy_name (req->policy),
                               err.text);
                rc = placecheck (t, &lr, lp, msg, sizeof (msg));
                ck_assert_msg (rc == 0,
                               "%s: %s -n %u -c %u with load: %s",
                               name,
                               place_policy_name (req->policy),
                               req->ntasks,
                               req->cpus_per_task,
                               msg);
                place_plan_destroy (lp);
                free (ld);
            }
            place_plan_destroy (plan);
            cnt->fallbacks++;
        }
        /* ... and refuses it when asked to */
        struct place_request strict = *req;
        strict.refuse = PLACE_REFUSE_SHARE | PLACE_REFUSE_OVERSUBSCRIBE;
        plan = place_compute (t, &strict, &err);
        ck_assert_msg (plan == NULL,
                       "%s: %s -n %u -c %u: %u available, "
                       "refused, yet a plan",
                       name,
                       place_policy_name (req->policy),
                       req->ntasks,
                       req->cpus_per_task,
                       navail);
        ck_assert_msg (strstr (err.text, "exceeds the") != NULL,
                       "%s: error '%s'",
                       name,
                       err.text);
        cnt->errors++;
        return;
    }
    ck_assert_msg (plan != NULL,
                   "%s: %s -n %u -c %u (%u available): %s",
                   name,
                   place_policy_name (req->policy),
                   req->ntasks,
                   req->cpus_per_task,
                   navail,
                   err.text);
    int rc = placecheck (t, req, plan, msg, sizeof (msg));
    ck_assert_msg (rc == 0,
                   "%s: %s -n %u -c %u (%u available): %s",
                   name,
                   place_policy_name (req->policy),
                   req->ntasks,
                   req->cpus_per_task,
                   navail,
                   msg);
    cnt->plans++;

    if (req->policy == PLACE_RANDOM) {
        /* same seed: the same plan */
        struct place_plan *again = place_compute (t, req, &err);
        ck_assert_ptr_nonnull (again);
        ck_assert_msg (plans_equal (plan, again),
                       "%s: random seed %llu "
                       "gave two plans",
                       name,
                       (unsigned long long)req->seed);
        place_plan_destroy (again);
        /* another seed: another plan, where there are very many */
        if (log_choose (navail, req->cpus_per_task) > log (1e9)) {
            struct place_request r2 = *req;
            r2.seed = req->seed + 1;
            struct place_plan *other = place_compute (t, &r2, &err);
            ck_assert_ptr_nonnull (other);
            ck_assert_msg (!plans_equal (plan, other),
                           "%s: seeds %llu and "
                           "%llu gave the same plan of %u CPUs among %u",
                           name,
                           (unsigned long long)req->seed,
                           (unsigned long long)r2.seed,
                           req->cpus_per_task,
                           navail);
            place_plan_destroy (other);
        }
    }
    place_plan_destroy (plan);
}

void placecheck_grid (const char *name, const topo_t *t, uint64_t seed)
{
    struct counts cnt = {0, 0, 0};
    unsigned npu = topo_npus (t);
    const unsigned cpts[] =
        {1, 2, 3, 4, 7, 8, 16, npu / 4, npu / 2, npu - 1, npu, npu + 1};
    const unsigned ntasks[] = {1, 2, 3, 4, 8};
    uint64_t rs = seed ? seed : 1;

    for (int av = 0; av < NALLOWED; av++) {
        hwloc_bitmap_t allowed = make_allowed (t, av, &rs);
        for (int bv = 0; bv < NBUSY; bv++) {
            hwloc_bitmap_t busy = make_busy (t, bv, &rs);
            for (size_t ci = 0; ci < sizeof (cpts) / sizeof (cpts[0]); ci++) {
                if (cpts[ci] == 0 || (ci > 0 && cpts[ci] == cpts[ci - 1]))
                    continue;
                for (size_t ni = 0; ni < sizeof (ntasks) / sizeof (ntasks[0]);
                     ni++) {
                    for (size_t p = 0; p < PLACECHECK_NPOLICIES; p++) {
                        struct place_request req = {
                            .policy = placecheck_policies[p],
                            .ntasks = ntasks[ni],
                            .cpus_per_task = cpts[ci],
                            .allowed = allowed,
                            .busy = busy,
                            .seed = rng_next (&rs),
                        };
                        run_case (name, t, &req, &cnt);
                    }
                }
            }
            hwloc_bitmap_free (busy);
        }
        hwloc_bitmap_free (allowed);
    }
    /* the grid must have produced plans, fallbacks and refusals on every
     * machine */
    ck_assert_msg (cnt.plans > 0 && cnt.fallbacks > 0 && cnt.errors > 0,
                   "%s: %u plans, %u fallbacks, %u refusals",
                   name,
                   cnt.plans,
                   cnt.fallbacks,
                   cnt.errors);
}
