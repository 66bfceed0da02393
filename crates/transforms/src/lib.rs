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
pub mod flatten;
pub mod hoist_field;
pub mod insert_field;
mod java_compat;
pub mod mask_field;
pub mod replace_field;
pub mod set_schema_metadata;
pub mod util;
pub mod value_to_key;

#[cfg(test)]
mod test_records;

use tributary_api::plugin::PluginSet;
use tributary_api::transforms::TransformationPlugin;

use crate::util::{KeyPart, ValuePart};

/// Version reported for the built-in transformations and predicates (the Connect release whose
/// behaviour they follow).
pub const VERSION: &str = "4.1.1";

/// Every built-in transformation and predicate, under Connect's class names.
pub fn plugins() -> PluginSet {
    let mut set = PluginSet::default();
    let t = &mut set.transformations;
    t.push(
        TransformationPlugin::of::<insert_field::InsertField<KeyPart>>(
            "org.apache.kafka.connect.transforms.InsertField$Key",
            VERSION,
        ),
    );
    t.push(TransformationPlugin::of::<
        insert_field::InsertField<ValuePart>,
    >(
        "org.apache.kafka.connect.transforms.InsertField$Value",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<
        replace_field::ReplaceField<KeyPart>,
    >(
        "org.apache.kafka.connect.transforms.ReplaceField$Key",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<
        replace_field::ReplaceField<ValuePart>,
    >(
        "org.apache.kafka.connect.transforms.ReplaceField$Value",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<
        extract_field::ExtractField<KeyPart>,
    >(
        "org.apache.kafka.connect.transforms.ExtractField$Key",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<
        extract_field::ExtractField<ValuePart>,
    >(
        "org.apache.kafka.connect.transforms.ExtractField$Value",
        VERSION,
    ));
    t.push(
        TransformationPlugin::of::<hoist_field::HoistField<KeyPart>>(
            "org.apache.kafka.connect.transforms.HoistField$Key",
            VERSION,
        ),
    );
    t.push(
        TransformationPlugin::of::<hoist_field::HoistField<ValuePart>>(
            "org.apache.kafka.connect.transforms.HoistField$Value",
            VERSION,
        ),
    );
    t.push(TransformationPlugin::of::<
        set_schema_metadata::SetSchemaMetadata<KeyPart>,
    >(
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Key",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<
        set_schema_metadata::SetSchemaMetadata<ValuePart>,
    >(
        "org.apache.kafka.connect.transforms.SetSchemaMetadata$Value",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<value_to_key::ValueToKey>(
        "org.apache.kafka.connect.transforms.ValueToKey",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<mask_field::MaskField<KeyPart>>(
        "org.apache.kafka.connect.transforms.MaskField$Key",
        VERSION,
    ));
    t.push(
        TransformationPlugin::of::<mask_field::MaskField<ValuePart>>(
            "org.apache.kafka.connect.transforms.MaskField$Value",
            VERSION,
        ),
    );
    t.push(TransformationPlugin::of::<flatten::Flatten<KeyPart>>(
        "org.apache.kafka.connect.transforms.Flatten$Key",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<flatten::Flatten<ValuePart>>(
        "org.apache.kafka.connect.transforms.Flatten$Value",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<cast::Cast<KeyPart>>(
        "org.apache.kafka.connect.transforms.Cast$Key",
        VERSION,
    ));
    t.push(TransformationPlugin::of::<cast::Cast<ValuePart>>(
        "org.apache.kafka.connect.transforms.Cast$Value",
        VERSION,
    ));
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_is_listed_under_its_java_name() {
        let set = plugins();
        let classes: Vec<&str> = set.transformations.iter().map(|p| p.class).collect();
        let mut want = vec!["org.apache.kafka.connect.transforms.ValueToKey".to_string()];
        for name in [
            "Cast",
            "ExtractField",
            "Flatten",
            "HoistField",
            "InsertField",
            "MaskField",
            "ReplaceField",
            "SetSchemaMetadata",
        ] {
            for part in ["Key", "Value"] {
                want.push(format!("org.apache.kafka.connect.transforms.{name}${part}"));
            }
        }
        for class in &want {
            assert_eq!(classes.iter().filter(|c| *c == class).count(), 1, "{class}");
        }
        assert!(set.transformations.iter().all(|p| p.version == VERSION));
        // Each constructor gives a transformation with its settings.
        for p in &set.transformations {
            let t = (p.new_sink)();
            assert!(!t.config().keys.is_empty(), "{}", p.class);
        }
    }
}
