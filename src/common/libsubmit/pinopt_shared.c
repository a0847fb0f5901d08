/* pinopt_shared.c - the SPANK plugin's --pin-policy parser, built here too
 *
 * job_submit_pin.so must accept exactly what pin.so accepts, so it uses
 * the same source (src/plugins/spank/pinopt.c) rather than a second
 * parser; it is compiled into libsubmit under this file's name so that
 * the two Makefiles never share an object file.
 */
#include "../../plugins/spank/pinopt.c"
