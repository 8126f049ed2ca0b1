/* linuxprog.c — an ordinary Linux program, built on the host with `musl-gcc -static` and
 * handed to Tally with `cargo xtask run --add` (scenario tests/run_add.toml): nothing in it
 * knows about Tally. It forks and execs itself, waits, starts threads that meet on a mutex
 * and a condition variable, polls a pipe, and catches signals; one line per step, and
 * "linuxprog: all done" with status 0 at the end. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn = PTHREAD_COND_INITIALIZER;
static int counter;
static volatile sig_atomic_t caught;

static void fail(const char *what)
{
    printf("linuxprog: FAILED %s (errno %d)\n", what, errno);
    exit(1);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_cond_broadcast(&turn);
        pthread_mutex_unlock(&lock);
    }
    return (void *)(id * 10);
}

static void on_usr1(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (sig == SIGUSR1 && info->si_pid == getpid())
        caught++;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        printf("linuxprog: exec'd child, pid %d, parent %d\n", getpid(), getppid());
        return 42;
    }

    /* fork, exec (this very program, through PATH), wait */
    pid_t pid = fork();
    if (pid < 0)
        fail("fork");
    if (pid == 0) {
        execlp(argv[0], argv[0], "child", (char *)NULL);
        _exit(127);
    }
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 42)
        fail("fork, exec and wait");
    printf("linuxprog: fork, exec, wait: child exited with 42\n");

    /* threads meeting on a mutex and a condition variable, joined */
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            fail("pthread_create");
    pthread_mutex_lock(&lock);
    while (counter < 4000)
        pthread_cond_wait(&turn, &lock);
    pthread_mutex_unlock(&lock);
    for (long i = 0; i < 4; i++) {
        void *ret;
        if (pthread_join(t[i], &ret) != 0 || (long)ret != i * 10)
            fail("pthread_join");
    }
    printf("linuxprog: 4 threads, counter %d, joined\n", counter);

    /* poll: a timeout on an empty pipe, then readiness once a child writes */
    int fds[2];
    if (pipe(fds) < 0)
        fail("pipe");
    struct pollfd p = {fds[0], POLLIN, 0};
    if (poll(&p, 1, 30) != 0)
        fail("poll timeout");
    pid = fork();
    if (pid == 0) {
        usleep(20000);
        if (write(fds[1], "x", 1) != 1)
            _exit(1);
        _exit(0);
    }
    if (poll(&p, 1, 5000) != 1 || !(p.revents & POLLIN))
        fail("poll readiness");
    waitpid(pid, NULL, 0);
    printf("linuxprog: poll: timed out, then readable\n");

    /* signals: a SA_SIGINFO handler, then one blocked and delivered at the unblock */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO;
    if (sigaction(SIGUSR1, &sa, NULL) < 0)
        fail("sigaction");
    raise(SIGUSR1);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigprocmask(SIG_BLOCK, &set, NULL);
    kill(getpid(), SIGUSR1);
    if (caught != 1)
        fail("a blocked signal was delivered");
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    if (caught != 2)
        fail("signal handlers");
    printf("linuxprog: signals: 2 handled\n");
    printf("linuxprog: all done\n");
    return 0;
}
