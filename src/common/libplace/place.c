/* place.c - CPU placement policies (see place.h and doc/policies.md)
 *
 * Everything works on libtopo's flattened model, copied once per call into
 * plain arrays indexed by PU table index (hwloc logical order).  A PU is
 * "free" while it is in allowed-minus-busy and no earlier task of the step
 * took it.  Each task is chosen on the free PUs, then its PUs are marked
 * taken.  Per-domain statistics (and the rankings derived from them) are
 * cached and recounted only for the NUMA domains the previous task took
 * PUs from; the unit lists of one domain are built in O(PUs of the
 * domain) with generation stamps instead of clearing arrays.
 */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

#define NIL UINT_MAX

/* ---- names -------------------------------------------------------------- */

static const char *const policy_names[] = {
    [PLACE_NONE] = "none",
    [PLACE_NUMA_LOCAL] = "numa-local",
    [PLACE_NUMA_SPREAD] = "numa-spread",
    [PLACE_CACHE_SHARED] = "cache-shared",
    [PLACE_RANDOM] = "random",
    [PLACE_DYNAMIC] = "dynamic",
};
#define NPOLICIES (sizeof (policy_names) / sizeof (policy_names[0]))

#define POLICY_LIST                                            \
    "numa-local, numa-spread, cache-shared, random, dynamic, " \
    "none"

/* Longest name a caller may pass before it is rejected unread. */
#define POLICY_NAME_MAX 64

static const char *const fallback_names[] = {
    "multi-numa",
    "shared-l2",
    "shared-core",
    "unbalanced",
    "partial-core",
    "no-local-numa",
    "shared-with-task",
    "mixed-kinds",
    "oversubscribed",
    "shared-with-step",
    "alloc-one-numa",
    "gpu-remote",
    "nic-remote",
};
#define NFALLBACKS (sizeof (fallback_names) / sizeof (fallback_names[0]))

const char *place_policy_list (void)
{
    return POLICY_LIST;
}

const char *place_policy_name (enum place_policy policy)
{
    if ((unsigned)policy >= NPOLICIES)
        return "unknown";
    return policy_names[policy];
}

int place_policy_parse (const char *name,
                        enum place_policy *policy,
                        pin_error_t *errp)
{
    if (!name || !*name) {
        errno = EINVAL;
        return errprintf (errp,
                          "'': empty policy name; known: %s",
                          POLICY_LIST);
    }
    size_t len = strnlen (name, POLICY_NAME_MAX + 1);
    if (len > POLICY_NAME_MAX) {
        errno = EINVAL;
        return errprintf (errp,
                          "'%.16s...': policy name longer than %d "
                          "characters; known: %s",
                          name,
                          POLICY_NAME_MAX,
                          POLICY_LIST);
    }
    for (size_t i = 0; i < NPOLICIES; i++) {
        if (strcmp (name, policy_names[i]) == 0) {
            if (policy)
                *policy = (enum place_policy)i;
            return 0;
        }
    }
    /* Echo the name, but never raw control characters into a log. */
    char shown[POLICY_NAME_MAX + 1];
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)name[i];
        shown[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    shown[len] = '\0';
    errno = EINVAL;
    return errprintf (errp,
                      "'%s': unknown policy; known: %s",
                      shown,
                      POLICY_LIST);
}

const char *place_fallback_string (unsigned mask, char *buf, size_t n)
{
    size_t used = 0;

    if (!buf || n == 0)
        return buf;
    buf[0] = '\0';
    for (size_t i = 0; i < NFALLBACKS; i++) {
        if (!(mask & (1u << i)))
            continue;
        int rc = snprintf (buf + used,
                           n - used,
                           "%s%s",
                           used ? "," : "",
                           fallback_names[i]);
        if (rc < 0 || (size_t)rc >= n - used) {
            buf[used] = '\0'; /* whole names only */
            break;
        }
        used += (size_t)rc;
    }
    return buf;
}

/* ---- the per-call model ------------------------------------------------- */

/* State of a PU: not available (outside allowed, or busy), free, or
 * taken by an earlier task of this step. */
enum { PU_OUT = 0, PU_FREE = 1, PU_TAKEN = 2, PU_HIDDEN = 3 };

/* A unit (an L2 domain or a core, restricted to one NUMA domain) with at
 * least one free PU; its free PUs form a list through ctx->next. */
struct unit {
    unsigned id;     /* domain index at the unit level */
    unsigned grp;    /* domain index at the group level */
    unsigned gslot;  /* index into ctx->groups */
    unsigned first;  /* table index of its first PU (free or not) */
    unsigned nfree;  /* free PUs */
    unsigned ntotal; /* PUs of the unit inside the NUMA domain */
    unsigned head, tail;
    unsigned quality; /* 0 wholly free, 1 has a wholly free core, 2 not */
};

/* Units grouped by the domain above them (L3 for L2 units, L2 or L3 for
 * cores); ctx->gunits[start .. start+nunits) are the group's units. */
struct group {
    unsigned id;
    unsigned first;
    unsigned nunits;
    unsigned nfree; /* free PUs of its units */
    unsigned start;
    unsigned wcap; /* cache-shared: PUs of wholly free cores */
};

/* Free units of a NUMA domain, counted at every level. */
struct dstat {
    unsigned nfree, nl2, ncore, nl3;
    unsigned nwcore;     /* wholly free cores */
    unsigned nwl2, nwl3; /* L2 and L3 units with a wholly free core */
};

/* What cache-shared would do in one domain. */
struct cs_result {
    unsigned cores; /* cores used */
    unsigned l3;    /* L3 groups used */
    bool partial;   /* a core that is not wholly free was used */
};

/* A sort key: lexicographic over k[], then idx. */
#define NKEY 7
struct skey {
    unsigned k[NKEY];
    unsigned idx;
};

struct ctx {
    const topo_t *topo;
    unsigned npu;
    unsigned nd[TOPO_NLEVELS];
    unsigned *os;                /* [npu] */
    unsigned *dom[TOPO_NLEVELS]; /* [npu] per level */
    unsigned *core_size;         /* [ncore] PUs of the core in the table */
    unsigned *core_free;         /* [ncore] of them free now */
    unsigned *core_taken;        /* [ncore] taken by earlier tasks */
    unsigned maxcore;            /* PUs of the largest core */
    unsigned *numa_start;        /* [nnuma+1] CSR of the PUs of each */
    unsigned *numa_pus;          /* [npu] NUMA domain, logical order */
    unsigned *numa_pkg;          /* [nnuma] package of its first PU */
    bool *numa_local;            /* [nnuma] */
    unsigned *numa_free;         /* [nnuma] free PUs now */
    unsigned *numa_tasks;        /* [nnuma] tasks of the step with a PU */
    unsigned *pkg_tasks;         /* [npkg] tasks of the step with a PU */
    unsigned char *st;           /* [npu] PU_* */
    /* CPU kinds: hwloc's cpukind index of each PU (-1 unknown), the
     * number of kind slots (max index + 1; < 2: one kind, the kind rule
     * is off), the free PUs per domain and kind, and the kind the
     * current choice is restricted to (-1: every kind). */
    int *kind; /* [npu] */
    unsigned nkinds;
    unsigned *kind_free; /* [nnuma * nkinds] */
    int kind_only;

    /* scratch, reused by every task */
    unsigned gen;
    unsigned *stamp[TOPO_NLEVELS]; /* [nd[level]] */
    unsigned *slot[TOPO_NLEVELS];  /* [nd[level]] */
    unsigned *next;                /* [npu] free-PU lists of units */
    struct unit *units;            /* [npu] */
    unsigned nunits;
    struct group *groups; /* [npu] */
    unsigned ngroups;
    unsigned *gunits;                 /* [npu] */
    unsigned *gcap, *gchosen, *gtake; /* [npu] group selection */
    bool *gused;                      /* [npu] */
    struct skey *keys;                /* [npu] */
    unsigned *list;                   /* [npu] */
    unsigned *cursor;                 /* [npu] */
    /* The view: 0 every free PU; 1 (clean) only the free PUs of wholly
     * free cores.  The per-domain caches below hold both views, view v
     * of domain d at index v * nnuma + d. */
    unsigned view;
    unsigned rest; /* tasks of the step after this one */
    /* per NUMA domain, valid until a task takes one of its PUs */
    struct dstat *dst;                    /* [2 * nnuma] */
    bool *dst_ok;                         /* [2 * nnuma] dst[d] is current */
    unsigned *l1_tier, *l1_nl3, *l1_left; /* [2 * nnuma] numa-local */
    bool *l1_ok;                          /* [2 * nnuma] */
    unsigned *wfit;       /* [nnuma] tasks its whole cores hold */
    bool *wfit_ok;        /* [nnuma] */
    unsigned *whist;      /* [maxcore + 1] scratch */
    struct cs_result *cs; /* [nnuma] cache-shared, C PUs */
    bool *cs_ok;          /* [nnuma] */
    unsigned *dorder;     /* [nnuma] */
    unsigned *dcap;       /* [nnuma] */
    unsigned *dchosen;    /* [nnuma] */
    unsigned *dtake;      /* [nnuma] */
    unsigned *dcount;     /* [nnuma] */
    bool *dused;          /* [nnuma] */
    unsigned *out;        /* [npu] PUs of the current task */
    unsigned nout;
    unsigned *ravail; /* [npu] random: free PUs, the first */
    unsigned nravail; /* rdrawn of them already drawn */
    unsigned rdrawn;
};

static void ctx_destroy (struct ctx *c)
{
    if (c) {
        int saved_errno = errno;
        free (c->os);
        for (int l = 0; l < TOPO_NLEVELS; l++) {
            free (c->dom[l]);
            free (c->stamp[l]);
            free (c->slot[l]);
        }
        free (c->core_size);
        free (c->core_free);
        free (c->core_taken);
        free (c->wfit);
        free (c->wfit_ok);
        free (c->whist);
        free (c->numa_start);
        free (c->numa_pus);
        free (c->numa_pkg);
        free (c->numa_local);
        free (c->numa_free);
        free (c->numa_tasks);
        free (c->pkg_tasks);
        free (c->st);
        free (c->kind);
        free (c->kind_free);
        free (c->next);
        free (c->units);
        free (c->groups);
        free (c->gunits);
        free (c->gcap);
        free (c->gchosen);
        free (c->gtake);
        free (c->gused);
        free (c->keys);
        free (c->list);
        free (c->cursor);
        free (c->dst);
        free (c->dst_ok);
        free (c->l1_tier);
        free (c->l1_nl3);
        free (c->l1_left);
        free (c->l1_ok);
        free (c->cs);
        free (c->cs_ok);
        free (c->dorder);
        free (c->dcap);
        free (c->dchosen);
        free (c->dtake);
        free (c->dcount);
        free (c->dused);
        free (c->out);
        free (c->ravail);
        free (c);
        errno = saved_errno;
    }
}

#define ALLOC(p, n) ((p) = calloc ((n) ? (n) : 1, sizeof (*(p))))

static struct ctx *ctx_create (const topo_t *topo, hwloc_const_bitmap_t avail)
{
    struct ctx *c;
    unsigned n = topo_npus (topo);
    unsigned nnuma;

    if (!(c = calloc (1, sizeof (*c))))
        return NULL;
    c->topo = topo;
    c->npu = n;
    for (int l = 0; l < TOPO_NLEVELS; l++)
        c->nd[l] = topo_ndomains (topo, l);
    nnuma = c->nd[TOPO_NUMA];
    unsigned nn2 = 2 * nnuma; /* the two views of the domain caches */

