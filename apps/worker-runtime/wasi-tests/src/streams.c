// stdin, stdout and stderr: pipes, not terminals, so programs that refuse to write binary data
// to a terminal (compressors) do write; stdin reads to its end; pipes do not seek.
#include <unistd.h>
#include <wasi/api.h>
#include "check.h"

static void describe(int fd) {
  __wasi_fdstat_t st;
  char label[32];
  snprintf(label, sizeof label, "fd%d fdstat", fd);
  RAW(label, __wasi_fd_fdstat_get(fd, &st));
  printf("fd%d filetype %d read %d write %d seek %d tell %d isatty %d\n", fd, st.fs_filetype,
         !!(st.fs_rights_base & __WASI_RIGHTS_FD_READ), !!(st.fs_rights_base & __WASI_RIGHTS_FD_WRITE),
         !!(st.fs_rights_base & __WASI_RIGHTS_FD_SEEK), !!(st.fs_rights_base & __WASI_RIGHTS_FD_TELL), isatty(fd));
  __wasi_filestat_t fs;
  snprintf(label, sizeof label, "fd%d filestat", fd);
  RAW(label, __wasi_fd_filestat_get(fd, &fs));
  printf("fd%d filestat type %d\n", fd, fs.filetype);
}

int main(void) {
  for (int fd = 0; fd < 3; fd++) describe(fd);
  __wasi_filesize_t pos;
  RAW("seek stdin", __wasi_fd_seek(0, 0, __WASI_WHENCE_SET, &pos));
  RAW("tell stdout", __wasi_fd_tell(1, &pos));
  char buf[1000];
  unsigned long total = 0, sum = 0;
  ssize_t n;
  while ((n = read(0, buf, sizeof buf)) > 0) {
    for (ssize_t i = 0; i < n; i++) sum = sum * 31 + (unsigned char)buf[i];
    total += n;
  }
  SHOW("stdin last read", n);
  SHOW("stdin bytes", total);
  SHOW("stdin checksum", sum % 1000000007);
  fputs("to stderr\n", stderr);
  return 0;
}
