#!/bin/sh
# Builds xz 5.4.1 (the xz command and liblzma) from Debian's unmodified source package to
# wasi-tests/programs/xz.wasm, single-threaded (fetching and the WASI settings: debian-source.sh).
set -eu
. "$(dirname "$0")/debian-source.sh"
fetch_debian_source xz-utils=5.4.1-1+deb12u2 xz-utils_5.4.1.orig.tar.xz
build_posix_stubs
cd "$work/xz-5.4.1"
wasi_configure CFLAGS="$wasi_cflags -include $here/wasi-posix.h" LIBS="$wasi_libs" \
  --disable-threads --disable-shared --disable-nls --disable-xzdec --disable-lzmadec --disable-lzmainfo \
  --disable-lzma-links --disable-scripts --disable-doc
make -C src/liblzma >/dev/null
make -C src/xz LIBS="$work/posix-stubs.o $wasi_libs" >/dev/null
cp src/xz/xz "$here/xz.wasm"
cp COPYING "$here/xz.LICENSE"
echo "built $here/xz.wasm"