    if (!ALLOC (c->os, n) || !ALLOC (c->core_size, c->nd[TOPO_CORE])
        || !ALLOC (c->core_free, c->nd[TOPO_CORE])
        || !ALLOC (c->core_taken, c->nd[TOPO_CORE]) || !ALLOC (c->wfit, nnuma)
        || !ALLOC (c->wfit_ok, nnuma) || !ALLOC (c->numa_start, nnuma + 1)
        || !ALLOC (c->numa_pus, n) || !ALLOC (c->numa_pkg, nnuma)
        || !ALLOC (c->numa_local, nnuma) || !ALLOC (c->numa_free, nnuma)
        || !ALLOC (c->st, n) || !ALLOC (c->numa_tasks, nnuma)
        || !ALLOC (c->pkg_tasks, c->nd[TOPO_PKG]) || !ALLOC (c->next, n)
        || !ALLOC (c->units, n) || !ALLOC (c->groups, n)
        || !ALLOC (c->gunits, n) || !ALLOC (c->gcap, n)
        || !ALLOC (c->gchosen, n) || !ALLOC (c->gtake, n)
        || !ALLOC (c->gused, n) || !ALLOC (c->keys, n > nnuma ? n : nnuma)
        || !ALLOC (c->list, n) || !ALLOC (c->cursor, n) || !ALLOC (c->dst, nn2)
        || !ALLOC (c->dst_ok, nn2) || !ALLOC (c->l1_tier, nn2)
        || !ALLOC (c->l1_nl3, nn2) || !ALLOC (c->l1_left, nn2)
        || !ALLOC (c->l1_ok, nn2) || !ALLOC (c->cs, nnuma)
        || !ALLOC (c->cs_ok, nnuma) || !ALLOC (c->dorder, nnuma)
        || !ALLOC (c->dcap, nnuma) || !ALLOC (c->dchosen, nnuma)
        || !ALLOC (c->dtake, nnuma) || !ALLOC (c->dcount, nnuma)
        || !ALLOC (c->dused, nnuma) || !ALLOC (c->out, n)
        || !ALLOC (c->ravail, n) || !ALLOC (c->kind, n))
        goto nomem;
    c->kind_only = -1;
    for (int l = 0; l < TOPO_NLEVELS; l++) {
        if (!ALLOC (c->dom[l], n) || !ALLOC (c->stamp[l], c->nd[l])
            || !ALLOC (c->slot[l], c->nd[l]))
            goto nomem;
    }
    for (unsigned i = 0; i < n; i++) {
        const struct topo_pu *pu = topo_pu (topo, i);
        if (!pu)
            goto inval;
        c->os[i] = pu->os;
        c->kind[i] = pu->kind;
        if (pu->kind >= 0 && (unsigned)pu->kind + 1 > c->nkinds)
            c->nkinds = (unsigned)pu->kind + 1;
        for (int l = 0; l < TOPO_NLEVELS; l++) {
            if (pu->dom[l] >= c->nd[l])
                goto inval;
            c->dom[l][i] = pu->dom[l];
        }
        c->core_size[pu->dom[TOPO_CORE]]++;
        c->numa_start[pu->dom[TOPO_NUMA] + 1]++;
        if (hwloc_bitmap_isset (avail, pu->os)) {
            c->st[i] = PU_FREE;
            c->core_free[pu->dom[TOPO_CORE]]++;
            c->numa_free[pu->dom[TOPO_NUMA]]++;
            c->ravail[c->nravail++] = i;
        }
    }
    for (unsigned k = 0; k < c->nd[TOPO_CORE]; k++)
        if (c->core_size[k] > c->maxcore)
            c->maxcore = c->core_size[k];
    if (!ALLOC (c->whist, c->maxcore + 1))
        goto nomem;
    if (c->nkinds >= 2) {
        size_t nkf = (size_t)nnuma * c->nkinds;
        if (!ALLOC (c->kind_free, nkf))
            goto nomem;
        for (unsigned i = 0; i < n; i++)
            if (c->st[i] == PU_FREE && c->kind[i] >= 0)
                c->kind_free[c->dom[TOPO_NUMA][i] * c->nkinds
                             + (unsigned)c->kind[i]]++;
    }
    for (unsigned d = 0; d < nnuma; d++) {
        c->numa_start[d + 1] += c->numa_start[d];
        c->numa_local[d] = topo_numa_is_local (topo, d);
    }
    /* counting sort of the PUs by NUMA domain, logical order kept */
    for (unsigned d = 0; d < nnuma; d++)
        c->dcount[d] = c->numa_start[d];
    for (unsigned i = 0; i < n; i++) {
        unsigned d = c->dom[TOPO_NUMA][i];
        if (c->dcount[d] == c->numa_start[d])
            c->numa_pkg[d] = c->dom[TOPO_PKG][i];
        c->numa_pus[c->dcount[d]++] = i;
    }
    return c;
inval:
    ctx_destroy (c);
    errno = EINVAL;
    return NULL;
nomem:
    ctx_destroy (c);
    errno = ENOMEM;
    return NULL;
}

static bool core_wholly_free (const struct ctx *c, unsigned core)
{
    return c->core_free[core] == c->core_size[core];
}

/* PU p is free in the current view (and of the kind the choice is
 * restricted to, if it is).  Whether its core is wholly free counts
 * every PU of the core, of any kind. */
static bool pu_free (const struct ctx *c, unsigned p)
{
    return c->st[p] == PU_FREE
           && (c->kind_only < 0 || c->kind[p] == c->kind_only)
           && (c->view == 0 || core_wholly_free (c, c->dom[TOPO_CORE][p]));
}

static int skey_cmp (const void *a, const void *b)
{
    const struct skey *x = a;
    const struct skey *y = b;
    for (int i = 0; i < NKEY; i++) {
        if (x->k[i] != y->k[i])
            return x->k[i] < y->k[i] ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void skey_sort (struct skey *k, unsigned n)
{
    if (n > 1)
        qsort (k, n, sizeof (*k), skey_cmp);
}

static struct skey skey_make (unsigned a,
                              unsigned b,
                              unsigned c,
                              unsigned d,
                              unsigned e,
                              unsigned idx)
{
    struct skey k = {{a, b, c, d, e, 0, 0}, idx};
    return k;
}

static struct skey skey_make7 (unsigned a,
                               unsigned b,
                               unsigned c,
                               unsigned d,
                               unsigned e,
                               unsigned f,
                               unsigned g,
                               unsigned idx)
{
    struct skey k = {{a, b, c, d, e, f, g}, idx};
    return k;
}

/* "More is better" as an ascending key. */
#define DESC(x) (UINT_MAX - (unsigned)(x))

/* ---- statistics and unit lists of one NUMA domain ----------------------- */

static void domain_stat (struct ctx *c, unsigned d, struct dstat *s)
{
    static const enum topo_level lv[3] = {TOPO_L2, TOPO_CORE, TOPO_L3};
    unsigned cnt[3] = {0, 0, 0};
    unsigned wcnt[3] = {0, 0, 0};

    unsigned nfree = 0;

    /* free units, then units with a wholly free core */
    for (int pass = 0; pass < 2; pass++) {
        unsigned *n = pass == 0 ? cnt : wcnt;
        c->gen++;
        for (unsigned j = c->numa_start[d]; j < c->numa_start[d + 1]; j++) {
            unsigned p = c->numa_pus[j];
            if (!pu_free (c, p)
                || (pass == 1 && !core_wholly_free (c, c->dom[TOPO_CORE][p])))
                continue;
            nfree += pass == 0;
            for (int l = 0; l < 3; l++) {
                unsigned id = c->dom[lv[l]][p];
                if (c->stamp[lv[l]][id] != c->gen) {
                    c->stamp[lv[l]][id] = c->gen;
                    n[l]++;
                }
            }
        }
    }
    s->nfree = nfree;
    s->nl2 = cnt[0];
    s->ncore = cnt[1];
    s->nl3 = cnt[2];
    s->nwl2 = wcnt[0];
    s->nwcore = wcnt[1];
    s->nwl3 = wcnt[2];
}

/* The statistics of domain d, recomputed only after a task took PUs in
 * it. */
static const struct dstat *dstat_get (struct ctx *c, unsigned d)
{
    unsigned v = c->view * c->nd[TOPO_NUMA] + d;
    if (!c->dst_ok[v]) {
        domain_stat (c, d, &c->dst[v]);
        c->dst_ok[v] = true;
    }
    return &c->dst[v];
}

/* The cached statistics of domain d in the current view (dstat_get must
 * have run since the last task). */
static const struct dstat *dstat_of (const struct ctx *c, unsigned d)
{
    return &c->dst[c->view * c->nd[TOPO_NUMA] + d];
}

static void domain_invalidate (struct ctx *c, unsigned d)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    c->dst_ok[d] = c->dst_ok[nnuma + d] = false;
    c->l1_ok[d] = c->l1_ok[nnuma + d] = false;
    c->cs_ok[d] = c->wfit_ok[d] = false;
}

/* ---- CPU kinds -----------------------------------------------------------
 */

/* Restrict every choice to the PUs of kind k (-1: every kind).  The
 * cached domain statistics hold one restriction at a time: changing it
 * invalidates them (only on machines with several kinds). */
static void kind_set (struct ctx *c, int k)
{
    if (c->kind_only == k)
        return;
    c->kind_only = k;
    for (unsigned d = 0; d < c->nd[TOPO_NUMA]; d++)
        domain_invalidate (c, d);
}

/* Free PUs of domain d under the current restriction. */
static unsigned domain_free (const struct ctx *c, unsigned d)
{
    if (c->kind_only < 0)
        return c->numa_free[d];
    return c->kind_free[d * c->nkinds + (unsigned)c->kind_only];
}

/* The kind at rank r of the preference: hwloc ranks kinds by rising
 * performance, so the highest index (P-cores) comes first. */
static int kind_at (const struct ctx *c, unsigned r)
{
    return (int)(c->nkinds - 1 - r);
}

/* PLACE_FB_MIXED_KINDS if the PUs of the current task are of several
 * kinds (an unknown kind, -1, counts as one). */
static unsigned task_kind_flag (const struct ctx *c)
{
    for (unsigned i = 1; i < c->nout; i++)
        if (c->kind[c->out[i]] != c->kind[c->out[0]])
            return PLACE_FB_MIXED_KINDS;
    return 0;
}

/* Build the units of level `ul` (TOPO_L2 or TOPO_CORE) of NUMA domain d
 * that have a free PU, grouped by level `gl` (above ul); groups and units
 * in the logical order of their first PU.  Only the part of a unit inside
 * d counts (an L3 may span several NUMA domains). */
static void build_units (struct ctx *c,
                         unsigned d,
                         enum topo_level ul,
                         enum topo_level gl)
{
    unsigned n = 0;

    c->gen++;
    for (unsigned j = c->numa_start[d]; j < c->numa_start[d + 1]; j++) {
        unsigned p = c->numa_pus[j];
        unsigned id = c->dom[ul][p];
        struct unit *u;
        if (c->stamp[ul][id] != c->gen) {
            c->stamp[ul][id] = c->gen;
            c->slot[ul][id] = n;
            u = &c->units[n++];
            u->id = id;
            u->grp = c->dom[gl][p];
            u->first = p;
            u->nfree = u->ntotal = 0;
            u->head = u->tail = NIL;
        }
        u = &c->units[c->slot[ul][id]];
        u->ntotal++;
        if (pu_free (c, p)) {
            c->next[p] = NIL;
            if (u->tail == NIL)
                u->head = p;
            else
                c->next[u->tail] = p;
            u->tail = p;
            u->nfree++;
        }
    }
    /* keep the units with a free PU and rate them */
    unsigned m = 0;
    for (unsigned i = 0; i < n; i++) {
        struct unit *u = &c->units[i];
        if (u->nfree == 0)
            continue;
        if (ul == TOPO_CORE)
            u->quality = core_wholly_free (c, u->id) ? 0 : 2;
        else if (u->nfree == u->ntotal)
            u->quality = 0;
        else {
            u->quality = 2;
            for (unsigned p = u->head; p != NIL; p = c->next[p]) {
                if (core_wholly_free (c, c->dom[TOPO_CORE][p])) {
                    u->quality = 1;
                    break;
                }
            }
        }
        if (m != i)
            c->units[m] = *u;
        m++;
    }
    c->nunits = m;
    /* groups: the stamps of level gl are fresh for this generation */
    c->ngroups = 0;
    for (unsigned i = 0; i < m; i++) {
        struct unit *u = &c->units[i];
        struct group *g;
        if (c->stamp[gl][u->grp] != c->gen) {
            c->stamp[gl][u->grp] = c->gen;
            c->slot[gl][u->grp] = c->ngroups;
            g = &c->groups[c->ngroups++];
            g->id = u->grp;
            g->first = u->first;
            g->nunits = g->nfree = g->wcap = 0;
        }
        u->gslot = c->slot[gl][u->grp];
        g = &c->groups[u->gslot];
        g->nunits++;
        g->nfree += u->nfree;
        if (u->quality == 0)
            g->wcap += u->nfree;
    }
    unsigned off = 0;
    for (unsigned g = 0; g < c->ngroups; g++) {
        c->groups[g].start = off;
        off += c->groups[g].nunits;
        c->groups[g].nunits = 0;
    }
    for (unsigned i = 0; i < m; i++) {
        struct group *g = &c->groups[c->units[i].gslot];
        c->gunits[g->start + g->nunits++] = i;
    }
}

/* Sort the units of every group by (quality, logical order). */
static void sort_group_units (struct ctx *c)
{
    for (unsigned g = 0; g < c->ngroups; g++) {
        struct group *gr = &c->groups[g];
        unsigned *v = &c->gunits[gr->start];
        for (unsigned i = 0; i < gr->nunits; i++) {
            const struct unit *u = &c->units[v[i]];
            c->keys[i] = skey_make (u->quality, u->first, 0, 0, 0, v[i]);
        }
        skey_sort (c->keys, gr->nunits);
        for (unsigned i = 0; i < gr->nunits; i++)
            v[i] = c->keys[i].idx;
    }
}

/* The best PU of a unit: one on a wholly free core, then the lowest. */
static unsigned unit_best_pu (const struct ctx *c, const struct unit *u)
{
    for (unsigned p = u->head; p != NIL; p = c->next[p])
        if (core_wholly_free (c, c->dom[TOPO_CORE][p]))
            return p;
    return u->head;
}

/* Choose among groups of capacity cap[0..m) to cover `need`: fewest
 * groups (the largest first), and for the last one the best fit (the
 * smallest that covers what is left), ties to the lower position.  Writes
 * positions and amounts into chosen[]/take[]; returns the count, 0 if the
 * capacities do not suffice. */
static unsigned select_groups (const unsigned *cap,
                               unsigned m,
                               unsigned need,
                               bool *used,
                               unsigned *chosen,
                               unsigned *take)
{
    unsigned n = 0;
    unsigned rem = need;

    for (unsigned g = 0; g < m; g++)
        used[g] = false;
    while (rem > 0) {
        int fit = -1, big = -1;
        for (unsigned g = 0; g < m; g++) {
            if (used[g] || cap[g] == 0)
                continue;
            if (cap[g] >= rem && (fit < 0 || cap[g] < cap[fit]))
                fit = (int)g;
            if (big < 0 || cap[g] > cap[big])
                big = (int)g;
        }
        if (fit >= 0) {
            chosen[n] = (unsigned)fit;
            take[n++] = rem;
            return n;
        }
        if (big < 0)
            return 0;
        used[big] = true;
        chosen[n] = (unsigned)big;
        take[n++] = cap[big];
        rem -= cap[big];
    }
    return n;
}

/* Several NUMA domains for one task, capacity cap_of[d] each: the fewest
 * domains; among choices of that size, real (local) domains only when
 * they suffice.  Fills c->dchosen (domain indexes) and c->dtake; returns
 * the count (0 if impossible). */
static unsigned select_domains (struct ctx *c,
                                const unsigned *cap_of,
                                unsigned need)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    unsigned m = 0, mloc = 0, n_all, n_loc = 0;

    /* candidate order: local first, then index */
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned d = 0; d < nnuma; d++) {
            if (cap_of[d] > 0 && c->numa_local[d] == (pass == 0)) {
                c->dorder[m] = d;
                c->dcap[m++] = cap_of[d];
            }
        }
        if (pass == 0)
            mloc = m;
    }
    n_all = select_groups (c->dcap, m, need, c->dused, c->dchosen, c->dtake);
    if (n_all == 0)
        return 0;
    if (mloc < m && mloc > 0) {
        unsigned *ch = c->cursor, *tk = c->list; /* scratch */
        n_loc = select_groups (c->dcap, mloc, need, c->dused, ch, tk);
        if (n_loc == n_all) {
            memcpy (c->dchosen, ch, n_loc * sizeof (*ch));
            memcpy (c->dtake, tk, n_loc * sizeof (*tk));
        }
    }
    for (unsigned i = 0; i < n_all; i++)
        c->dchosen[i] = c->dorder[c->dchosen[i]];
    return n_all;
}

