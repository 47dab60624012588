//! Placement by method name: what `rtsched partition --heuristic NAME` answers (docs/cli.md,
//! "Method names"), as the model's [`Placement`].
//!
//! A name resolves through [`crate::methods`] to plain partitioning (whole tasks, decreasing
//! utilization, exact admission: [`crate::partition::partition`]), an SP-RES cascade or one
//! SP-RES heuristic ([`crate::semi`], Brandenburg & Gül, RTSS 2016). [`Placed::to_json`] writes
//! the command's JSON (docs/spres.md, "Format").

use crate::methods::{self, Cascade, Method};
use crate::overheads::{self as oh, Params, Rule};
use crate::partition::{partition, Order, PartitionOutcome};
use crate::semi::{self, CpuPlacement, Placement, Reservation, SemiConfig, TaskPlacement};
use crate::Limits;
use rtsched_model::overheads::{OverheadSpec, OverheadStat, Overheads};
use rtsched_model::time::format_time_exact;
use rtsched_model::{check_m, ModelError, TaskSet, Time};
use serde_json::{Map, Value};

/// The answer of [`place`].
#[derive(Debug, Clone, PartialEq)]
pub enum Placed {
    /// A placement: every task placed (`schedulable`), or SP-RES's failure with its reason.
    Done(Placement),
    /// A plain partition stopped at `task`, which fits on no processor: `partial` lists the
    /// processors with the tasks placed before it (`schedulable` false, `tasks` empty, `reason`
    /// naming the task).
    Stuck { task: usize, partial: Placement },
}

impl Placed {
    /// The placement (complete or partial).
    pub fn placement(&self) -> &Placement {
        match self {
            Placed::Done(p) | Placed::Stuck { partial: p, .. } => p,
        }
    }

    /// The JSON of `rtsched partition --json`: the placement's ([`Placement::to_json`]); a
    /// stuck plain partition has no `tasks` list (it placed no task set).
    pub fn to_json(&self) -> Value {
        let mut v = self.placement().to_json();
        if let (Placed::Stuck { .. }, Value::Object(o)) = (self, &mut v) {
            o.shift_remove("tasks");
        }
        v
    }
}

/// The SP-RES configuration from its names: `variant` (`"text"` or `"artifact"`) picks the
/// reading of the heuristics and, unless `rp` (`"divisor"` or `"halving"`) is given, its RP
/// mode; the RP floor `rp_floor` defaults to 4 ms (the text's; the artifact's script used 2 ms)
/// and must be at least 1 ns.
pub fn semi_config(
    epsilon: Time,
    meta: bool,
    variant: &str,
    rp: Option<&str>,
    rp_floor: Option<Time>,
) -> Result<SemiConfig, ModelError> {
    let variant = semi::Variant::parse(variant)?;
    let rp = match rp {
        Some(r) => semi::RpMode::parse(r)?,
        None => SemiConfig::for_variant(variant).rp,
    };
    let rp_floor = rp_floor.unwrap_or(SemiConfig::default().rp_floor);
    if rp_floor == 0 {
        return Err(ModelError::field("rp_floor", "the RP floor must be at least 1 ns"));
    }
    Ok(SemiConfig { epsilon, meta, variant, rp, rp_floor, ..SemiConfig::default() })
}

/// The heuristics of the SP-RES cascade's groups up to and including `last`, in the order of
/// `variant`'s reading: the cumulative cascades `spres-partition` (up to
/// [`semi::Group::Partitioning`]), `spres-nometa` (`Semi`), `spres-paf` (`Paf`) and `spres`
/// (`Rp`).
pub fn cascade_upto(variant: semi::Variant, last: semi::Group) -> Vec<semi::Heuristic> {
    let mut order = Vec::new();
    for (g, hs) in semi::cascade_groups(variant) {
        order.extend(hs);
        if g == last {
            break;
        }
    }
    order
}

