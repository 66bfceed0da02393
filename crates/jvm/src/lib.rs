//! Java connector plugins from `plugin.path`, hosted in an in-process JVM (issue #15, first
//! milestone).
//!
//! - [`mod@scan`]: at worker startup, a short-lived `java` process lists the connectors of
//!   `plugin.path` with Connect's own isolation classes (`Plugins`, `DelegatingClassLoader`,
//!   KIP-898's `plugin.discovery`), so listing plugins starts no JVM in the worker.
//! - [`vm`]: the worker's one JVM, started in-process on first use (libjvm of `JAVA_HOME` or
//!   of the `java` on `PATH`, `tributary.jvm.options`), which scans `plugin.path` again and
//!   loads each plugin in its own class loader.
//! - [`connector`] / [`task`]: [`connector::JavaConnector`], [`task::JavaSourceTask`] and
//!   [`task::JavaSinkTask`] implement Tributary's plugin traits by calling the bridge
//!   (`crates/jvm/java`, built by `scripts/jvm-bridge`); batches cross as bytes ([`codec`]).
//! - [`natives`]: the offset reader and connector context Java calls back into.
//! - [`transform`]: Java transformations and predicates in a connector's `transforms` chain.
//! - [`converter`]: Java converters and header converters a connector names.
//!
//! [`plugin_set`] turns scanned plugins into [`ConnectorPlugin`]s and [`merge`] applies the
//! precedence: a built-in (native) class wins over a Java plugin of the same class unless the
//! worker lists it in `tributary.plugins.prefer.java`.

pub mod codec;
pub mod config_provider;
pub mod connector;
pub mod converter;
pub mod natives;
pub mod scan;
pub mod task;
pub mod transform;
pub mod vm;

use std::sync::Arc;

use tributary_api::connector::ConnectorType;
use tributary_api::plugin::{ConnectorPlugin, PluginSet, TaskFactory};

pub use scan::{scan, scan_all, JavaConnectorDesc, Scan};
pub use transform::JavaTransformDesc;
pub use vm::{jvm_started, Jvm, JvmSettings};

/// The connector plugins for scanned Java connectors, hosted in `jvm`. Class names and
/// versions are leaked (once per worker) to fit the `'static` names of [`ConnectorPlugin`].
pub fn plugin_set(jvm: &Arc<Jvm>, descs: &[JavaConnectorDesc]) -> Vec<ConnectorPlugin> {
    descs
        .iter()
        .map(|d| {
            let class: &'static str = Box::leak(d.class.clone().into_boxed_str());
            let version: &'static str = Box::leak(d.version.clone().into_boxed_str());
            let connector_type = d.connector_type;
            let new = {
                let jvm = jvm.clone();
                Arc::new(move || {
                    Box::new(connector::JavaConnector::new(
                        jvm.clone(),
                        class.to_string(),
                        version.to_string(),
                        connector_type,
                    )) as Box<dyn tributary_api::connector::Connector>
                })
            };
            let tasks = {
                let jvm = jvm.clone();
                Arc::new(move |task_class: &str| {
                    let jvm = jvm.clone();
                    let task_class = task_class.to_string();
                    match connector_type {
                        ConnectorType::Source => TaskFactory::Source(Arc::new(move || {
                            Box::new(task::JavaSourceTask::new(
                                jvm.clone(),
                                class,
                                &task_class,
                                version,
                            ))
                        })),
                        ConnectorType::Sink => TaskFactory::Sink(Arc::new(move || {
                            Box::new(task::JavaSinkTask::new(
                                jvm.clone(),
                                class,
                                &task_class,
                                version,
                            ))
                        })),
                    }
                })
            };
            ConnectorPlugin {
                class,
                version,
                connector_type,
                new,
                tasks: Some(tasks),
            }
        })
        .collect()
}

/// The hosted plugins' own metrics (KIP-877), read from the JVM at each scrape: a collector for
/// [`PluginSet::metric_collectors`]. Nothing while the JVM has not started (it is never
/// started for a scrape); a failed read is logged and yields nothing.
pub fn metric_collector(jvm: &Arc<Jvm>) -> tributary_api::metrics::MetricCollector {
    let jvm = Arc::clone(jvm);
    Arc::new(move || {
        if !jvm.is_started() {
            return Vec::new();
        }
        let bytes = jvm.call(|env, bridge| {
            let out = env.call_static_method(bridge, "pluginMetrics", "()[B", &[])?;
            connector::bytes_result(env, out)
        });
        match bytes.map(|b| b.map(|b| codec::read_samples(&b))) {
            Ok(Some(Ok(samples))) => samples,
            Ok(None) => Vec::new(),
            Ok(Some(Err(e))) => {
                tracing::warn!(error = %e, "cannot read the hosted plugins' metrics");
                Vec::new()
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the hosted plugins' metrics");
                Vec::new()
            }
        }
    })
}

