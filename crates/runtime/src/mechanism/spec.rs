//! A mechanism chosen for a run: its registry entry, its placement (if it needs one) and its
//! validated parameters — what `rtsched run --scheduler NAME [--placement P] [--param K=V]`
//! selects.

use super::registry::{self, DedicatedCpu, Entry, Params, PlacementKind};
use crate::config::RunConfig;
use crate::{platform, RunError};
use rtsched_model::TaskSet;
use rtsched_policy::{Invariant, PriorityRule};

/// A registered mechanism with its placement and parameters.
#[derive(Debug, Clone)]
pub struct Mechanism {
    entry: &'static Entry,
    partition: Option<Vec<Vec<usize>>>,
    /// A reservation placement ([`PlacementKind::Reservations`] mechanisms).
    reservations: Option<rtsched_model::Placement>,
    params: Params,
}

impl PartialEq for Mechanism {
    fn eq(&self, o: &Mechanism) -> bool {
        self.entry.name == o.entry.name
            && self.partition == o.partition
            && self.reservations == o.reservations
            && self.params == o.params
    }
}

impl Mechanism {
    /// The mechanism registered as `name`, with its default parameters and no placement.
    pub fn named(name: &str) -> Result<Mechanism, RunError> {
        Ok(Mechanism::from_entry(registry::find(name)?))
    }

    /// A mechanism from an entry (registered or not: a test or a user can run its own).
    pub fn from_entry(entry: &'static Entry) -> Mechanism {
        let params = entry.resolve([]).unwrap_or_default();
        Mechanism { entry, partition: None, reservations: None, params }
    }

    /// The mechanism registered as `name` with `partition` (required by the partitioned
    /// mechanisms, refused by the others).
    pub fn parse(name: &str, partition: Option<Vec<Vec<usize>>>) -> Result<Mechanism, RunError> {
        let m = Mechanism::named(name)?;
        match (m.entry.placement, partition) {
            (PlacementKind::Partition | PlacementKind::Reservations, Some(p)) => Ok(m.with_partition(p)),
            (PlacementKind::Partition, None) => {
                Err(RunError::Config(format!("{name} needs a partition (task indices per CPU)")))
            }
            // The reservation placement is set with `with_reservations`.
            (PlacementKind::Reservations, None) => Ok(m),
            (PlacementKind::None, Some(_)) => Err(RunError::Config(format!("{name} is global and takes no partition"))),
            (PlacementKind::None, None) => Ok(m),
        }
    }

    /// Sets the placement: `partition[c]` = task indices of the `c`-th CPU of the list.
    pub fn with_partition(mut self, partition: Vec<Vec<usize>>) -> Mechanism {
        self.partition = Some(partition);
        self
    }

    /// Sets the reservation placement (`rtsched partition --json`, read with
    /// `rtsched_model::Placement::from_json`), for [`PlacementKind::Reservations`] mechanisms;
    /// checked against the task set when run.
    pub fn with_reservations(mut self, placement: rtsched_model::Placement) -> Mechanism {
        self.reservations = Some(placement);
        self.partition = None;
        self
    }

    /// Sets parameter `key` from its text (validated against the entry's declaration).
    pub fn with_param(self, key: &str, value: &str) -> Result<Mechanism, RunError> {
        self.with_params([(key, value)])
    }

    /// Sets several parameters; the others keep their values.
    pub fn with_params<'a>(
        mut self,
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Mechanism, RunError> {
        let given: Vec<(&str, &str)> = given.into_iter().collect();
        let fresh = self.entry.resolve(given.iter().copied())?;
        for (k, _) in &given {
            if let Some(spec) = self.entry.param(k) {
                let v = fresh.0.get(spec.name).cloned();
                if let Some(v) = v {
                    self.params.0.insert(spec.name, v);
                }
            }
        }
        Ok(self)
    }

