//! The Baker / LITMUS^RT per-task utilization distributions.
//!
//! * Uniform and bimodal: Brandenburg & Anderson, "On the Implementation of Global Real-Time
//!   Schedulers", RTSS 2009, §4.2 (after Baker, "A comparison of global and partitioned EDF
//!   schedulability tests for multiprocessors", 2005):
//!   uniform light `[0.001, 0.1]`, medium `[0.1, 0.4]`, heavy `[0.5, 0.9]`; bimodal: uniform
//!   over `[0.001, 0.5)` or `[0.5, 0.9]` with probabilities 8/9 and 1/9 (light), 6/9 and 3/9
//!   (medium), 4/9 and 5/9 (heavy).
//! * Exponential: Cerqueira, Vanga & Brandenburg, "Scaling Global Scheduling with Message
//!   Passing", RTAS 2014, §V-A: "three exponential distributions ranging over [0, 1] (with
//!   means 0.1, 0.25 and 0.5)". As in SchedCAT's `exponential(0, 1, mean)` with its default
//!   `redraw` limiter, values outside `[0, 1]` are redrawn: the law is the exponential
//!   *conditioned on* `X <= 1`, whose mean is `mu - e^(-1/mu) / (1 - e^(-1/mu))` (0.09995,
//!   0.23134, 0.34348 for mu = 0.1, 0.25, 0.5). We sample that conditional law directly by
//!   inversion, `X = -mu ln(1 - V (1 - e^(-1/mu)))` with `V` uniform on `(0, 1)`: the same
//!   distribution as redrawing, with exactly one uniform per task.
//!
//! Task counts ([`Count`]): a fixed `n`, or seed 001's construction: "generating tasks until a
//! specified cap on total utilization was reached and by then discarding the last-added task".

use crate::rng::{open01, uniform, unit};
use rand::RngCore;
use rtsched_model::ModelError;

/// A per-task utilization distribution (each task drawn independently).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dist {
    UniformLight,
    UniformMedium,
    UniformHeavy,
    BimodalLight,
    BimodalMedium,
    BimodalHeavy,
    ExpLight,
    ExpMedium,
    ExpHeavy,
}

/// How many tasks a distribution-based set has.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Count {
    /// Exactly `n` tasks.
    Fixed(usize),
    /// Add tasks until the total utilization exceeds the cap, then discard the last one, so
    /// the set's (exact, after WCET rounding) utilization is at most the cap.
    Cap(f64),
}

/// Lower end of every light range (seed 001 §4.2).
pub const LIGHT_MIN: f64 = 0.001;
/// The split point of the bimodal distributions: `[0.001, 0.5)` versus `[0.5, 0.9]`.
pub const BIMODAL_SPLIT: f64 = 0.5;
/// Upper end of the heavy ranges.
pub const HEAVY_MAX: f64 = 0.9;

