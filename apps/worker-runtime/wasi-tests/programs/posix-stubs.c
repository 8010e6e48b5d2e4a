// The two POSIX calls bzip2 links against that WASI has no counterpart for (there are no file
// owners or permission bits). They fail honestly; bzip2 calls them only when it compresses a
// named file in place, never on stdin to stdout. Linked beside the unmodified sources.
#include <errno.h>
#include <sys/types.h>

int fchmod(int fd, mode_t mode) {
  (void)fd, (void)mode;
  errno = ENOSYS;
  return -1;
}

int fchown(int fd, uid_t owner, gid_t group) {
  (void)fd, (void)owner, (void)group;
  errno = ENOSYS;
  return -1;
}
