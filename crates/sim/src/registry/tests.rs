//! The registry's unit tests.

use super::*;

fn ts() -> TaskSet {
    TaskSet::from_cdt(&[(2, 5, 5), (3, 7, 7), (4, 9, 10)]).unwrap()
}

fn forkjoin() -> Workload {
    let text = r#"{"tasks": [{"period": 10, "regions": [[2], [1, 1]]}, {"period": 20, "regions": [[4]]}]}"#;
    Workload::ForkJoin(rtsched_model::forkjoin::read_json(text).unwrap().set)
}

fn none() -> Vec<(&'static str, ParamArg)> {
    Vec::new()
}

#[test]
fn names_are_unique_and_every_default_parses() {
    let mut n = names();
    n.sort_unstable();
    let k = n.len();
    n.dedup();
    assert_eq!(n.len(), k, "two schedulers share a name");
    for e in entries() {
        let p = e.resolve(none()).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        assert!(e.params.iter().all(|s| !p.given(s.name)), "{}: a default counted as given", e.name);
        assert!(!e.summary.is_empty() && e.line().starts_with(e.name), "{}", e.line());
        assert_eq!(e.to_json()["name"], e.name);
    }
}

#[test]
fn gfp_takes_the_task_sets_own_priorities_unless_given() {
    let own = ts().with_priorities((0..ts().len() as u32).rev().collect()).unwrap();
    let want: Vec<u32> = own.priorities().unwrap().to_vec();
    let w = Workload::Sporadic(own);
    let b = build("gfp", none(), &w, 2, None, &Stop::never()).unwrap();
    assert_eq!(b.scheduler, Scheduler::Gfp { ranks: want.clone(), order: None });
    assert_eq!(b.notes, vec!["priorities from the task set (its `priority` fields)".to_string()]);
    let given = vec![("priorities", ParamArg::Text("dm".into()))];
    let b = build("gfp", given, &w, 2, None, &Stop::never()).unwrap();
    assert_ne!(b.scheduler, Scheduler::Gfp { ranks: want, order: None });
    assert!(matches!(b.scheduler, Scheduler::Gfp { order: Some(FpOrder::DeadlineMonotonic), .. }));
    assert_eq!(b.notes, vec!["priorities=... overrides the task set's own priorities".to_string()]);
    let b = build("pfp", none(), &w, 2, None, &Stop::never()).unwrap();
    assert!(b.notes.iter().any(|n| n.contains("own priorities are not used")), "{:?}", b.notes);
}

#[test]
fn every_name_builds_with_its_default_placement() {
    let w = Workload::Sporadic(ts());
    for e in entries().iter().filter(|e| e.workloads.sporadic) {
        let b = build(e.name, none(), &w, 2, None, &Stop::never()).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        // The scheduler built is the entry's: its display name starts like the registered one.
        let shown = b.scheduler.name().to_ascii_lowercase().replace('-', "");
        assert!(shown.starts_with(&e.name.replace('-', "")[..3]), "{} built {}", e.name, b.scheduler.name());
        let note = b.notes.join(" ");
        match e.placement {
            PlacementKind::None => assert!(b.notes.is_empty(), "{}: {note}", e.name),
            PlacementKind::Partition(_) => assert!(note.contains("worst-fit decreasing"), "{}: {note}", e.name),
            PlacementKind::Reservations => assert!(note.contains("SP-RES cascade"), "{}: {note}", e.name),
            PlacementKind::Federated => unreachable!("federated takes DAG sets only"),
        }
        if e.workloads.fork_join {
            build(e.name, none(), &forkjoin(), 2, None, &Stop::never()).unwrap();
        } else {
            let err = build(e.name, none(), &forkjoin(), 2, None, &Stop::never()).unwrap_err().to_string();
            assert!(err.contains("runs under gedf or rtws"), "{err}");
        }
    }
    // Case is ignored, as the CLI always did.
    assert_eq!(build("PFP", none(), &w, 2, None, &Stop::never()).unwrap().scheduler.name(), "P-FP (DM)");
}

