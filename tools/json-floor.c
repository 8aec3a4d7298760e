/*
 * json-floor: the leanest real `top --batch --format json` writer, a
 * reference to set beside irqlab and tools/observer-floor.c
 * (tools/observer-cost.sh), not a target. It answers how much of
 * irqlab json's cost over the floor any writer that does the work pays.
 *
 *   json-floor [-w BYTES] [-i MS] [-c] [-a] N [[+|K@]FILE...]
 *
 * The floor's command line, pacing and reads (see observer-floor.c: the
 * FILEs, default the three below, read N + 1 times at offset 0, PATH with
 * one pread, +PATH to a read of 0 bytes, K@PATH every K-th sample; sleep
 * to the next multiple of MS ms of CLOCK_MONOTONIC; -w is accepted and
 * ignored: the line is what the sample makes). Unlike the floor, each
 * sample after the first (the baseline) does the work of a json line,
 * with static arrays, no allocation and integer number formatting:
 *   /proc/interrupts  CPU ids of the header; per row, split on white
 *       space: label, counts, deltas (mod 2^32) and rates over the
 *       CLOCK_MONOTONIC interval, total and total rate, description,
 *       actions (after the chip and hwirq[-flow] tokens, split on ", "),
 *       and with -a (as `top --affinity`) for numbered rows the affinity
 *       list read at start from /proc/irq/N/effective_affinity_list;
 *       rows by total, highest
 *       first, equal totals in file order. A changed row or CPU set is a
 *       new baseline: the section is null that sample.
 *   /proc/softirqs    per vector: name, counts, total, rates, total rate.
 *   /proc/stat        per cpuN line the 8 shares of its jiffies' delta,
 *       and the `cpu: null` line summed from the cpuN lines (as irqlab).
 *   /proc/PID/schedstat  the thread's CPU % from the first field's delta;
 *   /proc/PID/stat       (when read) its comm and last CPU.
 *   -c                the thread CPU clock and getrusage(RUSAGE_THREAD)
 *       once per sample, as self_cost (since the previous sample's).
 * One JSON line per sample with irqlab's keys, rows and values (numbers
 * to 3 decimals, 6 for thread CPU %; not byte for byte irqlab's).
 * json_floor_mark (the sleep) starts a sample for tools/touched-lines.py,
 * which takes nm's addresses as they are: build with -no-pie for it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 64
#define MAX_CPUS 1024
#define MAX_ROWS 2048
#define MAX_CELLS (1 << 18)
#define MAX_TEXT (1 << 22)
#define MAX_OUT (1 << 25)
#define AFF_POOL (1 << 16)

enum kind { K_OTHER, K_INTR, K_SOFT, K_STAT, K_SCHED, K_PSTAT };

struct spec {
    const char *path;
    int to_eof, fd, kind, thread;
    long every;
};

/* One /proc/interrupts row of the latest sample. */
struct irow {
    uint64_t key[2];      /* the label's first 16 bytes: the row's identity */
    uint32_t label, desc; /* offsets in the text */
    uint16_t label_len, desc_len, nc, aff_len;
    uint32_t cell, aff;   /* first cell in cnt[]/del[]; affinity in aff_pool */
    int32_t irq;          /* -1: not numbered */
    uint64_t total;
};

struct thread {
    long pid;
    uint64_t ns, dns;
    int have, last_cpu, kind, kind_n; /* kind: 0 none, 1 ksoftirqd, 2 irq thread */
    char name[32];
    int name_len;
};

static char text[MAX_TEXT], out[MAX_OUT], aff_pool[AFF_POOL];
static struct irow irows[MAX_ROWS];
static uint32_t cnt[MAX_CELLS], del[MAX_CELLS];
static int icpus[MAX_CPUS], incpu, inrows, ibase, aff_used;
static int order[MAX_ROWS];
static uint32_t scnt[64 * MAX_CPUS], sdel[64 * MAX_CPUS];
static int scpus[MAX_CPUS], sncpu, snrows, sbase;
static uint64_t soff[64]; /* name offset << 16 | length, of the latest text */
static uint64_t jif[MAX_CPUS][8];
static int jcpus[MAX_CPUS], jn, jbase;
static struct thread threads[MAX_FILES];
static char irq_dir[4096] = "/proc/irq/"; /* beside the interrupts file */
static size_t irq_dir_len = 10;
static int nthreads;

