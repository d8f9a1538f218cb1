#!/usr/bin/env bash
# Linux under fairway's measurement: Debian's Linux 6.12 boots in the same QEMU (TCG,
# -icount shift=0,sleep=off, fixed RTC, -cpu max, 512 MiB) with one of the programs beside this
# file as /init, and the `@linux` lines it prints are shown:
#   pipe       pingpong.c: guest instructions per pipe round trip, threads and processes, one
#              CPU and across two, with and without DELAY_DEQUEUE (two minutes at -smp 2)
#   hackbench  hackbench.c: fairway's default hackbench (2 groups, 20+20 threads, 100 loops of
#              100 bytes) at eight tick phases, time and context switches, with and without
#              WAKEUP_PREEMPTION (half a minute)
#   latency    latency.c: fairway's `workload=latency` (two hogs and a sleeper with a custom
#              slice on CPU 0) for five slices under three feature sets (two minutes; use SMP 1)
# README.md beside this file has the measured figures and what differs from fairway's workloads.
# Without RDRAND/RDSEED (which TCG fills from the host) and without KASLR, every boot of one
# program prints the same figures, as fairway's -icount runs do.
#
# usage: run.sh [pipe|hackbench|latency] [SMP]      (defaults: pipe, 2)
# env:   LINUX_PKG   the Debian package to take the kernel from (default below, bookworm-backports)
#        WORK        scratch directory (default /tmp/fairway-linux)
set -euo pipefail
WHAT=${1:-pipe}
SMP=${2:-2}
case "$WHAT" in
    pipe) SRC=pingpong.c ;;
    hackbench) SRC=hackbench.c ;;
    latency) SRC=latency.c ;;
    *) echo "run.sh: unknown program \"$WHAT\" (pipe, hackbench or latency)" >&2; exit 2 ;;
esac
LINUX_PKG=${LINUX_PKG:-linux-image-6.12.95+deb12-cloud-amd64-unsigned}
WORK=${WORK:-/tmp/fairway-linux}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$WORK" && cd "$WORK"

vmlinuz=$(ls root/boot/vmlinuz-* 2>/dev/null | head -1 || true)
if [ -z "$vmlinuz" ]; then
    echo "run.sh: downloading $LINUX_PKG" >&2
    apt-get download "$LINUX_PKG" >&2 || {
        echo "run.sh: cannot download $LINUX_PKG (apt-cache search linux-image-6.12 lists what the mirror has; set LINUX_PKG)" >&2
        exit 1
    }
    dpkg-deb -x "$LINUX_PKG"_*.deb root
    vmlinuz=$(ls root/boot/vmlinuz-* | head -1)
fi
command -v gcc >/dev/null || { echo "run.sh: needs gcc (and libc6-dev for -static)" >&2; exit 1; }
gcc -O2 -Wall -static -pthread -o init "$HERE/$SRC"
python3 "$HERE/mkinitramfs.py" init init.cpio
echo "run.sh: booting $vmlinuz at -smp $SMP with $SRC as /init" >&2
timeout 900 qemu-system-x86_64 -accel tcg -cpu max,-rdrand,-rdseed -smp "$SMP" -m 512 -nodefaults -display none -no-reboot \
    -serial stdio -icount shift=0,sleep=off -rtc base=2020-01-01,clock=vm \
    -kernel "$vmlinuz" -initrd init.cpio -append "console=ttyS0 quiet mitigations=off nokaslr" | grep '^@linux'
