//! The coordinator's passes while the workers run: doorbell waits that
//! lost their wakeup or ran past their timeout, and the orphaned children
//! to join.

use super::*;

/// The coordinator's pass over the doorbells: a waiter asleep (off its
/// runqueue) while a token posted for it waits, with no post still waking
/// it, seen twice in a row, is a lost wakeup; a wait past
/// `BELL_TIMEOUT_NS` is ended (a timeout).
pub(super) fn watch(w: &World) {
    let now = mech::rq::now_ns();
    for (i, s) in w.slots.iter().enumerate() {
        let b = &s.bell;
        let since = b.since.load(Ordering::Acquire);
        if since == 0 {
            b.suspect.store(0, Ordering::Relaxed);
            continue;
        }
        // Tokens first, then posts in flight: a post that bumped `posted`
        // after this read is seen in `posting` until its wakeup is done.
        let posted = b.posted.load(Ordering::SeqCst);
        let taken = b.taken.load(Ordering::SeqCst);
        let posting = b.posting.load(Ordering::SeqCst);
        // The slot's lock is let go before the runqueue's is taken.
        let asleep = || {
            let task = s.task.lock().clone();
            task.is_some_and(|t| asleep_off_queue(&t))
        };
        if posted > taken && posting == 0 && asleep() && b.since.load(Ordering::Acquire) == since {
            let key = (posted << 32 | (taken & 0xffff_ffff)) + 1;
            if b.suspect.swap(key, Ordering::Relaxed) != key {
                continue; // first sighting: look again at the next pass
            }
            b.suspect.store(0, Ordering::Relaxed);
            w.violation(i, C::LostWakeups, format_args!("asleep on its doorbell with {} token(s) posted and no wakeup coming", posted - taken));
        } else {
            b.suspect.store(0, Ordering::Relaxed);
            if now.saturating_sub(since) <= BELL_TIMEOUT_NS {
                continue;
            }
        }
        b.generation.fetch_add(1, Ordering::AcqRel);
        b.wq.wake_all();
    }
}

/// Whether `t` is asleep for good: Sleeping, and off its runqueue or
/// queued only as a delayed entity (DELAY_DEQUEUE keeps a sleeper queued and
/// `Task::on_rq` set). A task that set itself Sleeping and was preempted
/// before it could block stays runnable: not asleep.
pub(super) fn asleep_off_queue(t: &Arc<Task>) -> bool {
    if t.state() != TaskState::Sleeping {
        return false;
    }
    if !t.on_rq.load(Ordering::SeqCst) {
        return true;
    }
    let rq = mech::rq::lock_task_rq(t);
    let eid = EntityId(t.eid.load(Ordering::Relaxed));
    rq.task_of(eid.0).is_some_and(|x| Arc::ptr_eq(x, t)) && rq.fair.is_delayed(eid) && t.state() == TaskState::Sleeping
}

/// Joins the orphaned children that have exited.
pub(super) fn reap_orphans(w: &World) {
    let done: Vec<Arc<Task>> = {
        let mut o = w.orphans.lock();
        let (dead, live): (Vec<_>, Vec<_>) = o.drain(..).partition(|t| t.state() == TaskState::Dead);
        *o = live;
        dead
    };
    for t in &done {
        w.reap(t);
        w.children.fetch_sub(1, Ordering::Relaxed);
    }
}