static void out_push (struct ctx *c, unsigned p)
{
    c->out[c->nout++] = p;
}

/* ---- picking inside one NUMA domain ------------------------------------ */

/* k PUs of domain d (k <= s->nfree), numa-local style:
 *  - if the domain has k free L2 units: k distinct L2 units, the cleanest
 *    tier that has k of them (0: every PU of the unit free; 1: the unit
 *    has a wholly free core; 2: any), packed into the fewest L3s;
 *  - else k distinct cores spread over as many L2 units as possible:
 *    only wholly free cores when the domain has k of them;
 *  - else one PU per free core, then siblings round by round.
 * In the first case *tier and the number of L3 groups used are returned
 * (0 otherwise).  With dry = true nothing is output (to rank domains). */
static unsigned pick_units (struct ctx *c,
                            unsigned d,
                            unsigned k,
                            const struct dstat *s,
                            bool dry,
                            unsigned *tier)
{
    if (k == 0)
        return 0;
    if (s->nl2 >= k) {
        unsigned nq[3] = {0, 0, 0};
        unsigned t;
        build_units (c, d, TOPO_L2, TOPO_L3);
        for (unsigned i = 0; i < c->nunits; i++)
            nq[c->units[i].quality]++;
        t = nq[0] >= k ? 0 : nq[0] + nq[1] >= k ? 1 : 2;
        for (unsigned g = 0; g < c->ngroups; g++)
            c->gcap[g] = 0;
        for (unsigned i = 0; i < c->nunits; i++)
            if (c->units[i].quality <= t)
                c->gcap[c->units[i].gslot]++;
        unsigned nch = select_groups (c->gcap,
                                      c->ngroups,
                                      k,
                                      c->gused,
                                      c->gchosen,
                                      c->gtake);
        if (tier)
            *tier = t;
        if (dry)
            return nch;
        /* units of quality <= t come first in their group */
        sort_group_units (c);
        for (unsigned i = 0; i < nch; i++) {
            const struct group *g = &c->groups[c->gchosen[i]];
            for (unsigned j = 0; j < c->gtake[i]; j++) {
                const struct unit *u = &c->units[c->gunits[g->start + j]];
                out_push (c, unit_best_pu (c, u));
            }
        }
        return nch;
    }
    if (dry)
        return 0;
    build_units (c, d, TOPO_CORE, TOPO_L2);
    unsigned got = 0;
    if (s->ncore >= k) {
        /* round r takes the r-th best core of every L2 unit; only wholly
         * free cores when there are k of them */
        bool whole = s->nwcore >= k;
        sort_group_units (c);
        for (unsigned r = 0; got < k; r++) {
            for (unsigned g = 0; g < c->ngroups && got < k; g++) {
                const struct group *gr = &c->groups[g];
                if (r < gr->nunits) {
                    const struct unit *u = &c->units[c->gunits[gr->start + r]];
                    if (whole && u->quality != 0)
                        continue;
                    out_push (c, unit_best_pu (c, u));
                    got++;
                }
            }
        }
    } else {
        /* round r takes the r-th free PU of every core, logical order */
        for (unsigned i = 0; i < c->nunits; i++)
            c->cursor[i] = c->units[i].head;
        while (got < k) {
            unsigned before = got;
            for (unsigned i = 0; i < c->nunits && got < k; i++) {
                if (c->cursor[i] != NIL) {
                    out_push (c, c->cursor[i]);
                    c->cursor[i] = c->next[c->cursor[i]];
                    got++;
                }
            }
            if (got == before)
                break; /* k > free PUs: cannot happen, callers check */
        }
    }
    return 0;
}

/* ---- flags and commit ----------------------------------------------------
 */

/* Fallback bits that can be read off the task's PUs. */
static unsigned task_flags (struct ctx *c)
{
    unsigned fb = 0;
    unsigned nnuma_used = 0;

    c->gen++;
    for (unsigned i = 0; i < c->nout; i++) {
        unsigned p = c->out[i];
        unsigned core = c->dom[TOPO_CORE][p];
        unsigned l2 = c->dom[TOPO_L2][p];
        unsigned numa = c->dom[TOPO_NUMA][p];
        if (c->stamp[TOPO_CORE][core] == c->gen)
            fb |= PLACE_FB_SHARED_CORE;
        c->stamp[TOPO_CORE][core] = c->gen;
        if (c->stamp[TOPO_L2][l2] == c->gen)
            fb |= PLACE_FB_SHARED_L2;
        c->stamp[TOPO_L2][l2] = c->gen;
        if (c->stamp[TOPO_NUMA][numa] != c->gen) {
            c->stamp[TOPO_NUMA][numa] = c->gen;
            nnuma_used++;
        }
        if (!c->numa_local[numa])
            fb |= PLACE_FB_NO_LOCAL_NUMA;
        if (c->core_taken[core] > 0)
            fb |= PLACE_FB_SHARED_WITH_TASK;
    }
    if (nnuma_used > 1)
        fb |= PLACE_FB_MULTI_NUMA;
    return fb;
}

/* Mark the task's PUs taken and fill its sets.  Fails (EINVAL) on a
 * placement that is not C distinct free PUs: a bug, never silently used. */
static int task_commit (struct ctx *c, unsigned cpt, struct place_task *t)
{
    if (c->nout != cpt)
        goto bug;
    for (unsigned i = 0; i < c->nout; i++) {
        unsigned p = c->out[i];
        if (p >= c->npu || c->st[p] != PU_FREE)
            goto bug;
        c->st[p] = PU_TAKEN;
        c->core_free[c->dom[TOPO_CORE][p]]--;
        c->core_taken[c->dom[TOPO_CORE][p]]++;
        c->numa_free[c->dom[TOPO_NUMA][p]]--;
        if (c->kind_free && c->kind[p] >= 0)
            c->kind_free[c->dom[TOPO_NUMA][p] * c->nkinds
                         + (unsigned)c->kind[p]]--;
        if (hwloc_bitmap_set (t->cpus, c->os[p]) < 0)
            return -1;
    }
    c->gen++;
    for (unsigned i = 0; i < c->nout; i++) {
        unsigned pkg = c->dom[TOPO_PKG][c->out[i]];
        if (c->stamp[TOPO_PKG][pkg] != c->gen) {
            c->stamp[TOPO_PKG][pkg] = c->gen;
            c->pkg_tasks[pkg]++;
        }
    }
    for (unsigned i = 0; i < c->nout; i++) {
        unsigned numa = c->dom[TOPO_NUMA][c->out[i]];
        if (c->stamp[TOPO_NUMA][numa] != c->gen) {
            c->stamp[TOPO_NUMA][numa] = c->gen;
            domain_invalidate (c, numa);
            c->numa_tasks[numa]++;
            hwloc_const_bitmap_t ns = topo_numa_nodeset (c->topo, numa);
            if (ns && hwloc_bitmap_or (t->mems, t->mems, ns) < 0)
                return -1;
        }
    }
    return 0;
bug:
    errno = EINVAL;
    return -1;
}

/* ---- numa-local ----------------------------------------------------------
 */

