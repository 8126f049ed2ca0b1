/* check.h: the one-line-per-check reporting the test programs share ("ok NAME" or
 * "FAIL NAME: what"), then "NAME: N checks, M failed" and exit status 1 on any failure.
 * Plain C: the programs stay ordinary Linux programs. */
#ifndef CHECK_H
#define CHECK_H
#include <stdarg.h>
#include <stdio.h>

static int check_failed, check_count;

__attribute__((format(printf, 3, 4))) static void check(const char *name, int ok, const char *fmt, ...)
{
    check_count++;
    if (ok) {
        printf("ok %s\n", name);
        return;
    }
    check_failed++;
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

/* The summary line and the exit status. */
static int check_summary(const char *program)
{
    printf("%s: %d checks, %d failed\n", program, check_count, check_failed);
    return check_failed ? 1 : 0;
}
#endif
