//! The one metrics path: a run's summary is computed from its own trace by `rtsched_trace`,
//! exactly as the simulator's, so it equals the metrics of the trace it exports — checked here
//! for every registered mechanism on a light and an overloaded set, through a JSON Lines round
//! trip, and against the per-job CSV, Perfetto and the Gantt chart (which must mark every
//! deadline miss). Real short runs on one CPU (plus the dedicated CPU where a mechanism needs
//! one); no timing assertions.

use rtsched_model::TaskSet;
use rtsched_runtime::mechanism::registry::{entries, DedicatedCpu, PlacementKind};
use rtsched_runtime::platform::allowed_cpus;
use rtsched_runtime::{run, Mechanism, RunConfig};
use rtsched_trace::monitor::{priority_inversion_report, tracking_bound_ns};
use rtsched_trace::{Event, SampleStats, Trace};
use serde_json::Value;

const MS: u64 = 1_000_000;

fn check_one(name: &str, ts: &TaskSet, overloaded: bool) -> Option<String> {
    let entry = entries().iter().find(|e| e.name == name).unwrap();
    let cpus = allowed_cpus();
    let mut mech = Mechanism::from_entry(entry);
    let mut cfg = RunConfig::new(vec![cpus[0]], 200 * MS);
    if matches!(entry.placement, PlacementKind::Partition | PlacementKind::Reservations) {
        mech = mech.with_partition(vec![(0..ts.len()).collect()]);
    }
    if entry.dedicated == DedicatedCpu::Required {
        if cpus.len() < 2 {
            return Some(format!("{name}: needs a second CPU, this machine has one"));
        }
        cfg.dedicated_cpu = Some(cpus[1]);
    }
    if name == "kernel-sd" {
        cfg.cpus = cpus.clone();
    }
    let r = match run(ts, &mech, &cfg) {
        Ok(r) => r,
        Err(e) if name == "kernel-sd" => {
            let e = e.to_string();
            assert!(e.contains("CAP_SYS_NICE") || e.contains("EBUSY"), "{e}");
            return Some(format!("{name}: not run here: {e}"));
        }
        Err(e) => panic!("{name}: {e}"),
    };
    assert_eq!(r.accounting.error, None, "{name}");
    r.check_trace().unwrap_or_else(|e| panic!("{name}: {e}"));
    let s = r.summary_json();
    // The exported trace, read back, gives the summary's numbers.
    let back = Trace::from_jsonl(&r.trace.to_jsonl()).unwrap();
    assert_eq!(back, r.trace, "{name}: the JSON Lines round trip changed the trace");
    let mt = back.metrics().unwrap();
    assert_eq!(mt, r.metrics, "{name}");
    let u = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{name}: {k} missing"));
    assert_eq!((u("jobs"), u("completed"), u("pending")), (mt.jobs, mt.completed, mt.pending), "{name}");
    assert_eq!(u("released"), mt.jobs, "{name}");
    assert_eq!(u("deadline_misses"), mt.deadline_misses, "{name}");
    assert_eq!(
        (u("preemptions"), u("migrations"), u("context_switches"), u("steals")),
        (mt.preemptions, mt.migrations, mt.context_switches, mt.steals),
        "{name}"
    );
    assert_eq!(u("max_tardiness_ns"), mt.max_tardiness_ns, "{name}");
    assert_eq!(s["response_time_ns"]["max"].as_u64(), Some(mt.max_response_time_ns.unwrap_or(0)), "{name}");
    let responses: Vec<u64> = mt.per_job.iter().filter_map(|j| j.response_time()).collect();
    assert_eq!(s["response_time_ns"]["p99"].as_u64(), Some(SampleStats::of(&responses).p99_ns), "{name}");
    let latencies: Vec<u64> = mt.per_job.iter().filter_map(|j| j.start.map(|t| t - j.release)).collect();
    assert_eq!(s["release_latency_ns"]["p99"].as_u64(), Some(SampleStats::of(&latencies).p99_ns), "{name}");
    // Misses are records of the trace, as the simulator writes them.
    assert_eq!(mt.deadline_miss_records, mt.deadline_misses, "{name}");
    // The mechanism released every job due, and the trace counts them all.
    let mech_released: u64 = r.per_task.released.iter().map(|&x| x as u64).sum();
    assert_eq!(mt.jobs, mech_released, "{name}");
    // Every overhead statistic is the trace's.
    // (Under the measurement protocol: the interference the trace carries, the outlier rule.)
    for (term, st) in back.overhead_stats() {
        if term == rtsched_trace::INTERFERENCE_TERM {
            assert!(s["overheads"].get(&term).is_none(), "{name}: interference is not an overhead term");
            continue;
        }
        assert_eq!(s["overheads"][&term]["count"].as_u64(), Some(st.count as u64), "{name} {term}");
        assert_eq!(s["overheads"][&term]["discarded"].as_u64(), Some(st.discarded as u64), "{name} {term}");
        assert_eq!(s["overheads"][&term]["max_ns"].as_u64(), Some(st.max_ns), "{name} {term}");
        assert_eq!(s["overheads"][&term]["max_raw_ns"].as_u64(), Some(st.max_raw_ns), "{name} {term}");
        assert_eq!(s["overheads"][&term]["p99_ns"].as_u64(), Some(st.p99_ns), "{name} {term}");
    }
    for t in entry.all_terms() {
        assert!(s["overheads"][t.name].is_object(), "{name}: declared term {} missing", t.name);
    }
    // The exports agree: per-job CSV rows and misses, Perfetto's miss instants, the Gantt's.
    let csv = back.to_job_csv().unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len() as u64, mt.jobs, "{name}");
    let missed = rows.iter().filter(|r| r.split(',').nth(9) == Some("1")).count() as u64;
    assert_eq!(missed, mt.deadline_misses, "{name}");
    let pf: Value = serde_json::from_str(&back.to_perfetto_json()).unwrap();
    let pf_misses = pf["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"].as_str().is_some_and(|n| n.starts_with("deadline miss")))
        .count() as u64;
    assert_eq!(pf_misses, mt.deadline_misses, "{name}");
    let svg = back.to_gantt_svg(None);
    assert_eq!(svg.matches("<title>deadline miss").count() as u64, mt.deadline_misses, "{name}");
    if overloaded {
        assert!(mt.deadline_misses > 0, "{name}: the overload must miss");
        assert!(back.records.iter().any(|x| matches!(x.event, Event::DeadlineMiss { .. })));
    }
    // The monitor's verdict is the one over the exported trace, with the registry's invariant.
    match mech.invariant(ts, r.m).unwrap() {
        Some(inv) => {
            let tracking: Vec<&str> = entry.all_terms().iter().filter(|t| t.tracking).map(|t| t.name).collect();
            let rep = priority_inversion_report(&back, &inv, tracking_bound_ns(&back, &tracking)).unwrap();
            assert_eq!(s["priority_inversion_ns"].as_u64(), Some(rep.total_ns), "{name}");
            assert_eq!(s["priority_inversion"]["tracking_bound_ns"].as_u64(), Some(rep.tracking_bound_ns), "{name}");
            assert!(rep.total_ns <= r.duration_ns);
        }
        None => {
            assert!(s["priority_inversion_ns"].is_null() && s["priority_inversion_error"].is_string(), "{name}");
        }
    }
    Some(format!("{name}: {} jobs, {} misses", mt.jobs, mt.deadline_misses))
}

