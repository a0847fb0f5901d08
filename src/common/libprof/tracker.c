/* tracker.c - which tasks belong to a step */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"

/* Open addressing on pid, linear probing, backward-shift deletion. */
struct task {
    int32_t pid; /* 0: empty slot */
    int32_t tgid;
    uint64_t start_ns;
    char comm[17];
    /* an exec whose command read from /proc is not proven the task's
     * yet (read_ns 0: none) */
    char pend[17];
    uint32_t exec_cpu;
    uint64_t exec_ns, read_ns;
};

struct tracker {
    struct task *slot;
    size_t size; /* power of two */
    size_t used;
    uint64_t processes, threads;
    tracker_exec_fn on_exec;
    void *on_exec_arg;
    int32_t *pending; /* pids with an exec to settle, in their order */
    size_t npending, cappending;
};

static size_t hash (int32_t pid, size_t size)
{
    uint32_t x = (uint32_t)pid * 2654435761u;
    return (size_t)(x ^ (x >> 16)) & (size - 1);
}

struct tracker *tracker_create (void)
{
    struct tracker *t = calloc (1, sizeof (*t));

    if (!t)
        return NULL;
    t->size = 1024;
    if (!(t->slot = calloc (t->size, sizeof (*t->slot)))) {
        free (t);
        return NULL;
    }
    return t;
}

void tracker_destroy (struct tracker *t)
{
    int saved = errno;

    if (t) {
        free (t->slot);
        free (t->pending);
        free (t);
    }
    errno = saved;
}

static struct task *find (const struct tracker *t, int32_t pid)
{
    size_t i = hash (pid, t->size);

    while (t->slot[i].pid) {
        if (t->slot[i].pid == pid)
            return &t->slot[i];
        i = (i + 1) & (t->size - 1);
    }
    return NULL;
}

static int grow (struct tracker *t)
{
    size_t n = t->size * 2;
    struct task *old = t->slot, *s = calloc (n, sizeof (*s));

    if (!s)
        return -1;
    for (size_t k = 0; k < t->size; k++) {
        if (old[k].pid) {
            size_t i = hash (old[k].pid, n);
            while (s[i].pid)
                i = (i + 1) & (n - 1);
            s[i] = old[k];
        }
    }
    t->slot = s;
    t->size = n;
    free (old);
    return 0;
}

/* Insert (or overwrite) pid; NULL on ENOMEM. */
static struct task *insert (struct tracker *t, int32_t pid)
{
    struct task *k = find (t, pid);
    size_t i;

    if (k)
        return k;
    if ((t->used + 1) * 2 > t->size && grow (t) < 0) {
        errno = ENOMEM;
        return NULL;
    }
    i = hash (pid, t->size);
    while (t->slot[i].pid)
        i = (i + 1) & (t->size - 1);
    memset (&t->slot[i], 0, sizeof (t->slot[i]));
    t->slot[i].pid = pid;
    t->used++;
    return &t->slot[i];
}

static void erase (struct tracker *t, struct task *k)
{
    size_t i = (size_t)(k - t->slot), j = i;

    t->slot[i].pid = 0;
    t->used--;
    for (;;) {
        size_t h;
        j = (j + 1) & (t->size - 1);
        if (!t->slot[j].pid)
            return;
        h = hash (t->slot[j].pid, t->size);
        /* move j back to i if its home h is not in (i, j] cyclically */
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            t->slot[i] = t->slot[j];
            t->slot[j].pid = 0;
            i = j;
        }
    }
}

static void count (struct tracker *t, const struct task *k, int d)
{
    if (k->pid == k->tgid)
        t->processes += d;
    else
        t->threads += d;
}

