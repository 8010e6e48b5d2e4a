// Rights and descriptor flags: what fd_fdstat_get reports for each kind of descriptor, rights
// that can be dropped but never regained, and flags set after opening.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>
#include "check.h"

#define R(name) __WASI_RIGHTS_##name

static void rights(const char *label, int fd) {
  __wasi_fdstat_t st;
  int e = __wasi_fd_fdstat_get(fd, &st);
  printf("%s: errno %d type %d append %d read %d write %d seek %d tell %d readdir %d path_open %d create_file %d "
         "set_size %d nonzero %d\n",
         label, e, st.fs_filetype, !!(st.fs_flags & __WASI_FDFLAGS_APPEND), !!(st.fs_rights_base & R(FD_READ)),
         !!(st.fs_rights_base & R(FD_WRITE)), !!(st.fs_rights_base & R(FD_SEEK)), !!(st.fs_rights_base & R(FD_TELL)),
         !!(st.fs_rights_base & R(FD_READDIR)), !!(st.fs_rights_base & R(PATH_OPEN)),
         !!(st.fs_rights_base & R(PATH_CREATE_FILE)), !!(st.fs_rights_base & R(FD_FILESTAT_SET_SIZE)),
         st.fs_rights_base != 0);
}

int main(void) {
  rights("preopen", 3);
  write_text("f", "abc");
  int ro = open("f", O_RDONLY);
  rights("read-only file", ro);
  int wo = open("f", O_WRONLY | O_APPEND);
  rights("write-only append file", wo);
  int rw = open("f", O_RDWR);
  rights("read-write file", rw);
  mkdir("d", 0755);
  int d = open("d", O_RDONLY | O_DIRECTORY);
  rights("directory", d);

  __wasi_fdstat_t st;
  __wasi_fd_fdstat_get(rw, &st);
  RAW("drop write", __wasi_fd_fdstat_set_rights(rw, st.fs_rights_base & ~R(FD_WRITE), st.fs_rights_inheriting));
  rights("after drop", rw);
  CHECK("write without the right", write(rw, "x", 1));
  __wasi_ciovec_t iov = {(const uint8_t *)"x", 1};
  __wasi_size_t written;
  RAW("fd_write without the right", __wasi_fd_write(rw, &iov, 1, &written));
  RAW("regain write", __wasi_fd_fdstat_set_rights(rw, st.fs_rights_base, st.fs_rights_inheriting));
  RAW("drop seek", __wasi_fd_fdstat_set_rights(rw, st.fs_rights_base & ~(R(FD_WRITE) | R(FD_SEEK)), st.fs_rights_inheriting));
  __wasi_filesize_t pos;
  RAW("seek without the right", __wasi_fd_seek(rw, 1, __WASI_WHENCE_SET, &pos));
  RAW("set_flags append again", __wasi_fd_fdstat_set_flags(wo, __WASI_FDFLAGS_APPEND));
  rights("append set", wo);
  RAW("fdstat bad fd", __wasi_fd_fdstat_get(99, &st));
  RAW("set_rights bad fd", __wasi_fd_fdstat_set_rights(99, 0, 0));
  RAW("set_flags bad fd", __wasi_fd_fdstat_set_flags(99, 0));
  RAW("times both given and now",
      __wasi_fd_filestat_set_times(ro, 1, 1, __WASI_FSTFLAGS_ATIM | __WASI_FSTFLAGS_ATIM_NOW));
  __wasi_fd_t fd;
  RAW("open asking more than inherited", __wasi_path_open(3, 0, "f", 0, ~0ULL, 0, 0, &fd));
  RAW("close dir", __wasi_fd_close(d));
  RAW("renumber", __wasi_fd_renumber(ro, wo));
  rights("renumbered", wo);
  RAW("renumbered source closed", __wasi_fd_fdstat_get(ro, &st));
  RAW("renumber onto closed", __wasi_fd_renumber(wo, 77));
  __wasi_prestat_t pre;
  RAW("prestat preopen", __wasi_fd_prestat_get(3, &pre));
  SHOW("prestat name length", pre.u.dir.pr_name_len);
  RAW("prestat file", __wasi_fd_prestat_get(rw, &pre));
  RAW("advise", __wasi_fd_advise(rw, 0, 10, __WASI_ADVICE_SEQUENTIAL));
  RAW("sync", __wasi_fd_sync(rw));
  RAW("datasync", __wasi_fd_datasync(rw));
  return 0;
}
