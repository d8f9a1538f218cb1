//! Periodic load balancing (Linux's `sched_balance_domains`), run from each
//! CPU's tick for every domain whose interval has passed, and on behalf of
//! tickless idle CPUs by the NOHZ balancer; each pass is `pass.rs`'s.

use sched::balance::interval::{balance_due, get_sd_balance_interval, max_load_balance_interval};
use sched::balance::newidle::DecayPass;
use sched::balance::IdleType;

use super::pass::balance_rq;
use super::state::cpu_state;

/// Balances `cpu`'s domains whose interval has passed (`idle`: whether the
/// CPU runs its idle task); returns how many tasks it pulled to `cpu`.
pub fn sched_balance_domains(cpu: usize, idle: bool) -> u32 {
    let Some(g) = super::state::global() else { return 0 };
    let chain = g.sds.per_cpu(cpu);
    if chain.is_empty() {
        return 0;
    }
    let now = crate::clock::jiffies();
    let max = max_load_balance_interval(g.hz, g.sds.online().weight());
    let mut guard = cpu_state(cpu).lock();
    let Some(state) = guard.as_mut() else { return 0 };
    let mut pulled = 0;
    let mut kind = if idle { IdleType::Idle } else { IdleType::NotIdle };
    // As fair.c: sched_balance_domains(): each visited domain's newidle cost
    // ages first; once a domain said "not the balancer", the walk goes on
    // only while domains decay, and the runqueue's max_idle_balance_cost
    // follows the last visited one.
    let ns = crate::rq::now_ns();
    let mut decay = DecayPass::for_gate(g.cfg.newidle_gate);
    let mut continue_balancing = true;
    for (idx, sd) in chain.iter().enumerate() {
        let st = &mut state.sd[idx];
        let decayed = decay.visit(&mut st.newidle, ns);
        if !continue_balancing {
            if decayed {
                continue;
            }
            break;
        }
        let interval = get_sd_balance_interval(sd, st, kind != IdleType::Idle, g.hz, max);
        if !balance_due(st, interval, now) {
            continue;
        }
        let (go_on, moved) = balance_rq(g, cpu, idx, kind, st, &mut state.balance_snaps);
        st.last_balance = now;
        continue_balancing = go_on;
        pulled += moved;
        if moved > 0 {
            // It has work now: the higher domains balance as a busy CPU.
            kind = IdleType::NotIdle;
        }
    }
    super::newidle::note_lowest_cost(cpu, state);
    // Balance state before the runqueue lock (the lock order).
    decay.finish(&mut crate::rq::lock_inside(&guard, cpu).avg_idle);
    pulled
}
