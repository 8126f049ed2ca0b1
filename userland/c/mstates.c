/* mstates: every one of the 13 microstates entered on purpose, each read back from the
 * kernel's own accounting over taskstats (Tally's microstate attribute of a TASKSTATS_CMD_GET
 * record), one line per state: "ok STATE X.XXX ms (what entered it)", or FAIL if its clock
 * stayed at zero. A plain Linux C program: on Linux, which sends no microstate clocks, it
 * drives the same states and says there is nothing to read.
 *
 *   mstates                what it does, in order:
 *
 * ONCPU_USR              a loop in user mode                           (this process)
 * ONCPU_SYS              20000 getppid calls                           (this process)
 * ONCPU_TRAP             4 MiB of fresh pages touched: minor faults    (this process)
 * INTERRUPTIBLE_SLEEP    nanosleep 20 ms                               (this process)
 * UNINTERRUPTIBLE_SLEEP  64 KiB written to /var and fsync'd: disk I/O  (this process)
 * INTERRUPTED            the timer interrupts the loops above          (this process)
 * FUTEX_SLEEP            futex(FUTEX_WAIT_PRIVATE) timing out, 20 ms   (this process)
 * POLL_SLEEP             poll with no descriptors, 20 ms               (this process)
 * ON_ACTIVE_QUEUE,       three processes spinning 300 ms each on one CPU: each waits on
 * ON_EXPIRED_QUEUE         the run queue, and slices run out (the O(1) scheduler's expired
 *                          array)                                       (any of the three)
 * ZOMBIE                 a child that exited, not yet waited for, 20 ms (the children)
 * STOPPED                a child that stopped itself with SIGSTOP, continued 20 ms later
 * PAGING_SLEEP           a copy of this program on /var, exec'd: its pages come from the
 *                          disk on demand (major faults)                (that child)
 *
 * Exit status 1 if a state's clock stayed at zero (or a step failed). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"
#include "taskstats.h"

#define FUTEX_WAIT_PRIVATE 128
static int fd;
static uint16_t family;
/* The largest clock seen for each state, and what showed it. */
static uint64_t best[NR_MICROSTATES];
static const char *shown_by[NR_MICROSTATES];
static int have_msa = -1;

/* GET pid's record and keep, for each state in `states`, its clock if larger. */
static void read_clocks(pid_t pid, const char *what, const int *states, int n)
{
    struct ts_record r[2];
    int got = ts_get(fd, family, 0, pid, r, 2);
    if (got < 1) {
        check("taskstats.get", 0, "pid %d (%s): %d", pid, what, got);
        return;
    }
    have_msa = r[0].have_msa;
    for (int i = 0; i < n; i++) {
        int s = states[i];
        if (r[0].msa[s] > best[s]) {
            best[s] = r[0].msa[s];
            shown_by[s] = what;
        }
    }
}

static void spin_ms(long ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 200000; i++)
            x += i;
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

static void sleep_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&d, NULL);
}

