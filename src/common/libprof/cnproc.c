/* cnproc.c - process events from the kernel's proc connector */
#if HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cnproc.h"

/* The fixed part of struct proc_event before its union. */
#define EV_HEAD offsetof (struct proc_event, event_data)

static size_t data_size (uint32_t what)
{
    switch (what) {
        case PROC_EVENT_NONE:
            return sizeof (((struct proc_event *)0)->event_data.ack);
        case PROC_EVENT_FORK:
            return sizeof (struct fork_proc_event);
        case PROC_EVENT_EXEC:
            return sizeof (struct exec_proc_event);
        case PROC_EVENT_EXIT:
            /* exit_code, exit_signal; later kernels added parent fields */
            return offsetof (struct exit_proc_event, exit_signal)
                   + sizeof (uint32_t);
        case PROC_EVENT_COMM:
            return sizeof (struct comm_proc_event);
        default:
            return 0;
    }
}

static int parse_event (const unsigned char *p,
                        size_t n,
                        struct cnproc_event *e,
                        size_t off,
                        pin_error_t *errp)
{
    struct proc_event pe;
    size_t need;

    if (n < EV_HEAD)
        goto short_;
    memset (&pe, 0, sizeof (pe));
    memcpy (&pe, p, n < sizeof (pe) ? n : sizeof (pe));
    need = EV_HEAD + data_size (pe.what);
    if (n < need)
        goto short_;
    memset (e, 0, sizeof (*e));
    e->what = pe.what;
    e->cpu = pe.cpu;
    e->ts_ns = pe.timestamp_ns;
    switch (pe.what) {
        case PROC_EVENT_NONE:
            e->type = CNPROC_NONE;
            e->exit_code = pe.event_data.ack.err;
            break;
        case PROC_EVENT_FORK:
            e->type = CNPROC_FORK;
            e->pid = pe.event_data.fork.child_pid;
            e->tgid = pe.event_data.fork.child_tgid;
            e->ppid = pe.event_data.fork.parent_pid;
            e->ptgid = pe.event_data.fork.parent_tgid;
            break;
        case PROC_EVENT_EXEC:
            e->type = CNPROC_EXEC;
            e->pid = pe.event_data.exec.process_pid;
            e->tgid = pe.event_data.exec.process_tgid;
            break;
        case PROC_EVENT_EXIT:
            e->type = CNPROC_EXIT;
            e->pid = pe.event_data.exit.process_pid;
            e->tgid = pe.event_data.exit.process_tgid;
            e->exit_code = pe.event_data.exit.exit_code;
            e->exit_signal = pe.event_data.exit.exit_signal;
            break;
        case PROC_EVENT_COMM:
            e->type = CNPROC_COMM;
            e->pid = pe.event_data.comm.process_pid;
            e->tgid = pe.event_data.comm.process_tgid;
            memcpy (e->comm, pe.event_data.comm.comm, 16);
            e->comm[16] = '\0';
            break;
        default:
            e->type = CNPROC_OTHER;
            break;
    }
    return 0;
short_:
    errno = EINVAL;
    return errprintf (errp,
                      "proc connector: event at offset %zu has %zu "
                      "bytes, too short for its type",
                      off,
                      n);
}

