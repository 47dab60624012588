//! DAG runs on threads against the node-level DAG simulator on the same set (docs/dag.md,
//! "Agreement with the simulator"): the last oracle of issue 27's runtime side, in the style of
//! tests/rtws.rs (fork-join runs against `simulate_rtws`).
//!
//! Each DAG-capable mechanism runs a light set (U well below m = 2, deadlines with tens of ms
//! of slack) on two pinned CPUs, and the simulator runs the same set over the same horizon
//! under the scheduler that models it:
//!
//! | mechanism | simulator | compared |
//! |---|---|---|
//! | `push-pull` | node-level `gedf` | structure, counts, misses, response times, completion order |
//! | `push-pull-fp` (explicit ranks) | node-level `gfp`, the same ranks | the same |
//! | `rtws`, both deque designs | node-level `gedf` | structure, counts, misses (so `len <= R <= D`) |
//!
//! Structure (both sides, from their traces): every node of every job completes at most once,
//! a completed job completed every node, no node runs before every predecessor of its job
//! completed, and every response time is at least the task's longest path. Counts: the jobs
//! released per task over the horizon are equal, every job due by the horizon completed on both
//! sides, no miss on either, and the same jobs completed (but for a job that completes within
//! `TOL` of the horizon, with its deadline after it). Response times (node-level mechanisms): for
//! each task of `n` jobs, at most `n/4 + 1` respond on threads further than `TOL` from the
//! simulated response; and
//! within each job, every two nodes whose simulated completions are at least `TOL` apart
//! complete in the same order on threads, with at most one pair in ten reordered. The
//! simulator's RTWS takes fork-join sets only, so `rtws` is compared with node-level G-EDF on
//! what any work-conserving global scheduler of a light set must share with it (docs/dag.md
//! says why); its response times are printed, not compared. Where the simulator's RTWS takes
//! the set (a DAG of fork-join shape), `rtws` is compared with it on jobs, misses and job
//! completion order (the last test).
//!
//! Broken twins, each caught by the same comparison: the simulator run with one node's WCET
//! doubled (its response times move by more than `2·TOL` on every job of that task, which the
//! simulator says exactly; so a job within `TOL` of one simulated run is outside it for the
//! other, and with `n > 2 (n/4 + 1)` jobs the comparison rejects the twin whenever it accepts
//! the real run), and the simulator run with one edge dropped (its trace breaks the real graph's
//! precedence, deterministically: the simulator is exact). Beyond "no miss on a light set" (the
//! assumption of tests/dag_runtime.rs) only the node-level checks read times on threads, with a
//! noise bound of `TOL` per job and a quarter (responses) and a tenth (order) of outliers
//! tolerated, so a run that load or a near-coincidence of events (see [`outliers`]) disturbs on
//! a few jobs still passes.

mod common;
use common::dag::{check_dag, MS};
use common::{at_rt_if_permitted, two_cpus};

use rtsched_gen::dag::{generate_dag_set, DagDeadline, DagGenSpec, DagShape};
use rtsched_model::dag::{DagSet, DagTask};
use rtsched_model::forkjoin::{ForkJoinSet, ForkJoinTask};
use rtsched_runtime::{run_dag, Mechanism, RunConfig};
use rtsched_sim::{simulate_dag, simulate_rtws, Scheduler, SimConfig};
use rtsched_trace::{Event, Record};
use std::collections::BTreeMap;

/// Runs one at a time (real threads on the same cores).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static L: std::sync::Mutex<()> = std::sync::Mutex::new(());
    L.lock().unwrap_or_else(|p| p.into_inner())
}

/// The noise budget on a job's response time on threads (not a measurement): each node event
/// there costs a release timer, a wake-up or an inter-processor request, and a job of these
/// sets sees at most a few tens of node events of its own and of the jobs that overlap it; 2 ms
/// allows each of them 50–100 µs. Runs descheduled by load beyond it are the outliers the
/// counts tolerate.
const TOL: u64 = 2 * MS;

