//! `profile --annotate SYMBOL`: the disassembly of one out-of-line function with each
//! instruction's executions per unit beside it, to see which path through the function the
//! per-symbol figure pays for (a call frame on a path where a condition usually holds, a lock
//! taken twice).
//!
//! The function is named by its demangled ELF symbol, as the per-symbol table shows it. Several
//! symbols can share that name (monomorphised copies, `{{vtable.shim}}`s): each copy that executed
//! is annotated, labelled by its address. A copy covers exactly the bytes the per-symbol table
//! charges to it (`Symbols::lookup`), so the copies' totals add up to that table's figure.
//! Disassembly is iced-x86's Intel syntax; source lines come from the DWARF when the ELF has it.

use std::fmt::Write as _;
use std::path::Path;

use iced_x86::{Decoder, DecoderOptions, Formatter as _, Instruction, IntelFormatter};
use object::{Object, ObjectSection, ObjectSymbol};

use crate::symbols::Symbols;

use super::inline::{workspace_relative, Debuginfo};

/// One copy of the function: where it starts and the bytes the per-symbol table charges to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymbolCopy {
    pub addr: u64,
    pub bytes: Vec<u8>,
}

/// The copies of the function `name` in the ELF `data`, in address order: every function symbol
/// whose demangled name is `name` and that `syms` resolves to itself (so an alias at the same
/// address as another name, which the symbol table drops, is not a copy). Each copy's bytes run
/// from its address for as long as `syms.lookup` charges them to it: its ELF size, or up to the
/// next symbol for a label without one.
pub fn copies(data: &[u8], syms: &Symbols, name: &str) -> Result<Vec<SymbolCopy>, String> {
    let file = object::File::parse(data).map_err(|e| format!("xtask profile --annotate: {e}"))?;
    let mut addrs: Vec<u64> = file
        .symbols()
        .filter(|s| s.address() != 0 && !s.is_undefined())
        .filter(|s| s.name().is_ok_and(|n| format!("{:#}", rustc_demangle::demangle(n)) == name))
        .map(|s| s.address())
        .filter(|&a| syms.lookup(a) == Some((name, 0)))
        .collect();
    addrs.sort_unstable();
    addrs.dedup();
    let mut out = Vec::new();
    for addr in addrs {
        let Some(sec) = file
            .sections()
            .find(|s| s.address() <= addr && addr - s.address() < s.size())
        else {
            continue;
        };
        let sdata = sec.data().map_err(|e| format!("xtask profile --annotate: {e}"))?;
        let from = (addr - sec.address()) as usize;
        if from >= sdata.len() {
            continue; // .bss-like: no bytes in the file
        }
        let len = sdata[from..]
            .iter()
            .enumerate()
            .take_while(|&(i, _)| syms.lookup(addr + i as u64) == Some((name, i as u64)))
            .count();
        out.push(SymbolCopy { addr, bytes: sdata[from..from + len].to_vec() });
    }
    Ok(out)
}

/// One instruction of an annotated copy.
#[derive(Debug, Clone, PartialEq)]
pub struct Insn {
    pub ip: u64,
    /// Intel syntax; a branch to another function gets its `<symbol+0xoff>`.
    pub text: String,
    /// Executions added by the second boot (the raw difference, not per unit).
    pub count: i64,
    /// `file:line` of the innermost inline frame (and its function when it was inlined), shown
    /// where it changes.
    pub source: Option<String>,
}

/// One copy, disassembled and counted.
#[derive(Debug, Clone, PartialEq)]
pub struct Annotated {
    pub addr: u64,
    pub insns: Vec<Insn>,
    /// The difference summed over the copy's bytes (the per-symbol table's share of this copy).
    pub total: i64,
    /// Of `total`, executions at addresses that are not the start of a decoded instruction
    /// (data in code, or a decoding that went out of step): should be 0.
    pub stray: i64,
}

