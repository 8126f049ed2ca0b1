/* cstdio: C's buffered I/O on Tally's files and terminal, as a program uses it — lines read
 * with fgets from standard input (musl reads through readv: the caller's buffer and stdio's
 * own), a file written with fprintf, read back with fgets, fseek/ftell, fstat's size, the
 * directory listed with opendir/readdir, the file removed. One line per check. Plain Linux C.
 *
 *   cstdio [DIR]    DIR: where the file goes (default /var); then reads 2 lines of input */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/var";
    char path[256], line[128];
    snprintf(path, sizeof path, "%s/cstdio.txt", dir);
    setvbuf(stdout, NULL, _IOLBF, 0);

    int lines = 0;
    while (lines < 2 && fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        printf("read [%s]\n", line);
        lines++;
    }
    check("fgets.stdin", lines == 2, "%d lines before end of input", lines);

    FILE *f = fopen(path, "w");
    check("fopen.write", f != NULL, "%s: errno %d", path, errno);
    if (!f)
        return check_summary("cstdio");
    for (int i = 0; i < 100; i++)
        fprintf(f, "line %03d of a file written through stdio\n", i);
    check("fclose.write", fclose(f) == 0, "errno %d", errno);

    f = fopen(path, "r");
    int count = 0, in_order = 1;
    while (f && fgets(line, sizeof line, f)) {
        char want[64];
        snprintf(want, sizeof want, "line %03d of a file written through stdio\n", count);
        in_order &= strcmp(line, want) == 0;
        count++;
    }
    check("fgets.file", count == 100 && in_order, "%d lines, in order %d", count, in_order);
    /* Every line is as long as the first: seek to the sixth, read it, see where we are. */
    long len = (long)strlen("line 000 of a file written through stdio\n");
    int sought = f && fseek(f, 5 * len, SEEK_SET) == 0;
    char *got = sought ? fgets(line, sizeof line, f) : NULL;
    long at = f ? ftell(f) : -1;
    check("fseek", got && strncmp(line, "line 005", 8) == 0 && at == 6 * len, "line \"%.8s\" then at %ld",
          got ? line : "", at);
    struct stat st = {0};
    int stat_ok = f && fstat(fileno(f), &st) == 0;
    check("fstat.size", stat_ok && st.st_size == 100 * len && S_ISREG(st.st_mode), "size %lld",
          (long long)st.st_size);
    if (f)
        fclose(f);

    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        found |= strcasecmp(e->d_name, "cstdio.txt") == 0;
    if (d)
        closedir(d);
    check("readdir", found, "cstdio.txt not listed in %s", dir);
    check("unlink", unlink(path) == 0 && access(path, F_OK) != 0, "errno %d", errno);
    return check_summary("cstdio");
}
