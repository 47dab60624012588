//! Overhead values for the simulator. The model — the term vocabulary, [`Overheads`], the
//! measured model file and its evaluation at n — is `rtsched_model::overheads`, shared with
//! analysis and the runtime; it is re-exported here. How the simulator charges the values:
//! docs/simulator.md, "Overhead injection" (the charging is in `engine.rs`).
//!
//! The simulator charges [`SIMULATOR_TERMS`] (Δrel, Δev, Δsch, Δcxs, Δipi, tick) and ignores
//! every other term of an [`Overheads`] (`lock_wait` is part of Δsch; the G-EDF-MP, SP-RES,
//! push/pull and RTWS terms have no mechanism in the simulator).

pub use rtsched_model::overheads::{
    OverheadModel, OverheadSpec, OverheadStat, Overheads, Term, MAX_OVERHEAD, SIMULATOR_TERMS,
};

/// The simulator's view of `v`: the terms it charges, the others zeroed, and the non-zero
/// terms it drops (for a note to the user; `lock_wait` is not listed, as it is part of Δsch).
pub fn simulator_view(v: &Overheads) -> (Overheads, Vec<Term>) {
    let mut out = Overheads::ZERO;
    let mut dropped = Vec::new();
    for t in v.nonzero_terms() {
        if SIMULATOR_TERMS.contains(&t) {
            out.set(t, v.get(t));
        } else if t != Term::LockWait {
            dropped.push(t);
        }
    }
    (out, dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_keeps_the_charged_terms() {
        let v = Overheads { release_ns: 1, lock_wait_ns: 2, request_ns: 3, tick_ns: 4, ..Overheads::ZERO };
        let (s, dropped) = simulator_view(&v);
        assert_eq!(s, Overheads { release_ns: 1, tick_ns: 4, ..Overheads::ZERO });
        assert_eq!(dropped, vec![Term::Request]);
    }
}
