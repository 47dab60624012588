//! The overhead model: the one definition of overhead terms, overhead values and the measured
//! model file that analysis (inflation rules), the simulator (injection) and the runtime
//! (measurement) share. Design note: `docs/formats.md` ("Overhead models") and
//! `docs/overheads.md`.
//!
//! # Terms
//!
//! The vocabulary is defined once, in the `define_terms!` invocation of `terms.rs`: each [`Term`] has a name (the
//! key in model files), a symbol (as the papers write it), a [`TermKind`] (CPU time on some
//! processor, or a latency that delays a job without using a processor) and a field of
//! [`Overheads`]. Sources: Cerqueira, Vanga & Brandenburg, RTAS 2014, §IV-A (Δev, Δrel, Δipi,
//! Δsch, Δcxs, tick, Δreq, Δdsp, Δcpd); Brandenburg & Anderson, RTSS 2009, §2 "Overheads";
//! Brandenburg & Gül, RTSS 2016, §VII-A (migration timer, subtask activation); Lelli et al.
//! 2011 (push, pull); the RTWS paper (steal).
//!
//! | term | symbol | kind | runtime traces it | simulator charges it | analysis charges it |
//! |---|---|---|---|---|---|
//! | `release` | Δrel | CPU | all mechanisms | yes | every rule |
//! | `release_event` | Δev | latency | all mechanisms | yes | every rule (period shrink) |
//! | `schedule` | Δsch | CPU | all but kernel-sd | yes | every rule |
//! | `context_switch` | Δcxs | CPU | all but kernel-sd | yes | every rule |
//! | `ipi` | Δipi | latency | global mechanisms | yes | global rules |
//! | `tick` | Δtck | CPU | quantum-driven plugins (coming) | gedf-quantum only | every rule (U_tck) |
//! | `lock_wait` | — | CPU | gsn-edf, pedf | no (inside `schedule`) | no (inside `schedule`) |
//! | `request` | Δreq | latency | gedf-mp (coming) | no | G-EDF-MP |
//! | `dsp` | Δdsp | CPU (DSP) | gedf-mp (coming) | no | G-EDF-MP |
//! | `migration_timer` | — | CPU | spres (coming) | no | SP-RES |
//! | `subtask_activation` | — | CPU | spres (coming) | no | SP-RES |
//! | `budget_enforcement` | — | CPU | spres (coming) | no | SP-RES |
//! | `push` | — | CPU | push-pull (coming) | no | push/pull (added to Δrel) |
//! | `pull` | — | CPU | push-pull (coming) | no | push/pull (added to Δsch) |
//! | `steal` | — | CPU | rtws (coming) | no | none (no RTWS inflation rule) |
//!
//! "Simulator charges it": [`SIMULATOR_TERMS`]. Which terms each inflation rule charges is in
//! the rule table of `rtsched_analysis::overheads`.
//!
//! # Evaluation
//!
//! A measured term is a table of sample points in the task count n with the average and the
//! maximum observed value. [`TermTable::eval`] evaluates it at n: piecewise-linear between the
//! points, clamped (constant) outside them, rounded up to whole ns; for the maximum the samples
//! are first replaced by their running maximum in n, so the curve is a monotone upper bound
//! (Brandenburg & Anderson, RTSS 2009, §4.1: "monotonic piece-wise linear interpolation to
//! derive upper-bounds"). [`TermTable::eval_extrapolated`] instead continues the last segment
//! beyond the last sample (never downward), and [`OverheadModel::resolve_extrapolated`] also
//! scales chosen terms from the processor count the model was measured on to another one —
//! both are *extrapolations*, not measurements, and every output that uses them says so.

mod eval;
mod file;
mod terms;

