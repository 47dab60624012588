//! Exports of a [`Trace`]: JSON Lines (and its reader), per-job CSV, Perfetto / Chrome
//! trace-event JSON, LITMUS^RT `sched_trace` binary records, and an SVG Gantt chart.
//! Formats are specified in `docs/trace.md`.

use crate::metrics::Metrics;
use crate::record::{Event, JobId, OverheadKind, Record, Trace, TraceMeta};
use rtsched_model::{ModelError, Time};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fmt::Write;

/// Version of the JSON Lines trace format.
pub const JSONL_VERSION: u64 = 1;

fn event_name(e: &Event) -> &'static str {
    match e {
        Event::Release { .. } => "release",
        Event::Run { .. } => "run",
        Event::Preempt { .. } => "preempt",
        Event::Complete { .. } => "complete",
        Event::DeadlineMiss { .. } => "deadline_miss",
        Event::Migration { .. } => "migration",
        Event::Steal { .. } => "steal",
        Event::Idle { .. } => "idle",
        Event::Overhead { .. } => "overhead",
        Event::Suspend { .. } => "suspend",
        Event::Resume { .. } => "resume",
    }
}

/// Microseconds with exactly three decimals, from integer ns (no float rounding).
fn us(t: Time) -> String {
    format!("{}.{:03}", t / 1000, t % 1000)
}

fn task_label(meta: &TraceMeta, task: u32) -> String {
    match meta.tasks.get(task as usize).and_then(|t| t.name.as_deref()) {
        Some(n) => n.to_owned(),
        None => format!("T{task}"),
    }
}

/// `"label.job"` as a JSON string literal (escaped).
fn slice_name(meta: &TraceMeta, job: JobId) -> String {
    serde_json::to_string(&format!("{}.{}", task_label(meta, job.task), job.job)).unwrap_or_else(|_| "\"?\"".into())
}

fn get_u64(obj: &Map<String, Value>, key: &str, line: usize) -> Result<u64, ModelError> {
    obj.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| ModelError::field(key, "missing or not a non-negative integer").at_line(line))
}

fn get_u32(obj: &Map<String, Value>, key: &str, line: usize) -> Result<u32, ModelError> {
    u32::try_from(get_u64(obj, key, line)?).map_err(|_| ModelError::field(key, "does not fit 32 bits").at_line(line))
}

