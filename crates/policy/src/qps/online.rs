//! QPS's online phase: windows, modes, budgets and the decision (module notes of
//! [`crate::qps`]).

use super::offline::{Item, QuasiPartition};
use crate::budget::consume;
use rtsched_model::{ModelError, Time};

/// A broken promise of QPS's schedule (an item left budget at a boundary, a master ran past
/// its time, two decisions for one CPU): found by [`Qps`] when it checks (`strict`); the
/// simulator reports it as an internal error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QpsViolation(pub String);

impl std::fmt::Display for QpsViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "QPS: {}", self.0)
    }
}

impl std::error::Error for QpsViolation {}

/// A set's mode in its current window: plain EDF on its CPU, or its QPS servers activated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Partitioned,
    Qps,
}

/// Which budget a CPU's choice consumes besides its item's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Srv {
    None,
    A,
    B,
    Master,
}

/// What a set runs on one CPU: an item, whether it consumes the item's budget (else it runs
/// in the background), and the server it runs under.
#[derive(Debug, Clone, Copy)]
struct Slot {
    item: usize,
    budgeted: bool,
    srv: Srv,
}

#[derive(Debug, Clone)]
struct SetState {
    /// The current window `[start, end)`, in ns.
    start: Time,
    end: Time,
    mode: Mode,
    /// Per item: its window budget (major set), or its slave job's work left (minor set), ticks.
    budget: Vec<u128>,
    srv_a: u128,
    srv_b: u128,
    master: u128,
    /// The rate (ticks per ns) its slave item asks of its host in this window (QPS mode).
    slave_rate: u128,
    /// The CPU its host runs its slave item on now (master/slave time).
    lent: Option<u32>,
    on_own: Option<Slot>,
    on_lent: Option<Slot>,
}

/// The online part of QPS over a [`QuasiPartition`]: windows, modes, budgets in ticks of
/// `1/L` ns ([`QuasiPartition::scale`]), and the task each CPU runs.
///
/// The driver's protocol at each instant `t` (in ticks), in this order: [`Qps::advance`] to
/// `t` (budgets consumed), [`Qps::complete`] for each task whose job finished at `t`,
/// [`Qps::release`] for each task releasing a job at `t`, then [`Qps::schedule`] (boundaries,
/// mode switches, the decision); [`Qps::task_on`] reads the decision and [`Qps::next_event`]
/// says when the next budget runs out or the next boundary comes. Releases are periodic from
/// the offsets given to [`Qps::new`]; a task may also release later (sporadic; module notes).
#[derive(Debug, Clone)]
pub struct Qps {
    qp: QuasiPartition,
    next_rel: Vec<Time>,
    pending: Vec<bool>,
    st: Vec<SetState>,
    cpu_task: Vec<Option<u32>>,
    now: u128,
    started: bool,
    strict: bool,
    switches: u64,
    activations: u64,
    /// Late jobs of major sets' tasks released inside a (partitioned) window; 1-ns windows.
    inside: u64,
    short: u64,
    /// The broken twin's flaw (tests only): a major set never activates its servers.
    never_activate: bool,
    /// The other broken twin's flaw (tests only): a late (sporadic) job keeps the deadline of
    /// its periodic release instant.
    grid_deadlines: bool,
    /// The third broken twin's flaw (tests only): the rule tried before for late tasks of a
    /// major set — their rates reserved in a window of ordinary length in QPS mode too.
    reserve_absent: bool,
}

fn take(b: &mut u128, dt: u128, strict: bool, what: impl FnOnce() -> String) -> Result<(), QpsViolation> {
    consume(b, dt, strict, what).map_err(QpsViolation)
}

