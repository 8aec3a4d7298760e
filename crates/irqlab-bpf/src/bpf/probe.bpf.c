/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * `irqlab probe --kernel`: the kernel-side time of each read of a seq_file
 * (fentry/fexit on seq_read_iter, BPF trampolines; where the kernel
 * refuses tracing programs, the read system calls on raw_syscalls) and
 * the number of
 * show_interrupts() calls, counted for ONE thread (the probing one, set by
 * user space in PROBE_CFG). Everything accumulates in one array slot that
 * user space reads before and after each timed read (src/probe_loader.rs);
 * the differences are that read's figures.
 *
 * Self-contained like irqlab.bpf.c (no vmlinux.h): a tracing program's
 * context is an array of u64 arguments (fexit: the return value follows
 * them), so no kernel struct is read except the loff_t behind
 * show_interrupts()' `void *v` (the position being shown), through
 * bpf_probe_read_kernel.
 */

typedef unsigned int u32;
typedef long long s64;
typedef unsigned long long u64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

#define BPF_MAP_TYPE_ARRAY 2

/* Helpers, by their stable numbers in enum bpf_func_id. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_probe_read_kernel)(void *dst, u32 size, const void *src) = (void *)113;

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Mirrored by `ProbeCfg` / `ProbeStats` in src/probe_loader.rs. */
struct probe_cfg {
	u64 pid_tgid; /* tgid << 32 | thread id; 0 = nobody */
	s64 nr_read;  /* syscall numbers of read and pread64 (raw_syscalls fallback) */
	s64 nr_pread;
	u64 peek_addr; /* kernel address to copy PEEK_LEN bytes from, 0 = none */
};

#define PEEK_LEN 32

/* One copy of kernel memory asked for by user space (probe_loader.rs
 * `peek`): made at the probed thread's next syscall exit. */
struct probe_peek {
	u64 addr; /* the address copied (0: not yet) */
	s64 ret;  /* bpf_probe_read_kernel's result */
	unsigned char bytes[PEEK_LEN];
};

struct probe_stats {
	u64 calls;        /* completed seq_read_iter() calls of the thread */
	u64 total_ns;     /* their summed duration (fentry -> fexit) */
	u64 show_calls;   /* show_interrupts() calls of the thread */
	s64 show_max_pos; /* largest position show_interrupts() was asked for */
	u64 start_ns;     /* in-flight seq_read_iter() start, 0 when none */
	u64 unpaired;     /* unused, kept zero */
};

_Static_assert(sizeof(struct probe_stats) == 48, "probe_stats layout");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct probe_cfg);
} PROBE_CFG SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct probe_stats);
} PROBE_STATS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct probe_peek);
} PROBE_PEEK SEC(".maps");

/* The stats slot when the current thread is the probed one, else 0. */
static inline __attribute__((always_inline)) struct probe_stats *mine(void)
{
	u32 zero = 0;
	struct probe_cfg *cfg = bpf_map_lookup_elem(&PROBE_CFG, &zero);
	if (!cfg || cfg->pid_tgid == 0 || cfg->pid_tgid != bpf_get_current_pid_tgid())
		return 0;
	return bpf_map_lookup_elem(&PROBE_STATS, &zero);
}

static inline __attribute__((always_inline)) void read_entry(void)
{
	struct probe_stats *s = mine();
	if (s)
		s->start_ns = bpf_ktime_get_ns();
}

static inline __attribute__((always_inline)) void read_exit(void)
{
	u64 now = bpf_ktime_get_ns();
	struct probe_stats *s = mine();
	if (!s)
		return;
	if (s->start_ns == 0 || s->start_ns > now) {
		/* sys_exit of another syscall: only read/pread64 set start_ns */
		return;
	}
	s->total_ns += now - s->start_ns;
	s->calls += 1;
	s->start_ns = 0;
}

/* int show_interrupts(struct seq_file *p, void *v): *(loff_t *)v is the IRQ number shown. */
static inline __attribute__((always_inline)) void show(u64 v)
{
	struct probe_stats *s = mine();
	s64 pos = 0;
	if (!s)
		return;
	s->show_calls += 1;
	if (v && bpf_probe_read_kernel(&pos, sizeof(pos), (const void *)v) == 0 && pos > s->show_max_pos)
		s->show_max_pos = pos;
}

SEC("fentry/seq_read_iter")
int probe_read_entry(u64 *ctx)
{
	read_entry();
	return 0;
}

SEC("fexit/seq_read_iter")
int probe_read_exit(u64 *ctx)
{
	read_exit();
	return 0;
}

SEC("fentry/show_interrupts")
int probe_show_interrupts(u64 *ctx)
{
	show(ctx[1]);
	return 0;
}

/*
 * The fallback where the kernel refuses tracing programs: the read()
 * and pread64() system calls of the thread, raw_syscalls sys_enter ->
 * sys_exit (raw tracepoints, no tracefs). Their time contains
 * seq_read_iter() plus the syscall's own entry, fd lookup and vfs_read.
 * bpf_raw_tracepoint_args: sys_enter(regs, id), sys_exit(regs, ret).
 * sys_exit also makes the one-off copies of kernel memory user space asks
 * for in PROBE_CFG.peek_addr (the kernel's nr_irqs, which no file shows).
 */
SEC("raw_tracepoint/sys_enter")
int probe_sys_enter(u64 *args)
{
	u32 zero = 0;
	struct probe_cfg *cfg = bpf_map_lookup_elem(&PROBE_CFG, &zero);
	s64 id = (s64)args[1];
	if (!cfg || (id != cfg->nr_read && id != cfg->nr_pread))
		return 0;
	read_entry();
	return 0;
}

SEC("raw_tracepoint/sys_exit")
int probe_sys_exit(u64 *args)
{
	u32 zero = 0;
	struct probe_cfg *cfg;
	struct probe_peek *peek;
	read_exit();
	cfg = bpf_map_lookup_elem(&PROBE_CFG, &zero);
	if (!cfg || cfg->peek_addr == 0 || cfg->pid_tgid != bpf_get_current_pid_tgid())
		return 0;
	peek = bpf_map_lookup_elem(&PROBE_PEEK, &zero);
	if (!peek || peek->addr == cfg->peek_addr)
		return 0;
	peek->ret = bpf_probe_read_kernel(peek->bytes, PEEK_LEN, (const void *)cfg->peek_addr);
	peek->addr = cfg->peek_addr;
	return 0;
}

/*
 * Loaded (never attached) only when the trampoline programs were refused:
 * a tracing program of the same program type that needs no trampoline.
 * Whether it loads tells a refusal of trampolines apart from a refusal
 * of tracing programs (probe_loader.rs `why_refused`).
 */
SEC("tp_btf/sys_exit")
int probe_tp_btf_check(u64 *ctx)
{
	return 0;
}