static void usage(void)
{
    fprintf(stderr, "usage: json-floor [-w BYTES] [-i MS] [-c] [-a] N [[+|K@]FILE...]\n");
    exit(2);
}

static void die(const char *what)
{
    fprintf(stderr, "json-floor: %s\n", what);
    exit(1);
}

/* ---------- output ---------- */

static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}
#define PUT(p, lit) put(p, lit, sizeof lit - 1)

static char *put_u64(char *p, uint64_t v)
{
    char t[20];
    int n = 0;

    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *p++ = t[--n];
    return p;
}

/* v / scale (scale 1000 or 1000000) with its trailing zeros cut. */
static char *put_fixed(char *p, uint64_t v, uint64_t scale)
{
    uint64_t f = v % scale;

    p = put_u64(p, v / scale);
    if (f) {
        *p++ = '.';
        for (scale /= 10; f; scale /= 10) {
            *p++ = (char)('0' + f / scale);
            f %= scale;
        }
    }
    return p;
}

static char *put_str(char *p, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";

    *p++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            *p++ = '\\';
            *p++ = (char)c;
        } else if (c < 0x20) {
            p = PUT(p, "\\u00");
            *p++ = hex[c >> 4];
            *p++ = hex[c & 15];
        } else {
            *p++ = (char)c;
        }
    }
    *p++ = '"';
    return p;
}

/* 2026-12-05T01:02:58.699Z from CLOCK_REALTIME (civil from days). */
static char *put_stamp(char *p, const struct timespec *w)
{
    int64_t secs = w->tv_sec, days = secs / 86400, rem = secs % 86400;
    int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
    int64_t y = yoe + era * 400 + (m <= 2);
    int64_t f[6] = {m, d, rem / 3600, rem / 60 % 60, rem % 60, w->tv_nsec / 1000000};
    static const char sep[] = "--T::.";

    p = put_u64(p, (uint64_t)y);
    for (int i = 0; i < 6; i++) {
        *p++ = sep[i];
        if (i == 5)
            *p++ = (char)('0' + f[i] / 100);
        *p++ = (char)('0' + f[i] / 10 % 10);
        *p++ = (char)('0' + f[i] % 10);
    }
    *p++ = 'Z';
    return p;
}

/* A rate in thousandths: count x per_milli, rounded. */
static inline uint64_t milli(uint64_t count, double per_milli)
{
    return (uint64_t)((double)count * per_milli + 0.5);
}

static char *put_rates(char *p, const uint32_t *d, int n, double per_milli)
{
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p = d[i] ? put_fixed(p, milli(d[i], per_milli), 1000) : PUT(p, "0");
    }
    return p;
}

static char *put_cpus(char *p, const int *ids, int n)
{
    p = PUT(p, "{\"cpus\":[");
    for (int i = 0; i < n; i++) {
        if (i)
            *p++ = ',';
        p = put_u64(p, (uint64_t)ids[i]);
    }
    return PUT(p, "],\"rows\":[");
}

/* ---------- scanning ---------- */

static inline int is_sp(char c)
{
    return c == ' ' || c == '\t';
}

static inline int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_sp(const char *p, const char *e)
{
    while (p < e && is_sp(*p))
        p++;
    return p;
}

static const char *line_end(const char *p, const char *e)
{
    const char *n = memchr(p, '\n', (size_t)(e - p));
    return n ? n : e;
}

static const char *number(const char *p, const char *e, uint64_t *v)
{
    uint64_t x = 0;

    while (p < e && is_digit(*p))
        x = x * 10 + (uint64_t)(*p++ - '0');
    *v = x;
    return p;
}

