#!/usr/bin/env bash
# Boot cost under -icount (README "Running" --icount flags): for each -smp, three bare boots
# (workload=pipe,rounds=1); prints the guest time until the workload starts (with
# shift=0 one guest ns is one instruction: the `log=debug` line "the workload starts") and the
# host CPU seconds (user+sys) and wall seconds of the whole QEMU run from /usr/bin/time.
# Usage: docs/measure-boot-cost.sh [ELF]   (from the repository root; builds the kernel
# when no ELF is given)
set -euo pipefail
cd "$(dirname "$0")/.."
elf=${1:-$(cargo xtask build | tail -1)}
printf '%-5s %-4s %14s %10s %8s\n' smp run to_workload_us cpu_s wall_s
for smp in 1 2 4 8; do
  icount=shift=0,sleep=off
  # xtask's --icount at one CPU (xtask/src/qemu.rs ICOUNT_ONE_CPU)
  [ "$smp" = 1 ] && icount=$icount,rr=record,rrfile=/dev/null
  for run in 1 2 3; do
    out=$( { /usr/bin/time -f '@time %U %S %e' qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" \
      -m 512 -nodefaults -display none -no-reboot -serial stdio \
      -device isa-debug-exit,iobase=0xf4,iosize=0x04 -icount "$icount" \
      -rtc base=2020-01-01,clock=vm -kernel "$elf" \
      -append "workload=pipe,rounds=1 log=debug" || true; } 2>&1)
    start=$(grep -a 'the workload starts' <<<"$out" | sed 's/^\[ *\([0-9]*\)\.\([0-9]*\)\].*/\1\2/')
    read -r user sys wall < <(grep -a '^@time' <<<"$out" | cut -d' ' -f2-)
    printf '%-5s %-4s %14d %10.2f %8.2f\n' "$smp" "$run" "$((10#$start))" "$(bc -l <<<"$user+$sys")" "$wall"
  done
done
