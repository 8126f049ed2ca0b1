/* calls: the small system calls a C library leans on, each checked against what Linux
 * answers. One line per check ("ok NAME" or "FAIL NAME: what"), then a summary; the exit
 * status is 1 if any check failed. A plain Linux program: it passes on a Linux host (run it
 * from / for getcwd) and on Tally alike.
 *
 *   calls [--tty]     --tty: standard input must be a terminal (the console's ioctls) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* A raw system call's result: -errno on failure, as the kernel returns it. */
static long raw(long nr, long a, long b, long c)
{
    long r = syscall(nr, a, b, c);
    return r == -1 ? -errno : r;
}

static int terminated(const char *f, size_t n)
{
    return memchr(f, 0, n) != NULL;
}

static void test_uname(void)
{
    struct utsname u;
    memset(&u, 0xff, sizeof u);
    int r = uname(&u);
    check("uname", r == 0, "returned %d errno %d", r, errno);
    check("uname.fields_terminated",
          terminated(u.sysname, sizeof u.sysname) && terminated(u.nodename, sizeof u.nodename) &&
              terminated(u.release, sizeof u.release) && terminated(u.version, sizeof u.version) &&
              terminated(u.machine, sizeof u.machine),
          "a field without its NUL");
    check("uname.sysname", strcmp(u.sysname, "Linux") == 0, "sysname \"%.65s\"", u.sysname);
    check("uname.machine", strcmp(u.machine, "x86_64") == 0, "machine \"%.65s\"", u.machine);
    long e = raw(SYS_uname, 8, 0, 0);
    check("uname.efault", e == -EFAULT, "uname(8) gave %ld", e);
}

static void test_getrandom(void)
{
    unsigned char a[32], b[32], zero[32] = {0};
    long n = raw(SYS_getrandom, (long)a, sizeof a, 0);
    long m = raw(SYS_getrandom, (long)b, sizeof b, 1 /* GRND_NONBLOCK */);
    check("getrandom", n == 32 && m == 32, "returned %ld and %ld", n, m);
    check("getrandom.not_zero", memcmp(a, zero, 32) != 0, "32 zero bytes");
    check("getrandom.differs", memcmp(a, b, 32) != 0, "two draws were equal");
    long r = raw(SYS_getrandom, (long)a, 16, 2 /* GRND_RANDOM */);
    check("getrandom.grnd_random", r == 16, "returned %ld", r);
    r = raw(SYS_getrandom, (long)a, 16, 0x100);
    check("getrandom.bad_flag", r == -EINVAL, "flag 0x100 gave %ld", r);
    r = raw(SYS_getrandom, (long)a, 16, 2 | 4 /* GRND_RANDOM | GRND_INSECURE */);
    check("getrandom.random_insecure", r == -EINVAL, "RANDOM|INSECURE gave %ld", r);
    r = raw(SYS_getrandom, 8, 16, 0);
    check("getrandom.efault", r == -EFAULT, "a bad buffer gave %ld", r);
    r = raw(SYS_getrandom, (long)a, 0, 0);
    check("getrandom.empty", r == 0, "len 0 gave %ld", r);
    /* A bigger request than one internal piece, all of it filled. */
    size_t big = 4096 + 17;
    unsigned char *p = malloc(big);
    memset(p, 0, big);
    r = raw(SYS_getrandom, (long)p, big, 0);
    int tail = 0;
    for (size_t i = big - 16; i < big; i++)
        tail |= p[i];
    check("getrandom.large", r == (long)big && tail != 0, "returned %ld", r);
    free(p);
}

static void test_getcwd(void)
{
    char buf[256];
    char *c = getcwd(buf, sizeof buf);
    check("getcwd", c == buf && buf[0] == '/', "returned %p", (void *)c);
    long r = raw(SYS_getcwd, (long)buf, sizeof buf, 0);
    check("getcwd.length", r == (long)strlen(buf) + 1, "the call returned %ld for \"%s\"", r, buf);
    r = raw(SYS_getcwd, (long)buf, 1, 0);
    check("getcwd.erange", r == -ERANGE, "size 1 gave %ld", r);
}

