#!/bin/sh
# Regenerate the build system (configure, Makefile.in) from configure.ac.
exec autoreconf --force --install --verbose "$(dirname "$0")"
