//! `HoistField`: wraps the key or value in a struct or map of one field.

use std::marker::PhantomData;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::{SchemaBuilder, Struct, Value};
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
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for HoistField<P> {
    fn default() -> Self {
        HoistField {
            field: String::new(),
            part: PhantomData,
        }
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for HoistField<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&config_def(), props)?;
        self.field = settings.string(FIELD).unwrap_or_default().to_string();
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record).clone();
        let updated = match P::PART.schema(&record) {
            None => {
                let wrapped = Value::Map(vec![(Value::String(self.field.clone()), value)]);
                P::PART.replace(&record, None, wrapped)
            }
            Some(schema) => {
                let wrapper = SchemaBuilder::struct_()
                    .field(self.field.clone(), schema.clone())?
                    .build();
                let wrapped = Struct::new(wrapper.clone())?.put(&self.field, value)?;
                P::PART.replace(&record, Some(wrapper), Value::Struct(wrapped))
            }
        };
        Ok(Some(updated))
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
