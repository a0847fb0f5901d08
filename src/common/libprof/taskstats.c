/* taskstats.c - per-task exit records from the kernel's taskstats */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "taskstats.h"

/* ---- parsing ---------------------------------------------------------- */

/* Whether the kernel's struct of `n` bytes and version `v` has `field`
 * (added in version `since`): a newer kernel's struct is longer (688
 * bytes on 7.x against 352 in these headers), an older one shorter. */
#define HAS(n, v, field, since)                   \
    ((v) >= (since)                               \
     && (n) >= offsetof (struct taskstats, field) \
                   + sizeof (((struct taskstats *)0)->field))

/* Fill r from the struct taskstats of n bytes at p: copies at most what
 * these headers know, reads only the fields the struct has. */
static void fill (struct ts_record *r, const unsigned char *p, size_t n)
{
    struct taskstats ts;

    memset (&ts, 0, sizeof (ts));
    memcpy (&ts, p, n < sizeof (ts) ? n : sizeof (ts));
    r->version = ts.version;
    r->exitcode = ts.ac_exitcode;
    memcpy (r->comm, ts.ac_comm, 32);
    r->comm[32] = '\0';
    r->ppid = (int32_t)ts.ac_ppid;
    r->btime = HAS (n, ts.version, ac_btime64, 10) && ts.ac_btime64
                   ? ts.ac_btime64
                   : ts.ac_btime;
    r->etime_us = ts.ac_etime;
    r->utime_us = ts.ac_utime;
    r->stime_us = ts.ac_stime;
    r->nvcsw = ts.nvcsw;
    r->nivcsw = ts.nivcsw;
    r->hiwater_rss_kb = ts.hiwater_rss;
    r->cpu_delay_ns = ts.cpu_delay_total;
    r->blkio_delay_ns = ts.blkio_delay_total;
    r->read_bytes = ts.read_bytes;
    r->write_bytes = ts.write_bytes;
    r->rchar = ts.read_char;
    r->wchar = ts.write_char;
    if (HAS (n, ts.version, ac_tgid, 12))
        r->tgid = (int32_t)ts.ac_tgid;
}

/* Walk the attributes in p[0..n); for an AGGR_PID nest, fill a record. */
static int parse_attrs (const unsigned char *p,
                        size_t n,
                        bool nested,
                        struct ts_record *out,
                        size_t max,
                        size_t *count,
                        size_t base,
                        pin_error_t *errp)
{
    size_t off = 0;
    struct ts_record r;
    bool have_pid = false, have_stats = false;

    memset (&r, 0, sizeof (r));
    while (off + NLA_HDRLEN <= n) {
        struct nlattr a;
        size_t alen, type;
        memcpy (&a, p + off, sizeof (a));
        if (a.nla_len < NLA_HDRLEN || a.nla_len > n - off) {
            errno = EINVAL;
            return errprintf (errp,
                              "taskstats: attribute length %u at "
                              "offset %zu outside [%d, %zu]",
                              (unsigned)a.nla_len,
                              base + off,
                              NLA_HDRLEN,
                              n - off);
        }
        alen = a.nla_len - NLA_HDRLEN;
        type = a.nla_type & NLA_TYPE_MASK;
        if (!nested && type == TASKSTATS_TYPE_AGGR_PID) {
            if (parse_attrs (p + off + NLA_HDRLEN,
                             alen,
                             true,
                             out,
                             max,
                             count,
                             base + off + NLA_HDRLEN,
                             errp)
                < 0)
                return -1;
        } else if (nested && type == TASKSTATS_TYPE_PID) {
            uint32_t v;
            if (alen < sizeof (v))
                goto short_;
            memcpy (&v, p + off + NLA_HDRLEN, sizeof (v));
            r.pid = (int32_t)v;
            have_pid = true;
        } else if (nested && type == TASKSTATS_TYPE_STATS) {
            /* the oldest struct with what we read (up to nivcsw) */
            uint16_t version;
            if (alen < offsetof (struct taskstats, ac_utimescaled))
                goto short_;
            memcpy (&version, p + off + NLA_HDRLEN, sizeof (version));
            if (version == 0) {
                errno = EINVAL;
                return errprintf (errp,
                                  "taskstats: a record at offset %zu "
                                  "with version 0",
                                  base + off);
            }
            fill (&r, p + off + NLA_HDRLEN, alen);
            have_stats = true;
        }
        off += NLA_ALIGN (a.nla_len);
        continue;
    short_:
        errno = EINVAL;
        return errprintf (errp,
                          "taskstats: attribute %zu at offset %zu has "
                          "%zu bytes, too short",
                          type,
                          base + off,
                          alen);
    }
    if (nested) {
        if (!have_pid || !have_stats) {
            errno = EINVAL;
            return errprintf (errp,
                              "taskstats: a per-task record at offset "
                              "%zu without %s",
                              base,
                              have_pid ? "stats" : "pid");
        }
        if (*count >= max) {
            errno = E2BIG;
            return errprintf (errp,
                              "taskstats: more than %zu records in one "
                              "datagram",
                              max);
        }
        out[(*count)++] = r;
    }
    return 0;
}

