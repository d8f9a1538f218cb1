#!/bin/bash
# The cross-check of docs/SIMULATOR.md: every benchmark workload at 1, 2 and 4 CPUs, once in
# fairway-sim and once in QEMU under -icount, with the same short parameters; then the table.
# Usage: tools/sim-crosscheck/run.sh [OUT_DIR]   (~2 min of QEMU). Then the check of
# sim/tests/crosscheck.rs on these live QEMU logs instead of its checked-in reference (the
# default run, `cargo xtask test`, uses the reference; tools/sim-crosscheck/reference.sh
# makes a new one from OUT_DIR).
set -u
out=${1:-target/sim-crosscheck}
cd "$(git rev-parse --show-toplevel)" && mkdir -p "$out"
declare -A P=([pipe]="rounds=2000" [hackbench]="groups=1,loops=20" [schbench]="runtime_ms=100" [tbench]="ms=100" [fserver]="ms=100")
for w in pipe hackbench schbench tbench fserver; do for n in 1 2 4; do
  nice -n 5 cargo xtask sim $w --machine $n --params "${P[$w]}" --release > "$out/sim-$w-$n.log" 2>&1
  nice -n 5 cargo xtask run --icount --smp $n --timeout 120 --append "workload=$w,${P[$w]}" > "$out/qemu-$w-$n.log" 2>&1
done; done
python3 tools/sim-crosscheck/table.py "$out"
XCHECK_QEMU_DIR="$(cd "$out" && pwd)" nice -n 5 cargo test -q -p fairway-sim --test crosscheck
