//! Tributary's built-in single message transformations (KIP-66) and predicates (KIP-585),
//! native implementations under Apache Kafka Connect's class names
//! (`org.apache.kafka.connect.transforms.*`, `…transforms.predicates.*`) that give Connect's
//! results for the same settings and records.
//!
//! Each transformation implements [`tributary_api::transforms::Transformation`] for every record
//! kind; where Connect has `$Key` / `$Value` variants, one type takes the part it works on
//! ([`util::Part`]) and both class names are listed by [`plugins`].

pub mod filter;
pub mod header_from;
pub mod headers;
mod interim_util;
mod java_regex;
pub mod predicates;
pub mod routers;
pub mod timestamp_converter;
pub mod util;

#[cfg(test)]
mod test_support;

pub use interim_util::{KeyPart, PartMarker, ValuePart};

use tributary_api::plugin::PluginSet;
use tributary_api::transforms::{PredicatePlugin, TransformationPlugin};

/// Version reported for the built-in transformations and predicates (the Connect release whose
/// behaviour they follow).
pub const VERSION: &str = "4.1.1";

/// Every built-in transformation and predicate, under Connect's class names.
pub fn plugins() -> PluginSet {
    let mut set = PluginSet::default();
    macro_rules! transformation {
        ($ty:ty, $name:literal) => {
            set.transformations.push(TransformationPlugin::of::<$ty>(
                concat!("org.apache.kafka.connect.transforms.", $name),
                VERSION,
            ))
        };
    }
    macro_rules! predicate {
        ($ty:ty, $name:literal) => {
            set.predicates.push(PredicatePlugin::of::<$ty>(
                concat!("org.apache.kafka.connect.transforms.predicates.", $name),
                VERSION,
            ))
        };
    }
    transformation!(
        timestamp_converter::TimestampConverter<KeyPart>,
        "TimestampConverter$Key"
    );
    transformation!(
        timestamp_converter::TimestampConverter<ValuePart>,
        "TimestampConverter$Value"
    );
    transformation!(routers::TimestampRouter, "TimestampRouter");
    transformation!(routers::RegexRouter, "RegexRouter");
    transformation!(filter::Filter, "Filter");
    transformation!(headers::InsertHeader, "InsertHeader");
    transformation!(headers::DropHeaders, "DropHeaders");
    transformation!(header_from::HeaderFrom<KeyPart>, "HeaderFrom$Key");
    transformation!(header_from::HeaderFrom<ValuePart>, "HeaderFrom$Value");
    predicate!(predicates::HasHeaderKey, "HasHeaderKey");
    predicate!(predicates::RecordIsTombstone, "RecordIsTombstone");
    predicate!(predicates::TopicNameMatches, "TopicNameMatches");
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_listed_under_its_java_name() {
        let set = plugins();
        let transformations: Vec<_> = set.transformations.iter().map(|p| p.class).collect();
        assert_eq!(
            transformations,
            [
                "org.apache.kafka.connect.transforms.TimestampConverter$Key",
                "org.apache.kafka.connect.transforms.TimestampConverter$Value",
                "org.apache.kafka.connect.transforms.TimestampRouter",
                "org.apache.kafka.connect.transforms.RegexRouter",
                "org.apache.kafka.connect.transforms.Filter",
                "org.apache.kafka.connect.transforms.InsertHeader",
                "org.apache.kafka.connect.transforms.DropHeaders",
                "org.apache.kafka.connect.transforms.HeaderFrom$Key",
                "org.apache.kafka.connect.transforms.HeaderFrom$Value",
            ]
        );
        let predicates: Vec<_> = set.predicates.iter().map(|p| p.class).collect();
        assert_eq!(
            predicates,
            [
                "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
                "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
                "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
            ]
        );
        assert!(set.transformations.iter().all(|p| p.version == VERSION));
        // Each constructor gives a working instance for both record kinds.
        for p in &set.transformations {
            let _ = (p.new_source)().config();
            let _ = (p.new_sink)().config();
        }
        for p in &set.predicates {
            let _ = (p.new_source)().config();
            let _ = (p.new_sink)().config();
        }
    }
}
