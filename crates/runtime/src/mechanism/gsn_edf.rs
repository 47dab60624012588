//! GSN-EDF and GSN-EDF-DI: LITMUS^RT's names (`sched_gsn_edf.c`, Brandenburg 2007–) for the
//! RTSS'09 plugins CEm and CE1 (Brandenburg & Anderson, RTSS 2009): registered aliases, each
//! the same entry as its plugin but for the name and summary. The plugin is [`GsnEdf`]
//! (`mechanism::design_space::coarse`).

use crate::mechanism::registry::Entry;
use crate::mechanism::design_space::{CE1_ENTRY, CEM_ENTRY};

pub use crate::mechanism::design_space::coarse::GsnEdf;

/// GSN-EDF: releases handled by whichever worker sees them due — the CEm design of the RTSS'09
/// family (`mechanism::design_space`), registered under LITMUS^RT's name as an alias of `cem`.
pub static GSN_EDF: Entry = Entry {
    name: "gsn-edf",
    summary: "global EDF, one global lock over a binomial-heap ready queue and the CPU heap (LITMUS^RT \
              GSN-EDF; alias of cem: Brandenburg & Anderson, RTSS 2009)",
    ..CEM_ENTRY
};

/// GSN-EDF-DI: releases on the dedicated CPU — the CE1 design, an alias of `ce1`.
pub static GSN_EDF_DI: Entry = Entry {
    name: "gsn-edf-di",
    summary: "GSN-EDF with dedicated interrupt handling: a service thread on the dedicated CPU releases jobs \
              (Cerqueira et al., RTAS 2014, §II-B; alias of ce1: RTSS 2009)",
    ..CE1_ENTRY
};
