//! The benchmark's results and their presentation as a plain table and as Markdown.

use std::fmt::Write;
use std::time::Duration;

use crate::input::InputFile;
use crate::raw::RawResult;

/// Tributary's goal: at least this share of the raw producer's records/s.
pub const THROUGHPUT_GOAL: f64 = 0.70;
/// Tributary's goal: an idle worker below this resident size, in MiB.
pub const IDLE_RSS_GOAL_MIB: f64 = 20.0;

/// What the Tributary worker achieved.
#[derive(Debug, Clone)]
pub struct TributaryResult {
    /// From spawning the worker until the topic's end offset reached the line count.
    pub elapsed: Duration,
    /// From spawning the worker until the first record was in the topic.
    pub first_record: Duration,
    /// The topic's end offset when done.
    pub records: u64,
    /// Largest resident size seen (sampled `VmRSS`, and `VmHWM` at the end), in KiB.
    pub peak_rss_kib: u64,
    /// CPU time (user + system) of the worker process, start to done, in seconds.
    pub cpu_seconds: f64,
}

/// The memory of a worker with no connectors.
#[derive(Debug, Clone)]
pub struct IdleResult {
    /// `VmRSS`, in KiB.
    pub rss_kib: u64,
    /// `VmHWM`, in KiB.
    pub hwm_kib: u64,
    /// How long after the REST server came up it was read.
    pub after: Duration,
}

/// Everything one run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// The input file.
    pub input: InputFile,
    /// The broker.
    pub bootstrap: String,
    /// Extra worker.properties lines (`--worker-prop`).
    pub worker_props: Vec<String>,
    /// The raw producer, one result per run.
    pub raw: Vec<RawResult>,
    /// The Tributary worker, one result per run.
    pub tributary: Vec<TributaryResult>,
    /// The idle worker.
    pub idle: IdleResult,
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// `1234567.8` → `1,234,568`.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn met(ok: bool) -> &'static str {
    if ok {
        "met"
    } else {
        "NOT met"
    }
}

/// One row of the table: label and cells.
struct Row {
    label: String,
    cells: Vec<String>,
}

impl RawResult {
    fn rate(&self) -> f64 {
        self.records as f64 / self.elapsed.as_secs_f64()
    }
}

impl TributaryResult {
    fn rate(&self) -> f64 {
        self.records as f64 / self.elapsed.as_secs_f64()
    }
}

/// The run with the median rate (the lower one of the middle two for an even count).
fn median<T>(runs: &[T], rate: impl Fn(&T) -> f64) -> &T {
    let mut sorted: Vec<&T> = runs.iter().collect();
    sorted.sort_by(|a, b| rate(a).total_cmp(&rate(b)));
    sorted[(sorted.len() - 1) / 2]
}

fn rates(rates: impl Iterator<Item = f64>) -> String {
    rates.map(thousands).collect::<Vec<_>>().join(", ")
}

impl Report {
    /// The raw run with the median records/s.
    fn raw(&self) -> &RawResult {
        median(&self.raw, RawResult::rate)
    }

    /// The Tributary run with the median records/s.
    fn trib(&self) -> &TributaryResult {
        median(&self.tributary, TributaryResult::rate)
    }

    fn raw_rate(&self) -> f64 {
        self.raw().rate()
    }

    fn trib_rate(&self) -> f64 {
        self.trib().rate()
    }

    fn mb_per_s(&self, elapsed: Duration) -> f64 {
        self.input.payload_bytes as f64 / 1e6 / elapsed.as_secs_f64()
    }

    fn ratio(&self) -> f64 {
        self.trib_rate() / self.raw_rate()
    }

