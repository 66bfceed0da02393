//! The metrics MirrorMaker's tasks report (Apache's `MirrorSourceMetrics` and
//! `MirrorCheckpointMetrics` of Kafka 4.3+, KIP-1280 names), through the task's
//! [`PluginMetrics`] (KIP-877), so that `/metrics` shows them as a hosted Apache task's:
//! `kafka_connect_plugins_<name>{connector, task, source, target, …}`.
//!
//! - Source task, per replicated partition (tags `source`, `target`, `topic` (the remote
//!   topic), `partition`), all registered at start: `record-count` / `record-rate` (records
//!   Kafka acknowledged on the target), `byte-count` / `byte-rate` (their value bytes, counted
//!   as polled), `record-age-ms` and its `-max` / `-min` / `-avg` (how old a record was when
//!   polled), `replication-latency-ms` and its `-max` / `-min` / `-avg` (from the record's
//!   timestamp to the target's acknowledgement).
//! - Checkpoint task, per group and checkpointed partition (tags `source`, `target`, `group`,
//!   `topic`, `partition`), registered at a group's first checkpoint:
//!   `checkpoint-latency-ms` and its `-max` / `-min` / `-avg`.
//!
//! Rates, maxima, minima and averages are Kafka's sampled statistics with the worker's
//! defaults (`metrics.num.samples=2` windows of `metrics.sample.window.ms=30000`): over the
//! last 30–60 s, `NaN` for a maximum, minimum or average without a sample in that time; a
//! `-ms` value without suffix is the last one recorded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tributary_api::metrics::PluginMetrics;

/// `metrics.sample.window.ms`'s default (ms).
const WINDOW_MS: i64 = 30_000;
/// `metrics.num.samples`' default.
const SAMPLES: usize = 2;

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// One window of a sampled statistic.
#[derive(Debug, Clone, Copy)]
struct Window {
    start_ms: i64,
    count: u64,
    sum: f64,
    max: f64,
    min: f64,
}

impl Window {
    fn new(start_ms: i64) -> Window {
        Window {
            start_ms,
            count: 0,
            sum: 0.0,
            max: f64::NEG_INFINITY,
            min: f64::INFINITY,
        }
    }
}

/// Kafka's `SampledStat` family over one series of values (Max, Min, Avg and Rate read the same
/// windows, as they are recorded together), with the last value (`Value`) and the totals
/// (`CumulativeCount`, `CumulativeSum`).
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    windows: Vec<Window>,
    current: usize,
    last: f64,
    total_count: u64,
    total_sum: f64,
}

impl Sampled {
    /// Records `value` at `now_ms`.
    pub fn record(&mut self, value: f64, now_ms: i64) {
        if self.windows.is_empty() {
            self.windows.push(Window::new(now_ms));
            self.current = 0;
        } else if now_ms - self.windows[self.current].start_ms >= WINDOW_MS {
            // The current window is complete: the next one (reused when all exist).
            self.current = (self.current + 1) % SAMPLES;
            if self.current == self.windows.len() {
                self.windows.push(Window::new(now_ms));
            } else {
                self.windows[self.current] = Window::new(now_ms);
            }
        }
        let w = &mut self.windows[self.current];
        w.count += 1;
        w.sum += value;
        w.max = w.max.max(value);
        w.min = w.min.min(value);
        self.last = value;
        self.total_count += 1;
        self.total_sum += value;
    }

    /// The windows not expired at `now_ms` (Kafka's `purgeObsoleteSamples`).
    fn live(&self, now_ms: i64) -> impl Iterator<Item = &Window> {
        self.windows
            .iter()
            .filter(move |w| now_ms - w.start_ms < SAMPLES as i64 * WINDOW_MS)
    }

    /// The last value recorded (0 before any).
    pub fn last(&self) -> f64 {
        self.last
    }

    /// How many values were recorded.
    pub fn count(&self) -> f64 {
        self.total_count as f64
    }

    /// The sum of every value recorded.
    pub fn sum(&self) -> f64 {
        self.total_sum
    }

    /// The largest value of the live windows, `NaN` without one.
    pub fn max(&self, now_ms: i64) -> f64 {
        let mut any = false;
        let m = self
            .live(now_ms)
            .filter(|w| w.count > 0)
            .inspect(|_| any = true)
            .fold(f64::NEG_INFINITY, |m, w| m.max(w.max));
        if any {
            m
        } else {
            f64::NAN
        }
    }

