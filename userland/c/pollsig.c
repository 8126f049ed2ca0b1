/* pollsig: poll and signals as C programs use them — poll on pipes (timeout, readiness,
 * woken by a writer), sigaction handlers run in user mode with their siginfo, masks and
 * pending signals, a handler on an alternate stack, a signal cutting a poll short (EINTR,
 * never restarted), SA_RESTART restarting a read, sigtimedwait. Plain Linux C.
 *
 *   pollsig */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static volatile sig_atomic_t got, got_code, got_pid, on_alt;
static char altstack[65536];

static void handler(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    got = sig;
    got_code = si->si_code;
    got_pid = si->si_pid;
    char here;
    on_alt = &here >= altstack && &here < altstack + sizeof altstack;
}

/* fork, or end the program here: every check after needs the helper process. */
static pid_t fork_or_end(void)
{
    pid_t c = fork();
    if (c < 0) {
        check("fork", 0, "errno %d", errno);
        exit(check_summary("pollsig"));
    }
    return c;
}

static void sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&d, NULL);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int p[2];
    pipe(p);

    /* poll: nothing to read → 0 after the timeout; then readable. */
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    int r = poll(&pf, 1, 30);
    check("poll.timeout", r == 0 && pf.revents == 0, "returned %d revents %#x", r, pf.revents);
    write(p[1], "x", 1);
    r = poll(&pf, 1, 0);
    check("poll.readable", r == 1 && (pf.revents & POLLIN), "returned %d revents %#x", r, pf.revents);
    char c;
    read(p[0], &c, 1);
    struct pollfd wf = {.fd = p[1], .events = POLLOUT};
    r = poll(&wf, 1, 0);
    check("poll.writable", r == 1 && (wf.revents & POLLOUT), "returned %d revents %#x", r, wf.revents);

    /* poll woken by another process's write. */
    pid_t child = fork_or_end();
    if (child == 0) {
        sleep_ms(30);
        write(p[1], "y", 1);
        _exit(0);
    }
    pf.revents = 0;
    r = poll(&pf, 1, 5000);
    check("poll.woken", r == 1 && (pf.revents & POLLIN), "returned %d revents %#x", r, pf.revents);
    read(p[0], &c, 1);
    waitpid(child, NULL, 0);

    /* A handler, with its siginfo: kill from ourselves is SI_USER with our pid. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    check("sigaction", sigaction(SIGUSR1, &sa, NULL) == 0, "errno %d", errno);
    kill(getpid(), SIGUSR1);
    check("handler.ran", got == SIGUSR1 && got_code == SI_USER && got_pid == getpid(), "sig %d code %d pid %d",
          (int)got, (int)got_code, (int)got_pid);

    /* Blocked: pending, delivered at unblock. */
    got = 0;
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, &old);
    kill(getpid(), SIGUSR1);
    sigset_t pend;
    sigpending(&pend);
    check("mask.pending", got == 0 && sigismember(&pend, SIGUSR1), "got %d", (int)got);
    sigprocmask(SIG_SETMASK, &old, NULL);
    check("mask.delivered", got == SIGUSR1, "got %d", (int)got);

    /* On an alternate stack. */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    check("sigaltstack", sigaltstack(&ss, NULL) == 0, "errno %d", errno);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGUSR2, &sa, NULL);
    got = 0;
    raise(SIGUSR2);
    check("altstack.used", got == SIGUSR2 && on_alt, "got %d on the alternate stack %d", (int)got, (int)on_alt);

    /* A signal cuts a long poll short: EINTR (10 s: a kernel that never delivers the
     * signal fails the check instead of hanging). */
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    got = 0;
    pid_t parent = getpid();
    child = fork_or_end();
    if (child == 0) {
        sleep_ms(30);
        kill(parent, SIGUSR1);
        _exit(0);
    }
    pf.revents = 0;
    errno = 0;
    r = poll(&pf, 1, 10000);
    check("poll.eintr", r == -1 && errno == EINTR && got == SIGUSR1, "returned %d errno %d got %d", r, errno,
          (int)got);
    waitpid(child, NULL, 0);

    /* SA_RESTART: a read interrupted by a handled signal goes on and gets its byte. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    got = 0;
    child = fork_or_end();
    if (child == 0) {
        sleep_ms(30);
        kill(parent, SIGUSR1);
        sleep_ms(30);
        write(p[1], "z", 1);
        _exit(0);
    }
    ssize_t n = read(p[0], &c, 1);
    check("sa_restart", n == 1 && c == 'z' && got == SIGUSR1, "read %zd got %d", n, (int)got);
    waitpid(child, NULL, 0);

    /* sigtimedwait takes a blocked signal without a handler running; times out otherwise. */
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigprocmask(SIG_BLOCK, &set, NULL);
    got = 0;
    kill(getpid(), SIGUSR2);
    siginfo_t si;
    struct timespec to = {1, 0};
    r = sigtimedwait(&set, &si, &to);
    check("sigtimedwait", r == SIGUSR2 && si.si_signo == SIGUSR2 && got == 0, "returned %d got %d", r, (int)got);
    struct timespec short_to = {0, 20 * 1000 * 1000};
    r = sigtimedwait(&set, &si, &short_to);
    check("sigtimedwait.timeout", r == -1 && errno == EAGAIN, "returned %d errno %d", r, errno);

    /* The default action of SIGTERM ends a child; the parent sees it. */
    child = fork_or_end();
    if (child == 0) {
        for (;;)
            pause();
    }
    sleep_ms(20);
    kill(child, SIGTERM);
    int st;
    waitpid(child, &st, 0);
    check("default.term", WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %#x", st);
    return check_summary("pollsig");
}