/* The wholly free cores of domain d by size: c->whist[n] is the number of
 * them with n PUs (1 <= n <= maxcore).  Returns c->whist. */
static unsigned *whole_core_sizes (struct ctx *c, unsigned d)
{
    unsigned *h = c->whist;

    memset (h, 0, (c->maxcore + 1) * sizeof (*h));
    c->gen++;
    for (unsigned j = c->numa_start[d]; j < c->numa_start[d + 1]; j++) {
        unsigned core = c->dom[TOPO_CORE][c->numa_pus[j]];
        if (c->stamp[TOPO_CORE][core] != c->gen) {
            c->stamp[TOPO_CORE][core] = c->gen;
            if (core_wholly_free (c, core))
                h[c->core_size[core]]++;
        }
    }
    return h;
}

/* How many tasks of cpt PUs the wholly free cores of domain d hold,
 * the `skip` largest of them left out: greedy, the largest cores first,
 * each task on the fewest cores (as cache-shared places it). */
static unsigned domain_fit (struct ctx *c,
                            unsigned d,
                            unsigned skip,
                            unsigned cpt)
{
    unsigned *h = whole_core_sizes (c, d);
    unsigned tasks = 0, sum = 0;

    for (unsigned sz = c->maxcore; sz > 0; sz--) {
        for (unsigned k = h[sz]; k > 0; k--) {
            if (skip > 0) {
                skip--;
                continue;
            }
            sum += sz;
            if (sum >= cpt) {
                tasks++;
                sum = 0;
            }
        }
    }
    return tasks;
}

/* The fewest wholly free cores of domain d (largest first) holding cpt
 * PUs; 0 if they do not. */
static unsigned domain_kmin (struct ctx *c, unsigned d, unsigned cpt)
{
    unsigned *h = whole_core_sizes (c, d);
    unsigned sum = 0, k = 0;

    for (unsigned sz = c->maxcore; sz > 0; sz--) {
        for (unsigned n = h[sz]; n > 0; n--) {
            sum += sz;
            k++;
            if (sum >= cpt)
                return k;
        }
    }
    return 0;
}

/* Max - min tasks per domain once `rest` more tasks are placed, each in
 * a domain with the fewest tasks among those with room (water-filling):
 * cnt[e] tasks now, room for fit[e] more.  Only the domains with a task
 * or room count. */
static unsigned fill_imbalance (const unsigned *cnt,
                                const unsigned *fit,
                                unsigned n,
                                unsigned rest)
{
    unsigned lo = 0, hi = 0;

    for (unsigned e = 0; e < n; e++)
        if (cnt[e] + fit[e] > hi)
            hi = cnt[e] + fit[e];
    /* the highest level L whose filling needs at most rest tasks */
    while (lo < hi) {
        unsigned mid = lo + (hi - lo + 1) / 2;
        uint64_t need = 0;
        for (unsigned e = 0; e < n; e++) {
            unsigned top = cnt[e] + fit[e] < mid ? cnt[e] + fit[e] : mid;
            need += top > cnt[e] ? top - cnt[e] : 0;
        }
        if (need <= rest)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint64_t used = 0;
    for (unsigned e = 0; e < n; e++) {
        unsigned top = cnt[e] + fit[e] < lo ? cnt[e] + fit[e] : lo;
        used += top > cnt[e] ? top - cnt[e] : 0;
    }
    unsigned r = (unsigned)(rest - used);
    unsigned mn = UINT_MAX, mx = 0;
    for (unsigned e = 0; e < n; e++) {
        if (cnt[e] == 0 && fit[e] == 0)
            continue;
        unsigned top = cnt[e] + fit[e] < lo ? cnt[e] + fit[e] : lo;
        unsigned f = cnt[e] > top ? cnt[e] : top;
        if (r > 0 && f == lo && cnt[e] + fit[e] > lo) {
            f++;
            r--;
        }
        if (f < mn)
            mn = f;
        if (f > mx)
            mx = f;
    }
    return mx >= mn ? mx - mn : 0;
}

/* The step budget: after this task opens `k` wholly free cores of
 * domain d (counted as its largest), the wholly free cores of the node
 * still hold the rest of the step, and the rest of the step, each task
 * sent to a domain with the fewest tasks, ends no less balanced over the
 * NUMA domains than if this task took the fewest wholly free cores. */
static bool budget_ok (struct ctx *c, unsigned d, unsigned k, unsigned cpt)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    unsigned fit = 0;

    if (c->rest == 0)
        return true;
    for (unsigned e = 0; e < nnuma; e++) {
        if (e == d)
            continue;
        if (!c->wfit_ok[e]) {
            c->wfit[e] = domain_fit (c, e, 0, cpt);
            c->wfit_ok[e] = true;
        }
        fit += c->wfit[e];
    }
    unsigned fd = domain_fit (c, d, k, cpt);
    if (fit + fd < c->rest)
        return false;
    unsigned kmin = domain_kmin (c, d, cpt);
    if (kmin == 0 || kmin >= k)
        return true;                            /* spreading costs no core */
    unsigned *cnt = c->dchosen, *fv = c->dtake; /* scratch */
    for (unsigned e = 0; e < nnuma; e++) {
        cnt[e] = c->numa_tasks[e] + (e == d);
        fv[e] = e == d ? fd : c->wfit[e];
    }
    unsigned spread = fill_imbalance (cnt, fv, nnuma, c->rest);
    fv[d] = domain_fit (c, d, kmin, cpt);
    unsigned packed = fill_imbalance (cnt, fv, nnuma, c->rest);
    return spread <= packed;
}

/* The domain numa-local's levels choose in the current view (some
 * domain must have cpt free PUs in it); *level is set. */
static unsigned numa_local_domain (struct ctx *c,
                                   unsigned cpt,
                                   unsigned *level_out)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    unsigned nv = c->view * nnuma;
    unsigned level = 4;
    struct skey best = {{0}, NIL};

    for (unsigned d = 0; d < nnuma; d++) {
        const struct dstat *s = dstat_get (c, d);
        unsigned l = s->nl2 >= cpt     ? 1
                     : s->ncore >= cpt ? 2
                     : s->nfree >= cpt ? 3
                                       : 4;
        unsigned pseudo = !c->numa_local[d];
        unsigned t = c->numa_tasks[d];
        struct skey k;
        if (l < level)
            level = l;
        /* local before pseudo, then the fewest tasks of the step (NUMA
         * balance), then the level, then the level's ranking */
        if (l == 1) {
            if (!c->l1_ok[nv + d]) {
                unsigned left = 0;
                c->l1_nl3[nv + d] =
                    pick_units (c, d, cpt, s, true, &c->l1_tier[nv + d]);
                for (unsigned g = 0; g < c->ngroups; g++)
                    left += c->gcap[g];
                c->l1_left[nv + d] = left - cpt;
                c->l1_ok[nv + d] = true;
            }
            k = skey_make7 (pseudo,
                            t,
                            1,
                            c->l1_tier[nv + d],
                            c->l1_nl3[nv + d],
                            c->l1_left[nv + d],
                            0,
                            d);
        } else if (l == 2) {
            bool whole = s->nwcore >= cpt;
            k = whole ? skey_make7 (pseudo,
                                    t,
                                    2,
                                    0,
                                    DESC (s->nwl2),
                                    s->nwl3,
                                    s->nwcore - cpt,
                                    d)
                      : skey_make7 (pseudo,
                                    t,
                                    2,
                                    1,
                                    DESC (s->nl2),
                                    s->nl3,
                                    s->ncore - cpt,
                                    d);
        } else if (l == 3)
            k = skey_make7 (pseudo,
                            t,
                            3,
                            DESC (s->ncore),
                            DESC (s->nl2),
                            s->nl3,
                            s->nfree - cpt,
                            d);
        else
            continue;
        if (best.idx == NIL || skey_cmp (&k, &best) < 0)
            best = k;
    }
    if (best.idx != NIL)
        level = best.k[2];
    *level_out = level;
    return best.idx;
}

static void cs_pick (struct ctx *c,
                     unsigned d,
                     unsigned k,
                     bool dry,
                     struct cs_result *res);

static unsigned task_numa_local (struct ctx *c, unsigned cpt)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    unsigned level, dd;

    /* 1. Some domain holds the task on wholly free cores: the levels on
     * those cores alone, so the task shares no core with an earlier task
     * or another step.  It opens one core per CPU only while the wholly
     * free cores left still hold the rest of the step; otherwise it
     * takes the fewest wholly free cores, each filled. */
    c->view = 1;
    dd = numa_local_domain (c, cpt, &level);
    if (level <= 3) {
        const struct dstat *s = dstat_of (c, dd);
        unsigned k = s->ncore < cpt ? s->ncore : cpt;
        if (budget_ok (c, dd, k, cpt))
            pick_units (c, dd, cpt, s, false, NULL);
        else {
            struct cs_result r;
            cs_pick (c, dd, cpt, false, &r);
        }
        c->view = 0;
        return task_flags (c);
    }

    /* 2. Some domain has cpt free PUs, but none on wholly free cores: the
     * one whose wholly free cores hold the most PUs (best fit, then the
     * lowest index); the task takes every PU of those cores, then the
     * rest by the levels on the other free PUs. */
    struct skey best = {{0}, NIL};
    for (unsigned e = 0; e < nnuma; e++) {
        c->view = 0;
        const struct dstat *s0 = dstat_get (c, e);
        if (s0->nfree < cpt)
            continue;
        c->view = 1;
        const struct dstat *s1 = dstat_get (c, e);
        struct skey k = skey_make (!c->numa_local[e],
                                   DESC (s1->nfree),
                                   s0->nfree - cpt,
                                   0,
                                   0,
                                   e);
        if (best.idx == NIL || skey_cmp (&k, &best) < 0)
            best = k;
    }
    c->view = 0;
    if (best.idx != NIL) {
        dd = best.idx;
        c->view = 1;
        const struct dstat *s1 = dstat_get (c, dd);
        unsigned nw = s1->nfree;
        pick_units (c, dd, nw, s1, false, NULL);
        c->view = 0;
        /* hide those PUs while the rest is chosen */
        for (unsigned i = 0; i < c->nout; i++) {
            c->st[c->out[i]] = PU_TAKEN;
            c->core_free[c->dom[TOPO_CORE][c->out[i]]]--;
        }
        domain_invalidate (c, dd);
        pick_units (c, dd, cpt - nw, dstat_get (c, dd), false, NULL);
        for (unsigned i = 0; i < nw; i++) {
            c->st[c->out[i]] = PU_FREE;
            c->core_free[c->dom[TOPO_CORE][c->out[i]]]++;
        }
        domain_invalidate (c, dd);
        return task_flags (c);
    }
    for (unsigned e = 0; e < nnuma; e++)
        dstat_get (c, e);

    /* No domain has room: the fewest domains, distinct L2 units first,
     * then distinct cores, then siblings. */
    unsigned *cap_of = c->dcount;
    for (unsigned d = 0; d < nnuma; d++)
        cap_of[d] = c->dst[d].nfree;
    unsigned n = select_domains (c, cap_of, cpt);
    unsigned *amount = c->dtake; /* overwritten in place below */
    for (unsigned i = 0; i < n; i++)
        amount[i] = 0;
    unsigned rem = cpt;
    for (int pass = 0; pass < 3 && rem > 0; pass++) {
        for (unsigned i = 0; i < n && rem > 0; i++) {
            const struct dstat *s = &c->dst[c->dchosen[i]];
            unsigned cap = pass == 0   ? s->nl2
                           : pass == 1 ? s->ncore
                                       : s->nfree;
            if (cap > amount[i]) {
                unsigned add = cap - amount[i] < rem ? cap - amount[i] : rem;
                amount[i] += add;
                rem -= add;
            }
        }
    }
    for (unsigned i = 0; i < n; i++)
        pick_units (c,
                    c->dchosen[i],
                    amount[i],
                    &c->dst[c->dchosen[i]],
                    false,
                    NULL);
    return task_flags (c) | PLACE_FB_MULTI_NUMA;
}