    fn header(&self) -> Vec<&'static str> {
        vec![
            "",
            "records/s",
            "MB/s",
            "% of raw",
            "time (s)",
            "CPU (s)",
            "RSS (MiB)",
        ]
    }

    fn rows(&self) -> Vec<Row> {
        let ratio = self.ratio();
        let idle_mib = mib(self.idle.rss_kib);
        vec![
            Row {
                label: "raw rdkafka producer".into(),
                cells: vec![
                    thousands(self.raw_rate()),
                    format!("{:.1}", self.mb_per_s(self.raw().elapsed)),
                    "100%".into(),
                    format!("{:.2}", self.raw().elapsed.as_secs_f64()),
                    format!("{:.1}", self.raw().cpu_seconds),
                    format!(
                        "{:.1} peak",
                        mib(self.raw.iter().map(|r| r.peak_rss_kib).max().unwrap_or(0))
                    ),
                ],
            },
            Row {
                label: "tributary standalone, FileStreamSource".into(),
                cells: vec![
                    thousands(self.trib_rate()),
                    format!("{:.1}", self.mb_per_s(self.trib().elapsed)),
                    format!(
                        "{:.1}% (goal ≥ {:.0}%: {})",
                        ratio * 100.0,
                        THROUGHPUT_GOAL * 100.0,
                        met(ratio >= THROUGHPUT_GOAL)
                    ),
                    format!("{:.2}", self.trib().elapsed.as_secs_f64()),
                    format!("{:.1}", self.trib().cpu_seconds),
                    format!(
                        "{:.1} peak",
                        mib(self
                            .tributary
                            .iter()
                            .map(|r| r.peak_rss_kib)
                            .max()
                            .unwrap_or(0))
                    ),
                ],
            },
            Row {
                label: "tributary idle worker, no connectors".into(),
                cells: vec![
                    "".into(),
                    "".into(),
                    "".into(),
                    "".into(),
                    "".into(),
                    format!(
                        "{idle_mib:.1} (goal < {IDLE_RSS_GOAL_MIB:.0}: {})",
                        met(idle_mib < IDLE_RSS_GOAL_MIB)
                    ),
                ],
            },
        ]
    }

    fn notes(&self) -> Vec<String> {
        let cores = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0);
        let mut notes = vec![
            format!(
                "{} lines ({:.1} MB of values, {:.1} MB file) of {} log lines; one partition, acks=all, idempotent producer, broker {} on the same host ({cores} cores).",
                thousands(self.input.lines as f64),
                self.input.payload_bytes as f64 / 1e6,
                self.input.file_bytes as f64 / 1e6,
                self.input.origin,
                self.bootstrap
            ),
            "Raw: a ThreadedProducer with Tributary's source producer configuration reads the file line by line (after a warm-up on another topic); timed until every record is acknowledged; RSS is the benchmark process's VmHWM.".to_string(),
            format!(
                "Tributary: timed from spawning `tributary standalone` until the topic's end offset equals the line count (first record after {:.2} s); RSS peak from VmRSS samples and VmHWM.",
                self.trib().first_record.as_secs_f64()
            ),
            format!(
                "Median of {} runs (records/s per run: raw {}; tributary {}); time and CPU are the median run's; RSS peaks are the largest of all runs.",
                self.raw.len(),
                rates(self.raw.iter().map(RawResult::rate)),
                rates(self.tributary.iter().map(TributaryResult::rate)),
            ),
            format!(
                "Idle: VmRSS {:.0} s after the REST server is up (VmHWM {:.1} MiB). MB = 10^6 bytes of record values; CPU = user + system time.",
                self.idle.after.as_secs_f64(),
                mib(self.idle.hwm_kib)
            ),
        ];
        if !self.worker_props.is_empty() {
            notes.push(format!(
                "Extra worker settings: {}.",
                self.worker_props.join(", ")
            ));
        }
        notes
    }

    /// The results as an aligned plain-text table with notes.
    pub fn text(&self) -> String {
        let header = self.header();
        let rows = self.rows();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            widths[0] = widths[0].max(r.label.chars().count());
            for (i, c) in r.cells.iter().enumerate() {
                widths[i + 1] = widths[i + 1].max(c.chars().count());
            }
        }
        let pad = |s: &str, w: usize, left: bool| {
            let n = w.saturating_sub(s.chars().count());
            if left {
                format!("{s}{}", " ".repeat(n))
            } else {
                format!("{}{s}", " ".repeat(n))
            }
        };
        // Writing to a String cannot fail.
        let mut out = String::new();
        let line: Vec<String> = header
            .iter()
            .enumerate()
            .map(|(i, h)| pad(h, widths[i], i == 0))
            .collect();
        writeln!(out, "{}", line.join("  ")).unwrap();
        writeln!(
            out,
            "{}",
            widths
                .iter()
                .map(|w| "-".repeat(*w))
                .collect::<Vec<_>>()
                .join("  ")
        )
        .unwrap();
        for r in &rows {
            let mut cells = vec![pad(&r.label, widths[0], true)];
            cells.extend(
                r.cells
                    .iter()
                    .enumerate()
                    .map(|(i, c)| pad(c, widths[i + 1], false)),
            );
            writeln!(out, "{}", cells.join("  ").trim_end()).unwrap();
        }
        out.push('\n');
        for n in self.notes() {
            writeln!(out, "{n}").unwrap();
        }
        out
    }

    /// The results as a Markdown table with notes, ready for the README.
    pub fn markdown(&self) -> String {
        let header = self.header();
        // Writing to a String cannot fail.
        let mut out = String::new();
        writeln!(out, "| {} |", header.join(" | ")).unwrap();
        writeln!(out, "|---|{}", "---:|".repeat(header.len() - 1)).unwrap();
        for r in self.rows() {
            writeln!(out, "| {} | {} |", r.label, r.cells.join(" | ")).unwrap();
        }
        out.push('\n');
        for n in self.notes() {
            writeln!(out, "{n}").unwrap();
        }
        out
    }
}
