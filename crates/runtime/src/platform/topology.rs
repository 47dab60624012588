//! CPU topology as the machine reports it: which CPUs share a last-level cache
//! (`/sys/devices/system/cpu/cpuN/cache/indexK/{level,shared_cpu_list}`) — the clusters
//! G-EDF-MP gives one mailbox each (Cerqueira, Vanga & Brandenburg, RTAS 2014, §III-B: "one
//! mailbox per socket that is shared only by cores on the same die").

use std::fs;
use std::path::Path;

/// What could not be read or parsed of the machine's topology (the file and why, or the bad
/// item of a CPU list).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TopologyError(pub String);

impl From<String> for TopologyError {
    fn from(s: String) -> TopologyError {
        TopologyError(s)
    }
}

/// Parses a kernel CPU list (`0-3,8,10-11`; blanks around items allowed) into ascending,
/// distinct CPU numbers. Refuses an empty list, a malformed item or a reversed range.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, TopologyError> {
    let mut out = Vec::new();
    for item in s.trim().split(',') {
        let item = item.trim();
        let num = |x: &str| x.trim().parse::<usize>().map_err(|_| format!("'{x}' in the CPU list '{s}' is not a CPU"));
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("the range '{item}' in the CPU list '{s}' is reversed").into());
                }
                if b - a > 1 << 16 {
                    return Err(format!("the range '{item}' in the CPU list '{s}' is too long").into());
                }
                out.extend(a..=b);
            }
            None => out.push(num(item)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The CPUs sharing `cpu`'s last-level cache (the highest `level` among its cache indices),
/// read under `root` (`/` on a real machine; a directory tree for tests).
pub fn llc_shared(root: &Path, cpu: usize) -> Result<Vec<usize>, TopologyError> {
    let dir = root.join(format!("sys/devices/system/cpu/cpu{cpu}/cache"));
    let entries = fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut best: Option<(u32, std::path::PathBuf)> = None;
    for e in entries.flatten() {
        let p = e.path();
        if !p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("index")) {
            continue;
        }
        let Ok(level) = fs::read_to_string(p.join("level")) else { continue };
        let Ok(level) = level.trim().parse::<u32>() else { continue };
        if best.as_ref().is_none_or(|(l, _)| level > *l) {
            best = Some((level, p));
        }
    }
    let (_, p) = best.ok_or_else(|| format!("{}: no cache level listed", dir.display()))?;
    let f = p.join("shared_cpu_list");
    let text = fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
    parse_cpu_list(&text).map_err(|e| format!("{}: {e}", f.display()).into())
}

/// The last-level-cache cluster of each CPU of `cpus` (in order): clusters are numbered
/// `0..k` in the order of their first CPU in `cpus`. An error names the file that could not be
/// read or parsed.
pub fn llc_clusters(root: &Path, cpus: &[usize]) -> Result<Vec<usize>, TopologyError> {
    let mut seen: Vec<Vec<usize>> = Vec::new();
    let mut out = Vec::with_capacity(cpus.len());
    for &c in cpus {
        let shared = llc_shared(root, c)?;
        let k = match seen.iter().position(|s| *s == shared) {
            Some(k) => k,
            None => {
                seen.push(shared);
                seen.len() - 1
            }
        };
        out.push(k);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), Ok(vec![0, 1, 2, 3, 8, 10, 11]));
        assert_eq!(parse_cpu_list(" 5 "), Ok(vec![5]));
        assert_eq!(parse_cpu_list("3,1-2,2"), Ok(vec![1, 2, 3]));
        assert!(parse_cpu_list("").unwrap_err().0.contains("is not a CPU"));
        assert!(parse_cpu_list("4-2").unwrap_err().0.contains("reversed"));
        assert!(parse_cpu_list("1,x").unwrap_err().0.contains("'x'"));
    }

    /// A fake sysfs: CPUs 0-1 share an L3, 2-3 another; L1/L2 private.
    fn fake(root: &Path, llc: &[&str]) {
        for (c, shared) in llc.iter().enumerate() {
            for (k, level, list) in [(0, "1", c.to_string()), (2, "2", c.to_string()), (3, "3", shared.to_string())] {
                let d = root.join(format!("sys/devices/system/cpu/cpu{c}/cache/index{k}"));
                fs::create_dir_all(&d).unwrap();
                fs::write(d.join("level"), format!("{level}\n")).unwrap();
                fs::write(d.join("shared_cpu_list"), format!("{list}\n")).unwrap();
            }
        }
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("rtsched-topology-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn cpus_sharing_the_last_level_cache_form_one_cluster() {
        let root = tmp("two");
        fake(&root, &["0-1", "0-1", "2-3", "2-3"]);
        assert_eq!(llc_shared(&root, 2), Ok(vec![2, 3]));
        assert_eq!(llc_clusters(&root, &[0, 1, 2, 3]), Ok(vec![0, 0, 1, 1]));
        assert_eq!(llc_clusters(&root, &[3, 0, 2]), Ok(vec![0, 1, 0]));
        let err = llc_clusters(&root, &[0, 7]).unwrap_err();
        assert!(err.0.contains("cpu7/cache"), "{err}");
        fs::write(root.join("sys/devices/system/cpu/cpu1/cache/index3/shared_cpu_list"), "0-").unwrap();
        assert!(llc_clusters(&root, &[1]).unwrap_err().0.contains("index3/shared_cpu_list"));
        fs::remove_dir_all(&root).unwrap();
    }
}
