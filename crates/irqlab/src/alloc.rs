//! The binary's global allocator: the system allocator, except that
//! blocks aligned beyond what `malloc` guarantees (16 bytes) are carved
//! out of a plain `malloc` of `size + align` instead of glibc's
//! `posix_memalign`.
//!
//! Why: every gzip body of `serve` makes a fresh deflate state, ~330 KB
//! allocated at 64-byte alignment and zeroed (`record` keeps one state
//! for all its pages: `record/gzip.rs`; it made one per page before). A
//! block glibc's `posix_memalign` returned and took back is too small for
//! the next identical request (that one asks for `size + align + 32`
//! bytes to split from), so while the thread cache keeps the small
//! neighbouring chunks from coalescing, each page's state is new heap,
//! faulted in page by page: 1 540 page faults and 2.2 ms of CPU to close
//! a 2-sample segment. A `malloc` of the same `size + align` fits the
//! block freed before it exactly and is reused (BENCHMARKS.md, session 10).
//!
//! The raw pointer is kept in the 8 bytes just below the aligned one
//! (there are at least 16: `malloc`'s result is 16-aligned and the
//! aligned pointer lies past it).
//!
//! Also the heap's tuning for the commands that hold large buffers:
//! large blocks kept in the heap ([`keep_large_blocks_in_heap`]) and, for
//! one `show` of a large machine, the heap's next 2 MiB on a huge page
//! ([`heap_on_huge_page`]).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Alignment `malloc` guarantees on 64-bit Linux.
const MALLOC_ALIGN: usize = 16;

/// See the module documentation.
pub struct AlignedMalloc;

/// The raw `malloc` pointer is stored just below the aligned block.
const SLOT: usize = std::mem::size_of::<usize>();

#[allow(unsafe_code)]
// SAFETY (every method): blocks with align <= 16 are System's unchanged;
// the others come from `malloc(size + align)`, aligned up past the raw
// pointer (at least 16 bytes past it, as both are 16-aligned and the
// aligned one is strictly greater), which is stored in the usize just
// below the aligned pointer and handed back to `free`.
unsafe impl GlobalAlloc for AlignedMalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: the caller's contract, passed on
            return unsafe { System.alloc(layout) };
        }
        let Some(total) = layout.size().checked_add(layout.align()) else {
            return std::ptr::null_mut();
        };
        // SAFETY: malloc of a non-zero size
        let raw = unsafe { nix::libc::malloc(total) }.cast::<u8>();
        if raw.is_null() {
            return raw;
        }
        let addr = raw as usize;
        let aligned = (addr + layout.align()) & !(layout.align() - 1);
        // SAFETY: aligned - raw is in 16..=align, so the block
        // [aligned, aligned + size) and the slot below it lie in raw's
        // allocation of size + align bytes
        unsafe {
            let p = raw.add(aligned - addr);
            p.sub(SLOT).cast::<usize>().write_unaligned(addr);
            p
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: allocated by System with this layout
            return unsafe { System.dealloc(ptr, layout) };
        }
        // SAFETY: `alloc` stored the raw malloc pointer in the slot
        unsafe {
            let raw = ptr.sub(SLOT).cast::<usize>().read_unaligned();
            nix::libc::free(raw as *mut nix::libc::c_void);
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: the caller's contract, passed on
            return unsafe { System.alloc_zeroed(layout) };
        }
        // SAFETY: as `alloc`; the block is then zeroed over its size
        unsafe {
            let p = self.alloc(layout);
            if !p.is_null() {
                p.write_bytes(0, layout.size());
            }
            p
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= MALLOC_ALIGN {
            // SAFETY: allocated by System with this layout
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // SAFETY: a new block of the same alignment, the old contents
        // copied (the smaller of both sizes), the old block freed
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let p = self.alloc(new_layout);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            p
        }
    }
}

/// Heap blocks up to this size come from the heap, never a private mmap.
const KEEP_IN_HEAP: usize = 8 << 20;

