/*
 * observer-floor: the least any once-a-second reader of /proc/interrupts,
 * /proc/softirqs and /proc/stat can cost, as a process to run beside
 * `irqlab top --batch` and `mpstat -I ALL` (tools/observer-cost.sh).
 *
 *   observer-floor [-w BYTES] [-i MS] [-c] N [FILE...]
 *
 * Opens the files once (the FILEs given, else the three above), then
 * N + 1 times: reads each file at offset 0 into a static buffer, writes a
 * BYTES-long line to stdout (default 7200, the size of a
 * `top --batch --format json` line on a 2-CPU machine; none after the
 * first read, which is the baseline), and sleeps to the next multiple of
 * MS milliseconds (default 1000) of CLOCK_MONOTONIC since the start. A
 * FILE is read
 *   PATH      with one pread (a short read is its end: single_open
 *             seq_files such as /proc/stat, /proc/softirqs, schedstat),
 *   +PATH     with preads until one returns 0 (a seq_file iterator such
 *             as /proc/interrupts may stop short of its end: only a read
 *             of 0 bytes says the text is whole),
 *   K@PATH    with one pread every K-th sample only (from the first).
 * -c also reads, once per sample, the thread's CPU clock and
 * getrusage(RUSAGE_THREAD): what a sampler that reports its own cost per
 * sample must ask the kernel.
 * No parsing, no formatting, no allocation: whatever it costs is the
 * kernel's generation of the files, the syscalls, the wake-ups and
 * process start. Given the files irqlab reads per sample, read the way
 * irqlab reads them (tools/observer-cost.sh builds that list) it is the
 * floor of `top --batch`, `record` and `serve`.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 64

#define MAX_LINE (1 << 20)

static void usage(void)
{
    fprintf(stderr, "usage: observer-floor [-w BYTES] [-i MS] [-c] N [[+|K@]FILE...]\n");
    exit(2);
}

/* How a FILE argument is read: its path, whether to read it to a read of
 * 0 bytes, and every how many samples. */
struct spec {
    const char *path;
    int to_eof;
    long every;
};

static struct spec parse_spec(const char *arg)
{
    struct spec f = {arg, 0, 1};
    char *end;

    if (arg[0] == '+') {
        f.path = arg + 1;
        f.to_eof = 1;
    } else if (arg[0] >= '0' && arg[0] <= '9') {
        f.every = strtol(arg, &end, 10);
        if (*end != '@' || f.every < 1)
            usage();
        f.path = end + 1;
    }
    return f;
}

/* One read of file f at sample s; 0, or -1 on error. */
static int read_file(const struct spec *f, int fd, long s, char *buf, size_t cap)
{
    ssize_t r;
    off_t at = 0;

    if (s % f->every != 0)
        return 0;
    while ((r = pread(fd, buf, cap, at)) > 0) {
        at += r;
        if (!f->to_eof && r < (ssize_t)cap)
            break;
    }
    return r < 0 ? -1 : 0;
}

/* What a sampler reporting its own cost asks per sample. */
static void self_cost(void)
{
    struct timespec c;
    struct rusage ru;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    getrusage(RUSAGE_THREAD, &ru);
}

int main(int argc, char **argv)
{
    static char buf[1 << 16], line[MAX_LINE];
    struct spec files[MAX_FILES] = {
        {"/proc/interrupts", 1, 1}, {"/proc/softirqs", 0, 1}, {"/proc/stat", 0, 1}};
    int fd[MAX_FILES], nf = 3, n, a = 1, cost = 0;
    long width = 7200, ms = 1000;
    struct timespec t;

    while (a < argc && argv[a][0] == '-') {
        if (!strcmp(argv[a], "-c")) {
            cost = 1;
            a++;
            continue;
        }
        if (a + 1 >= argc)
            usage();
        if (!strcmp(argv[a], "-w"))
            width = atol(argv[a + 1]);
        else if (!strcmp(argv[a], "-i"))
            ms = atol(argv[a + 1]);
        else
            usage();
        a += 2;
    }
    if (a >= argc || (n = atoi(argv[a])) < 1 || width < 1 || width > MAX_LINE || ms < 1)
        usage();
    if (argc - a - 1 > MAX_FILES) {
        fprintf(stderr, "observer-floor: at most %d files\n", MAX_FILES);
        return 2;
    }
    if (argc - a > 1) {
        nf = 0;
        for (int i = a + 1; i < argc; i++)
            files[nf++] = parse_spec(argv[i]);
    }
    for (int i = 0; i < nf; i++) {
        fd[i] = open(files[i].path, O_RDONLY);
        if (fd[i] < 0) {
            perror(files[i].path);
            return 1;
        }
    }
    memset(line, 'x', width);
    line[width - 1] = '\n';
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int s = 0;; s++) {
        for (int i = 0; i < nf; i++) {
            if (read_file(&files[i], fd[i], s, buf, sizeof buf) < 0) {
                perror(files[i].path);
                return 1;
            }
        }
        if (cost)
            self_cost();
        if (s > 0 && write(1, line, width) != (ssize_t)width)
            return 1;
        if (s == n)
            return 0;
        t.tv_nsec += (ms % 1000) * 1000000L;
        t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    }
}
