//! `ExtractField`: replaces the key or value with one of its fields.

use std::marker::PhantomData;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::Value;
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::field_path::{FieldSyntaxVersion, SingleFieldPath, FIELD_SYNTAX_VERSION};
use crate::util::{require_map_or_null, require_struct_or_null, PartMarker, Settings};

const FIELD: &str = "field";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

const PURPOSE: &str = "field extraction";

/// The settings of `ExtractField` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    FieldSyntaxVersion::append_config_to(
        ConfigDef::new()
            .define(
                FIELD,
                ConfigType::String,
                None,
                None,
                Importance::Medium,
                "The field to extract (a path with field.syntax.version V2).",
            )
            .define(
                REPLACE_NULL_WITH_DEFAULT,
                ConfigType::Boolean,
                Some(Some("true")),
                None,
                Importance::Medium,
                "When the extracted field is null and its schema has a default, whether to return the default (true) or null (false).",
            ),
    )
}

/// Replaces a struct (schema) or map (schemaless) key or value with the value of one of its
/// fields; with a schema, the record's schema becomes that field's schema.
///
/// Follows `org.apache.kafka.connect.transforms.ExtractField$Key` / `$Value`. Settings:
/// `field` (required; a nested path when `field.syntax.version` is `V2`, see
/// [`crate::field_path`]), `field.syntax.version` (`V1` by default) and
/// `replace.null.with.default` (default true: a null field gives its schema's default).
/// Null passes through: a null key or value gives null (with the field's schema when there is a
/// schema), and so does a missing map entry. A field missing from the schema fails with
/// `Unknown field: <field>` (an `IllegalArgumentException` in Connect, a data error here).
pub struct ExtractField<P: PartMarker> {
    path: SingleFieldPath,
    original: String,
    replace_null_with_default: bool,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for ExtractField<P> {
    fn default() -> Self {
        ExtractField {
            path: SingleFieldPath::new("", FieldSyntaxVersion::V1).expect("a V1 path"),
            original: String::new(),
            replace_null_with_default: true,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for ExtractField<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&config_def(), props)?;
        let original = settings.string(FIELD).unwrap_or_default().to_string();
        let version =
            FieldSyntaxVersion::parse(settings.string(FIELD_SYNTAX_VERSION).unwrap_or("V1"))?;
        self.path = SingleFieldPath::new(&original, version)?;
        self.original = original;
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        let (schema, extracted) = match P::PART.schema(&record) {
            None => {
                let extracted = match require_map_or_null(value, PURPOSE)? {
                    Some(entries) => self.path.value_from_map(entries)?,
                    None => Value::Null,
                };
                (None, extracted)
            }
            Some(schema) => {
                let value = require_struct_or_null(value, PURPOSE)?;
                let field = self.path.field_from(schema)?.ok_or_else(|| {
                    ConnectError::data(format!("Unknown field: {}", self.original))
                })?;
                let extracted = match value {
                    Some(s) => self
                        .path
                        .value_from_struct(s, self.replace_null_with_default)?,
                    None => Value::Null,
                };
                (Some(field.schema.clone()), extracted)
            }
        };
        Ok(Some(P::PART.replace(record, schema, extracted)))
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
    use tributary_api::data::{Schema, SchemaBuilder, SchemaRef, Struct};

    fn nested() -> (SchemaRef, Struct) {
        let foo = SchemaBuilder::struct_()
            .field("foo", Schema::int32_schema())
            .unwrap()
            .build();
        let schema = SchemaBuilder::struct_()
            .field("magic", foo.clone())
            .unwrap()
            .build();
        let s = Struct::new(schema.clone())
            .unwrap()
            .put(
                "magic",
                Value::Struct(Struct::new(foo).unwrap().put("foo", 42).unwrap()),
            )
            .unwrap();
        (schema, s)
    }

    #[test]
    fn schemaless_keys_and_values() {
        let mut t: ExtractField<KeyPart> = configured(&[("field", "magic")]);
        let out = apply(
            &mut t,
            source_key(None, map(&[("magic", Value::Int32(42))])),
        )
        .unwrap();
        assert_eq!((out.key_schema, out.key), (None, Value::Int32(42)));
        let out = apply(
            &mut t,
            source_key(None, map(&[("other", Value::Int32(42))])),
        )
        .unwrap();
        assert_eq!(out.key, Value::Null);
        let out = apply(&mut t, source_key(None, Value::Null)).unwrap();
        assert_eq!(out.key, Value::Null);
        let mut t: ExtractField<ValuePart> = configured(&[("field", "magic")]);
        let out = apply(
            &mut t,
            source_value(None, map(&[("magic", Value::from("x"))])),
        )
        .unwrap();
        assert_eq!(out.value, Value::from("x"));
        assert_eq!(
            apply(&mut t, source_value(None, Value::Int32(1)))
                .unwrap_err()
                .to_string(),
            "Only Map objects supported in absence of schema for [field extraction], found: java.lang.Integer"
        );
    }

    #[test]
    fn nested_paths_with_v2() {
        let p = [("field", "magic.foo"), ("field.syntax.version", "v2")];
        let mut t: ExtractField<KeyPart> = configured(&p);
        let key = map(&[("magic", map(&[("foo", Value::Int32(42))]))]);
        let out = apply(&mut t, source_key(None, key)).unwrap();
        assert_eq!(out.key, Value::Int32(42));
        let (schema, s) = nested();
        let out = apply(&mut t, source_key(Some(schema.clone()), Value::Struct(s))).unwrap();
        assert_eq!(out.key_schema, Some(Schema::int32_schema()));
        assert_eq!(out.key, Value::Int32(42));
        let mut t: ExtractField<KeyPart> = configured(&[
            ("field", "magic.nonexistent"),
            ("field.syntax.version", "V2"),
        ]);
        let key = map(&[("magic", map(&[("foo", Value::Int32(42))]))]);
        assert_eq!(
            apply(&mut t, source_key(None, key)).unwrap().key,
            Value::Null
        );
        let (schema, s) = nested();
        assert_eq!(
            apply(&mut t, source_key(Some(schema), Value::Struct(s)))
                .unwrap_err()
                .to_string(),
            "Unknown field: magic.nonexistent"
        );
        // With V1 the dotted name is one field.
        let mut t: ExtractField<KeyPart> = configured(&[("field", "magic.foo")]);
        let key = map(&[("magic.foo", Value::Int32(7))]);
        assert_eq!(
            apply(&mut t, source_key(None, key)).unwrap().key,
            Value::Int32(7)
        );
    }

    #[test]
    fn structs_give_the_field_and_its_schema() {
        let schema = SchemaBuilder::struct_()
            .field("magic", Schema::int32_schema())
            .unwrap()
            .optional()
            .build();
        let mut t: ExtractField<ValuePart> = configured(&[("field", "magic")]);
        let v = Struct::new(schema.clone())
            .unwrap()
            .put("magic", 42)
            .unwrap();
        let out = apply(&mut t, source_value(Some(schema.clone()), Value::Struct(v))).unwrap();
        assert_eq!(out.value_schema, Some(Schema::int32_schema()));
        assert_eq!(out.value, Value::Int32(42));
        // A null struct gives null with the field's schema.
        let out = apply(&mut t, source_value(Some(schema.clone()), Value::Null)).unwrap();
        assert_eq!(out.value_schema, Some(Schema::int32_schema()));
        assert_eq!(out.value, Value::Null);
        let mut t: ExtractField<ValuePart> = configured(&[("field", "nonexistent")]);
        assert_eq!(
            apply(&mut t, source_value(Some(schema), Value::Null))
                .unwrap_err()
                .to_string(),
            "Unknown field: nonexistent"
        );
        let mut t: ExtractField<ValuePart> = configured(&[("field", "magic")]);
        assert_eq!(
            apply(
                &mut t,
                source_value(Some(Schema::int32_schema()), Value::Int32(1))
            )
            .unwrap_err()
            .to_string(),
            "Only Struct objects supported for [field extraction], found: java.lang.Integer"
        );
        assert_eq!(
            apply(
                &mut t,
                source_value(Some(Schema::int32_schema()), Value::Null)
            )
            .unwrap_err()
            .to_string(),
            "Cannot look up fields on non-struct type"
        );
    }

    #[test]
    fn replace_null_with_default() {
        let schema = SchemaBuilder::struct_()
            .field(
                "optional_with_default",
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
            let p = [
                ("field", "optional_with_default"),
                ("replace.null.with.default", setting),
            ];
            let mut t: ExtractField<KeyPart> = configured(&p);
            let out = apply(&mut t, source_key(Some(schema.clone()), v.clone())).unwrap();
            assert_eq!(out.key, want);
            let mut t: ExtractField<ValuePart> = configured(&p);
            let out = apply(&mut t, source_value(Some(schema.clone()), v.clone())).unwrap();
            assert_eq!(out.value, want);
        }
    }

    #[test]
    fn configuration_errors() {
        assert_eq!(
            config_error::<ExtractField<ValuePart>>(&[]),
            "Missing required configuration \"field\" which has no default value."
        );
        assert_eq!(
            config_error::<ExtractField<ValuePart>>(&[("field", "a"), ("field.syntax.version", "V3")]),
            "Invalid value V3 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2"
        );
        assert_eq!(
            config_error::<ExtractField<ValuePart>>(&[("field", "`a.b"), ("field.syntax.version", "V2")]),
            "Incomplete backtick pair in path: [`a.b], consider adding a backslash before backtick at position 0 to escape it"
        );
        let t = ExtractField::<ValuePart>::default();
        let def = Transformation::<SourceRecord>::config(&t);
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            ["field", "replace.null.with.default", "field.syntax.version"]
        );
    }
}
