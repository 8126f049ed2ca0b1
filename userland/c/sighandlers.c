/* sighandlers.c — POSIX signals from a static musl program, nothing Tally-specific: a
 * SA_SIGINFO handler on raise() with its siginfo, sigprocmask and delivery at the unblock,
 * sigtimedwait with and without a timeout, sigaltstack and an SA_ONSTACK handler, a
 * SIGSEGV handler leaving through siglongjmp, SIGCHLD through sigtimedwait after fork.
 * Prints "signals: ok" and exits
 * 0, or names the first failed check and exits with its number. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hits, last_sig, last_code;
static volatile pid_t last_pid;
static volatile uintptr_t last_sp, last_addr;
static sigjmp_buf escape;

#define CHECK(n, cond) do { if (!(cond)) { printf("signals: check %d failed (errno %d)\n", n, errno); return n; } } while (0)

static void on_sig(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    int local;
    hits++;
    last_sig = sig;
    last_code = si->si_code;
    last_pid = si->si_pid;
    last_sp = (uintptr_t)&local;
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    last_sig = sig;
    last_addr = (uintptr_t)si->si_addr;
    siglongjmp(escape, 1);
}

int main(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sig;
    sa.sa_flags = SA_SIGINFO;
    CHECK(1, sigaction(SIGUSR1, &sa, 0) == 0);
    CHECK(2, raise(SIGUSR1) == 0 && hits == 1 && last_sig == SIGUSR1 && last_code == SI_TKILL && last_pid == getpid());

    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    CHECK(3, sigprocmask(SIG_BLOCK, &set, &old) == 0);
    kill(getpid(), SIGUSR1);
    sigset_t pend;
    CHECK(4, hits == 1 && sigpending(&pend) == 0 && sigismember(&pend, SIGUSR1));
    CHECK(5, sigprocmask(SIG_SETMASK, &old, 0) == 0 && hits == 2 && last_code == SI_USER);

    sigprocmask(SIG_BLOCK, &set, 0);
    kill(getpid(), SIGUSR1);
    siginfo_t si;
    struct timespec zero = {0, 0}, short_wait = {0, 20 * 1000 * 1000};
    CHECK(6, sigtimedwait(&set, &si, &zero) == SIGUSR1 && si.si_pid == getpid() && hits == 2);
    CHECK(7, sigtimedwait(&set, &si, &short_wait) == -1 && errno == EAGAIN);
    sigprocmask(SIG_UNBLOCK, &set, 0);

    static char altstack[65536];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    CHECK(8, sigaltstack(&ss, 0) == 0);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigaction(SIGUSR2, &sa, 0);
    raise(SIGUSR2);
    CHECK(9, hits == 3 && last_sp > (uintptr_t)altstack && last_sp < (uintptr_t)altstack + sizeof altstack);

    struct sigaction segv;
    memset(&segv, 0, sizeof segv);
    segv.sa_sigaction = on_segv;
    segv.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGSEGV, &segv, 0);
    if (sigsetjmp(escape, 1) == 0) {
        volatile int *volatile bad = (volatile int *)16;
        *bad = 1;
        CHECK(10, 0);
    }
    CHECK(11, last_sig == SIGSEGV && last_addr == 16);

    struct timespec nap = {0, 1000000};
    CHECK(12, nanosleep(&nap, 0) == 0);

    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_BLOCK, &set, 0);
    pid_t child = fork();
    if (child == 0)
        _exit(7);
    if (child > 0) {
        CHECK(13, sigwaitinfo(&set, &si) == SIGCHLD && si.si_pid == child && si.si_code == CLD_EXITED && si.si_status == 7);
        int status;
        CHECK(14, waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 7);
    } else {
        CHECK(15, 0); /* fork failed */
    }
    printf("signals: ok\n");
    return 0;
}