int taskstats_parse (const void *buf,
                     size_t len,
                     uint16_t family,
                     struct ts_record *out,
                     size_t max,
                     pin_error_t *errp)
{
    const unsigned char *b = buf;
    size_t off = 0, count = 0;

    if (!buf && len) {
        errno = EINVAL;
        return errprintf (errp, "taskstats: no buffer");
    }
    while (off < len) {
        struct nlmsghdr nh;
        size_t rest = len - off, payload;

        if (rest < NLMSG_HDRLEN) {
            errno = EINVAL;
            return errprintf (errp,
                              "taskstats: %zu bytes left at offset %zu, "
                              "less than a netlink header",
                              rest,
                              off);
        }
        memcpy (&nh, b + off, sizeof (nh));
        if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > rest) {
            errno = EINVAL;
            return errprintf (errp,
                              "taskstats: netlink length %u at offset "
                              "%zu outside [%zu, %zu]",
                              (unsigned)nh.nlmsg_len,
                              off,
                              (size_t)NLMSG_HDRLEN,
                              rest);
        }
        payload = nh.nlmsg_len - NLMSG_HDRLEN;
        if (nh.nlmsg_type == NLMSG_ERROR) {
            struct nlmsgerr e = {0};
            memcpy (&e,
                    b + off + NLMSG_HDRLEN,
                    payload < sizeof (e) ? payload : sizeof (e));
            if (e.error != 0) {
                errno = EPROTO;
                return errprintf (errp,
                                  "taskstats: the kernel answered "
                                  "error %ld",
                                  -(long)e.error);
            }
        } else if (nh.nlmsg_type == family) {
            struct genlmsghdr g;
            if (payload < GENL_HDRLEN) {
                errno = EINVAL;
                return errprintf (errp,
                                  "taskstats: message at offset %zu "
                                  "shorter than a genetlink header",
                                  off);
            }
            memcpy (&g, b + off + NLMSG_HDRLEN, sizeof (g));
            if (g.cmd == TASKSTATS_CMD_NEW
                && parse_attrs (b + off + NLMSG_HDRLEN + GENL_HDRLEN,
                                payload - GENL_HDRLEN,
                                false,
                                out,
                                max,
                                &count,
                                off + NLMSG_HDRLEN + GENL_HDRLEN,
                                errp)
                       < 0)
                return -1;
        }
        if (NLMSG_ALIGN (nh.nlmsg_len) >= rest)
            break;
        off += NLMSG_ALIGN (nh.nlmsg_len);
    }
    return (int)count;
}

/* ---- the socket ------------------------------------------------------- */

struct req {
    struct nlmsghdr nh;
    struct genlmsghdr g;
    char attrs[256];
};

static int put_attr (struct req *m,
                     uint16_t type,
                     const void *data,
                     size_t len)
{
    size_t off = m->nh.nlmsg_len;
    struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + len),
                       .nla_type = type};

    if (off + NLA_ALIGN (NLA_HDRLEN + len) > sizeof (*m))
        return -1;
    memcpy ((char *)m + off, &a, sizeof (a));
    memcpy ((char *)m + off + NLA_HDRLEN, data, len);
    m->nh.nlmsg_len = (uint32_t)(off + NLA_ALIGN (NLA_HDRLEN + len));
    return 0;
}

