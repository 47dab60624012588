//! SP-RES placement on arbitrary small task sets: every heuristic and the cascade must return a
//! placement that the independent checker approves, or "not placed" with a reason — never a
//! panic, an overflow (overflow checks are on) or a hang — and the placement JSON must round-trip.
#![no_main]
use libfuzzer_sys::fuzz_target;
#[path = "common.rs"]
mod common;
use rtsched_analysis::semi::{cascade, check, place, Heuristic, Placement, SemiConfig};
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
    let cfg =
        SemiConfig { epsilon, limits: Limits { max_steps: 5_000, max_interval: 1 << 40, ..Limits::default() }, ..SemiConfig::default() };
    let verify = |p: &Placement| {
        if p.schedulable {
            assert!(check(&ts, p).is_ok(), "{:?} on {ts:?}: {:?}", p.heuristic, check(&ts, p));
            let back = Placement::from_json(&p.to_json(), &ts).expect("own JSON parses");
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
