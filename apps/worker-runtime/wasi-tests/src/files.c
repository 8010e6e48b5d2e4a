// Regular files: create, write, read, seek, tell, pread/pwrite, truncate, allocate, filestat,
// O_APPEND after a seek, O_EXCL, and the errors of opening what is not there or not a file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  int fd = open("f.txt", O_CREAT | O_RDWR | O_TRUNC, 0644);
  CHECK("create", fd);
  SHOW("write", write(fd, "hello world", 11));
  SHOW("seek end", lseek(fd, 0, SEEK_END));
  SHOW("seek set 6", lseek(fd, 6, SEEK_SET));
  SHOW("seek cur -1", lseek(fd, -1, SEEK_CUR));
  CHECK("seek negative", lseek(fd, -100, SEEK_CUR));
  SHOW("tell", lseek(fd, 0, SEEK_CUR));
  char buf[64] = {0};
  SHOW("read", read(fd, buf, 3));
  printf("read text: %s\n", buf);
  SHOW("pwrite", pwrite(fd, "W", 1, 0));
  memset(buf, 0, sizeof buf);
  SHOW("pread", pread(fd, buf, 5, 0));
  printf("pread text: %s\n", buf);
  SHOW("tell after pread", lseek(fd, 0, SEEK_CUR));
  SHOW("seek past end", lseek(fd, 20, SEEK_SET));
  SHOW("write past end", write(fd, "!", 1));
  struct stat st;
  CHECK("fstat", fstat(fd, &st));
  SHOW("size after hole", st.st_size);
  SHOW("is regular", S_ISREG(st.st_mode));
  SHOW("nlink", st.st_nlink);
  memset(buf, 1, sizeof buf);
  SHOW("pread hole", pread(fd, buf, 21, 0));
  SHOW("hole byte is zero", buf[15] == 0);
  CHECK("truncate shrink", ftruncate(fd, 5));
  CHECK("fstat", fstat(fd, &st));
  SHOW("size after shrink", st.st_size);
  CHECK("truncate grow", ftruncate(fd, 8));
  CHECK("stat", stat("f.txt", &st));
  SHOW("size after grow", st.st_size);
  SHOW("allocate", posix_fallocate(fd, 0, 100));
  CHECK("fstat", fstat(fd, &st));
  SHOW("size after allocate", st.st_size);
  CHECK("close", close(fd));
  CHECK("close again", close(fd));
  CHECK("truncate path", truncate("f.txt", 3));
  show_file("after truncate", "f.txt");

  // O_APPEND: writes go to the end even after a seek.
  fd = open("log.txt", O_CREAT | O_WRONLY | O_APPEND, 0644);
  CHECK("open append", fd);
  SHOW("write a", write(fd, "aaa", 3));
  SHOW("seek 0", lseek(fd, 0, SEEK_SET));
  SHOW("write b", write(fd, "bbb", 3));
  SHOW("offset after append", lseek(fd, 0, SEEK_CUR));
  close(fd);
  show_file("append result", "log.txt");
  fd = open("log.txt", O_WRONLY);
  lseek(fd, 1, SEEK_SET);
  SHOW("overwrite", write(fd, "X", 1));
  CHECK("set append flag", fcntl(fd, F_SETFL, O_APPEND));
  SHOW("append flag", (fcntl(fd, F_GETFL) & O_APPEND) != 0);
  lseek(fd, 0, SEEK_SET);
  SHOW("write after set_flags", write(fd, "Z", 1));
  close(fd);
  show_file("set_flags result", "log.txt");

  CHECK("open excl existing", open("log.txt", O_CREAT | O_EXCL | O_WRONLY, 0644));
  CHECK("open missing", open("missing.txt", O_RDONLY));
  CHECK("open missing dir", open("nodir/x.txt", O_CREAT | O_WRONLY, 0644));
  CHECK("open file as dir", open("log.txt/x", O_RDONLY));
  CHECK("open with O_DIRECTORY", open("log.txt", O_RDONLY | O_DIRECTORY));
  CHECK("mkdir d", mkdir("d", 0755));
  CHECK("open dir for writing", open("d", O_WRONLY));
  fd = open("d", O_RDONLY);
  CHECK("open dir", fd);
  CHECK("read a directory", read(fd, buf, 1));
  close(fd);
  fd = open("log.txt", O_RDONLY);
  CHECK("write to read-only fd", write(fd, "x", 1));
  close(fd);
  fd = open("log.txt", O_WRONLY);
  CHECK("read from write-only fd", read(fd, buf, 1));
  close(fd);
  return 0;
}
