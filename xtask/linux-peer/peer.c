/*
 * The Linux peer of Tally's benchmarks (`cargo xtask bench --linux`, xtask/src/linuxbench.rs).
 *
 * Built on the host with `gcc -static -O2` and booted as /init, the only program of an
 * initramfs, under Debian's kernel in the same QEMU as Tally's bench (-icount shift=0:
 * 1 guest ns = 1 instruction). It times each operation with clock_gettime(CLOCK_MONOTONIC)
 * around N iterations and prints one line per result on the console:
 *
 *     LINUXBENCH {"name":"getpid","param":0,"ops":N,"ns":T}
 *
 * T is the guest time of the N operations in ns; xtask divides. Then it powers off.
 * The operations mirror Tally's `ubench` (userland/src/bin/ubench.rs) and the kernel's
 * exit benchmarks (kernel/src/bench/):
 *
 *   getpid          syscall(SYS_getpid): the null system call (glibc's getpid() is a plain
 *                   system call too, but syscall() makes sure nothing caches it).
 *   getrusage       getrusage(RUSAGE_SELF): the process's own CPU clocks.
 *   clock_thread    clock_gettime(CLOCK_THREAD_CPUTIME_ID): the thread's CPU clock (not in
 *                   the vDSO: a system call).
 *   taskstats_get   TASKSTATS_CMD_GET by pid over generic netlink: send + recv, as
 *                   `getdelays -p` does once per question.
 *   lat_ctx 2       a token passed round a ring of 2 processes through pipes; ops = hops.
 *   fork_exit L     fork, child _exit(0), waitpid; L = 0 or 1 taskstats listener registered
 *                   (TASKSTATS_CMD_ATTR_REGISTER_CPUMASK "0"), its socket emptied between
 *                   cycles outside the timed window. Each cycle is timed on its own.
 *   exec_exit 0     fork, child execs this program (which exits at once), waitpid: a new
 *                   program's life, like Tally's spawn of /test/exiter.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taskstats.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void report(const char *name, unsigned param, uint64_t ops, uint64_t ns)
{
	printf("LINUXBENCH {\"name\":\"%s\",\"param\":%u,\"ops\":%llu,\"ns\":%llu}\n", name, param,
	       (unsigned long long)ops, (unsigned long long)ns);
	fflush(stdout);
}

static void note(const char *what, const char *why)
{
	printf("linuxbench: %s: %s (errno %d: %s)\n", what, why, errno, strerror(errno));
	fflush(stdout);
}

/* ---- generic netlink ------------------------------------------------------------------ */

#define NLA_ALIGN4(n) (((n) + 3) & ~3u)

struct genl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

/* Append attribute `type` with `len` bytes of `data` to the request. */
static void put_attr(struct genl_req *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN4(a->nla_len);
}

static void init_req(struct genl_req *r, uint16_t family, uint8_t cmd, uint8_t version)
{
	memset(r, 0, sizeof *r);
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = family;
	r->n.nlmsg_flags = NLM_F_REQUEST;
	r->n.nlmsg_pid = 0;
	r->g.cmd = cmd;
	r->g.version = version;
}