/* The ids of a header line's CPUn tokens; returns their count. */
static int header_cpus(const char *p, const char *e, int *ids)
{
    int n = 0;

    while ((p = skip_sp(p, e)) < e) {
        const char *t = p;
        while (p < e && !is_sp(*p))
            p++;
        if (p - t > 3 && !memcmp(t, "CPU", 3)) {
            uint64_t v;
            number(t + 3, p, &v);
            if (n == MAX_CPUS)
                die("too many CPUs");
            ids[n++] = (int)v;
        }
    }
    return n;
}

static int same_ids(const int *a, const int *b, int n)
{
    return !memcmp(a, b, (size_t)n * sizeof *a);
}

/* ---------- /proc/interrupts ---------- */

/* Trimmed text after the hwirq[-flow] token (and Level/Edge, -flow): the
 * actions as printed; else, old form, after the chip-flow token. */
static void actions_of(const char *d, const char *e, const char **as, const char **ae)
{
    const char *p = d, *t;
    int k = 0;

    for (; (p = skip_sp(p, e)) < e; k++) {
        t = p;
        while (p < e && !is_sp(*p))
            p++;
        if (k == 0)
            continue;
        const char *q = t + (*t == '-');
        if (q < p && is_digit(*q)) {
            while (q < p && is_digit(*q))
                q++;
            if (q == p || (q + 1 < p && *q == '-' &&
                           ((q[1] | 32) >= 'a' && (q[1] | 32) <= 'z')))
                goto found;
        }
    }
    /* no hwirq: old form, actions after the first double space */
    for (p = d; p + 1 < e && !(p[0] == ' ' && p[1] == ' '); p++)
        ;
    if (p + 1 >= e)
        p = d;
found:
    p = skip_sp(p, e);
    t = p;
    while (t < e && !is_sp(*t))
        t++;
    if ((t - p == 5 && !memcmp(p, "Level", 5)) || (t - p == 4 && !memcmp(p, "Edge", 4))) {
        p = skip_sp(t, e);
        t = p;
        while (t < e && !is_sp(*t))
            t++;
    }
    if (p < e && *p == '-' && t - p > 1)
        p = t;
    *as = skip_sp(p, e);
    *ae = e;
}

static char *put_actions(char *p, const char *a, const char *e)
{
    int first = 1;

    *p++ = '[';
    while (a < e) {
        const char *s = a;
        while (s + 1 < e && !(s[0] == ',' && s[1] == ' '))
            s++;
        if (s + 1 >= e)
            s = e;
        if (s > a) {
            if (!first)
                *p++ = ',';
            p = put_str(p, a, (size_t)(s - a));
            first = 0;
        }
        a = s < e ? s + 2 : e;
    }
    *p++ = ']';
    return p;
}

/* -a: numbered rows carry their affinity (`top --affinity`). */
static int with_affinity;

static void read_affinity(struct irow *r)
{
    char path[sizeof irq_dir + 48], *p = put(path, irq_dir, irq_dir_len);
    int fd;
    ssize_t n;

    r->aff_len = 0;
    if (!with_affinity)
        return;

    p = put_u64(p, (uint64_t)r->irq);
    p = PUT(p, "/effective_affinity_list");
    *p = 0;
    r->aff = (uint32_t)aff_used;
    if ((fd = open(path, O_RDONLY)) < 0)
        return;
    n = read(fd, aff_pool + aff_used, (size_t)(AFF_POOL - aff_used));
    close(fd);
    while (n > 0 && (aff_pool[aff_used + n - 1] == '\n' || is_sp(aff_pool[aff_used + n - 1])))
        n--;
    if (n > 0 && aff_used + n < AFF_POOL) {
        r->aff_len = (uint16_t)n;
        aff_used += (int)n;
    }
}

/* Parse the text; 1 when rates can be given (same rows and CPUs as the
 * last sample), 0 on a (new) baseline. Counts and deltas are in place. */
