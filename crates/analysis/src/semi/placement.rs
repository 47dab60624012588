//! The placement a successful heuristic state describes: its reservations per processor, in
//! the layout the configuration asks for. The placement type itself (its JSON form, its
//! validation) is the model's, `rtsched_model::placement`.

use super::engine::State;
use super::{SemiConfig, SliceOrder};
use rtsched_model::placement::{CpuPlacement, Placement, Reservation, TaskPlacement};
use rtsched_model::Time;

/// Builds the reservations from a successful heuristic state. With
/// `cfg.merge_same_core`, the pieces of a task on one processor first become one piece
/// (budgets and deadlines added). The windows are then laid out back to back from offset
/// 0 in `cfg.slice_order`: the flipped C=D order of §IV-A (the piece placed whole, the one
/// with laxity, first; then the zero-laxity chunks in reverse order of their creation), or
/// by deadline, longest first (ties: processor index, then creation order).
pub(crate) fn from_state(m: u32, heuristic: String, st: &State, cfg: &SemiConfig) -> Placement {
    let mut cpus: Vec<CpuPlacement> = (0..m).map(|cpu| CpuPlacement { cpu, reservations: Vec::new() }).collect();
    let mut tasks = Vec::with_capacity(st.pieces.len());
    for (task, pieces) in st.pieces.iter().enumerate() {
        let spec = st.specs[task];
        if let [p] = pieces.as_slice() {
            // One piece: nothing to merge or order.
            let r = Reservation {
                cpu: p.cpu as u32,
                task,
                budget: p.c,
                period: spec.t,
                deadline: p.d,
                offset: 0,
                part: 1,
                parts: 1,
            };
            cpus[p.cpu].reservations.push(r);
            tasks.push(TaskPlacement { task, period_ratio: spec.k, parts: 1 });
            continue;
        }
        // (cpu, budget, deadline, creation index)
        let mut ps: Vec<(usize, Time, Time, usize)> =
            pieces.iter().enumerate().map(|(i, p)| (p.cpu, p.c, p.d, i)).collect();
        if cfg.merge_same_core && ps.len() > 1 {
            let mut merged: Vec<(usize, Time, Time, usize)> = Vec::with_capacity(ps.len());
            for p in ps {
                match merged.iter_mut().find(|q| q.0 == p.0) {
                    Some(q) => {
                        q.1 += p.1;
                        q.2 += p.2;
                        q.3 = q.3.max(p.3);
                    }
                    None => merged.push(p),
                }
            }
            ps = merged;
        }
        match cfg.slice_order {
            SliceOrder::Flipped => ps.sort_by_key(|p| std::cmp::Reverse(p.3)),
            SliceOrder::DeadlineDesc => ps.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)).then(a.3.cmp(&b.3))),
        }
        let parts = ps.len() as u32;
        let mut offset = 0;
        for (idx, &(cpu, budget, deadline, _)) in ps.iter().enumerate() {
            cpus[cpu].reservations.push(Reservation {
                cpu: cpu as u32,
                task,
                budget,
                period: spec.t,
                deadline,
                offset,
                part: idx as u32 + 1,
                parts,
            });
            offset += deadline;
        }
        tasks.push(TaskPlacement { task, period_ratio: spec.k, parts });
    }
    for c in &mut cpus {
        c.reservations.sort_by_key(|r| (r.task, r.part));
    }
    Placement { m, schedulable: true, heuristic, cpus, tasks, reason: None, overheads: None }
}