static int genl_socket(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The TASKSTATS family's id, asked of the generic netlink controller; -1 on failure. */
static int taskstats_family(int fd)
{
	struct genl_req r;
	init_req(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	put_attr(&r, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME, sizeof TASKSTATS_GENL_NAME);
	if (send(fd, &r, r.n.nlmsg_len, 0) < 0)
		return -1;
	static char reply[8192];
	ssize_t n = recv(fd, reply, sizeof reply, 0);
	if (n < (ssize_t)NLMSG_LENGTH(GENL_HDRLEN))
		return -1;
	struct nlmsghdr *h = (struct nlmsghdr *)reply;
	if (h->nlmsg_type == NLMSG_ERROR)
		return -1;
	char *p = (char *)NLMSG_DATA(h) + GENL_HDRLEN;
	char *end = reply + (h->nlmsg_len < (size_t)n ? h->nlmsg_len : (size_t)n);
	while (p + NLA_HDRLEN <= end) {
		struct nlattr *a = (struct nlattr *)p;
		if (a->nla_len < NLA_HDRLEN)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)(p + NLA_HDRLEN);
		p += NLA_ALIGN4(a->nla_len);
	}
	return -1;
}

/* Send `r` and read the answer: 0 if it is not an error. */
static int roundtrip(int fd, const struct genl_req *r, char *reply, size_t len)
{
	if (send(fd, r, r->n.nlmsg_len, 0) < 0)
		return -1;
	ssize_t n = recv(fd, reply, len, 0);
	if (n < (ssize_t)sizeof(struct nlmsghdr))
		return -1;
	struct nlmsghdr *h = (struct nlmsghdr *)reply;
	if (h->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr *e = NLMSG_DATA(h);
		errno = -e->error;
		return e->error ? -1 : 0;
	}
	return 0;
}

/* ---- the benchmarks ------------------------------------------------------------------- */

static void bench_getpid(uint64_t n)
{
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getpid);
	report("getpid", 0, n, now_ns() - t0);
}

static void bench_getrusage(uint64_t n)
{
	struct rusage ru;
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		getrusage(RUSAGE_SELF, &ru);
	report("getrusage", 0, n, now_ns() - t0);
}

static void bench_clock_thread(uint64_t n)
{
	struct timespec ts;
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	report("clock_thread", 0, n, now_ns() - t0);
}

static void bench_taskstats_get(uint64_t n)
{
	int fd = genl_socket();
	if (fd < 0)
		return note("taskstats_get", "cannot open a generic netlink socket");
	int family = taskstats_family(fd);
	if (family < 0) {
		close(fd);
		return note("taskstats_get", "no TASKSTATS family (CONFIG_TASKSTATS?)");
	}
	struct genl_req r;
	init_req(&r, (uint16_t)family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION);
	uint32_t pid = (uint32_t)getpid();
	put_attr(&r, TASKSTATS_CMD_ATTR_PID, &pid, sizeof pid);
	static char reply[4096];
	if (roundtrip(fd, &r, reply, sizeof reply) < 0) { /* warm-up, and a check */
		close(fd);
		return note("taskstats_get", "GET PID failed");
	}
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++)
		roundtrip(fd, &r, reply, sizeof reply);
	report("taskstats_get", 0, n, now_ns() - t0);
	close(fd);
}

static void bench_lat_ctx(uint64_t rounds)
{
	int a[2], b[2];
	char tok = 't';
	if (pipe(a) < 0 || pipe(b) < 0)
		return note("lat_ctx", "pipe");
	pid_t child = fork();
	if (child < 0)
		return note("lat_ctx", "fork");
	if (child == 0) { /* the other process of the ring: a -> b */
		close(a[1]);
		close(b[0]);
		while (read(a[0], &tok, 1) == 1 && write(b[1], &tok, 1) == 1)
			;
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	/* One warm-up round, then `rounds` rounds of 2 hops each. */
	if (write(a[1], &tok, 1) != 1 || read(b[0], &tok, 1) != 1)
		return note("lat_ctx", "warm-up round");
	uint64_t t0 = now_ns();
	for (uint64_t i = 0; i < rounds; i++) {
		if (write(a[1], &tok, 1) != 1 || read(b[0], &tok, 1) != 1)
			return note("lat_ctx", "round");
	}
	report("lat_ctx", 2, rounds * 2, now_ns() - t0);
	close(a[1]); /* the other process reads end of file and exits */
	close(b[0]);
	waitpid(child, NULL, 0);
}

/* Empty the listener's socket without waiting; returns the records read. */
static unsigned drain(int fd)
{
	static char buf[16384];
	unsigned got = 0;
	while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0)
		got++;
	return got;
}

/* `cycles` fork -> exit -> wait cycles, each timed; with `exec`, the child execs this
 * program in its `--exit` mode. */
