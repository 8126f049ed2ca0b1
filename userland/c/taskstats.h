/* taskstats.h: a small generic-netlink client for Linux's TASKSTATS family, shared by the
 * C programs that read taskstats (delays.c, mstates.c). Written here from the documented ABI
 * (Documentation/accounting/taskstats.rst, <linux/netlink.h>, <linux/genetlink.h>,
 * <linux/taskstats.h>): open a socket(AF_NETLINK, SOCK_RAW, NETLINK_GENERIC), resolve the
 * family's id with CTRL_CMD_GETFAMILY, send TASKSTATS_CMD_GET, receive with recvmsg and walk
 * the nested attributes. Plain C for any Linux; Tally adds one attribute (0x4d: thirteen
 * u64 microstate clocks in ns) that Linux never sends and readers skip. */
#ifndef TASKSTATS_H
#define TASKSTATS_H
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
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
        perror("taskstats: sendto");
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
        perror("taskstats: recvmsg");
        return NULL;
    }
    struct nlmsghdr_ *h = (struct nlmsghdr_ *)msgbuf;
    if ((size_t)n < sizeof *h || h->len > (size_t)n || (m.msg_flags & MSG_TRUNC) || from.nl_pid != 0) {
        fprintf(stderr, "taskstats: a malformed answer (%zd bytes, flags %#x, from port %u)\n", n, m.msg_flags,
                from.nl_pid);
        return NULL;
    }
    if (h->type == NLMSG_ERROR_) {
        int e = *(int *)(h + 1);
        *err = -e;
        fprintf(stderr, "taskstats: error reply: errno %d (%s)\n", -e, strerror(-e));
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


/* One record of a GET answer. */
struct ts_record {
    int tgid;      /* an AGGR_TGID record (else AGGR_PID) */
    uint32_t who;  /* its pid or tgid */
    struct taskstats_ t;
    int have_msa;  /* Tally's microstate clocks came with it */
    uint64_t msa[NR_MICROSTATES];
};

/* A bound generic-netlink socket, or -1 (perror'd). */
static int ts_open(void)
{
    int fd = socket(AF_NETLINK_, SOCK_RAW, NETLINK_GENERIC_);
    if (fd < 0) {
        perror("socket(AF_NETLINK)");
        return -1;
    }
    struct sockaddr_nl_ me = {.nl_family = AF_NETLINK_};
    if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
        perror("bind");
        close(fd);
        return -1;
    }
    return fd;
}

/* The TASKSTATS family's id, asked of the controller; 0 if there is none. */
static uint16_t ts_family(int fd)
{
    if (send_request(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME, "TASKSTATS", 10) < 0)
        return 0;
    size_t len;
    int err;
    unsigned char *p = receive(fd, &len, &err);
    uint16_t family = 0;
    if (!p)
        return 0;
    FOR_EACH_ATTR(a, p, len)
    {
        if (a->type == CTRL_ATTR_FAMILY_ID && a->len >= sizeof *a + 2)
            memcpy(&family, a + 1, 2);
    }
    return family;
}

/* GET the record of pid (or tgid) `id` into out[0..max]; returns how many records came
 * (the answer holds one), or -errno for an error reply, or -EBADMSG for a malformed one. */
static int ts_get(int fd, uint16_t family, int tgid, uint32_t id, struct ts_record *out, int max)
{
    if (send_request(fd, family, TASKSTATS_CMD_GET, tgid ? TASKSTATS_CMD_ATTR_TGID : TASKSTATS_CMD_ATTR_PID, &id,
                     4) < 0)
        return -EIO;
    size_t len;
    int err;
    unsigned char *p = receive(fd, &len, &err);
    if (!p)
        return err ? -err : -EBADMSG;
    int n = 0;
    FOR_EACH_ATTR(nest, p, len)
    {
        if ((nest->type != TASKSTATS_TYPE_AGGR_PID && nest->type != TASKSTATS_TYPE_AGGR_TGID) || n >= max)
            continue;
        struct ts_record *r = &out[n];
        memset(r, 0, sizeof *r);
        r->tgid = nest->type == TASKSTATS_TYPE_AGGR_TGID;
        int have_stats = 0;
        FOR_EACH_ATTR(a, nest + 1, nest->len - sizeof *nest)
        {
            size_t sz = a->len - sizeof *a;
            if ((a->type == TASKSTATS_TYPE_PID || a->type == TASKSTATS_TYPE_TGID) && sz >= 4)
                memcpy(&r->who, a + 1, 4);
            else if (a->type == TASKSTATS_TYPE_STATS && sz >= 416) {
                memcpy(&r->t, a + 1, sz < sizeof r->t ? sz : sizeof r->t);
                have_stats = 1;
            } else if (a->type == TASKSTATS_TYPE_MSA && sz >= sizeof r->msa) {
                memcpy(r->msa, a + 1, sizeof r->msa);
                r->have_msa = 1;
            }
        }
        if (!have_stats || r->who != id)
            return -EBADMSG;
        n++;
    }
    return n ? n : -EBADMSG;
}

static const char *const microstate[NR_MICROSTATES] = {
    "ONCPU_USR",       "ONCPU_SYS",        "ONCPU_TRAP", "INTERRUPTIBLE_SLEEP", "UNINTERRUPTIBLE_SLEEP",
    "ON_ACTIVE_QUEUE", "ON_EXPIRED_QUEUE", "ZOMBIE",     "STOPPED",             "INTERRUPTED",
    "PAGING_SLEEP",    "FUTEX_SLEEP",      "POLL_SLEEP",
};
#endif
