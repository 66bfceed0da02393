//! Metrics a plugin registers for itself (KIP-877, Kafka's `PluginMetrics` as Connect hands it
//! to connectors and tasks through their contexts).
//!
//! The runtime gives each connector and task a [`PluginMetrics`] whose base tags name the
//! instance (`connector`, and `task` for a task, as Connect's `ConnectMetrics.connectorPluginTags`
//! and `taskPluginTags` do). A plugin builds a [`MetricName`] with its own extra tags and adds a
//! value function; the worker's `/metrics` shows every value at scrape time as
//! `kafka_connect_plugins_<name>` (group `plugins`, Connect's MBean
//! `kafka.connect:type=plugins,…`), labelled by all tags. When the instance stops, the runtime
//! closes its `PluginMetrics`, which removes what it registered; a closed one refuses new
//! metrics, as `PluginMetricsImpl` does.
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use tributary_api::metrics::PluginMetricsRegistry;
//!
//! let registry = Arc::new(PluginMetricsRegistry::default());
//! let metrics = registry.plugin_metrics(&[("connector", "orders"), ("task", "0")]);
//! let polled = Arc::new(AtomicU64::new(0));
//! let name = metrics.metric_name("rows-polled", "Rows read from the table", &[("table", "orders")]).unwrap();
//! let counter = polled.clone();
//! metrics.add_metric(&name, move || counter.load(Ordering::Relaxed) as f64).unwrap();
//! polled.fetch_add(3, Ordering::Relaxed);
//! assert_eq!(registry.samples()[0].value, 3.0);
//! metrics.close();
//! assert!(registry.samples().is_empty());
//! ```

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{ConnectError, ConnectResult};

/// The metric group of plugin metrics, as `PluginMetricsImpl` names it.
pub const PLUGIN_METRICS_GROUP: &str = "plugins";

/// A metric's identity: its name and its tags in order (the instance's base tags first, then
/// the plugin's own). Equality ignores the description, as Kafka's `MetricName` does.
#[derive(Clone, Debug)]
pub struct MetricName {
    /// The metric's name, e.g. `record-count` (Kafka's kebab case).
    pub name: String,
    /// Its description, shown as the series' help.
    pub description: String,
    /// The tags: base tags (`connector`, `task`, …) then the plugin's.
    pub tags: Vec<(String, String)>,
}

impl PartialEq for MetricName {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.tags == other.tags
    }
}

impl Eq for MetricName {}

impl std::hash::Hash for MetricName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.tags.hash(state);
    }
}

impl std::fmt::Display for MetricName {
    /// Kafka's `MetricName.toString()` shape, which its error messages use.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tags: Vec<String> = self.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        write!(
            f,
            "MetricName [name={}, group={PLUGIN_METRICS_GROUP}, description={}, tags={{{}}}]",
            self.name,
            self.description,
            tags.join(", ")
        )
    }
}

/// One value read at scrape time.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    /// The metric's name (kebab case).
    pub name: String,
    /// Its description.
    pub description: String,
    /// All its tags, base tags first.
    pub tags: Vec<(String, String)>,
    /// The value when read.
    pub value: f64,
}

type ValueFn = Arc<dyn Fn() -> f64 + Send + Sync>;
/// A source of samples kept outside the registry, read at every scrape (a plugin set's
/// [`crate::plugin::PluginSet::metric_collectors`]).
pub type MetricCollector = Arc<dyn Fn() -> Vec<Sample> + Send + Sync>;
type Collector = MetricCollector;
type Key = (String, Vec<(String, String)>);

/// Every plugin metric of one worker: what `/metrics` reads. Metrics registered through
/// [`PluginMetrics`] handles, plus collectors that report metrics kept elsewhere (the hosted
/// JVM's plugins, whose `PluginMetrics` is Kafka's own).
#[derive(Default)]
pub struct PluginMetricsRegistry {
    /// Name and tags → the handle that registered it, its description and value.
    metrics: Mutex<BTreeMap<Key, (u64, String, ValueFn)>>,
    collectors: Mutex<Vec<Collector>>,
    next_handle: std::sync::atomic::AtomicU64,
}

impl PluginMetricsRegistry {
    /// A handle for one connector or task instance, whose metrics carry `tags` first.
    pub fn plugin_metrics(self: &Arc<Self>, tags: &[(&str, &str)]) -> PluginMetrics {
        let id = self
            .next_handle
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PluginMetrics {
            inner: Arc::new(Handle {
                id,
                registry: self.clone(),
                tags: tags
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                state: Mutex::new(HandleState::default()),
            }),
        }
    }

    /// Adds a source of samples read at every scrape (samples of removed instances must not
    /// be returned by it).
    pub fn add_collector(&self, collector: MetricCollector) {
        lock(&self.collectors).push(collector);
    }