static int send_req (int fd,
                     uint16_t type,
                     uint8_t cmd,
                     uint16_t attr,
                     const void *data,
                     size_t len,
                     bool ack)
{
    struct req m;
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};

    memset (&m, 0, sizeof (m));
    m.nh.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
    m.nh.nlmsg_type = type;
    m.nh.nlmsg_flags = NLM_F_REQUEST | (ack ? NLM_F_ACK : 0);
    m.g.cmd = cmd;
    m.g.version = 1;
    if (put_attr (&m, attr, data, len) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (sendto (fd, &m, m.nh.nlmsg_len, 0, (struct sockaddr *)&to, sizeof (to))
        != (ssize_t)m.nh.nlmsg_len)
        return -1;
    return 0;
}

/* The family id from a CTRL_CMD_GETFAMILY answer; -1 if none. */
static int family_id (const unsigned char *b, size_t len)
{
    struct nlmsghdr nh;
    size_t off;

    if (len < NLMSG_HDRLEN)
        return -1;
    memcpy (&nh, b, sizeof (nh));
    if (nh.nlmsg_type != GENL_ID_CTRL || nh.nlmsg_len > len
        || nh.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
        return -1;
    for (off = NLMSG_HDRLEN + GENL_HDRLEN; off + NLA_HDRLEN <= nh.nlmsg_len;) {
        struct nlattr a;
        memcpy (&a, b + off, sizeof (a));
        if (a.nla_len < NLA_HDRLEN || a.nla_len > nh.nlmsg_len - off)
            return -1;
        if ((a.nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID
            && a.nla_len >= NLA_HDRLEN + 2) {
            uint16_t id;
            memcpy (&id, b + off + NLA_HDRLEN, 2);
            return id;
        }
        off += NLA_ALIGN (a.nla_len);
    }
    return -1;
}

int taskstats_open (int ncpus, int rcvbuf, uint16_t *family, pin_error_t *errp)
{
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    struct timeval tv = {.tv_sec = 2};
    unsigned char buf[4096];
    char mask[32];
    ssize_t n;
    int fd, id, e;

    fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
    if (fd < 0)
        return errprintf (errp, "taskstats: socket: %s", strerror (errno));
    if (rcvbuf > 0
        && setsockopt (fd,
                       SOL_SOCKET,
                       SO_RCVBUFFORCE,
                       &rcvbuf,
                       sizeof (rcvbuf))
               < 0)
        (void)setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof (rcvbuf));
    (void)setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv));
    if (bind (fd, (struct sockaddr *)&sa, sizeof (sa)) < 0)
        goto fail;
    if (send_req (fd,
                  GENL_ID_CTRL,
                  CTRL_CMD_GETFAMILY,
                  CTRL_ATTR_FAMILY_NAME,
                  TASKSTATS_GENL_NAME,
                  sizeof (TASKSTATS_GENL_NAME),
                  false)
        < 0)
        goto fail;
    if ((n = recv (fd, buf, sizeof (buf), 0)) < 0)
        goto fail;
    if ((id = family_id (buf, (size_t)n)) < 0) {
        close (fd);
        errno = ENOENT;
        return errprintf (errp,
                          "taskstats: this kernel has no TASKSTATS "
                          "family (CONFIG_TASKSTATS)");
    }
    snprintf (mask, sizeof (mask), "0-%d", ncpus > 0 ? ncpus - 1 : 0);
    if (send_req (fd,
                  (uint16_t)id,
                  TASKSTATS_CMD_GET,
                  TASKSTATS_CMD_ATTR_REGISTER_CPUMASK,
                  mask,
                  strlen (mask) + 1,
                  true)
        < 0)
        goto fail;
    /* the acknowledgement says whether the kernel took the mask; exit
     * records of tasks ending meanwhile may come first (not ours: no
     * root is followed yet) */
    for (int tries = 0;; tries++) {
        struct nlmsghdr nh;
        struct nlmsgerr ne = {0};
        if (tries > 100000) {
            errno = ETIMEDOUT;
            goto fail;
        }
        if ((n = recv (fd, buf, sizeof (buf), 0)) < 0)
            goto fail;
        if ((size_t)n < NLMSG_HDRLEN)
            continue;
        memcpy (&nh, buf, sizeof (nh));
        if (nh.nlmsg_type != NLMSG_ERROR)
            continue;
        if ((size_t)n >= NLMSG_HDRLEN + sizeof (ne))
            memcpy (&ne, buf + NLMSG_HDRLEN, sizeof (ne));
        if (ne.error != 0) {
            close (fd);
            errno = ne.error < 0 && ne.error > -4096 ? -ne.error : EPROTO;
            return errprintf (errp,
                              "taskstats: the kernel refused to "
                              "register CPUs %s: %s",
                              mask,
                              strerror (errno));
        }
        break;
    }
    tv.tv_sec = 0;
    (void)setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof (tv));
    if (fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK) < 0)
        goto fail;
    *family = (uint16_t)id;
    return fd;
