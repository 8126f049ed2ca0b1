/* delays: per-task delay accounting read over generic netlink, the way Linux's
 * tools/accounting programs read it (written here from the documented ABI:
 * Documentation/accounting/taskstats.rst and <linux/taskstats.h>), as a plain Linux program.
 *
 *   delays [-p PID | -t TGID] [-s MS]
 *
 * It opens socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC), asks the generic-netlink
 * controller for the id of the "TASKSTATS" family (CTRL_CMD_GETFAMILY; ids are handed out at
 * registration, never fixed), sends TASKSTATS_CMD_GET for one pid (default: itself) or tgid,
 * receives the answer with recvmsg and walks its nested attributes: AGGR_PID/AGGR_TGID holds
 * PID/TGID, then STATS (struct taskstats) and, on Tally, its microstate clocks (attribute
 * 0x4d, thirteen u64 nanosecond counts; Linux sends no such attribute and the loop skips
 * unknown types, as every netlink reader must). -s MS first spins for MS milliseconds of
 * CPU, so its own record has something to show. Exit status: 0 when a record was printed,
 * 1 for an error reply (its errno printed) or a malformed answer.
 *
 * Needs a kernel with CONFIG_TASKSTATS, and on Linux CAP_NET_ADMIN for another user's task. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The ABI, from <linux/netlink.h>, <linux/genetlink.h> and <linux/taskstats.h> (defined here
 * because musl's headers do not carry the kernel's). */
#define AF_NETLINK_ 16
#define NETLINK_GENERIC_ 16
#define NLMSG_ERROR_ 2
#define NLM_F_REQUEST_ 1
#define GENL_ID_CTRL 0x10
#define CTRL_CMD_GETFAMILY 3
#define CTRL_ATTR_FAMILY_ID 1
#define CTRL_ATTR_FAMILY_NAME 2
#define TASKSTATS_CMD_GET 1
#define TASKSTATS_CMD_ATTR_PID 1
#define TASKSTATS_CMD_ATTR_TGID 2
#define TASKSTATS_TYPE_PID 1
#define TASKSTATS_TYPE_TGID 2
#define TASKSTATS_TYPE_STATS 3
#define TASKSTATS_TYPE_AGGR_PID 4
#define TASKSTATS_TYPE_AGGR_TGID 5
#define TASKSTATS_TYPE_MSA 0x4d /* Tally's microstate clocks */
#define NR_MICROSTATES 13

struct sockaddr_nl_ {
    uint16_t nl_family, nl_pad;
    uint32_t nl_pid, nl_groups;
};
struct nlmsghdr_ {
    uint32_t len;
    uint16_t type, flags;
    uint32_t seq, pid;
};
struct genlmsghdr_ {
    uint8_t cmd, version;
    uint16_t reserved;
};
struct nlattr_ {
    uint16_t len, type;
};
#define ALIGN4(n) (((n) + 3u) & ~3u)

