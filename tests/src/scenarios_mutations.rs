//! The mutations of `every_scenario_fails_when_its_key_line_is_wrong`: per scenario, a line
//! (or part of one) of its synthetic log and what it becomes, each a change that scenario's
//! check must reject. Data only, kept apart from the test that applies it.

/// `(scenario, text in its synthetic log, replacement)`; the first occurrence is replaced.
pub(super) const KEY_LINES: &[(&str, &str, &str)] = &[
    ("smp-1", "online=1 expected=1", "online=0 expected=1"),
    // a switch that lost rbx, named; no preempted hog (no resume through restore_frame); short
    (
        "regs-smp1",
        "@fw regs phase=pair cpu=0 checks=4000 mismatches=0\n",
        "@fw regs_mismatch phase=pair thread=regs-a round=0 register=rbx expected=0xb0b1000100000000 found=0xb0b2000100000000\n@fw regs phase=pair cpu=0 checks=4000 mismatches=1\n",
    ),
    ("regs-smp1", "hog_preemptions=1400", "hog_preemptions=19"),
    ("regs-smp1", "phase=pair cpu=0 checks=4000", "phase=pair cpu=0 checks=3999"),
    ("regs-smp1", "@fw regs phase=spinner", "@fw regs phase=pair"),
    // a kernel that checks no memory: no word on it, the self-check runs out of heap
    ("memory-too-small-smp31", "@fw boot_fatal msg=", "@fw oom size=524288 align=8 heap_used=7893960 heap_size=8388608\n@fw note msg="),
    ("memory-too-small-smp31", "msg=31 MiB is too small for 31 CPUs: need at least 48 MiB", "msg=31 MiB is too small for 31 CPUs: need at least 47 MiB"),
    ("memory-enough-smp31", "online=31 expected=31", "online=30 expected=31"),
    ("memory-enough-smp31", "usable_kib=52224", "usable_kib=40960"),
    // microvm's TSC rate 1000x low, accepted without a second measurement
    ("machine-microvm", "@fw timer tsc_hz=2603562000", "@fw timer tsc_hz=2431000"),
    ("machine-microvm", "measuring against channel 0\n", "\n"),
    ("machine-microvm", "result=ok", "result=fail"),
    ("machine-no-pit", "@fw boot_fatal msg=", "@fw timer tsc_hz=2631000\n@fw note msg="),
    ("smp-2", "@fw cpu id=1 ", "@fw cpu id=7 "),
    // QEMU's -kernel: Multiboot 1, ACPI from the BIOS-area scan
    ("smp-2", "rsdp_source=bios_scan", "rsdp_source=mb2_old"),
    ("smp-8", "protocol=multiboot1", "protocol=multiboot2"),
    ("smp-4", "result=ok", "result=fail"),
    (
        "smp-8",
        "@fw sd cpu=3 level=MC span=0-7 groups=3/4/5/6/7/0/1/2",
        "@fw sd cpu=3 level=MC span=0-7 groups=0/1/2/3/4/5/6/7",
    ),
    (
        "smp-16",
        "@fw sd cpu=15 level=MC",
        "@fw sd cpu=15 level=PKG",
    ),
    ("smp-32", "online=32 expected=32", "online=31 expected=32"),
    ("smp-64", "@fw cpu id=63 ", "@fw cpu id=62 "),
    ("smp-288-x2apic", "@fw cpu id=287 ", "@fw cpu id=286 "),
    ("smp-288-x2apic", "@fw apic mode=x2apic", "@fw apic mode=xapic"),
    (
        "topo-2s2c2t",
        "@fw sd cpu=5 level=PKG span=0-7 groups=4-7/0-3",
        "@fw sd cpu=5 level=PKG span=0-7 groups=0-3/4-7",
    ),
    (
        "topo-2s2c2t",
        "@fw cpu id=5 apic=5 pkg=1 core=0 smt=1",
        "@fw cpu id=5 apic=5 pkg=1 core=1 smt=1",
    ),
    (
        "topo-numa2",
        "@fw cpu id=6 apic=6 pkg=1 core=2 smt=0 llc=1 node=1",
        "@fw cpu id=6 apic=6 pkg=1 core=2 smt=0 llc=1 node=0",
    ),
    (
        "topo-1s4c2t",
        "@fw sd cpu=2 level=SMT span=2-3 groups=2/3 flags=0x0\n",
        "",
    ),
    (
        "topo-4s1c1t",
        "@fw cpu id=2 apic=2 pkg=2",
        "@fw cpu id=2 apic=2 pkg=0",
    ),
    (
        "topo-numa2",
        "@fw sd cpu=6 level=NUMA span=0-7 groups=4-7/0-3",
        "@fw sd cpu=6 level=PKG span=0-7 groups=4-7/0-3",
    ),
    ("topo-numa2", "numa_nodes=2", "numa_nodes=1"),
    ("apic-xapic", "mode=xapic", "mode=x2apic"),
    ("apic-x2apic", "mode=x2apic", "mode=xapic"),
    ("no-acpi", "none=1", "rsdp=0xf5000 cpus=1"),
    // the image: the kernel loaded through Multiboot 1; the RSDP from the scan, not GRUB's tag;
    // GRUB's other tag; a problem with its information; a CPU without its hogs; the demo
    // failed; CPUs missing; ACPI found where there is none.
    ("image-bios-smp4", "protocol=multiboot2", "protocol=multiboot1"),
    ("image-bios-smp4", "rsdp_source=mb2_old", "rsdp_source=bios_scan"),
    ("image-uefi-smp4", "rsdp=mb2_new acpi_tags=2", "rsdp=mb2_old acpi_tags=2"),
    ("image-uefi-smp4", "@fw acpi ", "@fw boot_problem msg=the multiboot2 tag list is truncated at byte 96 of 100; the tags after it are ignored\n@fw acpi "),
    ("image-uefi-2s2c2t", "CPU 7:  hog-5", "CPU 8:  hog-5"),
    ("image-bios-2s2c2t", "name=demo ok=1", "name=demo ok=0"),
    ("image-bios-2s2c2t", "online=8 expected=8", "online=4 expected=8"),
    ("image-bios-no-acpi", "none=1", "rsdp=0xf5000 cpus=1"),
    ("image-bios-no-acpi", "rsdp=none acpi_tags=0", "rsdp=mb2_old acpi_tags=1"),
    ("image-uefi-multiboot1", "protocol=multiboot1", "protocol=multiboot2"),
    ("image-uefi-multiboot1", "online=1 expected=1", "online=4 expected=4"),
    // any scenario not about bad input fails on a complaint about its command line
    ("smp-4", "@fw cpus online", "@fw cmdline_problem msg=unknown option `x`, ignored\n@fw cpus online"),
    ("pipe-same-smp1", "@fw stage name=workload\n", "@fw cmdline_problem msg=workload=pipe: unknown parameter \"round\"\n@fw stage name=workload\n"),
    (
        "workload-params-malformed",
        "cmdline: workload=pipe: mode=\"crosss\" is not one of same, cross; using mode=same\n",
        "",
    ),
    ("workload-params-malformed", "unknown parameter \"round\" (pipe takes rounds, mode)", "unknown parameter \"round\""),
    ("workload-params-malformed", "mode=same rounds=100000", "mode=cross rounds=100000"),
    ("workload-help", "key=rounds accepts=0..1 default=100000", "key=rounds accepts=0..1 default=1000"),
    ("workload-help", "@fw workload_done name=help ok=1", "@fw workload_done name=help ok=0"),
    ("workload-too-many-threads", "need 400 threads", "need 40 threads"),
    // the arena: a size the rule does not give, another bound, a planned stack missing,
    // the boot line's number, the refusal's reason
    ("workload-too-many-threads", "slots=329 wanted=329", "slots=330 wanted=330"),
    ("workload-too-many-threads", "rule=share", "rule=floor"),
    ("workload-too-many-threads", "wanted=329", "wanted=330"),
    ("workload-too-many-threads", "thread stacks: 329 of", "thread stacks: 264 of"),
    ("workload-too-many-threads", "(329 in all: an eighth", "(329 in all: 256 and 4 per CPU"),
    ("workload-too-many-threads", "; more memory gives more, up to 1025)", ")"),
    ("workload-400-threads", "rule=ceiling", "rule=share"),
    ("workload-400-threads", "slots=1025 wanted=1025", "slots=1024 wanted=1024"),
    ("workload-400-threads", "floor=264", "floor=256"),
    ("workload-400-threads", "messages_received=4000", "messages_received=3999"),
    ("workload-too-many-threads", "@fw workload_done name=hackbench ok=0\n", "workload: cannot start thread hb-send-6-3: no free thread stack\n@fw workload_done name=hackbench ok=0\n"),
    ("workload-too-many-threads", "; the workload does not run\n@fw cmdline_problem", "; running what fits\n@fw cmdline_problem"),
    ("workload-too-much-heap", "name=ebizzy ok=0", "name=ebizzy ok=1"),
    // no complaint: the workers ran and the run ended without a sample
    ("workload-schbench-no-sample", "\n@fw cmdline_problem msg=workload=schbench", "\n@fw taskstat id=3 name=sb-worker-0-0 nice=0\n@fw note msg=workload=schbench"),
    ("workload-too-much-heap", "@fw workload_done", "@fw taskstat id=3 name=ebizzy-0 nice=0\n@fw workload_done"),
    (
        "cmdline-malformed",
        "cmdline: hz=abc is not a number, using 250\n",
        "",
    ),
    (
        "cmdline-malformed",
        "cmdline: log=loud",
        "cmdline: level=loud",
    ),
    // the late-checked option printed but not recorded: bench/compare would take the run
    ("cmdline-malformed", "@fw cmdline_problem msg=cpu_capacity:", "@fw note msg=cpu_capacity:"),
    ("crash-page-fault", "cr2=0x1dead0000", "cr2=0x1dead0004"),
    (
        "crash-page-fault",
        "@fw bt cpu=0 frame=1 addr=0x105678\n",
        "",
    ),
    (
        "crash-page-fault",
        "rax=0x0 rbx=0x1 rcx=0x2 rdx=0x3 rsp=0x2000 rbp=0x2010\n",
        "",
    ),
    ("crash-page-fault", "vector=14", "vector=13"),
    (
        "crash-divide-error",
        "vector=0 name=#DE",
        "vector=6 name=#UD",
    ),
    ("crash-panic", "deliberate panic", "other panic"),
    // the watchdogs: the kernel before them printed nothing and hung until the harness's timeout
    ("watchdog-soft-lockup", "kind=soft_lockup", "kind=hard_lockup"),
    ("watchdog-soft-lockup", "stuck_ms=2001", "stuck_ms=1999"),
    ("watchdog-soft-lockup", "ticks=2000", "ticks=12"),
    ("watchdog-soft-lockup", "waiting=1 need_resched=1", "waiting=0 need_resched=1"),
    ("watchdog-soft-lockup", "name=wd-waiter state=Running cpu=1 curr=0 queued=1", "name=wd-waiter state=Running cpu=1 curr=0 queued=0"),
    ("watchdog-soft-lockup", "ts=3499000000 ev=tick", "ts=3499000000 ev=switch prev=3 prev_state=R next=2"),
    ("watchdog-hard-lockup", "seen_from=0", "seen_from=1"),
    ("watchdog-hard-lockup", "stuck_ms=2010", "stuck_ms=20"),
    ("watchdog-hard-lockup", "ev=switch prev=2 prev_state=R next=3\n", "ev=switch prev=2 prev_state=R next=3\n@fw watchdog_event cpu=1 ts=1500000000 ev=tick\n"),
    ("watchdog-hard-lockup", "ts=1400000000 ev=switch prev=2 prev_state=R next=3", "ts=1400000000 ev=switch prev=3 prev_state=R next=2"),
    ("watchdog-hard-lockup", "curr_name=wd-holder", "curr_name=wd-waiter"),
    ("watchdog-lost-wakeup", "reason=dequeued_not_woken", "reason=sleep_deadline_passed"),
    ("watchdog-lost-wakeup", "blocked_ms=1000", "blocked_ms=999"),
    ("watchdog-lost-wakeup", "on_wait_queue=0", "on_wait_queue=1"),
    ("watchdog-lost-wakeup", "prev=2 prev_state=S next=0", "prev=2 prev_state=R next=0"),
    ("watchdog-lost-sleep", "reason=sleep_deadline_passed", "reason=dequeued_not_woken"),
    ("watchdog-lost-sleep", "name=wd-napper state=Sleeping", "name=wd-napper state=Running"),
    ("watchdog-lost-sleep", "events=2", "events=3"),
    ("lockdep-inversion", "taking=pi_lock", "taking=runqueue"),
    ("lockdep-inversion", "held_cpu=0", "held_cpu=1"),
    ("lockdep-inversion", "@fw panic cpu=0 msg=lock order violated", "@fw panic cpu=0 msg=deliberate panic"),
    ("lockdep-rq-descending", "taking_cpu=0 held=runqueue held_cpu=1", "taking_cpu=1 held=runqueue held_cpu=0"),
    ("lockdep-irqs-on", "msg=taken with interrupts on", "msg=taken while an inner lock is held (order inverted)"),
    ("lockdep-schedule-held", "holding 1 interrupt-off", "holding 0 interrupt-off"),
    ("crash-panic", "@fw panic cpu=0", "@fw panic cpu=1"),
    ("crash-oom", "size=16777216", "size=0"),
    ("crash-oom", "OUT OF MEMORY", "out of luck"),
    // Every workload scenario: the invariant checks must have been on, the workload must
    // have finished ok, and one schedstat per CPU.
    ("shares-smp2", "invariant checks on", "invariant checks off"),
    ("storm-smp8", "@fw workload_done name=storm ok=1", "@fw workload_done name=storm ok=0"),
    // item 5: a stretched run, no NOHZ pull
    ("balance-spread-smp64-nohz", "runtime_ns=300000000 ", "runtime_ns=6700000000 "),
    ("balance-spread-smp64-nohz", "@fw spread t_ms=300 per_cpu=1,1,1,", "@fw spread t_ms=300 per_cpu=3,0,0,"),
    ("balance-spread-smp64-nohz", "idle_wait_ns=2000000 ", "idle_wait_ns=20000000000 "),
    ("balance-spread-smp64-nohz", "pulled_for_others=1", "pulled_for_others=0"),
    // fault injection: a mode not injected, or without its effect; a count for a mode off
    ("faults-ipi-delay", "ipi_held=100 ", "ipi_held=0 "),
    ("faults-ipi-delay", "ipi_late_ns=6000000 ", "ipi_late_ns=4000000 "),
    ("faults-ipi-reorder", "ipi_reordered=10 ", "ipi_reordered=0 "),
    ("faults-spurious-wake", "spurious_resleeps=15 ", "spurious_resleeps=0 "),
    ("faults-spurious-wake", "spurious_resleeps=15 ", "spurious_resleeps=21 "),
    ("faults-spurious-wake", "ipi_held=0 ", "ipi_held=3 "),
    ("faults-preempt-points", "preempted_blocking=30 ", "preempted_blocking=0 "),
    ("faults-cpu-stall", "stall_ns=400000", "stall_ns=4000000"),
    ("faults-cpu-stall", "stalls=4 ", "stalls=0 "),
    ("faults-all", "modes=ipi_delay,ipi_reorder,spurious_wake,preempt_points,cpu_stall ", "modes=ipi_delay,ipi_reorder,spurious_wake,preempt_points "),
    ("faults-all", "sem_ups=600", "sem_ups=599"),
    ("idle-ipi-coming-smp3", "idle_holds_woken=198", "idle_holds_woken=12"),
    ("idle-ipi-coming-smp3", "idle_holds=260", "idle_holds=0"),
    ("idle-ipi-coming-smp3", "wake=pipe waker=0", "wake=timer"),
    ("faults-seed-alone", "cmdline: fault_seed=7 without fault=: no fault is injected\n", ""),
    ("faults-malformed", "@fw cmdline_problem msg=fault_seed", "@fw note msg=fault_seed"),
    ("faults-malformed", "@fw workload_done name=pipe ok=1", "@fw faults modes=ipi_delay\n@fw workload_done name=pipe ok=1"),
    ("affinity-smp4", "@fw schedstat cpu=3 ", "@fw schedstat cpu=4 "),
    ("latency-smp1", "@fw workload name=latency cpus=1", "@fw workload name=latency cpus=2"),
    // shares: runtime share off by > 2 points, a weight not Linux's, wrong CPU, a task
    // missing, the CPU's time below the hogs'.
    ("shares-smp2", "runtime_ns=102400000 ", "runtime_ns=142400000 "),
    ("shares-smp8", "weight=3121", "weight=3120"),
    ("shares-smp1", "weight=335 runtime_ns=33500000 ran_on=0", "weight=335 runtime_ns=33500000 ran_on=0-1"),
    ("shares-smp2", "@fw share task=hog+5 cpu=1", "@fw share task=hog+5 cpu=0"),
    ("shares-smp2", "@fw share task=hog0", "@fw shared task=hog0"),
    ("shares-smp2", "nice=-5 weight=3121", "nice=-4 weight=3121"),
    ("shares-smp1", "rq_cpu_time=100000000000 ", "rq_cpu_time=447999999 "),
    // storm: a thread not finished, a lost semaphore up, a lost byte, a missing sleep,
    // a thread never woken, a missing taskstat.
    // torture: a wakeup dropped (a doorbell wait that never ended), a thread lost, a byte
    // lost, a mutex update lost, a semaphore unit lost, time unaccounted, an operation never
    // done, a violation seen, a failing thread reported, another seed
    ("torture-smp8-60s", "bell_ended=400", "bell_ended=399"),
    ("torture-smp4", "exited=516", "exited=515"),
    ("torture-smp4", "alive=0", "alive=1"),
    ("torture-smp8-60s", "pipe_received=40000", "pipe_received=39999"),
    ("torture-smp4", "mutex_count=700", "mutex_count=699"),
    ("torture-smp4", "sem_left=4", "sem_left=3"),
    ("torture-smp4", "sem_ups=600", "sem_ups=599"),
    ("torture-smp4", " idle_ns=", " idle_ns=9"),
    ("torture-smp4", "newidle_ns=50000", "newidle_ns=9000000000"),
    ("torture-smp8-60s", "pressure_ns=0", "pressure_ns=5000000000"),
    ("torture-smp4", "renice=300", "renice=0"),
    ("torture-smp4", "lost_wakeups=0", "lost_wakeups=1"),
    ("torture-smp4", "read_ended=900", "read_ended=899"),
    ("torture-smp8-60s", "join_ended=250", "join_ended=249"),
    ("torture-smp4", "bell_posts=430", "bell_posts=431"),
    ("torture-smp4", "bell_timeouts=15", "bell_timeouts=14"),
    ("torture-smp4", "bell_slept=200", "bell_slept=0"),
    ("torture-smp4", "@fw torture_ops", "@fw torture_thread thread=3 task=9 state=Sleeping cpu=1 done=0 doing=wait(0) ops=-\n@fw torture_ops"),
    ("torture-smp4", "seed=1 ", "seed=2 "),
    ("torture-smp4", "ok=1 alive", "ok=0 alive"),
    ("storm-smp8", "finished=64", "finished=63"),
    ("storm-smp1", "sem_ups=2000", "sem_ups=1999"),
    ("storm-smp1", "pipe_received=16064", "pipe_received=16056"),
    ("storm-smp8", "sleeps=2000", "sleeps=1999"),
    ("storm-smp8", "mutex_count=2000", "mutex_count=1999"),
    ("storm-smp8", "rounds=1000 sleeps=2000 sem_downs=2000 sem_ups=2000 pipe_sent=16256 pipe_received=16256", "rounds=0 sleeps=0 sem_downs=0 sem_ups=0 pipe_sent=256 pipe_received=256"),
    ("storm-smp1", "name=stormb nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=21 nr_migrations=0 nr_wakeups=11 ", "name=stormb nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=21 nr_migrations=0 nr_wakeups=0 "),
    ("storm-smp1", "name=storma", "name=stormc"),
    // renice: the kernel that dropped the renice's reschedule request (the switch waits for
    // the tick: 498/499 us, measured), a round not measured, a result not the record's, a
    // hog on another CPU.
    ("renice-resched-smp1", "p50_ns=7627 max_ns=7754", "p50_ns=498186 max_ns=499120"),
    ("renice-resched-smp1", "max_ns=7754", "max_ns=100000"),
    ("renice-resched-smp1", "rounds=30 samples=30", "rounds=30 samples=29"),
    ("renice-resched-smp1", "metric=switch_max value=7.754", "metric=switch_max value=7.755"),
    ("renice-resched-smp1", "name=renice-b nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=16 nr_migrations=0 nr_wakeups=0 nr_wakeups_local=0 nr_wakeups_remote=0 nr_wakeups_sync=0 cpus=0", "name=renice-b nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=16 nr_migrations=0 nr_wakeups=0 nr_wakeups_local=0 nr_wakeups_remote=0 nr_wakeups_sync=0 cpus=1"),
    // latency: p99 at two slices, a sample missing, a sleeper woken too rarely, a slice
    // not the one the CPU count gives, the sleeper on another CPU.
    ("latency-smp2", "p99_ns=1400000", "p99_ns=2800000"),
    ("latency-smp1", "p99_ns=700000", "p99_ns=1400000"),
    ("latency-smp2", "hogs=2 samples=300 p50", "hogs=2 samples=299 p50"),
    ("latency-smp2", "name=sleeper nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=301 nr_migrations=0 nr_wakeups=300 ", "name=sleeper nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=301 nr_migrations=0 nr_wakeups=299 "),
    ("latency-smp2", "slice_ns=1400000", "slice_ns=2800000"),
    ("latency-smp2", "nr_wakeups_sync=0 cpus=1\n@fw taskstat id=2", "nr_wakeups_sync=0 cpus=0\n@fw taskstat id=2"),
    ("latency-smp1", "p50_ns=3099 p90_ns=3264", "p50_ns=3300 p90_ns=3264"),
    // latency's results: a value not the record's, a unit, one missing; over_2slice not
    // what max says; the histogram: a count off, a bucket missing or of the wrong width,
    // the median's sample (the 150th) in another bucket than the record's p50.
    ("latency-smp1", "metric=wakeup_p99 value=700.000", "metric=wakeup_p99 value=700.001"),
    ("latency-smp2", "metric=wakeup_max value=2799.000", "metric=wakeup_max value=2799.001"),
    ("latency-smp2", "metric=wakeup_p50 value=3.099 unit=us", "metric=wakeup_p50 value=3.099 unit=ms"),
    ("latency-smp1", "@fw result workload=latency metric=wakeup_over_2slice value=0.000 unit=samples better=lower\n", ""),
    ("latency-smp1", "over_2slice=0", "over_2slice=1"),
    ("latency-smp1", "lo_us=3 hi_us=4 count=221", "lo_us=3 hi_us=4 count=220"),
    ("latency-short-slice-smp1", "@fw hist workload=latency kind=wakeup lo_us=192 hi_us=208 count=1\n", ""),
    ("latency-smp2", "lo_us=2048 hi_us=2304", "lo_us=2048 hi_us=2560"),
    (
        "latency-smp1",
        "lo_us=2 hi_us=3 count=75\n@fw hist workload=latency kind=wakeup lo_us=3 hi_us=4 count=221",
        "lo_us=2 hi_us=3 count=175\n@fw hist workload=latency kind=wakeup lo_us=3 hi_us=4 count=121",
    ),
    // short slice: p99 at two of the sleeper's slices, the slice not what was asked.
    ("latency-short-slice-smp1", "p99_ns=100000", "p99_ns=200000"),
    ("latency-short-slice-smp1", "sleeper_slice_ns=100000", "sleeper_slice_ns=700000"),
    // affinity: a pinned thread strayed, a CPU without its pinned thread, the mover
    // elsewhere, or not moved.
    ("affinity-smp4", "allowed=2 ran_on=2", "allowed=2 ran_on=2-3"),
    ("affinity-smp8", "@fw affinity task=pinned id=7 allowed=5 ran_on=5\n", ""),
    ("affinity-smp8", "allowed=7 ran_on=0,7", "allowed=7 ran_on=0,6-7"),
    ("affinity-smp4", "allowed=3 ran_on=0,3", "allowed=3 ran_on=0"),
    ("affinity-smp4", "task=mover id=6 allowed=3", "task=mover id=6 allowed=0,3"),
    ("affinity-smp8", "now_on=7", "now_on=0"),
    ("affinity-smp8", "allowed=1 ran_on=1", "allowed=1-2 ran_on=1"),
    // pipe: both threads on one CPU in cross mode, a thread that ran elsewhere, too few
    // or too many wakeups, a wakeup not WF_SYNC, a local wakeup across CPUs, too few
    // switches on one CPU.
    ("pipe-cross-smp2", "a_cpu=0 b_cpu=1", "a_cpu=0 b_cpu=0"),
    ("pipe-same-smp2", "a_cpu=0 b_cpu=0", "a_cpu=0 b_cpu=1"),
    ("pipe-same-smp2", "nr_wakeups_sync=99500 cpus=0", "nr_wakeups_sync=99500 cpus=0-1"),
    ("pipe-cross-smp8", "name=pipe-a nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=100002 nr_migrations=0 nr_wakeups=99500 nr_wakeups_local=0 nr_wakeups_remote=99500 nr_wakeups_sync=99500", "name=pipe-a nice=0 sum_exec_runtime=1000 wait_sum=10 wait_max=5 nr_switches=100002 nr_migrations=0 nr_wakeups=79999 nr_wakeups_local=0 nr_wakeups_remote=79999 nr_wakeups_sync=79999"),
    ("pipe-same-smp1", "nr_wakeups=99300 nr_wakeups_local=99300 nr_wakeups_remote=0 nr_wakeups_sync=99300", "nr_wakeups=100001 nr_wakeups_local=100001 nr_wakeups_remote=0 nr_wakeups_sync=100001"),
    ("pipe-same-smp1", "nr_wakeups=99300 nr_wakeups_local=99300 nr_wakeups_remote=0 nr_wakeups_sync=99300", "nr_wakeups=49999 nr_wakeups_local=49999 nr_wakeups_remote=0 nr_wakeups_sync=49999"),
    ("pipe-same-smp2", "nr_wakeups_sync=99300", "nr_wakeups_sync=99299"),
    ("pipe-cross-smp2", "nr_wakeups_local=0 nr_wakeups_remote=99500", "nr_wakeups_local=99500 nr_wakeups_remote=0"),
    ("pipe-same-smp1", "nr_switches=100002 nr_migrations=0 nr_wakeups=99500", "nr_switches=99998 nr_migrations=0 nr_wakeups=99500"),
    ("pipe-cross-smp2", "rounds=100000 a_cpu", "rounds=99999 a_cpu"),
    ("pipe-same-smp2", "@fw pipe mode=same", "@fw pipe mode=cross"),
    ("pipe-same-smp2", "name=pipe-b", "name=pipe-c"),
    // DELAY_DEQUEUE: a delayed sleeper that left with credit (its lag not paid), and delayed
    // dequeues with the feature off.
    ("delay-dequeue", "leave_lag=-300", "leave_lag=300"),
    ("delay-dequeue", "delayed=198703 requeued=198698", "delayed=198703 requeued=198697"),
    // capacity pressure charged to the hogs: they would have run the whole 500 ms
    ("shares-pressure", "weight=1024 runtime_ns=28160000", "weight=1024 runtime_ns=150000000"),
    ("delay-dequeue-off", "@fw delayed cpu=0 sleeps=200000 delayed=0", "@fw delayed cpu=0 sleeps=200000 delayed=1"),
    // stack overflow: another thread named, the report line missing, not a #PF, the
    // fault elsewhere than the guard page.
    ("crash-stack-overflow", "task=deep-recursion", "task=init"),
    ("crash-stack-overflow", "STACK OVERFLOW in thread", "stack overflow in thread"),
    ("crash-stack-overflow", "vector=14 name=#PF", "vector=13 name=#GP"),
    ("crash-stack-overflow", "cr2=0x8230ec8", "cr2=0x8230ec0"),
    // sched_features: a feature not applied, a default lost, a complaint; the bogus one
    // not reported, or applied anyway.
    ("sched-features", " NO_DELAY_DEQUEUE", " DELAY_DEQUEUE"),
    ("sched-features", " NO_RUN_TO_PARITY", " RUN_TO_PARITY"),
    ("sched-features", "msg=PLACE_LAG", "msg=NO_PLACE_LAG"),
    ("sched-features", "@fw stage name=workload\n", "cmdline: sched_features: odd\n@fw stage name=workload\n"),
    ("sched-features-bogus", "unknown feature \"BOGUS\"", "unknown feature \"BOGU\""),
    ("sched-features-bogus", "@fw stage name=workload\n", "cmdline: another\n@fw stage name=workload\n"),
    ("sched-features-bogus", " DELAY_DEQUEUE", " NO_DELAY_DEQUEUE"),
    // a Linux-only name printed as a feature (here and when bogus), a refusal missing, one that
    // does not say the rest applies, the token between them not applied
    ("sched-features", " NO_NEXT_BUDDY", " NO_NEXT_BUDDY NO_HRTICK"),
    ("sched-features-bogus", " NO_NEXT_BUDDY", " NO_NEXT_BUDDY RT_PUSH_IPI"),
    ("sched-features-linux-only", " NO_NEXT_BUDDY", " NO_NEXT_BUDDY HRTICK"),
    ("sched-features-linux-only", "ignoring NO_RT_PUSH_IPI, the other features apply\n", "ignoring NO_RT_PUSH_IPI\n"),
    ("sched-features-linux-only", "cmdline: sched_features: HRTICK is", "sched_features: HRTICK is"),
    ("sched-features-linux-only", " NO_DELAY_DEQUEUE TTWU_QUEUE", " DELAY_DEQUEUE TTWU_QUEUE"),
    // NO_TTWU_QUEUE not in force for the torture; the torture's books broken
    ("ttwu-queue-off-torture-smp4", " NO_TTWU_QUEUE", " TTWU_QUEUE"),
    // spread: two hogs on a CPU at t_ms=100 or at the end, a sample missing, two hogs
    // ending on one CPU, a hog missing.
    ("balance-spread-smp8", "t_ms=100 per_cpu=1,1,1,1,1,1,1,1", "t_ms=100 per_cpu=2,0,1,1,1,1,1,1"),
    ("balance-spread-smp8", "t_ms=300 per_cpu=1,1,1,1,1,1,1,1", "t_ms=300 per_cpu=1,1,1,1,1,1,0,2"),
    ("balance-spread-smp8", "@fw spread t_ms=200 per_cpu=1,1,1,1,1,1,1,1\n", ""),
    ("balance-spread-smp8", "t_ms=10 per_cpu=8,0,0,0,0,0,0,0", "t_ms=10 per_cpu=7,0,0,0,0,0,0,0"),
    ("balance-spread-smp8", "@fw hog id=3 cpu=1 runtime_ns=300000000 migrations=1 ran_on=0-1", "@fw hog id=3 cpu=0 runtime_ns=300000000 migrations=1 ran_on=0-1"),
    ("balance-spread-smp8", "@fw hog id=9 cpu=7 runtime_ns=300000000 migrations=1 ran_on=0,7\n", ""),
    // CPU_IDLE pulls: the hogs' 8 moves all accounted for by newidle pulls; CPU 1 gained by
    // idle balancing but its hog never migrated.
    ("balance-spread-smp8", "lb_gained_newidle=0 ", "lb_gained_newidle=8 "),
    ("balance-spread-smp8", "cpu=1 runtime_ns=300000000 migrations=1 ", "cpu=1 runtime_ns=300000000 migrations=0 "),
    // SMT: two hogs on the threads of core 1; a core ID not QEMU's.
    ("balance-smt-1s4c2t", "@fw hog id=2 cpu=0 runtime_ns=500000000 migrations=1 ran_on=0", "@fw hog id=2 cpu=3 runtime_ns=500000000 migrations=1 ran_on=0,3"),
    ("balance-smt-1s4c2t", "@fw cpu id=6 apic=6 pkg=0 core=3", "@fw cpu id=6 apic=6 pkg=0 core=0"),
    // 3 hogs on 2 CPUs: one hog at 50% (another then at 83%), one at 77.7%.
    ("balance-3-hogs-on-2", "@fw hog id=2 cpu=0 runtime_ns=4000000000", "@fw hog id=2 cpu=0 runtime_ns=3000000000"),
    ("balance-3-hogs-on-2", "@fw hog id=3 cpu=1 runtime_ns=4000000000", "@fw hog id=3 cpu=1 runtime_ns=4660000000"),
    ("balance-3-hogs-on-2", "@fw hog id=4 cpu=0 runtime_ns=4000000000 migrations=10 ran_on=0-1\n", ""),
    // CPU_NOT_IDLE pulls: the hogs' 30 moves all accounted for by idle pulls.
    ("balance-3-hogs-on-2", "lb_gained_idle=0 ", "lb_gained_idle=30 "),
    // capacity: a capacity refused (the two-boot comparison's mutations are in
    // versus_scenarios_fail_when_a_boot_or_the_comparison_is_wrong, as for the other pairs).
    ("balance-capacity-smp2", "name=spread ok=1", "name=spread ok=0"),
    ("balance-newidle-active-push", "name=spread ok=1", "name=spread ok=0"),
    // the retry with new_dst_cpu missing: the third hog stays in package {0,1}; or CPU 3 pulled it
    ("balance-dst-pinned-new-dst-cpu", "cpu=3 runtime_ns=300000000 migrations=1 ran_on=0,3", "cpu=1 runtime_ns=300000000 migrations=1 ran_on=0-1"),
    // no group_imbalanced mark: the free hog stays on CPU 3 beside the pinned one, at half the
    // run; or the child level moved it
    ("balance-group-imbalanced", "@fw hog id=2 cpu=1 runtime_ns=300000000 migrations=1 ran_on=1", "@fw hog id=2 cpu=3 runtime_ns=150000000 migrations=0 ran_on=3"),
    ("balance-group-imbalanced", "@fw domstat cpu=2 level=MC lb_count_idle=3 lb_failed_idle=1 lb_gained_idle=0", "@fw domstat cpu=2 level=MC lb_count_idle=3 lb_failed_idle=1 lb_gained_idle=1"),
    ("balance-dst-pinned-new-dst-cpu", "@fw domstat cpu=3 level=MC lb_count_idle=3 lb_failed_idle=0 lb_gained_idle=0", "@fw domstat cpu=3 level=MC lb_count_idle=3 lb_failed_idle=0 lb_gained_idle=1"),
    // newidle and NOHZ pulls: the workload did not finish (the comparisons: see above).
    ("balance-newidle-pull-on-vs-off", "name=fserver ok=1", "name=fserver ok=0"),
    // util_est: the task moved only as late as util_avg would have made it a misfit; it never
    // moved; its util_est fitted the small CPU (no estimate kept over the sleep).
    ("balance-misfit-util-est", "moved_after_us=4000", "moved_after_us=49000"),
    ("balance-misfit-util-est", "moved_after_us=4000", "moved_after_us=-"),
    ("balance-misfit-util-est", "util_est=906", "util_est=300"),
    ("balance-nohz-pull-on-vs-off", "name=spread ok=1", "name=spread ok=0"),
    ("balance-capacity-smp4", "cpu=3 runtime_ns=1000000000 migrations=1 ran_on=0,3", "cpu=0 runtime_ns=1000000000 migrations=1 ran_on=0,3"),
    ("balance-capacity-smp4", "@fw stage name=workload\n", "cmdline: cpu_capacity=0:512,1:512 is bad\n@fw stage name=workload\n"),
    // tickless: an idle CPU ticking (6 > 5 per second), the busy CPU not ticking, an idle
    // CPU not ticking with nohz=off, a CPU's line missing.
    ("nohz-idle-cpus", "cpu=3 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1 ttwu_local=1 rq_cpu_time=5 run_delay=5 pcount=3 ticks=0 timer_irqs=0", "cpu=3 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1 ttwu_local=1 rq_cpu_time=5 run_delay=5 pcount=3 ticks=0 timer_irqs=6"),
    ("nohz-idle-cpus", "ticks=1000 timer_irqs=1000", "ticks=1000 timer_irqs=499"),
    ("nohz-off", "cpu=2 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1 ttwu_local=1 rq_cpu_time=5 run_delay=5 pcount=3 ticks=1000 timer_irqs=1000", "cpu=2 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1 ttwu_local=1 rq_cpu_time=5 run_delay=5 pcount=3 ticks=1000 timer_irqs=499"),
    ("nohz-off", "@fw schedstat_delta cpu=3 ", "@fw schedstat_deltx cpu=3 "),
    // IPIs: a halted CPU woken without one, too few IPIs; a polling CPU sent IPIs, or
    // counting too few silent wakeups.
    ("pipe-cross-smp2", "resched_ipis=99500 wake_idle_without_ipi=0", "resched_ipis=99500 wake_idle_without_ipi=4"),
    ("pipe-cross-smp2", "resched_ipis=99500", "resched_ipis=79000"),
    ("pipe-cross-idle-poll-smp2", "resched_ipis=3 ", "resched_ipis=1001 "),
    ("pipe-cross-idle-poll-smp2", "wake_idle_without_ipi=99500", "wake_idle_without_ipi=79999"),
            // hackbench: a message lost or invented, the report or the result not the run's time,
    // the header not the parameters, a result or a CPU's schedstat delta missing, a delta
    // above the counter's total since boot, a CPU that woke nothing on another CPU or ran
    // no thread, a CPU count not the -smp.
    ("bench-hackbench-smp2", "messages_received=80000", "messages_received=79999"),
    ("bench-hackbench-smp2", "messages_sent=80000", "messages_sent=80001"),
    ("bench-hackbench-smp2", "Time: 0.047", "Time: 0.048"),
    ("bench-hackbench-smp2", "metric=time value=0.047", "metric=time value=0.470"),
    ("bench-hackbench-smp2", "@fw result workload=hackbench metric=time value=0.047 unit=s better=lower\n", ""),
    ("bench-hackbench-smp2", "metric=time value=0.047 unit=s better=lower", "metric=time value=0.047 unit=s better=higher"),
    ("bench-hackbench-smp2", "Each sender will pass 100 messages", "Each sender will pass 10 messages"),
    ("bench-hackbench-smp2", "ns=47535941", "ns=535941"),
    ("bench-hackbench-smp2", "@fw schedstat_delta cpu=1 ", "@fw schedstat_deltx cpu=1 "),
    ("bench-hackbench-smp2", "ticks=1000 timer_irqs=1000 resched_ipis=2", "ticks=1000 timer_irqs=1000 resched_ipis=1000001"),
    // no wakeup across CPUs (only CPU 0's were), a CPU that ran no thread
    ("bench-hackbench-smp4", "cpu=0 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=3", "cpu=0 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1"),
    ("bench-hackbench-smp4", "cpu=3 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1 ttwu_local=1 rq_cpu_time=5", "cpu=3 yld_count=0 sched_count=10 sched_goidle=1 ttwu_count=1 ttwu_local=1 rq_cpu_time=0"),
    ("bench-hackbench-smp4", "(== 80 tasks)", "(== 40 tasks)"),
    ("bench-hackbench-smp4", "@fw workload name=hackbench cpus=4", "@fw workload name=hackbench cpus=2"),
    // schbench: percentiles out of order, the star elsewhere, a count below its rank, a
    // request shorter than its sleep, more wakeups than requests, a histogram not adding
    // up or not log-linear, zero rps, results or `average rps` not the report's, the
    // closing line or the runtime not the parameters.
    ("bench-schbench-smp2", "90.0th: 2700", "90.0th: 1000"),
    ("bench-schbench-smp2", "* 99.0th: 2971", "  99.0th: 2971"),
    ("bench-schbench-smp2", "99.9th: 2999       (1392 samples)", "99.9th: 2999       (1391 samples)"),
    ("bench-schbench-smp2", "min=300, max=4298", "min=150, max=4298"),
    ("bench-schbench-smp2", "min=1, max=3000", "min=1, max=3100"),
    ("bench-schbench-smp2", "(1393 total samples)", "(1401 total samples)"),
    ("bench-schbench-smp2", "kind=request lo_us=320 hi_us=352 count=11", "kind=request lo_us=320 hi_us=352 count=12"),
    ("bench-schbench-smp2", "kind=request lo_us=4096 hi_us=4608 count=73", "kind=request lo_us=4096 hi_us=4352 count=73"),
    ("bench-schbench-smp2", "@fw hist workload=schbench kind=wakeup lo_us=4 hi_us=5 count=1\n", ""),
    ("bench-schbench-smp2", "metric=rps value=4647.540", "metric=rps value=0.000"),
    ("bench-schbench-smp2", "metric=wakeup_p99 value=2971.000", "metric=wakeup_p99 value=2970.000"),
    ("bench-schbench-smp2", "average rps: 4647.54", "average rps: 4647.55"),
    ("bench-schbench-smp2", "workers each, work 200 us", "workers each, work 100 us"),
    ("bench-schbench-smp2", "runtime 1 (s) (1400", "runtime 3 (s) (1400"),
    // ebizzy: no search, records/s or the result not searches over real, real not the
    // run's ms, the closing line not the parameters, the CPUs idle for most of the run.
    ("bench-ebizzy-smp2", "210649 searches", "0 searches"),
    ("bench-ebizzy-smp2", "701874 records/s\n", "701875 records/s\n"),
    ("bench-ebizzy-smp2", "real     0.30 s", "real     0.20 s"),
    ("bench-ebizzy-smp2", "value=701874.497", "value=801874.497"),
    ("bench-ebizzy-smp2", "ebizzy: 2 threads", "ebizzy: 1 threads"),
    ("bench-ebizzy-smp2", "rq_cpu_time=300000000 run_delay=5 pcount=3 ticks=2 ", "rq_cpu_time=30000000 run_delay=5 pcount=3 ticks=2 "),
    // tbench: a request unanswered, bytes not the round trips', the throughput not
    // bytes/ns, the summary's procs, the latency result not the summary's, a short run,
    // nothing moved, the result missing.
    ("bench-tbench-smp2", "served=29155", "served=29154"),
    ("bench-tbench-smp2", "bytes=126882560", "bytes=126882559"),
    ("bench-tbench-smp2", "Throughput 422.195 MB/sec", "Throughput 422.196 MB/sec"),
    ("bench-tbench-smp2", "4 procs", "2 procs"),
    ("bench-tbench-smp2", "metric=max_latency value=1.259", "metric=max_latency value=1.260"),
    ("bench-tbench-smp2", "ns=300530135", "ns=200530135"),
    ("bench-tbench-smp2", "round_trips=29155 served=29155 bytes=126882560", "round_trips=0 served=0 bytes=0"),
    ("bench-tbench-smp2", "@fw result workload=tbench metric=throughput", "@fw resulx workload=tbench metric=throughput"),
    // fserver: no op, latencies out of order, jobs/min or ops/s not the ops', the p99
    // result not the summary's, more ops than the sleeps allow, p50 below the burst, the
    // first line not the parameters.
    ("bench-fserver-smp2", "5467 ops in 300 ms", "0 ops in 300 ms"),
    ("bench-fserver-smp2", "p99 233  max 355", "p99 433  max 355"),
    ("bench-fserver-smp2", "(1091737 jobs/min)", "(1091736 jobs/min)"),
    ("bench-fserver-smp2", "Throughput 18195.628 ops/s", "Throughput 18295.628 ops/s"),
    ("bench-fserver-smp2", "metric=burst_p99 value=233.642", "metric=burst_p99 value=234.642"),
    ("bench-fserver-smp2", "5467 ops in 300 ms", "25467 ops in 300 ms"),
    ("bench-fserver-smp2", "p50 64 ", "p50 10 "),
    ("bench-fserver-smp2", "4 threads, burst 50 us", "8 threads, burst 50 us"),
    // the trace: a lost event, events out of time order, a switch-in after sleep without
    // its enqueue, an idle CPU's enqueue without preempt, a pipe thread on the wrong CPU;
    // a wakeup without its enqueue, an enqueue before its wakeup, a running thread's
    // enqueue with preempt; an enqueue that names another running task than the switches
    // say, and eligibility given for the idle task and for the wakee itself.
    ("trace-pipe-cross-smp2", "@fw trace_cpu cpu=1 events=2003 lost=0", "@fw trace_cpu cpu=1 events=2003 lost=1"),
    ("trace-pipe-cross-smp2", "@fw trace cpu=0 ts=1010 ev=switch", "@fw trace cpu=0 ts=99999999 ev=switch"),
    ("trace-pipe-cross-smp2", "@fw trace cpu=1 ts=1180 ev=enqueue pid=2 preempt=1 curr=0 curr_eligible=- curr_protected=-\n", ""),
    ("trace-pipe-cross-smp2", "ts=1180 ev=enqueue pid=2 preempt=1", "ts=1180 ev=enqueue pid=2 preempt=0"),
    ("trace-pipe-cross-smp2", "ts=1185 ev=switch prev=0 prev_state=R next=2", "ts=1185 ev=switch prev=0 prev_state=R next=3"),
    ("trace-pipe-cross-smp2", "@fw trace cpu=1 ts=1025 ev=enqueue pid=2 preempt=0 curr=2 curr_eligible=- curr_protected=-\n", ""),
    ("trace-pipe-cross-smp2", "ts=1022 ev=wakeup pid=2", "ts=1026 ev=wakeup pid=2"),
    ("trace-pipe-cross-smp2", "ts=1025 ev=enqueue pid=2 preempt=0", "ts=1025 ev=enqueue pid=2 preempt=1"),
    ("trace-pipe-cross-smp2", "ts=1180 ev=enqueue pid=2 preempt=1 curr=0", "ts=1180 ev=enqueue pid=2 preempt=1 curr=3"),
    ("trace-pipe-cross-smp2", "ts=1180 ev=enqueue pid=2 preempt=1 curr=0 curr_eligible=-", "ts=1180 ev=enqueue pid=2 preempt=1 curr=0 curr_eligible=1"),
    ("trace-pipe-cross-smp2", "preempt=0 curr=2 curr_eligible=- curr_protected=-", "preempt=0 curr=2 curr_eligible=- curr_protected=0"),
    // each boot of the pair scenarios on its own.
    ("balance-newidle-snap-vs-delta", "@fw newidle cpu=3 ", "@fw newidle cpu=4 "),
    ("balance-newidle-snap-vs-delta", "items=5000", "items=0"),
    ("balance-wake-affine-on-vs-off", "same_llc=8000", "same_llc=7999"),
    // a determinism boot whose workload failed, stopped early, or ran on fewer CPUs; the
    // overflow boot without its stack overflow (the pairs' own: determinism_scenarios_*).
    ("icount-deterministic-storm-smp4", "@fw workload_done name=storm ok=1", "@fw workload_done name=storm ok=0"),
    ("icount-deterministic-storm-smp1", "@fw workload name=storm cpus=1", "@fw workload name=storm cpus=2"),
    ("icount-deterministic-storm-smp4", "@fw schedstat cpu=3 ", "@fw schedstax cpu=3 "),
    ("icount-deterministic-overflow-smp2", "@fw stack_overflow ", "@fw fault "),
    ("icount-deterministic-help-smp1", "@fw workload_done name=help ok=1\n", ""),
    // idle while others wait: the top figure not the top level's, a level missing, the level
    // figures falling with the level, a run not ok
    (
        "balance-idle-wait-newidle-on-vs-off",
        "idle_wait_ns=2000000 idle_wait_mc_ns=2000000",
        "idle_wait_ns=2000000 idle_wait_mc_ns=1999999",
    ),
    ("balance-newidle-gate-snap", "idle_wait_mc_ns=", "idle_wait_xx_ns="),
    ("balance-newidle-gate-snap", "items=5000", "items=0"),
    // the clamp's gate opened below the migration cost; an attempt that ran no pass; a pull
    // that no pass gained
    ("balance-newidle-gate-snap", "lt_500us=1 lt_1ms=", "lt_500us=0 lt_1ms=1"),
    ("balance-newidle-gate-avg", "lt_500us=1 lt_1ms=", "lt_500us=0 lt_1ms=1"),
    ("balance-newidle-gate-snap", "lb_count_newidle=", "lb_count_newidle=9"),
    ("balance-newidle-gate-avg", "lb_count_newidle=", "lb_count_newidle=9"),
    ("balance-newidle-gate-avg", "lb_gained_newidle=", "lb_gained_newidle=9"),
    // a CPU's newidle stop count that is not the sum of its domains' (it stayed 0)
    ("balance-newidle-pull-on-vs-off", "cost_stops=0 random_skips=0 avg_idle", "cost_stops=1 random_skips=0 avg_idle"),
    ("balance-fork-placement-smp4", "name=ebizzy ok=1", "name=ebizzy ok=0"),
    ("balance-capacity-pressure-smp1", ", 105324 searches", ", 0 searches"),
    // sis_util=off ignored (the boot line still on), a truncated aged scan accounted
    ("sis-prop-aged-depth", "sis_prop=aged sis_util=off", "sis_prop=aged sis_util=on"),
    ("sis-prop-aged-depth", "accounted=100", "accounted=99"),
    // legacy's accounting read as per_cpu_cost's; a depth off its formula
    ("sis-prop-cost-legacy-vs-per-cpu", "sis_prop=legacy sis_util=off", "sis_prop=per_cpu_cost sis_util=off"),
    ("sis-prop-cost-legacy-vs-per-cpu", " nr=", " nr=1"),
    // altscan's accounting read as legacy's; a success's scan time not the one it folded
    ("sis-prop-altscan", "sis_prop=altscan sis_util=off", "sis_prop=legacy sis_util=off"),
    ("sis-prop-altscan", "found=1 truncated=0 time_ns=2100 accounted=1\n@fw sis_scan", "found=1 truncated=0 time_ns=525 accounted=1\n@fw sis_scan"),
    // the pressure booked twice: as pressure and again as idle time; or off its share of the run
    ("torture-pressure-books-smp2", " idle_ns=", " idle_ns=1"),
    ("torture-pressure-books-smp2", " pressure_ns=", " pressure_ns=1"),
    // a depth the formula does not give for 2 hogs of 8 CPUs; a wakeup not counted
    ("sis-util-depth-by-load", "depth_sum=800", "depth_sum=500"),
    ("sis-util-depth-by-load", "scans=100", "scans=99"),
    // the wakee left on prev, or sent to the busy / not allowed sibling
    ("wake-2005-smt-sibling", "cpu=2 wakeups=0\n@fw wakeplace_cpu cpu=3 wakeups=100", "cpu=2 wakeups=100\n@fw wakeplace_cpu cpu=3 wakeups=0"),
    ("wake-2005-sibling-busy", "cpu=2 wakeups=100\n@fw wakeplace_cpu cpu=3 wakeups=0", "cpu=2 wakeups=0\n@fw wakeplace_cpu cpu=3 wakeups=100"),
    ("wake-2005-sibling-not-allowed", "cpu=2 wakeups=100\n@fw wakeplace_cpu cpu=3 wakeups=0", "cpu=2 wakeups=0\n@fw wakeplace_cpu cpu=3 wakeups=100"),
    ("wake-2005-smt-sibling", "wake_balance=idle_only wake_affine", "wake_balance=linux wake_affine"),
    ("wake-2005-sibling-not-allowed", "@fw delayed cpu=2 sleeps=200000 delayed=0 requeued=0", "@fw delayed cpu=2 sleeps=200000 delayed=16 requeued=16"),
    // the contradiction not reported, or the earlier switch winning
    ("cmdline-sis-util-contradiction", "cmdline: sched_features=SIS_UTIL contradicts", "cmdline: sched_features=SIS_UTIL contradicted"),
    ("cmdline-sis-util-contradiction", "sis_prop=off sis_util=on", "sis_prop=off sis_util=off"),
    ("cmdline-sis-util-contradiction", " SIS_UTIL\n", " NO_SIS_UTIL\n"),
    // what the waker's nice weight in wake_affine_weight gives (measured with that weight)
    ("wake-affine-sync-waker-load", "cpu=0 wakeups=0\n@fw wakeplace_cpu cpu=1 wakeups=100", "cpu=0 wakeups=17\n@fw wakeplace_cpu cpu=1 wakeups=83"),
    // remote wakeups not all counted in ttwu_wake_remote (by prev instead of the wakee's CPU)
    ("wake-affine-sync-waker-load", "ttwu_wake_remote=999 ", "ttwu_wake_remote=54 "),
];
