//! `InsertField`: adds fields taken from the record's metadata (topic, partition, offset,
//! timestamp) or a fixed string to the key or value.

use std::marker::PhantomData;
use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance};
use tributary_api::data::{Schema, SchemaBuilder, SchemaRef, Struct, Timestamp, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::util::{
    copy_schema_basics, invalid_config, map_put, require_map, require_sink_record, require_struct,
    PartMarker, Settings,
};

const TOPIC_FIELD: &str = "topic.field";
const PARTITION_FIELD: &str = "partition.field";
const OFFSET_FIELD: &str = "offset.field";
const TIMESTAMP_FIELD: &str = "timestamp.field";
const STATIC_FIELD: &str = "static.field";
const STATIC_VALUE: &str = "static.value";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

const PURPOSE: &str = "field insertion";

const OPTIONALITY: &str =
    "End the name with <code>!</code> for a required field or <code>?</code> (the default) for an optional one.";

/// The settings of `InsertField` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    let doc = |what: &str| format!("{what} {OPTIONALITY}");
    ConfigDef::new()
        .define(
            TOPIC_FIELD,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            &doc("Name of the field receiving the record's topic."),
        )
        .define(
            PARTITION_FIELD,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            &doc("Name of the field receiving the record's Kafka partition."),
        )
        .define(
            OFFSET_FIELD,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            &doc("Name of the field receiving the record's Kafka offset (sink connectors only)."),
        )
        .define(
            TIMESTAMP_FIELD,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            &doc("Name of the field receiving the record's timestamp."),
        )
        .define(
            STATIC_FIELD,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            &doc("Name of the field receiving the fixed value of static.value."),
        )
        .define(
            STATIC_VALUE,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            "The fixed string put in static.field.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType::Boolean,
            Some(Some("true")),
            None,
            Importance::Medium,
            "When a copied field is null and its schema has a default, whether to copy the default (true) or keep null (false).",
        )
}

/// A field to insert: its name and whether its schema is optional (`name?` or plain `name`)
/// or required (`name!`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Insertion {
    name: String,
    optional: bool,
}

impl Insertion {
    fn parse(spec: Option<&str>) -> Option<Insertion> {
        let spec = spec?;
        Some(if let Some(name) = spec.strip_suffix('?') {
            Insertion {
                name: name.to_string(),
                optional: true,
            }
        } else if let Some(name) = spec.strip_suffix('!') {
            Insertion {
                name: name.to_string(),
                optional: false,
            }
        } else {
            Insertion {
                name: spec.to_string(),
                optional: true,
            }
        })
    }

    fn schema(&self, required: SchemaRef, optional: SchemaRef) -> SchemaRef {
        if self.optional {
            optional
        } else {
            required
        }
    }
}

