//! The plugin registry (Connect's `Plugins` / `DelegatingClassLoader`): resolves connector,
//! task, converter, transformation and predicate class names and aliases to the plugins linked
//! into this binary. The registry indexes the [`PluginSet`] it is given; the `tributary` binary
//! gives it the built-ins of `tributary-plugins` and, with `plugin.path`, the Java connectors
//! `tributary-jvm` found there (hosted plugins, whose tasks come from the connector plugin:
//! [`Plugins::task_factory_for`]).
//!
//! Aliases follow Connect's `PluginUtils.computeAliases`: every plugin class has its simple
//! class name (for a nested class such as `InsertField$Value`, the part after `$`: `Value`) and
//! that name without its type suffix (`Connector`, `Converter`, `HeaderConverter`,
//! `Transformation`, `Predicate`) when the suffix is not the whole name. Aliases are computed
//! over the plugins of every kind together, and an alias that would name two different classes
//! is dropped, so `Value` and `Key` name nothing while `RegexRouter` names
//! `org.apache.kafka.connect.transforms.RegexRouter`. A class that is a plugin of several kinds
//! (`StringConverter` is a converter and a header converter) counts once.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tributary_api::connector::{Connector, ConnectorType};
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::plugin::{
    ConnectorPlugin, ConverterPlugin, HeaderConverterPlugin, PluginSet, TaskFactory,
};
use tributary_api::transforms::{PredicatePlugin, TransformationPlugin};

/// Resolution failures, with Connect's messages.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PluginError {
    /// No connector matches the class name or alias.
    #[error("Failed to find any class that implements Connector and which name matches {name}, available connectors are: {available}")]
    UnknownConnector { name: String, available: String },
    /// No converter of that name.
    #[error("Failed to find any class that implements {kind} and which name matches {name}, available {kind}s are: {available}")]
    UnknownConverter {
        kind: &'static str,
        name: String,
        available: String,
    },
    /// A task class that no plugin provides.
    #[error("Failed to find task class {0}")]
    UnknownTask(String),
    /// No installed version of the plugin meets a KIP-891 requirement
    /// (`connector.plugin.version`), Connect's `VersionedPluginLoadingException`.
    #[error("Plugin {class} not found that matches the version range {requirement}, available versions: {available}")]
    NoMatchingVersion {
        class: String,
        requirement: String,
        available: String,
    },
    /// The one installed version of the plugin does not meet a KIP-891 requirement (Connect's
    /// message for a plugin of its class path).
    #[error("Plugin {class} has version {version} which does not match the required version range {requirement}")]
    VersionMismatch {
        class: String,
        version: String,
        requirement: String,
    },
    /// No plugin class of that name or alias at all (Connect's `ClassNotFoundException`, as
    /// `ConfigDef` reports it for a `CLASS` setting).
    #[error("Class {0} could not be found.")]
    UnknownClass(String),
}

/// The kinds of plugin the registry knows (Connect's `PluginType`, the ones Tributary links).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// A source or sink connector.
    Connector,
    /// A key or value converter.
    Converter,
    /// A header converter.
    HeaderConverter,
    /// A single message transformation (KIP-66).
    Transformation,
    /// A predicate (KIP-585).
    Predicate,
}

impl PluginKind {
    /// The suffix Connect prunes from a simple class name to make the short alias.
    fn alias_suffix(self) -> &'static str {
        match self {
            PluginKind::Connector => "Connector",
            PluginKind::Converter => "Converter",
            PluginKind::HeaderConverter => "HeaderConverter",
            PluginKind::Transformation => "Transformation",
            PluginKind::Predicate => "Predicate",
        }
    }

    /// The Java interface a plugin of this kind implements, as Connect's messages name it.
    pub fn interface_name(self) -> &'static str {
        match self {
            PluginKind::Connector => "Connector",
            PluginKind::Converter => "Converter",
            PluginKind::HeaderConverter => "HeaderConverter",
            PluginKind::Transformation => "Transformation",
            PluginKind::Predicate => "Predicate",
        }
    }
}