/* struct taskstats up to version 14 (its fields are appended, never moved). */
struct taskstats_ {
    uint16_t version;
    uint32_t ac_exitcode;
    uint8_t ac_flag, ac_nice;
    uint64_t cpu_count, cpu_delay_total;
    uint64_t blkio_count, blkio_delay_total;
    uint64_t swapin_count, swapin_delay_total;
    uint64_t cpu_run_real_total, cpu_run_virtual_total;
    char ac_comm[32];
    uint8_t ac_sched, ac_pad[3];
    uint32_t ac_uid __attribute__((aligned(8)));
    uint32_t ac_gid, ac_pid, ac_ppid;
    uint32_t ac_btime;
    uint64_t ac_etime __attribute__((aligned(8)));
    uint64_t ac_utime, ac_stime, ac_minflt, ac_majflt;
    uint64_t coremem, virtmem, hiwater_rss, hiwater_vm;
    uint64_t read_char, write_char, read_syscalls, write_syscalls;
    uint64_t read_bytes, write_bytes, cancelled_write_bytes;
    uint64_t nvcsw, nivcsw;
    uint64_t ac_utimescaled, ac_stimescaled, cpu_scaled_run_real_total;
    uint64_t freepages_count, freepages_delay_total;
    uint64_t thrashing_count, thrashing_delay_total;
    uint64_t ac_btime64;
    uint64_t compact_count, compact_delay_total;
    uint32_t ac_tgid;
    uint64_t ac_tgetime, ac_exe_dev, ac_exe_inode;
    uint64_t wpcopy_count, wpcopy_delay_total;
    uint64_t irq_count, irq_delay_total;
};
_Static_assert(offsetof(struct taskstats_, cpu_count) == 16, "layout");
_Static_assert(offsetof(struct taskstats_, ac_comm) == 80, "layout");
_Static_assert(offsetof(struct taskstats_, ac_uid) == 120, "layout");
_Static_assert(offsetof(struct taskstats_, ac_etime) == 144, "layout");
_Static_assert(offsetof(struct taskstats_, ac_tgid) == 368, "layout");
_Static_assert(offsetof(struct taskstats_, irq_count) == 416, "version 13 is 416 bytes");

static const char *const microstate[NR_MICROSTATES] = {
    "ONCPU_USR",       "ONCPU_SYS",      "ONCPU_TRAP", "INTERRUPTIBLE_SLEEP", "UNINTERRUPTIBLE_SLEEP",
    "ON_ACTIVE_QUEUE", "ON_EXPIRED_QUEUE", "ZOMBIE",   "STOPPED",             "INTERRUPTED",
    "PAGING_SLEEP",    "FUTEX_SLEEP",    "POLL_SLEEP",
};

static unsigned char msgbuf[16384];

/* Append an attribute to the message being built at msg. */
static void put_attr(struct nlmsghdr_ *msg, uint16_t type, const void *data, uint16_t len)
{
    struct nlattr_ *a = (struct nlattr_ *)((char *)msg + ALIGN4(msg->len));
    a->type = type;
    a->len = sizeof *a + len;
    memcpy(a + 1, data, len);
    msg->len = ALIGN4(msg->len) + ALIGN4(a->len);
}

/* Send a generic-netlink request: family, command, one attribute. */
static int send_request(int fd, uint16_t family, uint8_t cmd, uint16_t type, const void *data, uint16_t len)
{
    static uint32_t seq;
    unsigned char buf[256] __attribute__((aligned(4)));
    memset(buf, 0, sizeof buf);
    struct nlmsghdr_ *h = (struct nlmsghdr_ *)buf;
    h->len = sizeof *h + sizeof(struct genlmsghdr_);
    h->type = family;
    h->flags = NLM_F_REQUEST_;
    h->seq = ++seq;
    h->pid = getpid();
    struct genlmsghdr_ *g = (struct genlmsghdr_ *)(h + 1);
    g->cmd = cmd;
    g->version = 1;
    put_attr(h, type, data, len);
    struct sockaddr_nl_ kernel = {.nl_family = AF_NETLINK_};
    ssize_t n = sendto(fd, buf, h->len, 0, (struct sockaddr *)&kernel, sizeof kernel);
    if (n != (ssize_t)h->len) {
        perror("delays: sendto");
        return -1;
    }
    return 0;
}

/* Receive one datagram with recvmsg; its generic-netlink payload and length, or NULL after
 * printing why (an NLMSG_ERROR reply's errno is returned in *err). */
