//! `Flatten`: turns nested structs or maps into one level, joining the names with a delimiter.

use std::marker::PhantomData;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::{Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::java_compat::{java_class, string_key};
use crate::util::{
    copy_schema_basics, copy_schema_basics_of, field_value, map_put, require_map,
    require_struct_or_null, PartMarker, Settings,
};

const DELIMITER: &str = "delimiter";

const PURPOSE: &str = "flattening";

/// The settings of `Flatten` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    ConfigDef::new().define(
        DELIMITER,
        ConfigType::String,
        Some(Some(".")),
        None,
        Importance::Medium,
        "What joins the names of the nested fields into the name of the flattened field.",
    )
}

/// Flattens a struct (schema) or map (schemaless) key or value: every nested struct or map is
/// replaced by its fields, named `outer<delimiter>inner`, in order. Arrays and their contents
/// are kept as they are. With a schema, a flattened field is optional when it or any struct
/// above it is optional, and takes its own default or else the one its parent's default
/// gives; the top-level struct keeps its name, version, doc and parameters but is always
/// required. Maps inside a schema are not supported.
///
/// Follows `org.apache.kafka.connect.transforms.Flatten$Key` / `$Value`. Setting: `delimiter`
/// (default `.`). A null key or value (tombstone) passes unchanged.
pub struct Flatten<P: PartMarker> {
    delimiter: String,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for Flatten<P> {
    fn default() -> Self {
        Flatten {
            delimiter: ".".to_string(),
            part: PhantomData,
        }
    }
}

/// The error for a map inside a schema.
fn unsupported_with_schema(t: SchemaType, name: &str) -> ConnectError {
    ConnectError::data(format!(
        "Flatten transformation does not support {t} for record with schemas (for field {name})."
    ))
}

/// `Schema.fields()`, which fails on a schema that is not a struct.
fn fields_of(schema: &Schema) -> ConnectResult<&[tributary_api::data::Field]> {
    if schema.schema_type != SchemaType::Struct {
        return Err(ConnectError::data("Cannot list fields on non-struct type"));
    }
    Ok(&schema.fields)
}

impl<P: PartMarker> Flatten<P> {
    fn name(&self, prefix: &str, name: &str) -> String {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}{}{name}", self.delimiter)
        }
    }

    fn flatten_map(
        &self,
        entries: &[(Value, Value)],
        prefix: &str,
        out: &mut Vec<(Value, Value)>,
    ) -> ConnectResult<()> {
        for (k, v) in entries {
            let name = self.name(prefix, string_key(k)?);
            match v {
                Value::Null
                | Value::Int8(_)
                | Value::Int16(_)
                | Value::Int32(_)
                | Value::Int64(_)
                | Value::Float32(_)
                | Value::Float64(_)
                | Value::Boolean(_)
                | Value::String(_)
                | Value::Bytes(_)
                | Value::Array(_) => map_put(out, &name, v.clone()),
                Value::Map(inner) => self.flatten_map(inner, &name, out)?,
                Value::Struct(_) => {
                    return Err(ConnectError::data(format!(
                        "Flatten transformation does not support {} for record without schemas (for field {name}).",
                        java_class(v)
                    )))
                }
                Value::Decimal(_) | Value::Date(_) | Value::Time(_) | Value::Timestamp(_) => {
                    return Err(ConnectError::data(format!(
                        "Flatten transformation was passed a value of type {} which is not supported by Connect's data API",
                        java_class(v)
                    )))
                }
            }
        }
        Ok(())
    }

    /// Adds the flattened fields of `schema` to `builder`.
    fn flatten_schema(
        &self,
        schema: &Schema,
        prefix: &str,
        mut builder: SchemaBuilder,
        optional: bool,
        parent_default: Option<&Struct>,
    ) -> ConnectResult<SchemaBuilder> {
        for field in fields_of(schema)? {
            let name = self.name(prefix, &field.name);
            let field_optional = optional || field.schema.optional;
            let default = match &field.schema.default_value {
                Some(d) => Some(d.clone()),
                None => parent_default
                    .map(|p| p.get_by_index(field.index).clone())
                    .filter(|v| !v.is_null()),
            };
            match field.schema.schema_type {
                SchemaType::Struct => {
                    let nested_default = match &default {
                        Some(Value::Struct(s)) => Some(s),
                        _ => None,
                    };
                    builder = self.flatten_schema(
                        &field.schema,
                        &name,
                        builder,
                        field_optional,
                        nested_default,
                    )?;
                }
                SchemaType::Map => return Err(unsupported_with_schema(SchemaType::Map, &name)),
                _ => {
                    let mut fb = copy_schema_basics_of(&field.schema);
                    if field_optional {
                        fb = fb.optional();
                    }
                    if let Some(d) = default {
                        fb = fb.default_value(d)?;
                    }
                    builder = builder.field(name, fb.build())?;
                }
            }
        }
        Ok(builder)
    }

    /// Puts the flattened values of `value` into `out`.
    fn flatten_struct(
        &self,
        value: &Struct,
        prefix: &str,
        mut out: Struct,
    ) -> ConnectResult<Struct> {
        for field in &value.schema().fields {
            let name = self.name(prefix, &field.name);
            match field.schema.schema_type {
                SchemaType::Struct => {
                    // As Connect's `Struct.getStruct`, a null struct is not replaced by its
                    // default here: its flattened fields stay unset (their schemas carry the
                    // defaults).
                    if let Value::Struct(inner) = value.get_by_index(field.index) {
                        out = self.flatten_struct(inner, &name, out)?;
                    }
                }
                SchemaType::Map => return Err(unsupported_with_schema(SchemaType::Map, &name)),
                _ => out = out.put(&name, field_value(value, field, true))?,
            }
        }
        Ok(out)
    }

    fn flattened_schema(&self, schema: &Schema) -> ConnectResult<SchemaRef> {
        let builder = copy_schema_basics(schema, SchemaBuilder::struct_());
        let default = match &schema.default_value {
            Some(Value::Struct(s)) => Some(s),
            _ => None,
        };
        Ok(self
            .flatten_schema(schema, "", builder, schema.optional, default)?
            .build())
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for Flatten<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&config_def(), props)?;
        self.delimiter = settings.string(DELIMITER).unwrap_or_default().to_string();
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        if value.is_null() {
            return Ok(Some(record));
        }
        let updated = match P::PART.schema(&record) {
            None => {
                let entries = require_map(value, PURPOSE)?;
                let mut out = Vec::new();
                self.flatten_map(entries, "", &mut out)?;
                P::PART.replace(record, None, Value::Map(out))
            }
            Some(schema) => {
                let value = require_struct_or_null(value, PURPOSE)?;
                let flat_schema = self.flattened_schema(schema)?;
                let flat = match value {
                    Some(s) => {
                        let out = Struct::new(flat_schema.clone())?;
                        Value::Struct(self.flatten_struct(s, "", out)?)
                    }
                    None => Value::Null,
                };
                P::PART.replace(record, Some(flat_schema), flat)
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
    use tributary_api::data::{Decimal, Timestamp};

    fn supported() -> (SchemaRef, Struct) {
        let schema = SchemaBuilder::struct_()
            .field("int8", Schema::int8_schema())
            .unwrap()
            .field("string", Schema::string_schema())
            .unwrap()
            .field("bytes", Schema::bytes_schema())
            .unwrap()
            .field("ts", Timestamp::schema())
            .unwrap()
            .build();
        let s = Struct::new(schema.clone())
            .unwrap()
            .put("int8", Value::Int8(8))
            .unwrap()
            .put("string", "stringy")
            .unwrap()
            .put("bytes", Value::Bytes(b"bytes".to_vec()))
            .unwrap()
            .put("ts", Value::Timestamp(5))
            .unwrap();
        (schema, s)
    }

    #[test]
    fn nested_structs_are_flattened_in_order() {
        let (inner_schema, inner) = supported();
        let mid = SchemaBuilder::struct_()
            .field("B", inner_schema)
            .unwrap()
            .build();
        let top = SchemaBuilder::struct_()
            .name("top")
            .version(3)
            .optional()
            .field("A", mid.clone())
            .unwrap()
            .field("z", Schema::int32_schema())
            .unwrap()
            .build();
        let v = Struct::new(top.clone())
            .unwrap()
            .put(
                "A",
                Value::Struct(
                    Struct::new(mid)
                        .unwrap()
                        .put("B", Value::Struct(inner))
                        .unwrap(),
                ),
            )
            .unwrap()
            .put("z", 1)
            .unwrap();
        let mut t: Flatten<ValuePart> = configured(&[]);
        let out = apply(&mut t, source_value(Some(top), Value::Struct(v))).unwrap();
        let s = out.value_schema.clone().unwrap();
        assert_eq!(
            (s.name.as_deref(), s.version, s.optional),
            (Some("top"), Some(3), false)
        );
        let names: Vec<_> = s.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["A.B.int8", "A.B.string", "A.B.bytes", "A.B.ts", "z"]
        );
        // The top-level struct was optional, so every flattened field is.
        assert_eq!(s.fields[0].schema, Schema::optional_int8_schema());
        assert_eq!(
            *s.fields[3].schema,
            *Timestamp::builder().optional().build()
        );
        let v = as_struct(&out.value);
        assert_eq!(v.get("A.B.int8"), Some(&Value::Int8(8)));
        assert_eq!(v.get("A.B.string"), Some(&Value::from("stringy")));
        assert_eq!(v.get("A.B.ts"), Some(&Value::Timestamp(5)));
        assert_eq!(v.get("z"), Some(&Value::Int32(1)));
    }

    #[test]
    fn optional_and_default_values_come_from_parents() {
        let child = SchemaBuilder::struct_()
            .optional()
            .field("req_field", Schema::string_schema())
            .unwrap()
            .field(
                "opt_field",
                SchemaBuilder::string()
                    .optional()
                    .default_value(Value::from("child_default"))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        let child_default = Struct::new(child.clone())
            .unwrap()
            .put("req_field", "req_default")
            .unwrap();
        let top = SchemaBuilder::struct_()
            .field("c", child.clone())
            .unwrap()
            .build();
        // The parent default is read from the top-level schema's default.
        let top_default = Struct::new(top.clone())
            .unwrap()
            .put("c", Value::Struct(child_default))
            .unwrap();
        let top = SchemaBuilder::struct_()
            .field("c", child)
            .unwrap()
            .default_value(Value::Struct(top_default))
            .unwrap()
            .build();
        let mut t: Flatten<ValuePart> = configured(&[("delimiter", "_")]);
        let v = Struct::new(top.clone()).unwrap();
        let out = apply(&mut t, source_value(Some(top), Value::Struct(v))).unwrap();
        let s = out.value_schema.unwrap();
        assert_eq!(
            s.field("c_req_field").unwrap().schema,
            SchemaBuilder::string()
                .optional()
                .default_value(Value::from("req_default"))
                .unwrap()
                .build()
        );
        assert_eq!(
            s.field("c_opt_field").unwrap().schema,
            SchemaBuilder::string()
                .optional()
                .default_value(Value::from("child_default"))
                .unwrap()
                .build()
        );
        // The null child contributes nothing; the fields fall back to their defaults.
        let v = as_struct(&out.value);
        assert_eq!(v.get_by_index(0), &Value::Null);
        assert_eq!(v.get("c_req_field"), Some(&Value::from("req_default")));
    }

    #[test]
    fn a_null_struct_with_a_default_leaves_its_fields_unset() {
        let child = SchemaBuilder::struct_()
            .optional()
            .field("x", Schema::int32_schema())
            .unwrap()
            .field("y", Schema::optional_int32_schema())
            .unwrap()
            .build();
        let child_default = Struct::new(child.clone())
            .unwrap()
            .put("x", 1)
            .unwrap()
            .put("y", 2)
            .unwrap();
        let child = SchemaBuilder::struct_()
            .optional()
            .field("x", Schema::int32_schema())
            .unwrap()
            .field("y", Schema::optional_int32_schema())
            .unwrap()
            .default_value(Value::Struct(child_default))
            .unwrap()
            .build();
        let top = SchemaBuilder::struct_()
            .field("c", child)
            .unwrap()
            .field(
                "d",
                SchemaBuilder::int32()
                    .default_value(Value::Int32(9))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        let mut t: Flatten<ValuePart> = configured(&[]);
        let v = Struct::new(top.clone()).unwrap();
        let out = apply(&mut t, source_value(Some(top), Value::Struct(v))).unwrap();
        let s = out.value_schema.clone().unwrap();
        assert_eq!(
            s.field("c.x").unwrap().schema,
            SchemaBuilder::int32()
                .optional()
                .default_value(Value::Int32(1))
                .unwrap()
                .build()
        );
        let v = as_struct(&out.value);
        assert_eq!(v.get_by_index(0), &Value::Null);
        assert_eq!(v.get_by_index(1), &Value::Null);
        // A primitive field's default is copied into the flattened value.
        assert_eq!(v.get_by_index(2), &Value::Int32(9));
    }

    #[test]
    fn maps_are_flattened_with_the_delimiter() {
        let v = map(&[
            (
                "A",
                map(&[(
                    "B",
                    map(&[("int32", Value::Int32(32)), ("null", Value::Null)]),
                )]),
            ),
            ("arr", Value::Array(vec![map(&[("x", Value::Int32(1))])])),
        ]);
        let mut t: Flatten<KeyPart> = configured(&[("delimiter", "#")]);
        let out = apply(&mut t, source_key(None, v.clone())).unwrap();
        assert_eq!(
            out.key,
            map(&[
                ("A#B#int32", Value::Int32(32)),
                ("A#B#null", Value::Null),
                ("arr", Value::Array(vec![map(&[("x", Value::Int32(1))])])),
            ])
        );
        assert_eq!(out.key_schema, None);
    }

    #[test]
    fn arrays_with_schemas_are_kept() {
        let inner = SchemaBuilder::struct_()
            .field("lfg", Schema::string_schema())
            .unwrap()
            .build();
        let schema = SchemaBuilder::struct_()
            .field(
                "foo",
                SchemaBuilder::array(inner.clone()).doc("durk").build(),
            )
            .unwrap()
            .build();
        let v = Struct::new(schema.clone())
            .unwrap()
            .put(
                "foo",
                Value::Array(vec![Value::Struct(
                    Struct::new(inner).unwrap().put("lfg", "lfg").unwrap(),
                )]),
            )
            .unwrap();
        let mut t: Flatten<ValuePart> = configured(&[]);
        let out = apply(
            &mut t,
            source_value(Some(schema.clone()), Value::Struct(v.clone())),
        )
        .unwrap();
        assert_eq!(out.value_schema, Some(schema));
        assert_eq!(out.value, Value::Struct(v));
    }

    #[test]
    fn tombstones_pass_and_unsupported_data_fails() {
        let mut t: Flatten<ValuePart> = configured(&[]);
        let (schema, _) = supported();
        let rec = source_value(Some(schema), Value::Null);
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);
        let rec = source_value(None, Value::Null);
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);

        let err = apply(
            &mut t,
            source_value(Some(Schema::int32_schema()), Value::Int32(1)),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "Only Struct objects supported for [flattening], found: java.lang.Integer"
        );
        let err = apply(&mut t, source_value(None, Value::Int32(1)));
        assert_eq!(
            err.unwrap_err().to_string(),
            "Only Map objects supported in absence of schema for [flattening], found: java.lang.Integer"
        );
        let with_map = SchemaBuilder::struct_()
            .field(
                "m",
                SchemaBuilder::map(Schema::string_schema(), Schema::string_schema()).build(),
            )
            .unwrap()
            .build();
        let v = Struct::new(with_map.clone())
            .unwrap()
            .put("m", Value::Map(vec![]))
            .unwrap();
        assert_eq!(
            apply(&mut t, source_value(Some(with_map), Value::Struct(v)))
                .unwrap_err()
                .to_string(),
            "Flatten transformation does not support MAP for record with schemas (for field m)."
        );
        let (_, s) = supported();
        let err = apply(
            &mut t,
            source_value(None, map(&[("a", map(&[("s", Value::Struct(s))]))])),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "Flatten transformation does not support class org.apache.kafka.connect.data.Struct for record without schemas (for field a.s)."
        );
        let err = apply(
            &mut t,
            source_value(None, map(&[("d", Value::Decimal(Decimal::new(1, 0)))])),
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "Flatten transformation was passed a value of type class java.math.BigDecimal which is not supported by Connect's data API"
        );
    }
}
