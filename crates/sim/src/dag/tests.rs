//! Unit tests of the node-level DAG simulator: G-EDF and G-FP by hand, the trace's task, node
//! and job names, federated scheduling running its plan, and a late job waiting for its
//! predecessor, with bad input refused.

use super::*;
use rtsched_analysis::dag::federated::{federated, Federated, LowPlacement};
use rtsched_analysis::Limits;
use rtsched_model::dag::DagTask;

/// T0: two independent nodes of 3, T = D = 10; T1: one node of 4, T = 20, D = 8.
fn set() -> DagSet {
    DagSet::new(vec![
        DagTask::new(10, 10, vec![3, 3], vec![]).unwrap(),
        DagTask::new(20, 8, vec![4], vec![]).unwrap().named("cam").unwrap(),
    ])
}

fn rts(r: &DagResult) -> Vec<(u32, u32, Option<Time>)> {
    r.per_job.iter().map(|j| (j.task, j.job, j.response_time())).collect()
}

fn cfg(m: u32) -> SimConfig {
    let mut c = SimConfig::new(m);
    c.check_invariants = true;
    c.record_trace = true;
    c
}

#[test]
fn gedf_and_gfp_by_hand() {
    // G-EDF on 2 CPUs: at 0 cam (d 8) and T0's node 0 (d 10, smaller node index) run; node 1
    // waits until 3, so T0's first job ends at 6. At 10 both nodes run at once.
    let r = simulate_dag(&set(), &Scheduler::Gedf, &cfg(2)).unwrap();
    assert_eq!(rts(&r), vec![(0, 0, Some(6)), (1, 0, Some(4)), (0, 1, Some(3))]);
    assert_eq!((r.jobs, r.completed, r.deadline_misses, r.nodes, r.nodes_completed), (3, 3, 0, 5, 5));
    assert_eq!(r.max_response_time_ns, Some(6));
    assert_eq!(r.per_task[0].mean_response_time_ns, Some(4.5));
    assert_eq!(r.node_events, 10, "5 node instances released and completed");
    // G-FP with rate-monotonic ranks puts T0 first: its nodes run 0..3, cam 3..7.
    let rm = Scheduler::Gfp { ranks: vec![0, 1], order: Some(rtsched_policy::FpOrder::RateMonotonic) };
    let r = simulate_dag(&set(), &rm, &cfg(2)).unwrap();
    assert_eq!(rts(&r), vec![(0, 0, Some(3)), (1, 0, Some(7)), (0, 1, Some(3))]);
    // On one CPU cam misses under RM (7 + 3 > 8).
    let r = simulate_dag(&set(), &rm, &cfg(1)).unwrap();
    assert_eq!(rts(&r), vec![(0, 0, Some(6)), (1, 0, Some(10)), (0, 1, Some(6))]);
    assert_eq!(r.deadline_misses, 1);
    assert_eq!(r.per_task[1].deadline_misses, 1);
}

#[test]
fn the_trace_names_task_node_and_job() {
    let r = simulate_dag(&set(), &Scheduler::Gedf, &cfg(2)).unwrap();
    let tr = r.trace.as_ref().unwrap();
    let names: Vec<&str> = tr.meta.tasks.iter().map(|t| t.name.as_deref().unwrap()).collect();
    assert_eq!(names, ["T0[0]", "T0[1]", "cam[0]"]);
    let svg = tr.to_gantt_svg(None);
    assert!(svg.contains("T0[1].0 [3, 6)"), "node 1 of job 0 runs 3..6");
    assert!(svg.contains("cam[0].0 [0, 4)"));
    let n = NodeNumbering::of(&set());
    assert_eq!((n.trace_task(1, 0), n.node_of(2), n.node_of(1), n.node_of(3)), (2, Some((1, 0)), Some((0, 1)), None));
    let csv = r.to_job_csv();
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("0,0,0,10,0,6,6,"), "{csv}");
}