fail:
    e = errno;
    close (fd);
    errno = e;
    return errprintf (errp, "taskstats: %s (root is needed)", strerror (e));
}

void taskstats_close (int fd, int ncpus, uint16_t family)
{
    int saved = errno;
    char mask[32];

    if (fd >= 0) {
        snprintf (mask, sizeof (mask), "0-%d", ncpus > 0 ? ncpus - 1 : 0);
        (void)send_req (fd,
                        family,
                        TASKSTATS_CMD_GET,
                        TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
                        mask,
                        strlen (mask) + 1,
                        false);
        close (fd);
    }
    errno = saved;
}

int taskstats_listen (int fd, int ncpus, uint16_t family, bool on)
{
    char mask[32];

    snprintf (mask, sizeof (mask), "0-%d", ncpus > 0 ? ncpus - 1 : 0);
    return send_req (fd,
                     family,
                     TASKSTATS_CMD_GET,
                     on ? TASKSTATS_CMD_ATTR_REGISTER_CPUMASK
                        : TASKSTATS_CMD_ATTR_DEREGISTER_CPUMASK,
                     mask,
                     strlen (mask) + 1,
                     false);
}

/* ---- pairing records with exits ---------------------------------------- */

/* How much longer than the task's fork-to-exit a record's elapsed time
 * may be and still be the task's: the kernel takes the start time a
 * little before it sends the fork event. */
#define TS_START_SLACK_US 1000000ull

enum { TS_EMPTY = 0, TS_REC, TS_SEXIT };

/* A table entry: a record waiting for its exit (TS_REC), or a step exit
 * waiting to be settled (TS_SEXIT, so that a fork of its pid can be
 * noted).  Several entries may have the same pid. */
struct tsentry {
    int32_t pid;
    int kind;
    uint64_t seq; /* TS_REC: reading order; TS_SEXIT: exit's seq */
    uint64_t t;   /* TS_REC: read_ns */
    struct ts_record r;
};

struct tsexit {
    struct ts_exit x;
    uint64_t gen; /* drains of the taskstats socket before it */
    bool reused;  /* its pid was forked again before it settled */
    bool nomem;   /* not in the table: settle it as missing */
};

struct tsmatch {
    struct tsentry *e;
    size_t size, used;
    uint64_t rec_seq;
    struct tsexit *q; /* exits in the order they came: q[head..tail) */
    size_t head, tail, cap;
    uint64_t q_seq0;  /* seq of q[0] */
    uint64_t drained; /* tsmatch_drained() calls */
    size_t awaiting, sexits;
    uint64_t lost_ns; /* the last loss reported, 0: none */
    struct tsmatch_stats st;
};

static size_t ts_hash (int32_t pid, size_t size)
{
    uint32_t x = (uint32_t)pid * 2654435761u;
    return (size_t)(x ^ (x >> 16)) & (size - 1);
}

struct tsmatch *tsmatch_create (void)
{
    struct tsmatch *m = calloc (1, sizeof (*m));

    if (!m)
        return NULL;
    m->size = 256;
    if (!(m->e = calloc (m->size, sizeof (*m->e)))) {
        free (m);
        return NULL;
    }
    return m;
}

