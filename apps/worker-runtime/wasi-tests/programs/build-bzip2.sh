#!/bin/sh
# Builds bzip2 1.0.8 from Debian's unmodified source package to wasi-tests/programs/bzip2.wasm,
# a real-world program the stream tests compress with (fetching: debian-source.sh).
set -eu
. "$(dirname "$0")/debian-source.sh"
fetch_debian_source bzip2=1.0.8-5 bzip2_1.0.8.orig.tar.gz
cd "$work/bzip2-1.0.8"
# bzip2.c includes <signal.h> and <sys/times.h>: wasi-libc's emulations of both serve it.
clang --target=wasm32-wasi -O2 -D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS -w -Wl,--strip-all \
  -o "$here/bzip2.wasm" bzip2.c blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c \
  "$here/posix-stubs.c" -lwasi-emulated-signal -lwasi-emulated-process-clocks
cp LICENSE "$here/bzip2.LICENSE"
echo "built $here/bzip2.wasm"