int tracker_add_root (struct tracker *t,
                      int32_t tgid,
                      const char *comm,
                      uint64_t ts_ns)
{
    struct task *k;

    if (tgid <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (find (t, tgid))
        return 0;
    if (!(k = insert (t, tgid)))
        return -1;
    k->tgid = tgid;
    k->start_ns = ts_ns;
    if (comm)
        snprintf (k->comm, sizeof (k->comm), "%s", comm);
    count (t, k, 1);
    return 0;
}

/* An event sent before the task began (its fork; a root: when it was
 * added) is an earlier holder's of the pid, read late: e.g. the exit of
 * another program's process whose pid slurmstepd's next task got, read
 * after pin.so added that task as a root.  (Events without a time, as
 * in tests, are taken as they come.) */
static bool earlier (const struct cnproc_event *ev, const struct task *k)
{
    return ev->ts_ns && ev->ts_ns < k->start_ns;
}

void tracker_on_exec (struct tracker *t, tracker_exec_fn fn, void *arg)
{
    t->on_exec = fn;
    t->on_exec_arg = arg;
}

/* Settle k's pending exec: `read` says whether the command read from
 * /proc is proven the task's (it then becomes the task's command);
 * otherwise the exec keeps the command known before it. */
static void exec_settle (struct tracker *t, struct task *k, bool read)
{
    struct tracker_exec x;

    if (!k->read_ns)
        return;
    if (read)
        memcpy (k->comm, k->pend, sizeof (k->comm));
    k->read_ns = 0;
    x = (struct tracker_exec){.pid = k->pid,
                              .tgid = k->tgid,
                              .cpu = k->exec_cpu,
                              .ts_ns = k->exec_ns,
                              .read = read};
    memcpy (x.comm, k->comm, sizeof (x.comm));
    if (t->on_exec)
        t->on_exec (&x, t->on_exec_arg);
}

/* An event of task k sent after its command was read shows that k still
 * held its pid then: the command read was its. */
static void exec_alive (struct tracker *t, struct task *k, uint64_t ts_ns)
{
    if (k && k->read_ns && ts_ns > k->read_ns)
        exec_settle (t, k, true);
}

int tracker_exec_read (struct tracker *t,
                       const struct cnproc_event *ev,
                       const char *comm,
                       uint64_t read_ns)
{
    struct task *k = find (t, ev->pid);

    if (!k) {
        errno = ENOENT;
        return -1;
    }
    if (t->npending == t->cappending) {
        /* first drop the pids settled since (the socket may not be read
         * empty for long on a busy node) */
        size_t n = 0;
        for (size_t i = 0; i < t->npending; i++) {
            struct task *p = find (t, t->pending[i]);
            if (p && p->read_ns)
                t->pending[n++] = t->pending[i];
        }
        t->npending = n;
    }
    if (t->npending == t->cappending) {
        size_t c = t->cappending ? t->cappending * 2 : 64;
        int32_t *p = realloc (t->pending, c * sizeof (*p));
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        t->pending = p;
        t->cappending = c;
    }
    exec_settle (t, k, false); /* not left by tracker_feed: a bad call */
    t->pending[t->npending++] = ev->pid;
    snprintf (k->pend, sizeof (k->pend), "%s", comm ? comm : "");
    k->exec_cpu = ev->cpu;
    k->exec_ns = ev->ts_ns;
    k->read_ns = read_ns ? read_ns : 1;
    return 0;
}

void tracker_exec_settle (struct tracker *t, bool read)
{
    for (size_t i = 0; i < t->npending; i++) {
        struct task *k = find (t, t->pending[i]);
        if (k)
            exec_settle (t, k, read);
    }
    t->npending = 0;
}

int tracker_feed (struct tracker *t,
                  struct cnproc_event *ev,
                  uint64_t *start_ns)
{
    struct task *k, *parent;

    if (ev->pid <= 0)
        return 0;
    switch (ev->type) {
        case CNPROC_FORK:
            /* a thread belongs to its process; a process to its parent */
            parent = find (t, ev->pid != ev->tgid ? ev->tgid : ev->ptgid);
            k = find (t, ev->pid);
            if (k && ev->ts_ns <= k->start_ns)
                /* the fork that made a root added after it (slurmstepd forks
                 * a task, then pin.so adds it): the root line says it */
                return 0;
            if (k) {
                /* a stale entry (its exit was lost): forget it; what it
                 * read of its pid's command may be anyone's */
                exec_settle (t, k, false);
                count (t, k, -1);
                erase (t, k);
                parent = find (t, ev->pid != ev->tgid ? ev->tgid : ev->ptgid);
            }
            if (!parent || parent->pid != parent->tgid)
                return 0;
            exec_alive (t, parent, ev->ts_ns);
            {
                char comm[17];
                memcpy (comm, parent->comm, sizeof (comm));
                if (!(k = insert (t, ev->pid)))
                    return -1;
                k->tgid = ev->tgid;
                k->start_ns = ev->ts_ns;
                memcpy (k->comm, comm, sizeof (comm));
            }
            count (t, k, 1);
            memcpy (ev->comm, k->comm, sizeof (ev->comm));
            return 1;
        case CNPROC_EXEC:
        case CNPROC_COMM:
            if (!(k = find (t, ev->pid)) || earlier (ev, k))
                return 0;
            /* a later event proves the read; an exec before the read
             * makes it the later exec's at best */
            exec_alive (t, k, ev->ts_ns);
            if (ev->type == CNPROC_EXEC)
                exec_settle (t, k, false);
            if (ev->type == CNPROC_COMM)
                /* sent before the read: the read has it, or a later name */
                memcpy (k->comm, ev->comm, sizeof (k->comm));
            else
                memcpy (ev->comm, k->comm, sizeof (ev->comm));
            k->comm[16] = '\0';
            return 1;
        case CNPROC_EXIT:
            if (!(k = find (t, ev->pid)) || earlier (ev, k))
                return 0;
            /* the exit is sent before the pid is freed: a task that exited
             * after the read held its pid then; one that exited before may
             * have left it to another program */
            exec_settle (t, k, ev->ts_ns > k->read_ns);
            memcpy (ev->comm, k->comm, sizeof (ev->comm));
            if (start_ns)
                *start_ns = k->start_ns;
            count (t, k, -1);
            erase (t, k);
            return 1;
        default:
            if (ev->pid > 0 && (k = find (t, ev->pid)) && !earlier (ev, k)) {
                exec_alive (t, k, ev->ts_ns);
                return 1;
            }
            return 0;
    }
}

int tracker_set_comm (struct tracker *t, int32_t pid, const char *comm)
{
    struct task *k = find (t, pid);

    if (!k) {
        errno = ENOENT;
        return -1;
    }
    snprintf (k->comm, sizeof (k->comm), "%s", comm ? comm : "");
    return 0;
}

void tracker_counts (const struct tracker *t, struct tracker_counts *c)
{
    c->processes = t->processes;
    c->threads = t->threads;
}

int tracker_foreach_process (const struct tracker *t,
                             int (*fn) (int32_t tgid, void *arg),
                             void *arg)
{
    for (size_t i = 0; i < t->size; i++) {
        const struct task *k = &t->slot[i];
        if (k->pid && k->pid == k->tgid) {
            int rc = fn (k->pid, arg);
            if (rc)
                return rc;
        }
    }
    return 0;
}
