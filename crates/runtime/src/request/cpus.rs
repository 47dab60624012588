//! The run's CPUs: the ones given or the first the process may use, the refusal (or `--force`
//! warning) of a workload too big for them, and the dedicated CPU's advice.

use super::*;

/// `"0,1,3"`.
pub(super) fn cpu_text(cpus: &[usize]) -> String {
    cpus.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// Python's `format(x, ".4g")`: four significant digits, trailing zeros dropped, scientific
/// notation below 1e-4 and from 1e4 (what the utilization in a refusal has always read like).
pub(super) fn fmt_g4(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return if x == 0.0 { "0".into() } else { x.to_string() };
    }
    let sci = format!("{x:.3e}"); // mantissa rounded to 4 digits, e.g. "1.500e0"
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if (-4..4).contains(&exp) {
        trim(format!("{x:.*}", (3 - exp) as usize))
    } else {
        format!("{}e{}{:02}", trim(mant.to_string()), if exp < 0 { '-' } else { '+' }, exp.abs())
    }
}

/// What to pass to run mechanism `name`, which needs a CPU of its own for `role`, on a
/// machine whose process may use `allowed` (`cpus`: the task CPUs the user chose, kept apart
/// from the suggested dedicated one; `ts_m`: the processor count the task set is made for).
pub fn dedicated_advice(
    name: &str,
    role: &str,
    ts_m: Option<u64>,
    dedicated_cpu: Option<usize>,
    allowed: &[usize],
    cpus: Option<&[usize]>,
) -> String {
    let mut allowed = allowed.to_vec();
    allowed.sort_unstable();
    if allowed.len() < 2 {
        return format!(
            "{name} needs a CPU of its own for {role} (--dedicated-cpu N; Python: dedicated_cpu=N) besides the CPUs \
             that run the tasks, so at least 2 CPUs, but this process may use {} ({})",
            allowed.len(),
            cpu_text(&allowed)
        );
    }
    let free: Vec<usize> = allowed.iter().copied().filter(|c| !matches!(cpus, Some(cs) if cs.contains(c))).collect();
    let d = dedicated_cpu.unwrap_or(*free.first().unwrap_or(&allowed[0]));
    let rest: Vec<usize> = allowed.iter().copied().filter(|&c| c != d).collect();
    let m_here = rest.len();
    let mut msg = format!("{name} needs a CPU of its own for {role} (--dedicated-cpu N; Python: dedicated_cpu=N)");
    if dedicated_cpu.is_none() {
        msg += "; none was given";
    }
    let this = match ts_m {
        Some(m) if m > m_here as u64 => format!(" (this one is made for m = {m})"),
        _ => String::new(),
    };
    format!(
        "{msg}. This process may use {} CPUs ({}): with --dedicated-cpu {d} the tasks run on the other CPU{} ({}), so \
         give a task set for m ≤ {m_here}{this}",
        allowed.len(),
        cpu_text(&allowed),
        if m_here > 1 { "s" } else { "" },
        cpu_text(&rest)
    )
}

/// The CPUs a run of `ts` uses and the warnings to say: `cpus` if given, else the first `m` of
/// `allowed` (one when the set has no `m`; the dedicated CPU left out). A task set made for
/// more CPUs than the run has (its `m`), or whose utilization exceeds their number (exactly),
/// is refused with the numbers, or with `force` run anyway with a warning: its deadline misses
/// would be the CPU count's, not the scheduler's.
pub fn decide_cpus(
    ts: &TaskSet,
    m: Option<u32>,
    cpus: Option<&[usize]>,
    allowed: &[usize],
    dedicated_cpu: Option<usize>,
    force: bool,
) -> Result<(Vec<usize>, Vec<String>), RunError> {
    let cpu_list = match cpus {
        None => {
            let mut allowed: Vec<usize> = allowed.iter().copied().filter(|&c| Some(c) != dedicated_cpu).collect();
            allowed.sort_unstable();
            let want = m.map_or(1, |m| m.max(1) as usize);
            if want > allowed.len() && !force {
                let (besides, fewer) = match dedicated_cpu {
                    None => (String::new(), "fewer CPUs".to_string()),
                    Some(d) => (
                        format!(", besides the dedicated CPU {d}"),
                        format!("m ≤ {} (with --dedicated-cpu {d} the tasks get the other CPUs)", allowed.len()),
                    ),
                };
                return Err(RunError::input(format!(
                    "the task set is made for m = {want} CPUs, but this process may use {} ({}{besides}); give a \
                     task set for {fewer}, or --force to run it on these anyway",
                    allowed.len(),
                    cpu_text(&allowed)
                )));
            }
            allowed.truncate(want);
            allowed
        }
        Some(cpus) => {
            if let Some(d) = dedicated_cpu.filter(|d| cpus.contains(d)) {
                return Err(RunError::Model(ModelError::field(
                    "dedicated_cpu",
                    format!(
                        "CPU {d} is also in cpus {}; the dedicated CPU runs the mechanism's service thread and no \
                         task: list only the task CPUs in cpus (--cpus)",
                        cpu_text(cpus)
                    ),
                )));
            }
            cpus.to_vec()
        }
    };
    let k = cpu_list.len();
    let mut over = Vec::new();
    if let Some(m) = m.filter(|&m| m as usize > k) {
        over.push(format!("is made for m = {m} CPUs"));
    }
    if !ts.utilization_at_most(k as u64) {
        over.push(format!("has utilization U = {} > {k}", fmt_g4(ts.utilization_f64())));
    }
    if over.is_empty() {
        return Ok((cpu_list, Vec::new()));
    }
    let msg = format!(
        "the task set {}, but the run has {k} CPU{} ({})",
        over.join(" and "),
        if k != 1 { "s" } else { "" },
        cpu_text(&cpu_list)
    );
    if !force {
        return Err(RunError::input(format!(
            "{msg}; give --cpus with enough CPUs (or a task set for these), or --force to run it anyway"
        )));
    }
    let warning =
        format!("{msg}; running anyway (--force): its deadline misses come from the CPU count, not the scheduler");
    Ok((cpu_list, vec![warning]))
}

/// The CPUs of a fork-join run: `cpus` if given, else the first `m` of `allowed` (one when the
/// file has no `m`); a file made for more CPUs than allowed is refused unless `force` (then
/// every allowed CPU).
pub fn decide_forkjoin_cpus(
    m: Option<u32>,
    cpus: Option<&[usize]>,
    allowed: &[usize],
    force: bool,
) -> Result<Vec<usize>, RunError> {
    if let Some(cpus) = cpus {
        return Ok(cpus.to_vec());
    }
    let mut allowed = allowed.to_vec();
    allowed.sort_unstable();
    if let Some(m) = m.filter(|&m| m as usize > allowed.len()) {
        if !force {
            return Err(RunError::input(format!(
                "the file is made for m = {m} CPUs but this process may use {}; pass --cpus",
                allowed.len()
            )));
        }
    }
    allowed.truncate(m.map_or(1, |m| m.max(1) as usize));
    Ok(allowed)
}
