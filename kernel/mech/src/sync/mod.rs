//! Blocking primitives: wait queue, sleeping mutex, semaphore, completion
//! and pipe. All queue their sleepers on [`Waiters`], with the sleep/wake
//! handshake `wakeup/mod.rs` documents (set Sleeping, re-check, schedule): a
//! `WaitQueue` re-checks a condition read without its lock, after a fence;
//! a pipe checks its ring under the one lock that also holds its waiters
//! (`block_locked`).
//!
//! Follows Linux's `kernel/sched/wait.c` (`prepare_to_wait_event()`,
//! `__wake_up()`) and `kernel/sched/completion.c` (`wait_for_completion()`,
//! `complete_all()`); the mutex and semaphore are simpler than
//! `kernel/locking/`'s (no optimistic spinning, no handoff).

pub mod pipe;

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};

use sched::WakeFlags;

use crate::task::{self, Task, TaskState};
use crate::lock::level::{self, Level};
use crate::lock::{IrqGuard, IrqMutex};

/// The tasks waiting for one condition, first come first woken, kept under
/// a lock of their user's: a [`WaitQueue`]'s own, or a pipe's, which guards
/// the condition too (`pipe.rs`).
///
/// The first waiter has a slot of its own: a pipe end or a wait queue
/// usually has at most one, and then queueing and popping it are a store
/// and a load, without the ring arithmetic of the heap-backed rest.
///
/// Invariant: `rest` is empty while `first` is `None`; the waiters in order
/// are `first` then `rest`. A task's `on_wait_queue` is true exactly while
/// it is in some list (a task waits on one at a time), and changes only
/// under the lock that holds that list. Wakers pop the waiter they wake, so
/// a woken task usually finds itself already removed.
pub struct Waiters {
    first: Option<Arc<Task>>,
    rest: VecDeque<Arc<Task>>,
}

impl Default for Waiters {
    fn default() -> Self {
        Self::new()
    }
}

impl Waiters {
    pub const fn new() -> Waiters {
        Waiters { first: None, rest: VecDeque::new() }
    }

    pub fn len(&self) -> usize {
        usize::from(self.first.is_some()) + self.rest.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// Queues `me` (unless a spurious wakeup left it queued) and marks it
    /// Sleeping: under the list's lock, so that a waker who takes that lock
    /// afterwards finds it here and asleep.
    #[inline(always)]
    fn prepare(&mut self, me: &Arc<Task>) {
        if !me.on_wait_queue.load(Ordering::Relaxed) {
            // Counted before the slot is read: after the count's atomic
            // add the compiler would read the slot again to drop what the
            // store replaces.
            let entry = me.clone();
            if self.first.is_none() {
                self.first = Some(entry);
            } else {
                self.rest.push_back(entry);
            }
            me.on_wait_queue.store(true, Ordering::Relaxed);
        }
        me.set_state(TaskState::Sleeping);
    }

    /// Removes the first waiter, to be woken once the lock is dropped.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Arc<Task>> {
        let t = self.first.take()?;
        if !self.rest.is_empty() {
            self.first = self.rest.pop_front();
        }
        t.on_wait_queue.store(false, Ordering::Relaxed);
        Some(t)
    }

    /// Takes `me` off the list if no waker did (its condition held first).
    #[inline(always)]
    fn leave(&mut self, me: &Arc<Task>) {
        if me.on_wait_queue.load(Ordering::Relaxed) {
            self.remove(me);
            me.on_wait_queue.store(false, Ordering::Relaxed);
        }
    }

    /// `leave`'s search, out of line: a task that waited is usually popped.
    #[inline(never)]
    fn remove(&mut self, me: &Arc<Task>) {
        if self.first.as_ref().is_some_and(|t| Arc::ptr_eq(t, me)) {
            self.first = self.rest.pop_front();
        } else {
            self.rest.retain(|t| !Arc::ptr_eq(t, me));
        }
    }

    /// Removes every waiter, to be woken once the lock is dropped.
    fn take_all(&mut self) -> Waiters {
        for t in self.iter() {
            t.on_wait_queue.store(false, Ordering::Relaxed);
        }
        core::mem::take(self)
    }

    /// The waiters in order.
    fn iter(&self) -> impl Iterator<Item = &Arc<Task>> {
        self.first.iter().chain(self.rest.iter())
    }
}