/* numa-local on a machine with several CPU kinds: the task takes PUs of
 * one kind where one kind has room in a domain.  Separation from other
 * tasks and steps still comes first, then the levels, then the kind:
 *  1. a kind with cpt PUs on wholly free cores in a domain: local first,
 *     then the best level, then the preferred kind;
 *  2. else, every kind together on wholly free cores (mixed-kinds);
 *  3. else a kind with cpt free PUs in a domain: local first, then the
 *     most PUs on its wholly free cores there, then the preferred kind;
 *  4. else every kind (mixed-kinds if the task mixes them). */
static unsigned task_numa_local_kinds (struct ctx *c, unsigned cpt)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    struct skey best = {{0}, NIL};
    unsigned level, d, fb;
    int kbest;

    if (c->nkinds < 2)
        return task_numa_local (c, cpt);
    for (unsigned r = 0; r < c->nkinds; r++) {
        kind_set (c, kind_at (c, r));
        c->view = 1;
        d = numa_local_domain (c, cpt, &level);
        c->view = 0;
        if (level > 3)
            continue;
        struct skey k = skey_make (!c->numa_local[d], level, r, 0, 0, r);
        if (best.idx == NIL || skey_cmp (&k, &best) < 0)
            best = k;
    }
    if (best.idx != NIL)
        kbest = kind_at (c, best.idx);
    else {
        kind_set (c, -1);
        c->view = 1;
        numa_local_domain (c, cpt, &level);
        c->view = 0;
        kbest = -1;
        if (level > 3) {
            for (unsigned r = 0; r < c->nkinds; r++) {
                kind_set (c, kind_at (c, r));
                for (unsigned e = 0; e < nnuma; e++) {
                    if (domain_free (c, e) < cpt)
                        continue;
                    c->view = 1;
                    unsigned whole = dstat_get (c, e)->nfree;
                    c->view = 0;
                    struct skey k = skey_make (!c->numa_local[e],
                                               DESC (whole),
                                               r,
                                               0,
                                               0,
                                               r);
                    if (best.idx == NIL || skey_cmp (&k, &best) < 0)
                        best = k;
                }
            }
            if (best.idx != NIL)
                kbest = kind_at (c, best.idx);
        }
    }
    kind_set (c, kbest);
    fb = task_numa_local (c, cpt) | task_kind_flag (c);
    kind_set (c, -1);
    return fb;
}

/* ---- numa-spread ---------------------------------------------------------
 */

/* Did the PUs out[start..] of domain d take a PU on a core that is not
 * wholly free (beside an earlier task's or another step's PU) while a
 * wholly free core of d (of the kind the choice is restricted to) got no
 * PU of the task? */
static bool shares_avoidably (struct ctx *c, unsigned d, unsigned start)
{
    bool shared = false;

    c->gen++;
    for (unsigned i = start; i < c->nout; i++) {
        unsigned core = c->dom[TOPO_CORE][c->out[i]];
        c->stamp[TOPO_CORE][core] = c->gen;
        if (!core_wholly_free (c, core))
            shared = true;
    }
    if (!shared)
        return false;
    for (unsigned j = c->numa_start[d]; j < c->numa_start[d + 1]; j++) {
        unsigned p = c->numa_pus[j];
        unsigned core = c->dom[TOPO_CORE][p];
        if (pu_free (c, p) && core_wholly_free (c, core)
            && c->stamp[TOPO_CORE][core] != c->gen)
            return true;
    }
    return false;
}

/* k PUs of domain d on distinct cores where it has k free cores, the
 * wholly free cores first: by the levels on those cores alone when they
 * are k or more, else one PU on each of them and the rest by the levels
 * on the other cores (their PUs hidden meanwhile, so that no core gets
 * two while a free core has none). */
static void pick_clean_first (struct ctx *c,
                              unsigned d,
                              unsigned k,
                              const struct dstat *s)
{
    unsigned start = c->nout;

    c->view = 1;
    const struct dstat *s1 = dstat_get (c, d);
    unsigned nw = s1->ncore < k ? s1->ncore : k;
    pick_units (c, d, nw, s1, false, NULL);
    c->view = 0;
    if (nw == k)
        return;
    /* hide the PUs of those cores (or only those taken, where the rest
     * needs siblings) while the rest is chosen */
    bool whole = k <= s->ncore;
    c->gen++;
    for (unsigned i = start; i < c->nout; i++)
        c->stamp[TOPO_CORE][c->dom[TOPO_CORE][c->out[i]]] = c->gen;
    for (unsigned j = c->numa_start[d]; j < c->numa_start[d + 1]; j++) {
        unsigned p = c->numa_pus[j];
        if (c->st[p] != PU_FREE
            || c->stamp[TOPO_CORE][c->dom[TOPO_CORE][p]] != c->gen)
            continue;
        bool mine = false;
        for (unsigned i = start; i < c->nout && !mine; i++)
            mine = c->out[i] == p;
        if (whole || mine) {
            c->st[p] = PU_HIDDEN;
            c->core_free[c->dom[TOPO_CORE][p]]--;
        }
    }
    domain_invalidate (c, d);
    pick_units (c, d, k - nw, dstat_get (c, d), false, NULL);
    for (unsigned j = c->numa_start[d]; j < c->numa_start[d + 1]; j++) {
        unsigned p = c->numa_pus[j];
        if (c->st[p] == PU_HIDDEN) {
            c->st[p] = PU_FREE;
            c->core_free[c->dom[TOPO_CORE][p]]++;
        }
    }
    domain_invalidate (c, d);
}

static unsigned task_numa_spread (struct ctx *c, unsigned cpt)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    unsigned ncand = 0;
    struct skey *k = c->keys;

    /* candidates by (pseudo, package, tasks of the step in the domain,
     * free cores desc, free PUs desc, index): their rank inside their
     * package */
    for (unsigned d = 0; d < nnuma; d++) {
        if (c->numa_free[d] == 0)
            continue;
        dstat_get (c, d);
        k[ncand++] = skey_make (!c->numa_local[d],
                                c->numa_pkg[d],
                                c->numa_tasks[d],
                                DESC (c->dst[d].ncore),
                                DESC (c->dst[d].nfree),
                                d);
    }
    skey_sort (k, ncand);
    for (unsigned i = 0, rank = 0; i < ncand; i++) {
        if (i > 0
            && (k[i].k[0] != k[i - 1].k[0] || k[i].k[1] != k[i - 1].k[1]))
            rank = 0;
        c->dcount[k[i].idx] = rank++;
    }
    /* alternate packages: rank 0 of every package, then rank 1, ...;
     * inside a round the package with the fewest tasks of the step first
     * (so the tasks of a step rotate over the packages), then the emptier
     * domain, then the package index (idx carries it, d is idx % nnuma) */
    for (unsigned i = 0; i < ncand; i++) {
        unsigned d = k[i].idx;
        unsigned pkg = c->numa_pkg[d];
        k[i] = skey_make (!c->numa_local[d],
                          c->dcount[d],
                          c->pkg_tasks[pkg],
                          DESC (c->dst[d].ncore),
                          DESC (c->dst[d].nfree),
                          pkg * nnuma + d);
    }
    skey_sort (k, ncand);
    for (unsigned i = 0; i < ncand; i++)
        k[i].idx %= nnuma;
    unsigned nk = cpt < ncand ? cpt : ncand;
    unsigned total_cores = 0;
    for (unsigned i = 0; i < nk; i++) {
        c->dorder[i] = k[i].idx;
        total_cores += c->dst[k[i].idx].ncore;
    }
    bool by_pu = total_cores < cpt;
    for (unsigned i = 0; i < nk; i++) {
        const struct dstat *s = &c->dst[c->dorder[i]];
        c->dcap[i] = by_pu ? s->nfree : s->ncore;
        c->dtake[i] = 0;
    }
    /* water-filling: one more to every domain with room, round by round */
    unsigned rem = cpt;
    while (rem > 0) {
        unsigned room = 0;
        for (unsigned i = 0; i < nk; i++)
            if (c->dtake[i] < c->dcap[i])
                room++;
        if (room == 0)
            break; /* capacities checked by the caller: cannot happen */
        for (unsigned i = 0; i < nk && rem > 0; i++) {
            if (c->dtake[i] < c->dcap[i]) {
                c->dtake[i]++;
                rem--;
            }
        }
    }
    unsigned lo = UINT_MAX, hi = 0;
    bool l2_shared = false, l2_unused = false;
    for (unsigned i = 0; i < nk; i++) {
        const struct dstat *s = &c->dst[c->dorder[i]];
        unsigned t = c->dtake[i];
        if (t < lo)
            lo = t;
        if (t > hi)
            hi = t;
        if (t > s->nl2)
            l2_shared = true;
        if (t < s->nl2)
            l2_unused = true;
        /* no PU beside another task's or step's while a wholly free core
         * of the domain stays unused (doc/policies.md, numa-spread 5) */
        unsigned start = c->nout;
        pick_units (c, c->dorder[i], t, s, false, NULL);
        if (shares_avoidably (c, c->dorder[i], start)) {
            c->nout = start;
            pick_clean_first (c, c->dorder[i], t, s);
        }
    }
    unsigned fb = task_flags (c);
    fb &= ~(PLACE_FB_MULTI_NUMA | PLACE_FB_SHARED_L2);
    if (l2_shared && l2_unused)
        fb |= PLACE_FB_SHARED_L2;
    if (hi - lo > 1)
        fb |= PLACE_FB_UNBALANCED;
    return fb;
}

/* numa-spread on a machine with several CPU kinds: the task is spread
 * over the PUs of one kind where that kind has cpt wholly free cores in
 * the candidate domains (one core per CPU, no SMT sibling), the
 * preferred kind first; otherwise over every kind (mixed-kinds if the
 * task spans them). */
static unsigned task_numa_spread_kinds (struct ctx *c, unsigned cpt)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    int kbest = -1;
    unsigned fb;

    if (c->nkinds < 2)
        return task_numa_spread (c, cpt);
    for (unsigned r = 0; r < c->nkinds && kbest < 0; r++) {
        unsigned cores = 0;
        kind_set (c, kind_at (c, r));
        c->view = 1;
        for (unsigned e = 0; e < nnuma; e++)
            cores += dstat_get (c, e)->ncore;
        c->view = 0;
        if (cores >= cpt)
            kbest = kind_at (c, r);
    }
    kind_set (c, kbest);
    fb = task_numa_spread (c, cpt) | task_kind_flag (c);
    kind_set (c, -1);
    return fb;
}

/* ---- cache-shared --------------------------------------------------------
 */

/* k PUs of domain d on the fewest wholly free cores, each filled before
 * the next is opened; partially free cores after the wholly free ones.
 * With dry = true, only the result is computed. */
static void cs_pick (struct ctx *c,
                     unsigned d,
                     unsigned k,
                     bool dry,
                     struct cs_result *res)
{
    struct skey *key = c->keys;
    unsigned nw = 0, wcap = 0, nlist = 0;