#[test]
fn every_mechanisms_summary_equals_the_metrics_of_its_own_trace() {
    // Light (U = 0.55) and overloaded (U = 1.4) on one scheduling CPU.
    let light = TaskSet::from_ct(&[(MS, 10 * MS), (2 * MS, 20 * MS), (MS, 7 * MS)]).unwrap();
    let over = TaskSet::from_ct(&[(6 * MS, 10 * MS), (4 * MS, 10 * MS), (2 * MS, 5 * MS)]).unwrap();
    let mut ran = 0;
    for e in entries() {
        for (ts, overloaded) in [(&light, false), (&over, true)] {
            // SCHED_DEADLINE refuses an overloaded set at admission.
            if e.name == "kernel-sd" && overloaded {
                continue;
            }
            // RUN and QPS refuse U > m when built (their offline phases), in one line.
            if matches!(e.name, "run" | "qps-g" | "qps-c") && overloaded {
                let cfg = RunConfig::new(vec![allowed_cpus()[0]], 50 * MS);
                let err = run(ts, &Mechanism::from_entry(e), &cfg).expect_err("U > m refused").to_string();
                assert!(err.contains("exceeds m = 1") && !err.contains('\n'), "{}: {err}", e.name);
                ran += 1;
                continue;
            }
            if let Some(line) = check_one(e.name, ts, overloaded) {
                eprintln!("{line}");
                ran += 1;
            }
        }
    }
    assert!(ran >= 2 * entries().len() - 1);
}
