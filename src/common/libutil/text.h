/* text.h - text from users made safe to print on a terminal
 *
 * Every string a user controls (job, step, command and process names,
 * partitions, accounts, paths, option values echoed in an error) passes
 * through text_sanitize() before slurm-pin prints it, so that it cannot
 * move the cursor, change the window title, recolour or hide what root
 * reads, break a row into two lines, or reorder what follows it.
 *
 * Each of these becomes one '?' (a character, or one byte of an invalid
 * sequence):
 *   - C0 controls U+0000..U+001F (TAB, LF, CR and ESC included: an escape
 *     sequence loses its ESC and shows as text) and DEL U+007F;
 *   - C1 controls U+0080..U+009F encoded in UTF-8 (C2 80..C2 9F: CSI,
 *     OSC, ... which UTF-8 terminals may obey);
 *   - Unicode's Bidi_Control characters U+061C, U+200E, U+200F,
 *     U+202A..U+202E, U+2066..U+2069 (embeddings, overrides, isolates,
 *     marks: "Trojan Source"), and the line and paragraph separators
 *     U+2028, U+2029;
 *   - every byte of an ill-formed UTF-8 sequence: a stray continuation
 *     byte, a lead byte not followed by its continuations, an overlong
 *     form, a surrogate (U+D800..U+DFFF), anything above U+10FFFF, the
 *     bytes C0, C1, F5..FF (so a raw 8-bit C1 byte such as 0x9B, the CSI
 *     of a Latin-1 terminal, never passes).
 * Everything else, printable ASCII and well-formed UTF-8 (accents, CJK,
 * emoji), is kept as it is.
 *
 * TEXT_ASCII: also every byte >= 0x80 becomes '?' (for output that can
 * only show ASCII, such as plot's PLplot fonts).
 */
#ifndef PIN_TEXT_H
#define PIN_TEXT_H

#include <stddef.h>

enum {
    TEXT_ASCII = 1, /* replace every non-ASCII byte too */
};

/* Copy `src` (NULL reads as "") into `dst` of `n` bytes with the
 * characters above replaced by '?', always NUL-terminated when n > 0,
 * never cutting a UTF-8 character in two.  The result is never longer
 * than `src`, so `dst` may be `src` (in place).  Returns dst.
 */
char *text_sanitize (char *dst, size_t n, const char *src, int flags);

/* True when text_sanitize() would change nothing in `s`. */
int text_is_safe (const char *s, int flags);

/* JSON text as it is written to a file another slurm-pin reads: the
 * serialized JSON `json` (json-c's output) with every character outside
 * ASCII written as a \uXXXX escape (a surrogate pair above U+FFFF) and
 * every byte of ill-formed UTF-8 as \ufffd.  Bytes >= 0x80 occur only
 * inside JSON strings, where an escape means the same character, so the
 * value is unchanged for every reader while the text is plain ASCII: valid
 * for any JSON parser, strict or not (json-c 0.17 and 0.18 in strict mode
 * refuse raw UTF-8; 0.16 and 0.19 take it), and for any json-c reading it
 * back (every version decodes \u escapes, pairs included).  Malloc'd;
 * NULL with errno ENOMEM. */
char *text_json_ascii (const char *json);

#endif /* !PIN_TEXT_H */
