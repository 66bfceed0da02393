//! The cluster's worker processes (Tributary's or Java's): spawning, readiness, stopping, their logs.

use super::*;

/// A worker process of either runtime with its REST client.
pub(crate) struct Member {
    pub(crate) kind: Kind,
    /// `w1`, `w2`, …
    pub(crate) name: String,
    pub(crate) worker: Worker,
    pub(crate) rest: Rest,
    /// The worker id statuses name (`127.0.0.1:<port>`).
    pub(crate) id: String,
    pub(crate) alive: bool,
    /// The worker's directory (its properties and log), removed with the member.
    pub(crate) _dir: tempfile::TempDir,
}

impl Member {
    /// `GET /tributary/worker` (Tributary only).
    pub(crate) fn info(&self) -> Option<Value> {
        if self.kind != Kind::Tributary {
            return None;
        }
        match self.rest.get("/tributary/worker") {
            Ok((200, v)) => Some(v),
            _ => None,
        }
    }

    /// The group generation this worker is in: Tributary's `/tributary/worker`, Java's last
    /// "Joined group at generation N" log line; 0 when unknown.
    pub(crate) fn generation(&self) -> i64 {
        match self.kind {
            Kind::Tributary => self
                .info()
                .and_then(|i| i["generation"].as_i64())
                .unwrap_or(0),
            Kind::Java => {
                const MARK: &str = "Joined group at generation ";
                let tail = log_tail(&self.worker.log, 4 << 20);
                tail.rfind(MARK)
                    .and_then(|at| {
                        tail[at + MARK.len()..]
                            .split(|c: char| !c.is_ascii_digit())
                            .next()?
                            .parse()
                            .ok()
                    })
                    .unwrap_or(0)
            }
        }
    }

    /// REST answers `/health` and `/connectors` with 200, and (Tributary) the worker reports a
    /// generation.
    pub(crate) fn ready(&self) -> bool {
        let ok = |p: &str| self.rest.get(p).map(|r| r.0 == 200).unwrap_or(false);
        ok("/health") && ok("/connectors") && (self.kind == Kind::Java || self.generation() > 0)
    }

    /// Whether this worker says it leads the group (Tributary: `/tributary/worker`; Java: the
    /// `leaderUrl` of the last assignment its log shows).
    pub(crate) fn is_leader(&self) -> bool {
        match self.kind {
            Kind::Tributary => self.info().is_some_and(|i| i["leader"] == true),
            Kind::Java => {
                let log = log_tail(&self.worker.log, 4 << 20);
                let Some(at) = log.rfind("leaderUrl='") else {
                    return false;
                };
                let url = &log[at + "leaderUrl='".len()..];
                let url = url.split('\'').next().unwrap_or_default();
                url.trim_end_matches('/') == self.rest.base()
            }
        }
    }