/// Places `ts` on `m` processors by the placement method `method` (any spelling of
/// [`methods::resolve`], tests excluded). `admission` must be `"edf"` for SP-RES (its
/// reservations are EDF-scheduled); a plain method carries its own admission. `cfg` is the
/// SP-RES configuration (its `limits` are SP-RES's), `lim` the plain partitioner's limits.
pub fn place(
    ts: &TaskSet,
    m: u32,
    method: &str,
    admission: &str,
    cfg: &SemiConfig,
    lim: &Limits,
) -> Result<Placed, ModelError> {
    check_m(m as u64)?;
    // Self-suspending tasks are placed suspension-obliviously (crate::suspension).
    let ts = &*crate::suspension::oblivious(ts)?;
    let (meaning, canonical) = methods::resolve(method, &[]).ok_or_else(|| {
        ModelError::field("heuristic", format!("unknown placement method {method:?}; use {}", methods::help(&[])))
    })?;
    if let Method::Plain { fit, admission } = meaning {
        return Ok(match partition(ts, m, fit, Order::DecreasingUtilization, admission, lim) {
            PartitionOutcome::Placed(p) => Placed::Done(whole_tasks(ts, m, canonical, &p.cpus, None)),
            PartitionOutcome::Failed { task, partial } => {
                Placed::Stuck { task, partial: whole_tasks(ts, m, canonical, &partial.cpus, Some(task)) }
            }
        });
    }
    if admission != "edf" {
        return Err(ModelError::field(
            "admission",
            "SP-RES reservations are scheduled by EDF; name a plain partitioning method (pfp_ffd, ...) for FP",
        ));
    }
    let placement = match meaning {
        Method::Cascade(Cascade::Full) => semi::cascade(ts, m, cfg),
        Method::Cascade(Cascade::NoMeta) => semi::cascade(ts, m, &SemiConfig { meta: false, ..cfg.clone() }),
        Method::Cascade(Cascade::Paf) => semi::cascade_of(ts, m, &cascade_upto(cfg.variant, semi::Group::Paf), cfg),
        Method::Cascade(Cascade::Partition) => {
            semi::cascade_of(ts, m, &cascade_upto(cfg.variant, semi::Group::Partitioning), cfg)
        }
        Method::Heuristic(h) => semi::place(ts, m, &h, cfg),
        Method::Plain { .. } | Method::Test(_) => {
            return Err(ModelError::field("heuristic", format!("{method:?} is not a placement method")))
        }
    };
    Ok(Placed::Done(placement))
}

/// The configuration of the SP-RES cascade `method` names, for the placements with overheads
/// (`rtsched partition --overheads`), which one of the two cascades makes: `spres` keeps `cfg`,
/// `spres-nometa` (any spelling) turns the meta-heuristics off; any other name is an error.
pub fn overhead_cascade(method: &str, cfg: &SemiConfig) -> Result<SemiConfig, ModelError> {
    match methods::resolve(method, &[]) {
        Some((Method::Cascade(Cascade::Full), _)) => Ok(cfg.clone()),
        Some((Method::Cascade(Cascade::NoMeta), _)) => Ok(SemiConfig { meta: false, ..cfg.clone() }),
        _ => Err(ModelError::field(
            "heuristic",
            format!("with overheads the placement is the SP-RES cascade (spres or spres-nometa), not {method:?}"),
        )),
    }
}

/// The terms of `rule` absent from `spec` (a measured model; constants give every term), for
/// a note: they are charged as 0.
pub fn unmeasured(spec: &OverheadSpec, rule: Rule) -> Vec<&'static str> {
    match spec {
        OverheadSpec::Model(model) => {
            rule.terms().iter().filter(|&&t| model.term(t).is_none()).map(|t| t.name()).collect()
        }
        OverheadSpec::Constant(_) => Vec::new(),
    }
}

