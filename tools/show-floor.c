/*
 * show-floor: the least any one-shot `irqlab show --format json` of a tree
 * can cost, as a process to run beside `cat` and `show`
 * (tools/observer-cost.sh, part 1).
 *
 *   show-floor [-w BYTES] ROOT [IRQ...]
 *
 * Reads ROOT/proc/interrupts, ROOT/proc/softirqs and ROOT/proc/stat to
 * their end in 128 KiB reads (as `cat` does), then the affinity of each
 * IRQ given, as show reads it: relative to one open ROOT/proc/irq, open
 * N/effective_affinity_list, one read, and the same with
 * N/smp_affinity_list when the first is missing or empty; the files are
 * closed as show closes them (crates/irqlab/src/host/attrs.rs): one
 * close_range(2) per run of consecutive descriptors, at most RUNS_MAX
 * runs and HELD_MAX descriptors kept open (one close each where the
 * kernel has no close_range). Last it writes
 * BYTES (default 0: none) to stdout in 64 KiB writes, the size of the
 * document show writes. No parsing, no formatting, no allocation: what
 * it costs is process start, the kernel's reading of the files and the
 * path walk and set-up of each affinity file. Given every numbered row's
 * IRQ, that is what `show --format json --affinity` cannot avoid; given
 * none, what `show --format json` cannot avoid. So show json / show-floor
 * is the part of show's cost its own code decides.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define CHUNK (128 * 1024)
#define OUT_CHUNK (64 * 1024)
/* Most descriptors of attribute files kept open, and most runs (as show). */
#define HELD_MAX 256
#define RUNS_MAX 8

static char buf[CHUNK];

/* Attribute files read and not yet closed: runs[i][0]..runs[i][1], every
 * one opened by read_attr. */
static int runs[RUNS_MAX][2], nruns, held;

static void usage(void)
{
    fprintf(stderr, "usage: show-floor [-w BYTES] ROOT [IRQ...]\n");
    exit(2);
}

/* Read ROOT/rel to its end; 0, or -1 on error. */
static int read_whole(const char *root, const char *rel)
{
    char path[4096];
    ssize_t r;
    int fd;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror(path);
        return -1;
    }
    while ((r = read(fd, buf, sizeof buf)) > 0)
        ;
    close(fd);
    return r < 0 ? -1 : 0;
}

/* Close the runs: one close_range each, else (ENOSYS before Linux 5.9,
 * EINVAL, a seccomp filter's EPERM: nothing closed) one close each. */
static void close_runs(void)
{
    for (int i = 0; i < nruns; i++)
        if (syscall(SYS_close_range, runs[i][0], runs[i][1], 0) < 0 &&
            (errno == ENOSYS || errno == EINVAL || errno == EPERM))
            for (int fd = runs[i][0]; fd <= runs[i][1]; fd++)
                close(fd);
    nruns = held = 0;
}

/* Add fd to the run it extends at either end, else to a new run (the
 * runs closed first when there are RUNS_MAX); all closed at HELD_MAX. */
static void keep(int fd)
{
    int i;

    for (i = nruns - 1; i >= 0 && runs[i][1] + 1 != fd; i--)
        ;
    if (i >= 0) {
        runs[i][1] = fd;
    } else {
        for (i = 0; i < nruns && runs[i][0] - 1 != fd; i++)
            ;
        if (i < nruns) {
            runs[i][0] = fd;
        } else {
            if (nruns == RUNS_MAX)
                close_runs();
            runs[nruns][0] = runs[nruns][1] = fd;
            nruns++;
        }
    }
    if (++held >= HELD_MAX)
        close_runs();
}

/* Bytes read from dir/name (one read), or -1 when it cannot be opened
 * (out of descriptors while runs hold some: the runs closed, then
 * opened again). */
static ssize_t read_attr(int dir, const char *name)
{
    int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
    ssize_t r;

    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && held > 0) {
        close_runs();
        fd = openat(dir, name, O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0)
        return -1;
    r = read(fd, buf, 256);
    keep(fd);
    return r;
}

/* One IRQ's affinity by show's rule: the first non-empty of the two. */
static void affinity(int dir, const char *irq)
{
    static const char *const files[] = {"effective_affinity_list", "smp_affinity_list"};
    char name[64];

    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(name, sizeof name, "%s/%s", irq, files[i]);
        if (read_attr(dir, name) > 0)
            return;
    }
}

static int write_out(long bytes)
{
    static char out[OUT_CHUNK];

    memset(out, 'x', sizeof out);
    while (bytes > 0) {
        size_t n = bytes < OUT_CHUNK ? (size_t)bytes : OUT_CHUNK;
        if (write(1, out, n) != (ssize_t)n)
            return -1;
        bytes -= (long)n;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const texts[] = {"proc/interrupts", "proc/softirqs", "proc/stat"};
    long bytes = 0;
    int a = 1, dir;
    char path[4096];

    if (a + 1 < argc && !strcmp(argv[a], "-w")) {
        bytes = atol(argv[a + 1]);
        a += 2;
    }
    if (a >= argc || bytes < 0)
        usage();
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (read_whole(argv[a], texts[i]) < 0)
            return 1;
    if (a + 1 < argc) {
        snprintf(path, sizeof path, "%s/proc/irq", argv[a]);
        dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) {
            perror(path);
            return 1;
        }
        for (int i = a + 1; i < argc; i++)
            affinity(dir, argv[i]);
        close_runs();
        close(dir);
    }
    return write_out(bytes) < 0 ? 1 : 0;
}
