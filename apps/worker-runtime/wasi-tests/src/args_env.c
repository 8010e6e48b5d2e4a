// Arguments and environment: count, values (also empty and non-ASCII ones), and lookups.
#include <stdlib.h>
#include "check.h"

extern char **environ;

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
  SHOW("argc", argc);
  for (int i = 1; i < argc; i++) printf("argv[%d] = \"%s\"\n", i, argv[i]);
  const char *vars[64];
  int n = 0;
  for (char **e = environ; *e && n < 64; e++) vars[n++] = *e;
  qsort(vars, n, sizeof *vars, by_text);
  SHOW("environ count", n);
  for (int i = 0; i < n; i++) printf("env %s\n", vars[i]);
  const char *greeting = getenv("GREETING");
  printf("getenv GREETING = %s\n", greeting ? greeting : "(unset)");
  printf("getenv MISSING = %s\n", getenv("MISSING") ? "set" : "(unset)");
  return 0;
}
