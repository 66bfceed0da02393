//! Config providers a plugin implements (KIP-297's `ConfigProvider`): a Java class from
//! `plugin.path` hosted in the worker's JVM, declared in the worker file as Connect's own are
//! (`config.providers=<name>`, `config.providers.<name>.class`,
//! `config.providers.<name>.param.*`). The runtime resolves `${<name>:path:key}` references
//! through one exactly as through its built-in providers.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use crate::ConnectResult;

/// What a provider returned for a path (Connect's `ConfigData`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigData {
    /// The values found, by key; a key the provider does not have is absent.
    pub data: HashMap<String, String>,
    /// How long the values stay valid, in ms (`ConfigData.ttl()`); `None`: indefinitely.
    pub ttl_ms: Option<i64>,
}

/// One configured provider instance.
pub trait PluginConfigProvider: Send + Sync {
    /// The provider's class.
    fn class(&self) -> &str;

    /// `ConfigProvider.get(path, keys)` (`keys` empty: `get(path)`, every key at the path).
    /// Errors: the provider's exception, with its message.
    fn get(&self, path: &str, keys: &BTreeSet<&str>) -> ConnectResult<ConfigData>;
}

/// Creates provider `name` of class `class` from the worker settings `settings` (its
/// `config.providers.<name>.*` keys): `Ok(None)` when no plugin of that class can be hosted
/// (the runtime then refuses the setting naming it). Errors: the class was found but could not
/// be created or configured.
pub type PluginConfigProviderFactory = Arc<
    dyn Fn(
            &str,
            &str,
            &HashMap<String, String>,
        ) -> ConnectResult<Option<Arc<dyn PluginConfigProvider>>>
        + Send
        + Sync,
>;