/// Disassembles `copy` and puts beside each instruction its count in `delta`
/// (per address, sorted by address, as `subtract` returns it). `syms` names the targets of
/// branches out of the function; `source` gives an address's source line, if wanted.
pub fn annotate(
    copy: &SymbolCopy,
    delta: &[(u64, i64)],
    syms: &Symbols,
    source: &dyn Fn(u64) -> Option<String>,
) -> Annotated {
    let end = copy.addr + copy.bytes.len() as u64;
    let lo = delta.partition_point(|&(pc, _)| pc < copy.addr);
    let hi = delta.partition_point(|&(pc, _)| pc < end);
    let here = &delta[lo..hi];
    let total: i64 = here.iter().map(|&(_, d)| d).sum();
    let count_at = |ip: u64| here.binary_search_by_key(&ip, |&(pc, _)| pc).map_or(0, |i| here[i].1);

    let mut fmt = IntelFormatter::new();
    let o = fmt.options_mut();
    o.set_hex_prefix("0x");
    o.set_hex_suffix("");
    o.set_uppercase_hex(false);
    o.set_show_branch_size(false);
    o.set_branch_leading_zeros(false);
    o.set_first_operand_char_index(8);
    let mut decoder = Decoder::with_ip(64, &copy.bytes, copy.addr, DecoderOptions::NONE);
    let mut instr = Instruction::default();
    let mut insns = Vec::new();
    let mut last_source = None;
    while decoder.can_decode() {
        decoder.decode_out(&mut instr);
        let ip = instr.ip();
        let mut text = String::new();
        if instr.is_invalid() {
            let b = &copy.bytes[(ip - copy.addr) as usize..][..instr.len().max(1)];
            text = format!("(bad) {}", b.iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" "));
        } else {
            fmt.format(&instr, &mut text);
            let target = instr.near_branch_target();
            if target != 0 && !(copy.addr..end).contains(&target) {
                if let Some((n, off)) = syms.lookup(target) {
                    let _ = if off == 0 { write!(text, " <{n}>") } else { write!(text, " <{n}+{off:#x}>") };
                }
            }
        }
        let src = source(ip);
        let shown = if src.is_some() && src != last_source { src.clone() } else { None };
        if src.is_some() {
            last_source = src;
        }
        insns.push(Insn { ip, text, count: count_at(ip), source: shown });
    }
    let counted: i64 = insns.iter().map(|i| i.count).sum();
    Annotated { addr: copy.addr, insns, total, stray: total - counted }
}

/// The source of an address for the listing: the innermost inline frame's `file:line`, the file
/// shortened (`kernel/src/sync/pipe.rs`, `core/src/sync/atomic.rs`), and its function when that
/// is not `symbol` (i.e. it was inlined).
pub fn source_of(dbg: &Debuginfo, addr: u64, symbol: &str, root: &Path) -> Option<String> {
    let chain = dbg.chain(addr).ok()?;
    let f = chain.first()?;
    let mut s = format!("{}:{}", short_path(f.file.as_deref()?, root), f.line?);
    if let Some(func) = f.function.as_deref().filter(|&func| func != symbol) {
        let _ = write!(s, " {}", short_fn(func));
    }
    Some(s)
}

/// A source path as shown beside an instruction: relative to the workspace, or from the
/// standard library's `library/` or a crate's directory under the cargo registry.
pub fn short_path(file: &str, root: &Path) -> String {
    if let Some(rel) = workspace_relative(file, root) {
        return rel;
    }
    if let Some((_, rest)) = file.split_once("/library/") {
        return rest.to_string();
    }
    if let Some((_, rest)) = file.split_once("/registry/src/") {
        // Skip the index directory (index.crates.io-...).
        return rest.split_once('/').map_or(rest, |(_, r)| r).to_string();
    }
    file.to_string()
}

/// The last two `::` segments of a demangled name, not splitting inside `<...>`:
/// `IrqMutex<T>::lock` for `fairway_kernel::sync::irq_mutex::IrqMutex<T>::lock`.
pub fn short_fn(name: &str) -> &str {
    let (mut depth, mut cuts) = (0i32, Vec::new());
    let b = name.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'<' => depth += 1,
            b'>' => depth -= 1,
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') && (i == 0 || b[i - 1] != b':') => cuts.push(i + 2),
            _ => {}
        }
    }
    match cuts.len() {
        0 | 1 => name,
        n => &name[cuts[n - 2]..],
    }
}

