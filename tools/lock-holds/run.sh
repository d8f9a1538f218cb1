#!/bin/bash
# The mechanism's critical sections per lock class, in guest instructions: what the
# simulator's hardware profiles hold a lock for beyond its holder's clock
# (sim/src/hw/profile.rs: ICOUNT_HOLD_NS; docs/SIMULATOR.md, "Lock holds").
#
# The working tree's HEAD is exported (git archive) to OUT_DIR/src, instrument.patch makes
# every IrqMutex record its hold time (uptime at release less uptime at acquisition) per
# class and print `@fw lockhold class= holds= ns=` after the workload, and each cell boots
# under -icount (1 ns = one guest instruction). The same cells run in fairway-sim with the
# lock model on and 1 ns holds, whose `@fw hwlock` lines give the clock advance the simulator
# already charges inside each class's sections (the work the mechanism reports there: a
# balance pass, a pipe copy); table.py prints the difference per class.
# Usage: tools/lock-holds/run.sh [OUT_DIR]   (one kernel build from scratch, ~10 min)
set -eu
root=$(git rev-parse --show-toplevel)
cd "$root"
out=${1:-target/lock-holds}
src="$out/src"
rm -rf "$src"
mkdir -p "$src"
git archive --format=tar HEAD | tar -x -m -f - -C "$src"
patch -s -p1 -d "$src" < tools/lock-holds/instrument.patch
grep -q print_holds "$src/kernel/mech/src/entry.rs" || { echo "lock-holds: instrument.patch did not apply" >&2; exit 1; }
ones=$(python3 -c 'import sys; print(",".join("hold_%s_ns=1" % c for c in sys.argv[1:]))' \
  pi_lock balance_state runqueue hung_tasks registry wake_list sleepers wait_queue pipe idle_wait_slot wakee blocked_at task_stack task_entry trace_names semaphore_count held_ipis workload trace_ring memory console heap)
cells=(
  "1|workload=pipe,rounds=20000,mode=same"
  "2|workload=pipe,rounds=20000,mode=cross"
  "1|workload=hackbench,groups=1,loops=20"
  "1|workload=schbench,runtime_ms=100"
  "1|workload=tbench,ms=100"
  "1|workload=fserver,ms=100"
)
i=0
for cell in "${cells[@]}"; do
  n=${cell%%|*}; line=${cell#*|}
  w=${line#workload=}
  (cd "$src" && nice -n 5 cargo xtask run --icount --smp "$n" --timeout 300 --append "$line") > "$out/qemu-$i.log" 2>&1 \
    || { echo "lock-holds: the boot of $line at -smp $n failed: $out/qemu-$i.log" >&2; exit 1; }
  nice -n 5 cargo xtask sim "${w%%,*}" --machine "$n" --params "${w#*,}" --hw "icount,$ones" --release > "$out/sim-$i.log" 2>&1 \
    || { echo "lock-holds: the simulator's run of $line on $n CPUs failed: $out/sim-$i.log" >&2; exit 1; }
  i=$((i + 1))
done
python3 tools/lock-holds/table.py "$out"
