//! Tests of the run request's decisions ([`super`]).

use super::*;

fn ms(x: u64) -> u64 {
    x * 1_000_000
}

fn set(ct_ms: &[(u64, u64)]) -> TaskSet {
    TaskSet::from_ct(&ct_ms.iter().map(|&(c, t)| (ms(c), ms(t))).collect::<Vec<_>>()).unwrap()
}

fn request(ts: TaskSet, m: Option<u32>, mech: &str, allowed: &[usize]) -> RunRequest {
    let mut r = RunRequest::new(ts, mech, ms(10));
    r.m = m;
    r.allowed = allowed.to_vec();
    r
}

#[test]
fn g4_reads_as_pythons() {
    for (x, want) in [
        (1.5, "1.5"),
        (1.0, "1"),
        (2.0 / 3.0, "0.6667"),
        (12.5, "12.5"),
        (1234.5, "1234"),
        (9999.6, "1e+04"),
        (123456.0, "1.235e+05"),
        (0.00012345, "0.0001234"),
        (0.0, "0"),
    ] {
        assert_eq!(fmt_g4(x), want, "{x}");
    }
}

#[test]
fn without_cpus_the_sets_m_decides_and_the_dedicated_cpu_is_left_out() {
    let ts = set(&[(1, 10), (1, 20)]);
    let all = [2, 5, 7];
    assert_eq!(decide_cpus(&ts, None, None, &all, None, false).unwrap(), (vec![2], vec![]));
    assert_eq!(decide_cpus(&ts, Some(2), None, &all, None, false).unwrap(), (vec![2, 5], vec![]));
    assert_eq!(decide_cpus(&ts, Some(1), None, &all, Some(2), false).unwrap(), (vec![5], vec![]));
    // Given CPUs are used as given; the dedicated one may not be among them.
    assert_eq!(decide_cpus(&ts, None, Some(&[7, 2]), &all, None, false).unwrap().0, vec![7, 2]);
    let e = decide_cpus(&ts, None, Some(&[2, 5]), &all, Some(5), false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field 'dedicated_cpu': CPU 5 is also in cpus 2,5; the dedicated CPU runs the mechanism's service thread \
         and no task: list only the task CPUs in cpus (--cpus)"
    );
}

#[test]
fn a_set_made_for_more_cpus_is_refused_or_forced_with_a_warning() {
    let ts = set(&[(1, 10), (1, 20)]);
    let e = decide_cpus(&ts, Some(4), None, &[0, 1], None, false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the task set is made for m = 4 CPUs, but this process may use 2 (0,1); give a task set for fewer CPUs, \
         or --force to run it on these anyway"
    );
    assert_eq!(e.kind(), crate::ErrorKind::Input);
    let e = decide_cpus(&ts, Some(4), None, &[0, 1, 2], Some(0), false).unwrap_err().to_string();
    assert!(
        e.contains("may use 2 (1,2, besides the dedicated CPU 0); give a task set for m ≤ 2 (with --dedicated-cpu 0"),
        "{e}"
    );
    // Forced: every allowed CPU, and a warning with the numbers.
    let (cpus, warns) = decide_cpus(&ts, Some(4), None, &[0, 1], None, true).unwrap();
    assert_eq!(cpus, vec![0, 1]);
    assert_eq!(
        warns,
        vec!["the task set is made for m = 4 CPUs, but the run has 2 CPUs (0,1); running anyway (--force): its \
              deadline misses come from the CPU count, not the scheduler"
            .to_string()]
    );
    let e = decide_cpus(&ts, Some(3), Some(&[1]), &[0, 1], None, false).unwrap_err().to_string();
    assert!(e.starts_with("the task set is made for m = 3 CPUs, but the run has 1 CPU (1); give --cpus"), "{e}");
}

#[test]
fn utilization_above_the_cpus_is_refused_exactly() {
    // 1/3 + 2/3 = 1 fits one CPU exactly; one ns more over a second does not.
    let exact = TaskSet::from_ct(&[(1, 3), (2, 3)]).unwrap();
    assert_eq!(decide_cpus(&exact, None, Some(&[0]), &[0], None, false).unwrap().1, Vec::<String>::new());
    let over = TaskSet::from_ct(&[(1, 3), (2, 3), (1, 1_000_000_000)]).unwrap();
    let e = decide_cpus(&over, None, Some(&[0]), &[0], None, false).unwrap_err().to_string();
    assert!(e.starts_with("the task set has utilization U = 1 > 1, but the run has 1 CPU (0)"), "{e}");
    assert_eq!(decide_cpus(&over, None, Some(&[0]), &[0], None, true).unwrap().1.len(), 1);
    let both = set(&[(6, 10), (9, 10)]);
    let e = decide_cpus(&both, Some(4), Some(&[0]), &[0], None, false).unwrap_err().to_string();
    assert!(e.contains("is made for m = 4 CPUs and has utilization U = 1.5 > 1"), "{e}");
}