impl Qps {
    /// QPS at time 0 over `qp`; task `i` releases its first job at `offsets[i]` (empty: all at
    /// 0) and then periodically. `strict`: check QPS's promises at every boundary and decision.
    pub fn new(qp: QuasiPartition, offsets: &[Time], strict: bool) -> Result<Qps, ModelError> {
        if qp.scale == 0 {
            return Err(ModelError::new(
                "QPS: a quasi-partition built by QuasiPartition::structure has no tick grid to run on",
            ));
        }
        let n = qp.periods.len();
        let next_rel = if offsets.is_empty() { vec![0; n] } else { offsets.to_vec() };
        if next_rel.len() != n {
            return Err(ModelError::field("offsets", format!("{} offsets for {n} tasks", next_rel.len())));
        }
        let st = qp
            .sets
            .iter()
            .map(|s| SetState {
                start: 0,
                end: 0,
                mode: Mode::Partitioned,
                budget: vec![0; s.items.len()],
                srv_a: 0,
                srv_b: 0,
                master: 0,
                slave_rate: 0,
                lent: None,
                on_own: None,
                on_lent: None,
            })
            .collect();
        Ok(Qps {
            cpu_task: vec![None; qp.m as usize],
            pending: vec![false; n],
            next_rel,
            st,
            qp,
            now: 0,
            started: false,
            strict,
            switches: 0,
            activations: 0,
            inside: 0,
            short: 0,
            never_activate: false,
            grid_deadlines: false,
            reserve_absent: false,
        })
    }

    /// A broken twin for the oracles (never for use): its major sets stay in partitioned mode
    /// whatever their load (a wrong mode switch), which the strict checks and a simulation's
    /// deadline misses must catch.
    #[doc(hidden)]
    pub fn broken_never_activates(mut self) -> Qps {
        self.never_activate = true;
        self
    }

    /// A broken twin for the sporadic oracles (never for use): a late job's EDF deadline stays
    /// that of its task's periodic release instant (its release instant plus the period), which
    /// the deadline checks must catch.
    #[doc(hidden)]
    pub fn broken_grid_deadlines(mut self) -> Qps {
        self.grid_deadlines = true;
        self
    }

    /// A broken twin for the sporadic oracles (never for use): the rule tried before ours for a
    /// major set whose task is late (module notes, "Sporadic releases"): its rate stays
    /// reserved in the load test and the slave rate, in QPS mode as in partitioned mode, and
    /// the window keeps its ordinary length; a job coming inside it gets `u·(e − r)`. Master
    /// time passing while the late task's side has nothing to run is lost to it, which the
    /// strict checks or a deadline must catch.
    #[doc(hidden)]
    pub fn broken_reserves_absent(mut self) -> Qps {
        self.reserve_absent = true;
        self
    }

    pub fn quasi(&self) -> &QuasiPartition {
        &self.qp
    }

    /// The current instant, in ticks.
    pub fn now(&self) -> u128 {
        self.now
    }

    /// The task CPU `cpu` runs (`None`: idle).
    pub fn task_on(&self, cpu: usize) -> Option<u32> {
        self.cpu_task.get(cpu).copied().flatten()
    }

    /// Set `k`'s mode in its current window.
    pub fn mode(&self, k: usize) -> Mode {
        self.st[k].mode
    }

    /// The CPU set `k`'s slave runs on now (`Some` only during master/slave time).
    pub fn slave_cpu(&self, k: usize) -> Option<u32> {
        self.st[k].lent
    }

    /// Mode switches so far (a major set's mode differs from its previous window's).
    pub fn switches(&self) -> u64 {
        self.switches
    }

    /// Windows spent in QPS mode so far (each an activation of a major set's servers).
    pub fn activations(&self) -> u64 {
        self.activations
    }

    /// Late jobs of major sets' tasks released so far inside their set's window (partitioned
    /// mode; module notes, "Sporadic releases").
    pub fn late_inside_windows(&self) -> u64 {
        self.inside
    }

    /// Windows so far cut to 1 ns because a major set's load with its late tasks exceeded 1.
    pub fn short_windows(&self) -> u64 {
        self.short
    }

    /// Task `i`'s job is released now: at its release instant, or at a later integer ns (a
    /// sporadic release; module notes, "Sporadic releases"). Never before it.
    pub fn release(&mut self, i: u32) -> Result<(), QpsViolation> {
        self.release_job(i, true)
    }