/// What [`merge`] did with each Java plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// Added (no built-in class of that name).
    Added(&'static str),
    /// Replaced the built-in class of that name (listed in `tributary.plugins.prefer.java`).
    ReplacedNative(&'static str),
    /// Left out: a built-in class of that name runs natively.
    ShadowedByNative(&'static str),
    /// Added as another version beside a native preview of that class
    /// ([`PluginSet::previews`]): the Java one is the default, the native one is chosen by
    /// `connector.plugin.version`.
    AddedBesidePreview(&'static str),
    /// Added as another version beside a native class that stays the default
    /// ([`PluginSet::native_defaults`]): the Java one runs when `connector.plugin.version`
    /// asks for its version.
    AddedBesideNative(&'static str),
}

/// Adds Java connector plugins to `set`. A class that is also built in stays native unless
/// `prefer_java` names it (class name), in which case the Java plugin replaces it, or unless
/// the built-in class is a preview ([`PluginSet::previews`]) or a native default
/// ([`PluginSet::native_defaults`]), in which case both are kept as versions of the class
/// (KIP-891).
pub fn merge(
    set: &mut PluginSet,
    java: Vec<ConnectorPlugin>,
    prefer_java: &[String],
) -> Vec<Merged> {
    let mut out = Vec::new();
    // Only the set's own classes can shadow or be replaced: a second Java plugin of a class
    // already added is another version of it (KIP-891), added as well.
    let natives: Vec<&'static str> = set.connectors.iter().map(|c| c.class).collect();
    let mut replaced: Vec<&'static str> = Vec::new();
    for plugin in java {
        let native = natives
            .iter()
            .position(|c| *c == plugin.class)
            .and_then(|_| set.connectors.iter().position(|c| c.class == plugin.class));
        match native {
            None => {
                out.push(Merged::Added(plugin.class));
                set.connectors.push(plugin);
            }
            Some(_) if set.previews.contains(&plugin.class) => {
                out.push(Merged::AddedBesidePreview(plugin.class));
                set.connectors.push(plugin);
            }
            Some(_) if replaced.contains(&plugin.class) => {
                out.push(Merged::Added(plugin.class));
                set.connectors.push(plugin);
            }
            Some(i) if prefer_java.iter().any(|p| p == plugin.class) => {
                out.push(Merged::ReplacedNative(plugin.class));
                replaced.push(plugin.class);
                set.connectors[i] = plugin;
            }
            Some(_) if set.native_defaults.contains(&plugin.class) => {
                out.push(Merged::AddedBesideNative(plugin.class));
                set.connectors.push(plugin);
            }
            Some(_) => out.push(Merged::ShadowedByNative(plugin.class)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(class: &str, t: ConnectorType) -> JavaConnectorDesc {
        JavaConnectorDesc {
            class: class.into(),
            version: "4.1.1".into(),
            connector_type: t,
            location: "file:/p/".into(),
        }
    }

    #[test]
    fn native_classes_win_unless_the_worker_prefers_java() {
        let jvm = Arc::new(Jvm::new(JvmSettings::default()));
        let java = plugin_set(
            &jvm,
            &[
                desc(
                    "org.apache.kafka.connect.file.FileStreamSourceConnector",
                    ConnectorType::Source,
                ),
                desc(
                    "org.apache.kafka.connect.file.FileStreamSinkConnector",
                    ConnectorType::Sink,
                ),
                desc("com.example.OtherConnector", ConnectorType::Sink),
            ],
        );
        let mut set = tributary_plugins::builtin();
        let merged = merge(
            &mut set,
            java,
            &["org.apache.kafka.connect.file.FileStreamSinkConnector".to_string()],
        );
        assert_eq!(
            merged,
            vec![
                Merged::ShadowedByNative("org.apache.kafka.connect.file.FileStreamSourceConnector"),
                Merged::ReplacedNative("org.apache.kafka.connect.file.FileStreamSinkConnector"),
                Merged::Added("com.example.OtherConnector"),
            ]
        );
        let find = |c: &str| set.connectors.iter().find(|p| p.class == c).unwrap();
        assert!(!find("org.apache.kafka.connect.file.FileStreamSourceConnector").is_hosted());
        assert!(find("org.apache.kafka.connect.file.FileStreamSinkConnector").is_hosted());
        assert!(find("com.example.OtherConnector").is_hosted());
        // Nothing above started a JVM.
        assert!(!jvm_started());
    }

    #[test]
    fn a_java_plugin_of_a_native_default_is_kept_beside_it_unless_java_is_preferred() {
        let jvm = Arc::new(Jvm::new(JvmSettings::default()));
        let class = "org.apache.kafka.connect.file.FileStreamSourceConnector";
        let mut set = tributary_plugins::builtin();
        set.native_defaults.push(class);
        let java = plugin_set(&jvm, &[desc(class, ConnectorType::Source)]);
        assert_eq!(
            merge(&mut set, java, &[]),
            vec![Merged::AddedBesideNative(class)]
        );
        let hosted: Vec<bool> = set
            .connectors
            .iter()
            .filter(|p| p.class == class)
            .map(|p| p.is_hosted())
            .collect();
        assert_eq!(hosted, [false, true], "both versions kept");
        let mut set = tributary_plugins::builtin();
        set.native_defaults.push(class);
        let java = plugin_set(&jvm, &[desc(class, ConnectorType::Source)]);
        assert_eq!(
            merge(&mut set, java, &[class.to_string()]),
            vec![Merged::ReplacedNative(class)],
            "tributary.plugins.prefer.java still replaces it"
        );
    }

    #[test]
    fn a_java_plugin_of_a_native_preview_is_kept_beside_it_as_another_version() {
        let jvm = Arc::new(Jvm::new(JvmSettings::default()));
        let class = "org.apache.kafka.connect.file.FileStreamSourceConnector";
        let java = plugin_set(&jvm, &[desc(class, ConnectorType::Source)]);
        let mut set = tributary_plugins::builtin();
        set.previews.push(class);
        assert_eq!(
            merge(&mut set, java, &[]),
            vec![Merged::AddedBesidePreview(class)]
        );
        let versions: Vec<(&str, bool)> = set
            .connectors
            .iter()
            .filter(|p| p.class == class)
            .map(|p| (p.version, p.is_hosted()))
            .collect();
        assert_eq!(
            versions,
            [(tributary_plugins::file::VERSION, false), ("4.1.1", true)],
            "both versions, the native one first"
        );
    }
}
