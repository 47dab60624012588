use super::*;
use crate::global::{self, srt, GlobalTest};
use crate::overheads as oh;
use crate::semi;
use rtsched_model::overheads::OverheadStat;
use rtsched_model::TaskSet;
use serde_json::json;

fn point(extra: Value) -> Value {
    let mut p = json!({
        "generator": "randfixedsum", "periods": "seed004", "umax": 1.0, "deadlines": "implicit",
        "n": 6, "m": 2, "util": 1.6, "count": 16, "seed": 11, "epsilon": 0, "max_steps": 100000,
        "methods": ["gfb"],
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn read(p: &Value) -> PointRequest {
    PointRequest::from_json(&p.to_string()).unwrap()
}

fn sets_of(req: &PointRequest) -> Vec<TaskSet> {
    rtsched_gen::generate_many(&req.gen_spec().unwrap(), req.seed, req.count).unwrap()
}

fn column(r: &PointResult, j: usize) -> Vec<Verdict> {
    r.sets.iter().map(|s| s.rows[j].verdict).collect()
}

#[test]
fn the_rows_are_what_each_test_and_partitioner_says_on_the_same_sets() {
    let methods = ["gfb", "GEDF", "bcl-iterative", "gedf_srt", "pedf_ffd", "pfp-wfd"];
    let req = read(&point(json!({"methods": methods})));
    let res = evaluate_point(&req, &req.limits()).unwrap();
    let sets = sets_of(&req);
    assert_eq!(res.sets.len(), 16);
    let lim = req.limits();
    for (i, ts) in sets.iter().enumerate() {
        let row = &res.sets[i];
        assert_eq!(row.utilization, ts.utilization_f64());
        assert_eq!(row.rows.len(), methods.len());
        for (j, name) in ["gfb", "gedf", "bcl_iterative", "gedf_srt", "pedf_ffd", "pfp_ffd"].iter().enumerate().take(4)
        {
            assert_eq!(row.rows[j].verdict, report::run_test(name, ts, 2, &lim, 0), "set {i} {name}");
            assert_eq!(row.rows[j].switch_rate, None);
        }
        for (j, name) in [(4, "pedf_ffd"), (5, "pfp_wfd")] {
            let placed = placing::place(ts, 2, name, "edf", &SemiConfig::default(), &lim).unwrap();
            assert_eq!(row.rows[j].verdict.decided(), Some(placed.placement().schedulable), "set {i} {name}");
        }
    }
    // The counts are not all alike: the point separates the methods (U = 1.6 on 2 processors).
    let accepted = |j: usize| column(&res, j).iter().filter(|v| v.is_schedulable()).count();
    assert!(accepted(0) < accepted(4), "GFB accepts fewer sets than P-EDF here");
    assert!(accepted(3) == 16, "every set is SRT-feasible at U = 1.6 with u <= 1");
}

#[test]
fn the_cumulative_cascades_answer_as_their_placements() {
    for rate in [json!({}), json!({"cascade_rate": "min", "switch_rate": "mean-core"})] {
        let methods = ["spres-partition", "spres-nometa", "spres-paf", "spres", "wfd-c=d"];
        let req = read(
            &point(json!({"methods": methods, "util": 1.9, "n": 5}))
                .as_object()
                .map(|o| {
                    let mut o = o.clone();
                    o.extend(rate.as_object().unwrap().clone());
                    Value::Object(o)
                })
                .unwrap(),
        );
        let res = evaluate_point(&req, &req.limits()).unwrap();
        let sets = sets_of(&req);
        let cfg = |meta| SemiConfig { meta, ..req.semi.clone() };
        let mut placed_by_all = 0;
        for (i, ts) in sets.iter().enumerate() {
            let r = &res.sets[i].rows;
            // Cumulative: a group that places the set is followed by groups that do too.
            for w in r[..4].windows(2) {
                assert!(!w[0].verdict.is_schedulable() || w[1].verdict.is_schedulable(), "set {i}");
            }
            let partition = semi::cascade_of(
                ts,
                2,
                &placing::cascade_upto(cfg(false).variant, semi::Group::Partitioning),
                &cfg(false),
            );
            assert_eq!(r[0].verdict.is_schedulable(), partition.schedulable, "set {i}");
            let full = semi::cascade(ts, 2, &cfg(true));
            assert_eq!(r[3].verdict.is_schedulable(), full.schedulable, "set {i}");
            let one = semi::place(ts, 2, &semi::Heuristic::from_name("wfd-c=d").unwrap(), &cfg(true));
            assert_eq!(r[4].verdict.is_schedulable(), one.schedulable, "set {i}");
            let bound = |p: &semi::Placement| {
                let b = p.switch_rate_bound();
                if req.rate.mean_core {
                    b.iter().sum::<f64>() / b.len() as f64
                } else {
                    b.into_iter().fold(0.0, f64::max)
                }
            };
            assert_eq!(r[4].switch_rate, one.schedulable.then(|| bound(&one)), "set {i}");
            if !req.rate.min_over_members && full.schedulable {
                assert_eq!(r[3].switch_rate, Some(bound(&full)), "set {i}: the first success's rate");
            }
            placed_by_all += r[3].verdict.is_schedulable() as usize;
        }
        assert!(placed_by_all > 0);
    }
}

#[test]
fn overhead_methods_match_the_tests_they_name() {
    // One constant model for every mechanism (`"*"`), and the ideal targets.
    let constants = json!({"release_ns": 5000, "schedule_ns": 8000, "context_switch_ns": 3000, "tick_ns": 1000});
    let methods = ["gedf@ideal", "gedf_srt@ideal-dedicated", "seed001@gsn-edf", "gedf_srt@gsn-edf"];
    let req = read(&point(json!({"methods": methods, "util": 1.3,
        "overheads": {"models": {"*": constants}, "cpd": 2000}})));
    let res = evaluate_point(&req, &req.limits()).unwrap();
    let lim = req.limits();
    let ovh = req.overheads.as_ref().unwrap();
    assert_eq!(ovh.params.cpd, 2000);
    let mech = oh::mechanism("gsn-edf").unwrap();
    let spec = &ovh.models["*"];
    for (i, ts) in sets_of(&req).iter().enumerate() {
        let r = &res.sets[i].rows;
        assert_eq!(r[0].verdict, global::combined_of(&GlobalTest::COMBINED_ORDER, ts, 2, &lim), "set {i}");
        assert_eq!(r[1].verdict, Verdict::from_bool(srt::bounded_tardiness(ts, 1)), "set {i}");
        let hv = oh::values(spec, ts, 2, mech, OverheadStat::Max, false);
        let hard = oh::hard(ts, 2, mech, &hv, &ovh.params, &GlobalTest::SEED001, &lim).unwrap();
        assert_eq!(r[2].verdict, hard.verdict, "set {i}");
        let sv = oh::values(spec, ts, 2, mech, OverheadStat::Avg, false);
        assert_eq!(r[3].verdict, oh::soft(ts, 2, mech, &sv, &ovh.params, &lim).unwrap().verdict, "set {i}");
    }
    // Without models the mechanism methods cannot run.
    let bare = read(&point(json!({"methods": ["gedf@gsn-edf"]})));
    let e = evaluate_point(&bare, &bare.limits()).unwrap_err();
    assert_eq!(e.to_string(), "field 'methods': \"gedf@gsn-edf\" needs overhead models (the spec's `overheads` key)");
}

#[test]
fn the_reader_names_the_field_at_fault() {
    let cases = [
        (json!({"m": null}), "evaluate_point: field 'm': expected a non-negative integer"),
        (json!({"m": 0}), "field 'm': the number of processors must be in 1..=16384, got 0"),
        (json!({"n": 0}), "evaluate_point: field 'n': must be in 1..=1000000, got 0"),
        (json!({"util": "x"}), "evaluate_point: field 'util': expected a number"),
        (
            json!({"count": 0}),
            "evaluate_point: field 'count': 0 sets of 6 tasks exceed the bound of a point (1000000 sets, 50000000 tasks in all)",
        ),
        (json!({"seed": -1}), "evaluate_point: field 'seed': expected a non-negative integer"),
        (json!({"variant": 3}), "evaluate_point: field 'variant': expected a string"),
        (json!({"rp_floor": 0}), "evaluate_point: field 'rp_floor': the RP floor must be at least 1 ns"),
        (json!({"switch_rate": "x"}), "evaluate_point: field 'switch_rate': \"x\" is neither \"max-core\" nor \"mean-core\""),
        (json!({"cascade_rate": "x"}), "evaluate_point: field 'cascade_rate': \"x\" is neither \"first\" nor \"min\""),
        (json!({"methods": "gfb"}), "evaluate_point: field 'methods': expected a list"),
        (json!({"methods": [1]}), "evaluate_point: field 'methods': expected strings"),
        (
            json!({"overheads": {"models": {}, "bogus": 1}}),
            "evaluate_point: field 'overheads.bogus': unknown key (expected models, stat, cpd, quantum, extrapolate)",
        ),
    ];
    for (extra, want) in cases {
        let e = PointRequest::from_json(&point(extra.clone()).to_string()).unwrap_err();
        assert_eq!(e.to_string(), want, "{extra}");
    }
    let mut p = point(json!({}));
    p.as_object_mut().unwrap().remove("util");
    assert_eq!(
        PointRequest::from_json(&p.to_string()).unwrap_err().to_string(),
        "evaluate_point: field 'util': missing"
    );
    let e = PointRequest::from_json(&point(json!({"periods": "nope"})).to_string()).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("periods"));
    // Lenient keys keep their defaults; `"n": null` is the Baker distributions' "until full".
    let r = read(&point(json!({"epsilon": "x", "generator": "uniform-light", "n": null})));
    assert_eq!((r.epsilon, r.n, r.max_steps), (0, None, 100000));
    assert!(evaluate_point(&r, &r.limits()).unwrap().sets.iter().all(|s| s.rows.len() == 1));
}

#[test]
fn unknown_methods_are_refused_before_any_set_runs() {
    let req = read(&point(json!({"methods": ["gfb", "no-such-method"]})));
    let e = evaluate_point(&req, &req.limits()).unwrap_err();
    assert!(
        e.to_string().starts_with("field 'methods': unknown method \"no-such-method\": use one of the tests: gfb"),
        "{e}"
    );
    let names = |ms: &[&str]| {
        check_names("randfixedsum", "seed004", "implicit", 1.0, &ms.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    };
    assert_eq!(names(&["GFB", "pedf-ffd", "spres", "PAF(WWFD)", "gedf@gsn-edf", "gedf_srt@ideal"]), Ok(()));
    assert_eq!(names(&["gfb", "zzz"]).unwrap_err(), unknown_method("zzz"));
    assert!(names(&["q@gsn-edf"]).unwrap_err().to_string().contains("unknown test \"q\" before '@'"));
    assert_eq!(check_names("nope", "seed004", "implicit", 1.0, &[]).unwrap_err().field.as_deref(), Some("util"));
    // A request made in Rust is checked as the reader checks it.
    let mut big = read(&point(json!({})));
    big.count = 0;
    assert_eq!(evaluate_point(&big, &big.limits()).unwrap_err().field.as_deref(), Some("count"));
}

#[test]
fn acceptance_counts_what_run_test_accepts() {
    let tests = vec!["gfb".to_string(), "gedf".to_string()];
    let utils = [0.8, 1.5, 1.9];
    let lim = Limits::steps(100_000);
    let a = acceptance("randfixedsum", "seed004", 6, &utils, 2, 12, 3, &tests, &lim).unwrap();
    assert_eq!(a.tests, tests);
    for (ui, &u) in utils.iter().enumerate() {
        let sets = rtsched_gen::generate_many(
            &gen_spec(Some(6), u, "randfixedsum", "seed004", 1.0, "implicit").unwrap(),
            3,
            12,
        )
        .unwrap();
        for (ti, t) in tests.iter().enumerate() {
            let want = sets.iter().filter(|ts| report::run_test(t, ts, 2, &lim, 0).is_schedulable()).count();
            assert_eq!(a.accepted[ti][ui], want, "{t} at U = {u}");
        }
    }
    assert_eq!(a.accepted[0][0], 12, "GFB accepts every set at U = 0.8 on 2 processors");
    assert!(a.accepted[1][2] < 12);
    assert!(acceptance("randfixedsum", "seed004", 6, &utils, 2, 12, 3, &["zz".into()], &lim).is_err());
}

fn dag_point(extra: Value) -> Value {
    let mut p = json!({
        "generator": "dag", "umax": 2.0, "n": 4, "m": 4, "util": 2.5, "count": 24, "seed": 3,
        "epsilon": 0, "max_steps": 100000,
        "methods": ["dag_federated", "DAG-GEDF-li2014", "dag_gedf_li2013", "dag_gedf_bonifaci2013"],
        "dag": {"shape": "erdos-renyi", "nodes": [4, 12], "p": 0.2, "wcet": [1, 50], "beta": null, "max_tries": 100},
    });
    for (k, v) in extra.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

#[test]
fn a_dag_point_gives_the_verdicts_of_the_dag_report_on_the_generated_sets() {
    use crate::dag::report as dag_report;
    let req = read(&dag_point(json!({})));
    let spec = req.dag.clone().unwrap();
    assert_eq!((spec.n, spec.total, spec.umax), (4, 2.5, 2.0));
    let res = evaluate_point(&req, &req.limits()).unwrap();
    assert_eq!(res.sets.len(), 24);
    let names = ["dag_federated", "dag_gedf_li2014", "dag_gedf_li2013", "dag_gedf_bonifaci2013"];
    let (mut yes, mut no) = (0, 0);
    for (i, s) in res.sets.iter().enumerate() {
        let set = rtsched_gen::dag::generate_dag_set(&spec, req.seed, i as u64).unwrap();
        assert!((s.utilization - dag::utilization(&set)).abs() < 1e-12);
        let report = dag_report::analyze(&set, 4, &names, &req.limits());
        for (j, name) in names.iter().enumerate() {
            let want = report["results"][*name]["schedulable"].as_bool().unwrap();
            assert_eq!(s.rows[j].verdict, Verdict::from_bool(want), "set {i} {name}");
            if want {
                yes += 1
            } else {
                no += 1
            }
        }
    }
    // The point is neither all accepted nor all rejected, so the comparison means something.
    assert!(yes > 0 && no > 0, "{yes} accepted, {no} rejected");
}

#[test]
fn every_dag_test_of_the_table_runs_by_name_in_a_sweep() {
    // The names come from the report's table: a test added there is a sweep method with no change.
    let several: Vec<&str> =
        crate::dag::report::DAG_TEST_NAMES.iter().copied().filter(|t| *t != "dag_graham").collect();
    let req = read(&dag_point(json!({"methods": several, "count": 4})));
    let res = evaluate_point(&req, &req.limits()).unwrap();
    assert!(res.sets.iter().all(|s| s.rows.len() == several.len()));
    // dag_graham bounds one task alone: it runs on points of one task, and is an error on more.
    let one = read(&dag_point(json!({"methods": ["dag_graham"], "n": 1, "util": 1.5, "count": 4})));
    assert_eq!(evaluate_point(&one, &one.limits()).unwrap().sets.len(), 4);
    let e = evaluate_point(&read(&dag_point(json!({"methods": ["dag_graham"]}))), &req.limits()).unwrap_err();
    assert!(e.to_string().contains("dag_graham") && e.to_string().contains("4 tasks"), "{e}");
}

#[test]
fn a_dag_point_rejects_what_it_cannot_run_in_one_line() {
    let lim = Limits::default();
    let e = evaluate_point(&read(&dag_point(json!({"methods": ["gfb"]}))), &lim).unwrap_err().to_string();
    assert!(e.contains("\"gfb\" takes sequential tasks; this point generates DAG task sets"), "{e}");
    let e = evaluate_point(&read(&dag_point(json!({"methods": ["nope"]}))), &lim).unwrap_err().to_string();
    assert!(e.contains("unknown method \"nope\"") && e.contains("dag_federated"), "{e}");
    // A DAG test on a point of sequential task sets.
    let e = evaluate_point(&read(&point(json!({"methods": ["dag_federated"]}))), &lim).unwrap_err().to_string();
    assert!(e.contains("dag_federated takes DAG tasks"), "{e}");
    let bad = |extra: Value| PointRequest::from_json(&dag_point(extra).to_string()).unwrap_err().to_string();
    let e = bad(
        json!({"dag": {"shape": "erdos-renyi", "nodes": [4, 12], "p": 0.2, "wcet": [1, 50], "max_tries": 9, "width": [1, 2]}}),
    );
    assert!(e.contains("dag.width") && e.contains("not a parameter of the erdos-renyi shape"), "{e}");
    let e = bad(json!({"dag": {"shape": "star", "wcet": [1, 50], "max_tries": 9}}));
    assert!(e.contains("unknown DAG shape \"star\""), "{e}");
    let e = bad(json!({"n": null}));
    assert!(e.contains("field 'n'") && e.contains("fixed n"), "{e}");
    let e = bad(json!({"util": 9.0}));
    assert!(e.contains("field 'total'"), "{e}");
    assert!(check_dag_names(&dag_point(json!({}))["dag"], 2.0, &["dag_federated".into()]).is_ok());
    let e = check_dag_names(&dag_point(json!({}))["dag"], 2.0, &["gfb".into()]).unwrap_err().to_string();
    assert!(e.contains("takes sequential tasks"), "{e}");
}

#[test]
fn run_and_qps_rows_carry_their_switch_rate_bounds() {
    // The optimal schedulers of Brandenburg & Gül's Fig. 6: every set schedulable, the rate
    // each one's bound (rtsched_policy's switch_rate_bound, averaged over the cores here).
    let req = read(&point(json!({"methods": ["run", "QPS", "spres-partition"], "switch_rate": "mean-core"})));
    check_names("randfixedsum", "seed004", "implicit", 1.0, &req.methods).unwrap();
    let res = evaluate_point(&req, &req.limits()).unwrap();
    for (i, ts) in sets_of(&req).iter().enumerate() {
        let row = &res.sets[i];
        let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
        let run = mean(rtsched_policy::run::Reduction::structure(ts, 2).unwrap().switch_rate_bound());
        let qps = mean(rtsched_policy::qps::QuasiPartition::structure(ts, 2).unwrap().switch_rate_bound());
        assert!(row.rows[0].verdict.is_schedulable() && row.rows[1].verdict.is_schedulable());
        assert_eq!((row.rows[0].switch_rate, row.rows[1].switch_rate), (Some(run), Some(qps)), "set {i}");
        // Where partitioning places the set, QPS's bound is partitioning's (both mean-core).
        if let (true, Some(p)) = (row.rows[2].verdict.is_schedulable(), row.rows[2].switch_rate) {
            if rtsched_policy::qps::QuasiPartition::structure(ts, 2).unwrap().partitioned {
                assert!((p - qps).abs() < 1e-6 * p, "set {i}: {p} vs {qps}");
            }
        }
    }
    let e = check_names("randfixedsum", "seed004", "implicit", 1.0, &["rum".to_string()]).unwrap_err();
    assert!(e.to_string().contains("run, qps"), "{e}");
}
