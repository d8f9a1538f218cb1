//! The run-queue timeline: an arena-backed AVL tree ordered by virtual
//! deadline and augmented with the minimum vruntime and minimum slice of
//! every subtree (the structure of section 1.7).
//!
//! Nodes are addressed by small indices (`u32`) chosen by the owner (the
//! run-queue uses the entity handle), so there are no pointers and no
//! `unsafe`. Each node keeps a copy of its entity's `deadline`, `vruntime`
//! and `slice`; the owner must not change those while the entity is linked,
//! except the slice through [`Tree::set_slice`], which re-propagates.
//!
//! Invariants (checked by [`Tree::check`] in tests):
//! - in-order traversal visits deadlines in wrap-safe non-decreasing order,
//!   and equal deadlines in insertion order (an insert goes right of equals);
//! - every node's `height` is `1 + max(children)`, and the two children's
//!   heights differ by at most one, so the depth is below `1.45 log2(n+2)`;
//! - `min_vruntime` / `min_slice` of a node are the exact wrap-safe minimum
//!   over its subtree;
//! - `leftmost` is the first node in order (or `NIL` when empty);
//! - `parent`/child links agree, and `len` counts linked nodes.
//! - an unlinked node is reachable from no link; its fields other than
//!   `linked` are stale (removal clears only the mark) and are never read:
//!   `insert` writes every field.
//!
//! Every insert and remove walks from the change point to the root once,
//! rebalancing and refreshing the augments: O(log n). [`Tree::pick`] is the
//! EEVDF descent: O(log n) eligibility tests.

use alloc::vec::Vec;

use crate::time::{vbefore, vmin};

/// The "no node" index.
pub const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node {
    left: u32,
    right: u32,
    parent: u32,
    height: u8,
    linked: bool,
    deadline: u64,
    vruntime: u64,
    slice: u64,
    min_vruntime: u64,
    min_slice: u64,
}

const EMPTY: Node = Node {
    left: NIL,
    right: NIL,
    parent: NIL,
    height: 0,
    linked: false,
    deadline: 0,
    vruntime: 0,
    slice: 0,
    min_vruntime: 0,
    min_slice: 0,
};

impl Node {
    /// A linked node with no children: its subtree's minima are its own.
    #[inline(always)]
    const fn leaf(deadline: u64, vruntime: u64, slice: u64) -> Node {
        Node { height: 1, linked: true, deadline, vruntime, slice, min_vruntime: vruntime, min_slice: slice, ..EMPTY }
    }
}

/// An allocation failure while growing the node arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory;

/// Augmented AVL tree over externally chosen indices; see the module docs
/// for its invariants.
#[derive(Clone, Debug, Default)]
pub struct Tree {
    nodes: Vec<Node>,
    root: u32,
    leftmost: u32,
    len: u32,
}

impl Tree {
    /// An empty tree.
    pub const fn new() -> Tree {
        Tree { nodes: Vec::new(), root: NIL, leftmost: NIL, len: 0 }
    }

    /// Make sure slot `idx` exists (index `NIL` is never valid).
    pub fn ensure_slot(&mut self, idx: u32) -> Result<(), OutOfMemory> {
        if idx == NIL {
            return Err(OutOfMemory);
        }
        let need = idx as usize + 1;
        if need > self.nodes.len() {
            self.nodes.try_reserve(need - self.nodes.len()).map_err(|_| OutOfMemory)?;
            self.nodes.resize(need, EMPTY);
        }
        Ok(())
    }

    /// Number of linked nodes.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether no node is linked.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `idx` is linked.
    #[inline]
    pub fn contains(&self, idx: u32) -> bool {
        self.nodes.get(idx as usize).is_some_and(|n| n.linked)
    }

    /// The node with the earliest deadline.
    #[inline]
    pub fn leftmost(&self) -> Option<u32> {
        (self.leftmost != NIL).then_some(self.leftmost)
    }

    /// Minimum vruntime over the whole tree.
    #[inline]
    pub fn min_vruntime(&self) -> Option<u64> {
        (self.root != NIL).then(|| self.nodes[self.root as usize].min_vruntime)
    }

    /// Minimum slice over the whole tree.
    #[inline]
    pub fn min_slice(&self) -> Option<u64> {
        (self.root != NIL).then(|| self.nodes[self.root as usize].min_slice)
    }

