// Clocks: resolution, the wall clock past 2020, a monotonic clock that never goes back, and
// sleeping that lets at least the time asked for pass; yielding.
#include <sched.h>
#include <time.h>
#include <wasi/api.h>
#include "check.h"

int main(void) {
  __wasi_timestamp_t res, a, b, t;
  RAW("res realtime", __wasi_clock_res_get(__WASI_CLOCKID_REALTIME, &res));
  SHOW("res realtime positive", res > 0);
  RAW("res monotonic", __wasi_clock_res_get(__WASI_CLOCKID_MONOTONIC, &res));
  SHOW("res monotonic positive", res > 0);
  RAW("res bad clock", __wasi_clock_res_get(99, &res));
  RAW("time realtime", __wasi_clock_time_get(__WASI_CLOCKID_REALTIME, 1, &t));
  SHOW("realtime after 2020", t > 1577836800000000000ULL);
  RAW("time bad clock", __wasi_clock_time_get(99, 1, &t));
  RAW("time process cputime", __wasi_clock_time_get(__WASI_CLOCKID_PROCESS_CPUTIME_ID, 1, &t));
  RAW("time thread cputime", __wasi_clock_time_get(__WASI_CLOCKID_THREAD_CPUTIME_ID, 1, &t));
  int back = 0;
  __wasi_clock_time_get(__WASI_CLOCKID_MONOTONIC, 1, &a);
  for (int i = 0; i < 1000; i++) {
    __wasi_clock_time_get(__WASI_CLOCKID_MONOTONIC, 1, &b);
    if (b < a) back = 1;
    a = b;
  }
  SHOW("monotonic went back", back);
  struct timespec before, after, nap = {0, 2000000};
  clock_gettime(CLOCK_MONOTONIC, &before);
  CHECK("nanosleep", nanosleep(&nap, NULL));
  clock_gettime(CLOCK_MONOTONIC, &after);
  long long slept = (after.tv_sec - before.tv_sec) * 1000000000LL + (after.tv_nsec - before.tv_nsec);
  SHOW("slept at least 2 ms", slept >= 2000000);
  CHECK("sched_yield", sched_yield());
  time_t now = time(NULL);
  SHOW("time() after 2020", now > 1577836800);
  return 0;
}
