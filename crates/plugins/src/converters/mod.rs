//! Converters (to be written).
use tributary_api::plugin::PluginSet;

/// The converter plugins.
pub fn plugins() -> PluginSet {
    PluginSet::default()
}
