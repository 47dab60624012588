//! QPS, quasi-partitioned scheduling (Massa, Lima, Regnier, Levin & Brandt, "Quasi-partitioned
//! scheduling: optimality and adaptation in multiprocessor real-time systems", Real-Time Systems
//! 52(5), 2016; first as "Optimal and adaptive multiprocessor real-time scheduling: the
//! quasi-partitioning approach", ECRTS 2014): tasks are split into *execution sets*; a *minor*
//! set (rate ≤ 1) is scheduled by EDF on one processor, a *major* set (rate in (1, 2)) by EDF on
//! its dedicated processor while its load allows (*partitioned mode*) and by *QPS servers* on
//! two processors — a *master* on its own processor and a *slave* on another — when it does not
//! (*QPS mode*). A set that fits a partition is partitioned EDF.
//!
//! # Sources, and what is ours
//!
//! Only the papers' abstracts and the summaries citing them could be read here (the full texts
//! were not at hand), so this module follows these confirmed definitions: execution sets,
//! minor (one processor) and major (more than one) sets; EDF on one processor for a minor set;
//! for a major set a switch between partitioned EDF and server-based rules as its load varies
//! (the *activation* of its servers), with a master/slave pair of servers; the offline phase
//! making the sets, the online phase switching modes. Brandenburg & Gül (RTSS 2016, §VI) bound
//! QPS's context switches by two per activation, and say that QPS reduces to partitioning on
//! easy workloads. **Not confirmed, and ours**: the packing rule below, the server rates, the
//! activation rule (a per-window load test), the window budgets, and the refusal of sporadic
//! releases (the paper schedules sporadic tasks; this reconstruction needs every release
//! instant in advance, as RUN's servers do). The paper's own worked example could not be read;
//! the tests work our own examples by hand.
//!
//! # Offline: [`QuasiPartition::build`]
//!
//! Rates are exact rationals. Tasks in decreasing rate order (ties: lower index first).
//! * **Partition first**: worst-fit decreasing into `m` sets of rate ≤ 1 (each task into the
//!   least-loaded set, ties: the lower CPU). If every task is placed, every set is minor and
//!   QPS is partitioned EDF on that placement ([`QuasiPartition::partitioned`]).
//! * **Else, quasi-partition** (next fit with overflow): tasks fill the current set while its
//!   rate stays ≤ 1. A task that does not fit closes it: if the set's rate is exactly 1 it
//!   closes minor and the task opens the next set; otherwise the task joins it, making it
//!   *major* with rate `R ∈ (1, 2)` and *excess* `x = R − 1`: its subsets are `P^a` (the tasks
//!   before) and `P^b` (the new task), each of rate ≤ 1, and the next set opens with the
//!   major set's *slave item* of rate `x`. Each closed set nets exactly one processor of task
//!   rate, so `⌈U⌉ ≤ m` sets exist, set `k` on CPU `k`; a slave item always lives in a later
//!   set (its *host*).
//!
//! # Online: [`Qps`]
//!
//! Time is counted in *ticks* of `1/L` ns, `L` the least common multiple of the rates'
//! denominators of the major sets' tasks ([`QuasiPartition::scale`]; 1 when partitioned):
//! every budget below is an integer number of ticks.
//! A set's *boundaries* are the release instants of its tasks and the boundaries of the sets
//! whose slave items it hosts; a *window* runs from one boundary to the next. At a boundary
//! `t` with next boundary `d` (`len = d − t`), each item with work pending gets a *window
//! budget*: a task with a pending job `u·len`, a slave item `s·len` (`s` its owner's slave
//! rate, below). `A` is the sum of those rates.
//! * **Minor set**: plain EDF over its pending jobs and slave jobs (a slave item's job is its
//!   owner's master time for the owner's window, due at the owner's next boundary); ties by
//!   task index, tasks before slave items. With tasks only, this is partitioned EDF.
//! * **Major set, partitioned mode** (`A ≤ 1`): EDF among items with window budget left on the
//!   dedicated CPU, then (budgets done) EDF among pending tasks. Its slave rate is 0.
//! * **Major set, QPS mode** (`A > 1`, the *activation* of its servers): master time
//!   `M = (A − 1)·len`, server budgets `σ^a = A_a·len − M`, `σ^b = A_b·len − M` (`A_a`, `A_b`
//!   the subsets' pending rates, each ≤ 1, so both ≥ 0); the slave rate is `A − 1 ≤ x`. While
//!   the host runs the slave item on some CPU `c`, the dedicated CPU runs `P^a` (the master)
//!   and `c` runs `P^b` (the slave), each by EDF among items with budget left (then pending
//!   tasks). Otherwise the dedicated CPU runs the server with budget left whose earliest
//!   budgeted item is earlier (ties: `σ^a`), then any pending task by EDF.
//!
//! Why no deadline is missed (with `U ≤ m`, implicit deadlines, periodic releases): the
//! dedicated CPU's window holds exactly `M + σ^a + σ^b = len`, of which the master's `M` is
//! delivered by the host (the slave item's window budgets are due at the owner's boundaries);
//! every unit of `σ^a` or master time serves a `P^a` item with budget left while one exists
//! (`P^b` likewise with `σ^b` and slave time), so every item receives its window budget, and a
//! job receives `u` times the length of every window it is pending in: `C` by its deadline.
//! A minor set's jobs have densities summing to ≤ 1, so uniprocessor EDF meets them. With
//! `strict`, [`Qps`] checks these promises at every boundary.
//!
//! Migrations: only tasks of a `P^b` subset migrate (between their set's CPU and the CPU the
//! host lends during slave time); tasks of minor sets and of `P^a` subsets never do.

