/* cthreads: POSIX threads as musl makes them — clone with CLONE_VM|FS|FILES|SIGHAND|THREAD|
 * SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID, a TLS block per thread (FS base), a contended
 * mutex and a condition variable (futex WAIT/WAKE, private), pthread_join (woken by the
 * kernel's clear-child-tid futex wake at thread exit), and a thread blocked in a pipe read
 * while another thread forks (its buffer's page turns copy-on-write under it). Plain Linux C.
 *
 *   cthreads [THREADS [ROUNDS]]   (default 4 threads, 20000 rounds each) */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long counter;
static int arrived, go;
static __thread long mine = -1; /* TLS: each thread its own */
static long rounds = 20000;

static int pipe_fds[2];

/* Blocks in read on an empty pipe, into a buffer on its own stack. */
static void *reader(void *arg)
{
    (void)arg;
    char buf[64];
    buf[0] = 0;
    ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    return (void *)(long)(n == 1 && buf[0] == 'r' ? 1 : -(long)errno);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    mine = id;
    pthread_mutex_lock(&lock);
    arrived++;
    pthread_cond_broadcast(&cond);
    while (!go)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    for (long i = 0; i < rounds; i++) {
        pthread_mutex_lock(&lock);
        counter++;
        pthread_mutex_unlock(&lock);
        if (i % 1000 == 0)
            sched_yield(); /* make the lock contended */
    }
    long tid = syscall(SYS_gettid);
    return (void *)(mine == id && tid != getpid() ? id + 1 : -1L);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4;
    if (argc > 2)
        rounds = atol(argv[2]);
    if (n < 1 || n > 64)
        n = 4;
    setvbuf(stdout, NULL, _IOLBF, 0);
    pthread_t t[64];
    mine = 1000;
    int created = 0;
    for (long i = 0; i < n; i++)
        created += pthread_create(&t[i], NULL, worker, (void *)i) == 0;
    check("pthread_create", created == n, "%d of %d", created, n);
    pthread_mutex_lock(&lock);
    while (arrived < created)
        pthread_cond_wait(&cond, &lock);
    go = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    int good = 0;
    for (int i = 0; i < created; i++) {
        void *ret;
        good += pthread_join(t[i], &ret) == 0 && (long)ret == i + 1;
    }
    check("pthread_join", good == created, "%d of %d threads returned their own TLS and tid", good, created);
    check("mutex", counter == created * rounds, "counter %ld, expected %ld", counter, created * rounds);
    check("tls.main", mine == 1000, "main's TLS changed to %ld", mine);

    /* A timed wait that times out: ETIMEDOUT after the deadline. */
    struct timespec ts, after;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 20 * 1000 * 1000;
    if (ts.tv_nsec >= 1000000000) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&lock);
    int r = pthread_cond_timedwait(&cond, &lock, &ts);
    pthread_mutex_unlock(&lock);
    clock_gettime(CLOCK_REALTIME, &after);
    int late = after.tv_sec > ts.tv_sec || (after.tv_sec == ts.tv_sec && after.tv_nsec >= ts.tv_nsec);
    check("cond_timedwait", r == ETIMEDOUT && late, "returned %d, deadline passed %d", r, late);

    /* A read sleeping while its process forks: after the fork its buffer is copy-on-write,
     * and the bytes must still arrive (no EFAULT, nothing lost). */
    pthread_t rt;
    void *got = (void *)0;
    int made = pipe(pipe_fds) == 0 && pthread_create(&rt, NULL, reader, NULL) == 0;
    if (made) {
        struct timespec nap = {0, 30 * 1000 * 1000};
        nanosleep(&nap, NULL); /* the reader is asleep in read by now */
        pid_t c = fork();
        if (c == 0)
            _exit(0);
        if (c > 0)
            waitpid(c, NULL, 0);
        made = write(pipe_fds[1], "r", 1) == 1 && pthread_join(rt, &got) == 0;
    }
    check("read_across_fork", made && (long)got == 1, "the reader got %ld", (long)got);
    return check_summary("cthreads");
}