/// Blocks the running task until `ready` holds of the data `lock` guards,
/// queued on the [`Waiters`] that `waiters` finds in it; `guard` holds
/// `lock` and `ready` was false under it. Returns the lock held again with
/// `ready` true and the task off the list.
///
/// The condition and the list share one lock: the task queues itself and
/// sets itself Sleeping under the lock it read the condition under, and a
/// waker changes the condition and pops waiters under it, so a wakeup
/// between the check and the sleep is never lost (Linux's
/// `prepare_to_wait_event()` under a caller's lock, as `pipe_read()`'s
/// `pipe->mutex` with its wait queue).
#[track_caller]
#[inline(always)]
pub(crate) fn block_locked<'a, L: Level, T, W, R>(lock: &'a IrqMutex<L, T>, guard: IrqGuard<'a, L, T>, waiters: W, ready: R) -> IrqGuard<'a, L, T>
where
    W: Fn(&mut T) -> &mut Waiters,
    R: Fn(&T) -> bool,
{
    let at = core::panic::Location::caller();
    // Borrowed: the running task outlives its own wait.
    task::with_current(|me| {
        if crate::debug::enabled() {
            *me.blocked_at.lock() = Some(at);
        }
        let mut guard = guard;
        loop {
            waiters(&mut guard).prepare(me);
            drop(guard);
            // `fault=preempt_points`: preempted while Sleeping, queued.
            crate::inject::preempt_point();
            crate::schedule::schedule();
            // Woken: usually popped by the waker, who set us Running.
            guard = lock.lock();
            if ready(&guard) {
                break;
            }
            // Woken with the condition false (a spurious wakeup, or one
            // whose condition another task took first): sleep again.
            crate::inject::after_wait();
        }
        me.set_state(TaskState::Running);
        waiters(&mut guard).leave(me);
        guard
    })
}

/// Wakes `first`, popped from its list by the caller, or if it was not
/// asleep (woken already, spuriously, and re-checking) the next that `pop`
/// gives that is; then lets a woken task with a better claim run.
#[inline(always)]
pub(crate) fn wake_popped(first: Arc<Task>, flags: WakeFlags, mut pop: impl FnMut() -> Option<Arc<Task>>) -> bool {
    let mut next = Some(first);
    let mut woke = false;
    // Each popped task's count is dropped before the preemption point.
    while let Some(t) = next {
        if crate::wakeup::try_to_wake_up(&t, flags) {
            woke = true;
            break;
        }
        next = pop();
    }
    crate::schedule::preempt_point();
    woke
}

/// Wakes every task of `all`, popped from their list by the caller; returns
/// how many were asleep.
fn wake_taken(all: Waiters) -> usize {
    let n = all.iter().filter(|t| crate::wakeup::try_to_wake_up(t, WakeFlags::NONE)).count();
    crate::schedule::preempt_point();
    n
}

/// Tasks waiting for a condition read without the queue's lock.
///
/// Invariant: `queued` is the length of `waiters` (changed only under its
/// lock); see [`Waiters`] for the tasks' side.
pub struct WaitQueue {
    waiters: IrqMutex<level::WaitQueue, Waiters>,
    /// How many tasks wait, readable without the lock: a waker that sees 0
    /// after ordering its condition store (Linux's `wq_has_sleeper`) skips
    /// the lock entirely.
    queued: AtomicUsize,
}

impl Default for WaitQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitQueue {
    pub const fn new() -> WaitQueue {
        WaitQueue { waiters: IrqMutex::new(Waiters::new()), queued: AtomicUsize::new(0) }
    }

    /// Blocks until `cond()` holds. `cond` is evaluated after the task is on
    /// the queue and marked Sleeping, so a wakeup between the check and the
    /// sleep is never lost. `cond` may act when it returns true (take the
    /// data it waited for): it is not called again after that.
    #[track_caller]
    #[inline]
    pub fn wait_until(&self, mut cond: impl FnMut() -> bool) {
        // Inlined: the condition usually holds already, and then there is
        // no call to make.
        if cond() {
            return;
        }
        self.block_until(cond);
    }

    /// `wait_until` once the condition failed: queue, sleep, re-check.
    #[track_caller]
    #[inline(never)]
    fn block_until(&self, cond: impl FnMut() -> bool) {
        // The caller's location is read here: inside the closure it would
        // be the closure's.
        let at = core::panic::Location::caller();
        // Borrowed: the running task outlives its own wait.
        task::with_current(|me| self.block(me, at, cond));
    }

    /// `block_until` for the running task `me`, called from `at`.
    #[inline(always)]
    fn block(&self, me: &Arc<Task>, at: &'static core::panic::Location<'static>, mut cond: impl FnMut() -> bool) {
        if crate::debug::enabled() {
            *me.blocked_at.lock() = Some(at);
        }
        loop {
            {
                let mut q = self.waiters.lock();
                q.prepare(me);
                self.queued.store(q.len(), Ordering::Relaxed);
            }
            // Order the queue and state stores before the condition's loads
            // (the waker stores the condition, fences, then reads `queued`).
            fence(Ordering::SeqCst);
            if cond() {
                break;
            }
            // `fault=preempt_points`: preempted while Sleeping, queued.
            crate::inject::preempt_point();
            crate::schedule::schedule();
            // Woken: the waker popped us and set us Running.
            if cond() {
                break;
            }
            // Woken with the condition false (a spurious wakeup, or one
            // whose condition another task took first): sleep again.
            crate::inject::after_wait();
        }
        me.set_state(TaskState::Running);
        // The condition held before a waker removed us: leave the queue.
        if me.on_wait_queue.load(Ordering::Relaxed) {
            let mut q = self.waiters.lock();
            q.leave(me);
            self.queued.store(q.len(), Ordering::Relaxed);
        }
    }