use rtsched_model::exact::{int, one, sum_ratios, zero, Rational};
use rtsched_model::{ModelError, Stop, TaskSet, Time};

/// A member of an execution set: a task, or the slave item of a major set (its index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Task(u32),
    Slave(usize),
}

/// A major set's split: `P^a` and `P^b` (indices into its items, each of rate ≤ 1), its
/// excess `x = R − 1` and the set that hosts its slave item.
#[derive(Debug, Clone, PartialEq)]
pub struct Major {
    pub a: Vec<usize>,
    pub b: Vec<usize>,
    pub excess: Rational,
    pub host: usize,
}

/// One execution set, on CPU `cpu` (its index).
#[derive(Debug, Clone, PartialEq)]
pub struct ExecutionSet {
    pub cpu: u32,
    pub items: Vec<Item>,
    /// `R(P)`: its tasks' rates plus its slave items' excesses.
    pub rate: Rational,
    /// `Some` for a major set.
    pub major: Option<Major>,
}

/// The offline part of QPS: the execution sets of a task set on `m` processors.
#[derive(Debug, Clone, PartialEq)]
pub struct QuasiPartition {
    pub sets: Vec<ExecutionSet>,
    /// Every set is minor: QPS is partitioned EDF on [`QuasiPartition::partition`].
    pub partitioned: bool,
    m: u32,
    /// Ticks per ns (`L`).
    scale: u128,
    periods: Vec<Time>,
    /// Per task: `u · L` (ticks per ns).
    rate_ticks: Vec<u128>,
    /// Per task: its set and its position there.
    place: Vec<(usize, usize)>,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl QuasiPartition {
    /// The execution sets of `ts` on `m` processors. Refused, with one line naming the task and
    /// field: a deadline other than the period (QPS schedules implicit-deadline tasks), total
    /// utilization above `m`, and (only when a major set is needed) rates of the major sets'
    /// tasks whose common denominator exceeds 2^64 (the exact budgets' grid).
    pub fn build(ts: &TaskSet, m: u32) -> Result<QuasiPartition, ModelError> {
        if m == 0 {
            return Err(ModelError::field("m", "must be at least 1"));
        }
        for (i, t) in ts.iter().enumerate() {
            if t.deadline != t.period {
                return Err(ModelError::task_field(
                    i,
                    "deadline",
                    format!(
                        "QPS schedules implicit-deadline tasks only (Massa et al., RTS 2016): D = {} ns but T = {} ns",
                        t.deadline, t.period
                    ),
                ));
            }
            if t.wcet > t.period {
                return Err(ModelError::task_field(
                    i,
                    "wcet",
                    format!("C = {} ns exceeds T = {} ns: rate above 1", t.wcet, t.period),
                ));
            }
        }
        let u = sum_ratios(ts.iter().map(|t| (t.wcet as u128, t.period as u128)), &Stop::never())
            .ok_or_else(|| ModelError::new("utilization sum interrupted"))?;
        if u > int(m as i128) {
            let approx = ts.iter().map(|t| t.utilization_f64()).sum::<f64>();
            return Err(ModelError::field(
                "m",
                format!("total utilization {approx:.6} exceeds m = {m}: QPS schedules U ≤ m"),
            ));
        }
        let too_big = |i: usize| {
            ModelError::task_field(
                i,
                "period",
                "QPS's exact budgets need the common denominator of the rates of its major execution sets' tasks below 2^64; use periods with a smaller least common multiple",
            )
        };
        let rates: Vec<Rational> = ts.iter().map(|t| t.utilization()).collect();
        let mut order: Vec<usize> = (0..ts.len()).collect();
        order.sort_by(|&a, &b| rates[b].cmp(&rates[a]).then(a.cmp(&b)));
        let (sets, partitioned) = match worst_fit(&rates, &order, m) {
            Some(sets) => (sets, true),
            None => (next_fit_with_overflow(&rates, &order), false),
        };
        if sets.len() > m as usize {
            return Err(ModelError::new(format!(
                "QPS: the quasi-partition has {} sets for m = {m} processors (a bug)",
                sets.len()
            )));
        }
        // The tick grid: only tasks of major sets have window budgets (a minor set's tasks run
        // plain EDF in whole ns), so L covers their rates only; a partitioned set needs none.
        let mut scale: u128 = 1;
        let mut rate_ticks = vec![0u128; ts.len()];
        let in_major: Vec<u32> = sets
            .iter()
            .filter(|s| s.major.is_some())
            .flat_map(|s| s.items.iter().filter_map(|it| if let Item::Task(i) = *it { Some(i) } else { None }))
            .collect();
        for &i in &in_major {
            let d = u128::try_from(rates[i as usize].denom()).map_err(|_| too_big(i as usize))?;
            scale = (scale / gcd(scale, d))
                .checked_mul(d)
                .filter(|&l| l <= u64::MAX as u128)
                .ok_or_else(|| too_big(i as usize))?;
        }
        for &i in &in_major {
            let r = &rates[i as usize];
            let num = u128::try_from(r.numer()).map_err(|_| too_big(i as usize))?;
            let den = u128::try_from(r.denom()).map_err(|_| too_big(i as usize))?;
            rate_ticks[i as usize] = num * (scale / den);
        }
        let mut place = vec![(0, 0); ts.len()];
        for (k, s) in sets.iter().enumerate() {
            for (j, it) in s.items.iter().enumerate() {
                if let Item::Task(i) = *it {
                    place[i as usize] = (k, j);
                }
            }
        }
        Ok(QuasiPartition {
            sets,
            partitioned,
            m,
            scale,
            periods: ts.iter().map(|t| t.period).collect(),
            rate_ticks,
            place,
        })
    }

    /// Ticks per ns (`L`): every event instant is an integer number of ticks.
    pub fn scale(&self) -> u128 {
        self.scale
    }

    pub fn m(&self) -> u32 {
        self.m
    }

    /// The number of major sets.
    pub fn majors(&self) -> usize {
        self.sets.iter().filter(|s| s.major.is_some()).count()
    }

    /// The tasks of each CPU's set (slave items left out): the placement partitioned EDF
    /// would use when [`QuasiPartition::partitioned`]; one list per CPU (`m` lists).
    pub fn partition(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.m as usize];
        for s in &self.sets {
            for it in &s.items {
                if let Item::Task(i) = *it {
                    out[s.cpu as usize].push(i);
                }
            }
        }
        out
    }

