/* quality-checker.c - the unit tests' quality checker, built into
 * bench-quality
 *
 * bench-quality measures plans with exactly the code test_place_quality
 * uses (src/common/libplace/test/placequality.c), not a copy of it.
 * Including the file keeps libplace's Makefile.am untouched and avoids
 * an object built from another directory.
 */
#include "libplace/test/placequality.c"