    /// Link `idx` with the given keys. Returns false (and does nothing) if
    /// the slot does not exist or is already linked.
    ///
    /// Inlined: the insert into an empty tree (the only node becomes root
    /// and leftmost; nothing to descend or rebalance), which is every
    /// wakeup of a two-task pipe. A non-empty tree takes the out-of-line
    /// descent.
    #[inline(always)]
    pub fn insert(&mut self, idx: u32, deadline: u64, vruntime: u64, slice: u64) -> bool {
        let Some(n) = self.nodes.get_mut(idx as usize) else { return false };
        if n.linked {
            return false;
        }
        *n = Node::leaf(deadline, vruntime, slice);
        self.len += 1;
        if self.root == NIL {
            self.root = idx;
            self.leftmost = idx;
            return true;
        }
        self.insert_below_root(idx, deadline);
        true
    }

    /// The descent, link and retrace of [`Tree::insert`] into a non-empty
    /// tree (`idx` already initialised and counted).
    #[inline(never)]
    fn insert_below_root(&mut self, idx: u32, deadline: u64) {
        let mut cur = self.root;
        let mut all_left = true;
        loop {
            let c = self.nodes[cur as usize];
            let go_left = vbefore(deadline, c.deadline);
            let next = if go_left { c.left } else { c.right };
            if next == NIL {
                if go_left {
                    self.nodes[cur as usize].left = idx;
                } else {
                    self.nodes[cur as usize].right = idx;
                    all_left = false;
                }
                break;
            }
            all_left &= go_left;
            cur = next;
        }
        self.nodes[idx as usize].parent = cur;
        if all_left {
            self.leftmost = idx;
        }
        self.retrace(cur);
    }

    /// Unlink `idx`. Returns false if it was not linked.
    ///
    /// Inlined: the removal of the only node (root and leftmost: nothing to
    /// relink or rebalance), which is every switch of a two-task pipe. A
    /// tree of several nodes takes the out-of-line relink and retrace.
    #[inline(always)]
    pub fn remove(&mut self, idx: u32) -> bool {
        let Some(n) = self.nodes.get_mut(idx as usize) else { return false };
        if !n.linked {
            return false;
        }
        if self.len == 1 {
            // only the mark: an unlinked node is unreachable and its other
            // fields are never read (`insert` overwrites them all)
            n.linked = false;
            self.root = NIL;
            self.leftmost = NIL;
            self.len = 0;
            return true;
        }
        self.remove_linked(idx);
        true
    }

    /// The tree's only node `old` replaced by `new` (which may be `old`
    /// itself, with new keys) with the given keys: the state `remove(old)`
    /// then `insert(new, ..)` leaves (root and leftmost `new`, no links,
    /// height 1, its own keys as its augments; `old` unmarked unless it is
    /// `new`), without the two calls' tests. Returns false, having changed
    /// nothing, unless the tree is exactly `old` and `new` is an existing
    /// slot (then the two calls' answers would both be `true`: `new` is
    /// `old` or not linked).
    #[inline(always)]
    pub fn replace_only(&mut self, old: u32, new: u32, deadline: u64, vruntime: u64, slice: u64) -> bool {
        if self.len != 1 || self.root != old || new as usize >= self.nodes.len() {
            return false;
        }
        // `old` is the root of a one-node tree, so linked; `new` is `old`
        // or not linked (the only linked node is `old`)
        self.nodes[old as usize].linked = false;
        self.nodes[new as usize] = Node::leaf(deadline, vruntime, slice);
        self.root = new;
        self.leftmost = new;
        true
    }

    /// [`Tree::replace_only`] for a caller that knows the tree to be
    /// exactly `old` (its length 1, `old` its leftmost, so its root) and
    /// `new` an existing slot (every entity's slot has its node): the same
    /// stores without the tests, which could only fail on a broken queue.
    #[inline(always)]
    pub fn replace_single(&mut self, old: u32, new: u32, deadline: u64, vruntime: u64, slice: u64) {
        debug_assert!(self.len == 1 && self.root == old && self.leftmost == old && (new as usize) < self.nodes.len());
        self.nodes[old as usize].linked = false;
        self.nodes[new as usize] = Node::leaf(deadline, vruntime, slice);
        self.root = new;
        self.leftmost = new;
    }

