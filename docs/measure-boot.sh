#!/usr/bin/env bash
# Measures fairway's SMP bring-up: for each -smp, three boots; prints the kernel's own
# "entry to last CPU online" time (boot_us, from the TSC) and the wall time of the whole QEMU run.
# Usage: docs/measure-boot.sh   (from the repository root; builds the kernel first)
set -euo pipefail
cd "$(dirname "$0")/.."
elf=$(cargo xtask build | tail -1)
printf '%-5s %-4s %12s %10s\n' smp run boot_ms wall_s
for smp in 1 2 4 8 16 32 64; do
  for run in 1 2 3; do
    start=$(date +%s.%N)
    out=$(qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m 512 -nodefaults -display none \
      -no-reboot -serial stdio -device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel "$elf" || true)
    end=$(date +%s.%N)
    us=$(grep -a -o 'boot_us=[0-9]*' <<<"$out" | cut -d= -f2)
    printf '%-5s %-4s %12.1f %10.2f\n' "$smp" "$run" "$(bc -l <<<"$us/1000")" "$(bc -l <<<"$end-$start")"
  done
done
