//! QPS, quasi-partitioned scheduling (Massa, Lima, Regnier, Levin & Brandt, "Quasi-partitioned
//! scheduling: optimality and adaptation in multiprocessor real-time systems", Real-Time Systems
//! 52(5), 2016; first as "Optimal and adaptive multiprocessor real-time scheduling: the
//! quasi-partitioning approach", ECRTS 2014): tasks are split into *execution sets*; a *minor*
//! set (rate ≤ 1) is scheduled by EDF on one processor, a *major* set (rate in (1, 2)) by EDF on
//! its dedicated processor while its load allows (*partitioned mode*) and by *QPS servers* on
//! two processors — a *master* on its own processor and a *slave* on another — when it does not
//! (*QPS mode*). A set that worst or first fit places is partitioned EDF.
//!
//! # Sources, and what is ours
//!
//! The full papers could not be read here; what is confirmed comes from their abstracts, the
//! summaries citing them, and slides presenting the ECRTS 2014 version (A. Petrov, Padua,
//! October 2015, found by searching stored pages for "quasi-partitioned scheduling"). Confirmed:
//! execution sets, minor (one processor) and major (more than one) sets; EDF on one processor
//! for a minor set; for a major set a switch between partitioned EDF and server-based rules as
//! its load varies (the *activation* of its servers), with a master/slave pair of servers; the
//! offline phase making the sets, the online phase switching modes. From the slides: the task
//! model is *sporadic*, implicit-deadline, a task `τ:(R, D)` with rate `R ≤ 1` and an infinite
//! set of deadlines `D`, whose job `J:(r, c, d)` has `r ∈ {0} ∪ D`, `d = min{d ∈ D, d > r}`
//! and `c = R·(d − r)` (RUN's fixed-rate model); servers are fixed-rate EDF servers over
//! clients, of rate the clients' sum (≤ 1) and deadlines their union; a quasi-partition
//! `Q(Γ, m)` has at most `m` sets, every set's rate is in `(0, 2)` (≤ 1 minor, > 1 major), and
//! in a major set `P` every member `σ` has `R(σ) > R(P) − 1` (our sets meet this with `σ` the
//! subsets `P^a`, `P^b`, each of rate > `R − 1` because the other's is ≤ 1; not for every
//! task: a light task in `P^a` may be below the excess — the slides do not say which is
//! meant). Brandenburg & Gül (RTSS 2016, §VI) bound QPS's context switches by two per
//! activation, and say that QPS reduces to partitioning on easy workloads. **Not confirmed,
//! and ours**: the packing rule below, the server rates, the activation rule (a per-window load
//! test), the window budgets, and the sporadic rule below. The paper's own worked example
//! could not be read; the tests work our own examples by hand.
//!
//! # Sporadic releases (ours)
//!
//! Any task may release a job at any integer ns at or after its *release instant* (its previous
//! release plus `T`); the job's deadline is its release plus `T`. A task whose release instant
//! has passed without a release is *late*; it gives its set a boundary at `t + T` (the
//! earliest deadline a job of it may have, so a window never ends after the deadline of a job
//! coming inside it).
//! * **Minor set**: uniprocessor EDF over its tasks' jobs and its slave items' jobs (each due
//!   at its owner's next boundary, of work its owner's slave rate times the window), whose
//!   rates sum to at most 1: EDF meets every deadline of any such job sequence. So a set
//!   worst or first fit places (every set minor) is partitioned EDF, sporadic included.
//! * **Major set** (our rule): at a boundary `t`, let `A⁺` be the window's load `A` plus the
//!   rates of the set's late tasks. If `A⁺ ≤ 1`, the window is planned as always (it is in
//!   partitioned mode, since `A ≤ A⁺`), and a late job coming at `r` inside it gets the
//!   budget `u·(e − r)` for the rest of the window (`e` its end). If `A⁺ > 1`, the window
//!   lasts 1 ns (`e = t + 1`) and is planned from the pending jobs alone: releases are integer
//!   ns, so no job can come inside it. ([`Qps::short_windows`] and
//!   [`Qps::late_inside_windows`] count the two cases.)
//!
//! Why no deadline is missed. A window of 1 ns is an ordinary window: no release comes inside
//! it, and the periodic argument below holds as it is (it never uses periodicity, only that
//! every release and every deadline is a boundary). In a partitioned window of a major set
//! with late tasks, the dedicated CPU runs items with budget whenever one has some (EDF among
//! them, background work only after). Let `W(τ)` be the budgets left at `τ` plus `u·(e − τ)`
//! for every task still late. At `t`, `W = A⁺·len ≤ len`. A release at `r` moves `u·(e − r)`
//! from the late term to the budgets: `W` does not change. While budgets are left the CPU
//! serves them, so `W` falls at least as fast as `e − τ`; when none are left, `W` is the late
//! term alone, `≤ Σu·(e − τ) ≤ e − τ`. So `W(τ) ≤ e − τ` throughout, and no budget is left at
//! `e`: every job still gets `u` times every window it is pending in (the part after its
//! release in the window it comes in). The slave rate of a partitioned window is 0, so the
//! host's promises are unchanged. The job then has `u·(e − r)` plus `u` times the windows up to
//! its deadline `r + T` (a boundary): `C`. The rate of a late task is kept only where it is
//! safe (partitioned mode): the rule tried before ours kept it in QPS mode too, with windows of
//! ordinary length, and fails — the host may run the slave item (master time) while the late
//! task's side has nothing to run, and the master time that passes idle is lost to the job that
//! comes later (`Qps::broken_reserves_absent`, caught by the tests on a hand-made set and on
//! random ones). In QPS mode the parallel time is fixed per window and placed by the host,
//! which the owner cannot steer; 1-ns windows keep arrivals on boundaries instead. Their cost:
//! a major set with a late task and `A⁺ > 1`, and the sets hosting its slave item, have a
//! boundary every ns while that load stays above 1 (until the late tasks release or enough
//! pending jobs complete). How the paper's fixed-rate servers handle a late job could not be
//! read.
//!
//! # Offline: [`QuasiPartition::build`]
//!
//! Rates are exact rationals. Tasks in decreasing rate order (ties: lower index first).
//! * **Partition first**: worst-fit decreasing into `m` sets of rate ≤ 1 (each task into the
//!   least-loaded set, ties: the lower CPU), else first-fit decreasing (the order of SP-RES's
//!   partitioning cascade, Brandenburg & Gül, RTSS 2016). If every task is placed, every set
//!   is minor and QPS is partitioned EDF on that placement ([`QuasiPartition::partitioned`]).
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
//! Why no deadline is missed (with `U ≤ m`, implicit deadlines; sporadic releases: above): the
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
//!
//! # Files
//!
//! `offline.rs` builds the quasi-partition ([`QuasiPartition`]); `online.rs` runs it ([`Qps`]).

mod offline;
mod online;
#[cfg(test)]
mod tests;

pub use offline::{ExecutionSet, Item, Major, QuasiPartition};
pub use online::{Mode, Qps, QpsViolation};