    /// Task id → (starts, stops) of `GET /tributary/task-counters` (Tributary only; empty when
    /// it does not answer).
    pub(crate) fn task_counters(&self) -> BTreeMap<String, (u64, u64)> {
        let Ok((200, v)) = self.rest.get("/tributary/task-counters") else {
            return BTreeMap::new();
        };
        v.as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, c)| {
                        let n = |f: &str| c[f].as_u64().unwrap_or(0);
                        (k.clone(), (n("starts"), n("stops")))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    pub(crate) fn rss_kib(&self) -> Option<u64> {
        proc_stats::memory(self.worker.pid()).map(|m| m.rss_kib)
    }
}

/// The last `max` bytes of the file at `path` (lossy UTF-8; empty when unreadable).
pub(crate) fn log_tail(path: &std::path::Path, max: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(SeekFrom::Start(len.saturating_sub(max))).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok();
    String::from_utf8_lossy(&buf).into_owned()
}

/// Spawns workers of `kind` in `group` named `names` back to back, then waits for each one's
/// REST address.
pub(crate) fn spawn_members(
    ctx: &Ctx<'_>,
    kind: Kind,
    group: &str,
    names: &[String],
) -> Result<Vec<Member>, String> {
    let mut started = Vec::new();
    for name in names {
        let dir = tempdir()?;
        let (worker, url) = match kind {
            Kind::Tributary => {
                let props = ctx.worker_props(kind, group, None);
                let w = Worker::spawn_distributed_quiet(&ctx.binary, dir.path(), &props)?;
                (w, None)
            }
            Kind::Java => {
                let port = tributary_bench::java::free_port()?;
                let props = ctx.worker_props(kind, group, Some(port));
                let java = ctx.java.as_ref().ok_or("no Java command")?;
                let w = java.spawn(dir.path(), &props, true)?;
                (w, Some(format!("http://127.0.0.1:{port}")))
            }
        };
        started.push((name.clone(), worker, url, dir));
    }
    started
        .into_iter()
        .map(|(name, mut worker, url, dir)| {
            let url = match url {
                Some(u) => u,
                None => worker.wait_rest(Duration::from_secs(120))?,
            };
            let rest = Rest::new(&url, REST_TIMEOUT)?;
            let id = url.trim_start_matches("http://").to_string();
            Ok(Member {
                kind,
                name,
                worker,
                rest,
                id,
                alive: true,
                _dir: dir,
            })
        })
        .collect()
}

/// Fails with a worker's log tail if a live member has exited.
pub(crate) fn check_alive(members: &mut [Member]) -> Result<(), String> {
    for m in members.iter_mut().filter(|m| m.alive) {
        m.worker
            .check_alive()
            .map_err(|e| format!("worker {} ({}): {e}", m.name, m.id))?;
    }
    Ok(())
}

/// Waits until every live member is ready; returns each one's spawn → ready time.
pub(crate) fn wait_ready(
    members: &mut [Member],
    timeout: Duration,
    every: Duration,
) -> Result<Vec<Duration>, String> {
    let deadline = Instant::now() + timeout;
    let mut ready: Vec<Option<Duration>> = vec![None; members.len()];
    loop {
        check_alive(members)?;
        for (m, r) in members.iter().zip(ready.iter_mut()) {
            if r.is_none() && m.ready() {
                *r = Some(m.worker.started.elapsed());
            }
        }
        if ready.iter().all(Option::is_some) {
            return Ok(ready.into_iter().flatten().collect());
        }
        if Instant::now() > deadline {
            let n = ready.iter().filter(|r| r.is_some()).count();
            return Err(format!(
                "only {n} of {} workers ready after {timeout:?}",
                members.len()
            ));
        }
        std::thread::sleep(every);
    }
}

/// SIGTERM to every live member at once, then waits until all exited; those still running
/// after `timeout` are killed (SIGKILL). Returns how many had to be killed.
pub(crate) fn stop_all(members: &mut [Member], timeout: Duration) -> usize {
    for m in members.iter().filter(|m| m.alive) {
        // Best effort: a worker that ignores it is killed below.
        Command::new("kill")
            .arg("-TERM")
            .arg(m.worker.pid().to_string())
            .status()
            .ok();
    }
    let deadline = Instant::now() + timeout;
    loop {
        let running = members
            .iter_mut()
            .filter(|m| m.alive)
            .map(|m| m.worker.child.try_wait())
            .filter(|r| !matches!(r, Ok(Some(_))))
            .count();
        if running == 0 || Instant::now() > deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut killed = 0;
    for m in members.iter_mut().filter(|m| m.alive) {
        if let Ok(None) = m.worker.child.try_wait() {
            say(format!(
                "worker {} did not stop within {timeout:?} of SIGTERM; killing it",
                m.name
            ));
            killed += 1;
            // Best effort: it may have exited meanwhile.
            m.worker.child.kill().ok();
            m.worker.child.wait().ok();
        }
        m.alive = false;
    }
    killed
}

/// Counts a log's ERROR and WARN lines and its most frequent messages (timestamps cut).
#[derive(Default, Debug, Clone)]
pub(crate) struct LogSummary {
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    pub(crate) panics: usize,
    /// Message (without timestamp) → count.
    pub(crate) messages: BTreeMap<String, usize>,
}

impl LogSummary {
    pub(crate) fn add(&mut self, kind: Kind, log: &str) {
        for line in log.lines() {
            let level = match kind {
                Kind::Tributary => {
                    if line.contains(" ERROR ") {
                        Some("ERROR")
                    } else if line.contains(" WARN ") {
                        Some("WARN")
                    } else {
                        None
                    }
                }
                Kind::Java => {
                    if line.contains("] ERROR ") {
                        Some("ERROR")
                    } else if line.contains("] WARN ") {
                        Some("WARN")
                    } else {
                        None
                    }
                }
            };
            if line.contains("panicked") {
                self.panics += 1;
            }
            let Some(level) = level else { continue };
            if level == "ERROR" {
                self.errors += 1;
            } else {
                self.warnings += 1;
            }
            let at = line.find(level).unwrap_or(0);
            let mut msg: String = line[at..].chars().take(160).collect();
            // Numbers vary from line to line (ids, generations, ports): group them.
            msg = msg
                .split(|c: char| c.is_ascii_digit())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("#");
            *self.messages.entry(msg).or_default() += 1;
        }
    }

    pub(crate) fn top(&self, n: usize) -> Vec<String> {
        let mut v: Vec<(&String, &usize)> = self.messages.iter().collect();
        v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        v.into_iter()
            .take(n)
            .map(|(m, c)| format!("{c}x {m}"))
            .collect()
    }

    pub(crate) fn cell(&self) -> String {
        format!(
            "{} ERROR, {} WARN{}",
            self.errors,
            self.warnings,
            if self.panics > 0 {
                format!(", {} panics", self.panics)
            } else {
                String::new()
            }
        )
    }
}

/// Summarizes every member's log and copies it to `--keep-logs` if asked.
pub(crate) fn collect_logs(ctx: &Ctx<'_>, members: &[Member], part: &str) -> LogSummary {
    let mut summary = LogSummary::default();
    for m in members {
        let text = m.worker.log_text();
        summary.add(m.kind, &text);
        if let Some(dir) = &ctx.args.keep_logs {
            let target = dir.join(format!("{part}-{}.log", m.name));
            let copied = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&target, &text));
            if let Err(e) = copied {
                say(format!("cannot keep the log in {}: {e}", target.display()));
            }
        }
    }
    summary
}
