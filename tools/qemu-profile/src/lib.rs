//! A QEMU TCG plugin that counts how many times each guest instruction executed, for
//! `cargo xtask profile`.
//!
//! QEMU plugin API v4 (QEMU 10.0). Argument: `out=PATH`. When QEMU exits (including through the
//! `isa-debug-exit` device the kernel uses), it writes to PATH:
//!
//! ```text
//! fairway-qemu-profile v1
//! 14a351 2000            one line per executed instruction: vaddr (hex), executions (all vCPUs)
//! ...
//! end insns=123456789
//! ```
//!
//! The `end` line proves the file is complete; `insns` is the sum of all counts.
//!
//! Counts are not split by vCPU: QEMU 10.0 passes an execution callback the index of the vCPU
//! that *translated* the block, not of the one running it, whenever TCG runs all vCPUs on one
//! thread, which `-icount` always does (`gen_cpu_index` folds it to a constant unless
//! `CF_PARALLEL`). Checked against `-d exec,nochain`: a function entered 405 times on vCPU 0 and
//! 401 times on vCPU 1 was reported 806 times on vCPU 0. The number of calls is right.
//!
//! # What is counted, and when it is exact
//!
//! Counting is per translated block (TB): one callback per block execution adds 1 to the
//! block's counter; at exit each count is credited to every instruction of the
//! block. That equals the instructions executed whenever each entered block runs to its end.
//! In QEMU 10.0 (`accel/tcg/translator.c`, `cpu-exec.c`, `translate-all.c`):
//!
//! - The callback runs after the block's prologue, which in `-icount` mode subtracts the
//!   block's length from the vCPU's budget and leaves the block before its first instruction
//!   (and before the callback) when the budget is exhausted or an interrupt or exit is pending.
//!   A block that is left there is not counted.
//! - Interrupts are taken only between blocks, never inside one. Under `-icount`, a block that
//!   would run past the next timer deadline is not entered: QEMU translates a block with the
//!   same start address and only the instructions left in the budget, and runs that instead.
//!   That shorter block is a separate translation with its own instruction list here, so
//!   interrupts land exactly and are counted exactly.
//! - Port I/O (`in`/`out`), `wrmsr`, `hlt` end their block, so they are exact too.
//!
//! Two cases overcount: an instruction that raises an exception in the middle of a block (page
//! fault, `#UD`, `#GP`, ...) leaves the rest of the block unexecuted but counted; and, under
//! `-icount`, memory-mapped I/O by an instruction that is not its block's last makes QEMU
//! abandon the block there, run that instruction alone in a block that carries no execution
//! callbacks, and go on in a new block, so the instructions after it are counted twice.
//! fairway's steady state has neither with `-cpu max` (x2APIC through MSRs, the UART through
//! port I/O, no faults); with `-cpu qemu64` the xAPIC is memory-mapped and APIC accesses can
//! overcount by the rest of their block. `cargo xtask profile` boots with `-cpu max`.
//!
//! Crediting a block's count to each of its instructions (rather than to its start address)
//! keeps the attribution to functions exact when a block falls through from one symbol into the
//! next (assembly labels).

#![deny(unsafe_op_in_unsafe_fn)]

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use qemu_plugin_sys::{
    qemu_info_t, qemu_plugin_cb_flags, qemu_plugin_id_t, qemu_plugin_insn_vaddr,
    qemu_plugin_register_atexit_cb, qemu_plugin_register_vcpu_tb_exec_cb,
    qemu_plugin_register_vcpu_tb_trans_cb, qemu_plugin_tb, qemu_plugin_tb_get_insn,
    qemu_plugin_tb_n_insns, QEMU_PLUGIN_VERSION,
};

/// The plugin API version this plugin was built against; QEMU refuses to load a mismatch.
#[no_mangle]
pub static qemu_plugin_version: c_int = QEMU_PLUGIN_VERSION as c_int;

/// One distinct translation: its instructions and how often it ran. Blocks are leaked (their
/// address is the callback's user data) and deduplicated by instruction list, so retranslating
/// the same code reuses the counter.
struct Block {
    insns: Box<[u64]>,
    count: AtomicU64,
}

