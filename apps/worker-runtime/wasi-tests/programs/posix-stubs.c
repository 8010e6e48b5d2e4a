// The POSIX calls bzip2, gzip and xz link against that WASI preview 1 has no counterpart for,
// linked beside their unmodified sources (declarations in wasi-posix.h). None changes what the
// programs do when they compress stdin to stdout; each is honest about what it cannot do.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "wasi-posix.h"

// No file owners or permission bits: bzip2 and gzip set them only on a file they wrote in place.
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

// No timer signals: xz's progress display asks for one only when stderr is a terminal.
unsigned alarm(unsigned seconds) {
  (void)seconds;
  return 0;
}

uid_t getuid(void) { return 0; }
uid_t geteuid(void) { return 0; }

// WASI cannot duplicate a descriptor (fd_renumber moves one). gzip's portability library asks only
// to move a new descriptor off 0, 1 or 2, which are always open here.
int dup(int fd) {
  (void)fd;
  errno = ENOSYS;
  return -1;
}

int dup2(int fd, int to) {
  (void)fd, (void)to;
  errno = ENOSYS;
  return -1;
}

void flockfile(FILE *stream) { (void)stream; }
void funlockfile(FILE *stream) { (void)stream; }

// A generous bound on descriptors, as a process with no limit to ask would assume.
int getdtablesize(void) { return 1024; }

// WASI cannot make a pipe. xz opens one at start only so that its signal handlers can wake it
// from poll(); no signal is ever delivered under WASI, so nothing is written to it. The pair
// given here are a read and a write descriptor on an unlinked, empty scratch file.
int pipe(int fds[2]) {
  static unsigned serial;
  char name[40];
  snprintf(name, sizeof name, "/.pipe-%u", serial++);
  int w = open(name, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (w < 0) return -1;
  int r = open(name, O_RDONLY);
  unlink(name);
  if (r < 0) {
    close(w);
    return -1;
  }
  fds[0] = r;
  fds[1] = w;
  return 0;
}

// Signals: a set is wasi-libc's one-byte mask (signals 1-8); masking changes nothing, since no
// signal is ever delivered.
static void (*handlers[65])(int);

int sigemptyset(sigset_t *set) { *set = 0; return 0; }
int sigfillset(sigset_t *set) { *set = (sigset_t)~0; return 0; }

static int bit(int sig) {
  if (sig < 1 || sig > 8) return -1;
  return sig - 1;
}

int sigaddset(sigset_t *set, int sig) {
  int b = bit(sig);
  if (b >= 0) *set |= (sigset_t)(1u << b);
  return 0;
}

int sigdelset(sigset_t *set, int sig) {
  int b = bit(sig);
  if (b >= 0) *set &= (sigset_t)~(1u << b);
  return 0;
}

int sigismember(const sigset_t *set, int sig) {
  int b = bit(sig);
  return b >= 0 && (*set >> b) & 1;
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) {
  (void)how, (void)set;
  if (old) *old = 0;
  return 0;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (sig < 1 || sig >= 65) {
    errno = EINVAL;
    return -1;
  }
  if (old) {
    old->sa_handler = handlers[sig];
    sigemptyset(&old->sa_mask);
    old->sa_flags = 0;
  }
  if (act) handlers[sig] = act->sa_handler;
  return 0;
}