    /// The smallest value of the live windows, `NaN` without one.
    pub fn min(&self, now_ms: i64) -> f64 {
        let mut any = false;
        let m = self
            .live(now_ms)
            .filter(|w| w.count > 0)
            .inspect(|_| any = true)
            .fold(f64::INFINITY, |m, w| m.min(w.min));
        if any {
            m
        } else {
            f64::NAN
        }
    }

    /// The mean of the live windows' values, `NaN` without one.
    pub fn avg(&self, now_ms: i64) -> f64 {
        let (sum, count) = self
            .live(now_ms)
            .fold((0.0, 0u64), |(s, c), w| (s + w.sum, c + w.count));
        if count == 0 {
            f64::NAN
        } else {
            sum / count as f64
        }
    }

    /// Per second over the live windows (Kafka's `Rate`: the elapsed time since the oldest
    /// live window, at least `SAMPLES - 1` whole windows), of the values' count (`by_count`)
    /// or sum.
    pub fn rate(&self, now_ms: i64, by_count: bool) -> f64 {
        let live: Vec<&Window> = self.live(now_ms).collect();
        let total: f64 = live
            .iter()
            .map(|w| if by_count { w.count as f64 } else { w.sum })
            .sum();
        let oldest = live.iter().map(|w| w.start_ms).min().unwrap_or(now_ms);
        let mut elapsed = now_ms - oldest;
        let full = elapsed / WINDOW_MS;
        let min_full = SAMPLES as i64 - 1;
        if full < min_full {
            elapsed += (min_full - full) * WINDOW_MS;
        }
        total / (elapsed as f64 / 1000.0)
    }
}

type Shared = Arc<Mutex<Sampled>>;
/// How a metric reads its statistic at `now_ms`.
type Reader = fn(&Sampled, i64) -> f64;

/// Registers `name` reading `stat` with `f`; a registration refused (the handle closed as the
/// task stops) is only logged.
fn register(
    metrics: &PluginMetrics,
    stat: &Shared,
    tags: &[(&str, &str)],
    (name, description): (&str, &str),
    f: Reader,
) {
    let stat = Arc::clone(stat);
    let added = metrics
        .metric_name(name, description, tags)
        .and_then(|n| metrics.add_metric(&n, move || read(&stat, f)));
    if let Err(e) = added {
        tracing::debug!("MirrorMaker metric {name} not registered: {e}");
    }
}

fn read(s: &Shared, f: impl Fn(&Sampled, i64) -> f64) -> f64 {
    let s = s.lock().unwrap_or_else(|e| e.into_inner());
    f(&s, now_ms())
}

/// Registers `<name>` (last value) and `<name>-max`, `-min`, `-avg` of `stat`.
fn register_value_stats(
    metrics: &PluginMetrics,
    stat: &Shared,
    tags: &[(&str, &str)],
    names: [(&str, &str); 4],
) {
    let readers: [Reader; 4] = [
        |s, _| s.last(),
        |s, now| s.max(now),
        |s, now| s.min(now),
        |s, now| s.avg(now),
    ];
    for (name, f) in names.into_iter().zip(readers) {
        register(metrics, stat, tags, name, f);
    }
}

/// One replicated partition's statistics (shared: a clone records into the same series).
#[derive(Default, Clone)]
pub struct PartitionStats {
    /// Records acknowledged on the target, with their replication latency.
    latency: Shared,
    /// Records polled, with their age.
    age: Shared,
    /// Records polled, with their value's size.
    bytes: Shared,
}

/// A source task's metrics (Apache's `MirrorSourceMetrics`).
#[derive(Default)]
pub struct MirrorSourceMetrics {
    /// Remote topic → partition → statistics.
    partitions: HashMap<String, HashMap<i32, PartitionStats>>,
}