    /// [`Qps::release`]; `real`: a job is released (else the driver skips it: no budget).
    fn release_job(&mut self, i: u32, real: bool) -> Result<(), QpsViolation> {
        let iu = i as usize;
        let Some(&r) = self.next_rel.get(iu) else {
            return Err(QpsViolation(format!("release of unknown task {i}")));
        };
        let l = self.qp.scale;
        if self.now < r as u128 * l || !self.now.is_multiple_of(l) {
            return Err(QpsViolation(format!(
                "task {i} released at tick {} (1/{l} ns), before its next release instant {r} ns or off the ns grid",
                self.now
            )));
        }
        let at = (self.now / l) as Time;
        if self.pending[iu] && self.strict {
            return Err(QpsViolation(format!("task {i}'s previous job is still pending at its deadline {r} ns")));
        }
        let (k, j) = self.qp.place[iu];
        let st = &self.st[k];
        // A late job of a major set's task inside its set's window (not at a boundary, where
        // the new window budgets it): the rest of the window's share, `u·(e − at)`. Our rule
        // makes such a window partitioned (a window in QPS mode with a late task lasts 1 ns).
        if real && self.qp.sets[k].major.is_some() && self.started && st.start <= at && at < st.end {
            if st.mode == Mode::Qps && !self.reserve_absent {
                return Err(QpsViolation(format!(
                    "task {i} released at {at} ns inside set {k}'s window [{}, {}) in QPS mode (a bug: such a window lasts 1 ns)",
                    st.start, st.end
                )));
            }
            self.st[k].budget[j] = self.qp.rate_ticks[iu] * (self.st[k].end - at) as u128;
            self.inside += 1;
        }
        self.pending[iu] = true;
        // The broken twin keeps the periodic deadline of a late job.
        let from = if self.grid_deadlines { r } else { at };
        self.next_rel[iu] = from
            .checked_add(self.qp.periods[iu])
            .ok_or_else(|| QpsViolation(format!("task {i}'s release instants overflow the time range")))?;
        Ok(())
    }

    /// The driver does not release task `i`'s job due now (its simulation ends here): the
    /// task's release instant moves on and it stays without a pending job.
    pub fn skip_release(&mut self, i: u32) -> Result<(), QpsViolation> {
        let was = self.pending.get(i as usize).copied().unwrap_or(false);
        self.release_job(i, false)?;
        self.pending[i as usize] = was;
        Ok(())
    }

    /// Task `i` has no pending job any more (its job completed): what is left of its window
    /// budget is given up.
    pub fn complete(&mut self, i: u32) -> Result<(), QpsViolation> {
        let iu = i as usize;
        if iu >= self.pending.len() || (!self.pending[iu] && self.strict) {
            return Err(QpsViolation(format!("task {i} completed without a pending job")));
        }
        self.pending[iu] = false;
        let (k, j) = self.qp.place[iu];
        if self.qp.sets[k].major.is_some() {
            self.st[k].budget[j] = 0;
        }
        Ok(())
    }

    /// Moves to instant `to` (ticks, not before now and not after [`Qps::next_event`]): the
    /// running items, servers and masters consume budget. Decisions wait for [`Qps::schedule`].
    pub fn advance(&mut self, to: u128) -> Result<(), QpsViolation> {
        if to < self.now {
            return Err(QpsViolation(format!("time went back from tick {} to {to}", self.now)));
        }
        let dt = to - self.now;
        if dt > 0 {
            let strict = self.strict;
            for (k, st) in self.st.iter_mut().enumerate() {
                for slot in [st.on_own, st.on_lent].into_iter().flatten() {
                    if slot.budgeted {
                        take(&mut st.budget[slot.item], dt, strict, || format!("item {} of set {k}", slot.item))?;
                    }
                    match slot.srv {
                        Srv::A => take(&mut st.srv_a, dt, strict, || format!("server a of set {k}"))?,
                        Srv::B => take(&mut st.srv_b, dt, strict, || format!("server b of set {k}"))?,
                        Srv::None | Srv::Master => {}
                    }
                }
                if st.mode == Mode::Qps && st.lent.is_some() {
                    take(&mut st.master, dt, strict, || format!("the master of set {k}"))?;
                }
            }
        }
        self.now = to;
        Ok(())
    }