    /// Task `i`'s set, and whether it is in the `P^b` subset of a major set (the only tasks
    /// that may migrate).
    pub fn set_of(&self, i: u32) -> (usize, bool) {
        let (k, j) = self.place[i as usize];
        (k, self.sets[k].major.as_ref().is_some_and(|mj| mj.b.contains(&j)))
    }
}

/// Worst-fit decreasing into `m` sets of rate ≤ 1; `None` if a task does not fit.
fn worst_fit(rates: &[Rational], order: &[usize], m: u32) -> Option<Vec<ExecutionSet>> {
    let mut sets: Vec<ExecutionSet> =
        (0..m).map(|k| ExecutionSet { cpu: k, items: Vec::new(), rate: zero(), major: None }).collect();
    for &i in order {
        let k = (0..sets.len()).min_by(|&a, &b| sets[a].rate.cmp(&sets[b].rate).then(a.cmp(&b)))?;
        let r = sets[k].rate.clone() + rates[i].clone();
        if r > one() {
            return None;
        }
        sets[k].rate = r;
        sets[k].items.push(Item::Task(i as u32));
    }
    Some(sets)
}

/// The quasi-partition by next fit with overflow (module notes).
fn next_fit_with_overflow(rates: &[Rational], order: &[usize]) -> Vec<ExecutionSet> {
    let mut sets: Vec<ExecutionSet> = Vec::new();
    let mut cur = ExecutionSet { cpu: 0, items: Vec::new(), rate: zero(), major: None };
    for &i in order {
        let r = rates[i].clone();
        let sum = cur.rate.clone() + r.clone();
        if sum <= one() {
            cur.items.push(Item::Task(i as u32));
            cur.rate = sum;
            continue;
        }
        let k = sets.len();
        let next = if cur.rate == one() {
            ExecutionSet { cpu: k as u32 + 1, items: vec![Item::Task(i as u32)], rate: r, major: None }
        } else {
            let excess = sum.clone() - one();
            let a: Vec<usize> = (0..cur.items.len()).collect();
            cur.items.push(Item::Task(i as u32));
            cur.rate = sum;
            cur.major = Some(Major { a, b: vec![cur.items.len() - 1], excess: excess.clone(), host: k + 1 });
            ExecutionSet { cpu: k as u32 + 1, items: vec![Item::Slave(k)], rate: excess, major: None }
        };
        sets.push(std::mem::replace(&mut cur, next));
    }
    if !cur.items.is_empty() {
        sets.push(cur);
    }
    sets
}

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
/// the offsets given to [`Qps::new`].
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
    /// The broken twin's flaw (tests only): a major set never activates its servers.
    never_activate: bool,
}