    build_units (c, d, TOPO_CORE, TOPO_L3);
    for (unsigned i = 0; i < c->nunits; i++) {
        if (c->units[i].quality == 0) {
            nw++;
            wcap += c->units[i].nfree;
        }
    }
    if (wcap >= k) {
        /* the fewest wholly free cores: the largest first */
        unsigned kmin = 0, sum = 0;
        for (unsigned i = 0, j = 0; i < c->nunits; i++)
            if (c->units[i].quality == 0)
                key[j++] = skey_make (DESC (c->units[i].nfree), 0, 0, 0, 0, i);
        skey_sort (key, nw);
        while (sum < k)
            sum += c->units[key[kmin++].idx].nfree;
        /* one L3 that reaches k with kmin of its cores: the best fit */
        for (unsigned i = 0, j = 0; i < c->nunits; i++) {
            const struct unit *u = &c->units[i];
            if (u->quality == 0)
                key[j++] = skey_make (u->gslot,
                                      DESC (u->nfree),
                                      c->dom[TOPO_L2][u->first],
                                      u->first,
                                      0,
                                      i);
        }
        skey_sort (key, nw);
        int best = -1;
        for (unsigned i = 0; i < nw;) {
            unsigned g = key[i].k[0], cnt = 0, s = 0, j = i;
            for (; j < nw && key[j].k[0] == g; j++) {
                if (cnt < kmin) {
                    s += c->units[key[j].idx].nfree;
                    cnt++;
                }
            }
            if (s >= k
                && (best < 0 || c->groups[g].wcap < c->groups[best].wcap))
                best = (int)g;
            i = j;
        }
        if (best >= 0) {
            for (unsigned i = 0; i < nw; i++)
                if (key[i].k[0] == (unsigned)best)
                    c->list[nlist++] = key[i].idx;
        } else {
            for (unsigned i = 0, j = 0; i < c->nunits; i++) {
                const struct unit *u = &c->units[i];
                if (u->quality == 0)
                    key[j++] = skey_make (DESC (u->nfree),
                                          DESC (c->groups[u->gslot].wcap),
                                          u->gslot,
                                          c->dom[TOPO_L2][u->first],
                                          u->first,
                                          i);
            }
            skey_sort (key, nw);
            for (unsigned i = 0; i < nw; i++)
                c->list[nlist++] = key[i].idx;
        }
    } else {
        for (unsigned i = 0; i < c->nunits; i++) {
            const struct unit *u = &c->units[i];
            key[i] = skey_make (u->quality != 0,
                                DESC (u->nfree),
                                c->dom[TOPO_L2][u->first],
                                u->first,
                                0,
                                i);
        }
        skey_sort (key, c->nunits);
        for (unsigned i = 0; i < c->nunits; i++)
            c->list[nlist++] = key[i].idx;
    }
    /* fill core after core */
    unsigned got = 0;
    res->cores = res->l3 = 0;
    res->partial = false;
    c->gen++;
    for (unsigned i = 0; i < nlist && got < k; i++) {
        const struct unit *u = &c->units[c->list[i]];
        res->cores++;
        if (u->quality != 0)
            res->partial = true;
        if (c->stamp[TOPO_L3][u->grp] != c->gen) {
            c->stamp[TOPO_L3][u->grp] = c->gen;
            res->l3++;
        }
        for (unsigned p = u->head; p != NIL && got < k; p = c->next[p]) {
            if (!dry)
                out_push (c, p);
            got++;
        }
    }
}

/* cache-shared: on a machine with several CPU kinds, each kind alone
 * (preferred first), then every kind together, ranked after locality
 * and partial cores: a task mixes kinds only where no kind has room in
 * a domain without a partial core, or no kind has room at all. */
static unsigned task_cache_shared (struct ctx *c, unsigned cpt)
{
    unsigned nnuma = c->nd[TOPO_NUMA];
    unsigned nr = c->nkinds >= 2 ? c->nkinds + 1 : 1;
    struct skey best = {{0}, NIL};
    struct cs_result r;

    for (unsigned ri = 0; ri < nr; ri++) {
        kind_set (c, ri + 1 == nr ? -1 : kind_at (c, ri));
        for (unsigned d = 0; d < nnuma; d++) {
            if (domain_free (c, d) < cpt)
                continue;
            if (!c->cs_ok[d]) {
                cs_pick (c, d, cpt, true, &c->cs[d]);
                c->cs_ok[d] = true;
            }
            r = c->cs[d];
            struct skey k = skey_make7 (!c->numa_local[d],
                                        r.partial,
                                        ri,
                                        r.cores,
                                        r.l3,
                                        domain_free (c, d) - cpt,
                                        0,
                                        ri * nnuma + d);
            if (best.idx == NIL || skey_cmp (&k, &best) < 0)
                best = k;
        }
    }
    if (best.idx != NIL) {
        unsigned ri = best.idx / nnuma;
        kind_set (c, ri + 1 == nr ? -1 : kind_at (c, ri));
        cs_pick (c, best.idx % nnuma, cpt, false, &r);
        kind_set (c, -1);
        return (task_flags (c)
                & (PLACE_FB_NO_LOCAL_NUMA | PLACE_FB_SHARED_WITH_TASK))
               | (r.partial ? PLACE_FB_PARTIAL_CORE : 0) | task_kind_flag (c);
    }
    kind_set (c, -1);
    unsigned fb = PLACE_FB_MULTI_NUMA;
    unsigned n = select_domains (c, c->numa_free, cpt);
    for (unsigned i = 0; i < n; i++) {
        cs_pick (c, c->dchosen[i], c->dtake[i], false, &r);
        if (r.partial)
            fb |= PLACE_FB_PARTIAL_CORE;
    }
    return fb | task_kind_flag (c)
           | (task_flags (c)
              & (PLACE_FB_NO_LOCAL_NUMA | PLACE_FB_SHARED_WITH_TASK));
}

/* ---- random --------------------------------------------------------------
 */

/* splitmix64 (Steele, Lea, Flood 2014): the same sequence on every libc. */
static uint64_t splitmix64 (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, bound), bound > 0, without modulo bias. */
static uint64_t rand_below (uint64_t *state, uint64_t bound)
{
    uint64_t threshold = (0 - bound) % bound; /* 2^64 mod bound */
    for (;;) {
        uint64_t r = splitmix64 (state);
        if (r >= threshold)
            return r % bound;
    }
}

/* Partial Fisher-Yates: the first cpt PUs of the remaining array. */
static unsigned task_random (struct ctx *c, unsigned cpt, uint64_t *state)
{
    unsigned *a = c->ravail + c->rdrawn;
    unsigned m = c->nravail - c->rdrawn;
    unsigned k = cpt <= m ? cpt : m;

    for (unsigned j = 0; j < k; j++) {
        unsigned r = j + (unsigned)rand_below (state, m - j);
        unsigned t = a[j];
        a[j] = a[r];
        a[r] = t;
        out_push (c, a[j]);
    }
    c->rdrawn += k;
    return task_flags (c) & PLACE_FB_NO_LOCAL_NUMA;
}

/* ---- entry points --------------------------------------------------------
 */

void place_plan_destroy (struct place_plan *plan)
{
    if (plan) {
        int saved_errno = errno;
        if (plan->tasks) {
            for (unsigned i = 0; i < plan->ntasks; i++) {
                hwloc_bitmap_free (plan->tasks[i].cpus);
                hwloc_bitmap_free (plan->tasks[i].mems);
            }
            free (plan->tasks);
        }
        free (plan);
        errno = saved_errno;
    }
}

static struct place_plan *plan_create (const struct place_request *req)
{
    struct place_plan *plan;

    if (!(plan = calloc (1, sizeof (*plan))))
        return NULL;
    plan->policy = req->policy;
    plan->ntasks = req->ntasks;
    plan->cpus_per_task = req->cpus_per_task;
    if (!(plan->tasks = calloc (req->ntasks, sizeof (*plan->tasks))))
        goto error;
    for (unsigned i = 0; i < req->ntasks; i++) {
        if (!(plan->tasks[i].cpus = hwloc_bitmap_alloc ())
            || !(plan->tasks[i].mems = hwloc_bitmap_alloc ()))
            goto error;
    }
    return plan;
error:
    place_plan_destroy (plan);
    errno = ENOMEM;
    return NULL;
}

/* "request of 2 tasks x 8 CPUs = 16 CPUs exceeds the 12 available
 * (allowed 0-15 minus busy 0-3)"; busy NULL or empty: no busy part. */
static void too_large (pin_error_t *errp,
                       const struct place_request *req,
                       uint64_t total,
                       unsigned navail,
                       hwloc_const_bitmap_t allowed,
                       hwloc_const_bitmap_t busy)
{
    char *a = topo_list_format (allowed);
    char *b =
        !busy || hwloc_bitmap_iszero (busy) ? NULL : topo_list_format (busy);

    errprintf (errp,
               "request of %u task%s x %u CPU%s = %llu CPU%s exceeds "
               "the %u available (allowed %s%s%s)",
               req->ntasks,
               req->ntasks == 1 ? "" : "s",
               req->cpus_per_task,
               req->cpus_per_task == 1 ? "" : "s",
               (unsigned long long)total,
               total == 1 ? "" : "s",
               navail,
               a && *a ? a : "none",
               b ? " minus busy " : "",
               b ? b : "");
    free (a);
    free (b);
}

/* ---- too large: the fallback (doc/policies.md, "Too large") ----------- */

/* Place every task of a request larger than allowed-minus-busy, one PU at
 * a time: the allowed PU with the fewest tasks of this step, then the
 * fewest other steps holding it (a free one before a busy one; busy ones
 * by req->load, at least 1 each), then the core with the fewest tasks of
 * this step plus holders of its PUs, then the lowest logical index; never
 * twice in one task.
 * So every allowed PU gets a task before any gets a second one, and the
 * threads of a core share the load before a thread takes a second task
 * (HT oversubscription, never 2x on one thread while a thread is idle).
 * A task asking for more PUs than allowed gets all of them. */
static int place_overflow (const topo_t *topo,
                           const struct place_request *req,
                           hwloc_const_bitmap_t allowed,
                           hwloc_const_bitmap_t busy,
                           struct place_plan *plan)
{
    unsigned n = topo_npus (topo);
    unsigned ncore = topo_ndomains (topo, TOPO_CORE);
    unsigned *idx = calloc (n ? n : 1, sizeof (*idx));
    unsigned *own = calloc (n ? n : 1, sizeof (*own));
    unsigned *coreload = calloc (ncore ? ncore : 1, sizeof (*coreload));
    unsigned *used = calloc (n ? n : 1, sizeof (*used)); /* task + 1 */
    unsigned *held = calloc (n ? n : 1, sizeof (*held)); /* other steps */
    unsigned m = 0;
    int rc = -1;

    if (!idx || !own || !coreload || !used || !held)
        goto out;
    for (unsigned i = 0; i < n; i++) {
        const struct topo_pu *pu = topo_pu (topo, i);
        if (!pu || pu->dom[TOPO_CORE] >= ncore) {
            errno = EINVAL;
            goto out;
        }
        if (!hwloc_bitmap_isset (allowed, pu->os))
            continue;
        if (hwloc_bitmap_isset (busy, pu->os)) {
            held[m] = 1;
            if (req->load && pu->os < req->nload && req->load[pu->os] > 1)
                held[m] = req->load[pu->os] < PLACE_MAX_LOAD
                              ? req->load[pu->os]
                              : PLACE_MAX_LOAD;
            coreload[pu->dom[TOPO_CORE]] += held[m];
        }
        idx[m++] = i;
    }
    unsigned k = req->cpus_per_task < m ? req->cpus_per_task : m;
    for (unsigned t = 0; t < req->ntasks; t++) {
        struct place_task *task = &plan->tasks[t];
        for (unsigned j = 0; j < k; j++) {
            unsigned best = NIL;
            for (unsigned a = 0; a < m; a++) {
                if (used[a] == t + 1)
                    continue;
                if (best == NIL || own[a] < own[best]
                    || (own[a] == own[best]
                        && (held[a] < held[best]
                            || (held[a] == held[best]
                                && coreload[topo_pu (topo, idx[a])
                                                ->dom[TOPO_CORE]]
                                       < coreload[topo_pu (topo, idx[best])
                                                      ->dom[TOPO_CORE]]))))
                    best = a;
            }
            const struct topo_pu *pu = topo_pu (topo, idx[best]);
            used[best] = t + 1;
            own[best]++;
            coreload[pu->dom[TOPO_CORE]]++;
            hwloc_const_bitmap_t ns =
                topo_numa_nodeset (topo, pu->dom[TOPO_NUMA]);
            if (hwloc_bitmap_set (task->cpus, pu->os) < 0
                || (ns && hwloc_bitmap_or (task->mems, task->mems, ns) < 0))
                goto out;
        }
    }
    /* the reasons, from the final loads */
    for (unsigned t = 0; t < req->ntasks; t++) {
        struct place_task *task = &plan->tasks[t];
        if (req->cpus_per_task > m)
            task->fallback |= PLACE_FB_OVERSUBSCRIBED;
        for (unsigned a = 0; a < m; a++) {
            if (!hwloc_bitmap_isset (task->cpus, topo_pu (topo, idx[a])->os))
                continue;
            if (own[a] > 1)
                task->fallback |= PLACE_FB_OVERSUBSCRIBED;
            if (held[a])
                task->fallback |= PLACE_FB_SHARED_WITH_STEP;
        }
    }
    rc = 0;
out:
    if (rc < 0 && errno != EINVAL)
        errno = ENOMEM;
    int saved_errno = errno;
    free (idx);
    free (own);
    free (coreload);
    free (used);
    free (held);
    errno = saved_errno;
    return rc;
}