#[test]
fn fork_join_cpus_follow_the_files_m() {
    assert_eq!(decide_forkjoin_cpus(None, None, &[3, 4], false).unwrap(), vec![3]);
    assert_eq!(decide_forkjoin_cpus(Some(2), None, &[3, 4, 5], false).unwrap(), vec![3, 4]);
    let e = decide_forkjoin_cpus(Some(3), None, &[3, 4], false).unwrap_err().to_string();
    assert_eq!(e, "the file is made for m = 3 CPUs but this process may use 2; pass --cpus");
    assert_eq!(decide_forkjoin_cpus(Some(3), None, &[3, 4], true).unwrap(), vec![3, 4]);
    assert_eq!(decide_forkjoin_cpus(Some(3), Some(&[9]), &[3, 4], false).unwrap(), vec![9]);
}

#[test]
fn dedicated_advice_says_what_runs_here() {
    let two = dedicated_advice("cq1", "release handling", Some(2), None, &[0, 1], None);
    assert!(two.contains("--dedicated-cpu N; Python: dedicated_cpu=N") && two.contains("none was given"), "{two}");
    assert!(two.contains("with --dedicated-cpu 0 the tasks run on the other CPU (1)"), "{two}");
    assert!(two.contains("give a task set for m ≤ 1 (this one is made for m = 2)"), "{two}");
    // The CPUs the user chose for the tasks are not suggested as the dedicated one.
    let chosen = dedicated_advice("cq1", "release handling", Some(1), None, &[0, 1], Some(&[0]));
    assert!(chosen.contains("--dedicated-cpu 1 the tasks run on the other CPU (0)"), "{chosen}");
    let four = dedicated_advice("gedf-mp", "the scheduling processor", None, None, &[0, 1, 2, 3], None);
    assert!(four.contains("the other CPUs (1,2,3)") && four.contains("m ≤ 3") && !four.contains("made for"));
    let one = dedicated_advice("cq1", "release handling", Some(1), None, &[3], None);
    assert!(one.contains("at least 2 CPUs") && one.contains("may use 1 (3)"), "{one}");
}

#[test]
fn a_mechanism_that_needs_a_dedicated_cpu_is_refused_with_the_advice() {
    let name = registry::entries().iter().find(|e| e.dedicated == DedicatedCpu::Required).unwrap().name;
    let e = request(set(&[(1, 10)]), Some(1), name, &[0, 1]).prepare().unwrap_err();
    assert!(e.to_string().contains("needs a CPU of its own"), "{e}");
    let mut ok = request(set(&[(1, 10)]), Some(1), name, &[0, 1]);
    ok.dedicated_cpu = Some(0);
    assert_eq!(ok.prepare().unwrap().decision.cpus, vec![1]);
}

#[test]
fn partitioned_mechanisms_get_the_default_partition() {
    // Three tasks of U 0.6, 0.5, 0.3 on two CPUs: worst fit puts 0.6 and 0.5 apart and 0.3
    // beside 0.5.
    let ts = set(&[(6, 10), (5, 10), (3, 10)]);
    for name in ["pedf", "pfp"] {
        let p = request(ts.clone(), Some(2), name, &[0, 1]).prepare().unwrap();
        assert_eq!(p.decision.placement, DecidedPlacement::Partition(vec![vec![0], vec![1, 2]]), "{name}");
        assert_eq!(p.mechanism().partition(), Some(&[vec![0], vec![1, 2]][..]));
        let note = &p.decision.notes[0];
        assert!(note.starts_with(&format!("{name} without --placement: partitioned by worst-fit")), "{note}");
        assert!(note.ends_with(": [[0], [1, 2]]"), "{note}");
        assert!(note.contains(if name == "pedf" { "EDF (QPA)" } else { "deadline-monotonic FP" }), "{note}");
    }
    // Too much for two CPUs (forced past the capacity check): no partition, the reason.
    let mut big = request(set(&[(9, 10), (9, 10), (9, 10)]), None, "pedf", &[0, 1]);
    big.cpus = Some(vec![0, 1]);
    big.force = true;
    let e = big.prepare().unwrap_err().to_string();
    assert!(e.contains("cannot place task") && e.ends_with("; pass --placement or more CPUs"), "{e}");
}

