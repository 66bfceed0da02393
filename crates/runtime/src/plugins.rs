//! The plugin registry (Connect's `Plugins` / `DelegatingClassLoader`): resolves connector,
//! task and converter class names and aliases to the plugins linked into this binary. The
//! registry indexes the [`PluginSet`] it is given; the `tributary` binary gives it the
//! built-ins of `tributary-plugins`.
//!
//! Aliases follow Connect: the simple class name, and the simple name without its type suffix
//! (`Connector`, `Converter`, `HeaderConverter`) when that suffix is not the whole name; an alias
//! that would name two plugins is dropped.

use std::collections::HashMap;

use tributary_api::connector::{Connector, ConnectorType};
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::plugin::{
    ConnectorPlugin, ConverterPlugin, HeaderConverterPlugin, PluginSet, TaskFactory,
};

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
}

/// All plugins available to this worker, indexed by class name and alias.
pub struct Plugins {
    set: PluginSet,
    connector_index: HashMap<String, usize>,
    converter_index: HashMap<String, usize>,
    header_converter_index: HashMap<String, usize>,
    task_index: HashMap<String, TaskFactory>,
}

fn simple_name(class: &str) -> &str {
    class.rsplit(['.', '$']).next().unwrap_or(class)
}

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

fn index<T>(
    items: &[T],
    class: impl Fn(&T) -> &'static str,
    suffix: &str,
) -> HashMap<String, usize> {
    let mut idx = HashMap::new();
    let mut alias_count: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        idx.insert(class(item).to_string(), i);
        for a in aliases(class(item), suffix) {
            alias_count.entry(a).or_default().push(i);
        }
    }
    for (alias, owners) in alias_count {
        if owners.len() == 1 && !idx.contains_key(&alias) {
            idx.insert(alias, owners[0]);
        }
    }
    idx
}

impl Plugins {
    /// Indexes a set of plugins.
    pub fn new(set: PluginSet) -> Plugins {
        let connector_index = index(&set.connectors, |p| p.class, "Connector");
        let converter_index = index(&set.converters, |p| p.class, "Converter");
        let header_converter_index = index(&set.header_converters, |p| p.class, "HeaderConverter");
        let task_index = set
            .tasks
            .iter()
            .map(|t| (t.class.to_string(), t.new))
            .collect();
        Plugins {
            set,
            connector_index,
            converter_index,
            header_converter_index,
            task_index,
        }
    }

    /// The connector plugin named by a class name or alias.
    pub fn connector_plugin(&self, name: &str) -> Result<&ConnectorPlugin, PluginError> {
        let name = name.trim();
        self.connector_index
            .get(name)
            .map(|&i| &self.set.connectors[i])
            .ok_or_else(|| PluginError::UnknownConnector {
                name: name.to_string(),
                available: self.available_connectors(),
            })
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

    /// The type of a connector class, if known.
    pub fn connector_type(&self, name: &str) -> Option<ConnectorType> {
        self.connector_plugin(name).ok().map(|p| p.connector_type)
    }

    /// The factory for a `task.class`.
    pub fn task_factory(&self, class: &str) -> Result<TaskFactory, PluginError> {
        self.task_index
            .get(class)
            .copied()
            .ok_or_else(|| PluginError::UnknownTask(class.to_string()))
    }

    /// The converter plugin named by a class name or alias.
    pub fn converter_plugin(&self, name: &str) -> Result<&ConverterPlugin, PluginError> {
        let name = name.trim();
        self.converter_index
            .get(name)
            .map(|&i| &self.set.converters[i])
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
        self.header_converter_index
            .get(name)
            .map(|&i| &self.set.header_converters[i])
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

    /// Every connector plugin, sorted as `GET /connector-plugins` lists them (sinks, then sources,
    /// each by class name).
    pub fn connectors(&self) -> Vec<&ConnectorPlugin> {
        let mut v: Vec<_> = self.set.connectors.iter().collect();
        v.sort_by_key(|p| (p.connector_type == ConnectorType::Source, p.class));
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
}
