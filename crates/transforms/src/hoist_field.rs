//! `HoistField`: wraps the key or value in a struct or map of one field.

use std::marker::PhantomData;
use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::{SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectResult, Props};

use crate::util::{PartMarker, Settings};

const FIELD: &str = "field";

/// The settings of `HoistField` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    ConfigDef::new().define(
        FIELD,
        ConfigType::String,
        None,
        None,
        Importance::Medium,
        "Name of the one field of the struct or map that wraps the data.",
    )
}

/// Wraps the key or value, whatever it is (null included), in a one-field struct when it has
/// a schema (the schema becomes an unnamed, required struct whose field has the old schema), or
/// in a one-entry map when schemaless.
///
/// Follows `org.apache.kafka.connect.transforms.HoistField$Key` / `$Value`. Setting: `field`
/// (required), the name of the field.
pub struct HoistField<P: PartMarker> {
    field: String,
    /// The last input schema and its wrapper schema (Connect caches wrappers per input
    /// schema); reused while records share one schema instance.
    last_schema: Option<(SchemaRef, SchemaRef)>,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for HoistField<P> {
    fn default() -> Self {
        HoistField {
            field: String::new(),
            last_schema: None,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for HoistField<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&config_def(), props)?;
        self.field = settings.string(FIELD).unwrap_or_default().to_string();
        self.last_schema = None;
        Ok(())
    }

    fn apply(&mut self, mut record: R) -> ConnectResult<Option<R>> {
        let schema = P::PART.schema(&record).cloned();
        // The part is taken out of the record (not copied) and put back wrapped.
        let value = P::PART.set(&mut record, None, Value::Null);
        match schema {
            None => {
                let wrapped = Value::Map(vec![(Value::String(self.field.clone()), value)]);
                P::PART.set(&mut record, None, wrapped);
            }
            Some(schema) => {
                let wrapper = match &self.last_schema {
                    Some((input, wrapper)) if Arc::ptr_eq(input, &schema) => wrapper.clone(),
                    _ => {
                        let wrapper = SchemaBuilder::struct_()
                            .field(self.field.clone(), schema.clone())?
                            .build();
                        self.last_schema = Some((schema, wrapper.clone()));
                        wrapper
                    }
                };
                let wrapped = Struct::new(wrapper.clone())?.put(&self.field, value)?;
                P::PART.set(&mut record, Some(wrapper), Value::Struct(wrapped));
            }
        }
        Ok(Some(record))
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::*;
    use crate::util::{KeyPart, ValuePart};
    use tributary_api::data::Schema;

    #[test]
    fn schemaless_data_goes_into_a_map() {
        let mut t: HoistField<KeyPart> = configured(&[("field", "magic")]);
        let out = apply(&mut t, source_key(None, Value::Int32(42))).unwrap();
        assert_eq!(out.key, map(&[("magic", Value::Int32(42))]));
        assert_eq!(out.key_schema, None);
        let out = apply(&mut t, source_key(None, Value::Null)).unwrap();
        assert_eq!(out.key, map(&[("magic", Value::Null)]));
    }

    #[test]
    fn records_of_one_schema_share_one_wrapper_and_another_schema_gets_its_own() {
        let mut t: HoistField<ValuePart> = configured(&[("field", "f")]);
        let int = Schema::int32_schema();
        let first = apply(&mut t, source_value(Some(int.clone()), Value::Int32(1))).unwrap();
        let second = apply(&mut t, source_value(Some(int), Value::Int32(2))).unwrap();
        let (w1, w2) = (first.value_schema.unwrap(), second.value_schema.unwrap());
        assert!(std::sync::Arc::ptr_eq(&w1, &w2));
        assert_eq!(as_struct(&second.value).get("f"), Some(&Value::Int32(2)));
        let text = apply(
            &mut t,
            source_value(Some(Schema::string_schema()), Value::from("x")),
        )
        .unwrap();
        let w3 = text.value_schema.unwrap();
        assert_eq!(w3.field("f").unwrap().schema, Schema::string_schema());
        assert_eq!(as_struct(&text.value).get("f"), Some(&Value::from("x")));
        // The key and everything else are untouched.
        assert_eq!(text.key, Value::Null);
        assert_eq!(text.topic, "test");
    }

    #[test]
    fn data_with_a_schema_goes_into_a_struct() {
        let mut t: HoistField<ValuePart> = configured(&[("field", "magic")]);
        let out = apply(
            &mut t,
            source_value(Some(Schema::int32_schema()), Value::Int32(42)),
        )
        .unwrap();
        let schema = out.value_schema.clone().unwrap();
        let want = SchemaBuilder::struct_()
            .field("magic", Schema::int32_schema())
            .unwrap()
            .build();
        assert_eq!(schema, want);
        assert!(!schema.optional && schema.name.is_none());
        assert_eq!(as_struct(&out.value).get("magic"), Some(&Value::Int32(42)));
        // A null under an optional schema is wrapped; under a required one it is refused.
        let out = apply(
            &mut t,
            source_value(Some(Schema::optional_int32_schema()), Value::Null),
        )
        .unwrap();
        assert_eq!(as_struct(&out.value).get("magic"), Some(&Value::Null));
        let err = apply(
            &mut t,
            source_value(Some(Schema::int32_schema()), Value::Null),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value: null used for required field: \"magic\", schema type: INT32"
        );
    }

    #[test]
    fn the_field_is_required() {
        assert_eq!(
            config_error::<HoistField<ValuePart>>(&[]),
            "Missing required configuration \"field\" which has no default value."
        );
    }
}
