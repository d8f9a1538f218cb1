//! The `trace=1` dumps of correct runs (newidle pull and push, cross-CPU pipe).


/// The `trace=1` dump of a correct fserver run: with newidle balancing, CPU 2 goes idle, pulls
/// pid 7 from CPU 1 and runs it; without, CPU 2 just goes idle.
pub(super) fn trace_newidle(on: bool) -> String {
    let mut out = String::from("@fw trace_task pid=0 name=idle\n@fw trace_task pid=7 name=fserver\n");
    let ev: Vec<&str> = if on {
        vec![
            "ts=100 ev=switch prev=5 prev_state=S next=0",
            "ts=110 ev=newidle_start",
            "ts=120 ev=migrate pid=7 from=1 to=2",
            "ts=130 ev=newidle_end pulled=1",
            "ts=140 ev=switch prev=5 prev_state=S next=7",
        ]
    } else {
        vec!["ts=100 ev=switch prev=5 prev_state=S next=0"]
    };
    out += &format!("@fw trace_cpu cpu=2 events={} lost=0\n", ev.len());
    for e in ev {
        out += &format!("@fw trace cpu=2 {e}\n");
    }
    out
}

/// The `trace=1` dump of a correct `balance-newidle-active-push` boot: the hog (pid 2) runs on
/// CPU 1; with the capacity pressure CPU 0's sleeper (pid 3) sleeps, CPU 0's newidle pass asks
/// CPU 1 to push the misfit hog, which arrives through CPU 0's wake list and runs there; without
/// it CPU 0 just goes idle.
pub(super) fn trace_newidle_push(pressure: bool) -> String {
    let mut out = String::from(
        "@fw trace_task pid=0 name=idle\n@fw trace_task pid=2 name=hog\n@fw trace_task pid=3 name=sleeper\n",
    );
    let mut cpu0 = vec!["ts=100 ev=switch prev=3 prev_state=S next=0"];
    if pressure {
        cpu0.extend([
            "ts=110 ev=newidle_start",
            "ts=120 ev=alb_request src=1 dst=0 idle=newidle",
            "ts=130 ev=newidle_end pulled=0",
            "ts=200 ev=migrate pid=2 from=1 to=0",
            "ts=200 ev=enqueue pid=2 preempt=1 curr=0 curr_eligible=- curr_protected=-",
            "ts=210 ev=switch prev=0 prev_state=R next=2",
        ]);
    }
    let cpu1 = ["ts=50 ev=switch prev=0 prev_state=R next=2"];
    for (c, evs) in [(0, &cpu0[..]), (1, &cpu1[..])] {
        out += &format!("@fw trace_cpu cpu={c} events={} lost=0\n", evs.len());
        for e in evs {
            out += &format!("@fw trace cpu={c} {e}\n");
        }
    }
    out
}

/// The `trace=1` dump of a correct cross-CPU pipe run: pipe-a (pid 3) on CPU 0, pipe-b (pid 2)
/// on CPU 1, each CPU idle (pid 0) while its thread sleeps; first a wakes b while b still runs
/// (its enqueue has preempt=0 and found b itself running, and b goes on to sleep later), then
/// every round, a wakes b (b's CPU is idle: enqueue with preempt=1 that found the idle task,
/// then the switch to b), a blocks, b wakes a, b blocks.
pub(super) fn trace_pipe_cross(rounds: u64) -> String {
    let mut cpu0 = Vec::new();
    let mut cpu1 = Vec::new();
    let mut t = 1_000u64;
    let mut tick = |n: u64| {
        t += n;
        t
    };
    cpu0.push(format!("ts={} ev=switch prev=1 prev_state=S next=3", tick(10)));
    cpu1.push(format!("ts={} ev=switch prev=0 prev_state=R next=2", tick(10)));
    cpu0.push(format!("ts={} ev=wakeup pid=2 target=1", tick(0) + 2));
    cpu1.push(format!("ts={} ev=enqueue pid=2 preempt=0 curr=2 curr_eligible=- curr_protected=-", tick(0) + 5));
    cpu1.push(format!("ts={} ev=switch prev=2 prev_state=S next=0", tick(10)));
    for _ in 0..rounds {
        cpu0.push(format!("ts={} ev=wakeup pid=2 target=1", tick(100)));
        cpu1.push(format!("ts={} ev=enqueue pid=2 preempt=1 curr=0 curr_eligible=- curr_protected=-", tick(50)));
        cpu1.push(format!("ts={} ev=switch prev=0 prev_state=R next=2", tick(5)));
        cpu0.push(format!("ts={} ev=switch prev=3 prev_state=S next=0", tick(5)));
        cpu1.push(format!("ts={} ev=wakeup pid=3 target=0", tick(100)));
        cpu0.push(format!("ts={} ev=enqueue pid=3 preempt=1 curr=0 curr_eligible=- curr_protected=-", tick(50)));
        cpu0.push(format!("ts={} ev=switch prev=0 prev_state=R next=3", tick(5)));
        cpu1.push(format!("ts={} ev=switch prev=2 prev_state=S next=0", tick(5)));
    }
    let mut out = String::new();
    out += "@fw trace_task pid=1 name=init\n@fw trace_task pid=2 name=pipe-b\n@fw trace_task pid=3 name=pipe-a\n";
    out += &format!("@fw trace_cpu cpu=0 events={} lost=0\n", cpu0.len());
    out += &format!("@fw trace_cpu cpu=1 events={} lost=0\n", cpu1.len());
    for e in &cpu0 {
        out += &format!("@fw trace cpu=0 {e}\n");
    }
    for e in &cpu1 {
        out += &format!("@fw trace cpu=1 {e}\n");
    }
    out
}