static void test_iov(void)
{
    int p[2];
    if (pipe(p) != 0) {
        check("pipe", 0, "errno %d", errno);
        return;
    }
    struct iovec w[3] = {{"abc", 3}, {"", 0}, {"defgh", 5}};
    ssize_t n = writev(p[1], w, 3);
    check("writev.pipe", n == 8, "returned %zd", n);
    char x[3], y[10];
    struct iovec r[2] = {{x, 3}, {y, 10}};
    n = readv(p[0], r, 2);
    check("readv.pipe", n == 8 && memcmp(x, "abc", 3) == 0 && memcmp(y, "defgh", 5) == 0,
          "returned %zd, \"%.3s\" \"%.5s\"", n, x, y);
    /* A partial read: 4 bytes there, 13 asked for, the call does not wait for more. */
    n = write(p[1], "wxyz", 4);
    int avail = -1, avail_w = -1;
    int ir = ioctl(p[0], FIONREAD, &avail);
    ioctl(p[1], FIONREAD, &avail_w);
    check("ioctl.fionread", ir == 0 && avail == 4 && avail_w == 4, "returned %d, %d and %d bytes", ir, avail, avail_w);
    n = readv(p[0], r, 2);
    check("readv.partial", n == 4 && memcmp(x, "wxy", 3) == 0 && y[0] == 'z', "returned %zd", n);
    check("readv.zero_count", readv(p[0], r, 0) == 0, "iovcnt 0");
    long e = raw(SYS_readv, p[0], (long)r, 1025);
    check("readv.iov_max", e == -EINVAL, "iovcnt 1025 gave %ld", e);
    e = raw(SYS_writev, p[1], (long)w, -1);
    check("writev.negative", e == -EINVAL, "iovcnt -1 gave %ld", e);
    e = raw(SYS_writev, p[1], 8, 1);
    check("writev.efault", e == -EFAULT, "a bad array gave %ld", e);
    struct iovec huge[2] = {{x, (size_t)1 << 63}, {y, (size_t)1 << 63}};
    e = raw(SYS_readv, p[0], (long)huge, 2);
    check("readv.overflow", e == -EINVAL, "lengths over SSIZE_MAX gave %ld", e);
    e = raw(SYS_readv, p[1], (long)r, 2);
    check("readv.write_end", e == -EBADF, "readv on the write end gave %ld", e);

    /* dup: the lowest free descriptor, the same open file, close-on-exec clear. */
    struct stat so, sd;
    int d = dup(1);
    int d_ok = d >= 0 && fcntl(d, F_GETFD) == 0 && fstat(1, &so) == 0 && fstat(d, &sd) == 0 &&
               so.st_mode == sd.st_mode && so.st_rdev == sd.st_rdev;
    int d_again = d >= 0 && close(d) == 0 ? dup(1) : -2;
    check("dup", d_ok && d_again == d, "dup gave %d, again %d", d, d_again);
    if (d_again >= 0)
        close(d_again);
    e = raw(SYS_dup, 999, 0, 0);
    check("dup.ebadf", e == -EBADF, "dup(999) gave %ld", e);

    /* fcntl: the status flags, O_NONBLOCK honoured. */
    int fl = fcntl(p[0], F_GETFL);
    check("fcntl.getfl_read_end", fl >= 0 && (fl & O_ACCMODE) == O_RDONLY && !(fl & O_NONBLOCK), "flags %#x", fl);
    fl = fcntl(p[1], F_GETFL);
    check("fcntl.getfl_write_end", fl >= 0 && (fl & O_ACCMODE) == O_WRONLY, "flags %#x", fl);
    int s = fcntl(p[0], F_SETFL, O_NONBLOCK);
    fl = fcntl(p[0], F_GETFL);
    check("fcntl.setfl_nonblock", s == 0 && (fl & O_NONBLOCK), "F_SETFL %d, flags then %#x", s, fl);
    char c;
    errno = 0;
    n = read(p[0], &c, 1);
    check("read.nonblock_empty", n == -1 && errno == EAGAIN, "returned %zd errno %d", n, errno);
    fcntl(p[0], F_SETFL, 0);
    fl = fcntl(p[0], F_GETFL);
    check("fcntl.setfl_clear", !(fl & O_NONBLOCK), "flags %#x", fl);
    /* A non-blocking writer fills the pipe and is then told EAGAIN, never made to wait. */
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    static char block[4096];
    long total = 0;
    for (int i = 0; i < 1024; i++) {
        n = write(p[1], block, sizeof block);
        if (n < 0)
            break;
        total += n;
    }
    check("write.nonblock_full", n == -1 && errno == EAGAIN && total > 0, "wrote %ld, then %zd errno %d", total,
          n, errno);
    e = raw(SYS_fcntl, p[0], 9999, 0);
    check("fcntl.bad_cmd", e == -EINVAL, "cmd 9999 gave %ld", e);
    e = raw(SYS_fcntl, 999, F_GETFL, 0);
    check("fcntl.ebadf", e == -EBADF, "fd 999 gave %ld", e);

    /* ioctl: a pipe is no terminal. */
    struct winsize ws;
    e = raw(SYS_ioctl, p[0], TIOCGWINSZ, (long)&ws);
    check("ioctl.pipe_enotty", e == -ENOTTY, "TIOCGWINSZ on a pipe gave %ld", e);
    struct termios t;
    e = raw(SYS_ioctl, p[0], TCGETS, (long)&t);
    check("ioctl.pipe_tcgets", e == -ENOTTY, "TCGETS on a pipe gave %ld", e);
    close(p[0]);
    close(p[1]);
}

