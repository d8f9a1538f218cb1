//! The job pool of the QEMU phase: scenarios and experiments' quick forms share a fixed number
//! of slots (the machine's cores), the big and long jobs first.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;


/// The verdict on one scenario.
#[derive(Debug)]
pub struct Verdict {
    pub name: &'static str,
    pub passed: bool,
    /// The report printed for it (one line for a pass).
    pub report: String,
    /// Its wall time in seconds (both boots of a `versus` scenario, every boot of an experiment).
    pub secs: f64,
}

/// One unit of work of the QEMU phase: a scenario (one or two boots) or an experiment's quick
/// form (its whole matrix, boot after boot). Both kinds share one pool of slots, so that neither
/// waits for the other's last job.
pub struct Job {
    /// Slots it holds while it runs (clamped to the pool's).
    pub slots: u32,
    /// How many QEMU boots it makes, one after the other: the pool starts the jobs with the most
    /// first (after the ones that take every slot), so that a long one does not end the run alone.
    pub boots: u32,
    pub run: Box<dyn FnOnce() -> Verdict + Send>,
}

/// A counting semaphore over the machine's slots.
struct Slots {
    free: Mutex<u32>,
    cv: Condvar,
}

impl Slots {
    fn acquire(&self, n: u32) {
        let mut f = self.free.lock().unwrap();
        while *f < n {
            f = self.cv.wait(f).unwrap();
        }
        *f -= n;
    }

    fn release(&self, n: u32) {
        *self.free.lock().unwrap() += n;
        self.cv.notify_all();
    }
}


/// Runs the jobs, at most `slots` slots at a time, printing each verdict as it comes: first the
/// ones that take every slot, then the others by their number of boots, most first (a stable
/// sort: otherwise in the order given).
pub fn run_jobs(jobs: Vec<Job>, slots: u32) -> Vec<Verdict> {
    let slots = slots.max(1);
    let mut jobs = jobs;
    start_order(&mut jobs, slots);
    let queue = Arc::new(Mutex::new(jobs.into_iter().collect::<VecDeque<_>>()));
    let sem = Arc::new(Slots {
        free: Mutex::new(slots),
        cv: Condvar::new(),
    });
    let verdicts = Arc::new(Mutex::new(Vec::new()));
    let workers: Vec<_> = (0..slots)
        .map(|_| {
            let (queue, sem, verdicts) = (queue.clone(), sem.clone(), verdicts.clone());
            thread::spawn(move || loop {
                let Some(j) = queue.lock().unwrap().pop_front() else {
                    return;
                };
                let need = j.slots.clamp(1, slots);
                sem.acquire(need);
                let v = (j.run)();
                sem.release(need);
                let mut all = verdicts.lock().unwrap();
                print!("{}", v.report);
                all.push(v);
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    Arc::try_unwrap(verdicts)
        .map(|m| m.into_inner().unwrap())
        .unwrap_or_default()
}

/// The order in which a pool of `slots` starts `jobs` (see [`run_jobs`]).
fn start_order(jobs: &mut [Job], slots: u32) {
    jobs.sort_by_key(|j| std::cmp::Reverse((j.slots.clamp(1, slots), j.boots)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool starts the jobs that take every slot first, then the others by their boots,
    /// most first, otherwise in the order given; every job's verdict comes back.
    #[test]
    fn jobs_start_big_and_long_first() {
        let job = |name: &'static str, slots, boots| Job {
            slots,
            boots,
            run: Box::new(move || Verdict { name, passed: true, report: String::new(), secs: 1.0 }),
        };
        let jobs = || vec![job("a", 1, 1), job("versus", 1, 2), job("b", 1, 1), job("alone", 2, 1), job("experiment", 1, 12)];
        let names = |js: Vec<Job>| js.into_iter().map(|j| (j.run)().name).collect::<Vec<_>>();
        let mut js = jobs();
        start_order(&mut js, 2);
        assert_eq!(names(js), ["alone", "experiment", "versus", "a", "b"]);
        // With one slot, "taking every slot" means one: only the boots count.
        let mut js = jobs();
        start_order(&mut js, 1);
        assert_eq!(names(js), ["experiment", "versus", "a", "b", "alone"]);
        let mut v: Vec<_> = run_jobs(jobs(), 2).into_iter().map(|v| v.name).collect();
        v.sort();
        assert_eq!(v, ["a", "alone", "b", "experiment", "versus"]);
    }

}
