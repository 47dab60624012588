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
//! | `push` | — | CPU | push-pull, push-pull-fp (inside Δrel/Δsch) | no | kernel-sd (added to Δrel) |
//! | `pull` | — | CPU | push-pull, push-pull-fp (inside Δsch) | no | kernel-sd (added to Δsch) |
//! | `steal` | — | CPU | rtws (coming) | no | none (no RTWS inflation rule) |
//! | `budget_timer` | Δbt | CPU | run, qps-g, qps-c | no | RUN, QPS (once per charged preemption) |
//! | `tree_events` | — | count | run | no | none (a count; its work is inside Δbt, Δsch, Δrel) |
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
//! derive upper-bounds"). Beyond the measured range a model is only *extrapolated* on request
//! ([`OverheadModel::resolve_extrapolated`] with an [`Extrapolation`]), by a rule per term and
//! statistic: averages are held flat beyond n and scaled with m only for the contended terms of
//! a mechanism whose averages contend too (one global lock); maxima of the terms a mechanism
//! calls contended follow their fitted trend ([`TermTable::trend_slope`]: the least-squares
//! slope over all measured points, never negative) and scale with m; other maxima are held.
//! Every output that extrapolates says so, per term ([`OverheadModel::extrapolation_report`]).
//! docs/overheads.md, "Beyond the measured range", gives the rules with their citations.

mod eval;
mod file;
mod terms;

