//! SP-RES placement on arbitrary small task sets: every heuristic and the cascade must return a
//! placement that the independent checker approves, or "not placed" with a reason — never a
//! panic, an overflow (overflow checks are on) or a hang — and the placement JSON must round-trip.
//! Every option is fuzzed: both readings (text, artifact), both RP modes with floors from 1 ns
//! to 4 ms and candidate periods that do or do not divide the tasks' periods, both slice orders,
//! and merging of same-processor pieces.
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common.rs"]
mod common;
use rtsched_analysis::semi::{
    cascade, check, place, Heuristic, Placement, RpMode, SemiConfig, SliceOrder, Variant, PAPER_PERIODS_NS,
};
use rtsched_analysis::Limits;
use rtsched_model::MAX_TIME;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter().copied();
    let head = bytes.next().unwrap_or(0);
    let n = (head % 7) as usize + 1;
    let m = (head / 7 % 4) as u32 + 1;
    let eps_sel = bytes.next().unwrap_or(0);
    let ts = common::task_set(n, &mut bytes);
    let epsilon = match eps_sel % 4 {
        0 => 0,
        1 => (eps_sel / 4) as u64,
        2 => 1 << 30,
        _ => MAX_TIME,
    };
    let opt = bytes.next().unwrap_or(0);
    let rp_periods: Vec<u64> = match opt >> 6 {
        0 => PAPER_PERIODS_NS.to_vec(),
        1 => vec![1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64],
        // The tasks' own periods and some of their divisors.
        2 => ts.iter().flat_map(|t| [t.period, t.period / 2, t.period / 3, t.period / 5]).collect(),
        _ => (0..4).map(|_| common::time(&mut bytes)).collect(),
    };
    let cfg = SemiConfig {
        epsilon,
        variant: if opt & 1 == 0 { Variant::Artifact } else { Variant::Text },
        rp: if opt & 2 == 0 { RpMode::Divisor } else { RpMode::Halving },
        slice_order: if opt & 4 == 0 { SliceOrder::Flipped } else { SliceOrder::DeadlineDesc },
        merge_same_core: opt & 8 != 0,
        rp_floor: [1, 2, 4, 4_000_000][(opt >> 4 & 3) as usize],
        rp_periods,
        limits: Limits { max_steps: 5_000, max_interval: 1 << 40, ..Limits::default() },
        ..SemiConfig::default()
    };
    let verify = |p: &Placement| {
        if p.schedulable {
            assert!(check(&ts, p).is_ok(), "{:?} on {ts:?}: {:?}", p.heuristic, check(&ts, p));
            let back = Placement::from_value(&p.to_json(), &ts).expect("own JSON parses");
            assert_eq!(&back, p);
        } else {
            assert!(p.reason.is_some());
        }
    };
    let sel = data.last().copied().unwrap_or(0) as usize;
    let all = Heuristic::all();
    verify(&place(&ts, m, &all[sel % all.len()], &cfg));
    verify(&cascade(&ts, m, &cfg));
});