    pub fn name(&self) -> &'static str {
        self.entry.name
    }
    pub fn entry(&self) -> &'static Entry {
        self.entry
    }
    pub fn partition(&self) -> Option<&[Vec<usize>]> {
        self.partition.as_deref()
    }
    pub fn reservations(&self) -> Option<&rtsched_model::Placement> {
        self.reservations.as_ref()
    }
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The priority rule of the jobs of `ts`.
    pub fn rule(&self, ts: &TaskSet) -> Result<PriorityRule, RunError> {
        (self.entry.priority)(ts, &self.params).map_err(|e| RunError::Param(e.in_scheduler(self.name())))
    }

    /// The invariant the mechanism promises on `m` CPUs (`None`: unobservable).
    pub fn invariant(&self, ts: &TaskSet, m: usize) -> Result<Option<Invariant>, RunError> {
        self.entry.invariant_for(ts, m, self.partition(), &self.params)
    }

    /// Checks `cfg` and `ts` for this mechanism: the common checks, the placement, the
    /// dedicated CPU, user jobs, the priority rule, the CPUs.
    pub(crate) fn validate(&self, ts: &TaskSet, cfg: &RunConfig) -> Result<(), RunError> {
        let name = self.name();
        cfg.validate_common(ts)?;
        if !self.entry.user_jobs && !cfg.user_jobs.is_empty() {
            return Err(RunError::Config(format!(
                "{name} runs the synthetic body only; user jobs need one of our mechanisms"
            )));
        }
        match (self.entry.dedicated, cfg.dedicated_cpu) {
            (DedicatedCpu::Required, None) => {
                return Err(RunError::Config(format!("{name} needs a dedicated_cpu for {}", self.entry.dedicated_role)))
            }
            (DedicatedCpu::None, Some(_)) => {
                let users: Vec<&str> =
                    registry::entries().iter().filter(|e| e.dedicated != DedicatedCpu::None).map(|e| e.name).collect();
                let verb = if users.len() == 1 { "does" } else { "do" };
                return Err(RunError::Config(format!(
                    "{name} does not use a dedicated CPU (only {} {verb})",
                    users.join(", ")
                )));
            }
            _ => {}
        }
        match (self.entry.placement, &self.partition) {
            (PlacementKind::Partition, Some(p)) => validate_partition(p, ts.len(), cfg.cpus.len())?,
            (PlacementKind::Partition, None) => {
                return Err(RunError::Config(format!("{name} needs a partition (task indices per CPU)")))
            }
            (PlacementKind::Reservations, Some(p)) => validate_partition(p, ts.len(), cfg.cpus.len())?,
            (PlacementKind::Reservations, None) => {
                let p = self.reservations.as_ref().ok_or_else(|| {
                    RunError::Config(format!("{name} needs a reservation placement (rtsched partition --json)"))
                })?;
                p.check_runnable(ts).map_err(|e| RunError::Config(format!("placement: {e}")))?;
                if p.m as usize != cfg.cpus.len() {
                    return Err(RunError::Config(format!(
                        "the placement is for m = {} but the CPU list has {}",
                        p.m,
                        cfg.cpus.len()
                    )));
                }
            }
            (PlacementKind::None, Some(_)) => {
                return Err(RunError::Config(format!("{name} is global and takes no partition")))
            }
            (PlacementKind::None, None) => {}
        }
        if self.entry.placement != PlacementKind::Reservations && self.reservations.is_some() {
            return Err(RunError::Config(format!("{name} takes no reservation placement")));
        }
        self.rule(ts)?;
        platform::validate_cpus(&cfg.cpus, cfg.dedicated_cpu, cfg.force)
    }
}

/// Each task on exactly one of `m` CPUs.
pub fn validate_partition(partition: &[Vec<usize>], n: usize, m: usize) -> Result<(), RunError> {
    if partition.len() != m {
        return Err(RunError::Config(format!("the partition has {} CPUs but the CPU list has {m}", partition.len())));
    }
    let mut seen = vec![None; n];
    for (c, tasks) in partition.iter().enumerate() {
        for &t in tasks {
            if t >= n {
                return Err(RunError::Config(format!("partition CPU {c} names task {t}, but there are {n} tasks")));
            }
            if let Some(c0) = seen[t] {
                return Err(RunError::Config(format!("task {t} is assigned to CPUs {c0} and {c}")));
            }
            seen[t] = Some(c);
        }
    }
    if let Some(t) = seen.iter().position(|s| s.is_none()) {
        return Err(RunError::Config(format!("task {t} is assigned to no CPU")));
    }
    Ok(())
}
