/* cnproc.h - process events from the kernel's proc connector
 *
 * The proc connector (netlink NETLINK_CONNECTOR, CN_IDX_PROC) multicasts
 * one message per fork, exec, exit, comm change, ... of every task of the
 * machine to root listeners.  This file holds
 *   - a pure parser of one received datagram (cnproc_parse), safe on
 *     truncated or hostile bytes;
 *   - a loss counter fed with each event's (cpu, seq): the kernel numbers
 *     the events of each CPU 0, 1, 2, ... so a gap is a lost event;
 *   - the socket: open, subscribe, receive (ENOBUFS counted, never
 *     ignored).
 * Needs root (CAP_NET_ADMIN) and the initial network namespace.
 */
#ifndef PIN_CNPROC_H
#define PIN_CNPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

enum cnproc_type {
    CNPROC_NONE = 0, /* the kernel's acknowledgement of a subscription */
    CNPROC_FORK,     /* new process or thread (pid != tgid: a thread) */
    CNPROC_EXEC,
    CNPROC_EXIT,  /* a task (thread) ended; pid == tgid: the leader */
    CNPROC_COMM,  /* prctl(PR_SET_NAME) */
    CNPROC_OTHER, /* uid, gid, sid, ptrace, coredump, unknown */
};

struct cnproc_event {
    enum cnproc_type type;
    uint32_t what;        /* the kernel's code (PROC_EVENT_*) */
    uint32_t cpu;         /* CPU that sent it */
    uint32_t seq;         /* per-CPU sequence number */
    uint64_t ts_ns;       /* CLOCK_MONOTONIC, ns */
    int32_t pid, tgid;    /* the task; the child for FORK */
    int32_t ppid, ptgid;  /* FORK: the child's real parent */
    uint32_t exit_code;   /* EXIT: wait status; ack error for NONE */
    uint32_t exit_signal; /* EXIT */
    char comm[17];        /* COMM: the new name, NUL-terminated */
};

/* Parse one datagram of `len` bytes: one or more netlink messages, each a
 * struct cn_msg carrying a struct proc_event.  Stores the events in
 * ev[0..] (at most `max`) and returns how many there were, 0 for a
 * datagram holding only NOOP messages.  Returns -1 with errno EINVAL and
 * errp ("proc connector: ...", naming the offset) for a malformed
 * datagram (truncated header or payload, a length pointing outside, a
 * message of another connector), EPROTO for a netlink error message and
 * E2BIG if there were more than `max` events; `ev` may then be partly
 * written.  Reads only buf[0..len). */
int cnproc_parse (const void *buf,
                  size_t len,
                  struct cnproc_event *ev,
                  size_t max,
                  pin_error_t *errp);

/* Lost-event counting from the per-CPU sequence numbers. */
struct cnproc_seq;

/* NULL (ENOMEM) on failure.  Destroy accepts NULL. */
struct cnproc_seq *cnproc_seq_create (void);
void cnproc_seq_destroy (struct cnproc_seq *s);

/* Account for event `ev` (NONE events are ignored): returns how many
 * events of its CPU were missed just before it (0 normally), and adds
 * that to the total.  A seq at or below the last one of its CPU counts
 * as out of order (no loss).  CPUs above 65535 are counted as bad. */
uint64_t cnproc_seq_note (struct cnproc_seq *s, const struct cnproc_event *ev);

struct cnproc_seq_stats {
    uint64_t events;    /* events noted */
    uint64_t lost;      /* missing sequence numbers between noted ones */
    uint64_t reordered; /* seq not above the last of its CPU */
    uint64_t bad_cpu;   /* cpu number out of range */
};
void cnproc_seq_stats (const struct cnproc_seq *s,
                       struct cnproc_seq_stats *out);

/* The listening socket.  cnproc_open: a non-blocking, close-on-exec
 * socket bound to the proc connector's group, with a receive buffer of
 * `rcvbuf` bytes (SO_RCVBUFFORCE, else SO_RCVBUF: *rcvbuf_got says what
 * the kernel gave, may be NULL), subscribed (PROC_CN_MCAST_LISTEN).
 * Returns the fd or -1 with errp.  cnproc_close unsubscribes and closes
 * (fd < 0 is a no-op, keeps errno). */
int cnproc_open (int rcvbuf, int *rcvbuf_got, pin_error_t *errp);
void cnproc_close (int fd);

/* Receive one datagram from the kernel into buf.  Returns its length,
 * 0 if nothing is waiting (EAGAIN), -1 with errno ENOBUFS when the
 * kernel dropped messages because the buffer was full (the caller counts
 * it and goes on: the socket stays usable), -1 with errno otherwise.
 * Datagrams not sent by the kernel (a user process) are dropped and
 * counted in *foreign (may be NULL). */
ssize_t cnproc_recv (int fd, void *buf, size_t size, uint64_t *foreign);

/* The same for up to `nslots` datagrams in one system call (recvmmsg):
 * datagram i is stored at buf + i * slot, its length in lens[i].
 * Returns how many were stored (the kernel's only: the others are
 * counted in *foreign), 0 if nothing is waiting, -1 with errno as
 * cnproc_recv (an ENOBUFS after the first datagram is reported by the
 * next call: the datagrams before it are returned first).  A datagram
 * longer than `slot` is stored truncated (with its length field intact,
 * so that cnproc_parse refuses it). */
int cnproc_recv_batch (int fd,
                       void *buf,
                       size_t slot,
                       unsigned nslots,
                       size_t *lens,
                       uint64_t *foreign);

/* The kernel's count of messages dropped for this socket's full buffer
 * (SO_MEMINFO, SK_MEMINFO_DROPS), or -1 if the kernel does not say. */
int64_t cnproc_socket_drops (int fd);

#endif /* !PIN_CNPROC_H */
