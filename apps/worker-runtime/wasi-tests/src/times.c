// Time stamps: files are stamped with the current time (not 1970), can be set exactly, set to
// now, or left alone; through a descriptor or a path. Whole seconds only: the reference host drops
// nanoseconds, which the sandbox keeps (src/wasi/times.test.ts).
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check.h"

// 2020-01-01T00:00:00Z: any honest clock is past it.
#define Y2020 1577836800LL

static void stamp(const char *label, const char *path) {
  struct stat st;
  if (stat(path, &st) < 0) {
    printf("%s: err %d\n", label, errno);
    return;
  }
  printf("%s: atime>2020 %d mtime>2020 %d ctime>2020 %d\n", label, st.st_atim.tv_sec > Y2020, st.st_mtim.tv_sec > Y2020,
         st.st_ctim.tv_sec > Y2020);
}

int main(void) {
  CHECK("write f", write_text("f", "x"));
  stamp("new file", "f");
  CHECK("mkdir d", mkdir("d", 0755));
  stamp("new dir", "d");
  set_and_show_times("f", 1000000000, 0, 1100000000, 0);
  struct timespec set[2] = {{1000000000, 0}, {1100000000, 0}};
  struct stat st;
  struct timespec omit_now[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
  CHECK("utimensat omit/now", utimensat(AT_FDCWD, "f", omit_now, 0));
  stat("f", &st);
  printf("atime kept %d mtime now %d\n", st.st_atim.tv_sec == 1000000000, st.st_mtim.tv_sec > Y2020);
  int fd = open("f", O_RDWR);
  struct timespec fset[2] = {{1200000000, 0}, {0, UTIME_OMIT}};
  CHECK("futimens", futimens(fd, fset));
  fstat(fd, &st);
  printf("futimens atime %lld.%09ld mtime now %d\n", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec, st.st_mtim.tv_sec > Y2020);
  struct timespec past[2] = {{1000000000, 0}, {1000000000, 0}};
  futimens(fd, past);
  SHOW("write", write(fd, "y", 1));
  fstat(fd, &st);
  printf("write moves mtime %d\n", st.st_mtim.tv_sec > Y2020);
  close(fd);
  CHECK("utimensat missing", utimensat(AT_FDCWD, "missing", set, 0));
  CHECK("utimensat dir", utimensat(AT_FDCWD, "d", set, 0));
  stat("d", &st);
  printf("dir mtime %lld\n", (long long)st.st_mtim.tv_sec);
  return 0;
}
