// Input files and scratch space: reads the input file named by argv[1] and prints it, shows it
// cannot be changed, then writes argv[2] bytes of scratch (0: none) and reports how that went.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  show_file("input", argv[1]);
  CHECK("open input for writing", open(argv[1], O_WRONLY));
  CHECK("truncate input", truncate(argv[1], 0));
  CHECK("mkdir scratch", mkdir("scratch", 0755));
  long want = atol(argv[2]);
  int fd = open("scratch/out.bin", O_CREAT | O_WRONLY, 0644);
  static char chunk[65536];
  memset(chunk, 'x', sizeof chunk);
  long done = 0;
  while (done < want) {
    long n = want - done < (long)sizeof chunk ? want - done : (long)sizeof chunk;
    ssize_t w = write(fd, chunk, n);
    if (w < 0) {
      printf("scratch write failed after %ld bytes: err %d\n", done, errno);
      return 1;
    }
    done += w;
  }
  close(fd);
  struct stat st;
  stat("scratch/out.bin", &st);
  SHOW("scratch bytes", st.st_size);
  return 0;
}
