//! rtsched-gen: seeded task-set generators (design note: `docs/generators.md`).
//!
//! A [`GenSpec`] names how utilizations ([`UtilGen`]), periods ([`PeriodGen`]) and deadlines
//! ([`DeadlineGen`]) are drawn; [`generate`]`(spec, seed, index)` returns task set number
//! `index` of stream `seed`, a pure function of its arguments (see [`rng`] for
//! the ChaCha8 stream layout), so [`generate_many`] runs on rayon and returns exactly
//! `(0..count).map(|i| generate(spec, seed, i))`, on every machine.
//!
//! Generators and their papers:
//! * [`randfixedsum`] — Emberson, Stafford & Davis, WATERS 2010 (Stafford's algorithm);
//! * [`uunifast_discard`] — Davis & Burns, Real-Time Systems 2011 (UUniFast: Bini & Buttazzo
//!   2005);
//! * [`suspension`] — self-suspension added to a generated set: `S_i = R · (T_i − C_i)` split
//!   into segments (the construction of the self-suspension literature's evaluations, e.g.
//!   Huang, Chen, Zhou & Liu, DAC 2015);
//! * [`Dist`] — the Baker-style uniform/bimodal distributions of Brandenburg & Anderson, RTSS
//!   2009 §4.2, and the exponential ones of Cerqueira, Vanga & Brandenburg, RTAS 2014 §V-A, with
//!   a fixed count or the "add until the cap is exceeded, discard the last" construction.
//!
//! Rounding (tasks are integer ns): `T` is rounded to the nearest ns inside its range;
//! `C = round(u * T)` (nearest ns of the `f64` product, ties away from zero), then clamped to
//! `[1, T]`; `D` see [`DeadlineGen`]. Hence `|C/T - u| <= 1/(2T)` unless the clamp to 1 ns
//! applied (`u T < 1/2`), where `|C/T - u| < 1/T`; the set's utilization differs from the drawn
//! sum by less than `Σ 1/T_i` (plus the float rounding of the sum, about `n · 2^-53 · U`).
//!
//! Deadlines: implicit by default; generated deadlines are always constrained or implicit.
//!
//! ```
//! use rtsched_gen::*;
//! let spec = GenSpec {
//!     util: util_gen_from_name("randfixedsum", Some(10), 4.0, 1.0)?,
//!     periods: PeriodGen::parse("seed004")?,
//!     deadlines: DeadlineGen::Implicit,
//! };
//! let set = generate(&spec, 1, 7)?;
//! assert_eq!(set.len(), 10);
//! assert!(set.iter().all(|t| t.wcet >= 1 && t.deadline == t.period));
//! assert_eq!(generate_many(&spec, 1, 8)?[7], set); // index 7, however it is reached
//! # Ok::<(), rtsched_model::ModelError>(())
//! ```

pub mod dag;
pub mod deadline;
pub mod dist;
pub mod forkjoin;
pub mod period;
pub mod rng;
pub mod suspension;
pub mod util;

pub use deadline::DeadlineGen;
pub use dist::{Count, Dist};
pub use period::PeriodGen;
pub use suspension::{add_suspension, SuspensionGen};
pub use util::{randfixedsum, uunifast_discard, uunifast_discard_with_limit, MAX_TASKS, RANDFIXEDSUM_MAX_N};

use rand::RngCore;
use rayon::prelude::*;
use rng::{stream, Purpose};
use rtsched_model::exact::{decide, ratio, Interval, Rational};
use rtsched_model::{ModelError, Task, TaskSet, Time};

/// How the utilizations of a set are drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum UtilGen {
    /// `n` utilizations in `(0, umax]` summing to `total`, uniform over that polytope.
    RandFixedSum { n: usize, total: f64, umax: f64 },
    /// The same law by rejection; errors after [`util::UUNIFAST_DEFAULT_MAX_TRIES`] discards.
    UUniFastDiscard { n: usize, total: f64, umax: f64 },
    /// Independent draws from a Baker/LITMUS^RT distribution.
    Dist { dist: Dist, count: Count },
}

/// A complete generator: utilizations, periods, deadlines.
#[derive(Debug, Clone, PartialEq)]
pub struct GenSpec {
    pub util: UtilGen,
    pub periods: PeriodGen,
    pub deadlines: DeadlineGen,
}