fn take(b: &mut u128, dt: u128, strict: bool, what: impl FnOnce() -> String) -> Result<(), QpsViolation> {
    if *b < dt {
        if strict {
            return Err(QpsViolation(format!("{} ran past its budget ({} ticks left, {dt} elapsed)", what(), *b)));
        }
        *b = 0;
    } else {
        *b -= dt;
    }
    Ok(())
}

impl Qps {
    /// QPS at time 0 over `qp`; task `i` releases its first job at `offsets[i]` (empty: all at
    /// 0) and then periodically. `strict`: check QPS's promises at every boundary and decision.
    pub fn new(qp: QuasiPartition, offsets: &[Time], strict: bool) -> Result<Qps, ModelError> {
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
            never_activate: false,
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

    /// Task `i`'s job is released now (it must be its periodic release instant).
    pub fn release(&mut self, i: u32) -> Result<(), QpsViolation> {
        let iu = i as usize;
        let Some(&r) = self.next_rel.get(iu) else {
            return Err(QpsViolation(format!("release of unknown task {i}")));
        };
        if self.now != r as u128 * self.qp.scale {
            return Err(QpsViolation(format!(
                "task {i} released at tick {} but its release instant is {r} ns (QPS needs periodic releases)",
                self.now
            )));
        }
        if self.pending[iu] && self.strict {
            return Err(QpsViolation(format!("task {i}'s previous job is still pending at its deadline {r} ns")));
        }
        self.pending[iu] = true;
        self.next_rel[iu] = r
            .checked_add(self.qp.periods[iu])
            .ok_or_else(|| QpsViolation(format!("task {i}'s release instants overflow the time range")))?;
        Ok(())
    }

    /// The driver does not release task `i`'s job due now (its simulation ends here): the
    /// task's release instant moves on and it stays without a pending job.
    pub fn skip_release(&mut self, i: u32) -> Result<(), QpsViolation> {
        let was = self.pending.get(i as usize).copied().unwrap_or(false);
        self.release(i)?;
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
        for &r in &self.next_rel {
            t = t.min((r as u128).saturating_mul(l));
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

    /// The next boundary of set `k` after its items' current release instants.
    fn next_boundary(&self, k: usize) -> Time {
        self.qp.sets[k]
            .items
            .iter()
            .map(|it| match *it {
                Item::Task(i) => self.next_rel[i as usize],
                Item::Slave(q) => self.st[q].end,
            })
            .min()
            .unwrap_or(Time::MAX)
    }

    fn new_window(&mut self, k: usize, t: Time, init: bool) -> Result<(), QpsViolation> {
        let end = self.next_boundary(k);
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
        let len = if end == Time::MAX { 0 } else { (end - t) as u128 };
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

#[cfg(test)]
mod tests {
    use super::*;
    use rtsched_model::exact::{int, ratio};

    fn set(ct: &[(Time, Time)]) -> TaskSet {
        TaskSet::from_cdt(&ct.iter().map(|&(c, t)| (c, t, t)).collect::<Vec<_>>()).unwrap()
    }

    /// A small driver: jobs execute `exec[i]` ns (≤ WCET; empty: the WCET), released
    /// periodically from `offsets`; returns `(tick, task per CPU)` at every event and the CPUs
    /// each task ran on, or the first violation. Asserts that no task runs on two CPUs and that
    /// only pending tasks run.
    #[allow(clippy::type_complexity)]
    fn drive(
        q: &mut Qps,
        ts: &TaskSet,
        offsets: &[Time],
        exec: &[Time],
        until: Time,
    ) -> Result<(Vec<(u128, Vec<Option<u32>>)>, Vec<Vec<u32>>), QpsViolation> {
        let (l, m, n) = (q.quasi().scale(), q.quasi().m() as usize, ts.len());
        let exec: Vec<u128> = (0..n).map(|i| *exec.get(i).unwrap_or(&ts[i].wcet) as u128 * l).collect();
        let mut next: Vec<Time> = if offsets.is_empty() { vec![0; n] } else { offsets.to_vec() };
        let mut rem = vec![0u128; n];
        let mut pend = vec![false; n];
        let mut cpus: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut out = Vec::new();
        let end = until as u128 * l;
        let mut now = 0u128;
        loop {
            for i in 0..n {
                if pend[i] && rem[i] == 0 {
                    pend[i] = false;
                    q.complete(i as u32)?;
                }
            }
            if now.is_multiple_of(l) {
                for i in 0..n {
                    if next[i] as u128 * l == now {
                        q.release(i as u32)?;
                        assert!(!pend[i], "task {i} missed its deadline at {now}");
                        pend[i] = exec[i] > 0;
                        rem[i] = exec[i];
                        next[i] += ts[i].period;
                        if !pend[i] {
                            q.complete(i as u32)?;
                        }
                    }
                }
            }
            q.schedule()?;
            let on: Vec<Option<u32>> = (0..m).map(|c| q.task_on(c)).collect();
            let mut seen: Vec<u32> = on.iter().flatten().copied().collect();
            let k = seen.len();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), k, "a task on two CPUs at {now}: {on:?}");
            for (c, t) in on.iter().enumerate() {
                if let Some(i) = *t {
                    assert!(pend[i as usize], "task {i} runs without a pending job at {now}");
                    if cpus[i as usize].last() != Some(&(c as u32)) {
                        cpus[i as usize].push(c as u32);
                    }
                }
            }
            out.push((now, on.clone()));
            let mut t = q.next_event();
            for i in on.iter().flatten() {
                t = t.min(now + rem[*i as usize]);
            }
            for &r in &next {
                t = t.min(r as u128 * l);
            }
            if t > end {
                return Ok((out, cpus));
            }
            assert!(t > now, "no progress at {now}");
            for i in on.iter().flatten() {
                rem[*i as usize] -= t - now;
            }
            q.advance(t)?;
            now = t;
        }
    }

    #[test]
    fn three_tasks_of_rate_two_thirds_by_hand() {
        // Our example, worked by hand from the definitions (the paper's own could not be read):
        // three tasks needing 2 of every 3 ns on two processors. No partition exists; next fit
        // with overflow makes set 0 = {τ0 | τ1} major (R = 4/3, x = 1/3, P^a = {τ0},
        // P^b = {τ1}) and set 1 = {slave of set 0, τ2} minor (R = 1).
        let ts = set(&[(2, 3), (2, 3), (2, 3)]);
        let qp = QuasiPartition::build(&ts, 2).unwrap();
        assert!(!qp.partitioned);
        assert_eq!(qp.sets.len(), 2);
        assert_eq!(qp.sets[0].items, vec![Item::Task(0), Item::Task(1)]);
        assert_eq!(qp.sets[0].rate, ratio(4, 3));
        let mj = qp.sets[0].major.clone().unwrap();
        assert_eq!((mj.a, mj.b, mj.excess, mj.host), (vec![0], vec![1], ratio(1, 3), 1));
        assert_eq!(qp.sets[1].items, vec![Item::Slave(0), Item::Task(2)]);
        assert_eq!((qp.sets[1].rate.clone(), qp.sets[1].major.is_none()), (one(), true));
        assert_eq!(qp.scale(), 3); // ticks of 1/3 ns
        assert_eq!(qp.set_of(1), (0, true));
        assert_eq!(qp.set_of(0), (0, false));
        // Window [0, 3): A = 4/3 > 1, QPS mode: M = 1 ns, σ^a = σ^b = 2 − 1 = 1 ns. Set 1 runs
        // EDF over τ2 and the slave's job (1 ns, due 3; ties: tasks first): τ2 on CPU 1 in
        // [0, 2), the slave in [2, 3). CPU 0: σ^a (τ0) in [0, 1), σ^b (τ1) in [1, 2); in [2, 3)
        // the master runs τ0 on CPU 0 and the slave τ1 on CPU 1 (τ1 migrates once).
        let mut q = Qps::new(qp, &[], true).unwrap();
        let (tr, cpus) = drive(&mut q, &ts, &[], &[], 3).unwrap();
        let s = |a: Option<u32>, b: Option<u32>| vec![a, b];
        let want = vec![
            (0, s(Some(0), Some(2))),
            (3, s(Some(1), Some(2))),
            (6, s(Some(0), Some(1))),
            (9, s(Some(0), Some(2))),
        ];
        assert_eq!(tr, want);
        assert_eq!(q.mode(0), Mode::Qps);
        assert_eq!(cpus[1], vec![0, 1]);
        assert_eq!(q.activations(), 2); // the windows [0, 3) and [3, 6)
        assert_eq!(q.switches(), 0);
    }

    #[test]
    fn early_completions_switch_to_partitioned_mode() {
        // The same set with τ1 released first at 3 ns: in the window [0, 3) set 0's pending
        // rate is A = 2/3 (τ0 alone), so it is in partitioned mode (EDF on CPU 0) and its slave
        // asks nothing of set 1; from 3 ns A = 4/3 and its servers are activated.
        let ts = set(&[(2, 3), (2, 3), (2, 3)]);
        let mut q = Qps::new(QuasiPartition::build(&ts, 2).unwrap(), &[0, 3, 0], true).unwrap();
        let (tr, _) = drive(&mut q, &ts, &[0, 3, 0], &[], 6).unwrap();
        // [0, 3): set 0 partitioned (τ0 alone, EDF on CPU 0); the slave asks nothing, so set 1
        // runs τ2 then idles.
        // Both jobs run their 2 ns and complete at 2 ns; CPUs idle until 3 ns; then as in the
        // synchronous case.
        let s = |a: Option<u32>, b: Option<u32>| vec![a, b];
        assert_eq!(tr[..3], [(0, s(Some(0), Some(2))), (6, s(None, None)), (9, s(Some(0), Some(2)))]);
        assert_eq!(q.switches(), 1);
        assert_eq!(q.mode(0), Mode::Qps);
        assert_eq!(q.activations(), 2); // the windows [3, 6) and [6, 9)
    }

    #[test]
    fn a_set_worst_fit_places_is_partitioned_edf() {
        let ts = set(&[(1, 2), (2, 4), (3, 6), (1, 4)]);
        let qp = QuasiPartition::build(&ts, 2).unwrap();
        assert!(qp.partitioned);
        assert_eq!(qp.majors(), 0);
        // Worst fit, decreasing rate (ties: lower index, lower CPU): τ0 → CPU 0, τ1 → CPU 1,
        // τ2 → CPU 0 (both at 1/2), τ3 → CPU 1.
        assert_eq!(qp.partition(), vec![vec![0, 2], vec![1, 3]]);
        let mut q = Qps::new(qp, &[], true).unwrap();
        let (_, cpus) = drive(&mut q, &ts, &[], &[], 12).unwrap();
        for c in &cpus {
            assert!(c.len() <= 1, "{cpus:?}");
        }
        assert_eq!(q.activations(), 0);
    }

    #[test]
    fn refusals_name_the_task_and_field() {
        let ts = TaskSet::from_cdt(&[(1, 4, 4), (1, 3, 5)]).unwrap();
        let e = QuasiPartition::build(&ts, 2).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("deadline"));
        assert!(e.to_string().contains("task 1") && e.to_string().contains("implicit-deadline"), "{e}");
        let e = QuasiPartition::build(&set(&[(2, 3), (2, 3), (3, 4)]), 2).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("m"));
        assert!(e.to_string().contains("exceeds m = 2"), "{e}");
        assert!(QuasiPartition::build(&set(&[(1, 2)]), 0).is_err());
        // Periods whose rates' common denominator passes 2^64 in major sets are refused; the
        // same periods are fine when worst fit places the set (no budgets).
        let primes = [1_000_003u64, 1_000_033, 1_000_037, 1_000_039];
        let big: Vec<(Time, Time)> = primes.iter().map(|&p| (p / 2 + 1, p)).collect();
        let e = QuasiPartition::build(&set(&big), 3).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("period"));
        assert!(e.to_string().contains("major"), "{e}");
        let small: Vec<(Time, Time)> = primes.iter().map(|&p| (1, p)).collect();
        assert_eq!(QuasiPartition::build(&set(&small), 2).unwrap().scale(), 1);
        // U = m exactly is accepted.
        assert!(QuasiPartition::build(&set(&[(2, 3), (2, 3), (2, 3)]), 2).is_ok());
        // Releases off the periodic grid are refused (QPS here needs periodic releases).
        let ts = set(&[(1, 2)]);
        let mut q = Qps::new(QuasiPartition::build(&ts, 1).unwrap(), &[], true).unwrap();
        q.advance(1).unwrap();
        assert!(q.release(0).unwrap_err().to_string().contains("periodic"));
    }