/// Adds fields to a struct (schema) or map (schemaless) key or value, after its own fields:
/// the topic (STRING), the Kafka partition (INT32, when the record has one), the Kafka offset
/// (INT64, sink records only), the timestamp (the Timestamp logical type with a schema, INT64
/// milliseconds without; when the record has one) and a fixed string.
///
/// Follows `org.apache.kafka.connect.transforms.InsertField$Key` / `$Value`. Settings:
/// `topic.field`, `partition.field`, `offset.field`, `timestamp.field`, `static.field` (each a
/// field name, optionally ending with `!` for a required field or `?` for an optional one, the
/// default), `static.value` (required with `static.field`) and `replace.null.with.default`
/// (default true: copied null fields take their schema's default). At least one field must be
/// configured. A null key or value (tombstone) passes unchanged; other non-struct values fail
/// with `Only Struct objects supported for [field insertion], …`.
pub struct InsertField<P: PartMarker> {
    topic: Option<Insertion>,
    partition: Option<Insertion>,
    offset: Option<Insertion>,
    timestamp: Option<Insertion>,
    static_field: Option<Insertion>,
    static_value: Option<String>,
    replace_null_with_default: bool,
    /// The last input schema and its updated schema (Connect keeps a cache of updated schemas
    /// per input schema); reused while records share one schema instance.
    last_schema: Option<(SchemaRef, SchemaRef)>,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for InsertField<P> {
    fn default() -> Self {
        InsertField {
            topic: None,
            partition: None,
            offset: None,
            timestamp: None,
            static_field: None,
            static_value: None,
            replace_null_with_default: true,
            last_schema: None,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker> InsertField<P> {
    /// The map with the insertions.
    fn apply_schemaless<R: ConnectRecord>(
        &self,
        record: &R,
        value: &Value,
    ) -> ConnectResult<Value> {
        let mut updated = require_map(value, PURPOSE)?.to_vec();
        if let Some(f) = &self.topic {
            map_put(
                &mut updated,
                &f.name,
                Value::String(record.topic().to_string()),
            );
        }
        if let (Some(f), Some(p)) = (&self.partition, record.kafka_partition()) {
            map_put(&mut updated, &f.name, Value::Int32(p));
        }
        if let Some(f) = &self.offset {
            let offset = require_sink_record(record, PURPOSE)?.kafka_offset;
            map_put(&mut updated, &f.name, Value::Int64(offset));
        }
        if let (Some(f), Some(ts)) = (&self.timestamp, record.timestamp()) {
            map_put(&mut updated, &f.name, Value::Int64(ts));
        }
        if let (Some(f), Some(v)) = (&self.static_field, &self.static_value) {
            map_put(&mut updated, &f.name, Value::String(v.clone()));
        }
        Ok(Value::Map(updated))
    }

    /// The struct with the insertions, and its schema.
    fn apply_with_schema<R: ConnectRecord>(
        &mut self,
        record: &R,
        value: Value,
    ) -> ConnectResult<(SchemaRef, Value)> {
        require_struct(&value, PURPOSE)?;
        let Value::Struct(value) = value else {
            unreachable!("require_struct accepts only structs")
        };
        let input = value.schema().clone();
        let schema = match &self.last_schema {
            Some((cached, updated)) if Arc::ptr_eq(cached, &input) => updated.clone(),
            _ => {
                let updated = self.updated_schema(&input)?;
                self.last_schema = Some((input.clone(), updated.clone()));
                updated
            }
        };
        let mut updated = Struct::new(schema.clone())?;
        // The input's values move into the new struct (null replaced by the field's default
        // when `replace.null.with.default`, as `field_value` does).
        let mut values = value.into_values();
        for field in &input.fields {
            let raw = std::mem::replace(&mut values[field.index], Value::Null);
            let v = match (&field.schema.default_value, self.replace_null_with_default) {
                (Some(default), true) if raw.is_null() => default.clone(),
                _ => raw,
            };
            updated = updated.put(&field.name, v)?;
        }
        if let Some(f) = &self.topic {
            updated = updated.put(&f.name, Value::String(record.topic().to_string()))?;
        }
        if let (Some(f), Some(p)) = (&self.partition, record.kafka_partition()) {
            updated = updated.put(&f.name, Value::Int32(p))?;
        }
        if let Some(f) = &self.offset {
            let offset = require_sink_record(record, PURPOSE)?.kafka_offset;
            updated = updated.put(&f.name, Value::Int64(offset))?;
        }
        if let (Some(f), Some(ts)) = (&self.timestamp, record.timestamp()) {
            updated = updated.put(&f.name, Value::Timestamp(ts))?;
        }
        if let (Some(f), Some(v)) = (&self.static_field, &self.static_value) {
            updated = updated.put(&f.name, Value::String(v.clone()))?;
        }
        Ok((schema, Value::Struct(updated)))
    }

    fn updated_schema(&self, schema: &Schema) -> ConnectResult<SchemaRef> {
        let mut builder = copy_schema_basics(schema, SchemaBuilder::struct_());
        for field in &schema.fields {
            builder = builder.field(field.name.clone(), field.schema.clone())?;
        }
        if let Some(f) = &self.topic {
            let s = f.schema(Schema::string_schema(), Schema::optional_string_schema());
            builder = builder.field(f.name.clone(), s)?;
        }
        if let Some(f) = &self.partition {
            let s = f.schema(Schema::int32_schema(), Schema::optional_int32_schema());
            builder = builder.field(f.name.clone(), s)?;
        }
        if let Some(f) = &self.offset {
            let s = f.schema(Schema::int64_schema(), Schema::optional_int64_schema());
            builder = builder.field(f.name.clone(), s)?;
        }
        if let Some(f) = &self.timestamp {
            let s = f.schema(Timestamp::schema(), Timestamp::builder().optional().build());
            builder = builder.field(f.name.clone(), s)?;
        }
        if let Some(f) = &self.static_field {
            let s = f.schema(Schema::string_schema(), Schema::optional_string_schema());
            builder = builder.field(f.name.clone(), s)?;
        }
        Ok(builder.build())
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for InsertField<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&config_def(), props)?;
        self.topic = Insertion::parse(settings.string(TOPIC_FIELD));
        self.partition = Insertion::parse(settings.string(PARTITION_FIELD));
        self.offset = Insertion::parse(settings.string(OFFSET_FIELD));
        self.timestamp = Insertion::parse(settings.string(TIMESTAMP_FIELD));
        self.static_field = Insertion::parse(settings.string(STATIC_FIELD));
        self.static_value = settings.string(STATIC_VALUE).map(str::to_string);
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        self.last_schema = None;
        if self.topic.is_none()
            && self.partition.is_none()
            && self.offset.is_none()
            && self.timestamp.is_none()
            && self.static_field.is_none()
        {
            return Err(ConnectError::config("No field insertion configured"));
        }
        if let (Some(f), None) = (&self.static_field, &self.static_value) {
            return Err(invalid_config(
                STATIC_VALUE,
                "null",
                &format!("No value specified for static field: {}", f.name),
            ));
        }
        Ok(())
    }

    fn apply(&mut self, mut record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        if value.is_null() {
            return Ok(Some(record));
        }
        let (schema, updated) = if P::PART.schema(&record).is_none() {
            (None, self.apply_schemaless(&record, value)?)
        } else {
            // The struct is taken out of the record and its values moved, not copied.
            let value = P::PART.set(&mut record, None, Value::Null);
            let (schema, updated) = self.apply_with_schema(&record, value)?;
            (Some(schema), updated)
        };
        Ok(Some(P::PART.replace(record, schema, updated)))
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

    fn all_fields() -> Props {
        props(&[
            ("topic.field", "topic_field!"),
            ("partition.field", "partition_field"),
            ("timestamp.field", "timestamp_field?"),
            ("static.field", "instance_id"),
            ("static.value", "my-instance-id"),
        ])
    }

    fn configured<P: PartMarker>(p: &Props) -> InsertField<P> {
        let mut t = InsertField::<P>::default();
        Transformation::<SinkRecord>::configure(&mut t, p).unwrap();
        t
    }

    #[test]
    fn struct_values_get_the_fields_with_connects_schemas() {
        let schema = SchemaBuilder::struct_()
            .name("name")
            .version(1)
            .doc("doc")
            .field("magic", Schema::optional_int64_schema())
            .unwrap()
            .build();
        let value = Struct::new(schema.clone())
            .unwrap()
            .put("magic", Value::Int64(42))
            .unwrap();
        let mut t = configured::<ValuePart>(&all_fields());
        let rec = source_value(Some(schema), Value::Struct(value)).with_partition(0);
        let rec = rec.with_timestamp(789);
        let out = apply(&mut t, rec).unwrap();
        let s = out.value_schema.as_ref().unwrap();
        assert_eq!(s.name.as_deref(), Some("name"));
        assert_eq!(s.version, Some(1));
        assert_eq!(s.doc.as_deref(), Some("doc"));
        let names: Vec<_> = s.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "magic",
                "topic_field",
                "partition_field",
                "timestamp_field",
                "instance_id"
            ]
        );
        assert_eq!(
            s.field("topic_field").unwrap().schema,
            Schema::string_schema()
        );
        assert_eq!(
            s.field("partition_field").unwrap().schema,
            Schema::optional_int32_schema()
        );
        assert_eq!(
            *s.field("timestamp_field").unwrap().schema,
            *Timestamp::builder().optional().build()
        );
        assert_eq!(
            s.field("instance_id").unwrap().schema,
            Schema::optional_string_schema()
        );
        let v = as_struct(&out.value);
        assert_eq!(v.get("magic"), Some(&Value::Int64(42)));
        assert_eq!(v.get("topic_field"), Some(&Value::from("test")));
        assert_eq!(v.get("partition_field"), Some(&Value::Int32(0)));
        assert_eq!(v.get("timestamp_field"), Some(&Value::Timestamp(789)));
        assert_eq!(v.get("instance_id"), Some(&Value::from("my-instance-id")));
    }

    #[test]
    fn maps_get_the_fields_as_plain_values() {
        let mut t = configured::<ValuePart>(&all_fields());
        let rec = source_value(None, map(&[("magic", Value::Int64(42))]))
            .with_partition(0)
            .with_timestamp(123);
        let out = apply(&mut t, rec).unwrap();
        assert_eq!(
            out.value,
            map(&[
                ("magic", Value::Int64(42)),
                ("topic_field", Value::from("test")),
                ("partition_field", Value::Int32(0)),
                ("timestamp_field", Value::Int64(123)),
                ("instance_id", Value::from("my-instance-id")),
            ])
        );
        assert_eq!(out.value_schema, None);
    }

    #[test]
    fn missing_partition_and_timestamp_are_left_out() {
        let mut t = configured::<KeyPart>(&all_fields());
        let mut rec = source_value(None, Value::Null);
        rec.key = map(&[("magic", Value::Int64(42))]);
        let out = apply(&mut t, rec).unwrap();
        assert_eq!(
            out.key,
            map(&[
                ("magic", Value::Int64(42)),
                ("topic_field", Value::from("test")),
                ("instance_id", Value::from("my-instance-id")),
            ])
        );
        assert_eq!(out.value, Value::Null);
    }

    #[test]
    fn null_values_pass_unchanged() {
        let schema = SchemaBuilder::struct_()
            .field("magic", Schema::optional_int64_schema())
            .unwrap()
            .build();
        let mut t = configured::<ValuePart>(&all_fields());
        let rec = source_value(Some(schema), Value::Null);
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);
        let mut t = configured::<KeyPart>(&all_fields());
        let rec = source_value(None, map(&[("magic", Value::Int64(1))]));
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);
    }

