// Directories: create, list, remove, and rename in all its POSIX cases, including a target
// written with a trailing slash; a path may not climb out of its directory descriptor.
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// Entries sorted by name (hosts list them in different orders), "." and ".." left out since
// hosts differ in whether they report them, with their type.
static void list(const char *path) {
  DIR *d = opendir(path);
  if (!d) {
    printf("list %s: err %d\n", path, errno);
    return;
  }
  char *names[64];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < 64) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *s = malloc(strlen(e->d_name) + 3);
    sprintf(s, "%s%s", e->d_name, e->d_type == DT_DIR ? "/" : e->d_type == DT_LNK ? "@" : "");
    names[n++] = s;
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  printf("list %s:", path);
  for (int i = 0; i < n; i++) printf(" %s", names[i]), free(names[i]);
  printf("\n");
}

int main(void) {
  CHECK("mkdir a", mkdir("a", 0755));
  CHECK("mkdir a again", mkdir("a", 0755));
  CHECK("mkdir a/b", mkdir("a/b", 0755));
  CHECK("mkdir in missing", mkdir("x/y", 0755));
  CHECK("mkdir trailing slash", mkdir("c/", 0755));
  CHECK("write a/f", write_text("a/f", "f"));
  for (int i = 0; i < 30; i++) {  // more entries than one readdir buffer holds
    char name[64];
    snprintf(name, sizeof name, "a/b/entry-with-a-longish-name-%02d", i);
    write_text(name, "");
  }
  list(".");
  list("a");
  list("a/b");
  list("a/f");
  list("missing");
  struct stat st;
  CHECK("stat a", stat("a", &st));
  SHOW("a is dir", S_ISDIR(st.st_mode));
  SHOW("a nlink", st.st_nlink);
  CHECK("rmdir non-empty", rmdir("a"));
  CHECK("rmdir file", rmdir("a/f"));
  CHECK("unlink dir", unlink("a/b"));
  CHECK("unlink missing", unlink("a/nothing"));
  CHECK("unlink file with slash", unlink("a/f/"));
  CHECK("rmdir c", rmdir("c"));
  CHECK("rmdir c again", rmdir("c"));

  // rename
  CHECK("write r1", write_text("r1", "one"));
  CHECK("write r2", write_text("r2", "two"));
  CHECK("rename file", rename("r1", "r3"));
  CHECK("old name gone", access("r1", F_OK));
  CHECK("rename over file", rename("r3", "r2"));
  show_file("r2", "r2");
  CHECK("rename missing", rename("r1", "r4"));
  CHECK("rename file onto dir", rename("r2", "a"));
  CHECK("rename dir onto file", rename("a", "r2"));
  CHECK("rename file to slash", rename("r2", "r5/"));
  CHECK("mkdir d1", mkdir("d1", 0755));
  CHECK("write d1/x", write_text("d1/x", "x"));
  CHECK("rename dir to new name with slash", rename("d1", "d2/"));
  show_file("d2/x", "d2/x");
  CHECK("mkdir empty", mkdir("empty", 0755));
  CHECK("rename dir onto empty dir with slash", rename("d2", "empty/"));
  show_file("empty/x", "empty/x");
  CHECK("mkdir full", mkdir("full", 0755));
  CHECK("write full/y", write_text("full/y", "y"));
  CHECK("rename dir onto non-empty dir", rename("empty", "full"));
  CHECK("rename dir into itself", rename("full", "full/sub"));
  CHECK("rename into missing dir", rename("r2", "nodir/r2"));
  CHECK("rename to same name", rename("r2", "r2"));
  CHECK("rename across dirs", rename("r2", "full/r2"));
  list(".");
  list("full");

  // ".." that stays beneath the descriptor (above it: beneath.c, where the reference host differs).
  CHECK("open a/../a/f", open("a/../a/f", O_RDONLY));
  CHECK("chdir a", chdir("a"));
  show_file("relative after chdir", "f");
  return 0;
}