pub use eval::{Extrapolation, OverheadModel, OverheadSpec, OverheadStat, TermTable};
pub use terms::{vocabulary, Overheads, Term, TermKind, MAX_OVERHEAD, SIMULATOR_TERMS};

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TermTable {
        TermTable::new(vec![2, 4, 8], vec![10, 30, 20], vec![100, 50, 300])
    }

    #[test]
    fn interpolation_is_piecewise_linear_clamped_and_rounded_up() {
        let t = table();
        // Avg: exact at the points, linear between, clamped outside.
        assert_eq!([1, 2, 3, 4, 5, 6, 8, 100].map(|n| t.eval(n, OverheadStat::Avg)), [10, 10, 20, 30, 28, 25, 20, 20]);
        // 30 + ceil(-10 * 1 / 4) = 30 - 2 = 28 (the exact 27.5 rounded up).
        // Max: running maximum 100, 100, 300 (the dip at n = 4 is lifted).
        assert_eq!(
            [1, 2, 3, 4, 5, 6, 7, 8, 9].map(|n| t.eval(n, OverheadStat::Max)),
            [100, 100, 100, 100, 150, 200, 250, 300, 300]
        );
    }

    #[test]
    fn extrapolation_continues_the_last_segment_never_downward() {
        let t = table();
        // Max: last segment (4, 100) -> (8, 300), slope 50 per task.
        assert_eq!([8, 9, 10, 12].map(|n| t.eval_extrapolated(n, OverheadStat::Max)), [300, 350, 400, 500]);
        // Avg: the last segment falls (30 -> 20): held at 20, never extrapolated downward.
        assert_eq!([8, 100].map(|n| t.eval_extrapolated(n, OverheadStat::Avg)), [20, 20]);
        // Inside the range it is the interpolation.
        assert_eq!(t.eval_extrapolated(5, OverheadStat::Max), 150);
        // Fractional slope rounds up: (2, 0) -> (5, 1), at n = 6: 1 + ceil(1/3) = 2.
        let f = TermTable::new(vec![2, 5], vec![0, 1], vec![0, 1]);
        assert_eq!(f.eval_extrapolated(6, OverheadStat::Avg), 2);
        // Capped at 1 s.
        let big = TermTable::new(vec![1, 2], vec![0, 1], vec![0, 999_999_999]);
        assert_eq!(big.eval_extrapolated(1_000, OverheadStat::Max), MAX_OVERHEAD);
    }

    #[test]
    fn single_point_is_constant() {
        let t = TermTable::new(vec![5], vec![7], vec![9]);
        assert_eq!([1, 5, 50].map(|n| t.eval(n, OverheadStat::Max)), [9, 9, 9]);
        assert_eq!(t.eval_extrapolated(500, OverheadStat::Max), 9);
    }

    #[test]
    fn vocabulary_is_consistent() {
        for &t in Term::ALL {
            assert_eq!(Term::from_name(t.name()).unwrap(), t);
            assert_eq!(t.constant_key(), format!("{}_ns", t.name()));
            let mut v = Overheads::ZERO;
            v.set(t, 7);
            assert_eq!(v.get(t), 7);
            assert_eq!(v.nonzero_terms(), vec![t]);
        }
        let e = Term::from_name("relase").unwrap_err().to_string();
        assert!(e.contains("unknown overhead term \"relase\"") && e.contains("subtask_activation"), "{e}");
    }

    #[test]
    fn m_scaling_applies_to_chosen_terms_only_and_never_down() {
        let text = r#"{"format": "rtsched-overhead-model", "version": 1, "m": 2,
            "terms": {"release": {"n": [2, 4], "avg_ns": [1, 1], "max_ns": [10, 20]},
                      "context_switch": {"n": [2], "avg_ns": [3], "max_ns": [3]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        let ext = Extrapolation { beyond_n: true, m: Some(64), scaled_terms: vec![Term::Release, Term::Schedule] };
        let v = m.resolve_extrapolated(8, OverheadStat::Max, &ext);
        // release: 20 + 5 * 2 (slope) * ... = 20 + ceil(10 * 4 / 2) = 40, then * 64 / 2 = 1280.
        assert_eq!(v.release_ns, 1280);
        assert_eq!(v.context_switch_ns, 3);
        let down = Extrapolation { beyond_n: false, m: Some(1), scaled_terms: vec![Term::Release] };
        assert_eq!(m.resolve_extrapolated(8, OverheadStat::Max, &down).release_ns, 20);
    }

    #[test]
    fn constants_and_errors() {
        let s = OverheadSpec::from_json(r#"{"release_ns": 5, "schedule_ns": "2us", "request_ns": 3}"#).unwrap();
        assert_eq!(
            s.resolve(3, OverheadStat::Max),
            Overheads { release_ns: 5, schedule_ns: 2000, request_ns: 3, ..Overheads::ZERO }
        );
        let e = OverheadSpec::from_json(r#"{"relase_ns": 5}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.relase_ns") && e.contains("steal_ns"), "{e}");
        let e = OverheadSpec::from_json(r#"{"ipi_ns": -1}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.ipi_ns"), "{e}");
        let e = OverheadSpec::from_json(r#"{"tick_ns": "2s"}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.tick_ns") && e.contains("1 s"), "{e}");
        let e = OverheadModel::from_json(r#"{"tick_ns": 1}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.format"), "{e}");
        let e = OverheadSpec::from_json(
            r#"{"format": "rtsched-overhead-model", "version": 1, "terms": {"stael": {"n": [1], "avg_ns": [1], "max_ns": [1]}}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("overheads.terms.stael") && e.contains("unknown term") && e.contains("steal"), "{e}");
    }

    #[test]
    fn model_metadata() {
        let text = r#"{"format": "rtsched-overhead-model", "version": 1, "scheduler": "pedf", "m": 2,
            "machine": {"hostname": "vm", "platform": "Linux", "processor": "", "cpu_count": 2},
            "interrupted": true, "terms": {"lock_wait": {"n": [2], "avg_ns": [1.5], "max_ns": [4]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        assert_eq!(m.scheduler.as_deref(), Some("pedf"));
        assert_eq!(m.machine.as_deref(), Some("vm, 2 CPUs, Linux"));
        assert!(m.interrupted);
        assert_eq!(m.measured_terms(), vec![Term::LockWait]);
        assert_eq!(m.resolve(2, OverheadStat::Avg).lock_wait_ns, 2);
        assert_eq!(m.max_n(), 2);
    }
}