impl MirrorSourceMetrics {
    /// Registers every metric of the task's `partitions` (remote topic, partition) on
    /// `metrics`, tagged `source`, `target`, `topic`, `partition`.
    pub fn new(
        metrics: &PluginMetrics,
        source: &str,
        target: &str,
        partitions: &[(String, i32)],
    ) -> MirrorSourceMetrics {
        let mut out = MirrorSourceMetrics::default();
        for (topic, partition) in partitions {
            let stats = PartitionStats::default();
            let p = partition.to_string();
            let tags = [
                ("source", source),
                ("target", target),
                ("topic", topic.as_str()),
                ("partition", p.as_str()),
            ];
            let plain: [(&str, &str, &Shared, Reader); 4] = [
                (
                    "record-count",
                    "Number of source records replicated to the target cluster.",
                    &stats.latency,
                    |s, _| s.count(),
                ),
                (
                    "record-rate",
                    "Average number of source records replicated to the target cluster per second.",
                    &stats.latency,
                    |s, now| s.rate(now, true),
                ),
                (
                    "byte-count",
                    "Number of bytes replicated to the target cluster.",
                    &stats.bytes,
                    |s, _| s.sum(),
                ),
                (
                    "byte-rate",
                    "Average number of bytes replicated per second.",
                    &stats.bytes,
                    |s, now| s.rate(now, false),
                ),
            ];
            for (name, description, stat, f) in plain {
                register(metrics, stat, &tags, (name, description), f);
            }
            register_value_stats(
                metrics,
                &stats.age,
                &tags,
                [
                    ("record-age-ms", "The age of incoming source records when replicated to the target cluster."),
                    ("record-age-ms-max", "The max age of incoming source records when replicated to the target cluster."),
                    ("record-age-ms-min", "The min age of incoming source records when replicated to the target cluster."),
                    ("record-age-ms-avg", "The average age of incoming source records when replicated to the target cluster."),
                ],
            );
            register_value_stats(
                metrics,
                &stats.latency,
                &tags,
                [
                    (
                        "replication-latency-ms",
                        "Time it takes records to replicate from source to target cluster.",
                    ),
                    (
                        "replication-latency-ms-max",
                        "Max time it takes records to replicate from source to target cluster.",
                    ),
                    (
                        "replication-latency-ms-min",
                        "Min time it takes records to replicate from source to target cluster.",
                    ),
                    (
                        "replication-latency-ms-avg",
                        "Average time it takes records to replicate from source to target cluster.",
                    ),
                ],
            );
            out.partitions
                .entry(topic.clone())
                .or_default()
                .insert(*partition, stats);
        }
        out
    }

    fn stats(&self, topic: &str, partition: i32) -> Option<&PartitionStats> {
        self.partitions.get(topic)?.get(&partition)
    }

    /// The statistics of `topic`/`partition` (remote), shared: a task keeps them per
    /// partition rather than looking them up for every record.
    pub fn partition(&self, topic: &str, partition: i32) -> Option<PartitionStats> {
        self.stats(topic, partition).cloned()
    }

    /// A record of `topic`/`partition` (remote) polled at `now_ms`, `age_ms` old, with
    /// `value_bytes` of value (Java's `recordAge` and `recordBytes`).
    pub fn polled(
        &self,
        topic: &str,
        partition: i32,
        age_ms: i64,
        value_bytes: usize,
        now_ms: i64,
    ) {
        if let Some(s) = self.stats(topic, partition) {
            s.polled(age_ms, value_bytes, now_ms);
        }
    }

    /// A record of `topic`/`partition` (remote) acknowledged at `now_ms`, `latency_ms` after
    /// its timestamp (Java's `countRecord` and `replicationLatency`).
    pub fn acknowledged(&self, topic: &str, partition: i32, latency_ms: i64, now_ms: i64) {
        if let Some(s) = self.stats(topic, partition) {
            s.acknowledged(latency_ms, now_ms);
        }
    }
}

impl PartitionStats {
    /// A record polled at `now_ms`, `age_ms` old, with `value_bytes` of value.
    pub fn polled(&self, age_ms: i64, value_bytes: usize, now_ms: i64) {
        self.age
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(age_ms as f64, now_ms);
        self.bytes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(value_bytes as f64, now_ms);
    }

    /// A record acknowledged at `now_ms`, `latency_ms` after its timestamp.
    pub fn acknowledged(&self, latency_ms: i64, now_ms: i64) {
        self.latency
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(latency_ms as f64, now_ms);
    }
}

/// A checkpoint task's metrics (Apache's `MirrorCheckpointMetrics`).
pub struct MirrorCheckpointMetrics {
    metrics: PluginMetrics,
    source: String,
    target: String,
    /// (group, topic, partition) → checkpoint latencies.
    groups: Mutex<HashMap<(String, String, i32), Shared>>,
}

impl MirrorCheckpointMetrics {
    /// The metrics of a task of flow `source` → `target`, registered on `metrics` as groups
    /// are checkpointed.
    pub fn new(metrics: PluginMetrics, source: &str, target: &str) -> MirrorCheckpointMetrics {
        MirrorCheckpointMetrics {
            metrics,
            source: source.to_string(),
            target: target.to_string(),
            groups: Mutex::new(HashMap::new()),
        }
    }