/// The listing of one copy, per unit of `base` (`u` names the unit). Runs of at least `collapse`
/// instructions the difference does not contain become one line (0: never).
pub fn render(name: &str, a: &Annotated, base: u64, u: &str, collapse: usize) -> String {
    let unit = base as f64;
    let executed = a.insns.iter().filter(|i| i.count != 0).count();
    let mut s = format!(
        "{name} @ {:#x} ({:.1} insns/{u} in {} instructions, {executed} executed)\n",
        a.addr,
        a.total as f64 / unit,
        a.insns.len()
    );
    let mut i = 0;
    while i < a.insns.len() {
        let run = a.insns[i..].iter().take_while(|x| x.count == 0).count();
        if collapse > 0 && run >= collapse {
            let _ = writeln!(s, "{:>8}  ... {run} instructions not executed ...", "");
            i += run;
            continue;
        }
        let x = &a.insns[i];
        let n = if x.count == 0 { String::new() } else { format!("{:.2}", x.count as f64 / unit) };
        let mut line = format!("{n:>8}  {:x}  {}", x.ip, x.text);
        if let Some(src) = &x.source {
            let w = line.chars().count().max(56);
            line = format!("{line:<w$}  ; {src}");
        }
        let _ = writeln!(s, "{line}");
        i += 1;
    }
    if a.stray != 0 {
        let _ = writeln!(
            s,
            "({:.2} insns/{u} executed at addresses that are no instruction start of this listing)",
            a.stray as f64 / unit
        );
    }
    s
}