impl Dist {
    pub const ALL: [Dist; 9] = [
        Dist::UniformLight,
        Dist::UniformMedium,
        Dist::UniformHeavy,
        Dist::BimodalLight,
        Dist::BimodalMedium,
        Dist::BimodalHeavy,
        Dist::ExpLight,
        Dist::ExpMedium,
        Dist::ExpHeavy,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Dist::UniformLight => "uniform-light",
            Dist::UniformMedium => "uniform-medium",
            Dist::UniformHeavy => "uniform-heavy",
            Dist::BimodalLight => "bimodal-light",
            Dist::BimodalMedium => "bimodal-medium",
            Dist::BimodalHeavy => "bimodal-heavy",
            Dist::ExpLight => "exp-light",
            Dist::ExpMedium => "exp-medium",
            Dist::ExpHeavy => "exp-heavy",
        }
    }

    pub fn from_name(s: &str) -> Result<Dist, ModelError> {
        let t = s.trim().to_ascii_lowercase();
        Dist::ALL.iter().copied().find(|d| d.name() == t).ok_or_else(|| {
            let names: Vec<&str> = Dist::ALL.iter().map(|d| d.name()).collect();
            ModelError::field("dist", format!("unknown utilization distribution {s:?} (known: {})", names.join(", ")))
        })
    }

    /// The range `[lo, hi]` of a uniform distribution, if this is one.
    pub fn uniform_range(&self) -> Option<(f64, f64)> {
        match self {
            Dist::UniformLight => Some((LIGHT_MIN, 0.1)),
            Dist::UniformMedium => Some((0.1, 0.4)),
            Dist::UniformHeavy => Some((0.5, HEAVY_MAX)),
            _ => None,
        }
    }

    /// The probability of the light mode `[0.001, 0.5)` of a bimodal distribution.
    pub fn bimodal_light_probability(&self) -> Option<f64> {
        match self {
            Dist::BimodalLight => Some(8.0 / 9.0),
            Dist::BimodalMedium => Some(6.0 / 9.0),
            Dist::BimodalHeavy => Some(4.0 / 9.0),
            _ => None,
        }
    }

    /// The mean of the (untruncated) exponential distribution.
    pub fn exp_mean(&self) -> Option<f64> {
        match self {
            Dist::ExpLight => Some(0.1),
            Dist::ExpMedium => Some(0.25),
            Dist::ExpHeavy => Some(0.5),
            _ => None,
        }
    }

    /// The exact mean of the distribution (the truncated mean for the exponentials).
    pub fn mean(&self) -> f64 {
        if let Some((a, b)) = self.uniform_range() {
            (a + b) / 2.0
        } else if let Some(p) = self.bimodal_light_probability() {
            p * (LIGHT_MIN + BIMODAL_SPLIT) / 2.0 + (1.0 - p) * (BIMODAL_SPLIT + HEAVY_MAX) / 2.0
        } else {
            let mu = self.exp_mean().unwrap_or(1.0);
            let q = (-1.0 / mu).exp();
            mu - q / (1.0 - q)
        }
    }

    /// The largest value the distribution can take.
    pub fn max_value(&self) -> f64 {
        match self {
            Dist::ExpLight | Dist::ExpMedium | Dist::ExpHeavy => 1.0,
            Dist::UniformLight => 0.1,
            Dist::UniformMedium => 0.4,
            _ => HEAVY_MAX,
        }
    }

    /// One utilization in `(0, 1]`.
    ///
    /// Uniform: one uniform draw. Bimodal: one draw picks the mode, one the value.
    /// Exponential: one draw, by inversion of the truncated CDF.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
        if let Some((a, b)) = self.uniform_range() {
            return uniform(rng, a, b);
        }
        if let Some(p) = self.bimodal_light_probability() {
            return if unit(rng) < p {
                // [0.001, 0.5): a value rounding up to 0.5 is measure-zero; keep it below.
                let x = LIGHT_MIN + (BIMODAL_SPLIT - LIGHT_MIN) * unit(rng);
                if x < BIMODAL_SPLIT {
                    x
                } else {
                    BIMODAL_SPLIT.next_down()
                }
            } else {
                uniform(rng, BIMODAL_SPLIT, HEAVY_MAX)
            };
        }
        let mu = self.exp_mean().unwrap_or(1.0);
        let mass = -(-1.0 / mu).exp_m1(); // 1 - e^(-1/mu), P(X <= 1)
        let v = open01(rng);
        let x = -mu * (-v * mass).ln_1p();
        if x > 0.0 {
            x.min(1.0)
        } else {
            f64::MIN_POSITIVE
        }
    }
}

pub(crate) fn check_count(count: &Count) -> Result<(), ModelError> {
    match *count {
        Count::Fixed(0) => Err(ModelError::field("n", "the number of tasks must be at least 1, got 0")),
        Count::Fixed(n) if n > crate::util::MAX_TASKS => {
            Err(ModelError::field("n", format!("at most {} tasks are supported, got {n}", crate::util::MAX_TASKS)))
        }
        Count::Fixed(_) => Ok(()),
        Count::Cap(c) if !(c.is_finite() && c > 0.0) => {
            Err(ModelError::field("cap", format!("the utilization cap must be a finite number > 0, got {c}")))
        }
        Count::Cap(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dist::ALL {
            assert_eq!(Dist::from_name(d.name()).unwrap(), d);
        }
        assert_eq!(Dist::from_name(" Uniform-Light ").unwrap(), Dist::UniformLight);
        let e = Dist::from_name("uniform-lite").unwrap_err();
        assert_eq!(e.field.as_deref(), Some("dist"));
        assert!(e.to_string().contains("bimodal-heavy"), "{e}");
    }

    #[test]
    fn truncated_exponential_means() {
        // mu - e^(-1/mu)/(1 - e^(-1/mu)), computed by hand.
        assert!((Dist::ExpLight.mean() - 0.099_954_6).abs() < 1e-6);
        assert!((Dist::ExpMedium.mean() - 0.231_342_6).abs() < 1e-6);
        assert!((Dist::ExpHeavy.mean() - 0.343_482_6).abs() < 1e-6);
    }
}