static int parse_interrupts(const char *t, const char *e, int base)
{
    int ids[MAX_CPUS], n = 0, same, cell = 0;
    const char *p = t, *le = line_end(p, e);
    int ncpu = header_cpus(p, le, ids);

    same = base && ncpu == incpu && same_ids(ids, icpus, ncpu);
    if (!same) {
        memcpy(icpus, ids, (size_t)ncpu * sizeof *ids);
        incpu = ncpu;
    }
    for (p = le + 1; p < e; p = le + 1) {
        le = line_end(p, e);
        const char *l = skip_sp(p, le), *c = l;
        while (c < le && *c != ':' && !is_sp(*c))
            c++;
        if (c >= le || *c != ':')
            continue;
        if (n == MAX_ROWS)
            die("too many rows");
        struct irow *r = &irows[n];
        uint64_t key[2] = {0, 0};
        memcpy(key, l, (size_t)(c - l) < 16 ? (size_t)(c - l) : 16);
        same = same && n < inrows && r->key[0] == key[0] && r->key[1] == key[1];
        r->key[0] = key[0];
        r->key[1] = key[1];
        r->label = (uint32_t)(l - t);
        r->label_len = (uint16_t)(c - l);
        int numbered = 1;
        int64_t irq = 0;
        for (const char *q = l; q < c; q++) {
            numbered &= is_digit(*q);
            irq = irq * 10 + (*q - '0');
        }
        int32_t was = r->irq;
        r->irq = numbered && c > l ? (int32_t)irq : -1;
        uint64_t total = 0;
        int k = 0;
        if (cell + ncpu > MAX_CELLS)
            die("too many counts");
        for (p = c + 1; k < ncpu; k++) {
            const char *q = skip_sp(p, le);
            uint64_t v;
            if (q >= le || !is_digit(*q))
                break;
            p = number(q, le, &v);
            uint32_t d = (uint32_t)v - cnt[cell + k];
            cnt[cell + k] = (uint32_t)v;
            del[cell + k] = d;
            total += d;
        }
        same = same && r->nc == k;
        r->nc = (uint16_t)k;
        r->cell = (uint32_t)cell;
        r->total = total;
        cell += k;
        const char *d = skip_sp(p, le), *de = le;
        while (de > d && is_sp(de[-1]))
            de--;
        r->desc = (uint32_t)(d - t);
        r->desc_len = (uint16_t)(de - d);
        if (r->irq >= 0 && (!base || n >= inrows || was != r->irq))
            read_affinity(r);
        n++;
    }
    same = same && n == inrows;
    inrows = n;
    return same;
}

static char *put_irow(char *p, const char *t, const struct irow *r, double per_milli)
{
    const char *d = t + r->desc, *as, *ae;

    p = PUT(p, "{\"label\":");
    p = put_str(p, t + r->label, r->label_len);
    p = PUT(p, ",\"irq\":");
    p = r->irq >= 0 ? put_u64(p, (uint64_t)r->irq) : PUT(p, "null");
    p = PUT(p, ",\"total\":");
    p = put_u64(p, r->total);
    p = PUT(p, ",\"rates\":[");
    p = put_rates(p, del + r->cell, r->nc, per_milli);
    p = PUT(p, "],\"total_rate\":");
    p = r->total ? put_fixed(p, milli(r->total, per_milli), 1000) : PUT(p, "0");
    p = PUT(p, ",\"actions\":");
    if (r->irq >= 0) {
        actions_of(d, d + r->desc_len, &as, &ae);
        p = put_actions(p, as, ae);
    } else {
        p = PUT(p, "[]");
    }
    p = PUT(p, ",\"description\":");
    p = put_str(p, d, r->desc_len);
    if (r->irq >= 0 && r->aff_len) {
        p = PUT(p, ",\"affinity\":");
        p = put_str(p, aff_pool + r->aff, r->aff_len);
    }
    *p++ = '}';
    return p;
}

static char *interrupts(char *p, const char *t, size_t len, int emit, double per_milli)
{
    int rates = parse_interrupts(t, t + len, ibase), busy = 0, k;

    ibase = 1;
    if (!emit)
        return p;
    if (!rates)
        return PUT(p, "null");
    /* busy rows by total, highest first, stable (insertion); idle after */
    for (int i = 0; i < inrows; i++) {
        if (!irows[i].total)
            continue;
        for (k = busy++; k > 0 && irows[order[k - 1]].total < irows[i].total; k--)
            order[k] = order[k - 1];
        order[k] = i;
    }
    for (int i = 0, n = busy; i < inrows; i++)
        if (!irows[i].total)
            order[n++] = i;
    p = put_cpus(p, icpus, incpu);
    for (int i = 0; i < inrows; i++) {
        if (i)
            *p++ = ',';
        if (p + 512 + (size_t)irows[order[i]].nc * 24 + (size_t)irows[order[i]].desc_len * 6 >
            out + MAX_OUT)
            die("line too long");
        p = put_irow(p, t, &irows[order[i]], per_milli);
    }
    return PUT(p, "]}");
}

