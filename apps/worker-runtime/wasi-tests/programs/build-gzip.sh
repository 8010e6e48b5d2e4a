#!/bin/sh
# Builds gzip 1.12 from Debian's unmodified source package to wasi-tests/programs/gzip.wasm
# (fetching and the WASI settings: debian-source.sh).
set -eu
. "$(dirname "$0")/debian-source.sh"
fetch_debian_source gzip=1.12-1 gzip_1.12.orig.tar.xz
build_posix_stubs
cd "$work/gzip-1.12"
# Its configure script cannot run test programs for another machine: it is told that
# getdtablesize is declared (wasi-posix.h does) and that fcntl knows F_DUPFD_CLOEXEC (it refuses
# it honestly, as the portability library's replacement would).
wasi_configure LIBS="$work/posix-stubs.o $wasi_libs" ac_cv_have_decl_getdtablesize=yes gl_cv_func_fcntl_f_dupfd_cloexec=yes
make CFLAGS="$wasi_cflags -include $here/wasi-posix.h" >/dev/null
cp gzip "$here/gzip.wasm"
cp COPYING "$here/gzip.LICENSE"
echo "built $here/gzip.wasm"
