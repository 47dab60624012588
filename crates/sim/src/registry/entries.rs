//! The registered schedulers, one `static` [`Entry`] each, and [`ENTRIES`], their order in
//! every listing (split from `registry.rs`; the module notes there say how to add one).

use super::*;

/// The registry, in the order listings show it.
pub static ENTRIES: &[&Entry] =
    &[&GEDF, &GEDF_QUANTUM, &GFP, &GFL, &EDZL, &LLF, &PD2, &PEDF, &PFP, &SPRES, &RTWS, &RUN, &QPS, &FEDERATED];

/// The partition a [`PlacementKind::Partition`] builder was given.
fn partition(s: &mut Setup<'_>) -> Result<Vec<Vec<usize>>, ModelError> {
    s.partition.take().ok_or_else(|| ModelError::field("placement", format!("{} needs a partition", s.name)))
}

pub static GEDF: Entry = Entry {
    name: "gedf",
    summary: "event-driven global EDF, link-based (Brandenburg & Anderson, RTSS 2009, §3); a fork-join set runs \
              over its threads, a DAG set over its ready nodes",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads { sporadic: true, fork_join: true, dag: true },
    build: |_| Ok(Scheduler::Gedf),
};

pub static GEDF_QUANTUM: Entry = Entry {
    name: "gedf-quantum",
    summary: "quantum-driven global EDF, aligned or staggered quanta (Brandenburg & Anderson, RTSS 2009, §2)",
    params: &[
        ParamSpec { name: "quantum", kind: ParamKind::Duration, default: "1ms", help: "the quantum" },
        ParamSpec {
            name: "staggered",
            kind: ParamKind::Bool,
            default: "false",
            help: "staggered instead of aligned quanta",
        },
    ],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |s| {
        Ok(Scheduler::GedfQuantum {
            quantum: s.params.duration("quantum").unwrap_or(1_000_000),
            staggered: s.params.flag("staggered").unwrap_or(false),
        })
    },
};

pub static GFP: Entry = Entry {
    name: "gfp",
    summary: "event-driven global preemptive fixed priority, link-based like gedf; DM, RM or given ranks; a DAG \
              set over its ready nodes (task-level priorities)",
    params: &[ParamSpec {
        name: "priorities",
        kind: ParamKind::Priorities,
        default: "dm",
        help: "dm (deadline monotonic), rm (rate monotonic), or one integer rank per task, comma-separated \
               (smaller = higher, ties by task index)",
    }],
    placement: PlacementKind::None,
    workloads: Workloads { sporadic: true, fork_join: false, dag: true },
    build: |s| {
        // The task set's own priorities (its file's `priority` fields) unless given here.
        if let (false, Some(ranks)) = (s.params.given("priorities"), s.ts.priorities()) {
            return Ok(Scheduler::Gfp { ranks: ranks.to_vec(), order: None });
        }
        let text = s.params.text("priorities").unwrap_or("dm");
        let order = match text.trim().to_ascii_lowercase().as_str() {
            "dm" => Some(FpOrder::DeadlineMonotonic),
            "rm" => Some(FpOrder::RateMonotonic),
            _ => None,
        };
        match PriorityRule::fixed_from_text(s.ts, text).map_err(|e| e.in_scheduler(s.name))? {
            PriorityRule::Fixed(ranks) => Ok(Scheduler::Gfp { ranks, order }),
            PriorityRule::Edf => Err(ModelError::field("priorities", "not a fixed-priority rule")),
        }
    },
};

pub static GFL: Entry = Entry {
    name: "gfl",
    summary: "G-FL, global fair lateness: gedf with priority points r + D − (m−1)/m·C, compared exactly \
              (Erickson & Anderson, ECRTS 2012)",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Gfl),
};

pub static EDZL: Entry = Entry {
    name: "edzl",
    summary: "EDZL: global EDF in which a waiting job reaching zero laxity gets the highest priority (Lee, RTCSA \
              1994; Cirinei & Baker, ECRTS 2007)",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Edzl),
};

pub static LLF: Entry = Entry {
    name: "llf",
    summary: "LLF, least laxity first on m CPUs (Mok 1983; Dertouzos & Mok, IEEE TSE 1989): laxity against the \
              WCET, decisions at job events and every quantum, ties by deadline then task",
    params: &[ParamSpec {
        name: "quantum",
        kind: ParamKind::Duration,
        default: "1ms",
        help: "decisions also at every multiple of the quantum (bounds LLF's switching on laxity ties)",
    }],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |s| Ok(Scheduler::Llf { quantum: s.params.duration("quantum").unwrap_or(1_000_000) }),
};

pub static PD2: Entry = Entry {
    name: "pd2",
    summary: "PD², Pfair in slots of one quantum (Anderson & Srinivasan, ECRTS 2000 / JCSS 2004; Baruah et al., \
              Algorithmica 1996); periodic, C and T = D whole quanta",
    params: &[ParamSpec {
        name: "quantum",
        kind: ParamKind::Duration,
        default: "1ms",
        help: "the slot length Q (every WCET, period and offset a multiple of it)",
    }],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |s| Ok(Scheduler::Pd2 { quantum: s.params.duration("quantum").unwrap_or(1_000_000) }),
};