/// The jobs of a task (of `n` compared) allowed to respond outside `TOL` of the simulator: a
/// quarter, plus one. Beyond load, an outlier comes from two simulated events closer than the
/// noise (a release and a completion a few µs apart, say) that threads resolve the other way:
/// the schedule then differs for a while, by up to a node's cost.
fn outliers(n: u64) -> u64 {
    n / 4 + 1
}

/// What one side (simulated or on threads) did with one node instance.
#[derive(Debug, Clone, Copy, Default)]
struct NodeRun {
    released: Option<u64>,
    deadline: u64,
    first_run: Option<u64>,
    complete: Option<u64>,
    completions: u32,
}

/// What one side did, judged against the graphs of `set` (which for a broken twin are not the
/// graphs that side ran).
#[derive(Debug)]
struct Facts {
    /// Per task: jobs released, jobs due by the horizon (deadline <= horizon), those completed by
    /// their deadline.
    released: Vec<u64>,
    due: Vec<u64>,
    due_done: Vec<u64>,
    misses: u64,
    /// The missed jobs: (task, seq, release, completion).
    late: Vec<(u32, u32, u64, Option<u64>)>,
    /// Per completed job (task, seq): its completion, response time and its nodes' completion
    /// times.
    finish: BTreeMap<(u32, u32), u64>,
    response: BTreeMap<(u32, u32), u64>,
    completions: BTreeMap<(u32, u32), Vec<u64>>,
}

/// The node instances of a trace (trace task `base_i + k` is node `k` of task `i`, trace job
/// `seq` its job `seq`: the numbering of the simulator's DAG trace and of the runtime's slots),
/// checked against `set` and summed up per job. Errors name the task, job and node.
fn facts(set: &DagSet, records: &[Record], horizon: u64) -> Result<Facts, String> {
    let mut base = Vec::new();
    let mut total = 0u32;
    for t in set.iter() {
        base.push(total);
        total += t.nodes() as u32;
    }
    let mut nodes: BTreeMap<(u32, u32), NodeRun> = BTreeMap::new();
    for x in records {
        let job = match x.event {
            Event::Release { job, .. } | Event::Run { job, .. } | Event::Complete { job, .. } => job,
            _ => continue,
        };
        if job.task >= total {
            return Err(format!("trace task {} is not a node of the set", job.task));
        }
        let n = nodes.entry((job.task, job.job)).or_default();
        match x.event {
            Event::Release { deadline, .. } => {
                n.released = Some(x.time);
                n.deadline = deadline;
            }
            Event::Run { .. } => {
                if n.completions > 0 {
                    return Err(format!("trace task {} job {} runs after completing", job.task, job.job));
                }
                n.first_run.get_or_insert(x.time);
            }
            _ => {
                n.complete = Some(x.time);
                n.completions += 1;
            }
        }
    }
    let mut f = Facts {
        released: vec![0; set.len()],
        due: vec![0; set.len()],
        due_done: vec![0; set.len()],
        misses: 0,
        late: Vec::new(),
        finish: BTreeMap::new(),
        response: BTreeMap::new(),
        completions: BTreeMap::new(),
    };
    for (i, t) in set.iter().enumerate() {
        let b = base[i];
        for seq in 0u32.. {
            let all: Vec<NodeRun> =
                (0..t.nodes() as u32).map(|k| nodes.get(&(b + k, seq)).copied().unwrap_or_default()).collect();
            let Some(release) = all[0].released else { break };
            let at = |k: usize| format!("task {i} job {seq} node {k}");
            for (k, n) in all.iter().enumerate() {
                if n.released != Some(release) {
                    return Err(format!("{}: not released with its job ({:?}, {release})", at(k), n.released));
                }
                if n.completions > 1 {
                    return Err(format!("{}: completed {} times", at(k), n.completions));
                }
                if n.first_run.is_some_and(|s| s < release) {
                    return Err(format!("{}: runs at {:?} before its release {release}", at(k), n.first_run));
                }
            }
            for &(u, v) in t.edges() {
                let (pu, sv) = (all[u as usize], all[v as usize]);
                if let Some(start) = sv.first_run {
                    if pu.complete.is_none_or(|c| c > start) {
                        return Err(format!(
                            "{}: runs at {start} before its predecessor {u} completed ({:?})",
                            at(v as usize),
                            pu.complete
                        ));
                    }
                }
            }
            f.released[i] += 1;
            let deadline = all[0].deadline;
            let finish = all.iter().map(|n| n.complete).collect::<Option<Vec<u64>>>();
            if let Some(c) = &finish {
                let end = c.iter().copied().max().unwrap_or(release);
                if end - release < t.longest_path() {
                    return Err(format!(
                        "task {i} job {seq}: responds in {} ns, below its longest path {}",
                        end - release,
                        t.longest_path()
                    ));
                }
                f.finish.insert((i as u32, seq), end);
                f.response.insert((i as u32, seq), end - release);
                f.completions.insert((i as u32, seq), c.clone());
            }
            let end = finish.as_ref().and_then(|c| c.iter().copied().max());
            if deadline <= horizon {
                f.due[i] += 1;
                if end.is_some_and(|e| e <= deadline) {
                    f.due_done[i] += 1;
                }
            }
            if deadline <= horizon && end.is_none_or(|e| e > deadline) {
                f.misses += 1;
                f.late.push((i as u32, seq, release, end));
            }
        }
    }
    Ok(f)
}

