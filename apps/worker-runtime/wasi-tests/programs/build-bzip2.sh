#!/bin/sh
# Builds bzip2 1.0.8 from Debian's unmodified source package to wasi-tests/programs/bzip2.wasm,
# the real-world program the stream tests compress with. Needs clang, lld, wasi-libc and the
# wasm32 compiler runtime (Debian packages), and a deb-src line for the system's archive, which
# this script supplies privately without touching the system's apt configuration.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$work/src.sources"
mkdir -p "$work/lists/partial"
apt_opts="-o Dir::Etc::SourceList=$work/src.sources -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$work/lists"
apt-get $apt_opts update >/dev/null
(cd "$work" && apt-get $apt_opts source --download-only bzip2=1.0.8-5 >/dev/null 2>&1)
tar xzf "$work"/bzip2_1.0.8.orig.tar.gz -C "$work"
cd "$work/bzip2-1.0.8"
# bzip2.c includes <signal.h> and <sys/times.h>: wasi-libc's emulations of both serve it.
clang --target=wasm32-wasi -O2 -D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS -w -Wl,--strip-all \
  -o "$here/bzip2.wasm" bzip2.c blocksort.c huffman.c crctable.c randtable.c compress.c decompress.c bzlib.c \
  "$here/posix-stubs.c" -lwasi-emulated-signal -lwasi-emulated-process-clocks
cp LICENSE "$here/bzip2.LICENSE"
echo "built $here/bzip2.wasm"
