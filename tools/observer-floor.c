/*
 * observer-floor: the least any once-a-second reader of /proc/interrupts,
 * /proc/softirqs and /proc/stat can cost, as a process to run beside
 * `irqlab top --batch` and `mpstat -I ALL` (tools/observer-cost.sh).
 *
 *   observer-floor N [FILE...]
 *
 * Opens the three files (and any FILE given) once, then N + 1 times: one
 * pread of each at offset 0 into a static buffer, one write of a 7 KB line
 * to stdout (the size of a `top --batch --format json` line on a 2-CPU
 * machine; none after the first read, which is the baseline), and a sleep
 * to the next whole second of CLOCK_MONOTONIC since the start. No parsing,
 * no formatting, no allocation: whatever it costs is the kernel's
 * generation of the files, the syscalls, the wake-ups and process start.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 16

int main(int argc, char **argv)
{
    static char buf[1 << 16], line[7200];
    const char *files[MAX_FILES] = {"/proc/interrupts", "/proc/softirqs", "/proc/stat"};
    int fd[MAX_FILES], nf = 3, n;
    struct timespec t;

    if (argc < 2 || (n = atoi(argv[1])) < 1) {
        fprintf(stderr, "usage: observer-floor N [FILE...]\n");
        return 2;
    }
    for (int i = 2; i < argc && nf < MAX_FILES; i++)
        files[nf++] = argv[i];
    for (int i = 0; i < nf; i++) {
        fd[i] = open(files[i], O_RDONLY);
        if (fd[i] < 0) {
            perror(files[i]);
            return 1;
        }
    }
    memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
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
        if (s > 0 && write(1, line, sizeof line) != (ssize_t)sizeof line)
            return 1;
        if (s == n)
            return 0;
        t.tv_sec += 1;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    }
}