/// How closely a run is compared with its simulator.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Level {
    /// The simulator's scheduler is the mechanism's (push-pull: node-level G-EDF; push-pull-fp:
    /// node-level G-FP with the same ranks): response times and completion order too.
    NodeLevel,
    /// A different work-conserving global scheduler (rtws against node-level G-EDF): counts,
    /// completion and misses only.
    Counts,
}

/// What a comparison compared (for the printout and for "not vacuous").
#[derive(Debug, Default)]
struct Compared {
    jobs: u64,
    within_tol: u64,
    pairs: u64,
    reordered: u64,
}

/// The comparison of a run on threads (`thr`) with the simulator's run (`sim`) of the same set.
fn compare(set: &DagSet, horizon: u64, sim: &Facts, thr: &Facts, level: Level) -> Result<Compared, String> {
    if sim.released != thr.released {
        return Err(format!("jobs released per task: simulator {:?}, threads {:?}", sim.released, thr.released));
    }
    for (side, f) in [("simulator", sim), ("threads", thr)] {
        if f.due_done != f.due || f.misses != 0 {
            return Err(format!(
                "{side}: {} misses; jobs due per task {:?}, completed by their deadline {:?}; missed (task, job, \
                 release, completion): {:?}",
                f.misses, f.due, f.due_done, f.late
            ));
        }
    }
    // The same jobs complete, but for a job the simulator completes within TOL of the horizon
    // (or not at all) and whose deadline is after it: noise may move its completion across.
    for (k, &f) in &thr.finish {
        if !sim.finish.contains_key(k) && f + TOL < horizon {
            return Err(format!(
                "job {k:?} completes at {f} on threads only, before the horizon {horizon} by more than {TOL}"
            ));
        }
    }
    for (k, &f) in &sim.finish {
        if !thr.finish.contains_key(k) && f + TOL < horizon {
            return Err(format!(
                "job {k:?} completes at {f} in the simulator only, before the horizon {horizon} by more than {TOL}"
            ));
        }
    }
    // Measured at both levels (printed); asserted for the node-level pairs only.
    let mut c = Compared::default();
    for i in 0..set.len() as u32 {
        let (mut n, mut within) = (0u64, 0u64);
        for (k, &rs) in sim.response.range((i, 0)..=(i, u32::MAX)) {
            let Some(&rt) = thr.response.get(k) else { continue };
            n += 1;
            within += u64::from(rt.abs_diff(rs) <= TOL);
            // Completion order inside the job, for nodes the simulator completes TOL apart.
            let (cs, ct) = (&sim.completions[k], &thr.completions[k]);
            for u in 0..cs.len() {
                for v in 0..cs.len() {
                    if cs[u] + TOL <= cs[v] {
                        c.pairs += 1;
                        c.reordered += u64::from(ct[u] >= ct[v]);
                    }
                }
            }
        }
        if level == Level::NodeLevel && n - within > outliers(n) {
            return Err(format!(
                "task {i}: {within} of {n} jobs respond on threads within {TOL} ns of the simulated response \
                 (at most {} outside allowed)",
                outliers(n)
            ));
        }
        c.jobs += n;
        c.within_tol += within;
    }
    if level == Level::NodeLevel && 10 * c.reordered > c.pairs {
        return Err(format!(
            "{} of {} node pairs complete in another order on threads than in the simulator",
            c.reordered, c.pairs
        ));
    }
    Ok(c)
}