pub use eval::{
    BeyondRule, Extrapolation, OverheadModel, OverheadSpec, OverheadStat, PointStats, TermExtrapolation, TermTable,
};
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
    fn beyond_n_maxima_follow_the_least_squares_trend_averages_stay_flat() {
        let t = table();
        // Max: least squares over (2, 100), (4, 50), (8, 300): slope (3·2800 − 14·450) /
        // (3·84 − 14²) = 2100 / 56 = 37.5 ns per task (the last segment alone would give 50),
        // continued from the running maximum 300 at n = 8.
        assert_eq!(t.trend_slope(OverheadStat::Max), (2100, 56));
        let trend = |n| t.eval_beyond(n, OverheadStat::Max, BeyondRule::Trend);
        assert_eq!([8, 9, 10, 12].map(trend), [300, 338, 375, 450]);
        // Flat holds the last value; inside the range both are the interpolation.
        assert_eq!(t.eval_beyond(100, OverheadStat::Max, BeyondRule::Flat), 300);
        assert_eq!(trend(5), 150);
        // A falling fit is floored at 0: the value is held.
        let falling = TermTable::new(vec![2, 4, 8], vec![30, 20, 10], vec![30, 20, 10]);
        assert_eq!(falling.trend_slope(OverheadStat::Avg), (0, 1));
        assert_eq!(falling.eval_beyond(100, OverheadStat::Avg, BeyondRule::Trend), 10);
        // Fractional slope rounds up: (2, 0) -> (5, 1), slope 1/3, at n = 6: 1 + ceil(1/3) = 2.
        let f = TermTable::new(vec![2, 5], vec![0, 1], vec![0, 1]);
        assert_eq!(f.eval_beyond(6, OverheadStat::Avg, BeyondRule::Trend), 2);
        // Capped at 1 s.
        let big = TermTable::new(vec![1, 2], vec![0, 1], vec![0, 999_999_999]);
        assert_eq!(big.eval_beyond(1_000, OverheadStat::Max, BeyondRule::Trend), MAX_OVERHEAD);
    }

    #[test]
    fn one_noisy_last_segment_does_not_set_the_trend() {
        // Flat maxima with a jump in the last segment (the G-EDF-MP Δev case of issue 22):
        // the last segment's slope is 1,000 ns per task, the fit over all points far less.
        let t =
            TermTable::new((1..=10).collect(), vec![1; 10], vec![100, 100, 100, 100, 100, 100, 100, 100, 100, 1100]);
        let (num, den) = t.trend_slope(OverheadStat::Max);
        assert!(num * 10 < den * 1000, "slope {num}/{den} should be well below the last segment's 1000");
        assert!(t.eval_beyond(640, OverheadStat::Max, BeyondRule::Trend) < 1100 + 630 * 100);
    }

    #[test]
    fn single_point_is_constant() {
        let t = TermTable::new(vec![5], vec![7], vec![9]);
        assert_eq!([1, 5, 50].map(|n| t.eval(n, OverheadStat::Max)), [9, 9, 9]);
        assert_eq!(t.eval_beyond(500, OverheadStat::Max, BeyondRule::Trend), 9);
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
    fn m_scaling_applies_to_maxima_of_chosen_terms_only_and_never_down() {
        let text = r#"{"format": "rtsched-overhead-model", "version": 1, "m": 2,
            "terms": {"release": {"n": [2, 4], "avg_ns": [1, 1], "max_ns": [10, 20]},
                      "context_switch": {"n": [2], "avg_ns": [3], "max_ns": [3]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        let ext = Extrapolation {
            beyond_n: true,
            m: Some(64),
            scaled_terms: vec![Term::Release, Term::Schedule],
            scale_averages: false,
        };
        let v = m.resolve_extrapolated(8, OverheadStat::Max, &ext);
        // release: trend slope 5 per task (two points), 20 + 5 · 4 = 40, then · 64 / 2 = 1280.
        assert_eq!(v.release_ns, 1280);
        assert_eq!(v.context_switch_ns, 3);
        // Averages: held flat beyond n and never scaled with m (RTAS 2014 §IV-B).
        assert_eq!(m.resolve_extrapolated(8, OverheadStat::Avg, &ext).release_ns, 1);
        let down =
            Extrapolation { beyond_n: false, m: Some(1), scaled_terms: vec![Term::Release], scale_averages: false };
        assert_eq!(m.resolve_extrapolated(8, OverheadStat::Max, &down).release_ns, 20);
        // The report says how each term was evaluated.
        let r = m.extrapolation_report(8, OverheadStat::Max, &ext);
        let rel = r.iter().find(|e| e.term == Term::Release).unwrap();
        assert_eq!((rel.beyond, rel.slope_ns_per_task, rel.m_scale), (BeyondRule::Trend, 5.0, Some((64, 2))));
        assert!(rel.beyond_measured_n);
        let cxs = r.iter().find(|e| e.term == Term::ContextSwitch).unwrap();
        assert_eq!((cxs.beyond, cxs.m_scale), (BeyondRule::Flat, None));
        let avg = m.extrapolation_report(8, OverheadStat::Avg, &ext);
        assert!(avg.iter().all(|e| e.beyond == BeyondRule::Flat && e.m_scale.is_none()));
        // One global lock (GSN-EDF, RTAS 2014 §II-B): the averages of the contended terms scale
        // too, still held flat beyond n; the uncontended ones do not.
        let lock = Extrapolation { scale_averages: true, ..ext };
        let v = m.resolve_extrapolated(8, OverheadStat::Avg, &lock);
        assert_eq!((v.release_ns, v.context_switch_ns), (32, 3));
        let r = m.extrapolation_report(8, OverheadStat::Avg, &lock);
        let rel = r.iter().find(|e| e.term == Term::Release).unwrap();
        assert_eq!((rel.beyond, rel.m_scale), (BeyondRule::Flat, Some((64, 2))));
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
    fn protocol_columns_are_read_and_checked() {
        let text = r#"{"format": "rtsched-overhead-model", "version": 1, "m": 2,
            "protocol": {"filter": "interference", "background": "cache"},
            "terms": {"schedule": {"n": [2, 4], "avg_ns": [5, 6], "max_ns": [50, 60], "count": [900, 1000],
                      "p50_ns": [4, 5], "p99_ns": [20, 30], "max_raw_ns": [70, 60],
                      "discarded": [3, 0], "outliers": [1, 0]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        let s = &m.term(Term::Schedule).unwrap().stats;
        assert_eq!(s.count.as_deref(), Some(&[900, 1000][..]));
        assert_eq!(s.p99_ns.as_deref(), Some(&[20, 30][..]));
        assert_eq!(s.max_raw_ns.as_deref(), Some(&[70, 60][..]));
        assert_eq!((s.discarded.as_deref(), s.outliers.as_deref()), (Some(&[3, 0][..]), Some(&[1, 0][..])));
        assert_eq!(m.protocol.as_ref().and_then(|p| p["background"].as_str()), Some("cache"));
        for (bad, field) in [
            (r#""discarded": [1]"#, "terms.schedule.discarded"),
            (r#""p99_ns": [1, -2]"#, "terms.schedule.p99_ns[1]"),
            (r#""max_raw_ns": [10, 60]"#, "terms.schedule.max_raw_ns[0]"),
            (r#""median": [1, 2]"#, "terms.schedule.median"),
        ] {
            let t = format!(
                r#"{{"format": "rtsched-overhead-model", "version": 1, "terms": {{"schedule": {{"n": [2, 4], "avg_ns": [5, 6], "max_ns": [50, 60], {bad}}}}}}}"#
            );
            let e = OverheadModel::from_json(&t).unwrap_err().to_string();
            assert!(e.contains(field), "{bad}: {e}");
        }
        let e = OverheadModel::from_json(
            r#"{"format": "rtsched-overhead-model", "version": 1, "protocol": 3, "terms": {}}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("overheads.protocol"), "{e}");
    }

    #[test]
    fn an_average_above_the_filtered_maximum_is_read_and_never_charged_below() {
        // A heavy tail: the outlier rule cut the maximum below the mean of all kept samples.
        let text = r#"{"format": "rtsched-overhead-model", "version": 1,
            "terms": {"release_event": {"n": [2, 4], "avg_ns": [1590, 10], "max_ns": [1071, 20],
                      "max_raw_ns": [90000, 20]}}}"#;
        let m = OverheadModel::from_json(text).unwrap();
        let t = m.term(Term::ReleaseEvent).unwrap();
        assert_eq!(t.max_ns, vec![1071, 20]);
        assert_eq!(t.eval(2, OverheadStat::Max), 1590); // the maximum charged is at least the average
        assert_eq!(t.eval(4, OverheadStat::Max), 1590); // and monotone in n
                                                        // Without max_raw_ns, or above it, the average is an error as before.
        let bad = text.replace(r#""max_raw_ns": [90000, 20]"#, r#""max_raw_ns": [1500, 20]"#);
        let e = OverheadModel::from_json(&bad).unwrap_err().to_string();
        assert!(e.contains("terms.release_event.avg_ns[0]") && e.contains("exceeds the maximum 1500"), "{e}");
        let bad = r#"{"format": "rtsched-overhead-model", "version": 1,
            "terms": {"release_event": {"n": [2], "avg_ns": [1590], "max_ns": [1071]}}}"#;
        let e = OverheadModel::from_json(bad).unwrap_err().to_string();
        assert!(e.contains("exceeds the maximum 1071"), "{e}");
    }

    #[test]
    fn duplicate_keys_and_bad_json_are_errors() {
        let dup = r#"{"format": "rtsched-overhead-model", "version": 1,
            "terms": {"release": {"n": [2], "avg_ns": [1], "max_ns": [5], "max_ns": [9]}}}"#;
        let e = OverheadModel::from_json(dup).unwrap_err().to_string();
        assert!(e.contains("overheads.max_ns") && e.contains("duplicate key") && e.contains("terms.release"), "{e}");
        let e = OverheadSpec::from_json(r#"{"release_ns": 1, "release_ns": 2}"#).unwrap_err().to_string();
        assert!(e.contains("overheads.release_ns") && e.contains("duplicate key"), "{e}");
        let e = OverheadSpec::from_json("{\"release_ns\": ").unwrap_err().to_string();
        assert!(e.contains("field 'overheads'") && e.contains("invalid JSON"), "{e}");
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