int cnproc_parse (const void *buf,
                  size_t len,
                  struct cnproc_event *ev,
                  size_t max,
                  pin_error_t *errp)
{
    const unsigned char *b = buf;
    size_t off = 0;
    int count = 0;

    if (!buf && len) {
        errno = EINVAL;
        return errprintf (errp, "proc connector: no buffer");
    }
    while (off < len) {
        struct nlmsghdr nh;
        struct cn_msg cn;
        size_t rest = len - off, payload;

        if (rest < NLMSG_HDRLEN) {
            errno = EINVAL;
            return errprintf (errp,
                              "proc connector: %zu bytes left at "
                              "offset %zu, less than a netlink header",
                              rest,
                              off);
        }
        memcpy (&nh, b + off, sizeof (nh));
        if (nh.nlmsg_len < NLMSG_HDRLEN || nh.nlmsg_len > rest) {
            errno = EINVAL;
            return errprintf (errp,
                              "proc connector: netlink length %u at "
                              "offset %zu outside [%zu, %zu]",
                              (unsigned)nh.nlmsg_len,
                              off,
                              (size_t)NLMSG_HDRLEN,
                              rest);
        }
        payload = nh.nlmsg_len - NLMSG_HDRLEN;
        if (nh.nlmsg_type == NLMSG_NOOP)
            goto next;
        if (nh.nlmsg_type == NLMSG_ERROR || nh.nlmsg_type == NLMSG_OVERRUN) {
            errno = EPROTO;
            return errprintf (errp,
                              "proc connector: netlink %s message at "
                              "offset %zu",
                              nh.nlmsg_type == NLMSG_ERROR ? "error"
                                                           : "overrun",
                              off);
        }
        if (payload < sizeof (cn)) {
            errno = EINVAL;
            return errprintf (errp,
                              "proc connector: message at offset %zu "
                              "has %zu bytes, less than a connector "
                              "header",
                              off,
                              payload);
        }
        memcpy (&cn, b + off + NLMSG_HDRLEN, sizeof (cn));
        if (cn.id.idx != CN_IDX_PROC || cn.id.val != CN_VAL_PROC) {
            errno = EINVAL;
            return errprintf (errp,
                              "proc connector: message at offset %zu "
                              "is for connector %u:%u, not %u:%u",
                              off,
                              (unsigned)cn.id.idx,
                              (unsigned)cn.id.val,
                              (unsigned)CN_IDX_PROC,
                              (unsigned)CN_VAL_PROC);
        }
        if (cn.len > payload - sizeof (cn)) {
            errno = EINVAL;
            return errprintf (errp,
                              "proc connector: connector length %u "
                              "at offset %zu exceeds the %zu bytes there",
                              (unsigned)cn.len,
                              off,
                              payload - sizeof (cn));
        }
        if ((size_t)count >= max) {
            errno = E2BIG;
            return errprintf (errp,
                              "proc connector: more than %zu events "
                              "in one datagram",
                              max);
        }
        if (parse_event (b + off + NLMSG_HDRLEN + sizeof (cn),
                         cn.len,
                         &ev[count],
                         off,
                         errp)
            < 0)
            return -1;
        ev[count].seq = cn.seq;
        count++;
    next:
        if (NLMSG_ALIGN (nh.nlmsg_len) >= rest)
            break;
        off += NLMSG_ALIGN (nh.nlmsg_len);
    }
    return count;
}

/* ---- loss counting ---------------------------------------------------- */

#define SEQ_MAX_CPU 65536

struct cnproc_seq {
    uint32_t *next; /* the seq expected next, per CPU */
    uint8_t *seen;  /* 1 once a CPU has sent an event */
    size_t ncpu;
    struct cnproc_seq_stats st;
};

struct cnproc_seq *cnproc_seq_create (void)
{
    return calloc (1, sizeof (struct cnproc_seq));
}

void cnproc_seq_destroy (struct cnproc_seq *s)
{
    int saved = errno;

    if (s) {
        free (s->next);
        free (s->seen);
        free (s);
    }
    errno = saved;
}

static int seq_grow (struct cnproc_seq *s, size_t cpu)
{
    size_t n = cpu + 1 > 64 ? cpu + 1 : 64;
    uint32_t *next = realloc (s->next, n * sizeof (*next));
    uint8_t *seen;

    if (!next)
        return -1;
    s->next = next;
    if (!(seen = realloc (s->seen, n)))
        return -1;
    s->seen = seen;
    memset (next + s->ncpu, 0, (n - s->ncpu) * sizeof (*next));
    memset (seen + s->ncpu, 0, n - s->ncpu);
    s->ncpu = n;
    return 0;
}

uint64_t cnproc_seq_note (struct cnproc_seq *s, const struct cnproc_event *ev)
{
    uint32_t gap;

    if (ev->type == CNPROC_NONE)
        return 0;
    s->st.events++;
    if (ev->cpu >= SEQ_MAX_CPU
        || (ev->cpu >= s->ncpu && seq_grow (s, ev->cpu) < 0)) {
        s->st.bad_cpu++; /* cannot follow it: say so */
        return 0;
    }
    if (!s->seen[ev->cpu]) {
        s->seen[ev->cpu] = 1; /* the first one is the baseline */
        s->next[ev->cpu] = ev->seq + 1;
        return 0;
    }
    gap = ev->seq - s->next[ev->cpu];
    if ((int32_t)gap < 0) {
        s->st.reordered++;
        return 0;
    }
    s->next[ev->cpu] = ev->seq + 1;
    s->st.lost += gap;
    return gap;
}

void cnproc_seq_stats (const struct cnproc_seq *s,
                       struct cnproc_seq_stats *out)
{
    *out = s->st;
}

/* ---- the socket ------------------------------------------------------- */