/// The notes every overhead-aware answer ends with (`rtsched analyze --overheads`, the placements
/// and budgets with overheads): the terms of `rule` that `spec` lacks ([`unmeasured`], charged
/// as 0), and Δcpd when `params` leaves it at 0 (none of our runtimes measures it).
pub fn charge_notes(spec: &OverheadSpec, rule: Rule, params: &Params) -> Vec<String> {
    let mut notes = Vec::new();
    let missing = unmeasured(spec, rule);
    if !missing.is_empty() {
        notes.push(format!("not in the model, charged as 0: {}", missing.join(", ")));
    }
    if params.cpd == 0 {
        notes.push("Δcpd (cache-related preemption delay) = 0: not measured; set --cpd".into());
    }
    notes
}

/// What the placements and budgets with overheads charge: the model `model_text` read, `params`
/// checked, and its values for `ts` under `mech` on `m` processors at the hard real-time
/// statistic unless `stat` names one, resolved as `analyze` resolves them ([`oh::values`]).
struct Charged {
    spec: OverheadSpec,
    stat: OverheadStat,
    values: Overheads,
}

impl Charged {
    fn resolve(
        ts: &TaskSet,
        m: u32,
        mech: &oh::Mechanism,
        model_text: &str,
        stat: Option<&str>,
        params: &Params,
        extrapolate: bool,
    ) -> Result<Charged, ModelError> {
        let spec = OverheadSpec::from_json(model_text)?;
        params.validate()?;
        let stat = stat.map(OverheadStat::parse).transpose()?;
        let (hs, _) = oh::stats(stat);
        let values = oh::values(&spec, ts, m, mech, hs, extrapolate);
        Ok(Charged { spec, stat: hs, values })
    }

    /// The keys both answers' `overheads` objects share after `model` and `mechanism` (`stat`,
    /// `extrapolated`, `cpd_ns`, `quantum_ns`, `values`), in that order.
    fn insert_keys(&self, o: &mut Map<String, Value>, mech: &oh::Mechanism, params: &Params, extrapolate: bool) {
        o.insert("stat".into(), Value::from(self.stat.name()));
        o.insert("extrapolated".into(), Value::from(extrapolate));
        o.insert("cpd_ns".into(), Value::from(params.cpd));
        o.insert("quantum_ns".into(), Value::from(params.quantum));
        o.insert("values".into(), self.values.to_json_terms(mech.rule.terms()));
    }

    /// [`charge_notes`] as a JSON list.
    fn notes(&self, mech: &oh::Mechanism, params: &Params) -> Value {
        Value::Array(charge_notes(&self.spec, mech.rule, params).into_iter().map(Value::from).collect())
    }
}

/// The SP-RES placement of `ts` with budgets inflated by the overheads of the model
/// `model_text` (`rtsched partition --overheads MODEL --mechanism spres`, docs/spres.md,
/// "Placements with overheads"): [`oh::place_spres`], the rule `analyze --overheads` judges
/// SP-RES with (the SP-RES cascade of `cfg` on the inflated set), with the values resolved as
/// `analyze` resolves them ([`oh::values`], hard real-time statistic). The placement's
/// `overheads` names the model (`label`, else the model's source), the mechanism, the
/// statistic and the values charged, with notes (terms the model lacks, an unmeasured Δcpd).
#[allow(clippy::too_many_arguments)]
pub fn place_with_overheads(
    ts: &TaskSet,
    m: u32,
    mechanism: &str,
    model_text: &str,
    label: Option<&str>,
    stat: Option<&str>,
    params: &Params,
    extrapolate: bool,
    cfg: &SemiConfig,
) -> Result<Placement, ModelError> {
    let mech = oh::mechanism(mechanism)?;
    if !matches!(mech.rule, Rule::SemiPartitioned) {
        return Err(ModelError::field(
            "mechanism",
            format!("a placement with overheads is made for spres (SP-RES budgets), not {}", mech.name),
        ));
    }
    let c = Charged::resolve(ts, m, mech, model_text, stat, params, extrapolate)?;
    let (judged, placed) = oh::place_spres(ts, m, &c.values, params, cfg)?;
    let mut out = match placed {
        Some((_, p)) => p,
        None => Placement::failed(
            m,
            "spres".into(),
            judged.reason.unwrap_or_else(|| "not schedulable after inflation".into()),
        ),
    };
    let mut o = Map::new();
    o.insert("model".into(), Value::from(label.unwrap_or(c.spec.source())));
    o.insert("mechanism".into(), Value::from(mech.name));
    c.insert_keys(&mut o, mech, params, extrapolate);
    o.insert("notes".into(), c.notes(mech, params));
    out.overheads = Some(o);
    Ok(out)
}

