//! `ValueToKey`: builds the record key from fields of the value.

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::{SchemaBuilder, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::util::{
    check_non_empty_lists, field_value, map_get, map_put, non_empty_list, require_map,
    require_struct, Settings,
};

const FIELDS: &str = "fields";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

const PURPOSE: &str = "copying fields from value to key";

/// The settings of `ValueToKey` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            FIELDS,
            ConfigType::List,
            None,
            Some(non_empty_list()),
            Importance::High,
            "The value fields that make up the key, in this order.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType::Boolean,
            Some(Some("true")),
            None,
            Importance::Medium,
            "When a copied field is null and its schema has a default, whether the key gets the default (true) or null (false).",
        )
}

/// Replaces the key with a struct (schema) or map (schemaless) of the listed fields of the
/// value. With a schema, the key schema is an unnamed struct of those fields with their value
/// schemas, in the listed order; a listed field missing from the value schema fails with
/// `Field does not exist: <name>`. Without one, a missing field gives a null entry.
///
/// Follows `org.apache.kafka.connect.transforms.ValueToKey` (no `$Key` / `$Value` variants).
/// Settings: `fields` (a non-empty list) and `replace.null.with.default` (default true). As in
/// Connect, a null value (tombstone) is not passed through: it fails like any non-struct,
/// non-map value.
#[derive(Default)]
pub struct ValueToKey {
    fields: Vec<String>,
    replace_null_with_default: bool,
}

impl<R: ConnectRecord> Transformation<R> for ValueToKey {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse_with(&config_def(), props, check_non_empty_lists)?;
        self.fields = settings.list(FIELDS).to_vec();
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let (key_schema, key) = match record.value_schema() {
            None => {
                let entries = require_map(record.value(), PURPOSE)?;
                let mut key = Vec::with_capacity(self.fields.len());
                for f in &self.fields {
                    map_put(
                        &mut key,
                        f,
                        map_get(entries, f).cloned().unwrap_or(Value::Null),
                    );
                }
                (None, Value::Map(key))
            }
            Some(_) => {
                let value = require_struct(record.value(), PURPOSE)?;
                let mut builder = SchemaBuilder::struct_();
                for f in &self.fields {
                    let field = value
                        .schema()
                        .field(f)
                        .ok_or_else(|| ConnectError::data(format!("Field does not exist: {f}")))?;
                    builder = builder.field(f.clone(), field.schema.clone())?;
                }
                let schema = builder.build();
                let mut key = Struct::new(schema.clone())?;
                for f in &self.fields {
                    let field = value.schema().field(f).expect("checked above");
                    key = key.put(f, field_value(value, field, self.replace_null_with_default))?;
                }
                (Some(schema), Value::Struct(key))
            }
        };
        // With a schema, Connect gives the value the struct's own schema.
        let value_schema = match record.value() {
            Value::Struct(s) => Some(s.schema().clone()),
            _ => record.value_schema().cloned(),
        };
        Ok(Some(record.new_record(
            record.topic().to_string(),
            record.kafka_partition(),
            key_schema,
            key,
            value_schema,
            record.value().clone(),
            record.timestamp(),
            record.headers().clone(),
        )))
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::*;
    use tributary_api::data::Schema;

    #[test]
    fn schemaless_values_give_a_map_key() {
        let mut t: ValueToKey = configured(&[("fields", "a,b,missing")]);
        let v = map(&[
            ("a", Value::Int32(1)),
            ("b", Value::Int32(2)),
            ("c", Value::Int32(3)),
        ]);
        let out = apply(&mut t, source_value(None, v.clone())).unwrap();
        assert_eq!(out.key_schema, None);
        assert_eq!(
            out.key,
            map(&[
                ("a", Value::Int32(1)),
                ("b", Value::Int32(2)),
                ("missing", Value::Null)
            ])
        );
        assert_eq!(out.value, v);
    }

    #[test]
    fn struct_values_give_a_struct_key() {
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::int32_schema())
            .unwrap()
            .field("b", Schema::int32_schema())
            .unwrap()
            .field("c", Schema::int32_schema())
            .unwrap()
            .build();
        let v = Struct::new(schema.clone())
            .unwrap()
            .put("a", 1)
            .unwrap()
            .put("b", 2)
            .unwrap()
            .put("c", 3)
            .unwrap();
        let mut t: ValueToKey = configured(&[("fields", "b,a")]);
        let out = apply(
            &mut t,
            source_value(Some(schema.clone()), Value::Struct(v.clone())),
        )
        .unwrap();
        let want_schema = SchemaBuilder::struct_()
            .field("b", Schema::int32_schema())
            .unwrap()
            .field("a", Schema::int32_schema())
            .unwrap()
            .build();
        assert_eq!(out.key_schema, Some(want_schema.clone()));
        let want = Struct::new(want_schema)
            .unwrap()
            .put("b", 2)
            .unwrap()
            .put("a", 1)
            .unwrap();
        assert_eq!(out.key, Value::Struct(want));
        assert_eq!(out.value, Value::Struct(v.clone()));
        assert_eq!(out.value_schema, Some(schema.clone()));

        let mut t: ValueToKey = configured(&[("fields", "a,not_exist")]);
        assert_eq!(
            apply(&mut t, source_value(Some(schema), Value::Struct(v)))
                .unwrap_err()
                .to_string(),
            "Field does not exist: not_exist"
        );
    }

    #[test]
    fn replace_null_with_default() {
        let schema = SchemaBuilder::struct_()
            .field(
                "a",
                SchemaBuilder::int32()
                    .optional()
                    .default_value(Value::Int32(42))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        let v = Value::Struct(Struct::new(schema.clone()).unwrap());
        for (setting, want) in [("true", Value::Int32(42)), ("false", Value::Null)] {
            let mut t: ValueToKey =
                configured(&[("fields", "a"), ("replace.null.with.default", setting)]);
            let out = apply(&mut t, source_value(Some(schema.clone()), v.clone())).unwrap();
            assert_eq!(as_struct(&out.key).get_by_index(0), &want);
        }
    }

    #[test]
    fn tombstones_and_other_values_fail() {
        let mut t: ValueToKey = configured(&[("fields", "a")]);
        assert_eq!(
            apply(&mut t, source_value(None, Value::Null)).unwrap_err().to_string(),
            "Only Map objects supported in absence of schema for [copying fields from value to key], found: null"
        );
        let schema = SchemaBuilder::struct_().optional().build();
        assert_eq!(
            apply(&mut t, source_value(Some(schema), Value::Null))
                .unwrap_err()
                .to_string(),
            "Only Struct objects supported for [copying fields from value to key], found: null"
        );
    }

    #[test]
    fn configuration_errors() {
        assert_eq!(
            config_error::<ValueToKey>(&[]),
            "Missing required configuration \"fields\" which has no default value."
        );
        assert_eq!(
            config_error::<ValueToKey>(&[("fields", "")]),
            "Invalid value [] for configuration fields: Empty list"
        );
    }
}