/* ---------- /proc/softirqs ---------- */

static char *softirqs(char *p, const char *t, size_t len, int emit, double per_milli)
{
    const char *e = t + len, *le = line_end(t, e);
    int ids[MAX_CPUS], ncpu = header_cpus(t, le, ids), n = 0, same;

    same = sbase && ncpu == sncpu && same_ids(ids, scpus, ncpu);
    memcpy(scpus, ids, (size_t)ncpu * sizeof *ids);
    sncpu = ncpu;
    for (const char *q = le + 1; q < e && n < 64; q = le + 1) {
        le = line_end(q, e);
        const char *l = skip_sp(q, le), *c = memchr(l, ':', (size_t)(le - l));
        if (!c)
            continue;
        soff[n] = (uint64_t)(l - t) << 16 | (uint64_t)(c - l);
        uint32_t *old = scnt + n * MAX_CPUS, *d = sdel + n * MAX_CPUS;
        const char *x = c + 1;
        for (int k = 0; k < ncpu; k++) {
            uint64_t v = 0;
            x = skip_sp(x, le);
            if (x < le && is_digit(*x))
                x = number(x, le, &v);
            d[k] = (uint32_t)v - old[k];
            old[k] = (uint32_t)v;
        }
        n++;
    }
    same = same && n == snrows;
    snrows = n;
    sbase = 1;
    if (!emit)
        return p;
    if (!same)
        return PUT(p, "null");
    p = put_cpus(p, scpus, sncpu);
    for (int i = 0; i < n; i++) {
        const uint32_t *d = sdel + i * MAX_CPUS;
        uint64_t total = 0;
        if (i)
            *p++ = ',';
        p = PUT(p, "{\"name\":");
        p = put_str(p, t + (soff[i] >> 16), soff[i] & 0xffff);
        p = PUT(p, ",\"counts\":[");
        for (int k = 0; k < ncpu; k++) {
            if (k)
                *p++ = ',';
            p = put_u64(p, d[k]);
            total += d[k];
        }
        p = PUT(p, "],\"total\":");
        p = put_u64(p, total);
        p = PUT(p, ",\"rates\":[");
        p = put_rates(p, d, ncpu, per_milli);
        p = PUT(p, "],\"total_rate\":");
        p = total ? put_fixed(p, milli(total, per_milli), 1000) : PUT(p, "0");
        *p++ = '}';
    }
    return PUT(p, "]}");
}

/* ---------- /proc/stat ---------- */

static const char *const share_key[8] = {
    ",\"user_pct\":", ",\"nice_pct\":", ",\"system_pct\":", ",\"idle_pct\":",
    ",\"iowait_pct\":", ",\"irq_pct\":", ",\"softirq_pct\":", ",\"steal_pct\":"};

static char *put_shares(char *p, int cpu, const uint64_t *d)
{
    uint64_t sum = 0;

    for (int i = 0; i < 8; i++)
        sum += d[i];
    p = PUT(p, "{\"cpu\":");
    p = cpu < 0 ? PUT(p, "null") : put_u64(p, (uint64_t)cpu);
    for (int i = 0; i < 8; i++) {
        p = put(p, share_key[i], strlen(share_key[i]));
        p = sum ? put_fixed(p, (d[i] * 100000 + sum / 2) / sum, 1000) : PUT(p, "0");
    }
    *p++ = '}';
    return p;
}