unsigned place_alloc_confines (const topo_t *topo,
                               enum place_policy policy,
                               hwloc_const_bitmap_t allowed)
{
    unsigned n, local = 0, touched = 0;

    if (!topo || policy != PLACE_NUMA_SPREAD || !allowed)
        return 0;
    n = topo_ndomains (topo, TOPO_NUMA);
    for (unsigned i = 0; i < n; i++) {
        if (!topo_numa_is_local (topo, i))
            continue;
        local++;
        if (hwloc_bitmap_intersects (topo_domain_cpuset (topo, TOPO_NUMA, i),
                                     allowed))
            touched++;
    }
    if (policy == PLACE_NUMA_SPREAD && allowed && local > 1 && touched == 1)
        return PLACE_FB_ALLOC_ONE_NUMA;
    return 0;
}

static struct place_plan *place_plain (const topo_t *topo,
                                       const struct place_request *req,
                                       pin_error_t *errp)
{
    hwloc_bitmap_t allowed = NULL, busy = NULL, avail = NULL;
    struct place_plan *plan = NULL;
    struct ctx *c = NULL;
    int saved_errno;

    if (!topo || !req) {
        errno = EINVAL;
        errprintf (errp,
                   "place_compute: missing %s",
                   topo ? "request" : "topology");
        return NULL;
    }
    if ((unsigned)req->policy >= NPOLICIES) {
        errno = EINVAL;
        errprintf (errp,
                   "policy %d: unknown policy; known: %s",
                   (int)req->policy,
                   POLICY_LIST);
        return NULL;
    }
    if (req->ntasks == 0) {
        errno = EINVAL;
        errprintf (errp, "-n 0: number of tasks must be at least 1");
        return NULL;
    }
    if (req->cpus_per_task == 0) {
        errno = EINVAL;
        errprintf (errp, "-c 0: CPUs per task must be at least 1");
        return NULL;
    }
    if (!(allowed = hwloc_bitmap_dup (topo_cpuset (topo)))
        || !(busy = hwloc_bitmap_alloc ()) || !(avail = hwloc_bitmap_alloc ()))
        goto nomem;
    if (req->allowed && hwloc_bitmap_and (allowed, allowed, req->allowed) < 0)
        goto nomem;
    if (req->busy && hwloc_bitmap_and (busy, req->busy, allowed) < 0)
        goto nomem;
    if (hwloc_bitmap_andnot (avail, allowed, busy) < 0)
        goto nomem;

    /* none ignores busy PUs (every task gets the allowed set): its size
     * check is against the allocation, not allocation minus busy, so
     * the baseline runs however busy the node is. */
    /* dynamic starts as none: its confinement is planned later as
     * numa-local (the plugin's watcher). */
    bool none = req->policy == PLACE_NONE || req->policy == PLACE_DYNAMIC;
    int w = hwloc_bitmap_weight (none ? allowed : avail);
    unsigned navail = w > 0 ? (unsigned)w : 0;
    int wa = hwloc_bitmap_weight (allowed);
    unsigned nallowed = wa > 0 ? (unsigned)wa : 0;
    uint64_t total = (uint64_t)req->ntasks * req->cpus_per_task;
    bool overflow = total > navail;
    if (overflow) {
        /* the fallback, unless refused (see place.h) */
        bool over = total > nallowed;
        bool share = !none && !hwloc_bitmap_iszero (busy);
        if (nallowed == 0
            || (over && (req->refuse & PLACE_REFUSE_OVERSUBSCRIBE))
            || (share && (req->refuse & PLACE_REFUSE_SHARE))) {
            too_large (errp, req, total, navail, allowed, none ? NULL : busy);
            errno = EINVAL;
            goto error;
        }
        if (over && req->ntasks > PLACE_MAX_TASKS) {
            errno = EINVAL;
            errprintf (errp,
                       "-n %u: more than %d tasks cannot share the %u "
                       "allowed CPUs; ask for fewer tasks",
                       req->ntasks,
                       PLACE_MAX_TASKS,
                       nallowed);
            goto error;
        }
    }
    if (!(plan = plan_create (req)))
        goto nomem;
    if (overflow && !none) {
        if (place_overflow (topo, req, allowed, busy, plan) < 0) {
            if (errno == ENOMEM)
                goto nomem;
            errprintf (errp, "topology: inconsistent PU table");
            goto error;
        }
        goto done;
    }

    if (none) {
        for (unsigned i = 0; i < req->ntasks; i++) {
            if (hwloc_bitmap_copy (plan->tasks[i].cpus, allowed) < 0
                || hwloc_bitmap_copy (plan->tasks[i].mems, topo_nodeset (topo))
                       < 0)
                goto nomem;
            if (overflow)
                plan->tasks[i].fallback = PLACE_FB_OVERSUBSCRIBED;
        }
        goto done;
    }

    if (!(c = ctx_create (topo, avail))) {
        if (errno == ENOMEM)
            goto nomem;
        errprintf (errp, "topology: inconsistent PU table");
        goto error;
    }
    uint64_t state = req->seed;
    for (unsigned i = 0; i < req->ntasks; i++) {
        unsigned cpt = req->cpus_per_task;
        unsigned fb = 0;
        c->nout = 0;
        c->rest = req->ntasks - i - 1;
        switch (req->policy) {
            case PLACE_NUMA_LOCAL:
                fb = task_numa_local_kinds (c, cpt);
                break;
            case PLACE_NUMA_SPREAD:
                fb = task_numa_spread_kinds (c, cpt);
                break;
            case PLACE_CACHE_SHARED:
                fb = task_cache_shared (c, cpt);
                break;
            case PLACE_RANDOM:
                fb = task_random (c, cpt, &state);
                break;
            case PLACE_NONE:
            case PLACE_DYNAMIC:
                break;
        }
        plan->tasks[i].fallback = fb;
        if (task_commit (c, cpt, &plan->tasks[i]) < 0) {
            if (errno == ENOMEM)
                goto nomem;
            errprintf (errp,
                       "internal error: %s placed task %u on %u "
                       "CPUs instead of %u",
                       place_policy_name (req->policy),
                       i,
                       c->nout,
                       cpt);
            goto error;
        }
    }
done:
    ctx_destroy (c);
    hwloc_bitmap_free (allowed);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (avail);
    return plan;
nomem:
    errno = ENOMEM;
    errprintf (errp, "placement: out of memory");
error:
    saved_errno = errno;
    ctx_destroy (c);
    place_plan_destroy (plan);
    hwloc_bitmap_free (allowed);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (avail);
    errno = saved_errno;
    return NULL;
}

/* ---- device locality (doc/policies.md, "GPUs and NICs") --------------- */

/* Task i's device mask (place.h: task_near, or block-wise). */
static uint64_t task_mask (const struct place_request *req, unsigned i)
{
    uint64_t all = req->nnear >= 64 ? ~0ull : (1ull << req->nnear) - 1;
    uint64_t m = 0;

    if (req->task_near) {
        m = req->task_near[i] & all;
        return m ? m : all;
    }
    if (req->ntasks >= req->nnear)
        return 1ull << ((uint64_t)i * req->nnear / req->ntasks);
    for (unsigned d = i * req->nnear / req->ntasks;
         d < (i + 1) * req->nnear / req->ntasks;
         d++)
        m |= 1ull << d;
    return m ? m : all;
}

/* The PUs local to the devices of `mask` (into `out`). */
static int mask_cpus (const struct place_request *req,
                      uint64_t mask,
                      hwloc_bitmap_t out)
{
    hwloc_bitmap_zero (out);
    for (unsigned d = 0; d < req->nnear; d++)
        if ((mask >> d) & 1)
            if (hwloc_bitmap_or (out, out, req->near[d].cpus) < 0)
                return -1;
    return 0;
}

/* The NUMA domain of device d: its own, else the one holding most of its
 * PUs, else -1. */
static int near_numa (const topo_t *topo, const struct place_near *n)
{
    int best = -1, bestw = 0;
    hwloc_bitmap_t x;

    if (n->numa >= 0 && (unsigned)n->numa < topo_ndomains (topo, TOPO_NUMA))
        return n->numa;
    if (!(x = hwloc_bitmap_alloc ()))
        return -1;
    for (unsigned d = 0; d < topo_ndomains (topo, TOPO_NUMA); d++) {
        hwloc_bitmap_and (x, topo_domain_cpuset (topo, TOPO_NUMA, d), n->cpus);
        int w = hwloc_bitmap_weight (x);
        if (w > bestw) {
            bestw = w;
            best = (int)d;
        }
    }
    hwloc_bitmap_free (x);
    return best;
}

/* Distance from the devices of `mask` to NUMA domain d: the least over
 * the devices (a device of unknown domain: every domain is as near). */
static unsigned mask_distance (const topo_t *topo,
                               const struct place_request *req,
                               uint64_t mask,
                               unsigned d)
{
    unsigned best = UINT_MAX;
    for (unsigned k = 0; k < req->nnear; k++) {
        if (!((mask >> k) & 1))
            continue;
        int n = near_numa (topo, &req->near[k]);
        unsigned v = n < 0 ? 0 : topo_numa_distance (topo, (unsigned)n, d);
        if (v < best)
            best = v;
    }
    return best;
}

void place_mark_near (struct place_plan *plan,
                      hwloc_const_bitmap_t cpus,
                      unsigned bit)
{
    if (!plan || !cpus)
        return;
    for (unsigned i = 0; i < plan->ntasks; i++)
        if (!hwloc_bitmap_isincluded (plan->tasks[i].cpus, cpus))
            plan->tasks[i].fallback |= bit;
}

/* The PUs of the cores that hold a PU of `set` (into out). */
static int cores_of (const topo_t *topo, hwloc_const_bitmap_t set, hwloc_bitmap_t out)
{
    int os;

    hwloc_bitmap_zero (out);
    hwloc_bitmap_foreach_begin (os, set)
    {
        int i = topo_pu_index (topo, (unsigned)os);
        if (i >= 0
            && hwloc_bitmap_or (out,
                                out,
                                topo_domain_cpuset (topo,
                                                    TOPO_CORE,
                                                    topo_pu (topo, (unsigned)i)
                                                        ->dom[TOPO_CORE]))
                   < 0)
            return -1;
    }
    hwloc_bitmap_foreach_end ();
    return 0;
}

/* The tasks of group g (tgroup[i] == g; or task `only` alone) placed on
 * `region`, with the request's busy PUs and `taken` (earlier groups)
 * counted as busy, and when the region has room without them, the other
 * PUs of the cores earlier groups hold too, so that groups do not share
 * cores (SMT siblings) while whole cores are free; a task that does share
 * one gets shared-with-task.  Copied into plan->tasks at their positions,
 * each with its own device mask. */