    /// The next instant after now at which a decision may change, in ticks: a boundary (a
    /// release instant) or a running budget reaching zero.
    pub fn next_event(&self) -> u128 {
        let l = self.qp.scale;
        let mut t = u128::MAX;
        // Release instants still ahead (a sporadic task's may have passed), window ends.
        for r in self.next_rel.iter().chain(self.st.iter().map(|st| &st.end)) {
            let r = (*r as u128).saturating_mul(l);
            if r > self.now {
                t = t.min(r);
            }
        }
        for st in &self.st {
            for slot in [st.on_own, st.on_lent].into_iter().flatten() {
                if slot.budgeted {
                    t = t.min(self.now + st.budget[slot.item]);
                }
                match slot.srv {
                    Srv::A => t = t.min(self.now + st.srv_a),
                    Srv::B => t = t.min(self.now + st.srv_b),
                    Srv::None | Srv::Master => {}
                }
            }
            if st.mode == Mode::Qps && st.lent.is_some() {
                t = t.min(self.now + st.master);
            }
        }
        t
    }

    /// The decision at now: new windows (budgets and modes) for the sets at a boundary, owners
    /// before hosts; then each set's choice, hosts before owners (a host decides where its
    /// slave items run).
    pub fn schedule(&mut self) -> Result<(), QpsViolation> {
        let l = self.qp.scale;
        if self.now.is_multiple_of(l) {
            let t = (self.now / l) as Time;
            let init = !self.started;
            for k in 0..self.st.len() {
                if init || self.st[k].end == t {
                    self.new_window(k, t, init)?;
                }
            }
            self.started = true;
        } else if !self.started {
            return Err(QpsViolation("the first decision must be at tick 0".into()));
        }
        self.select()
    }

    /// The next boundary of set `k` after `t`: its tasks' next release instants (a task whose
    /// instant has passed without a release — a *late* task —: `t + T`, the earliest deadline
    /// a job of it may have) and its slave items' owners' window ends.
    fn next_boundary(&self, k: usize, t: Time) -> Time {
        self.qp.sets[k]
            .items
            .iter()
            .map(|it| match *it {
                Item::Task(i) if self.is_late(i, t) => t.saturating_add(self.qp.periods[i as usize]),
                Item::Task(i) => self.next_rel[i as usize],
                Item::Slave(q) => self.st[q].end,
            })
            .min()
            .unwrap_or(Time::MAX)
    }

    /// Task `i` is late at `t`: its release instant has passed without a release.
    fn is_late(&self, i: u32, t: Time) -> bool {
        !self.pending[i as usize] && self.next_rel[i as usize] <= t
    }