#[test]
fn a_given_partition_must_place_every_task_once_on_the_runs_cpus() {
    let ts = set(&[(1, 10), (1, 10)]);
    let mut r = request(ts.clone(), None, "pedf", &[0]);
    r.placement = Some(GivenPlacement::Partition(vec![vec![1, 0]]));
    assert_eq!(r.prepare().unwrap().decision.placement, DecidedPlacement::Partition(vec![vec![1, 0]]));
    for bad in [vec![vec![0, 0]], vec![vec![0], vec![1]]] {
        let mut r = request(ts.clone(), None, "pedf", &[0]);
        r.placement = Some(GivenPlacement::Partition(bad));
        let e = r.prepare().unwrap_err().to_string();
        assert!(e.contains("must place each of the 2 tasks once on the run's 1 CPUs"), "{e}");
    }
    let mut g = request(ts.clone(), None, "gsn-edf", &[0]);
    g.placement = Some(GivenPlacement::Partition(vec![vec![0, 1]]));
    assert_eq!(g.prepare().unwrap_err().to_string(), "gsn-edf is global and takes no placement");
    // A placement file for pedf: one whole reservation per task, for the run's m.
    let whole = Placement::whole(&ts, &[vec![0, 1]]).unwrap();
    let mut r = request(ts.clone(), None, "pedf", &[0, 1]);
    r.cpus = Some(vec![0, 1]);
    r.placement = Some(GivenPlacement::Placement(whole));
    let e = r.prepare().unwrap_err().to_string();
    assert!(e.contains("the placement is for m = 1 but the number of CPUs of the run (--cpus) is 2"), "{e}");
}

/// Two tasks of U 0.6 and one of U 0.5 on two CPUs: no partition fits, SP-RES splits one.
fn split_set() -> TaskSet {
    set(&[(6, 10), (6, 10), (5, 10)])
}

#[test]
fn spres_without_a_placement_gets_the_cascades() {
    let p = request(split_set(), Some(2), "spres", &[0, 1]).prepare().unwrap();
    let DecidedPlacement::Reservations(pl) = &p.decision.placement else { panic!("{:?}", p.decision) };
    assert!(pl.schedulable && pl.m == 2);
    assert!(pl.tasks.iter().any(|t| t.parts > 1), "the cascade splits a task: {pl:?}");
    let cascade = semi::cascade(&split_set(), 2, &semi::SemiConfig::default());
    assert_eq!(pl, &cascade);
    assert_eq!(p.decision.notes, vec!["spres without --placement: placed by the SP-RES cascade".to_string()]);
    // More than m CPUs can hold: refused with the cascade's reason.
    let mut r = request(set(&[(9, 10), (9, 10), (9, 10)]), None, "spres", &[0, 1]);
    r.cpus = Some(vec![0, 1]);
    r.force = true;
    let e = r.prepare().unwrap_err().to_string();
    assert!(e.starts_with("the SP-RES cascade cannot place the task set on 2 CPUs: "), "{e}");
    assert!(e.ends_with("; pass --placement or more CPUs"), "{e}");
}