#[test]
fn federated_runs_the_plan() {
    // A heavy diamond-like task (vol 26, len 6, D 10: 5 cores) and two light ones.
    let mut edges = Vec::new();
    for k in 1..=6 {
        edges.push((0, k));
        edges.push((k, 7));
    }
    let mut w = vec![1u64];
    w.extend([4; 6]);
    w.push(1);
    let heavy = DagTask::new(10, 10, w, edges).unwrap();
    let light = DagTask::new(10, 10, vec![3, 2], vec![(0, 1)]).unwrap();
    let s = DagSet::new(vec![light.clone(), heavy, light]);
    let Federated::Schedulable(plan) = federated(&s, 7, LowPlacement::default(), &Limits::default()) else {
        panic!("not schedulable")
    };
    let r = simulate_dag(&s, &Scheduler::Federated(plan.clone()), &cfg(7)).unwrap();
    assert_eq!(r.deadline_misses, 0);
    // The heavy task: node 0 (1), five of six nodes of 4 on five cores, the sixth after, sink.
    assert_eq!(r.per_task[1].max_response_time_ns, Some(1 + 4 + 4 + 1));
    // Both light tasks fit one core (density 1/2 each): the second waits for the first.
    assert_eq!(r.per_task[0].max_response_time_ns, Some(5));
    assert_eq!(r.per_task[2].max_response_time_ns, Some(10));
    assert_eq!(r.federated.as_ref().unwrap()["light_first_cpu"], 5);
    // A plan that does not fit or forgets a task is refused naming the field.
    let mut bad = plan.clone();
    bad.high[0].1 = 3..9;
    let e = simulate_dag(&s, &Scheduler::Federated(bad), &cfg(7)).unwrap_err().to_string();
    assert!(e.starts_with("field 'federated': task 1: dedicated CPUs 3..9"), "{e}");
    let mut bad = plan;
    bad.low[0].pop();
    let e = simulate_dag(&s, &Scheduler::Federated(bad), &cfg(7)).unwrap_err().to_string();
    assert!(e.contains("does not place task"), "{e}");
}

#[test]
fn a_late_job_waits_for_its_predecessor_and_bad_input_is_refused() {
    // C = 6 on one CPU, T = 4, D = 8: job 1 (released at 4) starts at 6, ends at 12.
    let s = DagSet::new(vec![DagTask::new(4, 8, vec![3, 3], vec![(0, 1)]).unwrap()]);
    let mut c = cfg(1);
    c.horizon = Some(13);
    let r = simulate_dag(&s, &Scheduler::Gedf, &c).unwrap();
    assert_eq!(r.per_job[1].start, Some(6));
    assert_eq!(r.per_job[1].finish, Some(12));
    assert_eq!(r.pending, 2, "jobs 2 and 3 (released at 8 and 12) are pending");
    let mut c = cfg(1);
    c.exec = ExecTimes::Fixed(vec![1]);
    assert!(simulate_dag(&s, &Scheduler::Gedf, &c).unwrap_err().to_string().starts_with("field 'exec'"));
    let two = Scheduler::Gfp { ranks: vec![0, 1], order: None };
    let e = simulate_dag(&s, &two, &cfg(1)).unwrap_err().to_string();
    assert_eq!(e, "gfp: parameter priorities: 2 priorities for 1 tasks", "the registry's words");
    let e = simulate_dag(&s, &Scheduler::Rtws, &cfg(1)).unwrap_err().to_string();
    assert_eq!(
        e,
        "field 'scheduler': RTWS simulates sequential and fork-join task sets, not general DAG tasks \
         (docs/dag.md); a DAG task set runs under gedf, gfp or federated"
    );
    let mut c = cfg(1);
    c.overheads = Some(crate::Overheads::ZERO);
    assert!(simulate_dag(&s, &Scheduler::Gedf, &c).unwrap_err().to_string().starts_with("field 'overheads'"));
}