    #[test]
    fn offsets_come_from_sink_records_only() {
        let p = props(&[("offset.field", "off!")]);
        let mut t = configured::<ValuePart>(&p);
        let schema = SchemaBuilder::struct_().build();
        let rec = sink_value(
            Some(schema.clone()),
            Value::Struct(Struct::new(schema.clone()).unwrap()),
            55,
        );
        let out = apply(&mut t, rec).unwrap();
        let s = out.value_schema.as_ref().unwrap();
        assert_eq!(s.field("off").unwrap().schema, Schema::int64_schema());
        assert_eq!(as_struct(&out.value).get("off"), Some(&Value::Int64(55)));
        let rec = sink_value(None, map(&[]), 56);
        let out = apply(&mut t, rec).unwrap();
        assert_eq!(out.value, map(&[("off", Value::Int64(56))]));

        let rec = source_value(None, map(&[]));
        assert_eq!(
            apply(&mut t, rec).unwrap_err().to_string(),
            "Only SinkRecord supported for [field insertion], found: org.apache.kafka.connect.source.SourceRecord"
        );
    }

    #[test]
    fn replace_null_with_default_decides_what_null_fields_copy() {
        let field_schema = SchemaBuilder::int64()
            .optional()
            .default_value(Value::Int64(42))
            .unwrap()
            .build();
        let schema = SchemaBuilder::struct_()
            .field("magic_with_default", field_schema.clone())
            .unwrap()
            .build();
        for (setting, want) in [("true", Value::Int64(42)), ("false", Value::Null)] {
            let mut p = props(&[("topic.field", "t")]);
            p.insert("replace.null.with.default".into(), setting.into());
            let mut t = configured::<ValuePart>(&p);
            let rec = source_value(
                Some(schema.clone()),
                Value::Struct(Struct::new(schema.clone()).unwrap()),
            );
            let out = apply(&mut t, rec).unwrap();
            let s = out.value_schema.as_ref().unwrap();
            assert_eq!(s.field("magic_with_default").unwrap().schema, field_schema);
            assert_eq!(
                as_struct(&out.value).get_by_index(0),
                &want,
                "replace.null.with.default={setting}"
            );
        }
    }

