/* chello: the smallest useful C program — printf through stdio, a malloc'd buffer, argv and
 * the environment — as any Linux system runs it. On Tally it is the proof that a static musl
 * binary starts (TLS through arch_prctl, set_tid_address, brk/mmap for malloc, the
 * TIOCGWINSZ stdio asks for, writev, exit_group). Nothing in it knows about Tally. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    size_t n = 1 << 16;
    char *buf = malloc(n); /* larger than musl's brk step: a second heap region */
    if (!buf) {
        perror("chello: malloc");
        return 1;
    }
    memset(buf, 'x', n);
    snprintf(buf, n, "%d argument%s", argc - 1, argc == 2 ? "" : "s");
    printf("hello from C: %s", buf);
    for (int i = 1; i < argc; i++)
        printf(" [%s]", argv[i]);
    const char *path = getenv("PATH");
    printf(", PATH %s\n", path ? "set" : "unset");
    free(buf);
    return 0;
}