    /// Every metric's current value, the registered ones in name and tag order, then the
    /// collectors'. Value functions run outside the registry's lock.
    pub fn samples(&self) -> Vec<Sample> {
        let registered: Vec<(Key, String, ValueFn)> = lock(&self.metrics)
            .iter()
            .map(|(k, (_, d, f))| (k.clone(), d.clone(), f.clone()))
            .collect();
        let mut out: Vec<Sample> = registered
            .into_iter()
            .map(|((name, tags), description, value)| Sample {
                name,
                description,
                tags,
                value: value(),
            })
            .collect();
        let collectors: Vec<Collector> = lock(&self.collectors).clone();
        for c in collectors {
            out.extend(c());
        }
        out
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Default)]
struct HandleState {
    names: HashSet<Key>,
    closed: bool,
    /// Handles made by [`PluginMetrics::child`], closed with this one.
    children: Vec<PluginMetrics>,
}

struct Handle {
    /// Tells this instance's registrations from those of a later instance with the same tags.
    id: u64,
    registry: Arc<PluginMetricsRegistry>,
    tags: Vec<(String, String)>,
    state: Mutex<HandleState>,
}

/// What a connector or task registers its metrics with (Kafka's `PluginMetrics`, KIP-877).
/// Clones share the instance's registrations.
#[derive(Clone)]
pub struct PluginMetrics {
    inner: Arc<Handle>,
}

impl Default for PluginMetrics {
    /// A handle on a registry of its own, which nothing reads: for contexts built outside a
    /// worker (tests, tools).
    fn default() -> Self {
        Arc::new(PluginMetricsRegistry::default()).plugin_metrics(&[])
    }
}

impl std::fmt::Debug for PluginMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginMetrics")
            .field("tags", &self.inner.tags)
            .finish()
    }
}

impl PluginMetrics {
    /// The instance's base tags (`connector`, `task`, …).
    pub fn tags(&self) -> &[(String, String)] {
        &self.inner.tags
    }

    /// A handle for a plugin an instance uses (a converter, transformation or predicate of a
    /// task, KIP-877's `Monitorable`): this handle's base tags, then `tags` (Connect's
    /// `converter=key|value|header`, `transformation=<alias>`, `predicate=<alias>`). Closed
    /// with this handle.
    pub fn child(&self, tags: &[(&str, &str)]) -> PluginMetrics {
        let mut all: Vec<(&str, &str)> = self
            .inner
            .tags
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        all.extend_from_slice(tags);
        let child = self.inner.registry.plugin_metrics(&all);
        let mut state = lock(&self.inner.state);
        if state.closed {
            child.close();
        } else {
            state.children.push(child.clone());
        }
        child
    }

    /// The name of a metric of this instance: the base tags, then `tags`.
    ///
    /// Errors: a tag named as a base tag (`Cannot use connector as a tag name`), or a closed
    /// handle (`This PluginMetrics instance is closed`), as `PluginMetricsImpl.metricName`.
    pub fn metric_name(
        &self,
        name: &str,
        description: &str,
        tags: &[(&str, &str)],
    ) -> ConnectResult<MetricName> {
        self.check_open()?;
        let mut all = self.inner.tags.clone();
        for (k, v) in tags {
            if self.inner.tags.iter().any(|(base, _)| base == k) {
                return Err(ConnectError::config(format!(
                    "Cannot use {k} as a tag name"
                )));
            }
            all.push((k.to_string(), v.to_string()));
        }
        Ok(MetricName {
            name: name.to_string(),
            description: description.to_string(),
            tags: all,
        })
    }

    /// Registers a metric whose value `value` gives at each scrape.
    ///
    /// A metric of the same name and tags that another handle registered (an earlier instance
    /// of the same task, restarted while the old one still stops) is replaced; that handle's
    /// `close` then leaves the new one alone.
    ///
    /// Errors: this handle registered the name already (`Metric … already exists`), or it is
    /// closed.
    pub fn add_metric(
        &self,
        name: &MetricName,
        value: impl Fn() -> f64 + Send + Sync + 'static,
    ) -> ConnectResult<()> {
        let mut state = lock(&self.inner.state);
        if state.closed {
            return Err(closed());
        }
        let key = (name.name.clone(), name.tags.clone());
        let mut metrics = lock(&self.inner.registry.metrics);
        if state.names.contains(&key) {
            return Err(ConnectError::config(format!(
                "Metric {name} already exists"
            )));
        }
        metrics.insert(
            key.clone(),
            (self.inner.id, name.description.clone(), Arc::new(value)),
        );
        state.names.insert(key);
        Ok(())
    }

    /// Removes a metric this handle registered.
    ///
    /// Errors: a name it did not register (`Unknown metric …`), or a closed handle.
    pub fn remove_metric(&self, name: &MetricName) -> ConnectResult<()> {
        let mut state = lock(&self.inner.state);
        if state.closed {
            return Err(closed());
        }
        let key = (name.name.clone(), name.tags.clone());
        if !state.names.remove(&key) {
            return Err(ConnectError::config(format!("Unknown metric {name}")));
        }
        self.remove_own(&mut lock(&self.inner.registry.metrics), &key);
        Ok(())
    }