#[test]
fn an_unknown_name_lists_the_names() {
    let e = find("G-EDF").unwrap_err();
    assert_eq!(e.field.as_deref(), Some("scheduler"));
    assert_eq!(
        e.to_string(),
        "field 'scheduler': unknown scheduler \"g-edf\"; use one of: gedf, gedf-quantum, gfp, gfl, edzl, llf, pd2, pedf, pfp, spres, rtws, run, qps, federated"
    );
    let w = Workload::Sporadic(ts());
    assert!(matches!(build("nope", none(), &w, 2, None, &Stop::never()), Err(BuildError::Input(_))));
}

#[test]
fn parameters_are_checked_by_kind_and_owner() {
    let q = find("gedf-quantum").unwrap();
    let p = q.resolve([("quantum", ParamArg::from("2ms")), ("staggered", ParamArg::from(true))]).unwrap();
    assert_eq!((p.duration("quantum"), p.flag("staggered")), (Some(2_000_000), Some(true)));
    assert!(p.given("quantum") && p.given("staggered"));
    assert_eq!(q.resolve([("quantum", ParamArg::Int(500))]).unwrap().duration("quantum"), Some(500));
    // A value of the wrong kind is refused naming the parameter.
    // The model's one format: the scheduler, the parameter and the value.
    let e = q.resolve([("quantum", ParamArg::Bool(true))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "gedf-quantum: parameter quantum: expected integer ns or a duration string like \"2ms\", got true"
    );
    let e = q.resolve([("staggered", ParamArg::from("maybe"))]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "gedf-quantum: parameter staggered: expected true or false (or yes/no, on/off, 1/0), got \"maybe\""
    );
    // A flag takes the runtime's words too.
    for (t, want) in [("yes", true), ("On", true), ("0", false), ("off", false)] {
        assert_eq!(q.resolve([("staggered", ParamArg::from(t))]).unwrap().flag("staggered"), Some(want), "{t}");
    }
    let e = q.resolve([("quantum", ParamArg::Int(0))]).unwrap_err();
    assert_eq!(e.to_string(), "gedf-quantum: parameter quantum: must be at least 1 ns, got 0");
    let e = q.resolve([("quantum", ParamArg::from("2"))]).unwrap_err();
    assert!(e.to_string().starts_with("gedf-quantum: parameter quantum: duration \"2\" has no unit"), "{e}");
    let e = q.resolve([("quantum", ParamArg::from("1ms")), ("quantum", ParamArg::from("2ms"))]).unwrap_err();
    assert_eq!(e.to_string(), "gedf-quantum: parameter quantum: given twice; give it once");
    // A parameter of another scheduler names the schedulers that take it.
    let gedf = find("gedf").unwrap();
    let e = gedf.resolve([("quantum", ParamArg::from("1ms"))]).unwrap_err();
    assert_eq!(e.to_string(), "gedf: parameter quantum: applies only to --scheduler gedf-quantum, llf, pd2, not gedf");
    let e = gedf.resolve([("cash", ParamArg::from(true))]).unwrap_err();
    assert_eq!(e.to_string(), "gedf: parameter cash: applies only to --scheduler spres, not gedf");
    // One nobody takes names what this one takes.
    assert_eq!(
        gedf.resolve([("x", ParamArg::Int(1))]).unwrap_err().to_string(),
        "gedf: parameter x: unknown to gedf (it takes none)"
    );
    let e = q.resolve([("x", ParamArg::Int(1))]).unwrap_err().to_string();
    assert_eq!(e, "gedf-quantum: parameter x: unknown to gedf-quantum (known: quantum, staggered)");
    // A name reads with `-` as `_`, so `rr-quantum` is `rr_quantum` and given twice with it.
    let e =
        find("spres").unwrap().resolve([("rr-quantum", ParamArg::from("2ms")), ("rr_quantum", ParamArg::from("3ms"))]);
    assert_eq!(e.unwrap_err().to_string(), "spres: parameter rr_quantum: given twice; give it once");
    // Choices and the SP-RES background rules (the runtime's words and message).
    let spres = find("spres").unwrap();
    let e = spres.resolve([("background", ParamArg::from("fifo"))]).unwrap_err().to_string();
    assert_eq!(e, "spres: parameter background: expected one of round-robin, earliest-end, got \"fifo\"");
    let w = Workload::Sporadic(ts());
    let ee = [("background", ParamArg::from("earliest-end")), ("rr_quantum", ParamArg::from("2ms"))];
    let e = build("spres", ee.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap_err();
    assert_eq!(e.to_string(), "field 'rr_quantum': applies only with background round-robin");
    let rr = [("rr_quantum", ParamArg::from("2ms")), ("cash", ParamArg::from(true))];
    let b = build("spres", rr.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap();
    let Scheduler::Spres(c) = b.scheduler else { panic!("spres built {:?}", b.scheduler) };
    assert_eq!(
        (c.background, c.cash, c.soft_unsplit, c.suspension),
        (Background::RoundRobin { quantum: 2_000_000 }, true, false, Suspension::Keep)
    );
    // The suspension rule: donate needs CASH (the runtime's messages).
    let d = [("suspension", ParamArg::from("donate"))];
    let e = build("spres", d.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "field 'suspension': donate makes a suspending job's budget CASH slack and needs cash=true"
    );
    let d = [("suspension", ParamArg::from("donate")), ("cash", ParamArg::from(true))];
    let b = build("spres", d.iter().map(|(k, v)| (*k, v)), &w, 2, None, &Stop::never()).unwrap();
    let Scheduler::Spres(c) = b.scheduler else { panic!("spres built {:?}", b.scheduler) };
    assert_eq!(c.suspension, Suspension::Donate);
    let e = spres.resolve([("suspension", ParamArg::from("lend"))]).unwrap_err().to_string();
    assert!(e.starts_with("spres: parameter suspension: expected one of keep, donate"), "{e}");
}

#[test]
fn placements_are_checked_against_the_scheduler_the_tasks_and_m() {
    let ts = ts();
    let w = Workload::Sporadic(ts.clone());
    let part = vec![vec![0, 2], vec![1]];
    let p = Placement::whole(&ts, &part).unwrap();
    let b = build("pedf", none(), &w, 2, Some(p.clone()), &Stop::never()).unwrap();
    assert_eq!((b.scheduler, b.notes.len()), (Scheduler::Pedf(part), 0));
    let e = build("gedf", none(), &w, 2, Some(p.clone()), &Stop::never()).unwrap_err();
    assert_eq!(e.to_string(), "field 'placement': applies only to pedf, pfp and spres, not gedf");
    let e = build("pfp", none(), &w, 3, Some(p.clone()), &Stop::never()).unwrap_err();
    assert_eq!(e.to_string(), "field 'm': the placement is for m = 2 but --m is 3");
    let e = build("spres", none(), &w, 3, Some(p), &Stop::never()).unwrap_err();
    assert_eq!(e.to_string(), "field 'm': the placement is for m = 2 but --m is 3");
    // A split placement is not a partition.
    let split = semi_split();
    let e = plain_partition(&split.1, &split.0, 2, "--m is").unwrap_err().to_string();
    assert!(e.contains("is split or period-transformed"), "{e}");
}

/// A set that the SP-RES cascade places only by splitting a task.
fn semi_split() -> (TaskSet, Placement) {
    let ts = TaskSet::from_cdt(&[(6, 10, 10), (6, 10, 10), (6, 10, 10)]).unwrap();
    let p = semi::cascade(&ts, 2, &semi::SemiConfig::default());
    assert!(p.schedulable && p.tasks.iter().any(|t| t.parts > 1), "{p:?}");
    (ts, p)
}

#[test]
fn the_default_partition_is_the_entrys_admission() {
    // Schedulable under EDF on one CPU (U < 1), not under deadline-monotonic FP (task 1's
    // response time is 8 > 7).
    let ts = TaskSet::from_cdt(&[(2, 5, 5), (4, 7, 7)]).unwrap();
    let pedf = find("pedf").unwrap().default_partition(&ts, 1, &Stop::never()).unwrap().unwrap();
    assert_eq!(pedf.cpus, vec![vec![1, 0]]); // decreasing utilization
    assert!(pedf.note.contains("EDF (QPA)"), "{}", pedf.note);
    let NotPlaced(why) = find("pfp").unwrap().default_partition(&ts, 1, &Stop::never()).unwrap().unwrap_err();
    assert!(why.contains("deadline-monotonic FP") && why.contains("cannot place task 0"), "{why}");
    assert!(find("gedf").unwrap().default_partition(&ts, 1, &Stop::never()).is_none());
    let w = Workload::Sporadic(ts);
    assert!(matches!(build("pfp", none(), &w, 1, None, &Stop::never()), Err(BuildError::NotPlaced(_))));
}
