//! Unit tests of the exports: JSON Lines round trip and refusals, per-job CSV, the LITMUS^RT
//! record layout, Perfetto JSON and the Gantt chart, on one hand-made trace.

use super::*;
use crate::record::{Event::*, TaskInfo};

fn sample() -> Trace {
    let j = |task, job| JobId { task, job };
    Trace {
        meta: TraceMeta {
            terms: vec!["request".into()],
            m: 2,
            horizon: 20,
            tasks: vec![
                TaskInfo { name: Some("a\"<b>\\".into()), wcet: 10, deadline: 10, period: 20 },
                TaskInfo { name: None, wcet: 3, deadline: 3, period: 15 },
            ],
        },
        records: vec![
            Record::new(0, Release { job: j(0, 0), deadline: 10 }),
            Record::new(0, Run { cpu: 0, job: j(0, 0) }),
            Record::new(2, Release { job: j(1, 0), deadline: 5 }),
            Record::new(2, Preempt { cpu: 0, job: j(0, 0) }),
            Record::new(2, Run { cpu: 0, job: j(1, 0) }),
            Record::new(4, Migration { job: j(0, 0), from: 0, to: 1 }),
            Record::new(4, Run { cpu: 1, job: j(0, 0) }),
            Record::new(5, Complete { cpu: 0, job: j(1, 0) }),
            Record::new(5, Idle { cpu: 0 }),
            Record::new(5, Overhead { cpu: 0, kind: OverheadKind::Schedule, duration: 1 }),
            Record::new(5, Overhead { cpu: 1, kind: OverheadKind::Term(0), duration: 3 }),
            Record::new(10, DeadlineMiss { job: j(0, 0) }),
            Record::new(12, Complete { cpu: 1, job: j(0, 0) }),
            Record::new(12, Idle { cpu: 1 }),
            Record::new(17, Release { job: j(1, 1), deadline: 20 }),
            Record::new(17, Run { cpu: 0, job: j(1, 1) }),
        ],
    }
}

#[test]
fn jsonl_round_trips() {
    let t = sample();
    let text = t.to_jsonl();
    let back = Trace::from_jsonl(&text).unwrap();
    assert_eq!(back, t);
    assert_eq!(back.metrics().unwrap(), t.metrics().unwrap());
}

#[test]
fn jsonl_rejects_bad_lines() {
    let t = sample().to_jsonl();
    let meta = t.lines().next().unwrap();
    for bad in [
        "{\"t\":0,\"ev\":\"run\",\"cpu\":0,\"task\":0,\"job\":0}\n".to_string(),
        format!("{meta}\n{{\"t\":0,\"ev\":\"jump\",\"cpu\":0}}\n"),
        format!("{meta}\n{{\"t\":0,\"ev\":\"idle\",\"cpu\":0,\"cpux\":1}}\n"),
        format!("{meta}\n{{\"t\":-1,\"ev\":\"idle\",\"cpu\":0}}\n"),
        format!("{meta}\nnot json\n"),
        String::new(),
    ] {
        assert!(Trace::from_jsonl(&bad).is_err(), "{bad}");
    }
    let e = Trace::from_jsonl(&format!("{meta}\n{{\"t\":0,\"ev\":\"idle\"}}\n")).unwrap_err();
    assert_eq!(e.line, Some(2));
}

#[test]
fn csv_rows_match_jobs() {
    let csv = sample().to_job_csv().unwrap();
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3);
    assert_eq!(lines[1], "0,0,0,10,0,12,12,2,2,1,10,1,1,0,1");
    assert_eq!(lines[3], "1,1,17,20,17,,,,0,1,3,0,0,0,0");
}

#[test]
fn sched_trace_layout() {
    let b = sample().to_sched_trace_bytes().unwrap();
    assert_eq!(b.len() % 24, 0);
    // 2 params + sys release + 3 releases + 4 switch-to + 1 switch-away + 2*(completion+away)
    assert_eq!(b.len() / 24, 2 + 1 + 3 + 4 + 1 + 4);
    // First record: ST_PARAM for pid 1, wcet 10, period 20.
    assert_eq!(&b[0..4], &[2, 0, 1, 0]);
    assert_eq!(u32::from_le_bytes(b[8..12].try_into().unwrap()), 10);
    assert_eq!(u32::from_le_bytes(b[12..16].try_into().unwrap()), 20);
    // Find the completion of job 1 of task 0 (pid 1, job 1): exec 10 ns, forced 0.
    let c = b.chunks(24).find(|r| r[0] == 7 && r[2] == 1).unwrap();
    assert_eq!(u32::from_le_bytes(c[4..8].try_into().unwrap()), 1);
    assert_eq!(u64::from_le_bytes(c[8..16].try_into().unwrap()), 12);
    assert_eq!(u64::from_le_bytes(c[16..24].try_into().unwrap()), 10 << 1);
}

#[test]
fn perfetto_is_valid_json_with_slices() {
    let v: Value = serde_json::from_str(&sample().to_perfetto_json()).unwrap();
    let evs = v["traceEvents"].as_array().unwrap();
    let slices: Vec<_> = evs.iter().filter(|e| e["ph"] == "X" && e["cat"] == "job").collect();
    assert_eq!(slices.len(), 4); // 0.0 twice, 1.0, 1.1 (open at horizon)
    assert!(evs.iter().any(|e| e["ts"].as_f64() == Some(0.002)));
}

#[test]
fn gantt_svg_marks_everything() {
    let s = sample().to_gantt_svg(None);
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert_eq!(s.matches("<rect x=").count() - 2, 4); // 2 CPU backgrounds + 4 bars
    assert!(s.contains("stroke=\"red\""));
    assert!(s.contains("&quot;&lt;b&gt;"));
    assert!(!s.contains("a\"<b>"));
    assert!(s.contains("a&quot;&lt;b&gt;\\"));
}