static unsigned char *receive(int fd, size_t *len, int *err)
{
    struct sockaddr_nl_ from;
    struct iovec iov[2] = {{msgbuf, 16}, {msgbuf + 16, sizeof msgbuf - 16}}; /* the header apart */
    struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = iov, .msg_iovlen = 2};
    ssize_t n = recvmsg(fd, &m, 0);
    *err = 0;
    if (n < 0) {
        *err = errno;
        perror("delays: recvmsg");
        return NULL;
    }
    struct nlmsghdr_ *h = (struct nlmsghdr_ *)msgbuf;
    if ((size_t)n < sizeof *h || h->len > (size_t)n || (m.msg_flags & MSG_TRUNC) || from.nl_pid != 0) {
        fprintf(stderr, "delays: a malformed answer (%zd bytes, flags %#x, from port %u)\n", n, m.msg_flags,
                from.nl_pid);
        return NULL;
    }
    if (h->type == NLMSG_ERROR_) {
        int e = *(int *)(h + 1);
        *err = -e;
        fprintf(stderr, "delays: error reply: errno %d (%s)\n", -e, strerror(-e));
        return NULL;
    }
    *len = h->len - sizeof *h - sizeof(struct genlmsghdr_);
    return msgbuf + sizeof *h + sizeof(struct genlmsghdr_);
}

/* Walk the attributes of [start, start + size). */
#define FOR_EACH_ATTR(a, start, size)                                                                             \
    for (struct nlattr_ *a = (struct nlattr_ *)(start);                                                           \
         (unsigned char *)a + sizeof *a <= (unsigned char *)(start) + (size) && a->len >= sizeof *a &&            \
         (unsigned char *)a + a->len <= (unsigned char *)(start) + (size);                                        \
         a = (struct nlattr_ *)((unsigned char *)a + ALIGN4(a->len)))

static void delay_row(const char *what, uint64_t count, uint64_t total)
{
    printf("%-10s %15llu %15llu %12.3fms\n", what, (unsigned long long)count, (unsigned long long)total,
           count ? total / 1e6 / count : 0.0);
}

static void print_stats(const struct taskstats_ *t, const uint64_t *msa)
{
    printf("comm %.32s, pid %u, tgid %u, ppid %u, uid %u, version %u, utime %llu us, stime %llu us\n", t->ac_comm,
           t->ac_pid, t->ac_tgid, t->ac_ppid, t->ac_uid, t->version, (unsigned long long)t->ac_utime,
           (unsigned long long)t->ac_stime);
    printf("CPU        %15s %15s %15s %15s %12s\n", "count", "real total", "virtual total", "delay total",
           "delay avg");
    printf("%-10s %15llu %15llu %15llu %15llu %12.3fms\n", "", (unsigned long long)t->cpu_count,
           (unsigned long long)t->cpu_run_real_total, (unsigned long long)t->cpu_run_virtual_total,
           (unsigned long long)t->cpu_delay_total, t->cpu_count ? t->cpu_delay_total / 1e6 / t->cpu_count : 0.0);
    printf("%-10s %15s %15s %14s\n", "delays", "count", "delay total", "delay avg");
    delay_row("IO", t->blkio_count, t->blkio_delay_total);
    delay_row("SWAP", t->swapin_count, t->swapin_delay_total);
    delay_row("RECLAIM", t->freepages_count, t->freepages_delay_total);
    delay_row("THRASHING", t->thrashing_count, t->thrashing_delay_total);
    delay_row("COMPACT", t->compact_count, t->compact_delay_total);
    delay_row("WPCOPY", t->wpcopy_count, t->wpcopy_delay_total);
    if (t->version >= 14)
        delay_row("IRQ", t->irq_count, t->irq_delay_total);
    printf("io: read_char %llu, write_char %llu, read_syscalls %llu, write_syscalls %llu\n",
           (unsigned long long)t->read_char, (unsigned long long)t->write_char,
           (unsigned long long)t->read_syscalls, (unsigned long long)t->write_syscalls);
    printf("context switches: voluntary %llu, involuntary %llu\n", (unsigned long long)t->nvcsw,
           (unsigned long long)t->nivcsw);
    if (!msa) {
        printf("microstates: none in this record (not a Tally kernel)\n");
        return;
    }
    uint64_t sum = 0;
    printf("%-22s %14s\n", "microstate", "ms");
    for (int i = 0; i < NR_MICROSTATES; i++) {
        printf("%-22s %14.3f\n", microstate[i], msa[i] / 1e6);
        sum += msa[i];
    }
    printf("%-22s %14.3f\n", "total", sum / 1e6);
}