static char *cpu_pct(char *p, const char *t, size_t len, int emit)
{
    static uint64_t d[MAX_CPUS][8];
    uint64_t sum[8] = {0};
    const char *e = t + len, *le;
    int n = 0, same = jbase;

    for (const char *q = t; q + 3 < e && !memcmp(q, "cpu", 3); q = le + 1) {
        le = line_end(q, e);
        if (!is_digit(q[3]))
            continue;
        uint64_t id, v;
        const char *x = number(q + 3, le, &id);
        if (n == MAX_CPUS)
            die("too many CPUs");
        same = same && n < jn && jcpus[n] == (int)id;
        jcpus[n] = (int)id;
        for (int i = 0; i < 8; i++) {
            x = number(skip_sp(x, le), le, &v);
            d[n][i] = v > jif[n][i] ? v - jif[n][i] : 0;
            jif[n][i] = v;
            sum[i] += d[n][i];
        }
        n++;
    }
    same = same && n == jn;
    jn = n;
    jbase = 1;
    if (!emit)
        return p;
    *p++ = '[';
    if (same) {
        p = put_shares(p, -1, sum);
        for (int i = 0; i < n; i++) {
            *p++ = ',';
            p = put_shares(p, jcpus[i], d[i]);
        }
    }
    *p++ = ']';
    return p;
}

/* ---------- threads ---------- */

static void schedstat(struct thread *th, const char *t, size_t len)
{
    uint64_t v;

    number(t, t + len, &v);
    th->dns = v - th->ns;
    th->ns = v;
    th->have++;
}

/* comm (between the first '(' and the last ')') and field 39, the CPU. */
static void pid_stat(struct thread *th, const char *t, size_t len)
{
    const char *e = t + len, *o = memchr(t, '(', len), *c = e;
    uint64_t v;

    while (c > t && c[-1] != ')')
        c--;
    if (!o || c <= o + 1)
        return;
    th->name_len = (int)(c - 1 - (o + 1)) < 31 ? (int)(c - 1 - (o + 1)) : 31;
    memcpy(th->name, o + 1, (size_t)th->name_len);
    th->kind = 0;
    if (th->name_len > 10 && !memcmp(th->name, "ksoftirqd/", 10)) {
        th->kind = 1;
        number(th->name + 10, th->name + th->name_len, &v);
        th->kind_n = (int)v;
    } else if (th->name_len > 4 && !memcmp(th->name, "irq/", 4)) {
        th->kind = 2;
        number(th->name + 4, th->name + th->name_len, &v);
        th->kind_n = (int)v;
    }
    for (int f = 3; c < e; f++) {
        c = skip_sp(c, e);
        const char *s = c;
        while (c < e && !is_sp(*c) && *c != '\n')
            c++;
        if (f == 39) {
            number(s, c, &v);
            th->last_cpu = (int)v;
            return;
        }
    }
}

static char *put_threads(char *p, uint64_t interval_ns)
{
    int first = 1;

    *p++ = '[';
    for (int i = 0; i < nthreads; i++) {
        struct thread *th = &threads[i];
        if (th->have < 2)
            continue;
        if (!first)
            *p++ = ',';
        first = 0;
        p = PUT(p, "{\"pid\":");
        p = put_u64(p, (uint64_t)th->pid);
        p = PUT(p, ",\"name\":");
        p = put_str(p, th->name, (size_t)th->name_len);
        p = PUT(p, ",\"kind\":");
        if (th->kind) {
            p = th->kind == 1 ? PUT(p, "{\"type\":\"ksoftirqd\",\"cpu\":")
                              : PUT(p, "{\"type\":\"irq_thread\",\"irq\":");
            p = put_u64(p, (uint64_t)th->kind_n);
            *p++ = '}';
        } else {
            p = PUT(p, "null");
        }
        p = PUT(p, ",\"cpu_pct\":");
        /* percent in millionths: ns x 1e8 / interval (ns < 2^64 / 1e8) */
        p = put_fixed(p, interval_ns ? th->dns * 100000000 / interval_ns : 0, 1000000);
        p = PUT(p, ",\"last_cpu\":");
        p = put_u64(p, (uint64_t)th->last_cpu);
        *p++ = '}';
    }
    *p++ = ']';
    return p;
}

/* ---------- the sample ---------- */