    /// [`Tree::insert`] into an empty tree of `idx`, an existing slot (every
    /// entity's slot has its node; an empty tree links none): the only node
    /// becomes root and leftmost, without insert's linked and root tests,
    /// which could only fail on a broken queue.
    #[inline(always)]
    pub fn insert_single(&mut self, idx: u32, deadline: u64, vruntime: u64, slice: u64) {
        debug_assert!(self.len == 0 && self.root == NIL && !self.nodes[idx as usize].linked);
        self.nodes[idx as usize] = Node::leaf(deadline, vruntime, slice);
        self.len = 1;
        self.root = idx;
        self.leftmost = idx;
    }

    /// [`Tree::remove`] for a caller that knows the tree to be exactly
    /// `idx` (its length 1, `idx` its leftmost, so its root): the same
    /// stores without the tests, which could only fail on a broken queue.
    #[inline(always)]
    pub fn remove_single(&mut self, idx: u32) {
        debug_assert!(self.len == 1 && self.root == idx && self.leftmost == idx);
        self.nodes[idx as usize].linked = false;
        self.root = NIL;
        self.leftmost = NIL;
        self.len = 0;
    }

    /// [`Tree::remove`] of a linked node in a tree of at least two.
    #[inline(never)]
    fn remove_linked(&mut self, idx: u32) {
        if self.leftmost == idx {
            self.leftmost = self.successor(idx);
        }
        let Node { left: l, right: r, parent: p, .. } = self.nodes[idx as usize];
        let start;
        if l == NIL || r == NIL {
            let child = if l != NIL { l } else { r };
            self.replace_child(p, idx, child);
            if child != NIL {
                self.nodes[child as usize].parent = p;
            }
            start = p;
        } else {
            let s = self.first_in(r);
            if s == r {
                start = s;
            } else {
                let sp = self.nodes[s as usize].parent;
                let sr = self.nodes[s as usize].right;
                self.nodes[sp as usize].left = sr;
                if sr != NIL {
                    self.nodes[sr as usize].parent = sp;
                }
                self.nodes[s as usize].right = r;
                self.nodes[r as usize].parent = s;
                start = sp;
            }
            self.nodes[s as usize].left = l;
            self.nodes[l as usize].parent = s;
            self.replace_child(p, idx, s);
            self.nodes[s as usize].parent = p;
        }
        // only the mark, as in `remove`
        self.nodes[idx as usize].linked = false;
        self.len -= 1;
        self.retrace(start);
    }

    /// Change a linked node's slice and refresh the `min_slice` augments
    /// on its path to the root. Does nothing for an unlinked index.
    pub fn set_slice(&mut self, idx: u32, slice: u64) {
        if !self.contains(idx) {
            return;
        }
        self.nodes[idx as usize].slice = slice;
        let mut n = idx;
        while n != NIL {
            self.update(n);
            n = self.nodes[n as usize].parent;
        }
    }

    /// The EEVDF pick: among linked nodes whose vruntime satisfies
    /// `eligible` (which must be monotone: if `v` is eligible, so is any
    /// earlier vruntime), the one with the earliest deadline (the first
    /// inserted among equal deadlines). `None` if no node is eligible.
    ///
    /// Inlined: the test of the leftmost node, which decides alone when it
    /// is eligible or is the only node (the descent would reach it again
    /// and test it again); the descent is out of line.
    #[inline(always)]
    pub fn pick(&self, eligible: impl Fn(u64) -> bool) -> Option<u32> {
        let lm = self.leftmost()?;
        if eligible(self.nodes[lm as usize].vruntime) {
            return Some(lm);
        }
        if self.len == 1 {
            return None;
        }
        self.pick_descend(eligible)
    }

    /// The descent of [`Tree::pick`] from the root.
    #[inline(never)]
    fn pick_descend(&self, eligible: impl Fn(u64) -> bool) -> Option<u32> {
        let mut n = self.root;
        while n != NIL {
            let node = &self.nodes[n as usize];
            if node.left != NIL && eligible(self.nodes[node.left as usize].min_vruntime) {
                n = node.left;
                continue;
            }
            if eligible(node.vruntime) {
                return Some(n);
            }
            n = node.right;
        }
        None
    }

    /// In-order successor of a linked node (`NIL` for the last).
    fn successor(&self, idx: u32) -> u32 {
        let r = self.nodes[idx as usize].right;
        if r != NIL {
            return self.first_in(r);
        }
        let mut child = idx;
        let mut p = self.nodes[idx as usize].parent;
        while p != NIL && self.nodes[p as usize].right == child {
            child = p;
            p = self.nodes[p as usize].parent;
        }
        p
    }

