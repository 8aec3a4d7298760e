/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Aggregates hard IRQ, x86 vector and softirq durations in per-CPU maps on
 * the irq:* and irq_vectors:* tracepoints. Nothing is sent per event:
 * user space reads the maps once per interval (src/loader.rs).
 *
 * The softirq and vector programs are raw tracepoint programs, and the
 * hard IRQ ones BTF tracepoint programs where the kernel has BTF (they
 * read the action's name from its struct irqaction), else perf event
 * tracepoint programs (the name is in the event's record). The kernel
 * skips a raw or BTF tracepoint program only when the same program is
 * already running on that CPU, never because another BPF program or a
 * map system call is: a hard IRQ can then interrupt a softirq program,
 * and softirq_entry and softirq_exit are written for that (docs/trace.md,
 * "Programs that interrupt each other").
 */
#include "irqlab.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct irq_key);
	__type(value, struct stats);
} HARDIRQ SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VECTOR_SLOTS);
	__type(key, u32);
	__type(value, struct stats);
} VECTORS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SOFTIRQ_SLOTS);
	__type(key, u32);
	__type(value, struct softirq_stats);
} SOFTIRQS SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_state);
} STATE SEC(".maps");

/* Hard IRQ runs not counted because HARDIRQ was full (a failed insert). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} DROPS SEC(".maps");

/* Tracepoint records (tracefs events/irq/<name>/format). */
struct tp_common {
	unsigned short common_type;
	unsigned char common_flags;
	unsigned char common_preempt_count;
	int common_pid;
};

struct tp_irq_handler_entry {
	struct tp_common c;
	int irq;
	u32 name_loc; /* __data_loc char[]: offset in the low 16 bits */
};

struct tp_irq_handler_exit {
	struct tp_common c;
	int irq;
	int ret;
};

/* A raw tracepoint program's context: the tracepoint's arguments. */
struct raw_args {
	u64 args[1];
};


static __always_inline struct cpu_state *state(void)
{
	u32 zero = 0;
	return bpf_map_lookup_elem(&STATE, &zero);
}

static __always_inline u32 log2_slot(u64 v)
{
	u32 r = 0, s;
	if (v == 0)
		return 0;
	s = (v > 0xFFFFFFFFULL) << 5; v >>= s; r |= s;
	s = (v > 0xFFFF) << 4; v >>= s; r |= s;
	s = (v > 0xFF) << 3; v >>= s; r |= s;
	s = (v > 0xF) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	r += 1; /* slot k: [2^(k-1), 2^k) */
	return r < HIST_SLOTS ? r : HIST_SLOTS - 1;
}

static __always_inline void add(struct stats *s, u64 ns)
{
	u32 slot = log2_slot(ns);
	s->count++;
	s->total_ns += ns;
	if (slot < HIST_SLOTS)
		s->hist[slot]++;
}

/* ---- hard IRQs: one row per (irq, action name) ---- */

/*
 * Each hard IRQ program comes twice: as a BTF tracepoint program (`tp_btf`,
 * given the tracepoint's arguments and, like a raw tracepoint program,
 * skipped only inside itself) where the kernel has BTF, and as a perf
 * event tracepoint program otherwise (src/loader.rs picks).
 */

/*
 * The one field of the kernel's struct irqaction read: its offset is the
 * running kernel's, set at load from the kernel's BTF (CO-RE).
 */
struct irqaction {
	const char *name;
} __attribute__((preserve_access_index));

/* The CPU's state with its key zeroed and set to `irq` (the name follows). */
static __always_inline struct cpu_state *key_for(int irq)
{
	struct cpu_state *st = state();
	if (!st)
		return 0;
	/*
	 * The key is a map key: all 32 bytes count. The scratch buffer is
	 * reused, and the name read after this stops at the NUL, so without
	 * this a shorter name would keep the tail of a longer one after its
	 * NUL and one action would become several keys.
	 */
	__builtin_memset(&st->irq_key, 0, sizeof(st->irq_key));
	st->irq_key.irq = irq;
	return st;
}

