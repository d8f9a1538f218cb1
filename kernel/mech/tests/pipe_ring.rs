//! The pipe's ring through `Pipe::write` and `Pipe::read` with nobody
//! waiting (so no switch): bytes come out in the order they went in, with
//! bytes held across the ring's end at every offset, one at a time (the
//! ring's one-byte copy) and in bulk.

mod common;

use common::*;
use mech::sync::pipe::Pipe;

#[test]
fn bytes_come_out_in_order_across_the_rings_end() {
    boot(1);
    run_on(0);
    // A capacity that no copy size divides, and reads that leave bytes
    // behind: the ring holds bytes across its end at every offset.
    let pipe = Pipe::new(7);
    let mut held = std::collections::VecDeque::new();
    let mut next_in = 0u8;
    for round in 0..500usize {
        let room = 7 - held.len();
        let w = (1 + round % 4).min(room);
        if w > 0 {
            let data: Vec<u8> = (0..w).map(|i| next_in.wrapping_add(i as u8)).collect();
            next_in = next_in.wrapping_add(w as u8);
            pipe.write(&data, false);
            held.extend(data);
        }
        let r = (1 + (round * 5) % 3).min(held.len());
        if r > 0 {
            let mut got = vec![0u8; r];
            assert_eq!(pipe.read(&mut got), r, "round {round}");
            let want: Vec<u8> = held.drain(..r).collect();
            assert_eq!(got, want, "round {round}");
        }
    }
    // The bulk copy (at least `SMALL_COPY` bytes) across the end as well.
    let big = Pipe::new(37);
    let mut at = 0u8;
    for round in 0..50usize {
        let n = 16 + round % 20;
        let data: Vec<u8> = (0..n).map(|i| at.wrapping_add(i as u8)).collect();
        big.write(&data, false);
        let mut got = vec![0u8; n];
        assert_eq!(big.read_exact(&mut got), n);
        assert_eq!(got, data, "bulk round {round}");
        at = at.wrapping_add(n as u8);
    }
    single_bytes_come_out_in_order_at_every_offset_and_fill();
}

/// Single bytes (the ring's one-byte copy), after the test above in the
/// same boot (a process boots once).
fn single_bytes_come_out_in_order_at_every_offset_and_fill() {
    // For each number of bytes left in the ring, one-byte writes and reads
    // walk the write and the read position twice around it: every one-byte
    // copy in and out of every slot, the wrap from the last slot to the
    // first included, behind every fill level.
    const CAP: usize = 5;
    for fill in 0..CAP {
        let pipe = Pipe::new(CAP);
        let mut held = std::collections::VecDeque::new();
        let mut next_in = 1u8;
        for _ in 0..fill {
            pipe.write(&[next_in], false);
            held.push_back(next_in);
            next_in = next_in.wrapping_add(1);
        }
        for step in 0..2 * CAP + 1 {
            pipe.write(&[next_in], false);
            held.push_back(next_in);
            next_in = next_in.wrapping_add(1);
            let mut got = [0u8; 1];
            assert_eq!(pipe.read(&mut got), 1, "fill {fill} step {step}");
            assert_eq!(got[0], held.pop_front().unwrap(), "fill {fill} step {step}");
        }
        // What is left comes out whole, in order, by the general copy.
        let mut rest = vec![0u8; held.len()];
        assert_eq!(pipe.read(&mut rest), held.len(), "fill {fill}");
        assert_eq!(rest, Vec::from(held), "fill {fill}");
    }
}