void tsmatch_destroy (struct tsmatch *m)
{
    int saved = errno;

    if (m) {
        free (m->e);
        free (m->q);
        free (m);
    }
    errno = saved;
}

/* The entry of `kind` for pid with the smallest seq (the oldest record),
 * or with seq == want when want != UINT64_MAX. */
static struct tsentry *ts_find (struct tsmatch *m,
                                int32_t pid,
                                int kind,
                                uint64_t want)
{
    size_t i = ts_hash (pid, m->size);
    struct tsentry *best = NULL;

    while (m->e[i].kind != TS_EMPTY) {
        struct tsentry *k = &m->e[i];
        if (k->pid == pid && k->kind == kind) {
            if (want != UINT64_MAX) {
                if (k->seq == want)
                    return k;
            } else if (!best || k->seq < best->seq)
                best = k;
        }
        i = (i + 1) & (m->size - 1);
    }
    return best;
}

/* Rebuild into `size` slots, dropping the records read more than `age`
 * ago (every record with age 0). */
static int ts_rebuild (struct tsmatch *m,
                       size_t size,
                       uint64_t now,
                       uint64_t age)
{
    struct tsentry *e = calloc (size, sizeof (*e));

    if (!e)
        return -1;
    m->used = 0;
    for (size_t k = 0; k < m->size; k++) {
        struct tsentry *o = &m->e[k];
        size_t i;
        if (o->kind == TS_EMPTY)
            continue;
        if (o->kind == TS_REC
            && (age == 0 || (now > o->t && now - o->t > age))) {
            m->st.unclaimed++;
            continue;
        }
        i = ts_hash (o->pid, size);
        while (e[i].kind != TS_EMPTY)
            i = (i + 1) & (size - 1);
        e[i] = *o;
        m->used++;
    }
    free (m->e);
    m->e = e;
    m->size = size;
    return 0;
}

static struct tsentry *ts_insert (struct tsmatch *m, int32_t pid, int kind)
{
    size_t i;

    if ((m->used + 1) * 2 > m->size
        && ts_rebuild (m, m->size * 2, 0, UINT64_MAX) < 0) {
        errno = ENOMEM;
        return NULL;
    }
    i = ts_hash (pid, m->size);
    while (m->e[i].kind != TS_EMPTY)
        i = (i + 1) & (m->size - 1);
    m->e[i].pid = pid;
    m->e[i].kind = kind;
    m->used++;
    return &m->e[i];
}

static void ts_erase (struct tsmatch *m, struct tsentry *k)
{
    size_t i = (size_t)(k - m->e), j = i;

    m->e[i].kind = TS_EMPTY;
    m->used--;
    for (;;) {
        size_t h;
        j = (j + 1) & (m->size - 1);
        if (m->e[j].kind == TS_EMPTY)
            return;
        h = ts_hash (m->e[j].pid, m->size);
        if ((j > i && (h <= i || h > j)) || (j < i && (h <= i && h > j))) {
            m->e[i] = m->e[j];
            m->e[j].kind = TS_EMPTY;
            i = j;
        }
    }
}

int tsmatch_record (struct tsmatch *m,
                    const struct ts_record *r,
                    uint64_t read_ns)
{
    struct tsentry *k = ts_insert (m, r->pid, TS_REC);

    if (!k)
        return -1;
    k->seq = m->rec_seq++;
    k->t = read_ns;
    k->r = *r;
    return 0;
}

int tsmatch_exit (struct tsmatch *m, const struct ts_exit *x)
{
    struct tsexit *q;

    if (m->tail == m->cap) {
        if (m->head > 0) { /* slide the settled ones out */
            memmove (m->q,
                     m->q + m->head,
                     (m->tail - m->head) * sizeof (*m->q));
            m->q_seq0 += m->head;
            m->tail -= m->head;
            m->head = 0;
        }
        if (m->tail == m->cap) {
            size_t c = m->cap ? m->cap * 2 : 256;
            struct tsexit *p = realloc (m->q, c * sizeof (*p));
            if (!p) {
                if (x->step)
                    m->st.missing++;
                errno = ENOMEM;
                return -1;
            }
            m->q = p;
            m->cap = c;
        }
    }
    q = &m->q[m->tail];
    memset (q, 0, sizeof (*q));
    q->x = *x;
    q->gen = m->drained;
    if (x->step) {
        struct tsentry *k = ts_insert (m, x->pid, TS_SEXIT);
        if (k)
            k->seq = m->q_seq0 + m->tail;
        else
            q->nomem = true;
        m->awaiting++;
        m->sexits += k != NULL;
    }
    m->tail++;
    return 0;
}

