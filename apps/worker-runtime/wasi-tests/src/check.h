// Helpers for the conformance programs: each call's outcome is printed as "ok" or the errno
// number, never host-dependent values (inode numbers, absolute times, descriptor numbers), so the
// reference host and the sandbox must print the same lines.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define CHECK(label, call)                                                     \
  do {                                                                         \
    errno = 0;                                                                 \
    long long r_ = (long long)(call);                                          \
    if (r_ < 0) printf("%s: err %d\n", label, errno);                          \
    else printf("%s: ok\n", label);                                            \
  } while (0)

#define SHOW(label, value) printf("%s: %lld\n", label, (long long)(value))

// A raw WASI call's errno (0 on success).
#define RAW(label, call) printf("%s: errno %d\n", label, (int)(call))

static inline int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fputs(text, f);
  return fclose(f);
}

static inline void show_file(const char *label, const char *path) {
  char buf[256] = {0};
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("%s: err %d\n", label, errno);
    return;
  }
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  printf("%s: \"%.*s\"\n", label, (int)n, buf);
}

// Sets a file's access and modification times to whole seconds plus nanoseconds and prints
// what stat then reports.
static inline void set_and_show_times(const char *path, long long atime, long atime_ns, long long mtime, long mtime_ns) {
  struct timespec set[2] = {{atime, atime_ns}, {mtime, mtime_ns}};
  CHECK("utimensat exact", utimensat(AT_FDCWD, path, set, 0));
  struct stat st;
  stat(path, &st);
  printf("atime %lld.%09ld mtime %lld.%09ld\n", (long long)st.st_atim.tv_sec, st.st_atim.tv_nsec, (long long)st.st_mtim.tv_sec,
         st.st_mtim.tv_nsec);
}