    #[test]
    fn non_struct_values_and_clashing_names_fail() {
        let mut t = configured::<ValuePart>(&props(&[("topic.field", "topic_field")]));
        let rec = source_value(Some(Schema::int32_schema()), Value::Int32(42));
        assert_eq!(
            apply(&mut t, rec).unwrap_err().to_string(),
            "Only Struct objects supported for [field insertion], found: java.lang.Integer"
        );
        let rec = source_value(None, Value::Int32(42));
        assert_eq!(
            apply(&mut t, rec).unwrap_err().to_string(),
            "Only Map objects supported in absence of schema for [field insertion], found: java.lang.Integer"
        );
        let schema = SchemaBuilder::struct_()
            .field("topic_field", Schema::string_schema())
            .unwrap()
            .build();
        let v = Struct::new(schema.clone())
            .unwrap()
            .put("topic_field", "x")
            .unwrap();
        let rec = source_value(Some(schema), Value::Struct(v));
        assert!(matches!(apply(&mut t, rec), Err(ConnectError::Data(_))));
    }

    #[test]
    fn configuration_errors() {
        let mut t = InsertField::<ValuePart>::default();
        let err = Transformation::<SinkRecord>::configure(&mut t, &Props::new()).unwrap_err();
        assert_eq!(err, ConnectError::config("No field insertion configured"));
        let err = Transformation::<SinkRecord>::configure(
            &mut t,
            &props(&[("static.field", "instance_id")]),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value null for configuration static.value: No value specified for static field: instance_id"
        );
        let err = Transformation::<SinkRecord>::configure(
            &mut t,
            &props(&[("topic.field", "t"), ("replace.null.with.default", "maybe")]),
        )
        .unwrap_err();
        assert!(matches!(err, ConnectError::Config(_)));
        let def = Transformation::<SinkRecord>::config(&t);
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "topic.field",
                "partition.field",
                "offset.field",
                "timestamp.field",
                "static.field",
                "static.value",
                "replace.null.with.default"
            ]
        );
    }
}