    /// Wakes the first waiter that was asleep; returns whether one was.
    pub fn wake_one(&self) -> bool {
        self.wake_one_with(WakeFlags::NONE)
    }

    /// As `wake_one`, hinting that the caller is about to sleep (WF_SYNC).
    pub fn wake_one_sync(&self) -> bool {
        self.wake_one_with(WakeFlags::SYNC)
    }

    /// Whether some task may wait here, after ordering the caller's
    /// condition stores before the check (pairs with `wait_until`'s fence).
    fn has_sleeper(&self) -> bool {
        fence(Ordering::SeqCst);
        self.queued.load(Ordering::Relaxed) != 0
    }

    fn pop(&self) -> Option<Arc<Task>> {
        let mut q = self.waiters.lock();
        let t = q.pop()?;
        self.queued.store(q.len(), Ordering::Relaxed);
        Some(t)
    }

    /// Pops the first waiter and drops it without waking it: the lost
    /// wakeup `test_watchdog=lost_wakeup` creates (a waker that removed its
    /// waiter and never woke it). Returns whether there was one.
    pub fn forget_first(&self) -> bool {
        self.pop().is_some()
    }

    /// Inlined: most calls find no sleeper and then there is no call to make.
    #[inline]
    fn wake_one_with(&self, flags: WakeFlags) -> bool {
        if !self.has_sleeper() {
            return false;
        }
        self.wake_first(flags)
    }

    /// `wake_one_with` once a sleeper may be there.
    #[inline(never)]
    fn wake_first(&self, flags: WakeFlags) -> bool {
        match self.pop() {
            Some(t) => wake_popped(t, flags, || self.pop()),
            None => {
                crate::schedule::preempt_point();
                false
            }
        }
    }

    /// Wakes every waiter; returns how many were asleep.
    pub fn wake_all(&self) -> usize {
        if !self.has_sleeper() {
            return 0;
        }
        let all = {
            let mut q = self.waiters.lock();
            self.queued.store(0, Ordering::Relaxed);
            q.take_all()
        };
        wake_taken(all)
    }
}

/// A one-shot event: `wait` blocks until `complete_all` has been called.
pub struct Completion {
    done: AtomicBool,
    wq: WaitQueue,
}

impl Default for Completion {
    fn default() -> Self {
        Self::new()
    }
}

impl Completion {
    pub const fn new() -> Completion {
        Completion { done: AtomicBool::new(false), wq: WaitQueue::new() }
    }
    #[track_caller]
    pub fn wait(&self) {
        self.wq.wait_until(|| self.done.load(Ordering::Acquire));
    }
    pub fn complete_all(&self) {
        self.done.store(true, Ordering::Release);
        self.wq.wake_all();
    }
}

// A thread's end reaches its joiners through its completion (`thread.rs`
// gives each thread one; the switch that ends it completes it).
impl crate::task::ExitNotice for Completion {
    fn complete(&self) {
        self.complete_all();
    }
    fn wait(&self) {
        Completion::wait(self);
    }
}

/// A counting semaphore.
pub struct Semaphore {
    count: IrqMutex<level::SemaphoreCount, usize>,
    wq: WaitQueue,
}

impl Semaphore {
    pub const fn new(count: usize) -> Semaphore {
        Semaphore { count: IrqMutex::new(count), wq: WaitQueue::new() }
    }
    fn try_down(&self) -> bool {
        let mut c = self.count.lock();
        if *c > 0 {
            *c -= 1;
            true
        } else {
            false
        }
    }
    /// Takes one unit, sleeping until one is available.
    #[track_caller]
    pub fn down(&self) {
        self.wq.wait_until(|| self.try_down());
    }
    /// The units available now (for accounting: a unit lost or made up
    /// shows here once every holder has returned its own).
    pub fn value(&self) -> usize {
        *self.count.lock()
    }
    /// Returns one unit and wakes a waiter.
    pub fn up(&self) {
        *self.count.lock() += 1;
        self.wq.wake_one();
    }
}

/// A sleeping mutex: contenders block instead of spinning.
pub struct Mutex<T> {
    inner: spin::Mutex<T>,
    wq: WaitQueue,
}

/// Holds a `Mutex`; unlocking wakes one waiter.
pub struct MutexGuard<'a, T> {
    guard: Option<spin::MutexGuard<'a, T>>,
    wq: &'a WaitQueue,
}

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Mutex<T> {
        Mutex { inner: spin::Mutex::new(value), wq: WaitQueue::new() }
    }
    #[track_caller]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        loop {
            if let Some(g) = self.inner.try_lock() {
                return MutexGuard { guard: Some(g), wq: &self.wq };
            }
            self.wq.wait_until(|| !self.inner.is_locked());
        }
    }
}

impl<T> core::ops::Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.guard.as_ref().expect("held until drop")
    }
}

impl<T> core::ops::DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.guard.as_mut().expect("held until drop")
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        drop(self.guard.take());
        self.wq.wake_one();
    }
}
