/*
 * fork_exec — the Unix process life cycle in plain C, nothing Tally-specific: fork with
 * copy-on-write (the child's writes stay its own), execve of /bin/hello, waitpid, then vfork
 * + execve (musl's vfork is the raw vfork system call). Prints "fork_exec: ok" and exits 0
 * when every step behaved as on Linux; a line naming the step and status 1 otherwise.
 * Built with `musl-gcc -static`; on Tally it runs as /bin/fork_exec (docs/user-mode.md,
 * "fork and copy-on-write").
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say(const char *s) { write(1, s, strlen(s)); }

/* Three pages the parent fills before fork: shared copy-on-write afterwards. */
static char buf[3 * 4096];

int main(void) {
    int status = -1;
    memset(buf, 'p', sizeof buf);
    pid_t pid = fork();
    if (pid < 0) {
        say("fork_exec: fork failed\n");
        return 1;
    }
    if (pid == 0) {
        memset(buf, 'c', sizeof buf); /* one copy-on-write fault per page */
        if (buf[0] != 'c')
            _exit(2);
        char *argv[] = {"hello", "from", "a", "C", "child", NULL};
        char *envp[] = {"PATH=/bin", NULL};
        execve("/bin/hello", argv, envp);
        _exit(127);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        say("fork_exec: the forked child did not exec and exit 0\n");
        return 1;
    }
    if (buf[0] != 'p' || buf[sizeof buf - 1] != 'p') {
        say("fork_exec: the child's writes reached the parent\n");
        return 1;
    }
    pid = vfork();
    if (pid == 0) {
        char *argv[] = {"hello", "vfork", NULL};
        execve("/bin/hello", argv, NULL);
        _exit(127);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        say("fork_exec: vfork + execve failed\n");
        return 1;
    }
    say("fork_exec: ok\n");
    return 0;
}
