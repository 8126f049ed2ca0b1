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

#include "taskstats.h"

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
    int fd = ts_open();
    if (fd < 0)
        return 1;
    uint16_t family = ts_family(fd);
    if (!family) {
        fprintf(stderr, "delays: the controller named no TASKSTATS family\n");
        return 1;
    }
    printf("delays: family TASKSTATS is %u\n", family);
    struct ts_record rec[2];
    int n = ts_get(fd, family, tgid, id, rec, 2);
    if (n == -EBADMSG)
        fprintf(stderr, "delays: a malformed answer, or a record without its statistics\n");
    if (n < 0)
        return 1;
    int printed = 0;
    for (int i = 0; i < n; i++) {
        printf("%s %u\n", rec[i].tgid ? "TGID" : "PID", rec[i].who);
        print_stats(&rec[i].t, rec[i].have_msa ? rec[i].msa : NULL);
        printed++;
    }
    close(fd);
    if (!printed) {
        fprintf(stderr, "delays: the answer held no record\n");
        return 1;
    }
    return 0;
}
