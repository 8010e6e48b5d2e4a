// random_get: fills the buffer, two draws differ, an empty draw is fine.
#include <unistd.h>
#include <wasi/api.h>
#include "check.h"

int main(void) {
  unsigned char a[64] = {0}, b[64] = {0};
  RAW("random 64", __wasi_random_get(a, sizeof a));
  RAW("random 64 again", __wasi_random_get(b, sizeof b));
  int zeros = 0;
  for (int i = 0; i < 64; i++) zeros += a[i] == 0;
  SHOW("mostly nonzero", zeros < 16);
  SHOW("draws differ", memcmp(a, b, sizeof a) != 0);
  RAW("random empty", __wasi_random_get(a, 0));
  CHECK("getentropy", getentropy(a, 32));
  return 0;
}