    fn new_window(&mut self, k: usize, t: Time, init: bool) -> Result<(), QpsViolation> {
        let mut end = self.next_boundary(k, t);
        if end <= t && !self.qp.sets[k].items.is_empty() {
            return Err(QpsViolation(format!(
                "set {k} has a boundary at {end} ns, not after {t} ns: a release was not reported"
            )));
        }
        let set = &self.qp.sets[k];
        let st = &self.st[k];
        if self.strict && !init {
            for (j, it) in set.items.iter().enumerate() {
                let owner_new = matches!(*it, Item::Slave(q) if self.st[q].start == t);
                let due = set.major.is_some() || owner_new;
                if due && st.budget[j] > 0 {
                    return Err(QpsViolation(format!(
                        "{it:?} of set {k} has {} ticks of budget left at its boundary {t} ns",
                        st.budget[j]
                    )));
                }
            }
            if st.master > 0 {
                return Err(QpsViolation(format!("set {k}'s master has {} ticks left at {t} ns", st.master)));
            }
        }
        let l = self.qp.scale;
        let rates: Vec<u128> = set
            .items
            .iter()
            .map(|it| match *it {
                Item::Task(i) if self.pending[i as usize] => self.qp.rate_ticks[i as usize],
                Item::Task(_) => 0,
                Item::Slave(q) => self.st[q].slave_rate,
            })
            .collect();
        // A major set's late tasks (sporadic; module notes): their rates, per subset.
        let (mut late_a, mut late_b) = (0u128, 0u128);
        if let Some(mj) = &set.major {
            for (j, it) in set.items.iter().enumerate() {
                if let Item::Task(i) = *it {
                    if self.is_late(i, t) {
                        *(if mj.b.contains(&j) { &mut late_b } else { &mut late_a }) += self.qp.rate_ticks[i as usize];
                    }
                }
            }
        }
        let load = rates.iter().sum::<u128>() + late_a + late_b;
        // Our rule: a window whose load with its late tasks exceeds 1 lasts 1 ns, so a late
        // job comes at a boundary (releases are integer ns); otherwise it stays partitioned and
        // a job coming inside it gets the rest of its share (`Qps::release`).
        if late_a + late_b > 0 && load > l && !self.reserve_absent && end > t + 1 {
            end = t + 1;
            self.short += 1;
        }
        let fresh: Vec<bool> = set
            .items
            .iter()
            .map(|it| match *it {
                Item::Slave(q) => init || self.st[q].start == t,
                Item::Task(_) => false,
            })
            .collect();
        let owner_len: Vec<u128> = set
            .items
            .iter()
            .map(|it| match *it {
                Item::Slave(q) if self.st[q].end != Time::MAX => (self.st[q].end - t) as u128,
                _ => 0,
            })
            .collect();
        let len = if end == Time::MAX { 0 } else { (end - t) as u128 };
        let major = set.major.clone();
        let st = &mut self.st[k];
        st.start = t;
        st.end = end;
        match major {
            None => {
                // A minor set: a slave item's job is its owner's master time for the owner's
                // new window (its work is due at the owner's next boundary).
                for j in 0..rates.len() {
                    if fresh[j] {
                        st.budget[j] = rates[j] * owner_len[j];
                    }
                }
                st.mode = Mode::Partitioned;
            }
            Some(mj) => {
                let (mut ra, mut rb) = (0u128, 0u128);
                for (j, &r) in rates.iter().enumerate() {
                    st.budget[j] = r * len;
                    if mj.b.contains(&j) {
                        rb += r;
                    } else {
                        ra += r;
                    }
                }
                // The broken twin (the rule tried before ours) reserves the late tasks' rates
                // in QPS mode too.
                if self.reserve_absent {
                    (ra, rb) = (ra + late_a, rb + late_b);
                }
                let prev = st.mode;
                if ra + rb > l && !self.never_activate {
                    if rb > l || ra > l {
                        return Err(QpsViolation(format!("set {k}: a subset's pending rate exceeds 1 (a bug)")));
                    }
                    let m = (ra + rb - l) * len;
                    st.mode = Mode::Qps;
                    st.master = m;
                    st.srv_a = ra * len - m;
                    st.srv_b = rb * len - m;
                    st.slave_rate = ra + rb - l;
                    self.activations += 1;
                } else {
                    st.mode = Mode::Partitioned;
                    (st.master, st.srv_a, st.srv_b, st.slave_rate) = (0, 0, 0, 0);
                }
                if !init && st.mode != prev {
                    self.switches += 1;
                }
            }
        }
        Ok(())
    }

    /// The EDF key of item `j` of set `k`: its deadline, tasks before slave items, index.
    fn key(&self, k: usize, j: usize) -> (Time, u8, usize) {
        match self.qp.sets[k].items[j] {
            Item::Task(i) => (self.next_rel[i as usize], 0, i as usize),
            Item::Slave(q) => (self.st[q].end, 1, q),
        }
    }

    /// The earliest-deadline item among `among` (indices into set `k`'s items) that `ok` admits.
    fn best(&self, k: usize, among: impl Iterator<Item = usize>, ok: impl Fn(usize) -> bool) -> Option<usize> {
        among.filter(|&j| ok(j)).min_by_key(|&j| self.key(k, j))
    }

    fn is_pending_task(&self, k: usize, j: usize) -> bool {
        matches!(self.qp.sets[k].items[j], Item::Task(i) if self.pending[i as usize])
    }

