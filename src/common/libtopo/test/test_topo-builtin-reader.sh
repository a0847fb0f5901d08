#!/bin/sh
# test_topo again with hwloc's built-in XML reader, the one a machine without
# Debian's libhwloc-plugins has (the plain run uses the libxml2 reader
# where that package is installed): every XML file the tests load, the
# topology cache included, must load with both.
HWLOC_LIBXML_IMPORT=0
export HWLOC_LIBXML_IMPORT
exec ./test_topo "$@"
