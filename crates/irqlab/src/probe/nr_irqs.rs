//! The kernel's `nr_irqs` read from kernel memory, for `probe --kernel`
//! where `show_interrupts()` cannot be hooked (so the largest position it
//! is called with is not seen). No file shows `nr_irqs` and the variable
//! is static (not in /proc/kallsyms without CONFIG_KALLSYMS_ALL), but its
//! accessor `irq_get_nr_irqs()` is: the accessor's first instruction is
//! `mov eax, [rip + disp32]` of the variable, so one copy of the
//! accessor's code gives the variable's address and a second copy its
//! value (both copies by the BPF probe, `irqlab_bpf::probe_loader`'s
//! `peek`). The descriptor tree is found the same way, from the code of
//! `irq_to_desc()`, for the watchpoint that counts the walk's lookups
//! (`super::watch`). Pure decoding here; anything but the expected code
//! gives no value, never a guess.

use crate::host::HostFs;
use irqlab_core::paths::PROC_KALLSYMS;

/// The accessor whose code names the variable.
pub const ACCESSOR: &str = "irq_get_nr_irqs";

/// The descriptor lookup whose code names the descriptor tree.
pub const LOOKUP: &str = "irq_to_desc";

/// Offset of the root pointer (`ma_root`) in the kernel's `struct
/// maple_tree`: after a 4-byte lock and 4-byte flags (a kernel with
/// lock debugging has a larger lock; there the count does not match
/// `nr_irqs` and is reported as such).
pub const TREE_ROOT_OFFSET: u64 = 8;

/// Address of the text symbol `name` in /proc/kallsyms under `fs`
/// (None when absent or hidden: all-zero addresses under kptr_restrict).
pub fn symbol(fs: &HostFs, name: &str) -> Option<u64> {
    let mut buf = Vec::new();
    let mut found = None;
    fs.for_each_line(PROC_KALLSYMS, &mut buf, |line| {
        if found.is_none() {
            found = kallsyms_line(line, name);
        }
        Ok::<(), std::io::Error>(())
    })
    .ok()?;
    found.filter(|&a| a != 0)
}

/// `ffffffff813ea710 T irq_get_nr_irqs` -> the address, for a text (`T`
/// or `t`) symbol of that exact name.
fn kallsyms_line(line: &[u8], name: &str) -> Option<u64> {
    let text = std::str::from_utf8(line).ok()?;
    let mut f = text.split_ascii_whitespace();
    let (addr, kind, sym) = (f.next()?, f.next()?, f.next()?);
    if sym != name || !matches!(kind, "T" | "t") {
        return None;
    }
    u64::from_str_radix(addr, 16).ok()
}

/// Where a function's own code starts: past an optional `endbr64` and
/// an optional 5-byte ftrace site (`nop DWORD PTR [rax+rax*1+0x0]` or a
/// `call`).
fn after_entry(code: &[u8]) -> usize {
    let mut at = 0usize;
    if code.get(..4) == Some(&[0xf3, 0x0f, 0x1e, 0xfa]) {
        at += 4;
    }
    match code.get(at..at + 5) {
        Some([0x0f, 0x1f, 0x44, 0x00, 0x00]) | Some([0xe8, _, _, _, _]) => at + 5,
        _ => at,
    }
}

/// The address `mov eax, [rip + disp32]` loads, from the code of the
/// accessor at `func`: after an optional `endbr64` and an optional 5-byte
/// ftrace site (`nop DWORD PTR [rax+rax*1+0x0]` or a `call`), the next
/// instruction must be `8b 05 disp32`. None for any other code.
pub fn decode_load(func: u64, code: &[u8]) -> Option<u64> {
    let at = after_entry(code);
    let insn = code.get(at..at + 6)?;
    if insn[..2] != [0x8b, 0x05] {
        return None;
    }
    let disp = i32::from_le_bytes([insn[2], insn[3], insn[4], insn[5]]);
    let next = func.checked_add(u64::try_from(at + 6).ok()?)?;
    Some(next.wrapping_add_signed(i64::from(disp)))
}

/// The descriptor tree `irq_to_desc(irq)` searches, from the code of the
/// lookup at `func`: after the same optional `endbr64` and ftrace site,
/// `mov esi, edi` (the IRQ number becomes the key) and the tree's address
/// into rdi, `mov rdi, imm32` (sign-extended) or `lea rdi, [rip +
/// disp32]`, in either order, then a jump or call (to `mtree_load`).
/// None for any other code.
pub fn decode_tree(func: u64, code: &[u8]) -> Option<u64> {
    let mut at = after_entry(code);
    let mut tree = None;
    let mut key = false;
    for _ in 0..2 {
        match code.get(at..at + 3)? {
            [0x89, 0xfe, _] if !key => {
                key = true;
                at += 2;
            }
            [0x48, 0xc7, 0xc7] if tree.is_none() => {
                let imm = code.get(at + 3..at + 7)?;
                let v = i32::from_le_bytes([imm[0], imm[1], imm[2], imm[3]]);
                tree = Some(i64::from(v) as u64);
                at += 7;
            }
            [0x48, 0x8d, 0x3d] if tree.is_none() => {
                let d = code.get(at + 3..at + 7)?;
                let disp = i32::from_le_bytes([d[0], d[1], d[2], d[3]]);
                let next = func.checked_add(u64::try_from(at + 7).ok()?)?;
                tree = Some(next.wrapping_add_signed(i64::from(disp)));
                at += 7;
            }
            _ => return None,
        }
    }
    matches!(code.get(at)?, 0xe9 | 0xe8).then_some(tree?)
}