    /// A small deterministic generator (the policy crate has no random-number dependency).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    fn random_set(g: &mut Lcg, m: u32, fill: bool) -> Vec<(Time, Time)> {
        let periods = [4u64, 5, 6, 8, 10, 12, 15, 20];
        let mut tasks = Vec::new();
        let mut u = zero();
        loop {
            let t = periods[g.below(periods.len() as u64) as usize];
            let c = 1 + g.below(t);
            let nu = u.clone() + ratio(c as u128, t as u128);
            if nu > int(m as i128) {
                if fill {
                    let gap = int(m as i128) - u.clone();
                    let want = gap.clone() * int(t as i128);
                    if want.is_integer() && gap > zero() && gap <= one() {
                        tasks.push((u64::try_from(&want.to_integer()).unwrap(), t));
                    }
                }
                return tasks;
            }
            u = nu;
            tasks.push((c, t));
        }
    }

    #[test]
    fn quasi_partitions_and_strict_schedules_on_random_sets() {
        let mut g = Lcg(11);
        let mut majors = 0;
        for case in 0..300 {
            let m = 2 + g.below(6) as u32;
            let tasks = random_set(&mut g, m, case % 3 == 0);
            let ts = set(&tasks);
            let qp = QuasiPartition::build(&ts, m).unwrap();
            assert!(qp.sets.len() <= m as usize);
            // Rates add up: the sets hold every task once, each major set's subsets are ≤ 1
            // and its excess is R − 1 ∈ (0, 1), hosted by a later set.
            let u = ts.iter().fold(zero(), |a, t| a + t.utilization());
            let excess = qp.sets.iter().filter_map(|s| s.major.as_ref()).fold(zero(), |a, mj| a + mj.excess.clone());
            assert_eq!(qp.sets.iter().fold(zero(), |a, s| a + s.rate.clone()), u + excess);
            for (k, s) in qp.sets.iter().enumerate() {
                assert!(s.rate > zero() || qp.partitioned);
                match &s.major {
                    None => assert!(s.rate <= one()),
                    Some(mj) => {
                        majors += 1;
                        assert!(s.rate > one() && mj.excess > zero() && mj.excess < one());
                        assert_eq!(mj.excess, s.rate.clone() - one());
                        assert!(mj.host > k && qp.sets[mj.host].items.contains(&Item::Slave(k)));
                    }
                }
            }
            let h = ts.hyperperiod(1 << 40).unwrap();
            let offsets: Vec<Time> = if case % 2 == 0 { vec![] } else { (0..ts.len()).map(|_| g.below(6)).collect() };
            let exec: Vec<Time> = if case % 4 == 1 { ts.iter().map(|t| 1 + g.below(t.wcet)).collect() } else { vec![] };
            let mut q = Qps::new(qp.clone(), &offsets, true).unwrap();
            let (_, cpus) =
                drive(&mut q, &ts, &offsets, &exec, h + 20).unwrap_or_else(|v| panic!("{v}: {tasks:?} m = {m}"));
            // Only P^b tasks migrate.
            for (i, c) in cpus.iter().enumerate() {
                let (_, in_b) = qp.set_of(i as u32);
                let mut d = c.clone();
                d.sort_unstable();
                d.dedup();
                assert!(in_b || d.len() <= 1, "task {i} ran on {c:?}: {tasks:?}");
            }
        }
        assert!(majors > 50, "{majors}");
    }

    #[test]
    fn the_broken_twin_that_never_activates_is_caught() {
        let ts = set(&[(2, 3), (2, 3), (2, 3)]);
        let mut q = Qps::new(QuasiPartition::build(&ts, 2).unwrap(), &[], true).unwrap().broken_never_activates();
        // Set 0 stays partitioned with 4 ns of budgets in a 3 ns window: τ1's job is still
        // pending at its deadline.
        let e = drive(&mut q, &ts, &[], &[], 6).unwrap_err();
        assert!(e.to_string().contains("pending at its deadline 3 ns"), "{e}");
    }
}