static uint64_t life_cycles(uint64_t cycles, int listener, int exec)
{
	uint64_t total = 0;
	for (uint64_t i = 0; i < cycles; i++) {
		uint64_t t0 = now_ns();
		pid_t pid = fork();
		if (pid == 0) {
			if (exec) {
				char *argv[] = {"init", "--exit", NULL};
				char *envp[] = {NULL};
				execve("/init", argv, envp);
			}
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 0;
		total += now_ns() - t0;
		if (listener >= 0)
			drain(listener);
	}
	return total;
}

static void bench_exits(uint64_t cycles)
{
	life_cycles(10, -1, 0); /* warm-up */
	report("fork_exit", 0, cycles, life_cycles(cycles, -1, 0));
	life_cycles(10, -1, 1);
	report("exec_exit", 0, cycles / 5, life_cycles(cycles / 5, -1, 1));

	int fd = genl_socket();
	int family = fd < 0 ? -1 : taskstats_family(fd);
	if (family < 0)
		return note("fork_exit 1", "no TASKSTATS family");
	int rcvbuf = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
	struct genl_req r;
	init_req(&r, (uint16_t)family, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION);
	put_attr(&r, TASKSTATS_CMD_ATTR_REGISTER_CPUMASK, "0", 2);
	r.n.nlmsg_flags |= NLM_F_ACK;
	static char reply[4096];
	if (roundtrip(fd, &r, reply, sizeof reply) < 0)
		return note("fork_exit 1", "REGISTER_CPUMASK failed");
	drain(fd);
	life_cycles(10, fd, 0);
	uint64_t before = 0;
	uint64_t ns = 0;
	/* Count what the listener receives in the timed cycles: one record per exit. */
	for (uint64_t i = 0; i < cycles; i++) {
		uint64_t t0 = now_ns();
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return note("fork_exit 1", "fork or wait");
		ns += now_ns() - t0;
		before += drain(fd);
	}
	report("fork_exit", 1, cycles, ns);
	if (before < cycles)
		printf("linuxbench: fork_exit 1: the listener received %llu records for %llu exits\n",
		       (unsigned long long)before, (unsigned long long)cycles);
	close(fd);
}

/* Print the first line of a sysfs file as `linuxbench: info LABEL: VALUE`: what the kernel
 * chose at boot that bears on the numbers (its clock source, its mitigations). */
static void info(const char *label, const char *path)
{
	char line[256] = "?";
	FILE *f = fopen(path, "r");
	if (f) {
		if (!fgets(line, sizeof line, f))
			strcpy(line, "?");
		fclose(f);
	}
	line[strcspn(line, "\n")] = 0;
	printf("linuxbench: info %s: %s\n", label, line);
}

/* Console on fds 0-2: the initramfs has no /dev, so mount devtmpfs first. */
static void console(void)
{
	mkdir("/dev", 0755);
	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mkdir("/proc", 0755);
	mount("proc", "/proc", "proc", 0, NULL);
	mkdir("/sys", 0755);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	int fd = open("/dev/console", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--exit") == 0)
		return 0;
	if (getpid() == 1)
		console();
	printf("linuxbench: start\n");
	info("clocksource", "/sys/devices/system/clocksource/clocksource0/current_clocksource");
	info("meltdown", "/sys/devices/system/cpu/vulnerabilities/meltdown");
	info("spectre_v2", "/sys/devices/system/cpu/vulnerabilities/spectre_v2");
	info("retbleed", "/sys/devices/system/cpu/vulnerabilities/retbleed");
	info("spec_store_bypass", "/sys/devices/system/cpu/vulnerabilities/spec_store_bypass");
	fflush(stdout);
	bench_getpid(100000);
	bench_getrusage(50000);
	bench_clock_thread(50000);
	bench_taskstats_get(5000);
	bench_lat_ctx(5000);
	bench_exits(1000);
	printf("linuxbench: done\n");
	fflush(stdout);
	if (getpid() == 1) {
		sync();
		reboot(RB_POWER_OFF);
	}
	return 0;
}