static int place_group (const topo_t *topo,
                        const struct place_request *req,
                        const unsigned *tgroup,
                        const uint64_t *masks,
                        unsigned g,
                        unsigned ntasks,
                        unsigned only, /* one task, or UINT_MAX: all */
                        hwloc_const_bitmap_t region,
                        hwloc_bitmap_t taken,
                        struct place_plan *plan,
                        pin_error_t *errp)
{
    struct place_request sub = *req;
    hwloc_bitmap_t busy = hwloc_bitmap_dup (taken);
    hwloc_bitmap_t cores = hwloc_bitmap_alloc ();
    hwloc_bitmap_t room = hwloc_bitmap_alloc ();
    struct place_plan *p = NULL;
    unsigned j = 0, n = only == UINT_MAX ? ntasks : 1;
    bool whole;
    int rc = -1;

    if (!busy || !cores || !room
        || (req->busy && hwloc_bitmap_or (busy, busy, req->busy) < 0)
        || cores_of (topo, taken, cores) < 0
        || hwloc_bitmap_andnot (room, region, busy) < 0
        || hwloc_bitmap_andnot (room, room, cores) < 0)
        goto nomem;
    whole = (uint64_t)hwloc_bitmap_weight (room)
            >= (uint64_t)n * req->cpus_per_task;
    if (whole && hwloc_bitmap_or (busy, busy, cores) < 0)
        goto nomem;
    sub.ntasks = n;
    sub.allowed = region;
    sub.busy = busy;
    sub.refuse = 0;
    sub.load = NULL;
    sub.nload = 0;
    sub.nnear = 0;
    sub.near = NULL;
    sub.task_near = NULL;
    sub.seed = req->seed + 0x9e3779b97f4a7c15ull * (g + 1)
               + (only == UINT_MAX ? 0 : 0xbf58476d1ce4e5b9ull * only);
    if (!(p = place_plain (topo, &sub, errp)))
        goto out;
    for (unsigned i = 0; i < req->ntasks; i++) {
        struct place_task *t = &plan->tasks[i];
        if (tgroup[i] != g || (only != UINT_MAX && i != only))
            continue;
        struct place_task *s = &p->tasks[j++];
        if (hwloc_bitmap_copy (t->cpus, s->cpus) < 0
            || hwloc_bitmap_copy (t->mems, s->mems) < 0)
            goto nomem;
        t->fallback = s->fallback
                      & ~(PLACE_FB_SHARED_WITH_STEP | PLACE_FB_OVERSUBSCRIBED);
        if (!whole && hwloc_bitmap_intersects (t->cpus, cores))
            t->fallback |= PLACE_FB_SHARED_WITH_TASK;
        t->near = masks[i];
    }
    for (unsigned i = 0; i < req->ntasks; i++)
        if (tgroup[i] == g && (only == UINT_MAX || i == only)
            && hwloc_bitmap_or (taken, taken, plan->tasks[i].cpus) < 0)
            goto nomem;
    rc = 0;
    goto out;
nomem:
    errno = ENOMEM;
    errprintf (errp, "placement: out of memory");
out:
    place_plan_destroy (p);
    hwloc_bitmap_free (busy);
    hwloc_bitmap_free (cores);
    hwloc_bitmap_free (room);
    return rc;
}

/* Widen `region` (the free PUs near the group's devices) by the nearest
 * NUMA domains' free allowed PUs until it holds `need` PUs. */
static int widen (const topo_t *topo,
                  const struct place_request *req,
                  uint64_t gmask,
                  hwloc_const_bitmap_t avail,
                  hwloc_const_bitmap_t taken,
                  uint64_t need,
                  hwloc_bitmap_t region,
                  hwloc_bitmap_t x)
{
    unsigned nd = topo_ndomains (topo, TOPO_NUMA);
    bool *used = calloc (nd + 1, sizeof (*used));
    int rc = -1;

    if (!used)
        return -1;
    while ((uint64_t)hwloc_bitmap_weight (region) < need) {
        unsigned best = UINT_MAX, bestd = UINT_MAX;
        for (unsigned d = 0; d < nd; d++) {
            if (used[d])
                continue;
            unsigned v = mask_distance (topo, req, gmask, d);
            if (best == UINT_MAX || v < bestd) {
                best = d;
                bestd = v;
            }
        }
        if (best == UINT_MAX) {
            /* PUs of no NUMA domain: whatever is left */
            if (hwloc_bitmap_andnot (x, avail, taken) < 0
                || hwloc_bitmap_or (region, region, x) < 0)
                goto out;
            break;
        }
        used[best] = true;
        if (hwloc_bitmap_and (x, topo_domain_cpuset (topo, TOPO_NUMA, best), avail)
                < 0
            || hwloc_bitmap_andnot (x, x, taken) < 0
            || hwloc_bitmap_or (region, region, x) < 0)
            goto out;
    }
    rc = 0;
out:
    free (used);
    return rc;
}

struct place_plan *place_compute (const topo_t *topo,
                                  const struct place_request *req,
                                  pin_error_t *errp)
{
    struct place_plan *plan = NULL;
    hwloc_bitmap_t allowed = NULL, avail = NULL, taken = NULL, local = NULL,
                   region = NULL, x = NULL;
    hwloc_bitmap_t *gloc = NULL; /* per group: its devices' PUs */
    uint64_t *masks = NULL, *gmask = NULL;
    unsigned *gcount = NULL, *tgroup = NULL;
    bool *placed = NULL;
    unsigned ngroups = 0;
    int saved;

    if (!topo || !req || req->nnear == 0 || req->policy == PLACE_NONE
        || req->policy == PLACE_DYNAMIC || req->ntasks == 0
        || req->cpus_per_task == 0 || (unsigned)req->policy >= NPOLICIES)
        return place_plain (topo, req, errp);
    if (req->nnear > PLACE_MAX_NEAR || !req->near) {
        errno = EINVAL;
        errprintf (errp,
                   "%u devices: at most %d GPUs or NICs per step",
                   req->nnear,
                   PLACE_MAX_NEAR);
        return NULL;
    }
    for (unsigned i = 0; req->task_near && i < req->ntasks; i++)
        if (req->nnear < 64 && (req->task_near[i] >> req->nnear)) {
            errno = EINVAL;
            errprintf (errp,
                       "task %u: near device bit %d, but the step has %u "
                       "devices",
                       i,
                       63 - __builtin_clzll (req->task_near[i]),
                       req->nnear);
            return NULL;
        }
    for (unsigned d = 0; d < req->nnear; d++)
        if (!req->near[d].cpus) {
            errno = EINVAL;
            errprintf (errp, "device %u: no CPU set", d);
            return NULL;
        }
    if (!(allowed = hwloc_bitmap_dup (topo_cpuset (topo)))
        || !(avail = hwloc_bitmap_alloc ()) || !(taken = hwloc_bitmap_alloc ())
        || !(local = hwloc_bitmap_alloc ()) || !(region = hwloc_bitmap_alloc ())
        || !(x = hwloc_bitmap_alloc ())
        || !(masks = calloc (req->ntasks, sizeof (*masks)))
        || !(gmask = calloc (req->ntasks, sizeof (*gmask)))
        || !(gloc = calloc (req->ntasks, sizeof (*gloc)))
        || !(gcount = calloc (req->ntasks, sizeof (*gcount)))
        || !(tgroup = calloc (req->ntasks, sizeof (*tgroup)))
        || !(placed = calloc (req->ntasks, sizeof (*placed))))
        goto nomem;
    if (req->allowed && hwloc_bitmap_and (allowed, allowed, req->allowed) < 0)
        goto nomem;
    if (hwloc_bitmap_copy (avail, allowed) < 0
        || (req->busy && hwloc_bitmap_andnot (avail, avail, req->busy) < 0))
        goto nomem;
    /* groups: tasks whose devices have the same PUs (GPUs on one NUMA
     * node place together, as one request would) */
    for (unsigned i = 0; i < req->ntasks; i++) {
        unsigned g;
        masks[i] = task_mask (req, i);
        if (mask_cpus (req, masks[i], local) < 0)
            goto nomem;
        for (g = 0; g < ngroups && !hwloc_bitmap_isequal (gloc[g], local); g++)
            ;
        if (g == ngroups && !(gloc[ngroups++] = hwloc_bitmap_dup (local)))
            goto nomem;
        gmask[g] |= masks[i];
        gcount[g]++;
        tgroup[i] = g;
    }

    /* too large for the free PUs: the plain fallback, marked */
    if ((uint64_t)req->ntasks * req->cpus_per_task
        > (uint64_t)hwloc_bitmap_weight (avail)) {
        struct place_request plain = *req;
        plain.nnear = 0;
        if (!(plan = place_plain (topo, &plain, errp)))
            goto error;
        for (unsigned i = 0; i < req->ntasks; i++) {
            plan->tasks[i].near = masks[i];
            if (!hwloc_bitmap_isincluded (plan->tasks[i].cpus, gloc[tgroup[i]]))
                plan->tasks[i].fallback |= req->near_fallback;
        }
        goto done;
    }
    if (!(plan = plan_create (req)))
        goto nomem;

    /* 1: the groups that fit on the free PUs near their devices, the
     * narrowest first (so a group whose devices are near a whole package
     * does not take the PUs a one-domain group needs) */
    for (;;) {
        unsigned best = UINT_MAX;
        int bestw = 0;
        for (unsigned g = 0; g < ngroups; g++) {
            uint64_t need = (uint64_t)gcount[g] * req->cpus_per_task;
            int w;
            if (placed[g])
                continue;
            if (hwloc_bitmap_and (region, gloc[g], avail) < 0
                || hwloc_bitmap_andnot (region, region, taken) < 0)
                goto nomem;
            w = hwloc_bitmap_weight (region);
            if ((uint64_t)w < need)
                continue;
            if (best == UINT_MAX || w < bestw) {
                best = g;
                bestw = w;
            }
        }
        if (best == UINT_MAX)
            break;
        if (hwloc_bitmap_and (region, gloc[best], avail) < 0
            || hwloc_bitmap_andnot (region, region, taken) < 0)
            goto nomem;
        if (place_group (topo,
                         req,
                         tgroup,
                         masks,
                         best,
                         gcount[best],
                         UINT_MAX,
                         region,
                         taken,
                         plan,
                         errp)
            < 0)
            goto error;
        placed[best] = true;
    }
    /* 2: the tasks of the other groups one by one: the free PUs near
     * their devices first, widened to the nearest NUMA domains until the
     * task fits (so a task that fits near its GPU stays there) */
    for (unsigned g = 0; g < ngroups; g++) {
        if (placed[g])
            continue;
        for (unsigned i = 0; i < req->ntasks; i++) {
            if (tgroup[i] != g)
                continue;
            if (hwloc_bitmap_and (region, gloc[g], avail) < 0
                || hwloc_bitmap_andnot (region, region, taken) < 0
                || widen (topo,
                          req,
                          gmask[g],
                          avail,
                          taken,
                          req->cpus_per_task,
                          region,
                          x)
                       < 0)
                goto nomem;
            if (place_group (topo,
                             req,
                             tgroup,
                             masks,
                             g,
                             1,
                             i,
                             region,
                             taken,
                             plan,
                             errp)
                < 0)
                goto error;
            if (!hwloc_bitmap_isincluded (plan->tasks[i].cpus, gloc[g]))
                plan->tasks[i].fallback |= req->near_fallback;
        }
    }
done:
    for (unsigned g = 0; gloc && g < ngroups; g++)
        hwloc_bitmap_free (gloc[g]);
    free (gloc);
    free (masks);
    free (gmask);
    free (gcount);
    free (tgroup);
    free (placed);
    hwloc_bitmap_free (allowed);
    hwloc_bitmap_free (avail);
    hwloc_bitmap_free (taken);
    hwloc_bitmap_free (local);
    hwloc_bitmap_free (region);
    hwloc_bitmap_free (x);
    return plan;
nomem:
    errno = ENOMEM;
    errprintf (errp, "placement: out of memory");
error:
    saved = errno;
    place_plan_destroy (plan);
    plan = NULL;
    errno = saved;
    goto done;
}