struct State {
    out: PathBuf,
    blocks: HashMap<Box<[u64]>, &'static Block>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn state() -> MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

unsafe extern "C" fn on_exec(_vcpu: c_uint, udata: *mut c_void) {
    // SAFETY: `udata` is the `&'static Block` registered in `on_translate`; blocks are leaked,
    // never freed or mutated except through their atomic.
    let block = unsafe { &*(udata as *const Block) };
    block.count.fetch_add(1, Ordering::Relaxed);
}

unsafe extern "C" fn on_translate(_id: qemu_plugin_id_t, tb: *mut qemu_plugin_tb) {
    // SAFETY: QEMU passes a block handle that stays valid for the duration of this callback.
    let n = unsafe { qemu_plugin_tb_n_insns(tb) };
    let insns: Box<[u64]> = (0..n)
        // SAFETY: `i < n`, so the instruction handle exists and is valid during the callback.
        .map(|i| unsafe { qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i)) })
        .collect();
    let block: &'static Block = {
        let mut guard = state();
        let Some(st) = guard.as_mut() else { return };
        st.blocks.entry(insns).or_insert_with_key(|k| {
            Box::leak(Box::new(Block { insns: k.clone(), count: AtomicU64::new(0) }))
        })
    };
    // SAFETY: `tb` is valid during this callback; the user data is a leaked `Block` that
    // outlives every execution of the block, and `on_exec` only reads it through atomics.
    unsafe {
        qemu_plugin_register_vcpu_tb_exec_cb(
            tb,
            Some(on_exec),
            qemu_plugin_cb_flags::QEMU_PLUGIN_CB_NO_REGS,
            block as *const Block as *mut c_void,
        );
    }
}

/// Sums the block counts per instruction address, sorted by address.
fn per_insn(blocks: &HashMap<Box<[u64]>, &'static Block>) -> Vec<(u64, u64)> {
    let mut m: HashMap<u64, u64> = HashMap::new();
    for b in blocks.values() {
        let c = b.count.load(Ordering::Relaxed);
        if c == 0 {
            continue;
        }
        for &pc in b.insns.iter() {
            *m.entry(pc).or_default() += c;
        }
    }
    let mut v: Vec<_> = m.into_iter().collect();
    v.sort_unstable();
    v
}

fn write_profile(path: &Path, rows: &[(u64, u64)]) -> std::io::Result<()> {
    // Written next to PATH and renamed, so PATH never holds a partial profile.
    let tmp = path.with_extension("partial");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    writeln!(f, "fairway-qemu-profile v1")?;
    let mut total = 0u64;
    for &(pc, c) in rows {
        writeln!(f, "{pc:x} {c}")?;
        total += c;
    }
    writeln!(f, "end insns={total}")?;
    f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    std::fs::rename(&tmp, path)
}

unsafe extern "C" fn on_exit(_id: qemu_plugin_id_t, _udata: *mut c_void) {
    let guard = state();
    let Some(st) = guard.as_ref() else { return };
    let rows = per_insn(&st.blocks);
    if let Err(e) = write_profile(&st.out, &rows) {
        eprintln!("qemu-profile: cannot write {}: {e}", st.out.display());
    }
}

/// QEMU's entry point: `-plugin libqemu_profile.so,out=PATH`.
///
/// # Safety
/// Called by QEMU with `argc` valid C strings in `argv`.
#[no_mangle]
pub unsafe extern "C" fn qemu_plugin_install(
    id: qemu_plugin_id_t,
    _info: *const qemu_info_t,
    argc: c_int,
    argv: *mut *mut c_char,
) -> c_int {
    let mut out = None;
    for i in 0..usize::try_from(argc).unwrap_or(0) {
        // SAFETY: QEMU passes `argc` valid, NUL-terminated strings in `argv`.
        let arg = unsafe { CStr::from_ptr(*argv.add(i)) }.to_string_lossy();
        match arg.split_once('=') {
            Some(("out", p)) if !p.is_empty() => out = Some(PathBuf::from(p)),
            _ => {
                eprintln!("qemu-profile: unknown argument `{arg}` (expected out=PATH)");
                return -1;
            }
        }
    }
    let Some(out) = out else {
        eprintln!("qemu-profile: missing the out=PATH argument");
        return -1;
    };
    *state() = Some(State { out, blocks: HashMap::new() });
    // SAFETY: `id` is ours; the callbacks are `extern "C"` functions with the expected types.
    unsafe {
        qemu_plugin_register_vcpu_tb_trans_cb(id, Some(on_translate));
        qemu_plugin_register_atexit_cb(id, Some(on_exit), std::ptr::null_mut());
    }
    0
}