static struct spec parse_spec(const char *arg)
{
    struct spec f = {arg, 0, -1, K_OTHER, -1, 1};
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

/* path is SUFFIX or ends in /SUFFIX: proc/interrupts of / or of a
 * captured tree. */
static int ends_with(const char *path, const char *suffix)
{
    size_t n = strlen(path), k = strlen(suffix);

    return n >= k && !strcmp(path + n - k, suffix) && (n == k || path[n - k - 1] == '/');
}

/* Kind of a file, and for /proc/PID/{schedstat,stat} its thread. */
static void classify(struct spec *f)
{
    const char *p = f->path, *slash;
    long pid;

    if (ends_with(p, "proc/interrupts")) {
        f->kind = K_INTR;
        irq_dir_len = strlen(p) - strlen("interrupts");
        if (irq_dir_len + 4 > sizeof irq_dir)
            die("path too long");
        memcpy(irq_dir, p, irq_dir_len);
        memcpy(irq_dir + irq_dir_len, "irq/", 4);
        irq_dir_len += 4;
    } else if (ends_with(p, "proc/softirqs")) {
        f->kind = K_SOFT;
    } else if (ends_with(p, "proc/stat")) {
        f->kind = K_STAT;
    }
    if (f->kind != K_OTHER || strncmp(p, "/proc/", 6) || !is_digit(p[6]))
        return;
    pid = strtol(p + 6, (char **)&slash, 10);
    if (!strcmp(slash, "/schedstat"))
        f->kind = K_SCHED;
    else if (!strcmp(slash, "/stat"))
        f->kind = K_PSTAT;
    else
        return;
    for (f->thread = 0; f->thread < nthreads && threads[f->thread].pid != pid; f->thread++)
        ;
    if (f->thread == nthreads)
        threads[nthreads++].pid = pid;
}

/* The text of file f at sample s, or NULL when not read this sample. */
static const char *read_file(const struct spec *f, long s, size_t *len)
{
    ssize_t r;
    size_t at = 0;

    if (s % f->every != 0)
        return NULL;
    while ((r = pread(f->fd, text + at, MAX_TEXT - at, (off_t)at)) > 0) {
        at += (size_t)r;
        if (at == MAX_TEXT)
            die("file too large");
        if (!f->to_eof)
            break;
    }
    if (r < 0) {
        perror(f->path);
        exit(1);
    }
    *len = at;
    return text;
}

/* Called once per sample: the sleep to the next tick. */
__attribute__((noinline)) void json_floor_mark(const struct timespec *t)
{
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL);
}