SEC("tracepoint/irq/irq_handler_entry")
int irq_handler_entry(struct tp_irq_handler_entry *ctx)
{
	struct cpu_state *st = key_for(ctx->irq);
	if (!st)
		return 0;
	bpf_probe_read_kernel_str(st->irq_key.name, NAME_LEN, (char *)ctx + (ctx->name_loc & 0xFFFF));
	st->irq_start = bpf_ktime_get_ns();
	return 0;
}

/* irq_handler_entry(int irq, struct irqaction *action) */
SEC("tp_btf/irq_handler_entry")
int irq_handler_entry_btf(u64 *ctx)
{
	struct irqaction *action = (struct irqaction *)ctx[1];
	const char *name = 0;
	struct cpu_state *st = key_for((int)ctx[0]);
	if (!st)
		return 0;
	bpf_probe_read_kernel(&name, sizeof(name), &action->name);
	bpf_probe_read_kernel_str(st->irq_key.name, NAME_LEN, name);
	st->irq_start = bpf_ktime_get_ns();
	return 0;
}

/* The run of `irq` that ended at `now`, counted. */
static __always_inline int hard_exit(u64 now, int irq)
{
	u64 ns;
	struct cpu_state *st = state();
	struct stats *s;
	if (!st || st->irq_start == 0 || st->irq_key.irq != irq)
		return 0;
	ns = now - st->irq_start;
	st->irq_start = 0;
	st->irq_ns_sum += ns;
	s = bpf_map_lookup_elem(&HARDIRQ, &st->irq_key);
	if (!s) {
		struct stats zero = {};
		bpf_map_update_elem(&HARDIRQ, &st->irq_key, &zero, BPF_NOEXIST);
		s = bpf_map_lookup_elem(&HARDIRQ, &st->irq_key);
		if (!s) {
			/* the map is full: say so rather than lose the run silently */
			u32 zero0 = 0;
			u64 *d = bpf_map_lookup_elem(&DROPS, &zero0);
			if (d)
				(*d)++;
			return 0;
		}
	}
	add(s, ns);
	return 0;
}

SEC("tracepoint/irq/irq_handler_exit")
int irq_handler_exit(struct tp_irq_handler_exit *ctx)
{
	u64 now = bpf_ktime_get_ns(); /* first: the run ends here */
	return hard_exit(now, ctx->irq);
}

/* irq_handler_exit(int irq, struct irqaction *action, int ret) */
SEC("tp_btf/irq_handler_exit")
int irq_handler_exit_btf(u64 *ctx)
{
	u64 now = bpf_ktime_get_ns(); /* first: the run ends here */
	return hard_exit(now, (int)ctx[0]);
}

/* ---- x86 system vectors (LOC, RES, CAL, IWI ...) ---- */