pub static PEDF: Entry = Entry {
    name: "pedf",
    summary: "partitioned EDF",
    params: &[],
    placement: PlacementKind::Partition(Admission::Edf),
    workloads: Workloads::SPORADIC,
    build: |mut s| Ok(Scheduler::Pedf(partition(&mut s)?)),
};

pub static PFP: Entry = Entry {
    name: "pfp",
    summary: "partitioned fixed priority, deadline monotonic",
    params: &[],
    placement: PlacementKind::Partition(Admission::Fp(Priority::DeadlineMonotonic)),
    workloads: Workloads::SPORADIC,
    build: |mut s| Ok(Scheduler::Pfp(partition(&mut s)?, FpOrder::DeadlineMonotonic)),
};

pub static SPRES: Entry = Entry {
    name: "spres",
    summary: "semi-partitioned reservations executing a placement (Brandenburg & Gül, RTSS 2016, §III-A, §IV-A)",
    params: &[
        ParamSpec { name: "cash", kind: ParamKind::Bool, default: "false", help: "CASH slack reclamation" },
        ParamSpec {
            name: "soft",
            kind: ParamKind::Bool,
            default: "false",
            help: "unsplit reservations soft too (split parts always are)",
        },
        ParamSpec {
            name: "background",
            kind: ParamKind::Choice(&Background::NAMES),
            default: "round-robin",
            help: "how depleted soft reservations share the background",
        },
        ParamSpec {
            name: "rr_quantum",
            kind: ParamKind::Duration,
            default: "1ms",
            help: "the background round-robin quantum",
        },
        ParamSpec {
            name: "suspension",
            kind: ParamKind::Choice(&Suspension::NAMES),
            default: "keep",
            help: "a self-suspending job's budget while suspended: keep (charged only while it executes) or donate \
                   (CASH slack, what is left regained at the wake-up: RTSS 2016 §VIII; needs cash)",
        },
    ],
    placement: PlacementKind::Reservations,
    workloads: Workloads::SPORADIC,
    build: |s| {
        let p = s.params;
        let rule = p.text("background").unwrap_or("round-robin");
        if rule != "round-robin" && p.given("rr_quantum") {
            return Err(ModelError::field("rr_quantum", "applies only with background round-robin"));
        }
        let background = Background::parse(rule, p.duration("rr_quantum").unwrap_or(1_000_000))?;
        let placement =
            s.reservations.ok_or_else(|| ModelError::field("placement", "spres needs a reservation placement"))?;
        let cash = p.flag("cash").unwrap_or(false);
        let suspension = Suspension::parse(p.text("suspension").unwrap_or("keep"), cash)?;
        Ok(Scheduler::Spres(SpresConfig {
            placement,
            soft_unsplit: p.flag("soft").unwrap_or(false),
            cash,
            background,
            suspension,
        }))
    },
};

pub static RTWS: Entry = Entry {
    name: "rtws",
    summary: "global EDF with priority-aware work stealing (Nogueira, Fonseca, Maia & Pinho, EUC 2012); a \
              sequential task is one region of one thread",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::BOTH,
    build: |_| Ok(Scheduler::Rtws),
};

pub static RUN: Entry = Entry {
    name: "run",
    summary: "RUN, optimal by reduction to uniprocessor: servers packed first-fit decreasing, DUAL and PACK to unit \
              servers, EDF at each level (Regnier, Lima, Massa, Levin & Brandt, RTSS 2011); implicit deadlines, \
              periodic releases, U ≤ m",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Run),
};

pub static FEDERATED: Entry = Entry {
    name: "federated",
    summary: "federated scheduling of DAG tasks (Li, Chen, Agrawal, Lu & Gill, ECRTS 2014): dedicated CPUs per \
              high-utilization task, greedy over its nodes; light tasks sequential under EDF, partitioned first-fit \
              decreasing density with exact EDF (QPA) admission",
    params: &[],
    placement: PlacementKind::Federated,
    workloads: Workloads { sporadic: false, fork_join: false, dag: true },
    build: |s| {
        s.federated
            .map(Scheduler::Federated)
            .ok_or_else(|| ModelError::field("scheduler", "federated schedules DAG task sets"))
    },
};

pub static QPS: Entry = Entry {
    name: "qps",
    summary: "QPS, quasi-partitioned: minor execution sets under EDF on one CPU, major sets switching between \
              partitioned EDF and master/slave servers on two CPUs as their load varies (Massa, Lima, Regnier, Levin & \
              Brandt, RTS 2016); partitioned EDF when worst or first fit places the set; implicit deadlines, periodic releases, U ≤ m",
    params: &[],
    placement: PlacementKind::None,
    workloads: Workloads::SPORADIC,
    build: |_| Ok(Scheduler::Qps),
};