/// The server budgets of RUN or QPS for `ts` inflated by the overheads of the model
/// `model_text` (`rtsched run --scheduler run|qps-g|qps-c --inflate MODEL`, docs/overheads.md,
/// "RUN and QPS"): [`oh::inflate_optimal`], the rule `analyze --overheads --mechanism` judges
/// them with, the values resolved as `analyze` resolves them ([`oh::values`], hard real-time
/// statistic unless `stat`). A JSON object: `mechanism`, `model` (`label`, else the model's
/// source), `stat`, `extrapolated`, `cpd_ns`, `quantum_ns`, `values` (ns per term charged),
/// `schedulable`, `reason` (the one line when not), `budgets` (ns per task, or null),
/// `utilization` (inflated, or null) and `nominal_utilization`, `notes`.
#[allow(clippy::too_many_arguments)]
pub fn budgets_with_overheads(
    ts: &TaskSet,
    m: u32,
    mechanism: &str,
    model_text: &str,
    label: Option<&str>,
    stat: Option<&str>,
    params: &Params,
    extrapolate: bool,
) -> Result<Value, ModelError> {
    check_m(m as u64)?;
    let mech = oh::mechanism(mechanism)?;
    let c = Charged::resolve(ts, m, mech, model_text, stat, params, extrapolate)?;
    let (judged, inflated) = oh::inflate_optimal(ts, m, mech, &c.values, params)?;
    let mut o = Map::new();
    o.insert("mechanism".into(), Value::from(mech.name));
    o.insert("model".into(), Value::from(label.unwrap_or(c.spec.source())));
    c.insert_keys(&mut o, mech, params, extrapolate);
    o.insert("schedulable".into(), Value::from(judged.verdict.is_schedulable()));
    o.insert("reason".into(), judged.reason.map_or(Value::Null, Value::from));
    o.insert(
        "budgets".into(),
        inflated.as_ref().map_or(Value::Null, |s| s.iter().map(|t| Value::from(t.wcet)).collect()),
    );
    o.insert("utilization".into(), inflated.as_ref().map_or(Value::Null, |s| Value::from(s.utilization_f64())));
    o.insert("nominal_utilization".into(), Value::from(ts.utilization_f64()));
    o.insert("notes".into(), c.notes(mech, params));
    Ok(Value::Object(o))
}

