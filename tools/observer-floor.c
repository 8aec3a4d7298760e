/*
 * observer-floor: the least any once-a-second reader of /proc/interrupts,
 * /proc/softirqs and /proc/stat can cost, as a process to run beside
 * `irqlab top --batch` and `mpstat -I ALL` (tools/observer-cost.sh).
 *
 *   observer-floor [-w BYTES] [-i MS] N [FILE...]
 *
 * Opens the files once (the FILEs given, else the three above), then
 * N + 1 times: one pread of each at offset 0 into a static buffer, one
 * write of a BYTES-long line to stdout (default 7200, the size of a
 * `top --batch --format json` line on a 2-CPU machine; none after the
 * first read, which is the baseline), and a sleep to the next multiple of
 * MS milliseconds (default 1000) of CLOCK_MONOTONIC since the start. No
 * parsing, no formatting, no allocation: whatever it costs is the
 * kernel's generation of the files, the syscalls, the wake-ups and
 * process start. Given the files irqlab reads per sample (the statistics
 * files and the interrupt threads' schedstat, tools/observer-cost.sh
 * finds them) it is the floor of `top --batch`, `record` and `serve`.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 64

#define MAX_LINE (1 << 20)

static void usage(void)
{
    fprintf(stderr, "usage: observer-floor [-w BYTES] [-i MS] N [FILE...]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    static char buf[1 << 16], line[MAX_LINE];
    const char *files[MAX_FILES] = {"/proc/interrupts", "/proc/softirqs", "/proc/stat"};
    int fd[MAX_FILES], nf = 3, n, a = 1;
    long width = 7200, ms = 1000;
    struct timespec t;

    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (!strcmp(argv[a], "-w"))
            width = atol(argv[a + 1]);
        else if (!strcmp(argv[a], "-i"))
            ms = atol(argv[a + 1]);
        else
            usage();
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
            files[nf++] = argv[i];
    }
    for (int i = 0; i < nf; i++) {
        fd[i] = open(files[i], O_RDONLY);
        if (fd[i] < 0) {
            perror(files[i]);
            return 1;
        }
    }
    memset(line, 'x', width);
    line[width - 1] = '\n';
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (int s = 0;; s++) {
        for (int i = 0; i < nf; i++) {
            /* one pread when the file fits the buffer (a short read is
             * its end), more for a longer one */
            ssize_t r;
            off_t at = 0;
            while ((r = pread(fd[i], buf, sizeof buf, at)) == (ssize_t)sizeof buf)
                at += r;
            if (r < 0) {
                perror(files[i]);
                return 1;
            }
        }
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