static __always_inline int vec_entry(u32 id)
{
	struct cpu_state *st = state();
	if (!st)
		return 0;
	st->vec_id = id;
	st->vec_start = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int vec_exit(u32 id)
{
	u64 now = bpf_ktime_get_ns(), ns; /* first: the run ends here */
	struct cpu_state *st = state();
	struct stats *s;
	if (!st || st->vec_start == 0 || st->vec_id != id)
		return 0;
	ns = now - st->vec_start;
	st->vec_start = 0;
	st->irq_ns_sum += ns;
	s = bpf_map_lookup_elem(&VECTORS, &id);
	if (s)
		add(s, ns);
	return 0;
}

/* The ids are the order of VECTORS in src/maps.rs. */
#define VECTOR(name, id)                                               \
	SEC("raw_tp/" #name "_entry")                                  \
	int name##_entry(void *ctx) { return vec_entry(id); }          \
	SEC("raw_tp/" #name "_exit")                                   \
	int name##_exit(void *ctx) { return vec_exit(id); }

VECTOR(local_timer, 0)
VECTOR(reschedule, 1)
VECTOR(call_function, 2)
VECTOR(call_function_single, 3)
VECTOR(irq_work, 4)
VECTOR(x86_platform_ipi, 5)
VECTOR(thermal_apic, 6)
VECTOR(threshold_apic, 7)
VECTOR(deferred_error_apic, 8)
VECTOR(error_apic, 9)
VECTOR(spurious_apic, 10)

/* ---- softirqs ---- */

SEC("raw_tp/softirq_raise")
int softirq_raise(struct raw_args *ctx)
{
	struct cpu_state *st = state();
	u32 vec = (u32)ctx->args[0];
	if (!st || vec >= SOFTIRQ_SLOTS)
		return 0;
	vec &= SOFTIRQ_SLOTS - 1;
	if (st->raise_ts[vec] == 0)
		st->raise_ts[vec] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int is_ksoftirqd(void)
{
	char comm[16] = {};
	bpf_get_current_comm(comm, sizeof(comm));
	return comm[0] == 'k' && comm[1] == 's' && comm[2] == 'o' && comm[3] == 'f' &&
	       comm[4] == 't' && comm[5] == 'i' && comm[6] == 'r' && comm[7] == 'q' &&
	       comm[8] == 'd' && comm[9] == '/';
}

SEC("raw_tp/softirq_entry")
int softirq_entry(struct raw_args *ctx)
{
	struct cpu_state *st = state();
	struct softirq_stats *s;
	u32 vec = (u32)ctx->args[0];
	u64 now = bpf_ktime_get_ns(), raised;
	if (!st || vec >= SOFTIRQ_SLOTS)
		return 0;
	vec &= SOFTIRQ_SLOTS - 1; /* for the verifier: vec is a register, key a stack copy */
	/*
	 * A raise in an interrupt between this read and the clear below is
	 * lost (that later run has no latency sample); an atomic exchange
	 * would need Linux 5.12's BPF atomics for a window of a few
	 * instructions.
	 */
	raised = st->raise_ts[vec];
	if (raised != 0) {
		u32 key = vec;
		st->raise_ts[vec] = 0;
		s = bpf_map_lookup_elem(&SOFTIRQS, &key);
		if (s)
			add(&s->latency, now - raised);
	}
	st->sirq_in_ksoftirqd = is_ksoftirqd();
	st->sirq_irq_ns_at_entry = st->irq_ns_sum;
	/*
	 * The run starts when this program ends: stamped again here, so the
	 * latency bookkeeping and the comm read above are not counted as the
	 * softirq's time. Every entry program stamps last and every exit
	 * program first (docs/trace.md, "Where the timestamps are taken").
	 */
	st->sirq_start = bpf_ktime_get_ns();
	return 0;
}

SEC("raw_tp/softirq_exit")
int softirq_exit(struct raw_args *ctx)
{
	u64 now = bpf_ktime_get_ns(), ns, nested; /* first: the run ends here */
	struct cpu_state *st = state();
	struct softirq_stats *s;
	u32 vec = (u32)ctx->args[0];
	if (!st || vec >= SOFTIRQ_SLOTS || st->sirq_start == 0)
		return 0;
	ns = now - st->sirq_start;
	st->sirq_start = 0;
	s = bpf_map_lookup_elem(&SOFTIRQS, &vec);
	if (!s)
		return 0;
	add(&s->run, ns);
	/*
	 * A hard IRQ can interrupt this program and softirq_entry (docs/trace.md,
	 * "Programs that interrupt each other"). One that ran between the
	 * entry's read of irq_ns_sum and its stamp, or between the exit's stamp
	 * and this read, is counted as nested though it lies outside the run:
	 * the nested time is held to the run's, so the own time is never
	 * below zero.
	 */
	nested = st->irq_ns_sum - st->sirq_irq_ns_at_entry;
	s->nested_irq_ns += nested < ns ? nested : ns;
	if (st->sirq_in_ksoftirqd) {
		s->ksoftirqd_count++;
		s->ksoftirqd_ns += ns;
	}
	return 0;
}