static void spin(long ms)
{
    struct timespec a, b;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a) != 0) {
        perror("delays: clock_gettime");
        exit(1);
    }
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += i;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b) != 0)
            exit(1);
    } while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}

int main(int argc, char **argv)
{
    uint32_t id = getpid();
    int tgid = 0, opt;
    while ((opt = getopt(argc, argv, "p:t:s:")) != -1) {
        switch (opt) {
        case 'p':
        case 't':
            id = strtoul(optarg, NULL, 10);
            tgid = opt == 't';
            break;
        case 's':
            spin(strtol(optarg, NULL, 10));
            break;
        default:
            fprintf(stderr, "usage: delays [-p PID | -t TGID] [-s MS]\n");
            return 2;
        }
    }
    int fd = socket(AF_NETLINK_, SOCK_RAW, NETLINK_GENERIC_);
    if (fd < 0) {
        perror("delays: socket");
        return 1;
    }
    struct sockaddr_nl_ me = {.nl_family = AF_NETLINK_};
    if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
        perror("delays: bind");
        return 1;
    }
    if (send_request(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, "TASKSTATS", 10) < 0)
        return 1;
    size_t len;
    int err;
    unsigned char *p = receive(fd, &len, &err);
    if (!p)
        return 1;
    uint16_t family = 0;
    FOR_EACH_ATTR(a, p, len)
    {
        if (a->type == CTRL_ATTR_FAMILY_ID && a->len >= sizeof *a + 2)
            memcpy(&family, a + 1, 2);
    }
    if (!family) {
        fprintf(stderr, "delays: the controller named no TASKSTATS family\n");
        return 1;
    }
    printf("delays: family TASKSTATS is %u\n", family);
    if (send_request(fd, family, TASKSTATS_CMD_GET, tgid ? TASKSTATS_CMD_ATTR_TGID : TASKSTATS_CMD_ATTR_PID, &id,
                     4) < 0)
        return 1;
    p = receive(fd, &len, &err);
    if (!p)
        return 1;
    int printed = 0;
    FOR_EACH_ATTR(nest, p, len)
    {
        if (nest->type != TASKSTATS_TYPE_AGGR_PID && nest->type != TASKSTATS_TYPE_AGGR_TGID)
            continue;
        uint32_t who = 0;
        struct taskstats_ t;
        int have_stats = 0;
        uint64_t msa[NR_MICROSTATES];
        int have_msa = 0;
        FOR_EACH_ATTR(a, nest + 1, nest->len - sizeof *nest)
        {
            size_t n = a->len - sizeof *a;
            if ((a->type == TASKSTATS_TYPE_PID || a->type == TASKSTATS_TYPE_TGID) && n >= 4)
                memcpy(&who, a + 1, 4);
            else if (a->type == TASKSTATS_TYPE_STATS && n >= 416) {
                memset(&t, 0, sizeof t);
                memcpy(&t, a + 1, n < sizeof t ? n : sizeof t);
                have_stats = 1;
            } else if (a->type == TASKSTATS_TYPE_MSA && n >= sizeof msa) {
                memcpy(msa, a + 1, sizeof msa);
                have_msa = 1;
            }
        }
        if (!have_stats || who != id) {
            fprintf(stderr, "delays: a record without its statistics, or for %u instead of %u\n", who, id);
            return 1;
        }
        printf("%s %u\n", nest->type == TASKSTATS_TYPE_AGGR_PID ? "PID" : "TGID", who);
        print_stats(&t, have_msa ? msa : NULL);
        printed++;
    }
    close(fd);
    if (!printed) {
        fprintf(stderr, "delays: the answer held no record\n");
        return 1;
    }
    return 0;
}