static void test_tty(void)
{
    struct winsize ws;
    int r = ioctl(0, TIOCGWINSZ, &ws);
    check("ioctl.tiocgwinsz", r == 0, "returned %d (%d x %d)", r, ws.ws_row,
          ws.ws_col);
    struct termios t;
    check("ioctl.tcgets", tcgetattr(0, &t) == 0, "errno %d", errno);
    check("isatty", isatty(0) == 1, "stdin is not a terminal");
    int fl = fcntl(0, F_GETFL);
    check("fcntl.getfl_tty", fl >= 0 && (fl & O_ACCMODE) == O_RDWR, "flags %#x", fl);
}

static void test_ids(void)
{
    check("ids.euid", geteuid() == getuid(), "euid %d uid %d", geteuid(), getuid());
    check("ids.egid", getegid() == getgid(), "egid %d gid %d", getegid(), getgid());
    check("ids.tid", syscall(SYS_gettid) == getpid(), "tid %ld pid %d", syscall(SYS_gettid), getpid());
    check("ids.ppid", getppid() > 0, "ppid %d", getppid());
}

static void test_time(void)
{
    struct timespec a, b, rt;
    clock_gettime(CLOCK_MONOTONIC, &a);
    struct timespec d = {0, 10 * 1000 * 1000};
    int r = nanosleep(&d, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long long ns = (b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec);
    check("nanosleep", r == 0 && ns >= 10 * 1000 * 1000, "returned %d after %lld ns", r, ns);
    clock_gettime(CLOCK_REALTIME, &rt);
    time_t now = time(NULL);
    check("time", rt.tv_sec > 1577836800 /* 2020 */ && now >= rt.tv_sec && now - rt.tv_sec < 5,
          "realtime %lld, time() %lld", (long long)rt.tv_sec, (long long)now);
}

static void test_system(void)
{
    struct sysinfo si;
    memset(&si, 0xff, sizeof si);
    int r = sysinfo(&si);
    check("sysinfo", r == 0 && si.mem_unit >= 1 && si.totalram > 0 && si.freeram > 0 &&
                         si.freeram <= si.totalram && si.procs >= 1,
          "returned %d: uptime %ld, ram %lu free %lu unit %u, procs %u", r, si.uptime, si.totalram, si.freeram,
          si.mem_unit, si.procs);
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES);
    check("sysconf.phys_pages", pages > 0 && avail > 0 && avail <= pages, "%ld pages, %ld available", pages, avail);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    int a = sched_getaffinity(0, sizeof set, &set);
    check("sched_getaffinity", a == 0 && CPU_COUNT(&set) == cpus && cpus >= 1,
          "returned %d, %d CPUs in the mask, sysconf says %ld", a, CPU_COUNT(&set), cpus);
    long e = raw(SYS_sched_getaffinity, 0, 4, (long)&set);
    check("sched_getaffinity.short", e == -EINVAL, "len 4 gave %ld", e);
    e = raw(SYS_sched_getaffinity, 0x3fffffff, sizeof set, (long)&set);
    check("sched_getaffinity.esrch", e == -ESRCH, "pid 0x3fffffff gave %ld", e);
}

static void test_misc(void)
{
    long r = raw(400, 0, 0, 0);
    check("enosys", r == -ENOSYS, "system call 400 gave %ld", r);
    DIR *d = opendir("/bin");
    int entries = 0;
    if (d) {
        while (readdir(d))
            entries++;
        closedir(d);
    }
    check("opendir", d != NULL && entries > 0, "/bin: %d entries", entries);
    size_t big = 1 << 20; /* malloc's mmap path */
    char *p = malloc(big);
    if (p) {
        memset(p, 1, big);
        p[big - 1] = 2;
    }
    check("malloc.mmap", p && p[0] == 1 && p[big - 1] == 2, "1 MiB");
    free(p);
}

int main(int argc, char **argv)
{
    int tty = argc > 1 && strcmp(argv[1], "--tty") == 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_uname();
    test_getrandom();
    test_getcwd();
    test_iov();
    if (tty)
        test_tty();
    test_ids();
    test_time();
    test_system();
    test_misc();
    return check_summary("calls");
}