/// The value read at the variable's address: its first 4 bytes (an
/// `unsigned int`), accepted only when it covers every allocated
/// descriptor (`bound`: largest IRQ number in /sys/kernel/irq + 1): a
/// value below that cannot be `nr_irqs`.
pub fn value(bytes: &[u8], bound: Option<u32>) -> Option<i64> {
    let v = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?);
    (v > 0 && bound.is_none_or(|b| v >= b)).then_some(i64::from(v))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn decode_load_finds_the_rip_relative_variable_after_endbr_and_the_ftrace_site() {
        // endbr64; nop5; mov eax, [rip+0x10]; ret
        let code = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x0f, 0x1f, 0x44, 0x00, 0x00, 0x8b, 0x05, 0x10, 0x00, 0x00,
            0x00, 0xc3,
        ];
        assert_eq!(decode_load(0x1000, &code), Some(0x1000 + 15 + 0x10));
        // plain mov, negative displacement
        let code = [0x8b, 0x05, 0xf0, 0xff, 0xff, 0xff, 0xc3];
        assert_eq!(decode_load(0x1000, &code), Some(0x1000 + 6 - 0x10));
        // anything else is no value
        assert_eq!(decode_load(0x1000, &[0x48, 0x8b, 0x05, 0, 0, 0, 0]), None);
        assert_eq!(decode_load(0x1000, &[0x8b, 0x05, 0x10]), None);
    }

    #[test]
    fn decode_tree_finds_the_tree_irq_to_desc_passes_to_mtree_load() {
        // nop5; mov esi, edi; mov rdi, 0xffffffff830f1660; jmp mtree_load
        // (this VM's kernel, 6.18)
        let code = [
            0x0f, 0x1f, 0x44, 0x00, 0x00, 0x89, 0xfe, 0x48, 0xc7, 0xc7, 0x60, 0x16, 0x0f, 0x83,
            0xe9, 0x8d, 0xef, 0xdd, 0x00,
        ];
        assert_eq!(decode_tree(0x1000, &code), Some(0xffff_ffff_830f_1660));
        // endbr64; lea rdi, [rip+0x20]; mov esi, edi; call
        let code = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8d, 0x3d, 0x20, 0, 0, 0, 0x89, 0xfe, 0xe8, 0, 0, 0, 0,
        ];
        assert_eq!(decode_tree(0x1000, &code), Some(0x1000 + 11 + 0x20));
        // no key move, a different register, no jump after, truncated: none
        let no_key = [0x48, 0xc7, 0xc7, 0x60, 0x16, 0x0f, 0x83, 0xe9, 0, 0, 0, 0];
        assert_eq!(decode_tree(0x1000, &no_key), None);
        let rsi = [0x89, 0xfe, 0x48, 0xc7, 0xc6, 0x60, 0x16, 0x0f, 0x83, 0xe9];
        assert_eq!(decode_tree(0x1000, &rsi), None);
        let no_jump = [0x89, 0xfe, 0x48, 0xc7, 0xc7, 0x60, 0x16, 0x0f, 0x83, 0xc3];
        assert_eq!(decode_tree(0x1000, &no_jump), None);
        assert_eq!(decode_tree(0x1000, &code[..9]), None);
    }

    #[test]
    fn value_must_cover_every_allocated_descriptor() {
        assert_eq!(value(&424u32.to_le_bytes(), Some(44)), Some(424));
        assert_eq!(value(&40u32.to_le_bytes(), Some(44)), None);
        assert_eq!(value(&0u32.to_le_bytes(), None), None);
        assert_eq!(value(&[1, 2], None), None);
    }

    #[test]
    fn symbol_reads_the_text_symbol_of_that_exact_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("proc")).unwrap();
        std::fs::write(
            dir.path().join("proc/kallsyms"),
            "ffffffff813ea700 T __pfx_irq_get_nr_irqs\nffffffff813ea710 T irq_get_nr_irqs\n",
        )
        .unwrap();
        let fs = HostFs::new(dir.path());
        assert_eq!(symbol(&fs, ACCESSOR), Some(0xffff_ffff_813e_a710));
        assert_eq!(symbol(&fs, "nr_irqs"), None);
        std::fs::write(
            dir.path().join("proc/kallsyms"),
            "0000000000000000 T irq_get_nr_irqs\n",
        )
        .unwrap();
        assert_eq!(symbol(&fs, ACCESSOR), None, "hidden by kptr_restrict");
    }
}
