//! Preemption-centric interrupt accounting in integer arithmetic, shared by every rule.
//!
//! Source: the preemption-centric interrupt accounting of Brandenburg, Leontyev & Anderson,
//! "Accounting for interrupts in multiprocessor real-time systems", RTCSA 2009 (cited by
//! Brandenburg & Anderson, RTSS 2009, §2 as [8]), in the form Cerqueira, Vanga & Brandenburg,
//! RTAS 2014, Appendix B quote from Brandenburg's dissertation (2011, §3.4.5):
//!
//! ```text
//! U_tck = Δtck / Q                       utilization of the periodic tick
//! u_irq = Σ_i c_i / T_i                  utilization of the other interrupt sources
//! uscale = 1 − U_tck − u_irq             the fraction of a processor left to jobs
//! Cpre  = (Δtck + B + Δev · (U_tck + u_irq)) / uscale
//! ```
//!
//! where `B` is the burst of the other sources (every source firing once at the same time;
//! for release interrupts on all processors `B = n · Δrel`). A job's execution cost is then
//! scaled by `1 / uscale` (interrupts arriving while it runs) and charged `2 · Cpre` (one
//! burst of interrupts at its start and one when it is preempted). With dedicated interrupt
//! handling `u_irq = B = 0`.
//!
//! Exactness: all arithmetic is integer. Utilizations are rounded **up** to multiples of
//! 2^-32 (so `uscale` is rounded **down**) and every division rounds up, so each inflated
//! cost is at least its exact rational value and exceeds it by at most a few ns. The
//! verdicts of the tests that judge the inflated set are exact (docs/overheads.md).

use rtsched_model::Time;

/// Fixed-point unit of the interrupt utilizations: 2^-32.
pub(crate) const ONE: u128 = 1 << 32;

/// `num / d` rounded up (`d > 0`), in 64-bit arithmetic when both fit (the common case: a
/// 128-bit division is a library call several times slower, and this runs a few times per task).
pub(crate) fn div_ceil(num: u128, d: u128) -> u128 {
    if num <= u64::MAX as u128 && d <= u64::MAX as u128 {
        (num as u64).div_ceil(d as u64) as u128
    } else {
        num.div_ceil(d)
    }
}

/// `x · 2^32 / d` rounded up (`d > 0`).
fn mul_one_div_ceil(x: u128, d: u128) -> u128 {
    div_ceil(x * ONE, d)
}

/// `x · ONE / d` rounded up (`d > 0`).
pub(crate) fn util_up(x: u128, d: u128) -> u128 {
    mul_one_div_ceil(x, d)
}

/// Interrupt load of one processor (or of any processor, when all sources may fire on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Interrupts {
    /// Tick utilization `U_tck`, in units of 2^-32, rounded up.
    pub tick_util: u128,
    /// Utilization of the other sources `u_irq`, in units of 2^-32, rounded up.
    pub irq_util: u128,
    /// `Δtck + B`: the cost of one burst of every source, ns.
    pub burst: u128,
    /// `Δev`, ns (each source's handler may start up to `Δev` late).
    pub latency: u128,
}

impl Interrupts {
    /// The periodic tick alone: `Δtck` every `quantum` ns.
    pub fn tick(tick: Time, quantum: Time, latency: Time) -> Interrupts {
        Interrupts {
            tick_util: util_up(tick as u128, quantum.max(1) as u128),
            irq_util: 0,
            burst: tick as u128,
            latency: latency as u128,
        }
    }

    /// Adds a periodic source of `cost` ns every `period` ns (one release timer, ...).
    pub fn add(&mut self, cost: u128, period: Time) {
        self.add_source(cost, period, cost);
    }

    /// Adds a source that costs `per_period` ns of handler time every `period` ns, of which at
    /// most `burst` ns can be pending at one instant.
    pub fn add_source(&mut self, per_period: u128, period: Time, burst: u128) {
        if per_period > 0 {
            self.irq_util += util_up(per_period, period.max(1) as u128);
        }
        self.burst += burst;
    }

    /// `uscale · 2^32`, rounded down; `None` when the interrupts alone saturate a processor.
    pub fn scale(&self) -> Option<u128> {
        let used = self.tick_util + self.irq_util;
        (used < ONE).then(|| ONE - used)
    }

    /// `Cpre` in ns, rounded up, given `scale = uscale · 2^32`.
    pub fn cpre(&self, scale: u128) -> u128 {
        if self.burst == 0 && self.latency == 0 {
            return 0;
        }
        let num = self.burst * ONE + self.latency * (self.tick_util + self.irq_util);
        div_ceil(num, scale)
    }
}

/// `x / uscale` rounded up, given `scale = uscale · 2^32`.
pub(crate) fn scaled(x: u128, scale: u128) -> u128 {
    if scale == ONE {
        return x; // no interrupt load: exact, and the common case of the dedicated rules
    }
    mul_one_div_ceil(x, scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ceiling_division_agrees_with_128_bit_arithmetic() {
        let mut x: u128 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            // xorshift over numerators and divisors of every size, near powers of two included
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x &= (1 << 100) - 1;
            let shift = (x % 96) as u32;
            let num = (x >> (x % 64) as u32) & ((1u128 << (shift + 1)) - 1);
            let d = ((x >> 20) % (1u128 << ((x >> 90) % 63 + 1))).max(1);
            assert_eq!(div_ceil(num, d), num.div_ceil(d), "{num} / {d}");
        }
        for (n, d) in [(0, 1), (1, 1), ((1 << 64) - 1, 3), ((1 << 50) * 7 + 1, 7), (u64::MAX as u128, u64::MAX as u128)]
        {
            assert_eq!(div_ceil(n, d), n.div_ceil(d));
        }
    }

    #[test]
    fn tick_only_matches_the_rational_formula() {
        // Δtck = 10 µs per 1 ms: U_tck = 1/100, uscale = 99/100, Δev = 5 µs.
        let irq = Interrupts::tick(10_000, 1_000_000, 5_000);
        let s = irq.scale().unwrap();
        // Cpre = (10000 + 5000/100) / (99/100) = 10050 · 100/99 = 10151.51... → 10152.
        assert_eq!(irq.cpre(s), 10_152);
        // 1 ms of execution: 1e6 · 100/99 = 1010101.01... → 1010102.
        assert_eq!(scaled(1_000_000, s), 1_010_102);
    }

    #[test]
    fn saturation_is_none() {
        let mut irq = Interrupts::tick(0, 1_000_000, 0);
        irq.add(5, 10);
        irq.add(5, 10);
        assert_eq!(irq.scale(), None);
    }

    #[test]
    fn rounding_is_never_below_the_exact_value() {
        // Release interrupts of 3 ns every 7, 11, 13 ns: u = 3/7 + 3/11 + 3/13 = 0.9317...
        let mut irq = Interrupts::tick(0, 1, 0);
        for p in [7, 11, 13] {
            irq.add(3, p);
        }
        let s = irq.scale().unwrap();
        // uscale = 1 − 3/7 − 3/11 − 3/13 = 68/1001; 100 / uscale = 1472.05... → at least 1473.
        let v = scaled(100, s);
        assert!((1473..=1474).contains(&v), "{v}");
        // Cpre = 9 / (68/1001) = 132.48... → at least 133.
        let c = irq.cpre(s);
        assert!((133..=134).contains(&c), "{c}");
    }
}