    /// With budget left first (`budgeted`), else a pending task in the background.
    fn pick(&self, k: usize, among: &[usize], srv: Srv) -> Option<Slot> {
        let b = &self.st[k].budget;
        if let Some(j) = self.best(k, among.iter().copied(), |j| b[j] > 0) {
            return Some(Slot { item: j, budgeted: true, srv });
        }
        self.best(k, among.iter().copied(), |j| self.is_pending_task(k, j)).map(|j| Slot {
            item: j,
            budgeted: false,
            srv,
        })
    }

    fn select(&mut self) -> Result<(), QpsViolation> {
        self.cpu_task.iter_mut().for_each(|c| *c = None);
        for st in &mut self.st {
            st.lent = None;
            st.on_own = None;
            st.on_lent = None;
        }
        for k in (0..self.st.len()).rev() {
            let set = &self.qp.sets[k];
            let n = set.items.len();
            let all: Vec<usize> = (0..n).collect();
            let lent = self.st[k].lent;
            let (own, other): (Option<Slot>, Option<Slot>) = match (&set.major, self.st[k].mode) {
                (None, _) => {
                    let b = &self.st[k].budget;
                    let j = self.best(k, 0..n, |j| match set.items[j] {
                        Item::Task(i) => self.pending[i as usize],
                        Item::Slave(_) => b[j] > 0,
                    });
                    let slot =
                        j.map(|j| Slot { item: j, budgeted: matches!(set.items[j], Item::Slave(_)), srv: Srv::None });
                    (slot, None)
                }
                (Some(_), Mode::Partitioned) => (self.pick(k, &all, Srv::None), None),
                (Some(mj), Mode::Qps) => {
                    if lent.is_some() {
                        if self.st[k].master == 0 && self.strict {
                            return Err(QpsViolation(format!(
                                "set {k}'s slave runs at tick {} but its master has no time left",
                                self.now
                            )));
                        }
                        (self.pick(k, &mj.a, Srv::Master), self.pick(k, &mj.b, Srv::Master))
                    } else {
                        let st = &self.st[k];
                        let b = &st.budget;
                        let ca = if st.srv_a > 0 { self.best(k, mj.a.iter().copied(), |j| b[j] > 0) } else { None };
                        let cb = if st.srv_b > 0 { self.best(k, mj.b.iter().copied(), |j| b[j] > 0) } else { None };
                        let slot = match (ca, cb) {
                            (Some(x), Some(y)) if self.key(k, y) < self.key(k, x) => {
                                Some(Slot { item: y, budgeted: true, srv: Srv::B })
                            }
                            (Some(x), _) => Some(Slot { item: x, budgeted: true, srv: Srv::A }),
                            (None, Some(y)) => Some(Slot { item: y, budgeted: true, srv: Srv::B }),
                            (None, None) => self.best(k, 0..n, |j| self.is_pending_task(k, j)).map(|j| Slot {
                                item: j,
                                budgeted: false,
                                srv: Srv::None,
                            }),
                        };
                        (slot, None)
                    }
                }
            };
            if lent.is_some() && !(set.major.is_some() && self.st[k].mode == Mode::Qps) && self.strict {
                return Err(QpsViolation(format!(
                    "set {k}'s slave item runs at tick {} but the set is not in QPS mode",
                    self.now
                )));
            }
            let cpu = set.cpu;
            self.st[k].on_own = own;
            self.st[k].on_lent = other;
            if let Some(s) = own {
                self.assign(k, s.item, cpu)?;
            }
            if let (Some(s), Some(c)) = (other, lent) {
                self.assign(k, s.item, c)?;
            }
        }
        Ok(())
    }

    fn assign(&mut self, k: usize, j: usize, cpu: u32) -> Result<(), QpsViolation> {
        match self.qp.sets[k].items[j] {
            Item::Task(i) => {
                let c = &mut self.cpu_task[cpu as usize];
                if c.is_some() {
                    return Err(QpsViolation(format!("two tasks for CPU {cpu} at tick {}", self.now)));
                }
                *c = Some(i);
            }
            Item::Slave(q) => self.st[q].lent = Some(cpu),
        }
        Ok(())
    }
}
