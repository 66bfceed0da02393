//! `SetSchemaMetadata`: sets the name and/or version of the key or value schema.

use std::marker::PhantomData;
use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::{Schema, SchemaType, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::util::{field_value, require_schema, PartMarker, Settings};

const SCHEMA_NAME: &str = "schema.name";
const SCHEMA_VERSION: &str = "schema.version";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

/// The settings of `SetSchemaMetadata` (Connect's `CONFIG_DEF`, same keys, types and
/// defaults).
pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            SCHEMA_NAME,
            ConfigType::String,
            Some(None),
            None,
            Importance::High,
            "The schema name to set.",
        )
        .define(
            SCHEMA_VERSION,
            ConfigType::Int,
            Some(None),
            None,
            Importance::High,
            "The schema version to set.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType::Boolean,
            Some(Some("true")),
            None,
            Importance::Medium,
            "When a struct field is null and its schema has a default, whether the re-schemed struct gets the default (true) or null (false).",
        )
}

/// Gives the key or value schema a new name, version or both, keeping everything else of the
/// schema; a struct is rebuilt on the new schema (its null fields taking their defaults unless
/// `replace.null.with.default` is false).
///
/// Follows `org.apache.kafka.connect.transforms.SetSchemaMetadata$Key` / `$Value`. Settings:
/// `schema.name`, `schema.version` (at least one of them) and `replace.null.with.default`
/// (default true). A record whose part has neither schema nor value passes unchanged;
/// schemaless data fails with `Schema required for [updating schema metadata]`.
pub struct SetSchemaMetadata<P: PartMarker> {
    name: Option<String>,
    version: Option<i32>,
    replace_null_with_default: bool,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for SetSchemaMetadata<P> {
    fn default() -> Self {
        SetSchemaMetadata {
            name: None,
            version: None,
            replace_null_with_default: true,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for SetSchemaMetadata<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&config_def(), props)?;
        self.name = settings.string(SCHEMA_NAME).map(str::to_string);
        self.version = settings.int(SCHEMA_VERSION);
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        if self.name.is_none() && self.version.is_none() {
            return Err(ConnectError::config(
                "Neither schema name nor version configured",
            ));
        }
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        let schema = P::PART.schema(&record);
        if value.is_null() && schema.is_none() {
            return Ok(Some(record));
        }
        let schema = require_schema(schema, "updating schema metadata")?;
        // Connect 4.1 rebuilds the schema from its field list, which only a struct has.
        if schema.schema_type != SchemaType::Struct {
            return Err(ConnectError::data("Cannot list fields on non-struct type"));
        }
        let keeps_key = schema.schema_type == SchemaType::Map;
        let keeps_value = keeps_key || schema.schema_type == SchemaType::Array;
        let updated = Arc::new(Schema {
            name: self.name.clone().or_else(|| schema.name.clone()),
            version: self.version.or(schema.version),
            key_schema: if keeps_key {
                schema.key_schema.clone()
            } else {
                None
            },
            value_schema: if keeps_value {
                schema.value_schema.clone()
            } else {
                None
            },
            ..Schema::clone(schema)
        });
        let value = match value {
            Value::Struct(old) => {
                let mut s = Struct::new(updated.clone())?;
                for field in &updated.fields {
                    s = s.put(
                        &field.name,
                        field_value(old, field, self.replace_null_with_default),
                    )?;
                }
                Value::Struct(s)
            }
            other => other.clone(),
        };
        Ok(Some(P::PART.replace(record, Some(updated), value)))
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
    use tributary_api::data::SchemaBuilder;

    #[test]
    fn name_and_version_are_set_and_the_rest_kept() {
        let mut t: SetSchemaMetadata<ValuePart> =
            configured(&[("schema.name", "foo"), ("schema.version", "42")]);
        let schema = SchemaBuilder::struct_()
            .field("f", Schema::string_schema())
            .unwrap()
            .name("old")
            .version(1)
            .doc("d")
            .parameter("p", "v")
            .optional()
            .build();
        let value = Value::Struct(Struct::new(schema.clone()).unwrap().put("f", "x").unwrap());
        let out = apply(&mut t, source_value(Some(schema), value)).unwrap();
        let s = out.value_schema.unwrap();
        assert_eq!(s.name.as_deref(), Some("foo"));
        assert_eq!(s.version, Some(42));
        assert_eq!(s.doc.as_deref(), Some("d"));
        assert!(s.optional);
        assert_eq!(s.parameters.as_ref().unwrap()["p"], "v");
        assert_eq!(as_struct(&out.value).get("f"), Some(&Value::from("x")));

        let key_schema = SchemaBuilder::struct_()
            .field("id", Schema::int32_schema())
            .unwrap()
            .name("keep")
            .build();
        let key = Value::Struct(
            Struct::new(key_schema.clone())
                .unwrap()
                .put("id", 1)
                .unwrap(),
        );
        let mut t: SetSchemaMetadata<KeyPart> = configured(&[("schema.version", "7")]);
        let out = apply(&mut t, source_key(Some(key_schema), key)).unwrap();
        let s = out.key_schema.unwrap();
        assert_eq!((s.name.as_deref(), s.version), (Some("keep"), Some(7)));
    }

    #[test]
    fn schemas_other_than_structs_fail_as_in_connect() {
        let mut t: SetSchemaMetadata<ValuePart> = configured(&[("schema.name", "n")]);
        for (schema, value) in [
            (Schema::string_schema(), Value::from("x")),
            (Schema::optional_string_schema(), Value::Null),
            (
                SchemaBuilder::array(Schema::int32_schema()).build(),
                Value::Array(vec![Value::Int32(1)]),
            ),
        ] {
            assert_eq!(
                apply(&mut t, source_value(Some(schema), value))
                    .unwrap_err()
                    .to_string(),
                "Cannot list fields on non-struct type"
            );
        }
    }

    #[test]
    fn structs_are_rebuilt_on_the_new_schema() {
        let schema = SchemaBuilder::struct_()
            .field("stringField", Schema::string_schema())
            .unwrap()
            .field(
                "withDefault",
                SchemaBuilder::int32()
                    .optional()
                    .default_value(Value::Int32(5))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        let v = Struct::new(schema.clone())
            .unwrap()
            .put("stringField", "s")
            .unwrap();
        for (setting, want) in [("true", Value::Int32(5)), ("false", Value::Null)] {
            let mut t: SetSchemaMetadata<ValuePart> =
                configured(&[("schema.name", "n"), ("replace.null.with.default", setting)]);
            let out = apply(
                &mut t,
                source_value(Some(schema.clone()), Value::Struct(v.clone())),
            )
            .unwrap();
            let s = as_struct(&out.value);
            assert_eq!(s.schema(), out.value_schema.as_ref().unwrap());
            assert_eq!(s.schema().name.as_deref(), Some("n"));
            assert_eq!(s.get("stringField"), Some(&Value::from("s")));
            assert_eq!(s.get_by_index(1), &want);
        }
    }

    #[test]
    fn nulls_and_schemaless_data() {
        let mut t: SetSchemaMetadata<ValuePart> = configured(&[("schema.name", "n")]);
        let rec = source_value(None, Value::Null);
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);
        assert_eq!(
            apply(&mut t, source_value(None, Value::from("x")))
                .unwrap_err()
                .to_string(),
            "Schema required for [updating schema metadata]"
        );
    }

    #[test]
    fn configuration_errors() {
        assert_eq!(
            config_error::<SetSchemaMetadata<ValuePart>>(&[]),
            "Neither schema name nor version configured"
        );
        assert_eq!(
            config_error::<SetSchemaMetadata<ValuePart>>(&[("schema.version", "x")]),
            "Invalid value x for configuration schema.version: Not a number of type INT"
        );
    }
}