static uint64_t ns_of(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* The files of one kind, read and handled in argument order. */
static char *section(char *p, struct spec *files, int nf, int kind, long s, double per_milli)
{
    int seen = 0;

    for (int i = 0; i < nf; i++) {
        const char *t;
        size_t len;
        if (files[i].kind != kind || !(t = read_file(&files[i], s, &len)))
            continue;
        seen = 1;
        if (kind == K_INTR)
            p = interrupts(p, t, len, s > 0, per_milli);
        else if (kind == K_SOFT)
            p = softirqs(p, t, len, s > 0, per_milli);
        else if (kind == K_STAT)
            p = cpu_pct(p, t, len, s > 0);
        else if (kind == K_SCHED)
            schedstat(&threads[files[i].thread], t, len);
        else if (kind == K_PSTAT)
            pid_stat(&threads[files[i].thread], t, len);
    }
    if (!seen && s > 0 && kind != K_OTHER && kind < K_SCHED)
        p = kind == K_STAT ? PUT(p, "[]") : PUT(p, "null");
    return p;
}

int main(int argc, char **argv)
{
    struct spec files[MAX_FILES] = {{"/proc/interrupts", 1, -1, 0, -1, 1},
                                    {"/proc/softirqs", 0, -1, 0, -1, 1},
                                    {"/proc/stat", 0, -1, 0, -1, 1}};
    int nf = 3, n, a = 1, cost = 0;
    long ms = 1000;
    uint64_t last_cpu = 0, last_user = 0, last_sys = 0, prev_mono = 0;
    struct timespec t, now, wall;

    while (a < argc && argv[a][0] == '-') {
        if (!strcmp(argv[a], "-c")) {
            cost = 1;
            a++;
            continue;
        }
        if (!strcmp(argv[a], "-a")) {
            with_affinity = 1;
            a++;
            continue;
        }
        if (a + 1 >= argc)
            usage();
        if (!strcmp(argv[a], "-i"))
            ms = atol(argv[a + 1]);
        else if (strcmp(argv[a], "-w"))
            usage();
        a += 2;
    }
    if (a >= argc || (n = atoi(argv[a])) < 1 || ms < 1)
        usage();
    if (argc - a - 1 > MAX_FILES) {
        fprintf(stderr, "json-floor: at most %d files\n", MAX_FILES);
        return 2;
    }
    if (argc - a > 1) {
        nf = 0;
        for (int i = a + 1; i < argc; i++)
            files[nf++] = parse_spec(argv[i]);
    }
    for (int i = 0; i < nf; i++) {
        classify(&files[i]);
        files[i].fd = open(files[i].path, O_RDONLY);
        if (files[i].fd < 0) {
            perror(files[i].path);
            return 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    for (long s = 0;; s++) {
        char *p = out;
        clock_gettime(CLOCK_MONOTONIC, &now);
        clock_gettime(CLOCK_REALTIME, &wall);
        uint64_t mono = ns_of(&now), iv = mono - prev_mono;
        double per_milli = s > 0 ? 1e12 / (double)iv : 0;
        prev_mono = mono;
        if (s > 0) {
            p = PUT(p, "{\"timestamp\":\"");
            p = put_stamp(p, &wall);
            p = PUT(p, "\",\"mono_ns\":");
            p = put_u64(p, mono);
            p = PUT(p, ",\"interval_s\":");
            p = put_fixed(p, iv, 1000000000u);
            p = PUT(p, ",\"interrupts\":");
        }
        p = section(p, files, nf, K_INTR, s, per_milli);
        if (s > 0)
            p = PUT(p, ",\"softirqs\":");
        p = section(p, files, nf, K_SOFT, s, per_milli);
        if (s > 0)
            p = PUT(p, ",\"cpu_pct\":");
        p = section(p, files, nf, K_STAT, s, per_milli);
        section(p, files, nf, K_SCHED, s, per_milli);
        section(p, files, nf, K_PSTAT, s, per_milli);
        section(p, files, nf, K_OTHER, s, per_milli);
        if (cost || s > 0) {
            struct timespec c;
            struct rusage ru;
            uint64_t cpu = 0, user = 0, sys = 0;
            if (cost) {
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
                getrusage(RUSAGE_THREAD, &ru);
                cpu = ns_of(&c);
                user = (uint64_t)ru.ru_utime.tv_sec * 1000000000u + (uint64_t)ru.ru_utime.tv_usec * 1000;
                sys = (uint64_t)ru.ru_stime.tv_sec * 1000000000u + (uint64_t)ru.ru_stime.tv_usec * 1000;
            }
            if (s > 0) {
                p = PUT(p, ",\"threads\":");
                p = put_threads(p, iv);
                p = PUT(p, ",\"self_cost\":");
                if (cost) {
                    clock_gettime(CLOCK_MONOTONIC, &c);
                    p = PUT(p, "{\"user_ns\":");
                    p = put_u64(p, user - last_user);
                    p = PUT(p, ",\"system_ns\":");
                    p = put_u64(p, sys - last_sys);
                    p = PUT(p, ",\"cpu_ns\":");
                    p = put_u64(p, cpu - last_cpu);
                    p = PUT(p, ",\"wall_ns\":");
                    p = put_u64(p, ns_of(&c) - mono);
                    *p++ = '}';
                } else {
                    p = PUT(p, "null");
                }
                p = PUT(p, ",\"strategy\":\"proc_interrupts\"}\n");
            }
            last_cpu = cpu, last_user = user, last_sys = sys;
        }
        if (s > 0 && write(1, out, (size_t)(p - out)) != p - out)
            return 1;
        if (s == n)
            return 0;
        t.tv_nsec += (ms % 1000) * 1000000L;
        t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        json_floor_mark(&t);
    }
}