impl GenSpec {
    /// Checks every parameter; the error names the parameter (`n`, `total`, `umax`, `cap`,
    /// `min`, `max`, `granularity`, `set`, `deadline_lo`, `deadline_hi`).
    pub fn validate(&self) -> Result<(), ModelError> {
        match &self.util {
            UtilGen::RandFixedSum { n, total, umax } => util::check_fixed_sum(*n, *total, *umax, RANDFIXEDSUM_MAX_N)?,
            UtilGen::UUniFastDiscard { n, total, umax } => util::check_fixed_sum(*n, *total, *umax, MAX_TASKS)?,
            UtilGen::Dist { count, .. } => dist::check_count(count)?,
        }
        self.periods.validate()?;
        self.deadlines.validate()
    }
}

/// `C = round(u T)` to the nearest ns (ties away from zero), clamped to `[1, T]` (for a
/// period `T >= 1`; NaN or negative `u` give 1 ns).
#[inline]
pub fn wcet_from_utilization(u: f64, period: Time) -> Time {
    let c = (u * period as f64).round();
    if c.is_nan() || c < 1.0 {
        1 // also catches NaN
    } else if c >= period as f64 {
        period
    } else {
        c as Time
    }
}

/// Reusable buffers (one per rayon worker).
#[derive(Default)]
struct Scratch {
    rfs: util::RfsScratch,
    u: Vec<f64>,
}

/// Task set number `index` of stream `seed` for `spec` (validated first).
pub fn generate(spec: &GenSpec, seed: u64, index: u64) -> Result<TaskSet, ModelError> {
    spec.validate()?;
    generate_checked(spec, seed, index, &mut Scratch::default())
}

/// Task sets `0..count` of stream `seed`, generated in parallel (rayon); identical to
/// calling [`generate`] for each index. The first error (by index) is returned.
pub fn generate_many(spec: &GenSpec, seed: u64, count: usize) -> Result<Vec<TaskSet>, ModelError> {
    spec.validate()?;
    (0..count as u64).into_par_iter().map_init(Scratch::default, |sc, i| generate_checked(spec, seed, i, sc)).collect()
}

fn task<R: RngCore>(u: f64, spec: &GenSpec, pr: &mut R, dr: &mut R) -> Task {
    let t = spec.periods.sample_valid(pr);
    let c = wcet_from_utilization(u, t);
    let d = spec.deadlines.sample_valid(c, t, dr);
    Task { name: None, wcet: c, deadline: d, period: t, segments: None }
}

fn generate_checked(spec: &GenSpec, seed: u64, index: u64, sc: &mut Scratch) -> Result<TaskSet, ModelError> {
    let mut ur = stream(seed, index, Purpose::Utilization);
    let mut pr = stream(seed, index, Purpose::Period);
    let mut dr = stream(seed, index, Purpose::Deadline);
    let tasks: Vec<Task> = match &spec.util {
        UtilGen::RandFixedSum { n, total, umax } => {
            util::randfixedsum_into(*n, *total, *umax, &mut ur, &mut sc.rfs, &mut sc.u);
            sc.u.iter().map(|&u| task(u, spec, &mut pr, &mut dr)).collect()
        }
        UtilGen::UUniFastDiscard { n, total, umax } => {
            let u = uunifast_discard(*n, *total, *umax, &mut ur)?;
            u.iter().map(|&u| task(u, spec, &mut pr, &mut dr)).collect()
        }
        UtilGen::Dist { dist, count: Count::Fixed(n) } => {
            (0..*n).map(|_| task(dist.sample(&mut ur), spec, &mut pr, &mut dr)).collect()
        }
        UtilGen::Dist { dist, count: Count::Cap(cap) } => {
            cap_construction(*dist, *cap, spec, &mut ur, &mut pr, &mut dr)?
        }
    };
    TaskSet::new(tasks)
}

/// Seed 001 §4.2: add tasks while the set's exact utilization stays at most `cap`; the first
/// task that would exceed it is discarded and ends the set. The comparison is exact (interval
/// filter, rational fallback on near-ties), on the rounded tasks.
fn cap_construction<R: RngCore>(
    dist: Dist,
    cap: f64,
    spec: &GenSpec,
    ur: &mut R,
    pr: &mut R,
    dr: &mut R,
) -> Result<Vec<Task>, ModelError> {
    let mut tasks = Vec::new();
    let mut acc = Interval::point(0.0);
    let cap_iv = Interval::point(cap);
    loop {
        let t = task(dist.sample(ur), spec, pr, dr);
        let next = acc.add(Interval::ratio(t.wcet as u128, t.period as u128));
        let fits = decide(
            || next.le(cap_iv),
            || {
                let exact: Rational = tasks
                    .iter()
                    .chain(std::iter::once(&t))
                    .map(|x: &Task| ratio(x.wcet as u128, x.period as u128))
                    .sum();
                // cap is finite (validated), so from_float succeeds.
                Rational::from_float(cap).is_some_and(|c| exact <= c)
            },
        );
        if !fits {
            return Ok(tasks);
        }
        if tasks.len() == MAX_TASKS {
            return Err(ModelError::field(
                "cap",
                format!("the cap {cap} needs more than {MAX_TASKS} tasks of distribution {}", dist.name()),
            ));
        }
        tasks.push(t);
        acc = next;
    }
}

