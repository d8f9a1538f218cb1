#!/usr/bin/env bash
# Where Linux's one-CPU pipe round trip goes, by source file: two boots of pingpong.c built with
# -DPROFILE_ROUNDS=N and 2N (threads, one CPU) under fairway's instruction-counting QEMU plugin
# (tools/qemu-profile, built by `cargo xtask profile`), subtracted address by address and divided
# by N, as `cargo xtask profile` does for fairway. Needs run.sh's kernel (run `run.sh pipe` first) and its
# debug symbols (the -dbg package, ~320 MB download, 1.8 GB unpacked).
#
# usage: profile.sh [TOP]        (also list the TOP functions)
set -euo pipefail
TOP=${1:-0}
WORK=${WORK:-/tmp/fairway-linux}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
PLUGIN="$REPO/target/qemu-profile/x86_64-unknown-linux-gnu/release/libqemu_profile.so"
cd "$WORK"
vmlinuz=$(ls root/boot/vmlinuz-* | head -1)
version=${vmlinuz#root/boot/vmlinuz-}
[ -f "$PLUGIN" ] || { echo "profile.sh: no $PLUGIN: run any \`cargo xtask profile\` once to build it" >&2; exit 1; }
if [ ! -f vmlinux ]; then
    pkg="linux-image-$version-dbg"
    echo "profile.sh: downloading $pkg for the symbols" >&2
    apt-get download "$pkg" >&2
    dpkg-deb --fsys-tarfile "$pkg"_*.deb | tar -x --wildcards "./usr/lib/debug/boot/vmlinux-$version"
    mv "usr/lib/debug/boot/vmlinux-$version" vmlinux && rm -rf usr "$pkg"_*.deb
fi
for n in 20000 40000; do
    gcc -O2 -Wall -static -pthread -DPROFILE_ROUNDS=$n -o "init$n" "$HERE/pingpong.c"
    python3 "$HERE/mkinitramfs.py" "init$n" "init$n.cpio"
    timeout 900 qemu-system-x86_64 -accel tcg -cpu max,-rdrand,-rdseed -smp 1 -m 512 -nodefaults -display none -no-reboot \
        -serial stdio -icount shift=0,sleep=off -rtc base=2020-01-01,clock=vm -plugin "$PLUGIN,out=$WORK/prof$n.txt" \
        -kernel "$vmlinuz" -initrd "init$n.cpio" -append "console=ttyS0 quiet mitigations=off nokaslr" | grep '^@linux' >&2
done
python3 "$HERE/linux_profile.py" prof20000.txt prof40000.txt 20000 vmlinux "$TOP"