/// A plain partition (`cpus[c]`: the tasks of processor `c`, in placement order) as a
/// placement of whole tasks: one reservation per task with budget C, period T, deadline
/// min(D, T) (as [`Placement::whole`] builds them), offset 0. `failed`: the task that fitted
/// nowhere (then nothing is schedulable and `tasks` is empty).
fn whole_tasks(ts: &TaskSet, m: u32, heuristic: String, cpus: &[Vec<usize>], failed: Option<usize>) -> Placement {
    let cpus = cpus
        .iter()
        .enumerate()
        .map(|(c, tasks)| {
            let cpu = c as u32;
            let reservations = tasks
                .iter()
                .map(|&i| {
                    let t = &ts[i];
                    Reservation {
                        cpu,
                        task: i,
                        budget: t.wcet,
                        period: t.period,
                        deadline: t.deadline.min(t.period),
                        offset: 0,
                        part: 1,
                        parts: 1,
                    }
                })
                .collect();
            CpuPlacement { cpu, reservations }
        })
        .collect();
    let (tasks, reason) = match failed {
        None => ((0..ts.len()).map(|task| TaskPlacement { task, period_ratio: 1, parts: 1 }).collect(), None),
        Some(i) => {
            let t = &ts[i];
            let why = format!(
                "task {i} (wcet {}, deadline {}, period {}) fits on none of the {m} processors",
                format_time_exact(t.wcet),
                format_time_exact(t.deadline),
                format_time_exact(t.period)
            );
            (Vec::new(), Some(why))
        }
    };
    Placement { m, schedulable: failed.is_none(), heuristic, cpus, tasks, reason, overheads: None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::{verify, Admission, Fit};
    use rtsched_model::Task;

    fn set(tasks: &[(Time, Time)]) -> TaskSet {
        TaskSet::new(tasks.iter().map(|&(c, t)| Task::implicit(c, t).unwrap()).collect()).unwrap()
    }

    #[test]
    fn a_plain_method_places_what_the_partitioner_places_in_its_order() {
        // Four tasks of utilization 0.6, 0.5, 0.4, 0.3 on two processors, first fit: 0.6 + 0.4
        // on CPU 0, 0.5 + 0.3 on CPU 1; tasks listed in placement order, not by index.
        let ts = set(&[(3, 10), (6, 10), (4, 10), (5, 10)]);
        let lim = Limits::default();
        let placed = place(&ts, 2, "PEDF-FFD", "edf", &SemiConfig::default(), &lim).unwrap();
        let PartitionOutcome::Placed(want) =
            partition(&ts, 2, Fit::First, Order::DecreasingUtilization, Admission::Edf, &lim)
        else {
            panic!("the partitioner places the set")
        };
        let p = placed.placement();
        assert!(p.schedulable);
        assert_eq!(p.heuristic, "pedf_ffd");
        let got: Vec<Vec<usize>> = p.cpus.iter().map(|c| c.reservations.iter().map(|r| r.task).collect()).collect();
        assert_eq!(got, want.cpus);
        assert_eq!(got, vec![vec![1, 2], vec![3, 0]]);
        assert!(verify(&ts, &want, Admission::Edf, &lim).is_ok());
        p.validate(&ts).unwrap();
        let j = placed.to_json();
        assert_eq!(j["tasks"].as_array().map(Vec::len), Some(4));
        assert_eq!(j["cpus"][0]["reservations"][0]["budget"], 6);
    }

    #[test]
    fn a_stuck_plain_partition_keeps_its_processors_and_writes_no_tasks() {
        let ts = set(&[(6, 10), (6, 10), (6, 10)]);
        let placed = place(&ts, 2, "pfp_wfd", "edf", &SemiConfig::default(), &Limits::default()).unwrap();
        let Placed::Stuck { task, partial } = &placed else { panic!("three tasks of 0.6 do not fit on two") };
        assert_eq!(*task, 2);
        assert!(!partial.schedulable);
        assert_eq!(partial.cpus.len(), 2);
        assert_eq!(
            partial.reason.as_deref(),
            Some("task 2 (wcet 6 ns, deadline 10 ns, period 10 ns) fits on none of the 2 processors")
        );
        let j = placed.to_json();
        let keys: Vec<&String> = j.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["m", "schedulable", "heuristic", "cpus", "reason"]);
    }

    #[test]
    fn an_sp_res_method_is_the_semi_placement_and_needs_edf() {
        let ts = set(&[(6, 10), (6, 10), (6, 10)]);
        let cfg = SemiConfig::default();
        let lim = Limits::default();
        let placed = place(&ts, 2, "SPRES", "edf", &cfg, &lim).unwrap();
        assert_eq!(placed, Placed::Done(semi::cascade(&ts, 2, &cfg)));
        assert!(placed.placement().schedulable, "SP-RES splits the third task");
        let nometa = place(&ts, 2, "spres-nometa", "edf", &cfg, &lim).unwrap();
        assert_eq!(nometa, Placed::Done(semi::cascade(&ts, 2, &SemiConfig { meta: false, ..cfg.clone() })));
        let e = place(&ts, 2, "spres", "fp", &cfg, &lim).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("admission"));
        let e = place(&ts, 2, "gfb", "edf", &cfg, &lim).unwrap_err();
        assert!(e.to_string().starts_with("field 'heuristic': unknown placement method \"gfb\""), "{e}");
        assert!(place(&ts, 0, "spres", "edf", &cfg, &lim).unwrap_err().to_string().starts_with("field 'm'"));
    }

    #[test]
    fn the_cumulative_cascades_grow_group_by_group() {
        for v in [semi::Variant::Text, semi::Variant::Artifact] {
            let groups = semi::cascade_groups(v);
            let part = cascade_upto(v, semi::Group::Partitioning);
            assert_eq!(part, groups[0].1);
            let all = cascade_upto(v, semi::Group::Rp);
            assert_eq!(all.len(), groups.iter().map(|(_, h)| h.len()).sum::<usize>());
            assert!(cascade_upto(v, semi::Group::Paf).len() < all.len());
        }
    }

    #[test]
    fn semi_config_reads_the_names_and_refuses_a_zero_floor() {
        let c = semi_config(5, false, "text", None, None).unwrap();
        assert_eq!((c.epsilon, c.meta, c.variant, c.rp), (5, false, semi::Variant::Text, semi::RpMode::Halving));
        assert_eq!(c.rp_floor, SemiConfig::default().rp_floor);
        let c = semi_config(0, true, "artifact", Some("halving"), Some(7)).unwrap();
        assert_eq!((c.rp, c.rp_floor), (semi::RpMode::Halving, 7));
        assert_eq!(semi_config(0, true, "artifact", None, Some(0)).unwrap_err().field.as_deref(), Some("rp_floor"));
        assert_eq!(semi_config(0, true, "zz", None, None).unwrap_err().field.as_deref(), Some("variant"));
        let off = SemiConfig { meta: false, ..SemiConfig::default() };
        assert_eq!(overhead_cascade("SPRES", &off), Ok(off.clone()), "spres keeps the caller's meta");
        assert!(overhead_cascade("spres", &SemiConfig::default()).unwrap().meta);
        assert!(!overhead_cascade("spres_nometa", &SemiConfig::default()).unwrap().meta);
        assert_eq!(overhead_cascade("pedf_ffd", &off).unwrap_err().field.as_deref(), Some("heuristic"));
    }

    #[test]
    fn a_placement_with_overheads_is_the_cascade_on_the_inflated_set_and_says_so() {
        let ts = set(&[(3, 10), (3, 10), (3, 10)]);
        let cfg = SemiConfig::default();
        let params = Params { cpd: 0, quantum: 1_000_000 };
        // Zero overheads: the cascade's own placement, with the overheads object appended.
        let zero = r#"{"release_ns": 0, "schedule_ns": 0, "context_switch_ns": 0}"#;
        let p = place_with_overheads(&ts, 2, "spres", zero, Some("zero.json"), None, &params, false, &cfg).unwrap();
        let plain = semi::cascade(&ts, 2, &cfg);
        assert!(p.schedulable);
        assert_eq!((&p.cpus, &p.tasks), (&plain.cpus, &plain.tasks));
        let o = p.overheads.as_ref().unwrap();
        assert_eq!(p.overheads_model(), Some("zero.json"));
        assert_eq!(o["stat"], "max");
        assert_eq!(o["notes"][0], "Δcpd (cache-related preemption delay) = 0: not measured; set --cpd");
        let keys: Vec<String> = p.to_json().as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["m", "schedulable", "heuristic", "cpus", "tasks", "overheads"]);
        // Large overheads: nothing fits; the failure keeps the overheads object after the reason.
        let big = r#"{"release_ns": 4000000, "schedule_ns": 0, "context_switch_ns": 0}"#;
        let f = place_with_overheads(&ts, 2, "spres", big, None, Some("avg"), &params, false, &cfg).unwrap();
        assert!(!f.schedulable && f.cpus.is_empty() && f.reason.is_some());
        assert_eq!(f.overheads.as_ref().unwrap()["stat"], "avg");
        let keys: Vec<String> = f.to_json().as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["m", "schedulable", "heuristic", "cpus", "tasks", "reason", "overheads"]);
        let e = place_with_overheads(&ts, 2, "gsn-edf", zero, None, None, &params, false, &cfg).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("mechanism"));
    }
}
