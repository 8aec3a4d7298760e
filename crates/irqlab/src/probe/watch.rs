//! A hardware data watchpoint counting one kernel variable's reads by the
//! calling thread (`perf_event_open` of type breakpoint, read/write, on a
//! kernel address; root or CAP_PERFMON). `probe --kernel` puts it on the
//! root of the IRQ descriptor tree, which `irq_to_desc()` reads once per
//! call: where `show_interrupts()` cannot be hooked (no trampolines, no
//! kprobes), the lookups it makes are still counted, one per IRQ number
//! it walks below `nr_irqs` (docs/probe.md). The counter runs only
//! between [`Watch::enable`] and [`Watch::disable`]: every hit is a debug
//! exception, so timed reads run with it off.
//!
//! The only unsafe code here is the `perf_event_open` system call and the
//! event's ioctls, under one documented `allow`; the descriptor is owned
//! (closed on drop, which removes the watchpoint).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PERF_TYPE_BREAKPOINT` (include/uapi/linux/perf_event.h).
const TYPE_BREAKPOINT: u32 = 5;
/// `HW_BREAKPOINT_RW` (include/uapi/linux/hw_breakpoint.h).
const BP_RW: u32 = 3;
/// `PERF_ATTR_SIZE_VER1`: the attribute through `bp_len`.
const ATTR_SIZE: u32 = 72;
/// Flag bits of the attribute's bit field: disabled, exclude_user,
/// exclude_hv.
const DISABLED: u64 = 1;
const EXCLUDE_USER: u64 = 1 << 4;
const EXCLUDE_HV: u64 = 1 << 6;
/// `PERF_EVENT_IOC_ENABLE`, `_DISABLE`, `_RESET` (`_IO('$', n)`).
const IOC_ENABLE: u64 = 0x2400;
const IOC_DISABLE: u64 = 0x2401;
/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_CLOEXEC: u64 = 1 << 3;

/// A counting watchpoint on `len` bytes at a kernel address.
#[derive(Debug)]
pub struct Watch {
    fd: OwnedFd,
}

/// The attribute as the kernel lays it out (9 u64 words, version 1).
fn attr(addr: u64, len: u64) -> [u64; 9] {
    let mut a = [0u64; 9];
    a[0] = u64::from(TYPE_BREAKPOINT) | (u64::from(ATTR_SIZE) << 32);
    a[5] = DISABLED | EXCLUDE_USER | EXCLUDE_HV;
    a[6] = u64::from(BP_RW) << 32; // wakeup_events (low half), bp_type
    a[7] = addr;
    a[8] = len;
    a
}

impl Watch {
    /// A disabled watchpoint on `len` (1, 2, 4 or 8) bytes at `addr`,
    /// counting the calling thread only, on any CPU.
    pub fn open(addr: u64, len: u64) -> io::Result<Watch> {
        Watch::open_attr(&attr(addr, len))
    }

    /// The event `a` describes, for this thread on any CPU.
    fn open_attr(a: &[u64; 9]) -> io::Result<Watch> {
        // SAFETY: `a` is a valid, initialised perf_event_attr of the size
        // its `size` field states, alive for the call; the other arguments
        // are plain integers (pid 0 = this thread, cpu -1 = any, no group).
        let fd = unsafe {
            nix::libc::syscall(
                nix::libc::SYS_perf_event_open,
                a.as_ptr(),
                0,
                -1,
                -1,
                FLAG_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = i32::try_from(fd).map_err(|_| io::Error::other("fd out of range"))?;
        // SAFETY: the kernel just returned this descriptor; nothing else owns it.
        Ok(Watch {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn ioctl(&self, request: u64) -> io::Result<()> {
        // SAFETY: a perf event descriptor we own; these requests take no
        // argument.
        let r = unsafe { nix::libc::ioctl(self.fd.as_raw_fd(), request as _, 0) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Count from now on.
    pub fn enable(&self) -> io::Result<()> {
        self.ioctl(IOC_ENABLE)
    }

    /// Stop counting (the count is kept).
    pub fn disable(&self) -> io::Result<()> {
        self.ioctl(IOC_DISABLE)
    }

    /// Reads counted while enabled, since the watchpoint was opened.
    pub fn count(&self) -> io::Result<u64> {
        let mut b = [0u8; 8];
        let n = nix::unistd::read(&self.fd, &mut b).map_err(io::Error::from)?;
        if n != 8 {
            return Err(io::Error::other(format!(
                "perf counter read gave {n} bytes, expected 8"
            )));
        }
        Ok(u64::from_ne_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn attribute_has_the_kernels_layout() {
        let a = attr(0xffff_ffff_830f_1668, 8);
        assert_eq!(a[0] & 0xffff_ffff, 5, "type breakpoint");
        assert_eq!(a[0] >> 32, 72, "size VER1");
        assert_eq!(a[5], 1 | 16 | 64, "disabled, exclude_user, exclude_hv");
        assert_eq!(a[6] >> 32, 3, "bp_type RW");
        assert_eq!((a[7], a[8]), (0xffff_ffff_830f_1668, 8));
    }

    /// A user-space variable of this thread: the same event type on an
    /// address the test owns (kernel addresses need root and a decoded
    /// address); skips visibly where breakpoints are not available.
    #[test]
    fn counts_this_threads_reads_of_a_variable_only_while_enabled_or_skip() {
        use std::sync::atomic::{AtomicU64, Ordering};
        static V: AtomicU64 = AtomicU64::new(0);
        let a = attr(std::ptr::addr_of!(V) as u64, 8);
        // user-space variant: count user reads, not kernel ones
        let mut u = a;
        u[5] = DISABLED | (1 << 5) | EXCLUDE_HV;
        let w = match Watch::open_attr(&u) {
            Ok(w) => w,
            Err(e) => {
                use std::io::Write as _;
                let _ = writeln!(
                    io::stderr(),
                    "probe::watch: counts_this_threads_reads_of_a_variable_only_while_enabled_or_skip: \
                     SKIPPED: no hardware breakpoints here ({e})"
                );
                return;
            }
        };
        V.load(Ordering::SeqCst);
        assert_eq!(w.count().unwrap(), 0, "disabled: not counted");
        w.enable().unwrap();
        for _ in 0..5 {
            V.load(Ordering::SeqCst);
        }
        w.disable().unwrap();
        V.load(Ordering::SeqCst);
        assert_eq!(w.count().unwrap(), 5);
    }
}