#[test]
fn hard_reservations_without_overheads_are_warned_about() {
    let ts = split_set();
    let plain = semi::cascade(&ts, 2, &semi::SemiConfig::default());
    let w = hard_without_overheads(&plain, &[]).unwrap();
    let hard = plain.tasks.iter().filter(|t| t.parts == 1).count();
    assert!(w.starts_with(&format!("the placement has {hard} hard reservation(s) made without overheads")), "{w}");
    assert!(w.contains("rtsched partition --overheads MODEL --mechanism spres"), "{w}");
    assert_eq!(hard_without_overheads(&plain, &[("soft".into(), " True".into())]), None);
    // The last value of soft counts.
    let twice = [("soft".to_string(), "true".to_string()), ("soft".to_string(), "no".to_string())];
    assert!(hard_without_overheads(&plain, &twice).is_some());
    let mut inflated = plain.clone();
    inflated.overheads = Some(serde_json::from_str(r#"{"model": "m.json"}"#).unwrap());
    assert_eq!(hard_without_overheads(&inflated, &[]), None);
    let mut split_only = plain.clone();
    split_only.tasks.iter_mut().for_each(|t| t.parts = 2);
    assert_eq!(hard_without_overheads(&split_only, &[]), None);
    // In a request: the warning comes with the decision, listed apart from the summary's.
    let mut r = request(ts, Some(2), "spres", &[0, 1]);
    r.placement = Some(GivenPlacement::Placement(plain));
    let d = r.prepare().unwrap().decision;
    assert_eq!((d.placement_warnings, d.warnings.len(), d.notes.len()), (vec![w], 0, 0));
}

#[test]
fn bad_requests_are_refused_before_anything_runs() {
    let e = request(set(&[(1, 10)]), None, "fifo", &[0]).prepare().unwrap_err().to_string();
    assert!(e.starts_with("bad run configuration: unknown scheduler \"fifo\"; known: pedf"), "{e}");
    let mut r = request(set(&[(1, 10)]), None, "gsn-edf", &[0]);
    r.params = vec![("priorities".into(), "rm".into())];
    assert!(r
        .prepare()
        .unwrap_err()
        .to_string()
        .contains("gsn-edf: parameter priorities: applies only to --scheduler pfp, push-pull-fp, not gsn-edf"));
    assert!(ExportKind::parse("svg").unwrap_err().to_string().contains("unknown export \"svg\""));
    assert_eq!(ExportKind::parse("job_csv").unwrap().name(), "job_csv");
    let fj =
        rtsched_model::forkjoin::read_json(r#"{"tasks": [{"period": "10ms", "regions": [["1ms"]]}]}"#).unwrap().set;
    let mut r = RunRequest::new(fj, "rtws", ms(10));
    r.allowed = vec![0];
    r.placement = Some(GivenPlacement::Partition(vec![vec![0]]));
    assert!(r.prepare().unwrap_err().to_string().contains("without a placement"));
}

#[test]
fn a_request_runs_and_its_outcome_carries_the_verdict_and_the_exports() {
    // Real threads for 30 ms (no timing asserted): the outcome's verdict is the summary's.
    let cpu = crate::platform::allowed_cpus()[0];
    let mut r = RunRequest::new(set(&[(1, 10), (2, 20)]), "gsn-edf", ms(30));
    r.cpus = Some(vec![cpu]);
    r.exports = vec![ExportKind::OverheadSamples, ExportKind::Jsonl];
    let out = run_request(r).unwrap();
    assert_eq!(out.summary["cpus"], serde_json::json!([cpu]));
    let e = registry::find("gsn-edf").unwrap();
    let terms = entry_terms(e);
    let again = assess_timing(
        &TimingFacts::from_summary(&out.summary),
        &TrustMechanism::of(e, &terms),
        None,
        &TrustInputs::default(),
    );
    assert_eq!((out.trustworthy, &out.trustworthy_reason), (again.trustworthy, &again.reason));
    assert_eq!(out.summary["trust_reference"], again.reference.to_json());
    assert_eq!(out.summary["trust_facts"]["tasks"], serde_json::json!(2));
    let kinds: Vec<ExportKind> = out.exports.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, vec![ExportKind::OverheadSamples, ExportKind::Jsonl]);
    // Fork-join goes through the same request; its summary adds the job-level results.
    let fj = rtsched_model::forkjoin::read_json(r#"{"tasks": [{"period": "10ms", "regions": [["1ms"], ["1ms"]]}]}"#)
        .unwrap()
        .set;
    let mut r = RunRequest::new(fj, "rtws", ms(30));
    r.cpus = Some(vec![cpu]);
    r.exports = vec![ExportKind::JobCsv];
    let out = run_request(r).unwrap();
    assert!(out.summary["forkjoin"]["jobs"].as_u64().is_some(), "{}", out.summary);
    assert_eq!(out.exports.len(), 1);
}

#[test]
fn a_global_mechanism_runs_on_the_first_allowed_cpu() {
    let ts = set(&[(1, 10)]);
    let p = request(ts, None, "gsn-edf", &[4]).prepare().unwrap();
    assert_eq!((p.decision.cpus.clone(), p.decision.placement.clone()), (vec![4], DecidedPlacement::None));
    assert_eq!(p.config().cpus, vec![4]);
}

#[test]
fn default_admissions_are_the_simulators() {
    // run and simulate place a set alike: the same admission per partitioned scheduler.
    for e in crate::mechanism::registry::entries() {
        if e.placement == PlacementKind::Partition {
            if let Ok(sim) = rtsched_sim::registry::find(e.name) {
                assert_eq!(
                    rtsched_sim::registry::PlacementKind::Partition(default_admission(e.name)),
                    sim.placement,
                    "{}",
                    e.name
                );
            }
        }
    }
}

#[test]
fn a_dag_workload_needs_a_mechanism_that_runs_parallel_jobs() {
    let file =
        rtsched_model::workload::read_json(r#"{"m": 2, "tasks": [{"period": 100, "nodes": [10, 20]}]}"#).unwrap();
    for mech in ["gsn-edf", "pedf", "kernel-sd"] {
        let e = RunRequest::new(file.workload.clone(), mech, ms(10)).prepare().expect_err("refused").to_string();
        assert!(e.contains(&format!("{mech} runs sequential tasks only; DAG task files need")), "{e}");
        assert!(e.contains("rtws, push-pull") && !e.contains('\n'), "{e}");
    }
    let e = RunRequest::new(file.workload.clone(), "no-such-mechanism", ms(10)).prepare().unwrap_err().to_string();
    assert!(e.contains("unknown scheduler"), "{e}");
    for mech in registry::parallel_mechanisms() {
        let mut r = RunRequest::new(file.workload.clone(), mech, ms(10));
        r.m = file.m;
        r.allowed = vec![0, 1, 2];
        let p = r.prepare().unwrap_or_else(|e| panic!("{mech}: {e}"));
        assert_eq!(p.decision.cpus, vec![0, 1], "{mech}: the file's m");
    }
}
