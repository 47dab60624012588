//! One release domain shared by several threads: the release "timer interrupt" of the global
//! mechanisms that have a single release queue (GSN-EDF, the RTSS'09 plugins, RTWS, G-EDF-MP).
//! Who polls it is the interrupt choice of Brandenburg & Anderson, RTSS 2009, §3: I1 *global*,
//! every worker (whichever sees a release due handles it, like a timer interrupt on whichever
//! CPU it fires), or I2 *dedicated*, only the service thread on the dedicated CPU (thread index
//! `m`). The next due time is published lock-free and claimed by compare-and-swap, so that one
//! poller handles each due time ([`Plugin::try_claim_release`](super::Plugin::try_claim_release)).

use crossbeam_utils::CachePadded;
use std::sync::atomic::{AtomicU64, Ordering};

/// The one release domain (index 0) of a plugin and its next due time (see the module docs).
pub(crate) struct ReleaseDomain {
    dedicated: bool,
    m: usize,
    next: CachePadded<AtomicU64>,
}

impl ReleaseDomain {
    /// Polled by the `m` workers (`dedicated = false`) or by the service thread `m` only; the
    /// first release is due at `first_due`.
    pub(crate) fn new(dedicated: bool, m: usize, first_due: u64) -> ReleaseDomain {
        ReleaseDomain { dedicated, m, next: CachePadded::new(AtomicU64::new(first_due)) }
    }

    /// The release domain thread `thread` polls: every worker (I1), or the service thread with
    /// index `m` only (I2).
    pub(crate) fn domain(&self, thread: usize) -> Option<usize> {
        match (self.dedicated, thread < self.m) {
            (false, true) | (true, false) => Some(0),
            _ => None,
        }
    }

    /// The next due release (`u64::MAX`: none, or claimed and being handled); lock-free.
    pub(crate) fn next(&self) -> u64 {
        self.next.load(Ordering::Acquire)
    }

    /// Claims the release due at `due`: false if another poller took it first.
    pub(crate) fn claim(&self, due: u64) -> bool {
        self.next.compare_exchange(due, u64::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok()
    }

    /// Publishes the next due release (under the lock of the job book, after the handler's
    /// work).
    pub(crate) fn set(&self, due: u64) {
        self.next.store(due, Ordering::Release);
    }
}

/// The [`Plugin`](super::Plugin) methods of a plugin whose one release domain is its field
/// `$field` (a [`ReleaseDomain`]): one domain, polled as the domain says, claimed by CAS.
macro_rules! one_release_domain {
    ($field:ident) => {
        fn release_domains(&self) -> usize {
            1
        }
        fn release_domain(&self, thread: usize) -> Option<usize> {
            self.$field.domain(thread)
        }
        fn next_release(&self, _domain: usize) -> u64 {
            self.$field.next()
        }
        fn try_claim_release(&self, _domain: usize, due: u64) -> bool {
            self.$field.claim(due)
        }
    };
}
pub(crate) use one_release_domain;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interrupts_decide_who_polls_releases() {
        let global = ReleaseDomain::new(false, 2, 5);
        assert_eq!((global.domain(0), global.domain(1), global.domain(2)), (Some(0), Some(0), None));
        let dedicated = ReleaseDomain::new(true, 2, 5);
        assert_eq!((dedicated.domain(0), dedicated.domain(1), dedicated.domain(2)), (None, None, Some(0)));
        assert!(!global.claim(4) && global.claim(5) && !global.claim(5));
        assert_eq!(global.next(), u64::MAX);
        global.set(9);
        assert_eq!(global.next(), 9);
    }
}