void tsmatch_fork (struct tsmatch *m, int32_t pid)
{
    size_t i;

    if (m->sexits == 0)
        return;
    for (i = ts_hash (pid, m->size); m->e[i].kind != TS_EMPTY;
         i = (i + 1) & (m->size - 1))
        if (m->e[i].pid == pid && m->e[i].kind == TS_SEXIT)
            m->q[m->e[i].seq - m->q_seq0].reused = true;
}

void tsmatch_lost (struct tsmatch *m, uint64_t now_ns)
{
    m->lost_ns = now_ns ? now_ns : 1;
}

void tsmatch_drained (struct tsmatch *m)
{
    m->drained++;
}

/* The record of step exit q, or NULL; drops the earlier tasks' records
 * found on the way. */
static bool claim (struct tsmatch *m, struct tsexit *q, struct ts_record *out)
{
    const struct ts_exit *x = &q->x;
    struct tsentry *k;

    while ((k = ts_find (m, x->pid, TS_REC, UINT64_MAX))) {
        uint64_t lived_us =
            x->exit_ns > x->fork_ns ? (x->exit_ns - x->fork_ns) / 1000 : 0;
        if (k->t < x->fork_ns
            || (!x->root && k->r.etime_us > lived_us + TS_START_SLACK_US)) {
            /* read before the task existed, or began before it: an
             * earlier holder of the pid whose exit was not seen */
            m->st.stale++;
            ts_erase (m, k);
            continue;
        }
        if (k->r.tgid && x->tgid && k->r.tgid != x->tgid)
            return false; /* not this task's; left to its own */
        if (q->reused && m->lost_ns && m->lost_ns >= x->fork_ns) {
            /* a loss reported after the task began: its record may be
             * the one lost, and this one the next holder's (the loss of
             * a record sent before its exit is reported before the
             * drain that lets the exit settle) */
            m->st.ambiguous++;
            ts_erase (m, k);
            return false;
        }
        *out = k->r;
        ts_erase (m, k);
        return true;
    }
    return false;
}

int tsmatch_resolve (struct tsmatch *m, bool all, tsmatch_fn fn, void *arg)
{
    while (m->head < m->tail && (all || m->q[m->head].gen < m->drained)) {
        struct tsexit *q = &m->q[m->head];
        struct ts_record r;
        bool got = false;
        int rc = 0;

        if (!q->x.step) {
            struct tsentry *k = ts_find (m, q->x.pid, TS_REC, UINT64_MAX);
            if (k) {
                m->st.foreign++;
                ts_erase (m, k);
            }
            m->head++;
            continue;
        }
        if (!q->nomem) {
            struct tsentry *k =
                ts_find (m, q->x.pid, TS_SEXIT, m->q_seq0 + m->head);
            if (k) {
                ts_erase (m, k);
                m->sexits--;
            }
            got = claim (m, q, &r);
        }
        if (got)
            m->st.claimed++;
        else
            m->st.missing++;
        m->awaiting--;
        m->head++;
        if (fn && (rc = fn (&q->x, got ? &r : NULL, arg)) != 0)
            return rc;
    }
    if (m->head == m->tail) {
        m->q_seq0 += m->head;
        m->head = m->tail = 0;
    }
    return 0;
}

size_t tsmatch_awaiting (const struct tsmatch *m)
{
    return m->awaiting;
}

void tsmatch_expire (struct tsmatch *m, uint64_t now_ns, uint64_t age_ns)
{
    /* same size: cannot fail for lack of room, only of memory, in which
     * case the entries stay until the next call */
    (void)ts_rebuild (m, m->size, now_ns, age_ns);
}

void tsmatch_stats (const struct tsmatch *m, struct tsmatch_stats *s)
{
    *s = m->st;
}