impl Trace {
    /// JSON Lines: a `meta` line, then one object per record in time order.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::with_capacity(64 * (self.records.len() + 1));
        let mut meta = serde_json::to_value(&self.meta).expect("meta serialises");
        let obj = meta.as_object_mut().expect("meta is an object");
        obj.insert("ev".into(), "meta".into());
        obj.insert("version".into(), JSONL_VERSION.into());
        out.push_str(&meta.to_string());
        out.push('\n');
        for r in &self.records {
            let _ = write!(out, "{{\"t\":{},\"ev\":\"{}\"", r.time, event_name(&r.event));
            let _ = match r.event {
                Event::Release { job, deadline } => {
                    write!(out, ",\"task\":{},\"job\":{},\"deadline\":{deadline}", job.task, job.job)
                }
                Event::Run { cpu, job }
                | Event::Preempt { cpu, job }
                | Event::Complete { cpu, job }
                | Event::Suspend { cpu, job } => {
                    write!(out, ",\"cpu\":{cpu},\"task\":{},\"job\":{}", job.task, job.job)
                }
                Event::DeadlineMiss { job } | Event::Resume { job } => {
                    write!(out, ",\"task\":{},\"job\":{}", job.task, job.job)
                }
                Event::Migration { job, from, to } | Event::Steal { job, from, to } => {
                    write!(out, ",\"task\":{},\"job\":{},\"from\":{from},\"to\":{to}", job.task, job.job)
                }
                Event::Idle { cpu } => write!(out, ",\"cpu\":{cpu}"),
                Event::Overhead { cpu, kind, duration } => {
                    let name = serde_json::to_string(&self.term_name(kind)).unwrap_or_else(|_| "\"term\"".into());
                    write!(out, ",\"cpu\":{cpu},\"kind\":{name},\"duration\":{duration}")
                }
            };
            out.push_str("}\n");
        }
        out
    }

    /// Reads what [`Trace::to_jsonl`] writes. Unknown events and unknown or missing keys are
    /// errors naming the line.
    pub fn from_jsonl(text: &str) -> Result<Trace, ModelError> {
        let mut meta: Option<TraceMeta> = None;
        let mut records = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let ln = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let v: Value =
                serde_json::from_str(line).map_err(|e| ModelError::new(format!("invalid JSON: {e}")).at_line(ln))?;
            let Value::Object(mut obj) = v else {
                return Err(ModelError::new("expected a JSON object").at_line(ln));
            };
            let ev = obj
                .get("ev")
                .and_then(Value::as_str)
                .ok_or_else(|| ModelError::field("ev", "missing").at_line(ln))?
                .to_owned();
            if ev == "meta" {
                if meta.is_some() {
                    return Err(ModelError::new("a second meta line").at_line(ln));
                }
                let version = get_u64(&obj, "version", ln)?;
                if version != JSONL_VERSION {
                    return Err(
                        ModelError::field("version", format!("unsupported trace version {version}")).at_line(ln)
                    );
                }
                obj.remove("ev");
                obj.remove("version");
                for k in obj.keys() {
                    if !["m", "horizon", "tasks", "terms"].contains(&k.as_str()) {
                        return Err(ModelError::field(k.as_str(), "unknown key").at_line(ln));
                    }
                }
                let m: TraceMeta = serde_json::from_value(Value::Object(obj))
                    .map_err(|e| ModelError::new(format!("bad meta line: {e}")).at_line(ln))?;
                meta = Some(m);
                continue;
            }
            let Some(meta) = &meta else {
                return Err(ModelError::new("the first line must be the meta line").at_line(ln));
            };
            let t = get_u64(&obj, "t", ln)?;
            let job = |obj: &Map<String, Value>| -> Result<JobId, ModelError> {
                Ok(JobId { task: get_u32(obj, "task", ln)?, job: get_u32(obj, "job", ln)? })
            };
            let (event, keys): (Event, &[&str]) = match ev.as_str() {
                "release" => (
                    Event::Release { job: job(&obj)?, deadline: get_u64(&obj, "deadline", ln)? },
                    &["task", "job", "deadline"],
                ),
                "run" => (Event::Run { cpu: get_u32(&obj, "cpu", ln)?, job: job(&obj)? }, &["cpu", "task", "job"]),
                "preempt" => {
                    (Event::Preempt { cpu: get_u32(&obj, "cpu", ln)?, job: job(&obj)? }, &["cpu", "task", "job"])
                }
                "complete" => {
                    (Event::Complete { cpu: get_u32(&obj, "cpu", ln)?, job: job(&obj)? }, &["cpu", "task", "job"])
                }
                "deadline_miss" => (Event::DeadlineMiss { job: job(&obj)? }, &["task", "job"]),
                "suspend" => {
                    (Event::Suspend { cpu: get_u32(&obj, "cpu", ln)?, job: job(&obj)? }, &["cpu", "task", "job"])
                }
                "resume" => (Event::Resume { job: job(&obj)? }, &["task", "job"]),
                "migration" => (
                    Event::Migration {
                        job: job(&obj)?,
                        from: get_u32(&obj, "from", ln)?,
                        to: get_u32(&obj, "to", ln)?,
                    },
                    &["task", "job", "from", "to"],
                ),
                "steal" => (
                    Event::Steal { job: job(&obj)?, from: get_u32(&obj, "from", ln)?, to: get_u32(&obj, "to", ln)? },
                    &["task", "job", "from", "to"],
                ),
                "idle" => (Event::Idle { cpu: get_u32(&obj, "cpu", ln)? }, &["cpu"]),
                "overhead" => {
                    let kind = obj
                        .get("kind")
                        .and_then(Value::as_str)
                        .and_then(|k| {
                            OverheadKind::from_name(k).filter(|k| !matches!(k, OverheadKind::Term(_))).or_else(|| {
                                meta.terms.iter().position(|t| t == k).map(|i| OverheadKind::Term(i as u16))
                            })
                        })
                        .ok_or_else(|| ModelError::field("kind", "missing or unknown overhead kind").at_line(ln))?;
                    (
                        Event::Overhead {
                            cpu: get_u32(&obj, "cpu", ln)?,
                            kind,
                            duration: get_u64(&obj, "duration", ln)?,
                        },
                        &["cpu", "kind", "duration"],
                    )
                }
                other => return Err(ModelError::field("ev", format!("unknown event {other:?}")).at_line(ln)),
            };
            for k in obj.keys() {
                if k != "t" && k != "ev" && !keys.contains(&k.as_str()) {
                    return Err(ModelError::field(k.as_str(), "unknown key").at_line(ln));
                }
            }
            records.push(Record { time: t, event });
        }
        let meta = meta.ok_or_else(|| ModelError::new("empty trace: no meta line"))?;
        Ok(Trace { meta, records })
    }

    /// Per-job CSV (like LITMUS^RT's `st-job-stats`): one row per counted job.
    pub fn to_job_csv(&self) -> Result<String, ModelError> {
        Ok(job_csv(&self.metrics()?))
    }

    /// Chrome trace-event JSON, viewable in ui.perfetto.dev: process 1 has one thread per CPU
    /// with a slice per execution interval; process 2 has one thread per task with instant
    /// events for releases, deadlines and misses. Timestamps in µs with ns precision.
    pub fn to_perfetto_json(&self) -> String {
        let mut ev: Vec<String> = Vec::with_capacity(self.records.len() + 8);
        ev.push(r#"{"name":"process_name","ph":"M","pid":1,"args":{"name":"CPUs"}}"#.into());
        ev.push(r#"{"name":"process_name","ph":"M","pid":2,"args":{"name":"Tasks"}}"#.into());
        for c in 0..self.meta.m {
            ev.push(format!(r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{c},"args":{{"name":"CPU {c}"}}}}"#));
        }
        for (i, _) in self.meta.tasks.iter().enumerate() {
            let name = serde_json::to_string(&task_label(&self.meta, i as u32)).unwrap_or_default();
            ev.push(format!(r#"{{"name":"thread_name","ph":"M","pid":2,"tid":{i},"args":{{"name":{name}}}}}"#));
        }
        let mut since: HashMap<JobId, (u32, Time)> = HashMap::new();
        for r in &self.records {
            match r.event {
                Event::Run { cpu, job } => {
                    since.insert(job, (cpu, r.time));
                }
                Event::Preempt { cpu, job } | Event::Complete { cpu, job } | Event::Suspend { cpu, job } => {
                    if let Some((c, s)) = since.remove(&job) {
                        let ends = match r.event {
                            Event::Complete { .. } => "complete",
                            Event::Suspend { .. } => "suspend",
                            _ => "preempt",
                        };
                        ev.push(format!(
                            r#"{{"name":{},"cat":"job","ph":"X","pid":1,"tid":{c},"ts":{},"dur":{},"args":{{"task":{},"job":{},"ends":"{}"}}}}"#,
                            slice_name(&self.meta, job), us(s), us(r.time - s), job.task, job.job,
                            ends
                        ));
                        let _ = cpu;
                    }
                }
                Event::Release { job, deadline } => {
                    ev.push(format!(r#"{{"name":"release {}","ph":"i","s":"t","pid":2,"tid":{},"ts":{},"args":{{"deadline_us":{}}}}}"#, job.job, job.task, us(r.time), us(deadline)));
                }
                Event::DeadlineMiss { job } => {
                    ev.push(format!(
                        r#"{{"name":"deadline miss {}","ph":"i","s":"t","pid":2,"tid":{},"ts":{}}}"#,
                        job.job,
                        job.task,
                        us(r.time)
                    ));
                }
                Event::Migration { job, from, to } => {
                    ev.push(format!(
                        r#"{{"name":"migration {} {from}->{to}","ph":"i","s":"t","pid":2,"tid":{},"ts":{}}}"#,
                        job.job,
                        job.task,
                        us(r.time)
                    ));
                }
                Event::Steal { job, from, to } => {
                    ev.push(format!(
                        r#"{{"name":"steal {} {from}->{to}","ph":"i","s":"t","pid":2,"tid":{},"ts":{}}}"#,
                        job.job,
                        job.task,
                        us(r.time)
                    ));
                }
                Event::Overhead { cpu, kind, duration } => {
                    ev.push(format!(
                        r#"{{"name":{},"cat":"overhead","ph":"X","pid":1,"tid":{cpu},"ts":{},"dur":{}}}"#,
                        serde_json::to_string(&self.term_name(kind)).unwrap_or_default(),
                        us(r.time),
                        us(duration)
                    ));
                }
                Event::Resume { job } => {
                    ev.push(format!(
                        r#"{{"name":"resume {}","ph":"i","s":"t","pid":2,"tid":{},"ts":{}}}"#,
                        job.job,
                        job.task,
                        us(r.time)
                    ));
                }
                Event::Idle { .. } => {}
            }
        }
        // Still running at the end of the trace: close at the horizon.
        let mut open: Vec<_> = since.into_iter().collect();
        open.sort();
        for (job, (c, s)) in open {
            let end = self.meta.horizon.max(s);
            ev.push(format!(
                r#"{{"name":{},"cat":"job","ph":"X","pid":1,"tid":{c},"ts":{},"dur":{},"args":{{"task":{},"job":{},"ends":"horizon"}}}}"#,
                slice_name(&self.meta, job), us(s), us(end - s), job.task, job.job
            ));
        }
        let mut out = String::from("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        out.push_str(&ev.join(",\n"));
        out.push_str("\n]}\n");
        out
    }

    /// LITMUS^RT `sched_trace` records (`include/litmus/sched_trace.h`), little-endian, 24
    /// bytes each: header `u8 type, u8 cpu, u16 pid, u32 job` + 16-byte payload. pid = task
    /// index + 1, job = sequence number + 1. One `ST_PARAM` per task, one `ST_SYS_RELEASE`,
    /// then `ST_RELEASE`, `ST_SWITCH_TO`, `ST_SWITCH_AWAY`, `ST_COMPLETION` (+`ST_SWITCH_AWAY`)
    /// in time order. Idle, migration, miss and overhead records have no counterpart and are
    /// left out (the viewer infers them). Errors if m > 256, more than 65,535 tasks, or a
    /// task parameter exceeds the format's u32 fields.
    pub fn to_sched_trace_bytes(&self) -> Result<Vec<u8>, ModelError> {
        const ST_PARAM: u8 = 2;
        const ST_RELEASE: u8 = 3;
        const ST_SWITCH_TO: u8 = 5;
        const ST_SWITCH_AWAY: u8 = 6;
        const ST_COMPLETION: u8 = 7;
        const ST_BLOCK: u8 = 8;
        const ST_RESUME: u8 = 9;
        const ST_SYS_RELEASE: u8 = 11;
        if self.meta.m > 256 {
            return Err(ModelError::field("m", "sched_trace stores the cpu in 8 bits: at most 256 CPUs"));
        }
        if self.meta.tasks.len() > u16::MAX as usize {
            return Err(ModelError::new("sched_trace stores the pid in 16 bits: at most 65,535 tasks"));
        }
        let mut out = Vec::with_capacity(24 * (self.records.len() + self.meta.tasks.len() + 1));
        let mut rec = |ty: u8, cpu: u32, task: u32, job: u32, a: u64, b: u64| {
            out.push(ty);
            out.push(cpu as u8);
            out.extend_from_slice(&(task.wrapping_add(1) as u16).to_le_bytes());
            out.extend_from_slice(&job.to_le_bytes());
            out.extend_from_slice(&a.to_le_bytes());
            out.extend_from_slice(&b.to_le_bytes());
        };
        for (i, t) in self.meta.tasks.iter().enumerate() {
            let w = u32::try_from(t.wcet)
                .map_err(|_| ModelError::task_field(i, "wcet", "exceeds sched_trace's u32 field (4.29 s)"))?;
            let p = u32::try_from(t.period)
                .map_err(|_| ModelError::task_field(i, "period", "exceeds sched_trace's u32 field (4.29 s)"))?;
            // st_param_data: u32 wcet, u32 period, u32 phase, u8 partition, u8 class, u8[2].
            rec(ST_PARAM, 0, i as u32, 0, w as u64 | (p as u64) << 32, 0);
        }
        let first_release =
            self.records.iter().find_map(|r| matches!(r.event, Event::Release { .. }).then_some(r.time)).unwrap_or(0);
        rec(ST_SYS_RELEASE, 0, u32::MAX, 0, 0, first_release); // pid 0
        let mut exec: HashMap<JobId, (Time, Time)> = HashMap::new(); // executed, running since
        for r in &self.records {
            match r.event {
                Event::Release { job, deadline } => {
                    rec(ST_RELEASE, 0, job.task, job.job.wrapping_add(1), r.time, deadline)
                }
                Event::Run { cpu, job } => {
                    let e = exec.entry(job).or_insert((0, 0));
                    e.1 = r.time;
                    // st_switch_to_data: u64 when, u32 exec_time, u8[4].
                    rec(ST_SWITCH_TO, cpu, job.task, job.job.wrapping_add(1), r.time, e.0.min(u32::MAX as u64));
                }
                Event::Preempt { cpu, job } => {
                    let e = exec.entry(job).or_insert((0, r.time));
                    e.0 += r.time - e.1;
                    rec(ST_SWITCH_AWAY, cpu, job.task, job.job.wrapping_add(1), r.time, e.0);
                }
                Event::Suspend { cpu, job } => {
                    let e = exec.entry(job).or_insert((0, r.time));
                    e.0 += r.time - e.1;
                    rec(ST_SWITCH_AWAY, cpu, job.task, job.job.wrapping_add(1), r.time, e.0);
                    // st_block_data: u64 when.
                    rec(ST_BLOCK, cpu, job.task, job.job.wrapping_add(1), r.time, 0);
                }
                Event::Resume { job } => {
                    // st_resume_data: u64 when.
                    rec(ST_RESUME, 0, job.task, job.job.wrapping_add(1), r.time, 0);
                }
                Event::Complete { cpu, job } => {
                    let e = exec.remove(&job).unwrap_or((0, r.time));
                    let done = e.0 + (r.time - e.1);
                    // st_completion_data: u64 when, u64 { forced:1, exec_time:63 }.
                    rec(ST_COMPLETION, cpu, job.task, job.job.wrapping_add(1), r.time, done << 1);
                    rec(ST_SWITCH_AWAY, cpu, job.task, job.job.wrapping_add(1), r.time, done);
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

/// The per-job CSV of [`Trace::to_job_csv`], from metrics already computed. Empty cells mean
/// "not applicable" (no start, not finished, tardiness unknown).
pub fn job_csv(m: &Metrics) -> String {
    job_rows_csv(&m.per_job, m.horizon)
}

/// The per-job CSV from per-job statistics taken at `horizon`.
pub fn job_rows_csv(jobs: &[crate::JobStats], horizon: Time) -> String {
    let mut s = String::from("task,job,release,deadline,start,finish,response_time,lateness,tardiness,missed,executed,preemptions,migrations,first_cpu,last_cpu\n");
    let o = |v: Option<u64>| v.map_or(String::new(), |x| x.to_string());
    for j in jobs {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            j.task,
            j.job,
            j.release,
            j.deadline,
            o(j.start),
            o(j.finish),
            o(j.response_time()),
            j.lateness().map_or(String::new(), |x| x.to_string()),
            o(j.tardiness(horizon)),
            j.missed(horizon) as u8,
            j.executed,
            j.preemptions,
            j.migrations,
            o(j.first_cpu.map(u64::from)),
            o(j.last_cpu.map(u64::from)),
        );
    }
    s
}

mod gantt;

#[cfg(test)]
mod tests;
