# Sourced by the build-*.sh scripts: fetches one of Debian's source packages, unmodified, into a
# temporary directory ($work, removed on exit), through a deb-src list made from the system's
# archive that this script keeps private (the system's apt configuration is not touched).
#   fetch_debian_source <package>=<version> <orig tarball>   unpacks the tarball into $work
# Builds need clang, lld, wasi-libc, libclang-rt-14-dev-wasm32 and (autoconf builds) llvm-14.
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fetch_debian_source() {
  sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$work/src.sources"
  mkdir -p "$work/lists/partial"
  apt_opts="-o Dir::Etc::SourceList=$work/src.sources -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists=$work/lists"
  apt-get $apt_opts update >/dev/null
  (cd "$work" && apt-get $apt_opts source --download-only "$1" >/dev/null 2>&1)
  tar xf "$work/$2" -C "$work"
}

# The POSIX calls WASI lacks (posix-stubs.c, declared in wasi-posix.h), for autoconf builds: the
# configure scripts find them when linking, and the sources see their declarations.
wasi_cflags="-O2 -D_WASI_EMULATED_SIGNAL -D_WASI_EMULATED_PROCESS_CLOCKS -D_WASI_EMULATED_GETPID"
wasi_libs="-lwasi-emulated-signal -lwasi-emulated-process-clocks -lwasi-emulated-getpid"
build_posix_stubs() {
  clang --target=wasm32-wasi $wasi_cflags -Wall -c "$here/posix-stubs.c" -o "$work/posix-stubs.o"
}
wasi_configure() {
  ./configure --host=wasm32-unknown-wasi CC="clang --target=wasm32-wasi" AR=llvm-ar-14 RANLIB=llvm-ranlib-14 \
    CFLAGS="$wasi_cflags" LDFLAGS="-Wl,--strip-all" "$@" >/dev/null
}