/// Builds a [`UtilGen`] from its CLI name: `randfixedsum` (alias `emberson`) and
/// `uunifast-discard` need `n`; a [`Dist`] name gives `Fixed(n)` when `n` is given, else
/// `Cap(total)` (`umax` is not used by the distributions). The result is validated.
pub fn util_gen_from_name(name: &str, n: Option<usize>, total: f64, umax: f64) -> Result<UtilGen, ModelError> {
    let key = name.trim().to_ascii_lowercase();
    let need_n = || n.ok_or_else(|| ModelError::field("n", format!("generator {name:?} needs the number of tasks n")));
    let g = match key.as_str() {
        "randfixedsum" | "emberson" => UtilGen::RandFixedSum { n: need_n()?, total, umax },
        "uunifast-discard" => UtilGen::UUniFastDiscard { n: need_n()?, total, umax },
        _ => {
            let dist = Dist::from_name(&key).map_err(|e| {
                ModelError::field("util", format!("unknown generator {name:?}: expected randfixedsum, emberson, uunifast-discard or a distribution ({})", e.reason))
            })?;
            match n {
                Some(n) => UtilGen::Dist { dist, count: Count::Fixed(n) },
                None => UtilGen::Dist { dist, count: Count::Cap(total) },
            }
        }
    };
    match &g {
        UtilGen::RandFixedSum { n, total, umax } => util::check_fixed_sum(*n, *total, *umax, RANDFIXEDSUM_MAX_N)?,
        UtilGen::UUniFastDiscard { n, total, umax } => util::check_fixed_sum(*n, *total, *umax, MAX_TASKS)?,
        UtilGen::Dist { count, .. } => dist::check_count(count)?,
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wcet_rounding_rule() {
        assert_eq!(wcet_from_utilization(0.25, 10), 3); // 2.5 -> 3 (ties away from zero)
        assert_eq!(wcet_from_utilization(0.24, 10), 2);
        assert_eq!(wcet_from_utilization(0.26, 10), 3);
        assert_eq!(wcet_from_utilization(1e-12, 1000), 1); // clamped to 1 ns
        assert_eq!(wcet_from_utilization(1.0, 7), 7);
        assert_eq!(wcet_from_utilization(f64::NAN, 7), 1);
        assert_eq!(wcet_from_utilization(0.5, 1 << 53), 1 << 52);
    }

    #[test]
    fn util_gen_names() {
        assert_eq!(
            util_gen_from_name("emberson", Some(4), 2.0, 1.0).unwrap(),
            UtilGen::RandFixedSum { n: 4, total: 2.0, umax: 1.0 }
        );
        assert_eq!(
            util_gen_from_name("uunifast-discard", Some(4), 2.0, 0.8).unwrap(),
            UtilGen::UUniFastDiscard { n: 4, total: 2.0, umax: 0.8 }
        );
        assert_eq!(
            util_gen_from_name("bimodal-heavy", None, 8.0, 1.0).unwrap(),
            UtilGen::Dist { dist: Dist::BimodalHeavy, count: Count::Cap(8.0) }
        );
        assert_eq!(
            util_gen_from_name("exp-light", Some(30), 8.0, 1.0).unwrap(),
            UtilGen::Dist { dist: Dist::ExpLight, count: Count::Fixed(30) }
        );
        for (name, n, total, umax, field) in [
            ("randfixedsum", None, 2.0, 1.0, "n"),
            ("randfixedsum", Some(0), 2.0, 1.0, "n"),
            ("randfixedsum", Some(2), 2.5, 1.0, "total"),
            ("randfixedsum", Some(2), 1.0, 0.0, "umax"),
            ("uunifast-discard", Some(2), f64::NAN, 1.0, "total"),
            ("uniform-light", None, 0.0, 1.0, "cap"),
            ("uniform-light", None, f64::INFINITY, 1.0, "cap"),
            ("uniform-light", Some(0), 1.0, 1.0, "n"),
            ("gaussian", None, 1.0, 1.0, "util"),
        ] {
            let e = util_gen_from_name(name, n, total, umax).unwrap_err();
            assert_eq!(e.field.as_deref(), Some(field), "{name} {n:?} {total} {umax}: {e}");
        }
    }
}
