//! The NOHZ state without a lock (`balance::nohz::NohzAtomic`) goes through
//! the same states as the policy's `NohzState` it stands for: a seeded mix
//! of idle entries and exits of 8 CPUs, kicks' `next_balance` updates and
//! idle balances' ends, applied to both, leaves both equal after every
//! step, and the count of idle CPUs equal to the mask's weight. A transition
//! of the atomic version that forgets a field (the `needs_update` of a new
//! idle CPU, the `next_blocked` of the first blocked load, the count) makes
//! this fail.

mod common;

use mech::balance::nohz::NohzAtomic;
use sched::balance::NohzState;

const HZ: u32 = 250;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn the_lock_free_nohz_state_follows_the_policys_transitions() {
    for seed in 1..=20u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let atomic = NohzAtomic::new();
        let mut policy = NohzState::default();
        let mut now = 0u64;
        for step in 0..2_000 {
            now += rng.next() % 3;
            let cpu = (rng.next() % 8) as usize;
            match rng.next() % 5 {
                0 | 1 => {
                    atomic.enter_idle(cpu, now, HZ);
                    policy.enter_idle(cpu, now, HZ);
                }
                2 => {
                    atomic.exit_idle(cpu);
                    policy.exit_idle(cpu);
                }
                3 => {
                    atomic.set_next_balance(now + 1);
                    policy.next_balance = now + 1;
                }
                _ => {
                    let all = rng.next().is_multiple_of(2);
                    let next = now + rng.next() % 10;
                    atomic.after_idle_balance(now, HZ, all, next);
                    policy.after_idle_balance(now, HZ, all, next);
                }
            }
            assert_eq!(atomic.snapshot(), policy, "seed {seed}, step {step}");
            assert_eq!(atomic.nr_cpus(), policy.idle_cpus.weight(), "seed {seed}, step {step}");
            assert_eq!(atomic.next_balance(), policy.next_balance);
        }
    }
}