/// Make glibc keep blocks of up to 8 MiB in the heap and keep freed heap
/// memory, for the writers of gzip (`record`'s kept state and segment
/// buffers, `serve`'s bodies): a ~330 KB deflate state is otherwise above glibc's
/// initial 128 KiB mmap threshold, so it is mapped, faulted in page by
/// page and unmapped on free; only then does glibc raise the threshold,
/// and the next state is new heap, faulted in again: two states' worth of
/// page faults (~190, half of a 2-sample `record`'s) where one is enough.
/// Called once at start-up by the commands that write gzip, and by a
/// single `show` (its 256 KiB read buffer, freed after the parse, then
/// serves the next allocation instead of being unmapped).
#[allow(unsafe_code)]
pub fn keep_large_blocks_in_heap() {
    // SAFETY: mallopt only changes two of malloc's tunables; a failure
    // (0) leaves glibc's defaults, which are correct, only slower
    unsafe {
        nix::libc::mallopt(nix::libc::M_MMAP_THRESHOLD, KEEP_IN_HEAP as i32);
        nix::libc::mallopt(nix::libc::M_TRIM_THRESHOLD, 2 * KEEP_IN_HEAP as i32);
    }
}

/// A transparent huge page: the size [`heap_on_huge_page`] backs.
const HUGE: usize = 2 << 20;

/// Set by the binary's `main` while it is the only thread: the heap's
/// break may then be moved ([`heap_on_huge_page`]). Never set in the
/// test harness, whose threads allocate while a test runs.
static MAY_MOVE_BREAK: AtomicBool = AtomicBool::new(false);

/// [`heap_on_huge_page`] ran (once a process is enough).
static HUGE_TRIED: AtomicBool = AtomicBool::new(false);

/// Let [`heap_on_huge_page`] move the heap's break: for the binary's
/// `main`, whose commands that call it run on one thread.
pub fn allow_break_moves() {
    MAY_MOVE_BREAK.store(true, Ordering::Relaxed);
}

