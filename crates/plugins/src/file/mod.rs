//! FileStream connectors (to be written).
use tributary_api::plugin::PluginSet;

/// The FileStream connector plugins.
pub fn plugins() -> PluginSet {
    PluginSet::default()
}
