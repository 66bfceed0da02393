//! `tributary standalone` and `tributary distributed` worker processes: configuration files,
//! start, stop, log.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::input::InputFile;

/// The worker configuration every benchmark worker uses (the `worker.properties` lines), with
/// offsets stored in `dir`.
pub fn worker_properties(bootstrap: &str, dir: &Path) -> Vec<(String, String)> {
    [
        ("bootstrap.servers", bootstrap.to_string()),
        (
            "key.converter",
            "org.apache.kafka.connect.storage.StringConverter".to_string(),
        ),
        (
            "value.converter",
            "org.apache.kafka.connect.storage.StringConverter".to_string(),
        ),
        (
            "offset.storage.file.filename",
            dir.join("offsets").display().to_string(),
        ),
        ("offset.flush.interval.ms", "1000".to_string()),
        ("listeners", "http://127.0.0.1:0".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The worker configuration of a distributed worker in group `group`: internal topics named
/// after the group (`<group>-configs`, `-offsets`, `-status`) with replication factor 1, String
/// converters, an ephemeral REST port, and a short session timeout (as the integration tests
/// use).
pub fn distributed_properties(bootstrap: &str, group: &str) -> Vec<(String, String)> {
    [
        ("bootstrap.servers", bootstrap.to_string()),
        ("group.id", group.to_string()),
        ("config.storage.topic", format!("{group}-configs")),
        ("offset.storage.topic", format!("{group}-offsets")),
        ("status.storage.topic", format!("{group}-status")),
        ("config.storage.replication.factor", "1".to_string()),
        ("offset.storage.replication.factor", "1".to_string()),
        ("status.storage.replication.factor", "1".to_string()),
        ("offset.storage.partitions", "5".to_string()),
        ("status.storage.partitions", "3".to_string()),
        (
            "key.converter",
            "org.apache.kafka.connect.storage.StringConverter".to_string(),
        ),
        (
            "value.converter",
            "org.apache.kafka.connect.storage.StringConverter".to_string(),
        ),
        ("listeners", "http://127.0.0.1:0".to_string()),
        ("offset.flush.interval.ms", "500".to_string()),
        ("session.timeout.ms", "6000".to_string()),
        ("heartbeat.interval.ms", "1000".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The internal topics of the distributed workers of group `group` (see
/// [`distributed_properties`]).
pub fn internal_topics(group: &str) -> [String; 3] {
    [
        format!("{group}-configs"),
        format!("{group}-offsets"),
        format!("{group}-status"),
    ]
}

/// The FileStreamSource connector configuration reading `input` into `topic`.
pub fn source_properties(name: &str, input: &InputFile, topic: &str) -> String {
    format!(
        "name={name}\nconnector.class=FileStreamSource\ntasks.max=1\nfile={}\ntopic={topic}\n",
        input.path.display()
    )
}

/// The arguments of a distributed `tributary` worker.
const DISTRIBUTED_ARGS: &[&str] = &["distributed", "worker.properties"];

/// A running worker process (`tributary`, or a Java Connect JVM); killed when dropped if still
/// running.
pub struct Worker {
    /// The process.
    pub child: Child,
    /// Its stderr (and stdout), where it logs.
    pub log: PathBuf,
    /// When it was spawned.
    pub started: Instant,
}

impl Worker {
    /// Writes `worker.properties` (from `props`) and the `connectors` (file name, content) into
    /// `dir` and starts `binary standalone worker.properties <connector files>` there.
    pub fn spawn(
        binary: &Path,
        dir: &Path,
        props: &[(String, String)],
        connectors: &[(&str, String)],
    ) -> Result<Worker, String> {
        for (file, content) in connectors {
            fs::write(dir.join(file), content).map_err(|e| e.to_string())?;
        }
        let mut args = vec!["standalone", "worker.properties"];
        args.extend(connectors.iter().map(|(f, _)| *f));
        let log = format!("worker-{}.log", connectors.len());
        Self::spawn_with(binary, dir, props, &args, &log, false)
    }

    /// Writes `worker.properties` (from `props`, e.g. [`distributed_properties`]) into `dir` and
    /// starts `binary distributed worker.properties` there, logging to `worker.log`.
    pub fn spawn_distributed(
        binary: &Path,
        dir: &Path,
        props: &[(String, String)],
    ) -> Result<Worker, String> {
        Self::spawn_with(binary, dir, props, DISTRIBUTED_ARGS, "worker.log", false)
    }

    /// As [`Worker::spawn_distributed`], but standard output (where connectors such as
    /// VerifiableSource print a line per record) is discarded: the log holds stderr only, where
    /// the worker logs.
    pub fn spawn_distributed_quiet(
        binary: &Path,
        dir: &Path,
        props: &[(String, String)],
    ) -> Result<Worker, String> {
        Self::spawn_with(binary, dir, props, DISTRIBUTED_ARGS, "worker.log", true)
    }

    fn spawn_with(
        binary: &Path,
        dir: &Path,
        props: &[(String, String)],
        args: &[&str],
        log: &str,
        quiet: bool,
    ) -> Result<Worker, String> {
        let mut cmd = Command::new(binary);
        cmd.args(args).env("NO_COLOR", "1");
        Self::start(cmd, dir, props, log, quiet)
            .map_err(|e| format!("starting {}: {e}", binary.display()))
    }

    /// Writes `worker.properties` (from `props`) into `dir` and runs `cmd` there, its standard
    /// error in the file `log` of `dir`, and its standard output too unless `quiet` (then it is
    /// discarded). For any worker process, Tributary's or a JVM's.
    pub fn start(
        mut cmd: Command,
        dir: &Path,
        props: &[(String, String)],
        log: &str,
        quiet: bool,
    ) -> Result<Worker, String> {
        let text: String = props.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        fs::write(dir.join("worker.properties"), text).map_err(|e| e.to_string())?;
        let log = dir.join(log);
        let err = File::create(&log).map_err(|e| e.to_string())?;
        let out = if quiet {
            Stdio::null()
        } else {
            Stdio::from(err.try_clone().map_err(|e| e.to_string())?)
        };
        let started = Instant::now();
        let child = cmd
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| e.to_string())?;
        Ok(Worker {
            child,
            log,
            started,
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The log so far.
    pub fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The last `n` lines of the log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = self.log_text();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Fails with the log's tail if the process has exited.
    pub fn check_alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Err(format!(
                "worker exited early with {status}; log tail:\n{}",
                self.log_tail(30)
            )),
            _ => Ok(()),
        }
    }

    /// Waits until the worker logs `REST server listening on ...`; returns that URL.
    pub fn wait_rest(&mut self, timeout: Duration) -> Result<String, String> {
        let deadline = Instant::now() + timeout;
        const MARK: &str = "REST server listening on ";
        loop {
            self.check_alive()?;
            let text = self.log_text();
            if let Some(at) = text.find(MARK) {
                let url = text[at + MARK.len()..]
                    .split_whitespace()
                    .next()
                    .unwrap_or_default();
                return Ok(url.to_string());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the worker's REST server did not start within {timeout:?}; log tail:\n{}",
                    self.log_tail(30)
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then waits up to `timeout` for a clean exit (SIGKILL after that).
    pub fn terminate(&mut self, timeout: Duration) {
        // Without the signal the worker is killed after the deadline below.
        if let Err(e) = Command::new("kill")
            .arg("-TERM")
            .arg(self.pid().to_string())
            .status()
        {
            eprintln!("bench: cannot run kill -TERM {}: {e}", self.pid());
        }
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("bench: worker did not stop within {timeout:?}; killing it");
        // Best effort: the worker may have exited meanwhile.
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // Best effort: the worker may have exited meanwhile.
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}