    /// Removes every metric of this handle and refuses new ones: the runtime calls it when the
    /// instance stops (Connect closes the instance's `PluginMetricsImpl`). Closing twice is a
    /// no-op.
    pub fn close(&self) {
        let children = std::mem::take(&mut lock(&self.inner.state).children);
        for child in children {
            child.close();
        }
        let mut state = lock(&self.inner.state);
        state.closed = true;
        let mut metrics = lock(&self.inner.registry.metrics);
        for key in state.names.drain() {
            self.remove_own(&mut metrics, &key);
        }
    }

    /// Removes `key` when this handle's registration is the one in place.
    fn remove_own(&self, metrics: &mut BTreeMap<Key, (u64, String, ValueFn)>, key: &Key) {
        if metrics
            .get(key)
            .is_some_and(|(owner, _, _)| *owner == self.inner.id)
        {
            metrics.remove(key);
        }
    }

    fn check_open(&self) -> ConnectResult<()> {
        if lock(&self.inner.state).closed {
            Err(closed())
        } else {
            Ok(())
        }
    }
}

fn closed() -> ConnectError {
    ConnectError::connect("This PluginMetrics instance is closed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_tags_come_first_and_may_not_be_reused() {
        let registry = Arc::new(PluginMetricsRegistry::default());
        let m = registry.plugin_metrics(&[("connector", "c"), ("task", "1")]);
        let name = m.metric_name("lag", "", &[("partition", "3")]).unwrap();
        let keys: Vec<&str> = name.tags.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["connector", "task", "partition"]);
        let err = m.metric_name("lag", "", &[("task", "9")]).unwrap_err();
        assert_eq!(err.to_string(), "Cannot use task as a tag name");
    }

    #[test]
    fn duplicates_unknown_names_and_closed_handles_are_refused() {
        let registry = Arc::new(PluginMetricsRegistry::default());
        let a = registry.plugin_metrics(&[("connector", "c")]);
        let b = registry.plugin_metrics(&[("connector", "c")]);
        let name = a.metric_name("x", "d", &[]).unwrap();
        a.add_metric(&name, || 1.0).unwrap();
        assert!(a
            .add_metric(&name, || 2.0)
            .unwrap_err()
            .to_string()
            .contains("already exists"));
        assert!(b
            .remove_metric(&name)
            .unwrap_err()
            .to_string()
            .starts_with("Unknown metric"));
        assert_eq!(registry.samples().len(), 1);
        a.close();
        assert!(registry.samples().is_empty());
        assert_eq!(
            a.add_metric(&name, || 1.0).unwrap_err().to_string(),
            "This PluginMetrics instance is closed"
        );
        assert_eq!(
            a.metric_name("y", "", &[]).unwrap_err().to_string(),
            "This PluginMetrics instance is closed"
        );
    }

    #[test]
    fn a_later_instance_replaces_and_survives_the_earlier_ones_close() {
        let registry = Arc::new(PluginMetricsRegistry::default());
        let old = registry.plugin_metrics(&[("connector", "c"), ("task", "0")]);
        let new = registry.plugin_metrics(&[("connector", "c"), ("task", "0")]);
        let name = old.metric_name("x", "", &[]).unwrap();
        old.add_metric(&name, || 1.0).unwrap();
        new.add_metric(&name, || 2.0).unwrap();
        old.close();
        let samples = registry.samples();
        assert_eq!(samples.len(), 1);
        assert_eq!(samples[0].value, 2.0);
        new.remove_metric(&name).unwrap();
        assert!(registry.samples().is_empty());
    }

    #[test]
    fn children_add_their_tags_and_close_with_their_parent() {
        let registry = Arc::new(PluginMetricsRegistry::default());
        let task = registry.plugin_metrics(&[("connector", "c"), ("task", "0")]);
        let converter = task.child(&[("converter", "key")]);
        let name = converter.metric_name("bytes", "", &[]).unwrap();
        let keys: Vec<&str> = name.tags.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["connector", "task", "converter"]);
        converter.add_metric(&name, || 1.0).unwrap();
        task.close();
        assert!(registry.samples().is_empty());
        assert!(converter.add_metric(&name, || 1.0).is_err());
    }

    #[test]
    fn collectors_are_read_at_each_scrape() {
        let registry = Arc::new(PluginMetricsRegistry::default());
        registry.add_collector(Arc::new(|| {
            vec![Sample {
                name: "n".into(),
                description: String::new(),
                tags: vec![],
                value: 7.0,
            }]
        }));
        assert_eq!(registry.samples()[0].value, 7.0);
    }
}