    /// A checkpoint of `group` for `topic`/`partition` (as named on the target) acknowledged
    /// `latency_ms` after it was made (Java's `checkpointLatency`).
    pub fn checkpoint_latency(&self, group: &str, topic: &str, partition: i32, latency_ms: i64) {
        let mut groups = self.groups.lock().unwrap_or_else(|e| e.into_inner());
        let key = (group.to_string(), topic.to_string(), partition);
        let stat = groups.entry(key).or_insert_with(|| {
            let stat = Shared::default();
            let p = partition.to_string();
            register_value_stats(
                &self.metrics,
                &stat,
                &[
                    ("source", self.source.as_str()),
                    ("target", self.target.as_str()),
                    ("group", group),
                    ("topic", topic),
                    ("partition", p.as_str()),
                ],
                [
                    ("checkpoint-latency-ms", "Time it takes consumer group offsets to replicate from source to target cluster."),
                    ("checkpoint-latency-ms-max", "Max time it takes consumer group offsets to replicate from source to target cluster."),
                    ("checkpoint-latency-ms-min", "Min time it takes consumer group offsets to replicate from source to target cluster."),
                    ("checkpoint-latency-ms-avg", "Average time it takes consumer group offsets to replicate from source to target cluster."),
                ],
            );
            stat
        });
        stat.lock()
            .unwrap_or_else(|e| e.into_inner())
            .record(latency_ms as f64, now_ms());
    }
}

/// Says, once per call, what `metric.names.formats` (Java's: `legacy`, the default, and/or
/// `new`) means natively: the KIP-1280 names are always reported, on `/metrics`; the legacy
/// names, which Java reports through JMX only, are not (Tributary has no JMX). A user who
/// asked for `legacy` explicitly is warned.
pub fn note_names_formats(props: &tributary_api::Props) {
    let Some(v) = props.get("metric.names.formats") else {
        tracing::debug!("MirrorMaker metrics are reported under KIP-1280's names on /metrics");
        return;
    };
    if v.split(',')
        .any(|f| f.trim().eq_ignore_ascii_case("legacy"))
    {
        tracing::warn!(
            "metric.names.formats={v}: Tributary's native MirrorMaker tasks report their metrics under KIP-1280's names on /metrics (as with metric.names.formats=new); the legacy JMX names are not reported"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::metrics::PluginMetricsRegistry;

    #[test]
    fn sampled_statistics_cover_the_last_two_windows() {
        let mut s = Sampled::default();
        assert!(s.max(0).is_nan() && s.avg(0).is_nan(), "no sample yet");
        assert_eq!(s.rate(0, true), 0.0);
        s.record(10.0, 0);
        s.record(30.0, 1_000);
        assert_eq!(
            (s.max(2_000), s.min(2_000), s.avg(2_000)),
            (30.0, 10.0, 20.0)
        );
        // Two records in 2 s, the elapsed time made up to one whole window more (Kafka's
        // `Rate` with two samples): 2 per 32 s.
        assert!((s.rate(2_000, true) - 2.0 / 32.0).abs() < 1e-9);
        assert!((s.rate(2_000, false) - 40.0 / 32.0).abs() < 1e-9);
        // A second window; the first is still live.
        s.record(5.0, 31_000);
        assert_eq!((s.max(31_000), s.min(31_000)), (30.0, 5.0));
        // A third window replaces the first.
        s.record(7.0, 62_000);
        assert_eq!((s.max(62_000), s.min(62_000)), (7.0, 5.0));
        // Everything expired: no statistic, totals kept.
        assert!(s.max(200_000).is_nan());
        assert_eq!((s.count(), s.sum(), s.last()), (4.0, 52.0, 7.0));
    }

    #[test]
    fn a_source_tasks_metrics_are_javas_names_and_tags() {
        let registry = Arc::new(PluginMetricsRegistry::default());
        let handle = registry.plugin_metrics(&[("connector", "mm2"), ("task", "0")]);
        let m = MirrorSourceMetrics::new(&handle, "A", "B", &[("A.orders".into(), 1)]);
        let now = now_ms();
        m.polled("A.orders", 1, 40, 100, now);
        m.acknowledged("A.orders", 1, 55, now);
        m.acknowledged("A.orders", 7, 1, now);
        let sample = |name: &str| {
            registry
                .samples()
                .into_iter()
                .find(|s| s.name == name)
                .unwrap_or_else(|| panic!("{name}"))
        };
        let count = sample("record-count");
        assert_eq!(count.value, 1.0, "an unknown partition is not counted");
        let tags: Vec<&str> = count.tags.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            tags,
            [
                "connector",
                "task",
                "source",
                "target",
                "topic",
                "partition"
            ]
        );
        assert_eq!(sample("byte-count").value, 100.0);
        assert_eq!(sample("record-age-ms").value, 40.0);
        assert_eq!(sample("replication-latency-ms-max").value, 55.0);
        assert_eq!(registry.samples().len(), 12, "Java's twelve per partition");
    }
}
