//! Process statistics from `/proc`: resident memory and CPU time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Clock ticks per second of `/proc/<pid>/stat` times (`USER_HZ`, 100 on Linux).
const USER_HZ: f64 = 100.0;

/// Memory figures of a process, in KiB.
#[derive(Debug, Clone, Copy, Default)]
pub struct Memory {
    /// Current resident set size (`VmRSS`).
    pub rss_kib: u64,
    /// Peak resident set size so far (`VmHWM`).
    pub hwm_kib: u64,
}

/// Reads `VmRSS` and `VmHWM` from `/proc/<pid>/status`; `None` once the process is gone.
pub fn memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        hwm_kib: field("VmHWM:")?,
    })
}

/// The number of threads of a process (`Threads` in `/proc/<pid>/status`); `None` once it is
/// gone.
pub fn threads(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The names of a process's threads (`/proc/<pid>/task/*/comm`, digits folded into `N`) and
/// how many of each, most first.
pub fn thread_names(pid: u32) -> Vec<(String, usize)> {
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for entry in dir.flatten() {
            let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
            let name: String = comm
                .trim()
                .chars()
                .map(|c| if c.is_ascii_digit() { 'N' } else { c })
                .collect();
            *counts.entry(name).or_default() += 1;
        }
    }
    let mut v: Vec<(String, usize)> = counts.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// User plus system CPU time of a process, in seconds, from `/proc/<pid>/stat`.
pub fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: skip past it.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); utime and stime are fields 14 and 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / USER_HZ)
}

/// CPU time of this process (all threads), in seconds.
pub fn cpu_seconds_self() -> f64 {
    cpu_seconds("self").unwrap_or(0.0)
}

/// Samples a process's `VmRSS` in the background and keeps the maximum.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    max_kib: Arc<AtomicU64>,
    handle: Option<JoinHandle<()>>,
}

impl RssSampler {
    /// Starts sampling `pid` every `interval`.
    pub fn start(pid: u32, interval: Duration) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let max_kib = Arc::new(AtomicU64::new(0));
        let handle = {
            let (stop, max_kib) = (stop.clone(), max_kib.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    if let Some(m) = memory(pid) {
                        max_kib.fetch_max(m.rss_kib, Ordering::Relaxed);
                    }
                    std::thread::sleep(interval);
                }
            })
        };
        RssSampler {
            stop,
            max_kib,
            handle: Some(handle),
        }
    }

    /// Stops sampling; returns the largest `VmRSS` seen, in KiB.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            // A panicked sampler only loses samples: the largest seen so far is returned.
            h.join().ok();
        }
        self.max_kib.load(Ordering::Relaxed)
    }
}
