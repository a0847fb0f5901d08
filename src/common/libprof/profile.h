/* profile.h - the profile file: JSON Lines, bounded in size
 *
 * One JSON object per line, each with a "type"; the first line is the
 * header ("type":"header", "format":"slurm-pin-profile", "version":1).
 * doc/profiling.md describes every type and field.
 *
 * Writer: lines go out in the order given until the file would exceed
 * its bound; then one "note" line says so and later lines are counted,
 * not written, except the final "end" line, for which room is reserved.
 * Reader: checks the header and hands each line to a callback.
 */
#ifndef PIN_PROFILE_H
#define PIN_PROFILE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "libutil/errprintf.h"

#define PROF_FORMAT "slurm-pin-profile"
#define PROF_VERSION 1
/* Room kept for the note and end lines; the smallest bound accepted. */
#define PROF_RESERVE 4096
#define PROF_MIN_BYTES (2 * PROF_RESERVE)
/* Longest line a reader accepts. */
#define PROF_MAX_LINE (1024 * 1024)

struct prof_writer;

/* Create `path` as a new inode (mode 0600; an existing file of that name
 * is unlinked first, then the file made with O_EXCL|O_NOFOLLOW: a symbolic
 * link or a file planted in between is refused; a descriptor kept on the
 * old file never sees the new one) for a profile of at most `max_bytes` (>=
 * PROF_MIN_BYTES) and write `header` (borrowed: its "type", "format" and
 * "version" are set here).  NULL with errp on failure. */
struct prof_writer *prof_writer_open (const char *path,
                                      uint64_t max_bytes,
                                      json_object *header,
                                      pin_error_t *errp);

/* Write one line (borrowed).  1: written; 0: dropped because the bound
 * was reached (the first drop writes the note line); -1: a write error
 * (errp), after which every call fails. */
int prof_writer_put (struct prof_writer *w,
                     json_object *line,
                     pin_error_t *errp);

/* The same for a line formatted by the caller: `n` bytes of one JSON
 * object in ASCII, without its newline (what prof_writer_put would write
 * for it: the recorder's hot path formats its event lines itself). */
int prof_writer_put_text (struct prof_writer *w,
                          const char *line,
                          size_t n,
                          pin_error_t *errp);

/* Let uid read the file, and nobody else but its owner (root in
 * slurmstepd): a POSIX ACL (u::rw, u:uid:r, g::-, m::r, o::-); the file
 * stays its creator's, so the reader can neither write it, nor chmod it,
 * nor grow it past its bound.  0; 1 with errp saying so when the file
 * system has no ACLs (the file is then left readable by its owner only,
 * 0600); -1 with errp on another error. */
int prof_writer_share (struct prof_writer *w, uid_t uid, pin_error_t *errp);

/* Stop writing (as at the bound, with a note line saying why) once the
 * file system the profile is on would have fewer than `bytes` free: room
 * kept for root's accounting journal on the same file system
 * (doc/profiling.md).  Checked every 64 KiB written, with that margin.
 * 0: no check. */
void prof_writer_keep_free (struct prof_writer *w, uint64_t bytes);

/* Did keep_free, rather than the bound, stop the writing? */
bool prof_writer_out_of_room (const struct prof_writer *w);

/* Lines dropped so far. */
uint64_t prof_writer_dropped (const struct prof_writer *w);

/* Write `end` (borrowed; "type":"end" and "dropped_lines" are set here;
 * may be NULL for no end line), flush and close, free w.  0, or -1 with
 * errp if anything failed to reach the file.  NULL w is a no-op. */
int prof_writer_close (struct prof_writer *w,
                       json_object *end,
                       pin_error_t *errp);

/* Read `path`: check the header, then call fn(line, lineno, arg) for
 * every line, the header included (line 1); a non-zero return stops the
 * reading and is returned.  -1 with errp for a file that cannot be read,
 * a line that is not a JSON object with a string "type" or longer than
 * PROF_MAX_LINE, a header of another format or a newer version. */
int prof_read (const char *path,
               int (*fn) (json_object *line, int lineno, void *arg),
               void *arg,
               pin_error_t *errp);

/* Small accessors for reading lines: the member `key` of `o` as an
 * integer / string, or `dflt` / NULL when absent or of another type. */
int64_t prof_get_int (json_object *o, const char *key, int64_t dflt);
const char *prof_get_str (json_object *o, const char *key);

#endif /* !PIN_PROFILE_H */
