// poll_oneoff: a relative clock fires, stdin with data is readable, and no subscriptions is an
// error. Absolute deadlines and writable stdout are checked by the sandbox's unit tests instead:
// the reference host never wakes from the first and refuses the second (EPERM) on a pipe.
#include <wasi/api.h>
#include "check.h"

static void sub_clock(__wasi_subscription_t *s, __wasi_userdata_t id, __wasi_timestamp_t timeout, __wasi_subclockflags_t flags) {
  memset(s, 0, sizeof *s);
  s->userdata = id;
  s->u.tag = __WASI_EVENTTYPE_CLOCK;
  s->u.u.clock.id = __WASI_CLOCKID_MONOTONIC;
  s->u.u.clock.timeout = timeout;
  s->u.u.clock.flags = flags;
}

static void sub_fd(__wasi_subscription_t *s, __wasi_userdata_t id, __wasi_eventtype_t type, __wasi_fd_t fd) {
  memset(s, 0, sizeof *s);
  s->userdata = id;
  s->u.tag = type;
  s->u.u.fd_read.file_descriptor = fd;
}

static void show(const char *label, int e, __wasi_event_t *ev, __wasi_size_t n) {
  printf("%s: errno %d events %u", label, e, (unsigned)n);
  for (__wasi_size_t i = 0; i < n; i++) printf(" [id %llu type %d error %d]", (unsigned long long)ev[i].userdata, ev[i].type, ev[i].error);
  printf("\n");
}

int main(void) {
  __wasi_subscription_t subs[4];
  __wasi_event_t ev[4];
  __wasi_size_t n = 0;
  __wasi_timestamp_t before, after;
  __wasi_clock_time_get(__WASI_CLOCKID_MONOTONIC, 1, &before);
  sub_clock(&subs[0], 7, 3000000, 0);
  int e = __wasi_poll_oneoff(subs, ev, 1, &n);
  show("relative clock", e, ev, n);
  __wasi_clock_time_get(__WASI_CLOCKID_MONOTONIC, 1, &after);
  SHOW("waited at least 3 ms", after - before >= 3000000);
  sub_fd(&subs[0], 10, __WASI_EVENTTYPE_FD_READ, 0);
  sub_clock(&subs[1], 11, 5000000000ULL, 0);
  e = __wasi_poll_oneoff(subs, ev, 2, &n);
  show("stdin readable before a long timeout", e, ev, n);
  e = __wasi_poll_oneoff(subs, ev, 0, &n);
  printf("no subscriptions: errno %d\n", e);
  return 0;
}
