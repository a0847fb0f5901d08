/* experiment.c - enrolment of jobs in a policy experiment (experiment.h) */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiment.h"
#include "libplace/place.h"

/* ---- hashing: FNV-1a into splitmix64 ---------------------------------- */

static uint64_t fnv (uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

#define FNV0 0xcbf29ce484222325ull

static uint64_t mix (uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The draw of (seed, block, what, n), uniform in 64 bits */
static uint64_t draw (uint64_t seed, uint64_t block, uint32_t what, uint64_t n)
{
    return mix (mix (mix (seed ^ block) ^ what) + n);
}

uint64_t submit_exp_seed (const struct pin_conf_rules *r)
{
    if (r->experiment_seed >= 0)
        return (uint64_t)r->experiment_seed;
    return fnv (FNV0, r->experiment, strlen (r->experiment));
}

uint32_t submit_exp_cpus (const job_desc_msg_t *job)
{
    uint32_t t = job->num_tasks, c = job->cpus_per_task;

    if (t != NO_VAL && t != 0 && t < 1000000 && c != NO_VAL16 && c != 0)
        return t * c;
    if (t != NO_VAL && t != 0 && t < 1000000)
        return t;
    if (job->min_cpus != NO_VAL && job->min_cpus != 0)
        return job->min_cpus;
    return 1;
}

static uint64_t block_hash (const char *experiment,
                            uint32_t uid,
                            const char *name,
                            uint32_t cpus)
{
    uint64_t h = FNV0;
    h = fnv (h, experiment, strlen (experiment) + 1);
    h = fnv (h, &uid, sizeof (uid));
    h = fnv (h, name ? name : "", strlen (name ? name : "") + 1);
    h = fnv (h, &cpus, sizeof (cpus));
    return mix (h);
}

void submit_exp_block (const char *experiment,
                       uint32_t uid,
                       const char *name,
                       uint32_t cpus,
                       char *buf)
{
    snprintf (buf,
              SUBMIT_EXP_BLOCK_LEN + 1,
              "%016" PRIx64,
              block_hash (experiment, uid, name, cpus));
}

/* ---- the book: positions per (seed, block) ---------------------------- */

/* Open addressing, no deletion; a full book starts over (the balance of
 * the blocks then restarts, as after a restart of slurmctld). */
#define BOOK_MAX 65536

struct book_entry {
    uint64_t key; /* 0: free */
    uint32_t eligible;
    uint32_t enrolled;
};

struct submit_exp_book {
    size_t used;
    struct book_entry e[BOOK_MAX];
};

struct submit_exp_book *submit_exp_book_create (void)
{
    return calloc (1, sizeof (struct submit_exp_book));
}

void submit_exp_book_destroy (struct submit_exp_book *b)
{
    free (b);
}

static struct book_entry *book_find (struct submit_exp_book *b, uint64_t key)
{
    size_t i;

    if (key == 0)
        key = 1;
    if (b->used >= BOOK_MAX * 3 / 4) {
        memset (b, 0, sizeof (*b));
    }
    for (i = key % BOOK_MAX;; i = (i + 1) % BOOK_MAX) {
        if (b->e[i].key == key)
            return &b->e[i];
        if (b->e[i].key == 0) {
            b->e[i].key = key;
            b->used++;
            return &b->e[i];
        }
    }
}

/* ---- the filters ------------------------------------------------------- */

static bool matches_any (const char *list, const char *s, bool glob)
{
    char buf[PIN_CONF_EXP_LIST_MAX];
    char *item, *save = NULL;

    snprintf (buf, sizeof (buf), "%s", list);
    for (item = strtok_r (buf, ",", &save); item;
         item = strtok_r (NULL, ",", &save)) {
        if (glob ? fnmatch (item, s, 0) == 0 : strcmp (item, s) == 0)
            return true;
    }
    return false;
}

int submit_exp_enrol (const struct pin_conf_rules *r,
                      const job_desc_msg_t *job,
                      uint32_t uid,
                      time_t now,
                      struct submit_exp_book *book,
                      struct submit_enrolment *en)
{
    const char *name = job->name ? job->name : "";
    uint64_t seed, block;
    struct book_entry *be;
    int k = r->experiment_policies.n, perm[PIN_CONF_ARMS_MAX], i;
    uint32_t cycle, pos;

    memset (en, 0, sizeof (*en));
    en->arm = -1;
    if (!r->experiment[0])
        return 0;
    snprintf (en->experiment, sizeof (en->experiment), "%s", r->experiment);
    if (k < 2 || k > PIN_CONF_ARMS_MAX) {
        snprintf (en->why, sizeof (en->why), "no arms");
        return 0;
    }
    if (r->experiment_until && (long long)now >= r->experiment_until) {
        snprintf (en->why, sizeof (en->why), "ExperimentUntil= has passed");
        return 0;
    }
    if (r->experiment_job_names[0]
        && !matches_any (r->experiment_job_names, name, true)) {
        snprintf (en->why,
                  sizeof (en->why),
                  "job name not in ExperimentJobNames=");
        return 0;
    }
    if (r->experiment_accounts[0]
        && !(job->account
             && matches_any (r->experiment_accounts, job->account, false))) {
        snprintf (en->why,
                  sizeof (en->why),
                  "account not in ExperimentAccounts= (a job that names "
                  "none is not enrolled)");
        return 0;
    }
    if (!book) {
        errno = EINVAL;
        return -1;
    }
    seed = submit_exp_seed (r);
    block = block_hash (r->experiment, uid, name, submit_exp_cpus (job));
    snprintf (en->block, sizeof (en->block), "%016" PRIx64, block);
    be = book_find (book, mix (seed ^ block));
    /* enrolment: a draw per eligible job of the block */
    if (r->experiment_share < 1.0) {
        double u = (double)(draw (seed, block, 1, be->eligible) >> 11)
                   * (1.0 / 9007199254740992.0);
        be->eligible++;
        if (!(u < r->experiment_share)) {
            snprintf (en->why,
                      sizeof (en->why),
                      "not drawn (ExperimentShare=%g)",
                      r->experiment_share);
            return 0;
        }
    } else
        be->eligible++;
    /* the arm: position pos of cycle `cycle`, a permutation of the arms */
    cycle = be->enrolled / (uint32_t)k;
    pos = be->enrolled % (uint32_t)k;
    be->enrolled++;
    for (i = 0; i < k; i++)
        perm[i] = i;
    for (i = k - 1; i > 0; i--) {
        int j = (int)(draw (seed, block, 2, ((uint64_t)cycle << 8) | (uint64_t)i)
                      % (uint64_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    en->enrolled = true;
    en->arm_index = perm[pos];
    en->arm = r->experiment_policies.policy[en->arm_index];
    en->narms = k;
    return 0;
}