static int send_op (int fd, enum proc_cn_mcast_op op)
{
    unsigned char m[NLMSG_HDRLEN + sizeof (struct cn_msg) + sizeof (op)];
    struct nlmsghdr nh = {0};
    struct cn_msg cn = {0};
    struct sockaddr_nl to = {.nl_family = AF_NETLINK};

    nh.nlmsg_len = sizeof (m);
    nh.nlmsg_type = NLMSG_DONE;
    cn.id.idx = CN_IDX_PROC;
    cn.id.val = CN_VAL_PROC;
    cn.len = sizeof (op);
    memset (m, 0, sizeof (m));
    memcpy (m, &nh, sizeof (nh));
    memcpy (m + NLMSG_HDRLEN, &cn, sizeof (cn));
    memcpy (m + NLMSG_HDRLEN + sizeof (cn), &op, sizeof (op));
    if (sendto (fd, m, sizeof (m), 0, (struct sockaddr *)&to, sizeof (to))
        != (ssize_t)sizeof (m))
        return -1;
    return 0;
}

int cnproc_open (int rcvbuf, int *rcvbuf_got, pin_error_t *errp)
{
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK,
                             .nl_groups = CN_IDX_PROC};
    socklen_t sl = sizeof (int);
    int fd, got = 0;

    fd = socket (PF_NETLINK,
                 SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                 NETLINK_CONNECTOR);
    if (fd < 0)
        return errprintf (errp,
                          "proc connector: socket: %s",
                          strerror (errno));
    if (rcvbuf > 0
        && setsockopt (fd,
                       SOL_SOCKET,
                       SO_RCVBUFFORCE,
                       &rcvbuf,
                       sizeof (rcvbuf))
               < 0)
        (void)setsockopt (fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof (rcvbuf));
    if (getsockopt (fd, SOL_SOCKET, SO_RCVBUF, &got, &sl) == 0 && rcvbuf_got)
        *rcvbuf_got = got;
    if (bind (fd, (struct sockaddr *)&sa, sizeof (sa)) < 0) {
        int e = errno;
        close (fd);
        errno = e;
        return errprintf (errp,
                          "proc connector: bind: %s (root is needed)",
                          strerror (e));
    }
    if (send_op (fd, PROC_CN_MCAST_LISTEN) < 0) {
        int e = errno;
        close (fd);
        errno = e;
        return errprintf (errp,
                          "proc connector: subscribe: %s (root is "
                          "needed)",
                          strerror (e));
    }
    return fd;
}

void cnproc_close (int fd)
{
    int saved = errno;

    if (fd >= 0) {
        (void)send_op (fd, PROC_CN_MCAST_IGNORE);
        close (fd);
    }
    errno = saved;
}

ssize_t cnproc_recv (int fd, void *buf, size_t size, uint64_t *foreign)
{
    for (;;) {
        struct sockaddr_nl from;
        socklen_t fl = sizeof (from);
        ssize_t n = recvfrom (fd, buf, size, 0, (struct sockaddr *)&from, &fl);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (fl < sizeof (from) || from.nl_pid != 0) {
            if (foreign)
                (*foreign)++;
            continue;
        }
        return n;
    }
}

#define BATCH_MAX 256

int cnproc_recv_batch (int fd,
                       void *buf,
                       size_t slot,
                       unsigned nslots,
                       size_t *lens,
                       uint64_t *foreign)
{
    struct mmsghdr mm[BATCH_MAX];
    struct iovec iov[BATCH_MAX];
    struct sockaddr_nl from[BATCH_MAX];
    unsigned char *b = buf;

    if (nslots > BATCH_MAX)
        nslots = BATCH_MAX;
    for (;;) {
        int n, kept = 0;

        memset (mm, 0, nslots * sizeof (mm[0]));
        for (unsigned i = 0; i < nslots; i++) {
            iov[i].iov_base = b + i * slot;
            iov[i].iov_len = slot;
            mm[i].msg_hdr.msg_iov = &iov[i];
            mm[i].msg_hdr.msg_iovlen = 1;
            mm[i].msg_hdr.msg_name = &from[i];
            mm[i].msg_hdr.msg_namelen = sizeof (from[i]);
        }
        n = recvmmsg (fd, mm, nslots, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (n == 0)
            return 0;
        for (int i = 0; i < n; i++) {
            if (mm[i].msg_hdr.msg_namelen < sizeof (from[i])
                || from[i].nl_pid != 0) {
                if (foreign)
                    (*foreign)++;
                continue;
            }
            if (kept != i)
                memmove (b + (size_t)kept * slot,
                         b + (size_t)i * slot,
                         mm[i].msg_len);
            lens[kept++] = mm[i].msg_len;
        }
        if (kept)
            return kept;
    }
}

int64_t cnproc_socket_drops (int fd)
{
    uint32_t mem[SK_MEMINFO_VARS];
    socklen_t len = sizeof (mem);

    memset (mem, 0, sizeof (mem));
    if (getsockopt (fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0
        || len <= SK_MEMINFO_DROPS * sizeof (uint32_t))
        return -1;
    return mem[SK_MEMINFO_DROPS];
}
