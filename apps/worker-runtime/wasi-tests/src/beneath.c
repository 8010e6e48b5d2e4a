// Paths resolve beneath the directory descriptor they start from, as WASI's capabilities have it:
// ".." may climb back up to that directory but not above it (ENOTCAPABLE, even where the place
// above lies inside the preopened tree), and no symbolic link may lead above it either. A link to
// an absolute path would lead outside every descriptor, so path_symlink refuses to make one
// (EPERM, as the reference host answers). The reference host checks ".." only against the path
// as written, and lets it climb out of a subdirectory's descriptor when the result is back inside
// it, and out of the preopened directory: src/wasi/beneath.test.ts compares the other lines.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>
#include "check.h"

#define PREOPEN 3

static void open_at(const char *label, __wasi_fd_t dir, __wasi_lookupflags_t flags, const char *path) {
  __wasi_fd_t fd;
  __wasi_errno_t e = __wasi_path_open(dir, flags, path, 0, __WASI_RIGHTS_FD_READ, 0, 0, &fd);
  printf("%s: errno %d\n", label, e);
  if (e == 0) __wasi_fd_close(fd);
}

int main(void) {
  CHECK("mkdir d/e", mkdir("d", 0755) | mkdir("d/e", 0755));
  CHECK("write d/e/f", write_text("d/e/f", "data"));
  CHECK("write top", write_text("top", "top"));
  int d = open("d", O_RDONLY | O_DIRECTORY);
  CHECK("open d", d);

  // ".." back to the starting directory, or anywhere below it.
  open_at("d: e/../e/f", d, 0, "e/../e/f");
  open_at("d: e/..", d, 0, "e/..");
  open_at("preopen: d/e/../../top", PREOPEN, 0, "d/e/../../top");
  // ".." above it.
  open_at("d: ..", d, 0, "..");
  open_at("d: ../top", d, 0, "../top");
  open_at("d: e/../../top", d, 0, "e/../../top");
  open_at("d: ../d/e/f", d, 0, "../d/e/f");
  open_at("preopen: ..", PREOPEN, 0, "..");
  open_at("preopen: ../top", PREOPEN, 0, "../top");
  open_at("preopen: d/../../top", PREOPEN, 0, "d/../../top");
  printf("-- links\n");

  // A link to an absolute path is refused; one that climbs is made, and followed only where it
  // stays beneath the descriptor the path started from.
  RAW("symlink to /top", __wasi_path_symlink("/top", PREOPEN, "abs"));
  RAW("symlink to /", __wasi_path_symlink("/", d, "slash"));
  open_at("preopen: abs", PREOPEN, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "abs");
  RAW("symlink d/e/up to ../../top", __wasi_path_symlink("../../top", PREOPEN, "d/e/up"));
  open_at("preopen: d/e/up", PREOPEN, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "d/e/up");
  open_at("d: e/up", d, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "e/up");
  RAW("symlink d/e/in to ../e/f", __wasi_path_symlink("../e/f", PREOPEN, "d/e/in"));
  open_at("d: e/in", d, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, "e/in");
  show_file("through d/e/up from /", "d/e/up");
  return 0;
}
