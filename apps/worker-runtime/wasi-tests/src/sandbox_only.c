// Cases where the reference host departs from POSIX or the specification, so the sandbox's
// answers are asserted by its own unit test (src/wasi/sandbox-only.test.ts) instead of compared.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>
#include "check.h"

int main(void) {
  // O_NOFOLLOW on a link is ELOOP (POSIX open(2)).
  write_text("f", "data");
  symlink("f", "s");
  CHECK("open nofollow", open("s", O_RDONLY | O_NOFOLLOW));
  // readlink cuts a long target to the buffer without error (POSIX readlink(2)).
  char buf[8] = {0};
  symlink("a-long-target", "long");
  SHOW("readlink short buffer", readlink("long", buf, 4));
  printf("readlink text: %.4s\n", buf);
  // Nanoseconds are kept.
  set_and_show_times("f", 1000000000, 123456789, 1100000000, 987654321);
  // Clearing O_APPEND with fd_fdstat_set_flags takes effect.
  int fd = open("f", O_WRONLY | O_APPEND);
  RAW("clear append", __wasi_fd_fdstat_set_flags(fd, 0));
  SHOW("append flag", (fcntl(fd, F_GETFL) & O_APPEND) != 0);
  SHOW("write at offset 0", write(fd, "D", 1));
  close(fd);
  show_file("after write at 0", "f");
  // poll_oneoff: an absolute deadline is waited for; stdout is writable at once.
  __wasi_timestamp_t before, after;
  __wasi_clock_time_get(__WASI_CLOCKID_MONOTONIC, 1, &before);
  __wasi_subscription_t sub = {0};
  __wasi_event_t ev;
  __wasi_size_t n;
  sub.userdata = 5;
  sub.u.tag = __WASI_EVENTTYPE_CLOCK;
  sub.u.u.clock.id = __WASI_CLOCKID_MONOTONIC;
  sub.u.u.clock.timeout = before + 1000000;
  sub.u.u.clock.flags = __WASI_SUBCLOCKFLAGS_SUBSCRIPTION_CLOCK_ABSTIME;
  RAW("poll absolute", __wasi_poll_oneoff(&sub, &ev, 1, &n));
  __wasi_clock_time_get(__WASI_CLOCKID_MONOTONIC, 1, &after);
  printf("events %u id %llu reached deadline %d\n", (unsigned)n, (unsigned long long)ev.userdata, after >= before + 1000000);
  sub.userdata = 6;
  sub.u.tag = __WASI_EVENTTYPE_FD_WRITE;
  sub.u.u.fd_write.file_descriptor = 1;
  RAW("poll stdout", __wasi_poll_oneoff(&sub, &ev, 1, &n));
  printf("events %u id %llu type %d error %d\n", (unsigned)n, (unsigned long long)ev.userdata, ev.type, ev.error);
  // No descriptor is a socket (a task has no network): a file or a pipe (the standard streams,
  // though their file type is socket_stream) is ENOTSOCK; a directory or a closed one is EBADF.
  CHECK("shutdown stdout", shutdown(1, SHUT_RD));
  CHECK("shutdown preopen", shutdown(3, SHUT_RDWR));
  CHECK("shutdown closed", shutdown(99, SHUT_WR));
  char byte;
  CHECK("recv stdin", recv(0, &byte, 1, 0));
  CHECK("send stdout", send(1, "x", 1, 0));
  fd = open("f", O_RDONLY);
  CHECK("accept file", accept(fd, NULL, NULL));
  close(fd);
  return 0;
}
