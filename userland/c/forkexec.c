/* forkexec: the Unix process life cycle as a C program lives it — fork (the child a copy of
 * the parent, its writes its own: copy-on-write), a pipe across the fork, exit statuses
 * through waitpid, execve of another program through execvp's PATH search, vfork + exec,
 * and posix_spawn. One line per check; exit status 1 if any failed. Plain Linux C.
 *
 *   forkexec [PROGRAM]   PROGRAM: what the children exec (default "chello", found on PATH) */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

extern char **environ;
static int shared = 1;

int main(int argc, char **argv)
{
    const char *prog = argc > 1 ? argv[1] : "chello";
    setvbuf(stdout, NULL, _IOLBF, 0);
    static char page[8192];
    memset(page, 'p', sizeof page);

    /* fork without exec: the child's writes stay its own. */
    int fds[2];
    check("pipe", pipe(fds) == 0, "errno %d", errno);
    pid_t c = fork();
    if (c == 0) {
        shared = 2;
        page[0] = 'c';
        char msg[32];
        int n = snprintf(msg, sizeof msg, "child %d %d", shared, getppid() > 0);
        if (write(fds[1], msg, n) != n)
            _exit(99);
        _exit(7);
    }
    check("fork", c > 0, "returned %d errno %d", c, errno);
    close(fds[1]);
    char buf[64] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    check("fork.pipe", n > 0 && strcmp(buf, "child 2 1") == 0, "read %zd \"%s\"", n, buf);
    int st = 0;
    pid_t w = waitpid(c, &st, 0);
    check("fork.wait", w == c && WIFEXITED(st) && WEXITSTATUS(st) == 7, "waitpid %d status %#x", w, st);
    check("fork.cow", c > 0 && shared == 1 && page[0] == 'p', "parent sees shared=%d page[0]=%c", shared, page[0]);
    close(fds[0]);

    /* fork + exec through PATH. */
    c = fork();
    if (c == 0) {
        execlp(prog, prog, "from-fork", (char *)NULL);
        _exit(127);
    }
    w = waitpid(c, &st, 0);
    check("fork.exec", c > 0 && w == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: waitpid %d status %#x", prog, w, st);

    /* exec of something that does not exist: the child learns ENOENT. */
    c = fork();
    if (c == 0) {
        execl("/bin/no-such-program", "x", (char *)NULL);
        _exit(errno == ENOENT ? 3 : 4);
    }
    w = waitpid(c, &st, 0);
    check("exec.enoent", c > 0 && w == c && WIFEXITED(st) && WEXITSTATUS(st) == 3, "status %#x", st);

    /* vfork + exec: the parent waits until the child has exec'd. */
    c = vfork();
    if (c == 0) {
        execlp(prog, prog, "from-vfork", (char *)NULL);
        _exit(127);
    }
    w = waitpid(c, &st, 0);
    check("vfork.exec", c > 0 && w == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);

    /* posix_spawn (musl: clone(CLONE_VM|CLONE_VFORK) + exec). */
    pid_t sp;
    char *sargv[] = {(char *)prog, "from-posix_spawn", NULL};
    int r = posix_spawnp(&sp, prog, NULL, NULL, sargv, environ);
    w = r == 0 ? waitpid(sp, &st, 0) : -1;
    check("posix_spawn", r == 0 && w == sp && WIFEXITED(st) && WEXITSTATUS(st) == 0, "returned %d status %#x", r,
          st);

    /* A child killed by a signal is reported as such. */
    c = fork();
    if (c == 0) {
        *(volatile int *)0 = 1;
        _exit(0);
    }
    w = waitpid(c, &st, 0);
    check("wait.signaled", c > 0 && w == c && WIFSIGNALED(st) && WTERMSIG(st) == 11, "status %#x", st);

    /* No children left. */
    w = waitpid(-1, &st, WNOHANG);
    check("wait.echild", w == -1 && errno == ECHILD, "returned %d errno %d", w, errno);
    return check_summary("forkexec");
}
