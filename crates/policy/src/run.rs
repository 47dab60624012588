//! RUN, "Reduction to UNiprocessor" (Regnier, Lima, Massa, Levin & Brandt, "RUN: Optimal
//! Multiprocessor Real-Time Scheduling via Reduction to Uniprocessor", RTSS 2011): an optimal
//! scheduler of implicit-deadline periodic tasks with total utilization `U ≤ m`.
//!
//! # Offline: the reduction ([`Reduction::build`])
//!
//! Every task is a *fixed-rate server* (a leaf) of rate `C/T` whose deadline set is its job
//! deadlines. Servers are exact rationals (the model's [`Rational`]).
//! * **PACK**: first-fit decreasing — servers in decreasing rate order (ties: earlier first),
//!   each into the first packed server whose rate stays `≤ 1`, else into a new one. A packed
//!   server's rate is the sum of its clients' rates and its deadline set their union. (The
//!   paper allows any packing; first fit has the property the level bound below needs: no two
//!   packed servers fit together, i.e. every two rates sum to more than 1.)
//! * **Idle fill** (`U < m`): after the first PACK, idle leaves of total rate `m − U` are added,
//!   filling the packed servers in order to rate 1 (`min(1 − ρ, what is left)` each), then new
//!   servers of one idle leaf each; an idle leaf's deadlines are its server's other clients'.
//!   The system is then fully utilized, as the paper's reduction assumes; a set that first fit
//!   places on `m` processors becomes `m` unit servers, i.e. partitioned EDF.
//! * **Unit servers**: a packed server of rate exactly 1 is the root of a *proper subsystem*
//!   and is removed from the reduction; it gets processors of its own (as many as its leaves'
//!   total rate, an integer) and always runs.
//! * **DUAL**: every remaining packed server `S` gets a dual `S*` of rate `1 − ρ(S)` and the same
//!   deadlines; the duals are PACKed into the next level. DUAL then PACK repeats until no
//!   server is left. Each round at least halves the number of non-unit servers (any two duals
//!   fit together, so first fit puts at least two in every server but the last), so a
//!   subsystem's reduction level `p` (the number of DUAL rounds above its leaves) is at most
//!   `⌈log₂ k⌉` for the `k < 2m` non-unit servers of the first PACK ([`Reduction::level_bound`]).
//!
//! # Online: [`Run`]
//!
//! A server's *release instants* are its deadlines: at each, its budget becomes
//! `ρ · (d − t)` for its next deadline `d`. A server consumes budget while it runs. At every
//! scheduling event (a deadline of any leaf, or a running server's budget reaching zero):
//! * a subsystem's root always runs;
//! * a running packed server runs its client with budget left and the earliest deadline (EDF;
//!   ties: the client that ran last, then the earlier client), the others do not;
//! * a dual server runs exactly when its primal does not (the dual rule);
//! * the leaves that run are the tasks to run (an idle leaf's processor idles; a task leaf
//!   runs its pending job, or idles if it has none — RUN as published is not work-conserving).
//!
//! Processors: each subsystem owns a fixed set of CPUs; a task that ran at the previous event
//! keeps its CPU, and a task that starts takes the CPU it last ran on if that one is free,
//! else the free CPU of its subsystem with the smallest index.
//!
//! Time: budgets are `ρ · (d − t)` with integer `d − t`, so every event instant is a multiple
//! of `1/L` ns, `L` the least common multiple of the rates' denominators (a divisor of the
//! hyperperiod). The online state counts time in these *ticks* of `1/L` ns, exactly, in
//! 128-bit integers ([`Reduction::scale`]).

mod online;
mod reduction;

pub use online::{Run, RunViolation};
pub use reduction::{Kind, Node, Reduction, Subsystem};

#[cfg(test)]
mod tests;
