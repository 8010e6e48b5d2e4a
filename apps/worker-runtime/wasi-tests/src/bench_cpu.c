// Not a conformance program: the CPU-heavy module of `npm run bench:sandbox`. A Mandelbrot set
// and a sieve, so both floating-point and memory-bound integer work are timed; the size comes
// from argv[1] (default 1).
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  int scale = argc > 1 ? atoi(argv[1]) : 1;
  long inside = 0;
  int n = 600 * scale;
  for (int y = 0; y < n; y++) {
    for (int x = 0; x < n; x++) {
      double cr = -2.0 + 2.5 * x / n, ci = -1.25 + 2.5 * y / n, zr = 0, zi = 0;
      int i = 0;
      while (i < 200 && zr * zr + zi * zi < 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2 * zr * zi + ci;
        zr = t;
        i++;
      }
      inside += i == 200;
    }
  }
  int limit = 4000000 * scale;
  char *composite = calloc(limit + 1, 1);
  long primes = 0;
  for (int i = 2; i <= limit; i++) {
    if (composite[i]) continue;
    primes++;
    if (i > limit / i) continue;  // i * i would pass the limit (and overflow)
    for (int j = i * i; j <= limit; j += i) composite[j] = 1;
  }
  printf("%ld %ld\n", inside, primes);
  return 0;
}