static pid_t fork_or_fail(const char *why)
{
    pid_t c = fork();
    if (c < 0)
        check("fork", 0, "for %s: errno %d", why, errno);
    return c;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--paged") == 0)
        return 0; /* the copy on /var: being loaded was its whole job */
    setvbuf(stdout, NULL, _IOLBF, 0);
    fd = ts_open();
    family = fd < 0 ? 0 : ts_family(fd);
    if (!family) {
        check("taskstats", 0, "no TASKSTATS family");
        return check_summary("mstates");
    }
    pid_t me = getpid();

    /* This process: the on-CPU states, the sleeps, INTERRUPTED. */
    spin_ms(50);
    for (int i = 0; i < 20000; i++)
        getppid();
    size_t big = 4 << 20;
    char *mem = malloc(big);
    for (size_t i = 0; mem && i < big; i += 4096)
        mem[i] = 1;
    free(mem);
    sleep_ms(20);
    int f = open("/var/mstates.tmp", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    static char block[65536];
    int wrote = f >= 0 && write(f, block, sizeof block) == (ssize_t)sizeof block && fsync(f) == 0;
    check("var.write", wrote, "/var/mstates.tmp: errno %d", errno);
    if (f >= 0)
        close(f);
    unlink("/var/mstates.tmp");
    int word = 0;
    struct timespec to = {0, 20 * 1000 * 1000};
    long fr = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 0, &to, NULL, 0);
    check("futex.timeout", fr == -1 && errno == ETIMEDOUT, "returned %ld errno %d", fr, errno);
    int pr = poll(NULL, 0, 20);
    check("poll.timeout", pr == 0, "returned %d errno %d", pr, errno);
    static const int own[] = {0, 1, 2, 3, 4, 9, 11, 12};
    read_clocks(me, "this process", own, sizeof own / sizeof *own);

    /* Three spinners on one CPU: the run queue, both arrays. The children then stay zombies
     * for 20 ms before they are read and reaped. */
    static const int queued[] = {5, 6, 7};
    pid_t kids[2];
    int gone[2] = {-1, -1}; /* end of file on gone[0]: both children have exited */
    if (pipe(gone) < 0)
        check("pipe", 0, "errno %d", errno);
    for (int k = 0; k < 2; k++) {
        kids[k] = fork_or_fail("the spinners");
        if (kids[k] == 0) {
            close(gone[0]);
            spin_ms(300);
            _exit(0); /* closes gone[1] on its way to being a zombie */
        }
    }
    close(gone[1]);
    spin_ms(300);
    char byte;
    while (gone[0] >= 0 && read(gone[0], &byte, 1) > 0)
        ;
    close(gone[0]);
    sleep_ms(20); /* both children are zombies now, and stay so while they are read */
    read_clocks(me, "a spinner (this process)", queued, 2);
    for (int k = 0; k < 2; k++) {
        if (kids[k] > 0) {
            read_clocks(kids[k], "a spinner (a zombie child)", queued, 3);
            waitpid(kids[k], NULL, 0);
        }
    }

    /* STOPPED: a child stops itself; continued 20 ms later; read as a zombie. */
    static const int stopped[] = {8};
    pid_t c = fork_or_fail("STOPPED");
    if (c == 0) {
        kill(getpid(), SIGSTOP);
        _exit(0);
    }
    if (c > 0) {
        int st;
        pid_t w = waitpid(c, &st, WUNTRACED);
        check("stop.seen", w == c && WIFSTOPPED(st), "waitpid %d status %#x", w, st);
        sleep_ms(20);
        kill(c, SIGCONT);
        sleep_ms(20);
        read_clocks(c, "a child stopped by SIGSTOP", stopped, 1);
        waitpid(c, NULL, 0);
    }

    /* PAGING_SLEEP: this program copied to /var and exec'd from there. */
    static const int paging[] = {10};
    int in = open(strchr(argv[0], '/') ? argv[0] : "/bin/mstates", O_RDONLY);
    int out = open("/var/mstates.bin", O_CREAT | O_WRONLY | O_TRUNC, 0755);
    ssize_t n, copied = 0;
    while (in >= 0 && out >= 0 && (n = read(in, block, sizeof block)) > 0)
        copied += write(out, block, n);
    check("copy.to_var", in >= 0 && out >= 0 && copied > 0, "copied %zd bytes", copied);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    c = fork_or_fail("PAGING_SLEEP");
    if (c == 0) {
        execl("/var/mstates.bin", "mstates", "--paged", (char *)NULL);
        _exit(127);
    }
    if (c > 0) {
        sleep_ms(50);
        read_clocks(c, "a program exec'd from /var", paging, 1);
        int st;
        waitpid(c, &st, 0);
        check("exec.from_var", WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
    }
    unlink("/var/mstates.bin");

    if (have_msa == 0) {
        printf("mstates: this kernel sends no microstate clocks (not Tally): nothing to check\n");
        return check_summary("mstates");
    }
    for (int s = 0; s < NR_MICROSTATES; s++) {
        char name[64];
        snprintf(name, sizeof name, "%s %.3f ms (%s)", microstate[s], best[s] / 1e6,
                 shown_by[s] ? shown_by[s] : "-");
        check(name, best[s] > 0, "its clock stayed at zero");
    }
    return check_summary("mstates");
}
