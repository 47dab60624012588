//! The SVG Gantt chart of a [`Trace`] ([`Trace::to_gantt_svg`]).

use super::task_label;
use crate::record::{Event, JobId, Trace};
use rtsched_model::Time;
use std::collections::HashMap;
use std::fmt::Write;

impl Trace {
    /// An SVG Gantt chart of `[from, to)` (the whole horizon by default): one row per CPU
    /// with execution intervals coloured by task and labelled `task.job`; below, one row per
    /// task with release (up arrow) and deadline (down arrow) marks, misses in red.
    pub fn to_gantt_svg(&self, window: Option<(Time, Time)>) -> String {
        let (from, to) = window.unwrap_or((0, self.meta.horizon.max(1)));
        let to = to.max(from + 1);
        let (left, width, row, gap) = (70.0f64, 1000.0f64, 28.0f64, 6.0f64);
        let m = self.meta.m as usize;
        let n = self.meta.tasks.len();
        let task_row = 18.0f64;
        let top = 10.0;
        let cpu_h = m as f64 * (row + gap);
        let height = top + cpu_h + 10.0 + n as f64 * task_row + 40.0;
        let x = |t: Time| left + (t.clamp(from, to) - from) as f64 / (to - from) as f64 * width;
        let colour = |task: u32| format!("hsl({:.0},65%,60%)", (task as f64 * 137.508) % 360.0);
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{:.0}" height="{height:.0}" font-family="sans-serif" font-size="10">"#,
            left + width + 20.0
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        for c in 0..m {
            let y = top + c as f64 * (row + gap);
            let _ = writeln!(
                s,
                r##"<text x="4" y="{:.1}">CPU {c}</text><rect x="{left}" y="{y:.1}" width="{width}" height="{row}" fill="#f4f4f4" stroke="#ccc"/>"##,
                y + row * 0.65
            );
        }
        let ty0 = top + cpu_h + 10.0;
        for i in 0..n {
            let y = ty0 + i as f64 * task_row;
            let _ = writeln!(
                s,
                r##"<text x="4" y="{:.1}">{}</text><line x1="{left}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#ddd"/>"##,
                y + 12.0,
                xml(&task_label(&self.meta, i as u32)),
                left + width,
                y + task_row,
                y + task_row
            );
        }
        let mut since: HashMap<JobId, (u32, Time)> = HashMap::new();
        let bar = |s: &mut String, c: u32, job: JobId, a: Time, b: Time| {
            if b <= from || a >= to {
                return;
            }
            let (xa, xb) = (x(a), x(b));
            let y = top + c as f64 * (row + gap);
            let _ = write!(
                s,
                r##"<rect x="{xa:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}" stroke="#333" stroke-width="0.5"><title>{}.{} [{a}, {b})</title></rect>"##,
                y + 2.0,
                (xb - xa).max(0.5),
                row - 4.0,
                colour(job.task),
                xml(&task_label(&self.meta, job.task)),
                job.job
            );
            if xb - xa > 28.0 {
                let _ = write!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}">{}.{}</text>"#,
                    xa + 2.0,
                    y + row * 0.65,
                    xml(&task_label(&self.meta, job.task)),
                    job.job
                );
            }
            s.push('\n');
        };
        for r in &self.records {
            let t = r.time;
            match r.event {
                Event::Run { cpu, job } => {
                    since.insert(job, (cpu, t));
                }
                Event::Preempt { job, .. } | Event::Complete { job, .. } | Event::Suspend { job, .. } => {
                    if let Some((c, a)) = since.remove(&job) {
                        bar(&mut s, c, job, a, t);
                    }
                    if matches!(r.event, Event::Complete { .. }) && t >= from && t < to {
                        let y = ty0 + job.task as f64 * task_row;
                        let _ = writeln!(
                            s,
                            r##"<line x1="{0:.2}" x2="{0:.2}" y1="{1:.1}" y2="{2:.1}" stroke="#333"/><line x1="{3:.2}" x2="{4:.2}" y1="{1:.1}" y2="{1:.1}" stroke="#333"/>"##,
                            x(t),
                            y + 3.0,
                            y + task_row - 3.0,
                            x(t) - 3.0,
                            x(t) + 3.0
                        );
                    }
                }
                Event::Release { job, deadline } => {
                    let y = ty0 + job.task as f64 * task_row;
                    if t >= from && t < to {
                        let _ = writeln!(
                            s,
                            r##"<path d="M{0:.2} {1:.1} L{0:.2} {2:.1} M{3:.2} {4:.1} L{0:.2} {2:.1} L{5:.2} {4:.1}" stroke="{6}" fill="none" stroke-width="1.5"><title>release {7}.{8} at {t}</title></path>"##,
                            x(t),
                            y + task_row - 1.0,
                            y + 2.0,
                            x(t) - 3.0,
                            y + 6.0,
                            x(t) + 3.0,
                            colour(job.task),
                            xml(&task_label(&self.meta, job.task)),
                            job.job
                        );
                    }
                    if deadline >= from && deadline < to {
                        let _ = writeln!(
                            s,
                            r##"<path d="M{0:.2} {1:.1} L{0:.2} {2:.1} M{3:.2} {4:.1} L{0:.2} {2:.1} L{5:.2} {4:.1}" stroke="#555" fill="none"><title>deadline {6}.{7} at {deadline}</title></path>"##,
                            x(deadline),
                            y + 2.0,
                            y + task_row - 1.0,
                            x(deadline) - 3.0,
                            y + task_row - 5.0,
                            x(deadline) + 3.0,
                            xml(&task_label(&self.meta, job.task)),
                            job.job
                        );
                    }
                }
                // A miss at the horizon itself counts (deadline ≤ horizon): drawn at the edge.
                Event::DeadlineMiss { job } if t >= from && t <= to => {
                    let y = ty0 + job.task as f64 * task_row;
                    let _ = writeln!(
                        s,
                        r##"<g stroke="red" stroke-width="2"><line x1="{:.2}" x2="{:.2}" y1="{:.1}" y2="{:.1}"/><line x1="{:.2}" x2="{:.2}" y1="{:.1}" y2="{:.1}"/><title>deadline miss {}.{}</title></g>"##,
                        x(t) - 4.0,
                        x(t) + 4.0,
                        y + 3.0,
                        y + 13.0,
                        x(t) + 4.0,
                        x(t) - 4.0,
                        y + 3.0,
                        y + 13.0,
                        xml(&task_label(&self.meta, job.task)),
                        job.job
                    );
                }
                _ => {}
            }
        }
        let mut open: Vec<_> = since.into_iter().collect();
        open.sort();
        for (job, (c, a)) in open {
            bar(&mut s, c, job, a, to.max(a));
        }
        // Time axis with ten ticks.
        let ay = ty0 + n as f64 * task_row + 14.0;
        let _ =
            writeln!(s, r##"<line x1="{left}" x2="{:.1}" y1="{ay:.1}" y2="{ay:.1}" stroke="#333"/>"##, left + width);
        for k in 0..=10u64 {
            let t = from + ((to - from) as u128 * k as u128 / 10) as Time;
            let _ = writeln!(
                s,
                r##"<line x1="{0:.1}" x2="{0:.1}" y1="{ay:.1}" y2="{1:.1}" stroke="#333"/><text x="{0:.1}" y="{2:.1}" text-anchor="middle">{3}</text>"##,
                x(t),
                ay + 4.0,
                ay + 15.0,
                rtsched_model::time::format_duration(t)
            );
        }
        s.push_str("</svg>\n");
        s
    }
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
