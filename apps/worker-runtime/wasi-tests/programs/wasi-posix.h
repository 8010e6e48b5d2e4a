// The POSIX declarations WASI preview 1's C library leaves out and that gzip and xz need, given to
// their unmodified sources with `-include wasi-posix.h` (the definitions are in posix-stubs.c).
// It includes no header a portability library wraps, so it may come before a program's config.h.
#ifndef CYCLEMARKET_WASI_POSIX_H
#define CYCLEMARKET_WASI_POSIX_H

#include <__header_fcntl.h>
#include <__typedef_gid_t.h>
#include <__typedef_mode_t.h>
#include <__typedef_sigset_t.h>
#include <__typedef_uid_t.h>

// wasi-libc spells O_NONBLOCK with a cast, which `#if ... && O_NONBLOCK` (gzip's util.c) cannot
// evaluate; this is the same value without it.
#undef O_NONBLOCK
#define O_NONBLOCK 4
// WASI has no F_DUPFD; without a value of its own, gzip's portability library gives it F_GETFD's.
// wasi-libc's fcntl refuses this one (EINVAL), as it refuses any command it does not know.
#define F_DUPFD 0

// Signals: WASI delivers none, so a mask has nothing to hold back and a handler is only kept.
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
#define SA_RESTART 0x10000000

struct sigaction {
  void (*sa_handler)(int);
  sigset_t sa_mask;
  int sa_flags;
};

int sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int sigprocmask(int how, const sigset_t *set, sigset_t *old);
int sigemptyset(sigset_t *set);
int sigfillset(sigset_t *set);
int sigaddset(sigset_t *set, int sig);
int sigdelset(sigset_t *set, int sig);
int sigismember(const sigset_t *set, int sig);

// Processes, users and modes: one process, no owners, no permission bits, no timers.
int pipe(int fds[2]);
uid_t getuid(void);
uid_t geteuid(void);
int getdtablesize(void);
int fchown(int fd, uid_t owner, gid_t group);
int fchmod(int fd, mode_t mode);
unsigned alarm(unsigned seconds);
int dup(int fd);
int dup2(int fd, int to);

// Streams: one thread, so locking a stream has nothing to exclude.
struct _IO_FILE;
void flockfile(struct _IO_FILE *stream);
void funlockfile(struct _IO_FILE *stream);

#endif