    fn first_in(&self, mut n: u32) -> u32 {
        while self.nodes[n as usize].left != NIL {
            n = self.nodes[n as usize].left;
        }
        n
    }

    /// Linked indices in deadline order (O(n); for tests and debugging).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut cur = self.leftmost;
        core::iter::from_fn(move || {
            if cur == NIL {
                return None;
            }
            let out = cur;
            cur = self.successor(cur);
            Some(out)
        })
    }

    #[inline]
    fn height(&self, n: u32) -> u8 {
        if n == NIL {
            0
        } else {
            self.nodes[n as usize].height
        }
    }

    /// Refresh `n`'s height and augments from its children; returns the
    /// children's heights (left, right), which the rebalance needs next
    /// (each child is looked up once: its augments and height together).
    fn update(&mut self, n: u32) -> (u8, u8) {
        let Node { left: l, right: r, vruntime, slice, .. } = self.nodes[n as usize];
        let mut min_v = vruntime;
        let mut min_s = slice;
        let mut hs = [0u8; 2];
        for (k, c) in [l, r].into_iter().enumerate() {
            if c != NIL {
                let cn = &self.nodes[c as usize];
                min_v = vmin(min_v, cn.min_vruntime);
                min_s = min_s.min(cn.min_slice);
                hs[k] = cn.height;
            }
        }
        let node = &mut self.nodes[n as usize];
        node.min_vruntime = min_v;
        node.min_slice = min_s;
        node.height = 1 + hs[0].max(hs[1]);
        (hs[0], hs[1])
    }

    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        if parent == NIL {
            self.root = new;
        } else if self.nodes[parent as usize].left == old {
            self.nodes[parent as usize].left = new;
        } else {
            self.nodes[parent as usize].right = new;
        }
    }

    fn rotate_left(&mut self, x: u32) -> u32 {
        let y = self.nodes[x as usize].right;
        let yl = self.nodes[y as usize].left;
        let p = self.nodes[x as usize].parent;
        self.nodes[x as usize].right = yl;
        if yl != NIL {
            self.nodes[yl as usize].parent = x;
        }
        self.replace_child(p, x, y);
        self.nodes[y as usize].parent = p;
        self.nodes[y as usize].left = x;
        self.nodes[x as usize].parent = y;
        self.update(x);
        self.update(y);
        y
    }

    fn rotate_right(&mut self, x: u32) -> u32 {
        let y = self.nodes[x as usize].left;
        let yr = self.nodes[y as usize].right;
        let p = self.nodes[x as usize].parent;
        self.nodes[x as usize].left = yr;
        if yr != NIL {
            self.nodes[yr as usize].parent = x;
        }
        self.replace_child(p, x, y);
        self.nodes[y as usize].parent = p;
        self.nodes[y as usize].right = x;
        self.nodes[x as usize].parent = y;
        self.update(x);
        self.update(y);
        y
    }

    /// Refresh `n`, rotate if unbalanced; returns the subtree's new root.
    fn rebalance(&mut self, n: u32) -> u32 {
        let (hl, hr) = self.update(n);
        let Node { left: l, right: r, .. } = self.nodes[n as usize];
        let bf = hl as i32 - hr as i32;
        if bf > 1 {
            let ll = self.nodes[l as usize].left;
            let lr = self.nodes[l as usize].right;
            if self.height(ll) < self.height(lr) {
                self.rotate_left(l);
            }
            self.rotate_right(n)
        } else if bf < -1 {
            let rl = self.nodes[r as usize].left;
            let rr = self.nodes[r as usize].right;
            if self.height(rr) < self.height(rl) {
                self.rotate_right(r);
            }
            self.rotate_left(n)
        } else {
            n
        }
    }

    fn retrace(&mut self, mut n: u32) {
        while n != NIL {
            let top = self.rebalance(n);
            n = self.nodes[top as usize].parent;
        }
    }

    /// Verify every invariant of the module docs (O(n); tests only).
    pub fn check(&self) -> Result<(), &'static str> {
        let mut count = 0u32;
        if self.root != NIL {
            if self.nodes[self.root as usize].parent != NIL {
                return Err("root has a parent");
            }
            self.check_node(self.root, &mut count)?;
        }
        if count != self.len {
            return Err("len does not match the linked nodes");
        }
        let first = if self.root == NIL { NIL } else { self.first_in(self.root) };
        if first != self.leftmost {
            return Err("cached leftmost is stale");
        }
        let mut prev: Option<u64> = None;
        for i in self.iter() {
            let d = self.nodes[i as usize].deadline;
            if prev.is_some_and(|p| vbefore(d, p)) {
                return Err("in-order deadlines decrease");
            }
            prev = Some(d);
        }
        Ok(())
    }

    fn check_node(&self, n: u32, count: &mut u32) -> Result<(u8, u64, u64), &'static str> {
        let node = self.nodes[n as usize];
        if !node.linked {
            return Err("reachable node not marked linked");
        }
        *count += 1;
        let mut min_v = node.vruntime;
        let mut min_s = node.slice;
        let mut hs = [0u8; 2];
        for (k, c) in [node.left, node.right].into_iter().enumerate() {
            if c != NIL {
                if self.nodes[c as usize].parent != n {
                    return Err("child's parent link is wrong");
                }
                let (h, v, s) = self.check_node(c, count)?;
                hs[k] = h;
                min_v = vmin(min_v, v);
                min_s = min_s.min(s);
            }
        }
        if hs[0].abs_diff(hs[1]) > 1 {
            return Err("AVL balance violated");
        }
        if node.height != 1 + hs[0].max(hs[1]) {
            return Err("stale height");
        }
        if node.min_vruntime != min_v || node.min_slice != min_s {
            return Err("stale augment");
        }
        Ok((node.height, min_v, min_s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    /// Tiny deterministic generator for the unit tests.
    fn lcg(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        *seed >> 33
    }

    fn brute_pick(keys: &[(u32, u64, u64)], eligible: impl Fn(u64) -> bool) -> Option<u32> {
        // keys in insertion order; earliest deadline wins, first inserted on ties.
        let mut best: Option<(u32, u64)> = None;
        for &(i, d, v) in keys {
            if eligible(v) && best.is_none_or(|(_, bd)| vbefore(d, bd)) {
                best = Some((i, d));
            }
        }
        best.map(|b| b.0)
    }

    #[test]
    fn random_inserts_and_removes_keep_invariants_and_pick() {
        let mut seed = 7;
        let mut t = Tree::new();
        let mut live: vec::Vec<(u32, u64, u64)> = vec![];
        for step in 0..4000u32 {
            let idx = (lcg(&mut seed) % 300) as u32;
            t.ensure_slot(idx).unwrap();
            if t.contains(idx) {
                assert!(t.remove(idx));
                live.retain(|e| e.0 != idx);
            } else {
                // small key range forces many equal deadlines; base near the wrap point
                let d = (u64::MAX - 50).wrapping_add(lcg(&mut seed) % 100);
                let v = (u64::MAX - 500).wrapping_add(lcg(&mut seed) % 1000);
                assert!(t.insert(idx, d, v, 1 + lcg(&mut seed) % 10));
                live.push((idx, d, v));
            }
            if step % 7 == 0 {
                t.check().unwrap();
                let cut = (u64::MAX - 500).wrapping_add(lcg(&mut seed) % 1000);
                let elig = |v: u64| crate::time::vbefore_eq(v, cut);
                assert_eq!(t.pick(elig), brute_pick(&live, elig), "step {step}");
            }
        }
        assert_eq!(t.len() as usize, live.len());
    }

    #[test]
    fn depth_is_logarithmic() {
        let mut t = Tree::new();
        let n = 1 << 14;
        for i in 0..n {
            t.ensure_slot(i).unwrap();
            t.insert(i, i as u64, 0, 1); // sorted input: worst case for a plain BST
        }
        t.check().unwrap();
        let h = t.height(t.root) as f64;
        assert!(h <= 1.45 * ((n + 2) as f64).log2(), "height {h}");
    }

    #[test]
    fn slice_change_propagates_and_bad_indices_are_refused() {
        let mut t = Tree::new();
        for i in 0..10 {
            t.ensure_slot(i).unwrap();
            t.insert(i, i as u64 * 10, 0, 100 + i as u64);
        }
        assert_eq!(t.min_slice(), Some(100));
        t.set_slice(7, 3);
        assert_eq!(t.min_slice(), Some(3));
        t.check().unwrap();
        assert!(!t.insert(7, 0, 0, 0), "double insert refused");
        assert!(!t.insert(1000, 0, 0, 0), "missing slot refused");
        assert!(!t.remove(1000));
        assert!(t.ensure_slot(NIL).is_err());
        assert!(t.remove(7));
        assert_eq!(t.min_slice(), Some(100));
        assert!(!t.remove(7));
    }
}