/// Put the heap's next 2 MiB on one transparent huge page, for a single
/// `show` of a large machine: its held rows, sections and output buffers
/// (~1.4 MB on 1152 CPUs × 1056 IRQs) otherwise fault in ~360 pages one
/// by one, at ~2 µs a fault on a KVM guest; one collapse zeroes 2 MiB
/// in 0.1–0.2 ms (BENCHMARKS.md, session 32). The break is moved up to the
/// next 2 MiB boundary above it (the gap is address space only, never touched), a
/// 2 MiB block is taken from the heap's top there and given back (kept:
/// [`keep_large_blocks_in_heap`] must have run, so that it is neither
/// mapped apart nor trimmed), then `MADV_COLLAPSE` makes that range one
/// huge page; glibc carves the next blocks out of it. True when it did.
/// Does nothing unless [`allow_break_moves`] was called, and only once a
/// process; any step that fails (no `MADV_COLLAPSE` before Linux 6.1,
/// THP disabled, the block served from elsewhere) leaves the heap as
/// glibc keeps it. Only while one thread runs: glibc's own `sbrk` calls
/// are not serialized with this one's.
#[allow(unsafe_code)]
pub fn heap_on_huge_page() -> bool {
    use nix::libc;
    if !MAY_MOVE_BREAK.load(Ordering::Relaxed) || HUGE_TRIED.swap(true, Ordering::Relaxed) {
        return false;
    }
    // sbrk's (void *) -1
    let failed = usize::MAX;
    // SAFETY: sbrk(0) reads the break; the move up only adds address
    // space past glibc's heap, which glibc, finding the break not where
    // it left it, starts its next extension after (the old top is
    // released as a free chunk); the block malloc returns is freed once,
    // untouched; madvise only changes how the range's pages are backed
    unsafe {
        let cur = libc::sbrk(0) as usize;
        if cur == failed {
            return false;
        }
        // always past the break, even one already on a boundary: only a
        // moved break makes glibc start its next extension there (with
        // the break where glibc left it, the block would begin inside the
        // top chunk below the boundary, and no huge page be asked for)
        let aligned = (cur + 1).next_multiple_of(HUGE);
        if libc::sbrk((aligned - cur) as libc::intptr_t) as usize == failed {
            return false;
        }
        let block = libc::malloc(HUGE);
        if block.is_null() {
            return false;
        }
        let end = libc::sbrk(0) as usize;
        // the block's header starts the range: the heap's top is there
        let at_start = (aligned..aligned + 64).contains(&(block as usize));
        libc::free(block);
        at_start
            && end >= aligned + HUGE
            && libc::madvise(aligned as *mut libc::c_void, HUGE, libc::MADV_COLLAPSE) == 0
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    #[test]
    fn aligned_blocks_are_aligned_zeroed_and_keep_their_contents() {
        let a = AlignedMalloc;
        for align in [1, 8, 16, 32, 64, 4096] {
            for size in [1, 24, 1000, 300_000] {
                let l = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes, freed with their layout
                unsafe {
                    let z = a.alloc_zeroed(l);
                    assert!(!z.is_null());
                    assert_eq!(z as usize % align, 0, "{size} at {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    z.write_bytes(0xa5, size);
                    let r = a.realloc(z, l, size * 2);
                    assert_eq!(r as usize % align, 0);
                    assert!(std::slice::from_raw_parts(r, size)
                        .iter()
                        .all(|&b| b == 0xa5));
                    a.dealloc(r, Layout::from_size_align(size * 2, align).unwrap());
                }
            }
        }
    }

    /// The segment writer's pattern: a ~330 KB 64-aligned deflate state
    /// made and dropped once per page, small allocations between. The
    /// freed block must serve the next one (else every page is new heap,
    /// faulted in): at most a few distinct addresses over 20 rounds (the
    /// first may be an mmap; glibc's posix_memalign gave 14 here).
    #[test]
    fn large_aligned_blocks_are_reused_after_free() {
        let distinct = rounds(&AlignedMalloc);
        assert!(distinct <= 4, "{distinct} distinct blocks for 20 rounds");
    }

    /// What `keep_large_blocks_in_heap` protects: after it, a freed
    /// deflate-sized block's pages serve the next one, so the second
    /// round of make-zero-free faults in (almost) no page. Measured in a
    /// thread of its own (minor faults of this thread only; its own malloc
    /// arena), against the first round in the same thread.
    #[test]
    fn second_deflate_state_reuses_the_first_ones_pages() {
        keep_large_blocks_in_heap();
        let faults = std::thread::spawn(|| {
            let big = Layout::from_size_align(380_000, 64).unwrap();
            let mut per_round = Vec::new();
            for _ in 0..3 {
                let before = minor_faults();
                // SAFETY: freed with its layout
                unsafe {
                    let p = AlignedMalloc.alloc_zeroed(big);
                    assert!(!p.is_null());
                    AlignedMalloc.dealloc(p, big);
                }
                per_round.push(minor_faults() - before);
            }
            per_round
        })
        .join()
        .unwrap();
        // 380 KB is 93 pages: a new block faults most of them in
        assert!(
            faults[1] < 20 && faults[2] < 20,
            "page faults per round: {faults:?}"
        );
    }

    fn minor_faults() -> i64 {
        let mut ru = std::mem::MaybeUninit::<nix::libc::rusage>::zeroed();
        // SAFETY: getrusage fills the rusage it is given
        unsafe {
            assert_eq!(
                nix::libc::getrusage(nix::libc::RUSAGE_THREAD, ru.as_mut_ptr()),
                0
            );
            ru.assume_init().ru_minflt
        }
    }

    /// Distinct addresses of the big block over 20 rounds of `a`.
    fn rounds(a: &dyn GlobalAlloc) -> usize {
        let big = Layout::from_size_align(330_000, 64).unwrap();
        let small = Layout::from_size_align(40, 8).unwrap();
        let mut keep = Vec::new();
        let mut seen = std::collections::HashSet::new();
        // SAFETY: every block freed with its layout
        unsafe {
            for _ in 0..20 {
                let p = a.alloc_zeroed(big);
                assert!(!p.is_null());
                seen.insert(p as usize);
                keep.push(a.alloc(small));
                a.dealloc(p, big);
                keep.push(a.alloc(small));
            }
            for s in keep {
                a.dealloc(s, small);
            }
        }
        seen.len()
    }
}