/// A simulator run of `set` over `horizon` under `sched`, with its trace.
fn simulate(set: &DagSet, sched: &Scheduler, horizon: u64) -> rtsched_sim::DagResult {
    let mut sc = SimConfig::new(2);
    sc.horizon = Some(horizon);
    sc.record_trace = true;
    simulate_dag(set, sched, &sc).unwrap()
}

fn sim_facts(set: &DagSet, judge: &DagSet, sched: &Scheduler, horizon: u64) -> Result<Facts, String> {
    let r = simulate(set, sched, horizon);
    facts(judge, &r.trace.expect("trace recorded").records, horizon)
}

/// One mechanism of the table above: its name, parameters, simulator scheduler and level.
struct Case {
    name: &'static str,
    params: Vec<(&'static str, String)>,
    sched: Scheduler,
    level: Level,
}

/// The cases for `set` with task ranks `ranks` for the fixed-priority pair (each node of task
/// `i` gets the rank of `i`; ties between nodes go to the node index on both sides, between
/// tasks to the task index).
fn cases(set: &DagSet, ranks: &[u32]) -> Vec<Case> {
    let slot_ranks: Vec<String> =
        set.iter().zip(ranks).flat_map(|(t, r)| std::iter::repeat_n(r.to_string(), t.nodes())).collect();
    let rtws = |d: &str| Case {
        name: "rtws",
        params: vec![("deques", d.to_string())],
        sched: Scheduler::Gedf,
        level: Level::Counts,
    };
    vec![
        Case { name: "push-pull", params: vec![], sched: Scheduler::Gedf, level: Level::NodeLevel },
        Case {
            name: "push-pull-fp",
            params: vec![("priorities", slot_ranks.join(","))],
            sched: Scheduler::Gfp { ranks: ranks.to_vec(), order: None },
            level: Level::NodeLevel,
        },
        rtws("lockfree"),
        rtws("locked"),
    ]
}

/// Runs every case on `set` over `horizon` and compares; returns the facts of each run on
/// threads (for the twins) with their case index.
fn differential(what: &str, set: &DagSet, ranks: &[u32], horizon: u64) -> Option<Vec<(usize, Facts)>> {
    let cpus = two_cpus()?;
    let mut out = Vec::new();
    for (ci, case) in cases(set, ranks).into_iter().enumerate() {
        let label = format!("{what}: {} {:?}", case.name, case.params);
        let sim = sim_facts(set, set, &case.sched, horizon).unwrap_or_else(|e| panic!("{label}, simulator: {e}"));
        let mech = Mechanism::named(case.name)
            .unwrap()
            .with_params(case.params.iter().map(|(k, v)| (*k, v.as_str())))
            .unwrap();
        let mut c = RunConfig::new(cpus.clone(), horizon);
        c.start_delay_ns = 50 * MS;
        let r = at_rt_if_permitted(&mut c, |c| run_dag(set, &mech, c));
        assert_eq!(r.duration_ns, horizon, "{label}: the run ended early");
        check_dag(set, &r).unwrap_or_else(|e| panic!("{label}, trace oracle: {e}"));
        let thr = facts(set, &r.trace.records, horizon).unwrap_or_else(|e| panic!("{label}, threads: {e}"));
        let got = compare(set, horizon, &sim, &thr, case.level).unwrap_or_else(|e| {
            // What the run says of its host (interference, release latency) tells load from a
            // mechanism's fault.
            let s = r.summary_json();
            panic!(
                "{label}: {e} (run at {}: interference {}, release latency {})",
                c.rt_priority.map_or("normal priority".to_string(), |p| format!("SCHED_FIFO {p}")),
                s["interference"],
                s["release_latency_ns"]
            )
        });
        assert!(got.jobs >= 10, "{label}: only {} jobs compared", got.jobs);
        if case.level == Level::NodeLevel {
            assert!(got.pairs >= 5, "{label}: only {} node pairs compared", got.pairs);
        }
        let max = |f: &Facts, i: u32| f.response.range((i, 0)..=(i, u32::MAX)).map(|(_, r)| *r).max();
        eprintln!(
            "{label}: {} jobs compared, {} within {TOL} ns, {} of {} node pairs reordered{}; max response per task \
             (simulator, threads, ns): {:?}{}",
            got.jobs,
            got.within_tol,
            got.reordered,
            got.pairs,
            if case.level == Level::Counts { " (printed, not compared)" } else { "" },
            (0..set.len() as u32).map(|i| (max(&sim, i), max(&thr, i))).collect::<Vec<_>>(),
            if c.rt_priority.is_some() { "" } else { " (normal priority)" }
        );
        out.push((ci, thr));
    }
    Some(out)
}

/// Three tasks with forks and joins, node costs in whole ms chosen so that the simulator's
/// completions inside a job are mostly a few ms apart; U = 13/40 + 16/60 + 9/100 ≈ 0.68 of
/// two CPUs; hyperperiod 600 ms.
fn fixed_set() -> DagSet {
    DagSet::new(vec![
        // 0 → {1, 2} → 3 → 4: a fork, a join, a tail; node 2 (6 ms) is on the critical path.
        DagTask::new(
            40 * MS,
            40 * MS,
            vec![2 * MS, MS, 6 * MS, 2 * MS, 2 * MS],
            vec![(0, 1), (0, 2), (1, 3), (2, 3), (3, 4)],
        )
        .unwrap(),
        // 0 → {1, 2, 3}, {1, 2} → 4, 3 → 4: three branches on two CPUs.
        DagTask::new(
            60 * MS,
            60 * MS,
            vec![2 * MS, 4 * MS, 3 * MS, 6 * MS, MS],
            vec![(0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 4)],
        )
        .unwrap(),
        // Two sources joined: 0 → 2, 1 → 2.
        DagTask::new(100 * MS, 100 * MS, vec![3 * MS, 4 * MS, 2 * MS], vec![(0, 2), (1, 2)]).unwrap(),
    ])
}

/// Seeded random light sets from the project's generator: Melani et al.'s nested fork-join
/// graphs with a few extra edges, 2–3 tasks, U = 0.6 of two CPUs, nodes of 0.5–3 ms.
fn random_set(seed: u64, n: usize) -> DagSet {
    let spec = DagGenSpec {
        n,
        total: 0.6,
        umax: 0.5,
        shape: DagShape::NestedForkJoin { max_depth: 2, max_branches: 3, p_par: 0.5, p_add: 0.1 },
        wcet: (MS / 2, 3 * MS),
        deadline: DagDeadline::Implicit,
        max_tries: 100,
    };
    generate_dag_set(&spec, seed, 0).unwrap()
}

#[test]
fn a_fixed_set_agrees_with_the_simulator_and_the_twins_are_caught() {
    let _s = serial();
    let set = fixed_set();
    let (ranks, horizon) = ([1, 0, 2], 600 * MS);
    let Some(runs) = differential("fixed set", &set, &ranks, horizon) else { return };
    let cs = cases(&set, &ranks);
    // Twin 1: the simulator with task 0's node 2 (6 ms, on its critical path) doubled. Every
    // job of task 0 then responds more than 2·TOL later in the simulator (checked exactly), so
    // a job within TOL of one run is not within TOL of the other, and a run the comparison
    // accepted (above) is rejected against the twin: with n = 15 jobs of task 0, at least
    // n − (n/4 + 1) = 11 are within TOL of the real simulated run, so at most 4 of the twin's,
    // and 11 > n/4 + 1 are outside.
    let mut w = set[0].wcets().to_vec();
    w[2] *= 2;
    let twin = DagSet::new(vec![
        DagTask::new(40 * MS, 40 * MS, w, set[0].edges().to_vec()).unwrap(),
        set[1].clone(),
        set[2].clone(),
    ]);
    for (ci, thr) in &runs {
        let case = &cs[*ci];
        if case.level != Level::NodeLevel {
            continue;
        }
        let real = sim_facts(&set, &set, &case.sched, horizon).unwrap();
        let bad = sim_facts(&twin, &twin, &case.sched, horizon).unwrap();
        for (k, r) in real.response.range((0, 0)..=(0, u32::MAX)) {
            let b = bad.response.get(k).copied();
            assert!(b.is_some_and(|b| b > r + 2 * TOL), "{}: job {k:?} moves from {r} to {b:?}", case.name);
        }
        let n = real.response.range((0, 0)..=(0, u32::MAX)).count() as u64;
        assert!(n > 2 * outliers(n), "{n} jobs of task 0: too few for the twin");
        let e = compare(&set, horizon, &bad, thr, case.level).expect_err("the doubled WCET is not caught");
        assert!(e.contains("task 0:") && e.contains("within"), "{}: {e}", case.name);
    }
    // Twin 2: the simulator without the edge 0 → 1 of task 0 (node 1 becomes a source and runs
    // at the release beside node 0), judged against the real graph: its precedence breaks.
    let mut edges = set[0].edges().to_vec();
    edges.retain(|&e| e != (0, 1));
    let dropped = DagSet::new(vec![
        DagTask::new(40 * MS, 40 * MS, set[0].wcets().to_vec(), edges).unwrap(),
        set[1].clone(),
        set[2].clone(),
    ]);
    for case in &cs {
        let e = sim_facts(&dropped, &set, &case.sched, horizon).expect_err("the dropped edge is not caught");
        assert!(e.contains("node 1: runs at") && e.contains("before its predecessor 0"), "{}: {e}", case.name);
    }
}

/// Seeded random light sets (2 and 3 tasks alternately; push-pull-fp and `gfp` at
/// deadline-monotonic ranks); `RTSCHED_STRESS_SEED` /
/// `RTSCHED_STRESS_CASES` (default 2 sets) as in tests/stress.rs.
#[test]
fn seeded_random_sets_agree_with_the_simulator() {
    let _s = serial();
    let first = std::env::var("RTSCHED_STRESS_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0xda6_d1ffu64);
    let cases = std::env::var("RTSCHED_STRESS_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2u64);
    for case in 0..cases {
        let (seed, n) = (first.wrapping_add(case), 2 + (case % 2) as usize);
        let set = random_set(seed, n);
        // Deadline-monotonic ranks (ties to the task index): random light sets stay schedulable
        // under them, where an arbitrary order can starve a short-period task.
        let mut by_deadline: Vec<usize> = (0..n).collect();
        by_deadline.sort_by_key(|&i| (set[i].deadline(), i));
        let mut ranks = vec![0u32; n];
        for (r, &i) in by_deadline.iter().enumerate() {
            ranks[i] = r as u32;
        }
        let desc = format!("seed {seed:#x}");
        eprintln!(
            "{desc}: (period, node WCETs, edges) per task: {:?}",
            set.iter().map(|t| (t.period(), t.wcets().to_vec(), t.edges().to_vec())).collect::<Vec<_>>()
        );
        if differential(&desc, &set, &ranks, 400 * MS).is_none() {
            return;
        }
    }
}

/// `rtws` against the simulator's own RTWS where that takes the set: a DAG of fork-join shape
/// (the RTWS paper's §V-A example, one unit = 3 ms, converted with `DagSet::from_forkjoin`)
/// run through `run_dag`, against `simulate_rtws` on the fork-join set over one hyperperiod.
/// Both release the same jobs per task and miss none, the run passes the structure checks, and
/// every two jobs whose simulated completions are at least `TOL` apart complete in the same
/// order on threads, at most one pair in ten reordered (a steal the threads resolve otherwise
/// at an instant where the example's events coincide exactly can move a job; tests/rtws.rs).
#[test]
fn rtws_on_a_fork_join_shaped_dag_agrees_with_the_simulators_rtws() {
    let _s = serial();
    let Some(cpus) = two_cpus() else { return };
    let u = 3 * MS;
    let fj = ForkJoinSet::new(vec![
        ForkJoinTask::implicit(10 * u, vec![vec![3 * u], vec![u, u]]).unwrap(),
        ForkJoinTask::implicit(20 * u, vec![vec![2 * u], vec![u, 3 * u, u, 3 * u]]).unwrap(),
        ForkJoinTask::implicit(19 * u, vec![vec![4 * u]]).unwrap(),
    ])
    .unwrap();
    let dag = DagSet::from_forkjoin(&fj).unwrap();
    let horizon = 380 * u;
    let mut sc = SimConfig::new(2);
    sc.horizon = Some(horizon);
    let sim = simulate_rtws(&fj, &sc).unwrap();
    assert_eq!(sim.deadline_misses, 0, "the simulator misses");
    let sim_fin: BTreeMap<(u32, u32), Option<u64>> = sim.per_job.iter().map(|j| ((j.task, j.job), j.finish)).collect();
    let sim_released: Vec<u64> =
        (0..fj.len() as u32).map(|i| sim_fin.keys().filter(|k| k.0 == i).count() as u64).collect();
    for deques in ["lockfree", "locked"] {
        let mech = Mechanism::named("rtws").unwrap().with_params([("deques", deques)]).unwrap();
        let mut c = RunConfig::new(cpus.clone(), horizon);
        c.start_delay_ns = 50 * MS;
        let r = at_rt_if_permitted(&mut c, |c| run_dag(&dag, &mech, c));
        check_dag(&dag, &r).unwrap_or_else(|e| panic!("rtws {deques}, trace oracle: {e}"));
        let thr = facts(&dag, &r.trace.records, horizon).unwrap_or_else(|e| panic!("rtws {deques}: {e}"));
        assert_eq!(thr.released, sim_released, "rtws {deques}: jobs released per task");
        assert!(thr.misses == 0 && thr.due_done == thr.due, "rtws {deques}: {:?}, due {:?}", thr.late, thr.due);
        let (mut pairs, mut reordered) = (0u64, 0u64);
        for (a, fa) in sim_fin.iter().filter_map(|(k, f)| f.map(|f| (k, f))) {
            for (b, fb) in sim_fin.iter().filter_map(|(k, f)| f.map(|f| (k, f))) {
                if fa + TOL <= fb {
                    pairs += 1;
                    reordered += u64::from(thr.finish[a] >= thr.finish[b]);
                }
            }
        }
        eprintln!(
            "rtws {deques} on the paper example as a DAG: {} jobs; {reordered} of {pairs} job pairs reordered; steals: \
             simulator {}, threads {}",
            sim_fin.len(),
            sim.steals,
            r.metrics.steals
        );
        assert!(pairs > 100, "{pairs}");
        assert!(10 * reordered <= pairs, "rtws {deques}: {reordered} of {pairs} job pairs complete in another order");
    }
}
