// Hard links and symbolic links: link counts, EEXIST, readlink, lstat against stat, links
// followed or not, dangling links and loops. Where the reference host is not POSIX, the case is
// left to the sandbox's unit tests (src/wasi/links.test.ts): it ignores O_NOFOLLOW, refuses a
// readlink buffer without room for a NUL, and lets a link lead out of its preopened directory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

int main(void) {
  struct stat st;
  CHECK("write f", write_text("f", "data"));
  CHECK("write g", write_text("g", "other"));
  CHECK("link f h", link("f", "h"));
  CHECK("stat f", stat("f", &st));
  SHOW("nlink after link", st.st_nlink);
  CHECK("link onto existing", link("f", "g"));
  show_file("g unchanged", "g");
  CHECK("link missing", link("nothing", "n"));
  CHECK("mkdir d", mkdir("d", 0755));
  CHECK("link a directory", link("d", "d2"));
  CHECK("write through h", write_text("h", "shared"));
  show_file("f sees it", "f");
  CHECK("unlink f", unlink("f"));
  CHECK("stat h", stat("h", &st));
  SHOW("nlink after unlink", st.st_nlink);
  show_file("h survives", "h");

  CHECK("symlink", symlink("h", "s"));
  CHECK("symlink exists", symlink("g", "s"));
  char buf[64] = {0};
  SHOW("readlink", readlink("s", buf, sizeof buf - 1));
  printf("readlink text: %s\n", buf);
  CHECK("readlink regular file", readlink("h", buf, sizeof buf));
  CHECK("readlink missing", readlink("nothing", buf, sizeof buf));
  CHECK("lstat s", lstat("s", &st));
  SHOW("lstat is link", S_ISLNK(st.st_mode));
  SHOW("lstat size", st.st_size);
  CHECK("stat s", stat("s", &st));
  SHOW("stat is regular", S_ISREG(st.st_mode));
  show_file("read through link", "s");
  CHECK("symlink to dir", symlink("d", "sd"));
  CHECK("write through dir link", write_text("sd/inner", "in"));
  show_file("inner", "d/inner");
  CHECK("symlink dangling", symlink("nowhere", "dangling"));
  CHECK("stat dangling", stat("dangling", &st));
  CHECK("lstat dangling", lstat("dangling", &st));
  CHECK("symlink loop a", symlink("loop-b", "loop-a"));
  CHECK("symlink loop b", symlink("loop-a", "loop-b"));
  CHECK("open loop", open("loop-a", O_RDONLY));
  CHECK("unlink link", unlink("s"));
  CHECK("target stays", access("h", F_OK));
  CHECK("rename link", rename("sd", "sd2"));
  SHOW("readlink renamed", readlink("sd2", buf, sizeof buf));
  return 0;
}
