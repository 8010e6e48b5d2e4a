// bytepattern: a small C program whose stdout is binary, used to prove that outputs travel from
// the sandbox to the consumer byte for byte. Output for `bytepattern N` with stdin S:
//   4 bytes  magic 0x89 'C' 'M' 0x00 (0x89 cannot start UTF-8; the NUL must survive too)
//   4 bytes  N, little-endian u32
//   4 bytes  length of S, little-endian u32
//   256 bytes  (k * (2N+1) + N) mod 256 for k = 0..255: every byte value, in an order set by N
//   |S| bytes  each byte of S XOR (0xA5 ^ N mod 256)
//   4 bytes  FNV-1a 32 of S, little-endian
// Deterministic, so a test can compute the expected bytes without running the program.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void put_u32(uint32_t v) {
  unsigned char b[4] = {v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, (v >> 24) & 0xff};
  fwrite(b, 1, 4, stdout);
}

int main(int argc, char **argv) {
  uint32_t n = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 0;
  // Read all of stdin first: its length goes before it.
  size_t cap = 4096, len = 0;
  unsigned char *in = malloc(cap);
  if (!in) return 2;
  size_t got;
  while ((got = fread(in + len, 1, cap - len, stdin)) > 0) {
    len += got;
    if (len == cap) {
      cap *= 2;
      in = realloc(in, cap);
      if (!in) return 2;
    }
  }
  static const unsigned char magic[4] = {0x89, 'C', 'M', 0x00};
  fwrite(magic, 1, 4, stdout);
  put_u32(n);
  put_u32((uint32_t)len);
  for (uint32_t k = 0; k < 256; k++) putchar((int)((k * (2 * n + 1) + n) & 0xff));
  unsigned char key = (unsigned char)(0xA5 ^ (n & 0xff));
  uint32_t hash = 2166136261u;
  for (size_t i = 0; i < len; i++) {
    putchar(in[i] ^ key);
    hash = (hash ^ in[i]) * 16777619u;
  }
  put_u32(hash);
  free(in);
  return fflush(stdout) == 0 ? 0 : 1;
}
