//! `workload=tbench[,clients=CPUs][,req=256][,reply=4096][,ms=1000][,server_us=5][,jitter_pct=0][,warmup_ms=0]`:
//! tbench-like client/server pairs. Each client sends a request of `req`
//! bytes over a pipe to its own server thread, which reads it, does
//! `server_us` of CPU work and answers with `reply` bytes over a second
//! pipe. Throughput counts the bytes moved both ways. `jitter_pct=J` draws
//! each request's work within ±J% of `server_us` from the run's seed
//! (`seed=`; 0: every request the same). `warmup_ms=W` runs the pairs W ms
//! before the `ms` that count (the balancer's periodic state, SIS_UTIL's scan
//! depth among it, is then a running system's, not a boot's). Prints
//! tbench's summary line, `@fw tbench` (round trips the clients completed in
//! the measured window, requests the servers answered, bytes, time) and
//! `@fw result metric=throughput unit=MB/s`.

use alloc::sync::Arc;
use alloc::vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::crew::{name, Crew, Measured};
use super::params::{Param, wss_kb, num_per_cpu, num, MAX_MS, MAX_THREADS};
use crate::cmdline::Workload;
use mech::rq;
use mech::sync::pipe::Pipe;

/// What `workload=tbench` takes (see `params`).
pub(super) const PARAMS: &[Param] = &[
    num_per_cpu("clients", 1, MAX_THREADS / 2, 1, "client/server pairs"),
    num("req", 1, 1 << 20, 256, "request size (bytes)"),
    num("reply", 1, 1 << 20, 4096, "reply size (bytes)"),
    num("ms", 1, MAX_MS, 1000, "how long the clients run (ms)"),
    num("server_us", 0, 1_000_000, 5, "the server's calibrated work per request (us)"),
    num("jitter_pct", 0, 99, 0, "each request's work is drawn within +-this % of server_us (from seed=)"),
    num("warmup_ms", 0, MAX_MS, 0, "ms the pairs run before the measured ms"),
    wss_kb(64),
];

pub fn run(w: &Workload) -> bool {
    let clients = w.num("clients") as usize;
    let req = w.num("req") as usize;
    let reply = w.num("reply") as usize;
    let ms = w.num("ms");
    let (jitter, warmup_ms) = (w.num("jitter_pct"), w.num("warmup_ms"));
    // a client and a server per pair; two 64 KiB pipes and both sides' buffers
    if !super::budget::fits(w, &["clients", "req", "reply"], (clients * 2) as u64, (clients * (2 * 64 * 1024 + 2 * (req + reply))) as u64) {
        return false;
    }
    let per_us = super::schbench::calibrate(w);
    let server_us = w.num("server_us");
    let bytes = Arc::new(AtomicU64::new(0));
    let trips = Arc::new(AtomicU64::new(0));
    let served = Arc::new(AtomicU64::new(0));
    let max_lat = Arc::new(AtomicU64::new(0));
    let warm_trips = Arc::new(AtomicU64::new(0));
    let mut crew = Crew::new(w);
    for c in 0..clients {
        let to_server = Arc::new(Pipe::new(64 * 1024));
        let to_client = Arc::new(Pipe::new(64 * 1024));
        let (rx, tx, served) = (to_server.clone(), to_client.clone(), served.clone());
        let mut rng = w.rng(0x7b + c as u64);
        crew.spawn_ungated(&name("tb-server", c, None), 2 * c + 1, move || {
            let mut inbuf = vec![0u8; req];
            let out = vec![0x42u8; reply];
            let mut answered = 0;
            while rx.read_exact(&mut inbuf) == req {
                super::schbench::work(rng.jittered(server_us, jitter) * per_us);
                tx.write(&out, true);
                answered += 1;
            }
            served.fetch_add(answered, Ordering::Relaxed);
        });
        let (stop, bytes, max_lat, trips) = (crew.stop_flag(), bytes.clone(), max_lat.clone(), trips.clone());
        let served_warm = warm_trips.clone();
        let out = vec![0x17u8; req];
        let mut inbuf = vec![0u8; reply];
        let warmup_ns = warmup_ms * 1_000_000;
        crew.spawn(&name("tb-client", c, None), 2 * c, move || {
            let (mut n, mut worst, mut done) = (0u64, 0u64, 0u64);
            // The measured window starts warmup_ms after this client's start.
            let from = rq::now_ns() + warmup_ns;
            let mut warm = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let t = rq::now_ns();
                to_server.write(&out, true);
                to_client.read_exact(&mut inbuf);
                if t < from {
                    warm += 1;
                    continue;
                }
                worst = worst.max(rq::now_ns() - t);
                n += (req + reply) as u64;
                done += 1;
            }
            // The servers count every request; the warm-up's are not the clients'.
            served_warm.fetch_add(warm, Ordering::Relaxed);
            to_server.close();
            bytes.fetch_add(n, Ordering::Relaxed);
            trips.fetch_add(done, Ordering::Relaxed);
            max_lat.fetch_max(worst, Ordering::Relaxed);
        });
    }
    let Some(ns) = crew.run_for(warmup_ms + ms, Measured::UntilJoined) else { return false };
    let ns = ns.saturating_sub(warmup_ms * 1_000_000);
    let b = bytes.load(Ordering::Relaxed);
    // MB = 10^6 bytes, as tbench prints it.
    let mbs_milli = (b as u128 * 1_000_000 / ns.max(1) as u128) as u64;
    let lat = max_lat.load(Ordering::Relaxed);
    mech::kprintln!(
        "Throughput {}.{:03} MB/sec  {} clients  {} procs  max_latency={}.{:03} ms",
        mbs_milli / 1000,
        mbs_milli % 1000,
        clients,
        clients * 2,
        lat / 1_000_000,
        lat / 1000 % 1000
    );
    let warm = warm_trips.load(Ordering::Relaxed);
    let (trips, served) = (trips.load(Ordering::Relaxed), served.load(Ordering::Relaxed).saturating_sub(warm));
    mech::record!(
        "tbench",
        "clients={} req={} reply={} round_trips={} served={} bytes={} ns={}",
        clients,
        req,
        reply,
        trips,
        served,
        b,
        ns
    );
    super::result("tbench", "throughput", mbs_milli, "MB/s", true);
    super::result("tbench", "max_latency", lat / 1000, "ms", false);
    b > 0 && served == trips
}