/// What a class name or alias names, beyond a plugin of the kind asked for (see
/// [`Plugins::classify`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClassLookup {
    /// A plugin of the kind asked for, under its full class name.
    Plugin(&'static str),
    /// A plugin class of other kinds only (e.g. a connector given as a transformation).
    OtherKind(&'static str),
    /// The outer class of nested plugin classes (`…InsertField` of `InsertField$Key` and
    /// `InsertField$Value`): Connect's abstract base classes, which cannot be instantiated.
    /// Holds the nested plugin classes of the kind asked for, sorted.
    Abstract(Vec<&'static str>),
    /// No class of that name.
    Unknown,
}

/// Test plugins kept out of `GET /connector-plugins` and out of validation's recommended
/// values, as Connect hides its own test connectors (they stay usable by class name).
pub const HIDDEN_PLUGINS: &[&str] = &[
    "org.apache.kafka.connect.tools.VerifiableSourceConnector",
    "org.apache.kafka.connect.tools.VerifiableSinkConnector",
    "org.apache.kafka.connect.tools.MockSourceConnector",
    "org.apache.kafka.connect.tools.MockSinkConnector",
    "io.tributary.connect.testing.FlakySourceConnector",
    "io.tributary.connect.testing.TestTransformation",
    "io.tributary.connect.testing.TestPredicate",
];

/// Whether a plugin class is listed (not one of [`HIDDEN_PLUGINS`]).
pub fn is_listed(class: &str) -> bool {
    !HIDDEN_PLUGINS.contains(&class)
}

/// All plugins available to this worker, indexed by class name and alias.
pub struct Plugins {
    set: PluginSet,
    /// Alias (simple or pruned class name) → the one class it names, over every kind.
    aliases: HashMap<String, &'static str>,
    connector_index: HashMap<&'static str, usize>,
    converter_index: HashMap<&'static str, usize>,
    header_converter_index: HashMap<&'static str, usize>,
    transformation_index: HashMap<&'static str, usize>,
    predicate_index: HashMap<&'static str, usize>,
    task_index: HashMap<String, TaskFactory>,
    /// Connector class → the indexes of every installed version, oldest first (KIP-891: a
    /// class on `plugin.path` in several versions); `connector_index` names the newest.
    connector_versions: HashMap<&'static str, Vec<usize>>,
    /// The same for converters, header converters, transformations and predicates.
    converter_versions: HashMap<&'static str, Vec<usize>>,
    header_converter_versions: HashMap<&'static str, Vec<usize>>,
    transformation_versions: HashMap<&'static str, Vec<usize>>,
    predicate_versions: HashMap<&'static str, Vec<usize>>,
    /// The metrics connectors and tasks register for themselves (KIP-877), with the set's
    /// collectors.
    plugin_metrics: Arc<tributary_api::metrics::PluginMetricsRegistry>,
}

/// Java's `Class.getSimpleName()` of a class name: after the last `.` and the last `$`.
fn simple_name(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}

/// Connect's aliases of a plugin class: its simple name and, when the simple name ends with
/// `suffix` and is more than it, the simple name without it.
fn aliases(class: &str, suffix: &str) -> Vec<String> {
    let simple = simple_name(class);
    let mut out = vec![simple.to_string()];
    if let Some(pos) = simple.rfind(suffix) {
        if pos > 0 {
            out.push(simple[..pos].to_string());
        }
    }
    out
}

/// Class → the indexes of its versions in `items`, oldest first (Maven order), and class → the
/// newest's index.
#[allow(clippy::type_complexity)]
fn version_index<T>(
    items: &[T],
    class: impl Fn(&T) -> &'static str,
    version: impl Fn(&T) -> &'static str,
) -> (
    HashMap<&'static str, usize>,
    HashMap<&'static str, Vec<usize>>,
) {
    let mut versions: HashMap<&'static str, Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        versions.entry(class(item)).or_default().push(i);
    }
    for indexes in versions.values_mut() {
        // Stable: of equal versions, the one added last stays last (it wins, as before).
        indexes.sort_by(|a, b| {
            crate::config::plugin_version::compare(version(&items[*a]), version(&items[*b]))
        });
    }
    let newest = versions
        .iter()
        .map(|(c, v)| (*c, *v.last().expect("one version at least")))
        .collect();
    (newest, versions)
}

/// The newest of `indexes` (oldest first) whose version meets `requirement` (KIP-891);
/// without one, the newest. Errors as Connect's: for one installed version, that it does not
/// match; for several, that none does, naming them.
fn choose_version<'a, T>(
    items: &'a [T],
    indexes: &[usize],
    class: &str,
    version: impl Fn(&T) -> &'static str,
    requirement: Option<&str>,
) -> Result<&'a T, PluginError> {
    let newest = &items[*indexes.last().expect("one version at least")];
    let Some(requirement) = requirement.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(newest);
    };
    if requirement == "latest" {
        return Ok(newest);
    }
    // The highest version the requirement accepts (the order of `indexes` puts a native
    // default last whatever its version; a requirement goes by versions alone). Of equal
    // versions, the one added last.
    let found = indexes
        .iter()
        .map(|i| &items[*i])
        .filter(|p| crate::config::plugin_version::version_accepted(requirement, version(p)))
        .max_by(|a, b| crate::config::plugin_version::compare(version(a), version(b)));
    match found {
        Some(p) => Ok(p),
        None if indexes.len() == 1 => Err(PluginError::VersionMismatch {
            class: class.to_string(),
            version: version(newest).to_string(),
            requirement: crate::config::plugin_version::range_display(requirement),
        }),
        None => Err(PluginError::NoMatchingVersion {
            class: class.to_string(),
            requirement: crate::config::plugin_version::range_display(requirement),
            available: indexes
                .iter()
                .map(|i| version(&items[*i]))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

impl Plugins {
    /// The worker's plugin metrics (KIP-877): each connector and task gets a handle on it,
    /// `/metrics` reads it.
    pub fn plugin_metrics(&self) -> &Arc<tributary_api::metrics::PluginMetricsRegistry> {
        &self.plugin_metrics
    }

    /// Indexes a set of plugins.
    pub fn new(set: PluginSet) -> Plugins {
        let (mut connector_index, mut connector_versions) =
            version_index(&set.connectors, |p| p.class, |p| p.version);
        // A native default stays the default whatever the Java versions beside it
        // (`PluginSet::native_defaults`): it is put last, where the newest goes.
        for class in &set.native_defaults {
            if let Some(indexes) = connector_versions.get_mut(class) {
                if let Some(pos) = indexes.iter().position(|i| !set.connectors[*i].is_hosted()) {
                    let native = indexes.remove(pos);
                    indexes.push(native);
                    connector_index.insert(class, native);
                }
            }
        }
        let (converter_index, converter_versions) =
            version_index(&set.converters, |p| p.class, |p| p.version);
        let (header_converter_index, header_converter_versions) =
            version_index(&set.header_converters, |p| p.class, |p| p.version);
        let (transformation_index, transformation_versions) =
            version_index(&set.transformations, |p| p.class, |p| p.version);
        let (predicate_index, predicate_versions) =
            version_index(&set.predicates, |p| p.class, |p| p.version);
        let task_index = set
            .tasks
            .iter()
            .map(|t| (t.class.to_string(), t.new.clone()))
            .collect();
        let mut named: HashMap<String, BTreeSet<&'static str>> = HashMap::new();
        let mut all_classes: Vec<(&'static str, PluginKind)> = Vec::new();
        all_classes.extend(
            set.connectors
                .iter()
                .map(|p| (p.class, PluginKind::Connector)),
        );
        all_classes.extend(
            set.converters
                .iter()
                .map(|p| (p.class, PluginKind::Converter)),
        );
        all_classes.extend(
            set.header_converters
                .iter()
                .map(|p| (p.class, PluginKind::HeaderConverter)),
        );
        all_classes.extend(
            set.transformations
                .iter()
                .map(|p| (p.class, PluginKind::Transformation)),
        );
        all_classes.extend(
            set.predicates
                .iter()
                .map(|p| (p.class, PluginKind::Predicate)),
        );
        for (class, kind) in &all_classes {
            for alias in aliases(class, kind.alias_suffix()) {
                named.entry(alias).or_default().insert(class);
            }
        }
        let is_class = |name: &str| all_classes.iter().any(|(c, _)| *c == name);
        let aliases = named
            .into_iter()
            .filter(|(alias, classes)| classes.len() == 1 && !is_class(alias))
            .map(|(alias, classes)| {
                let class = *classes.iter().next().expect("one class");
                (alias, class)
            })
            .collect();
        let plugin_metrics = Arc::new(tributary_api::metrics::PluginMetricsRegistry::default());
        for c in &set.metric_collectors {
            plugin_metrics.add_collector(c.clone());
        }
        Plugins {
            connector_versions,
            converter_versions,
            header_converter_versions,
            transformation_versions,
            predicate_versions,
            plugin_metrics,
            set,
            aliases,
            connector_index,
            converter_index,
            header_converter_index,
            transformation_index,
            predicate_index,
            task_index,
        }
    }

    /// The full class name `name` stands for: the class an alias names, or `name` itself
    /// (trimmed, as `ConfigDef` trims class settings).
    pub fn resolve_class_name<'a>(&'a self, name: &'a str) -> &'a str {
        let name = name.trim();
        self.aliases.get(name).copied().unwrap_or(name)
    }

    fn kind_index(&self, kind: PluginKind) -> &HashMap<&'static str, usize> {
        match kind {
            PluginKind::Connector => &self.connector_index,
            PluginKind::Converter => &self.converter_index,
            PluginKind::HeaderConverter => &self.header_converter_index,
            PluginKind::Transformation => &self.transformation_index,
            PluginKind::Predicate => &self.predicate_index,
        }
    }

    /// The full class name of the plugin of `kind` that `name` (class name or alias) names.
    pub fn plugin_class(&self, name: &str, kind: PluginKind) -> Option<&'static str> {
        let full = self.resolve_class_name(name);
        self.kind_index(kind)
            .get_key_value(full)
            .map(|(class, _)| *class)
    }

    /// What `name` (a class name or alias, trimmed) names when a plugin of `kind` is wanted:
    /// for validation messages as Connect words them (`Class … could not be found.`, `Class
    /// class … does not implement the Transformation interface`, `This class is abstract …`).
    pub fn classify(&self, name: &str, kind: PluginKind) -> ClassLookup {
        if let Some(class) = self.plugin_class(name, kind) {
            return ClassLookup::Plugin(class);
        }
        let full = self.resolve_class_name(name);
        for other in [
            PluginKind::Connector,
            PluginKind::Converter,
            PluginKind::HeaderConverter,
            PluginKind::Transformation,
            PluginKind::Predicate,
        ] {
            if let Some((class, _)) = self.kind_index(other).get_key_value(full) {
                return ClassLookup::OtherKind(class);
            }
        }
        let nested_prefix = format!("{full}$");
        let mut nested: Vec<&'static str> = self
            .kind_index(kind)
            .keys()
            .filter(|c| c.starts_with(&nested_prefix) && !c[nested_prefix.len()..].contains('$'))
            .copied()
            .collect();
        if !nested.is_empty() && full.contains('.') {
            nested.sort_unstable();
            return ClassLookup::Abstract(nested);
        }
        ClassLookup::Unknown
    }

    /// The connector plugin named by a class name or alias.
    pub fn connector_plugin(&self, name: &str) -> Result<&ConnectorPlugin, PluginError> {
        let name = name.trim();
        self.plugin_class(name, PluginKind::Connector)
            .map(|c| &self.set.connectors[self.connector_index[c]])
            .ok_or_else(|| PluginError::UnknownConnector {
                name: name.to_string(),
                available: self.available_connectors(),
            })
    }

    /// The connector plugin named by a class name or alias in the version a KIP-891
    /// requirement (`connector.plugin.version`: a version, a Maven range or `latest`) asks for:
    /// the newest installed version that meets it; without a requirement the newest. Errors:
    /// an unknown connector, or no installed version meeting the requirement (Connect's
    /// message, naming the available versions).
    pub fn connector_plugin_in(
        &self,
        name: &str,
        requirement: Option<&str>,
    ) -> Result<&ConnectorPlugin, PluginError> {
        let latest = self.connector_plugin(name)?;
        choose_version(
            &self.set.connectors,
            &self.connector_versions[latest.class],
            latest.class,
            |p| p.version,
            requirement,
        )
    }

    /// [`Plugins::converter_plugin`] in the version a KIP-891 requirement
    /// (`key.converter.plugin.version`, …) asks for, as [`Plugins::connector_plugin_in`].
    pub fn converter_plugin_in(
        &self,
        name: &str,
        requirement: Option<&str>,
    ) -> Result<&ConverterPlugin, PluginError> {
        let latest = self.converter_plugin(name)?;
        choose_version(
            &self.set.converters,
            &self.converter_versions[latest.class],
            latest.class,
            |p| p.version,
            requirement,
        )
    }

    /// [`Plugins::header_converter_plugin`] in the version a KIP-891 requirement
    /// (`header.converter.plugin.version`) asks for.
    pub fn header_converter_plugin_in(
        &self,
        name: &str,
        requirement: Option<&str>,
    ) -> Result<&HeaderConverterPlugin, PluginError> {
        let latest = self.header_converter_plugin(name)?;
        choose_version(
            &self.set.header_converters,
            &self.header_converter_versions[latest.class],
            latest.class,
            |p| p.version,
            requirement,
        )
    }

    /// [`Plugins::transformation_plugin`] in the version a KIP-891 requirement
    /// (`transforms.<alias>.plugin.version`) asks for.
    pub fn transformation_plugin_in(
        &self,
        name: &str,
        requirement: Option<&str>,
    ) -> Result<&TransformationPlugin, PluginError> {
        let latest = self.transformation_plugin(name)?;
        choose_version(
            &self.set.transformations,
            &self.transformation_versions[latest.class],
            latest.class,
            |p| p.version,
            requirement,
        )
    }

    /// [`Plugins::predicate_plugin`] in the version a KIP-891 requirement
    /// (`predicates.<alias>.plugin.version`) asks for.
    pub fn predicate_plugin_in(
        &self,
        name: &str,
        requirement: Option<&str>,
    ) -> Result<&PredicatePlugin, PluginError> {
        let latest = self.predicate_plugin(name)?;
        choose_version(
            &self.set.predicates,
            &self.predicate_versions[latest.class],
            latest.class,
            |p| p.version,
            requirement,
        )
    }

    /// The version of plugin class `class` of `kind` that a KIP-891 requirement picks (the
    /// newest meeting it; the newest without one). Errors as [`Plugins::connector_plugin_in`].
    pub fn version_in(
        &self,
        kind: PluginKind,
        class: &str,
        requirement: Option<&str>,
    ) -> Result<&'static str, PluginError> {
        match kind {
            PluginKind::Connector => self
                .connector_plugin_in(class, requirement)
                .map(|p| p.version),
            PluginKind::Converter => self
                .converter_plugin_in(class, requirement)
                .map(|p| p.version),
            PluginKind::HeaderConverter => self
                .header_converter_plugin_in(class, requirement)
                .map(|p| p.version),
            PluginKind::Transformation => self
                .transformation_plugin_in(class, requirement)
                .map(|p| p.version),
            PluginKind::Predicate => self
                .predicate_plugin_in(class, requirement)
                .map(|p| p.version),
        }
    }

    /// Every installed version of a plugin class of `kind`, oldest first (empty for an
    /// unknown class).
    pub fn versions(&self, kind: PluginKind, class: &str) -> Vec<&'static str> {
        let (map, version): (_, &dyn Fn(usize) -> &'static str) = match kind {
            PluginKind::Connector => (&self.connector_versions, &|i| {
                self.set.connectors[i].version
            }),
            PluginKind::Converter => (&self.converter_versions, &|i| {
                self.set.converters[i].version
            }),
            PluginKind::HeaderConverter => (&self.header_converter_versions, &|i| {
                self.set.header_converters[i].version
            }),
            PluginKind::Transformation => (&self.transformation_versions, &|i| {
                self.set.transformations[i].version
            }),
            PluginKind::Predicate => (&self.predicate_versions, &|i| {
                self.set.predicates[i].version
            }),
        };
        map.get(class)
            .map(|v| v.iter().map(|i| version(*i)).collect())
            .unwrap_or_default()
    }

    /// Every installed version of a connector class, oldest first (empty for an unknown class).
    pub fn connector_versions(&self, class: &str) -> Vec<&'static str> {
        self.versions(PluginKind::Connector, class)
    }

    fn available_connectors(&self) -> String {
        let mut names: Vec<_> = self.set.connectors.iter().map(|c| c.class).collect();
        names.sort();
        names.join(", ")
    }

    /// A new connector instance.
    pub fn new_connector(&self, name: &str) -> Result<Box<dyn Connector>, PluginError> {
        Ok((self.connector_plugin(name)?.new)())
    }

    /// A new connector instance of the version a connector configuration runs: its
    /// `connector.class` as its `connector.plugin.version` asks for (KIP-891; see
    /// [`Plugins::connector_plugin_in`]). Errors: those of `connector_plugin_in`.
    pub fn new_connector_for(
        &self,
        config: &tributary_api::Props,
    ) -> Result<Box<dyn Connector>, PluginError> {
        let class = config.get("connector.class").map_or("", String::as_str);
        let requirement = config
            .get(crate::config::connector::CONNECTOR_VERSION_CONFIG)
            .map(String::as_str);
        Ok((self.connector_plugin_in(class, requirement)?.new)())
    }

    /// The type of a connector class, if known.
    pub fn connector_type(&self, name: &str) -> Option<ConnectorType> {
        self.connector_plugin(name).ok().map(|p| p.connector_type)
    }

    /// The factory for a `task.class`.
    pub fn task_factory(&self, class: &str) -> Result<TaskFactory, PluginError> {
        self.task_index
            .get(class)
            .cloned()
            .ok_or_else(|| PluginError::UnknownTask(class.to_string()))
    }

    /// The factory for a `task.class` of a connector of class (or alias) `connector_class`:
    /// a hosted connector plugin (a Java one of `plugin.path`) creates its own tasks, as
    /// Connect loads a task with its connector's class loader; otherwise the task plugin of
    /// that class.
    /// `requirement` is the connector's `connector.plugin.version`, which picks the plugin
    /// version whose tasks run (as [`Plugins::connector_plugin_in`]).
    pub fn task_factory_for(
        &self,
        connector_class: &str,
        requirement: Option<&str>,
        task_class: &str,
    ) -> Result<TaskFactory, PluginError> {
        if let Ok(plugin) = self.connector_plugin_in(connector_class, requirement) {
            if let Some(tasks) = &plugin.tasks {
                return Ok(tasks(task_class));
            }
        }
        self.task_factory(task_class)
    }

    /// The converter plugin named by a class name or alias.
    pub fn converter_plugin(&self, name: &str) -> Result<&ConverterPlugin, PluginError> {
        let name = name.trim();
        self.plugin_class(name, PluginKind::Converter)
            .map(|c| &self.set.converters[self.converter_index[c]])
            .ok_or_else(|| {
                let mut names: Vec<_> = self.set.converters.iter().map(|c| c.class).collect();
                names.sort();
                PluginError::UnknownConverter {
                    kind: "Converter",
                    name: name.to_string(),
                    available: names.join(", "),
                }
            })
    }

    /// A new (unconfigured) converter.
    pub fn new_converter(&self, name: &str) -> Result<Box<dyn Converter>, PluginError> {
        Ok((self.converter_plugin(name)?.new)())
    }

    /// The header converter plugin named by a class name or alias.
    pub fn header_converter_plugin(
        &self,
        name: &str,
    ) -> Result<&HeaderConverterPlugin, PluginError> {
        let name = name.trim();
        self.plugin_class(name, PluginKind::HeaderConverter)
            .map(|c| &self.set.header_converters[self.header_converter_index[c]])
            .ok_or_else(|| {
                let mut names: Vec<_> =
                    self.set.header_converters.iter().map(|c| c.class).collect();
                names.sort();
                PluginError::UnknownConverter {
                    kind: "HeaderConverter",
                    name: name.to_string(),
                    available: names.join(", "),
                }
            })
    }

    /// A new (unconfigured) header converter.
    pub fn new_header_converter(
        &self,
        name: &str,
    ) -> Result<Box<dyn HeaderConverter>, PluginError> {
        Ok((self.header_converter_plugin(name)?.new)())
    }

    /// The transformation plugin named by a class name or alias (e.g. `RegexRouter`, or
    /// `org.apache.kafka.connect.transforms.InsertField$Value`; nested classes have no usable
    /// alias, as in Connect). Errors: [`PluginError::UnknownClass`].
    pub fn transformation_plugin(&self, name: &str) -> Result<&TransformationPlugin, PluginError> {
        self.plugin_class(name, PluginKind::Transformation)
            .map(|c| &self.set.transformations[self.transformation_index[c]])
            .ok_or_else(|| PluginError::UnknownClass(name.trim().to_string()))
    }

    /// The predicate plugin named by a class name or alias (e.g. `HasHeaderKey`). Errors:
    /// [`PluginError::UnknownClass`].
    pub fn predicate_plugin(&self, name: &str) -> Result<&PredicatePlugin, PluginError> {
        self.plugin_class(name, PluginKind::Predicate)
            .map(|c| &self.set.predicates[self.predicate_index[c]])
            .ok_or_else(|| PluginError::UnknownClass(name.trim().to_string()))
    }

    /// Every connector plugin, sorted as `GET /connector-plugins` lists them (sinks, then sources,
    /// each by class name).
    pub fn connectors(&self) -> Vec<&ConnectorPlugin> {
        let mut v: Vec<_> = self.set.connectors.iter().collect();
        // Several versions of a class: oldest first, as Connect's sorted PluginDescs.
        v.sort_by(|a, b| {
            (a.connector_type == ConnectorType::Source, a.class)
                .cmp(&(b.connector_type == ConnectorType::Source, b.class))
                .then_with(|| crate::config::plugin_version::compare(a.version, b.version))
        });
        v
    }

    /// Every converter plugin, by class name.
    pub fn converters(&self) -> Vec<&ConverterPlugin> {
        let mut v: Vec<_> = self.set.converters.iter().collect();
        v.sort_by_key(|p| p.class);
        v
    }

    /// Every header converter plugin, by class name.
    pub fn header_converters(&self) -> Vec<&HeaderConverterPlugin> {
        let mut v: Vec<_> = self.set.header_converters.iter().collect();
        v.sort_by_key(|p| p.class);
        v
    }

    /// Every transformation plugin, by class name.
    pub fn transformations(&self) -> Vec<&TransformationPlugin> {
        let mut v: Vec<_> = self.set.transformations.iter().collect();
        v.sort_by_key(|p| p.class);
        v
    }

    /// Every predicate plugin, by class name.
    pub fn predicates(&self) -> Vec<&PredicatePlugin> {
        let mut v: Vec<_> = self.set.predicates.iter().collect();
        v.sort_by_key(|p| p.class);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_drop_the_type_suffix_only_when_something_remains() {
        assert_eq!(
            aliases("a.b.FileStreamSourceConnector", "Connector"),
            vec!["FileStreamSourceConnector", "FileStreamSource"]
        );
        assert_eq!(aliases("a.b.Connector", "Connector"), vec!["Connector"]);
        assert_eq!(
            aliases("x.JsonConverter", "Converter"),
            vec!["JsonConverter", "Json"]
        );
    }

    use tributary_api::config::ConfigDef;
    use tributary_api::transforms::{ConnectRecord, Predicate, Transformation};
    use tributary_api::{ConnectResult, Props};

    #[derive(Default)]
    struct Nop;
    impl<R: ConnectRecord> Transformation<R> for Nop {
        fn configure(&mut self, _: &Props) -> ConnectResult<()> {
            Ok(())
        }
        fn apply(&mut self, r: R) -> ConnectResult<Option<R>> {
            Ok(Some(r))
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new()
        }
    }
    impl<R: ConnectRecord> Predicate<R> for Nop {
        fn configure(&mut self, _: &Props) -> ConnectResult<()> {
            Ok(())
        }
        fn test(&mut self, _: &R) -> bool {
            true
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new()
        }
    }

    fn registry() -> Plugins {
        let mut set = tributary_plugins::builtin();
        set.transformations = vec![
            TransformationPlugin::of::<Nop>("t.RegexRouter", "1"),
            TransformationPlugin::of::<Nop>("t.InsertField$Key", "1"),
            TransformationPlugin::of::<Nop>("t.InsertField$Value", "1"),
            TransformationPlugin::of::<Nop>("t.Cast$Value", "1"),
            TransformationPlugin::of::<Nop>("t.SomeTransformation", "1"),
        ];
        set.predicates = vec![PredicatePlugin::of::<Nop>("t.p.HasHeaderKey", "1")];
        Plugins::new(set)
    }

    #[test]
    fn a_connector_in_several_versions_is_chosen_by_requirement() {
        let mut set = tributary_plugins::builtin();
        let file = set
            .connectors
            .iter()
            .find(|c| c.class.ends_with("FileStreamSourceConnector"))
            .unwrap()
            .clone();
        for version in ["2.0.0", "1.0.0", "1.5.0"] {
            let mut other = file.clone();
            other.class = "org.example.Multi";
            other.version = version;
            set.connectors.push(other);
        }
        let p = Plugins::new(set);
        assert_eq!(
            p.connector_versions("org.example.Multi"),
            ["1.0.0", "1.5.0", "2.0.0"]
        );
        let version = |req: Option<&str>| p.connector_plugin_in("Multi", req).map(|c| c.version);
        assert_eq!(version(None).unwrap(), "2.0.0");
        assert_eq!(version(Some("latest")).unwrap(), "2.0.0");
        assert_eq!(version(Some("[1.0,2.0)")).unwrap(), "1.5.0");
        assert_eq!(version(Some("1.0.0")).unwrap(), "1.0.0");
        assert_eq!(
            version(Some("3.0")).unwrap_err().to_string(),
            "Plugin org.example.Multi not found that matches the version range [3.0], available versions: 1.0.0, 1.5.0, 2.0.0"
        );
        let listed: Vec<&str> = p
            .connectors()
            .into_iter()
            .filter(|c| c.class == "org.example.Multi")
            .map(|c| c.version)
            .collect();
        assert_eq!(listed, ["1.0.0", "1.5.0", "2.0.0"]);
        // A connector installed once: Connect's message for the one version it has.
        let single = match p.connector_plugin_in("FileStreamSource", Some("[99,)")) {
            Err(e) => e.to_string(),
            Ok(c) => panic!("{} accepted", c.version),
        };
        assert!(
            single.contains("which does not match the required version range [99,)"),
            "{single}"
        );
    }

    #[test]
    fn a_native_default_stays_the_default_beside_newer_java_versions() {
        let mut set = tributary_plugins::builtin();
        let file = set
            .connectors
            .iter()
            .find(|c| c.class.ends_with("FileStreamSourceConnector"))
            .unwrap()
            .clone();
        let mut native = file.clone();
        native.class = "org.example.Mirror";
        native.version = "0.1.0";
        set.connectors.push(native);
        for version in ["4.4.0", "4.3.1"] {
            let mut java = file.clone();
            java.class = "org.example.Mirror";
            java.version = version;
            let factory: tributary_api::plugin::HostedTaskFactory =
                std::sync::Arc::new(|_| unreachable!("no task made"));
            java.tasks = Some(factory);
            set.connectors.push(java);
        }
        set.native_defaults.push("org.example.Mirror");
        let p = Plugins::new(set);
        let chosen = |req: Option<&str>| {
            let c = p.connector_plugin_in("Mirror", req).unwrap();
            (c.version, c.is_hosted())
        };
        assert_eq!(chosen(None), ("0.1.0", false), "the native one by default");
        assert_eq!(chosen(Some("latest")), ("0.1.0", false));
        assert_eq!(
            chosen(Some("4.4.0")),
            ("4.4.0", true),
            "a Java one by its version"
        );
        assert_eq!(chosen(Some("[4.0,4.4)")), ("4.3.1", true));
        assert_eq!(chosen(Some("0.1.0")), ("0.1.0", false));
        assert_eq!(
            chosen(Some("[0,)")),
            ("4.4.0", true),
            "a range goes by versions alone"
        );
    }

    #[test]
    fn transformation_aliases_are_simple_names_unique_over_every_kind() {
        let p = registry();
        assert_eq!(
            p.plugin_class("RegexRouter", PluginKind::Transformation),
            Some("t.RegexRouter")
        );
        assert_eq!(
            p.plugin_class(" t.Cast$Value ", PluginKind::Transformation),
            Some("t.Cast$Value")
        );
        // The pruned name of a transformation drops "Transformation".
        assert_eq!(
            p.plugin_class("Some", PluginKind::Transformation),
            Some("t.SomeTransformation")
        );
        // `Value` would name InsertField$Value and Cast$Value; `Key` names one class only, as
        // Connect's alias rules give it, but nested names never take their outer part.
        assert_eq!(p.plugin_class("Value", PluginKind::Transformation), None);
        assert_eq!(
            p.plugin_class("Key", PluginKind::Transformation),
            Some("t.InsertField$Key")
        );
        assert_eq!(
            p.plugin_class("InsertField$Value", PluginKind::Transformation),
            None
        );
        assert_eq!(
            p.plugin_class("HasHeaderKey", PluginKind::Predicate),
            Some("t.p.HasHeaderKey")
        );
        // Aliases span kinds: a connector alias resolves to its class, which is no
        // transformation.
        assert_eq!(
            p.classify("FileStreamSink", PluginKind::Transformation),
            ClassLookup::OtherKind("org.apache.kafka.connect.file.FileStreamSinkConnector")
        );
        assert_eq!(
            p.classify("t.p.HasHeaderKey", PluginKind::Transformation),
            ClassLookup::OtherKind("t.p.HasHeaderKey")
        );
        assert_eq!(
            p.classify("t.InsertField", PluginKind::Transformation),
            ClassLookup::Abstract(vec!["t.InsertField$Key", "t.InsertField$Value"])
        );
        assert_eq!(
            p.classify("com.example.Nope", PluginKind::Transformation),
            ClassLookup::Unknown
        );
        // Converter aliases keep working: `String` names StringConverter for header
        // converters too, since the alias names one class.
        assert!(p.header_converter_plugin("String").is_ok());
        assert!(p.converter_plugin("Json").is_ok());
        assert!(p.connector_plugin("FileStreamSource").is_ok());
    }
}
