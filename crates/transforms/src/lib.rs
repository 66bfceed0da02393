//! Tributary's built-in single message transformations (KIP-66) and predicates (KIP-585),
//! native implementations under Apache Kafka Connect's class names
//! (`org.apache.kafka.connect.transforms.*`, `…transforms.predicates.*`) that give Connect's
//! results for the same settings and records.
//!
//! Each transformation implements [`tributary_api::transforms::Transformation`] for every record
//! kind; where Connect has `$Key` / `$Value` variants, one generic type takes the part it works
//! on as a type parameter ([`util::KeyPart`] / [`util::ValuePart`], see [`util::PartMarker`])
//! and both class names are listed by [`plugins`].
//!
//! Schemaless maps keep their entries' order (Connect's `HashMap`s have a hash order instead;
//! the maps are equal as maps), and schemas are rebuilt for each record where Connect caches
//! them per input schema (the results are equal).

pub mod cast;
pub mod extract_field;
pub mod field_path;
pub mod filter;
pub mod flatten;
pub mod header_from;
pub mod headers;
pub mod hoist_field;
pub mod insert_field;
mod java_compat;
pub mod java_regex;
pub mod mask_field;
pub mod predicates;
pub mod replace_field;
pub mod routers;
pub mod set_schema_metadata;
pub mod timestamp_converter;
pub mod util;
pub mod value_to_key;

#[cfg(test)]
mod test_records;

use tributary_api::plugin::PluginSet;
use tributary_api::transforms::{PredicatePlugin, TransformationPlugin};

use crate::util::{KeyPart, ValuePart};

/// Version reported for the built-in transformations and predicates (the Connect release whose
/// behaviour they follow).
pub const VERSION: &str = "4.4.0";

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
    transformation!(cast::Cast<KeyPart>, "Cast$Key");
    transformation!(cast::Cast<ValuePart>, "Cast$Value");
    transformation!(extract_field::ExtractField<KeyPart>, "ExtractField$Key");
    transformation!(extract_field::ExtractField<ValuePart>, "ExtractField$Value");
    transformation!(flatten::Flatten<KeyPart>, "Flatten$Key");
    transformation!(flatten::Flatten<ValuePart>, "Flatten$Value");
    transformation!(hoist_field::HoistField<KeyPart>, "HoistField$Key");
    transformation!(hoist_field::HoistField<ValuePart>, "HoistField$Value");
    transformation!(insert_field::InsertField<KeyPart>, "InsertField$Key");
    transformation!(insert_field::InsertField<ValuePart>, "InsertField$Value");
    transformation!(mask_field::MaskField<KeyPart>, "MaskField$Key");
    transformation!(mask_field::MaskField<ValuePart>, "MaskField$Value");
    transformation!(replace_field::ReplaceField<KeyPart>, "ReplaceField$Key");
    transformation!(replace_field::ReplaceField<ValuePart>, "ReplaceField$Value");
    transformation!(
        set_schema_metadata::SetSchemaMetadata<KeyPart>,
        "SetSchemaMetadata$Key"
    );
    transformation!(
        set_schema_metadata::SetSchemaMetadata<ValuePart>,
        "SetSchemaMetadata$Value"
    );
    transformation!(value_to_key::ValueToKey, "ValueToKey");
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
    fn every_class_is_listed_once_under_its_java_name() {
        let set = plugins();
        let classes: Vec<&str> = set.transformations.iter().map(|p| p.class).collect();
        let mut want: Vec<String> = [
            "ValueToKey",
            "TimestampRouter",
            "RegexRouter",
            "Filter",
            "InsertHeader",
            "DropHeaders",
        ]
        .iter()
        .map(|n| format!("org.apache.kafka.connect.transforms.{n}"))
        .collect();
        for name in [
            "Cast",
            "ExtractField",
            "Flatten",
            "HoistField",
            "InsertField",
            "MaskField",
            "ReplaceField",
            "SetSchemaMetadata",
            "TimestampConverter",
            "HeaderFrom",
        ] {
            for part in ["Key", "Value"] {
                want.push(format!("org.apache.kafka.connect.transforms.{name}${part}"));
            }
        }
        assert_eq!(classes.len(), want.len());
        for class in &want {
            assert_eq!(classes.iter().filter(|c| *c == class).count(), 1, "{class}");
        }
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
        assert!(set.predicates.iter().all(|p| p.version == VERSION));
        // Each constructor gives an instance with Connect's settings (Filter and
        // RecordIsTombstone have none).
        for p in &set.transformations {
            let keys = (p.new_sink)().config().keys.len();
            assert_eq!(keys, (p.new_source)().config().keys.len(), "{}", p.class);
            assert_eq!(keys == 0, p.class.ends_with(".Filter"), "{}", p.class);
        }
        for p in &set.predicates {
            let keys = (p.new_sink)().config().keys.len();
            assert_eq!(
                keys == 0,
                p.class.ends_with(".RecordIsTombstone"),
                "{}",
                p.class
            );
        }
    }
}
