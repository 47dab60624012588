//! The run's placement: the given one checked for the run, or the default one (the default
//! partition, the SP-RES cascade), and the placement's warnings.

use super::*;

/// A decided placement with the warning and note it comes with.
pub(super) struct PlacementChoice {
    pub(super) placement: DecidedPlacement,
    warning: Option<String>,
    /// Set when the placement was the default one: how it was made (after `{name} without --placement: `).
    note: Option<String>,
}

impl PlacementChoice {
    fn plain(placement: DecidedPlacement) -> PlacementChoice {
        PlacementChoice { placement, warning: None, note: None }
    }
    pub(super) fn inspect_warning(self, to: &mut Vec<String>) -> PlacementChoice {
        to.extend(self.warning.clone());
        self
    }
    pub(super) fn inspect_note(self, name: &str, to: &mut Vec<String>) -> PlacementChoice {
        to.extend(self.note.as_ref().map(|n| format!("{name} without --placement: {n}")));
        self
    }
}

/// The admission test of a partitioned mechanism's default partition (the schedulers'
/// own exact tests: QPA for P-EDF, deadline-monotonic response-time analysis for P-FP, as the
/// simulator's registry entries of the same names declare them; a test in request/tests.rs checks
/// that the two agree).
pub(super) fn default_admission(name: &str) -> Admission {
    match name {
        "pfp" => Admission::Fp(Priority::DeadlineMonotonic),
        _ => Admission::Edf,
    }
}

/// The placement of a run of `ts` on `m` CPUs under `entry`: the given one, checked for this
/// run, or the default one.
pub(super) fn decide_placement(
    entry: &Entry,
    ts: &TaskSet,
    m: usize,
    params: &[(String, String)],
    given: Option<&GivenPlacement>,
    stop: &Stop,
) -> Result<PlacementChoice, RunError> {
    let name = entry.name;
    match (entry.placement, given) {
        (PlacementKind::None, None) => Ok(PlacementChoice::plain(DecidedPlacement::None)),
        (PlacementKind::None, Some(_)) => Err(RunError::Placement(format!("{name} is global and takes no placement"))),
        (_, Some(GivenPlacement::Partition(p))) => {
            check_partition(p, ts.len(), m)?;
            Ok(PlacementChoice::plain(DecidedPlacement::Partition(p.clone())))
        }
        (PlacementKind::Partition, Some(GivenPlacement::Placement(p))) => {
            let part = partition_of_placement(p, ts, m, "the number of CPUs of the run (--cpus) is")?;
            Ok(PlacementChoice::plain(DecidedPlacement::Partition(part)))
        }
        (PlacementKind::Reservations, Some(GivenPlacement::Placement(p))) => Ok(PlacementChoice {
            warning: hard_without_overheads(p, params),
            placement: DecidedPlacement::Reservations(p.clone()),
            note: None,
        }),
        (PlacementKind::Partition, None) => {
            let m32 = u32::try_from(m).map_err(|_| RunError::input(format!("{m} CPUs are too many")))?;
            let lim = Limits { stop: stop.clone(), ..Limits::default() };
            match default_partition(ts, m32, default_admission(name), &lim) {
                Ok(p) => Ok(PlacementChoice {
                    note: Some(format!("{}: {:?}", p.note, p.cpus)),
                    placement: DecidedPlacement::Partition(p.cpus),
                    warning: None,
                }),
                Err(NotPlaced(why)) => Err(RunError::Placement(format!("{why}; pass --placement or more CPUs"))),
            }
        }
        (PlacementKind::Reservations, None) => {
            // As in simulate: the SP-RES cascade (Brandenburg & Gül, RTSS 2016) with the
            // default configuration of `rtsched partition --heuristic spres`.
            let m32 = rtsched_model::check_m(m as u64)?;
            let mut cfg = semi::SemiConfig::default();
            cfg.limits.stop = stop.clone();
            let p = semi::cascade(ts, m32, &cfg);
            if !p.schedulable {
                return Err(RunError::Placement(format!(
                    "the SP-RES cascade cannot place the task set on {m} CPUs: {}; pass --placement or more CPUs",
                    p.reason.as_deref().unwrap_or("no reason given")
                )));
            }
            Ok(PlacementChoice {
                placement: DecidedPlacement::Reservations(p),
                warning: None,
                note: Some("placed by the SP-RES cascade".into()),
            })
        }
    }
}

/// A partition given as task lists must have one list per CPU of the run and place every
/// task exactly once.
pub(super) fn check_partition(p: &[Vec<usize>], n: usize, m: usize) -> Result<(), RunError> {
    let mut placed: Vec<usize> = p.iter().flatten().copied().collect();
    placed.sort_unstable();
    if placed != (0..n).collect::<Vec<_>>() || p.len() != m {
        return Err(RunError::input(format!(
            "argument 'placement': {} CPU lists must place each of the {n} tasks once on the run's {m} CPUs",
            p.len()
        )));
    }
    Ok(())
}

/// The plain partition a placement is, for a run on `m` CPUs (`m_is` says where `m` comes from,
/// for the message): runnable, for `m` processors, every task one whole reservation
/// ([`Placement::plain_partition`], the rule the simulator applies too).
pub fn partition_of_placement(
    p: &Placement,
    ts: &TaskSet,
    m: usize,
    m_is: &str,
) -> Result<Vec<Vec<usize>>, ModelError> {
    p.check_runnable(ts)?;
    let m = u32::try_from(m).map_err(|_| ModelError::field("m", format!("{m} CPUs are too many")))?;
    p.plain_partition(ts, m, m_is)
}

/// The warning for an SP-RES placement with hard reservations whose budgets were not inflated
/// by overheads (no `"overheads"` object: not made by `rtsched partition --overheads`): its jobs
/// get exactly their WCET, and the overheads a job meets in its window make it miss. Unsplit
/// tasks are hard unless the parameter `soft` is true (its last value given counts); split parts
/// are always soft (`rtsched_policy::spres`, Brandenburg & Gül, RTSS 2016, §IV-A).
pub fn hard_without_overheads(p: &Placement, params: &[(String, String)]) -> Option<String> {
    if p.overheads.is_some() {
        return None;
    }
    let soft = params
        .iter()
        .rev()
        .find(|(k, _)| k == "soft")
        .is_some_and(|(_, v)| matches!(v.trim().to_lowercase().as_str(), "true" | "1" | "yes" | "on"));
    let hard = p.tasks.iter().filter(|t| t.parts == 1).count();
    if soft || hard == 0 {
        return None;
    }
    Some(format!(
        "the placement has {hard} hard reservation(s) made without overheads (budget = WCET): overheads will make \
         jobs miss; place with `rtsched partition --overheads MODEL --mechanism spres` or run with soft=true"
    ))
}
