/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * irqlab's BPF side, hand-declared (no vmlinux.h, no libbpf headers): the
 * programs read the tracepoint records, whose layout is the stable ABI
 * printed in tracefs `events/<group>/<name>/format`, raw tracepoints'
 * integer arguments, and one kernel struct field (`irqaction.name`, in
 * the BTF tracepoint programs, relocated at load from the kernel's BTF).
 * See src/lib.rs for why.
 *
 * The map value layouts below are mirrored by `#[repr(C)]` structs in
 * src/maps.rs; both sides assert the sizes.
 */
#ifndef IRQLAB_H
#define IRQLAB_H

typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;

#define SEC(name) __attribute__((section(name), used))
#define __always_inline inline __attribute__((always_inline))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name

/* enum bpf_map_type */
#define BPF_MAP_TYPE_PERCPU_HASH 5
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
/* map update flags */
#define BPF_ANY 0
#define BPF_NOEXIST 1

/* Helpers, by their stable numbers in enum bpf_func_id. */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, u64 flags) = (void *)2;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static long (*bpf_get_current_comm)(void *buf, u32 size) = (void *)16;
static long (*bpf_probe_read_kernel)(void *dst, u32 size, const void *src) = (void *)113;
static long (*bpf_probe_read_kernel_str)(void *dst, u32 size, const void *src) = (void *)115;

/* log2 histogram: slot k counts durations in [2^(k-1), 2^k) ns, slot 0 is 0 ns. */
#define HIST_SLOTS 32
/* bytes of an IRQ action name kept in the key */
#define NAME_LEN 28
/* x86 irq_vectors pairs, see VECTOR() in irqlab.bpf.c */
#define VECTOR_SLOTS 16
/* NR_SOFTIRQS is 10; room for growth */
#define SOFTIRQ_SLOTS 16

struct stats {
	u64 count;    /* completed runs (counted at exit) */
	u64 total_ns; /* sum of their durations */
	u64 hist[HIST_SLOTS];
};

struct irq_key {
	s32 irq;
	char name[NAME_LEN];
};

struct softirq_stats {
	struct stats run;     /* entry -> exit, nested hard IRQs included (as bcc) */
	u64 nested_irq_ns;    /* hard IRQ and vector time inside those runs */
	u64 ksoftirqd_count;  /* runs in ksoftirqd/N (the rest: irq exit, bh enable) */
	u64 ksoftirqd_ns;     /* their duration (inclusive) */
	struct stats latency; /* first raise -> entry on the same CPU */
};

/* per-CPU scratch: in-flight start times */
struct cpu_state {
	u64 irq_start;
	u64 vec_start;
	u64 sirq_start;
	u64 irq_ns_sum;          /* all hard IRQ + vector ns on this CPU so far */
	u64 sirq_irq_ns_at_entry;
	u32 vec_id;
	u32 sirq_in_ksoftirqd;
	struct irq_key irq_key;
	u64 raise_ts[SOFTIRQ_SLOTS];
};

_Static_assert(sizeof(struct stats) == 272, "stats layout");
_Static_assert(sizeof(struct irq_key) == 32, "irq_key layout");
_Static_assert(sizeof(struct softirq_stats) == 568, "softirq_stats layout");

#endif