/// The whole `--annotate` text: each copy that executed, hottest first, then (for several
/// copies) their sum, and the copies that did not execute. Err (why, to follow the name) when
/// none executed.
pub fn render_all(name: &str, annotated: &[Annotated], base: u64, u: &str, collapse: usize) -> Result<String, String> {
    let mut hot: Vec<&Annotated> = annotated.iter().filter(|a| a.insns.iter().any(|i| i.count != 0) || a.total != 0).collect();
    if hot.is_empty() {
        return Err(format!(
            "ran no instruction more or less often in the second boot (in {} {})",
            annotated.len(),
            if annotated.len() == 1 { "copy" } else { "copies" }
        ));
    }
    hot.sort_by(|a, b| b.total.abs().cmp(&a.total.abs()).then(a.addr.cmp(&b.addr)));
    let mut s = String::new();
    let total: i64 = annotated.iter().map(|a| a.total).sum();
    if annotated.len() > 1 {
        let _ = writeln!(
            s,
            "{name}: {:.1} insns/{u} in {} copies ({} executed)\n",
            total as f64 / base as f64,
            annotated.len(),
            hot.len()
        );
    }
    for (k, a) in hot.iter().enumerate() {
        if k > 0 {
            s.push('\n');
        }
        s.push_str(&render(name, a, base, u, collapse));
    }
    let cold: Vec<String> =
        annotated.iter().filter(|a| !hot.iter().any(|h| h.addr == a.addr)).map(|a| format!("{:#x}", a.addr)).collect();
    if !cold.is_empty() {
        let _ = writeln!(s, "\n({} more copies not executed in the difference: {})", cold.len(), cold.join(", "));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms() -> Symbols {
        Symbols::from_list([
            (0x1000, 0x20, "_ZN1k1f17h0123456789abcdefE".to_string()),
            (0x2000, 0x10, "_ZN1k1g17h0123456789abcdefE".to_string()),
        ])
    }

    /// k::f: a frame, a test, a branch over a cold block with a call to k::g, and the return.
    fn f() -> SymbolCopy {
        let bytes = [
            0x55, // 1000 push rbp
            0x48, 0x89, 0xe5, // 1001 mov rbp,rsp
            0x85, 0xff, // 1004 test edi,edi
            0x75, 0x09, // 1006 jne 0x1011
            0x31, 0xc0, // 1008 xor eax,eax
            0x90, // 100a nop
            0x90, // 100b nop
            0xe8, 0xf3, 0x0f, 0x00, 0x00, // 100c call 0x2004 (k::g+0x4)
            0x5d, // 1011 pop rbp
            0xc3, // 1012 ret
        ];
        SymbolCopy { addr: 0x1000, bytes: bytes.to_vec() }
    }

    /// The hot path 4 times, one address of k::g (not this copy's) and one outside both.
    fn delta() -> Vec<(u64, i64)> {
        let mut d: Vec<(u64, i64)> = [0x1000, 0x1001, 0x1004, 0x1006, 0x1011, 0x1012].map(|a| (a, 4)).to_vec();
        d.insert(0, (0x0ff0, 9));
        d.push((0x2000, 5));
        d
    }

    fn no_source(_: u64) -> Option<String> {
        None
    }

    #[test]
    fn disassembles_and_counts_a_known_function() {
        let a = annotate(&f(), &delta(), &syms(), &no_source);
        let got: Vec<(u64, &str, i64)> = a.insns.iter().map(|i| (i.ip, i.text.as_str(), i.count)).collect();
        assert_eq!(
            got,
            vec![
                (0x1000, "push    rbp", 4),
                (0x1001, "mov     rbp,rsp", 4),
                (0x1004, "test    edi,edi", 4),
                (0x1006, "jne     0x1011", 4),
                (0x1008, "xor     eax,eax", 0),
                (0x100a, "nop", 0),
                (0x100b, "nop", 0),
                (0x100c, "call    0x2004 <k::g+0x4>", 0),
                (0x1011, "pop     rbp", 4),
                (0x1012, "ret", 4),
            ]
        );
        assert_eq!((a.total, a.stray), (24, 0));
        let text = render("k::f", &a, 2, "round", 0);
        let want = "k::f @ 0x1000 (12.0 insns/round in 10 instructions, 6 executed)\n\
                    \x20   2.00  1000  push    rbp\n\
                    \x20   2.00  1001  mov     rbp,rsp\n";
        assert!(text.starts_with(want), "{text}");
        assert!(text.contains("\n          100c  call    0x2004 <k::g+0x4>\n"), "{text}");
        assert!(text.ends_with("    2.00  1012  ret\n"), "{text}");
    }

    #[test]
    fn collapses_runs_not_executed() {
        let a = annotate(&f(), &delta(), &syms(), &no_source);
        let text = render("k::f", &a, 2, "round", 3);
        assert!(text.contains("    2.00  1006  jne     0x1011\n          ... 4 instructions not executed ...\n    2.00  1011  pop"), "{text}");
        assert!(!text.contains("xor"), "{text}");
        // A run shorter than the threshold is shown.
        let text = render("k::f", &a, 2, "round", 5);
        assert!(text.contains("xor") && !text.contains("not executed"), "{text}");
    }

    #[test]
    fn counts_off_the_instruction_starts_are_reported() {
        let mut d = delta();
        d.insert(2, (0x1002, 2)); // the middle of `mov rbp,rsp`
        let a = annotate(&f(), &d, &syms(), &no_source);
        assert_eq!((a.total, a.stray), (26, 2));
        assert!(render("k::f", &a, 2, "round", 3).contains("(1.00 insns/round executed at addresses that are no instruction start"));
    }

    #[test]
    fn source_lines_where_they_change() {
        let src = |pc: u64| Some(if pc < 0x1006 { "k/src/f.rs:1".to_string() } else { "k/src/f.rs:2 IrqMutex<T>::lock".to_string() });
        let a = annotate(&f(), &delta(), &syms(), &src);
        let shown: Vec<(u64, &str)> = a.insns.iter().filter_map(|i| Some((i.ip, i.source.as_deref()?))).collect();
        assert_eq!(shown, vec![(0x1000, "k/src/f.rs:1"), (0x1006, "k/src/f.rs:2 IrqMutex<T>::lock")]);
        let text = render("k::f", &a, 2, "round", 3);
        // Sources line up after the instruction, padded to one column.
        let at = format!("{:<56}  ; k/src/f.rs:1\n", "    2.00  1000  push    rbp");
        assert!(text.contains(&at), "{text}");
        assert!(text.contains("\n    2.00  1001  mov     rbp,rsp\n"), "{text}");
    }

    #[test]
    fn several_copies_and_none_executed() {
        let a = annotate(&f(), &delta(), &syms(), &no_source);
        let cold = Annotated { addr: 0x3000, insns: vec![], total: 0, stray: 0 };
        let warm = Annotated { addr: 0x4000, insns: vec![Insn { ip: 0x4000, text: "ret".into(), count: 2, source: None }], total: 2, stray: 0 };
        let text = render_all("k::f", &[cold.clone(), warm, a], 2, "round", 3).unwrap();
        assert!(text.starts_with("k::f: 13.0 insns/round in 3 copies (2 executed)\n\nk::f @ 0x1000 (12.0"), "{text}");
        assert!(text.contains("\nk::f @ 0x4000 (1.0 insns/round in 1 instructions, 1 executed)\n"), "{text}");
        assert!(text.ends_with("(1 more copies not executed in the difference: 0x3000)\n"), "{text}");
        let e = render_all("k::f", &[cold], 2, "round", 3).unwrap_err();
        assert_eq!(e, "ran no instruction more or less often in the second boot (in 1 copy)");
    }

    #[test]
    fn names_and_paths_shortened() {
        assert_eq!(short_fn("fairway_kernel::sync::irq_mutex::IrqMutex<T>::lock"), "IrqMutex<T>::lock");
        assert_eq!(short_fn("<fairway_kernel::a::B as core::ops::Drop>::drop"), "<fairway_kernel::a::B as core::ops::Drop>::drop");
        assert_eq!(short_fn("core::ptr::drop_in_place<a::b::C>"), "ptr::drop_in_place<a::b::C>");
        assert_eq!(short_fn("memcpy"), "memcpy");
        let root = Path::new("/ws");
        assert_eq!(short_path("/ws/kernel/src/sync/pipe.rs", root), "kernel/src/sync/pipe.rs");
        assert_eq!(short_path("/rustc/59807616e1/library/core/src/sync/atomic.rs", root), "core/src/sync/atomic.rs");
        assert_eq!(short_path("/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/spin-0.9.8/src/mutex.rs", root), "spin-0.9.8/src/mutex.rs");
    }

    // --- A real ELF: this test binary. A generic function's instances share one demangled name.

    #[inline(never)]
    fn generic_copy<T: Copy + Into<u64>>(x: &[T]) -> u64 {
        x.iter().fold(7u64, |a, &b| a.wrapping_mul(31).wrapping_add(b.into()))
    }

    #[test]
    fn finds_every_copy_in_this_test_binary() {
        assert_ne!(generic_copy::<u8>(std::hint::black_box(&[1, 2, 3])), generic_copy::<u32>(std::hint::black_box(&[1, 2, 4])));
        let exe = std::env::current_exe().unwrap();
        let data = std::fs::read(&exe).unwrap();
        let syms = Symbols::load(&exe).unwrap();
        let name = concat!(module_path!(), "::generic_copy");
        let c = copies(&data, &syms, name).unwrap();
        assert_eq!(c.len(), 2, "{:x?}", c.iter().map(|c| c.addr).collect::<Vec<_>>());
        for copy in &c {
            assert!(!copy.bytes.is_empty());
            // Every byte is the symbol's, the one after is not.
            let end = copy.addr + copy.bytes.len() as u64;
            assert_eq!(syms.lookup(end - 1).map(|(n, _)| n), Some(name));
            assert_ne!(syms.lookup(end).map(|(n, _)| n), Some(name));
            let a = annotate(copy, &[(copy.addr, 1)], &syms, &no_source);
            assert!(a.insns.iter().all(|i| !i.text.starts_with("(bad)")), "{:?}", a.insns);
            assert!(a.insns.last().is_some_and(|i| i.text == "ret"), "{:?}", a.insns);
            assert_eq!((a.total, a.stray, a.insns[0].count), (1, 0, 1));
        }
        assert!(copies(&data, &syms, concat!(module_path!(), "::no_such_fn")).unwrap().is_empty());
    }
}
