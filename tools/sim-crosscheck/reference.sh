#!/bin/bash
# Prints the checked-in QEMU reference of sim/tests/crosscheck.rs from run.sh's logs:
# per cell a `## W N` header and the @fw lines the check reads.
# Usage: tools/sim-crosscheck/reference.sh DIR > sim/tests/crosscheck/qemu-reference.txt
# (then put back the header lines: commit, date, command).
set -eu
dir=$1
for w in pipe hackbench schbench tbench fserver; do for n in 1 2 4; do
  echo "## $w $n"
  grep -oE "@fw (schedstat_delta|domstat|newidle|workload_done) .*" "$dir/qemu-$w-$n.log" | tr -d '\r'
done; done
