//! `org.apache.kafka.connect.transforms.TimestampConverter$Key` / `$Value`: converts a
//! timestamp between Unix time, formatted text and Connect's Date, Time and Timestamp types.

use std::marker::PhantomData;
use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Validator};
use tributary_api::data::date_format::JavaDateFormat;
use tributary_api::data::java_fmt::MILLIS_PER_DAY;
use tributary_api::data::{
    Date, Field, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Time, Timestamp, Value,
};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::util::{
    copy_schema_basics, field_value, map_get, map_put, require_map, require_struct_or_null,
    PartMarker, Settings,
};

/// Connect's purpose text in this transformation's error messages.
const PURPOSE: &str = "converting timestamp formats";

/// A representation of a timestamp (`target.type`, or the type of an input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Text in the `format` pattern (`string`).
    String,
    /// A number of seconds, ms, µs or ns since the epoch (`unix`, INT64).
    Unix,
    /// Connect's Date: the day, time of day dropped (`Date`).
    Date,
    /// Connect's Time: the time of day, date dropped (`Time`).
    Time,
    /// Connect's Timestamp (`Timestamp`).
    Timestamp,
}

impl Kind {
    fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "string" => Kind::String,
            "unix" => Kind::Unix,
            "Date" => Kind::Date,
            "Time" => Kind::Time,
            "Timestamp" => Kind::Timestamp,
            _ => return None,
        })
    }

    /// The schema of a value of this kind.
    fn schema(self, optional: bool) -> SchemaRef {
        match (self, optional) {
            (Kind::String, false) => Schema::string_schema(),
            (Kind::String, true) => Schema::optional_string_schema(),
            (Kind::Unix, false) => Schema::int64_schema(),
            (Kind::Unix, true) => Schema::optional_int64_schema(),
            (Kind::Date, o) => logical(Date::builder(), o),
            (Kind::Time, o) => logical(Time::builder(), o),
            (Kind::Timestamp, o) => logical(Timestamp::builder(), o),
        }
    }

    /// The kind a schema's values have (Connect's `timestampTypeFromSchema`).
    fn of_schema(schema: &Schema) -> ConnectResult<Kind> {
        Ok(match schema.name.as_deref() {
            Some(Timestamp::LOGICAL_NAME) => Kind::Timestamp,
            Some(Date::LOGICAL_NAME) => Kind::Date,
            Some(Time::LOGICAL_NAME) => Kind::Time,
            _ if schema.schema_type == SchemaType::String => Kind::String,
            _ if schema.schema_type == SchemaType::Int64 => Kind::Unix,
            _ => {
                return Err(ConnectError::connect(format!(
                    "Schema {schema} does not correspond to a known timestamp type format"
                )))
            }
        })
    }

    /// The kind of a schemaless value (Connect's `inferTimestampType`): dates, times and
    /// timestamps are all taken as timestamps.
    fn of_value(value: &Value) -> ConnectResult<Kind> {
        Ok(match value {
            Value::Date(_) | Value::Time(_) | Value::Timestamp(_) => Kind::Timestamp,
            Value::Int64(_) => Kind::Unix,
            Value::String(_) => Kind::String,
            other => {
                return Err(ConnectError::data(format!(
                    "TimestampConverter does not support class {} objects as timestamps",
                    other.kind_name()
                )))
            }
        })
    }
}

fn logical(builder: SchemaBuilder, optional: bool) -> SchemaRef {
    if optional {
        builder.optional().build()
    } else {
        builder.build()
    }
}

/// The unit of Unix timestamps (`unix.precision`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    Seconds,
    Milliseconds,
    Microseconds,
    Nanoseconds,
}

/// The settings, once read.
#[derive(Debug, Clone)]
struct Config {
    field: String,
    target: Kind,
    format: Option<JavaDateFormat>,
    precision: Precision,
    replace_null_with_default: bool,
}

/// Connect's `TimestampConverter$Key` (`TimestampConverter<KeyPart>`) and
/// `TimestampConverter$Value` (`TimestampConverter<ValuePart>`).
///
/// Converts the whole key or value, or its field `field`, to `target.type`:
/// - `string`: text written with the `java.text.SimpleDateFormat` pattern `format` in UTC;
/// - `unix`: an INT64 count of `unix.precision` units (`seconds`, `milliseconds` (default),
///   `microseconds`, `nanoseconds`) since the epoch;
/// - `Date`, `Time`, `Timestamp`: Connect's logical types (a Date keeps the day, a Time the
///   time of day, both in UTC).
///
/// The input's kind comes from its schema (Timestamp, Date or Time logical types, STRING for
/// text in `format`, INT64 for Unix time; other schemas are an error) or, without a schema,
/// from the value (a string, a long, or a date/time/timestamp value read as a timestamp).
/// Text input is parsed with `format` as Java's lenient `SimpleDateFormat` does. Null stays
/// null. With a schema and a field, the struct schema is rebuilt with the field's new schema
/// (optionality kept) and its default converted too; `replace.null.with.default` (default
/// true) decides whether null fields with a default are read as the default.
///
/// Settings: `field` (STRING, default empty: the whole key or value), `target.type`
/// (required: `string`, `unix`, `Date`, `Time`, `Timestamp`), `format` (STRING, required for
/// `string` targets and text inputs), `unix.precision`, `replace.null.with.default` (BOOLEAN).
pub struct TimestampConverter<P: PartMarker> {
    config: Option<Config>,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for TimestampConverter<P> {
    fn default() -> Self {
        TimestampConverter {
            config: None,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker> TimestampConverter<P> {
    /// The settings: `field`, `target.type`, `format`, `unix.precision`,
    /// `replace.null.with.default`.
    pub fn config_def() -> ConfigDef {
        let one_of = |names: &[&str]| {
            Some(Validator::OneOf(
                names.iter().map(|s| s.to_string()).collect(),
            ))
        };
        ConfigDef::new()
            .define(
                "field",
                ConfigType::String,
                Some(Some("")),
                None,
                Importance::High,
                "The field holding the timestamp; empty when the whole key or value is the \
                 timestamp.",
            )
            .define(
                "target.type",
                ConfigType::String,
                None,
                one_of(&["string", "unix", "Date", "Time", "Timestamp"]),
                Importance::High,
                "What the timestamp becomes: string, unix, Date, Time or Timestamp.",
            )
            .define(
                "format",
                ConfigType::String,
                Some(Some("")),
                None,
                Importance::Medium,
                "A java.text.SimpleDateFormat pattern, used (in UTC) to write string targets \
                 and to read string inputs.",
            )
            .define(
                "unix.precision",
                ConfigType::String,
                Some(Some("milliseconds")),
                one_of(&["nanoseconds", "microseconds", "milliseconds", "seconds"]),
                Importance::Low,
                "The unit of Unix timestamps written (target unix) or read (INT64 inputs): \
                 seconds, milliseconds, microseconds or nanoseconds. Units below a \
                 millisecond are lost in conversion.",
            )
            .define(
                "replace.null.with.default",
                ConfigType::Boolean,
                Some(Some("true")),
                None,
                Importance::Medium,
                "Whether a null field that has a default value is read as that default (true) \
                 or as null (false).",
            )
    }

    fn config(&self) -> ConnectResult<&Config> {
        self.config
            .as_ref()
            .ok_or_else(|| ConnectError::connect("TimestampConverter is not configured"))
    }

    /// The converted part of `record` with its new schema.
    fn apply_with_schema<R: ConnectRecord>(
        &self,
        record: &R,
        schema: &SchemaRef,
    ) -> ConnectResult<(Option<SchemaRef>, Value)> {
        let config = self.config()?;
        let value = P::PART.value(record);
        if config.field.is_empty() {
            let source = Kind::of_schema(schema)?;
            let converted = convert(config, value, Some(source))?;
            return Ok((Some(config.target.schema(schema.optional)), converted));
        }
        let value = require_struct_or_null(value, PURPOSE)?;
        let updated = updated_schema(config, schema)?;
        let converted = match value {
            Some(s) => Value::Struct(convert_struct(config, s, &updated)?),
            None => Value::Null,
        };
        Ok((Some(updated), converted))
    }

    /// The converted part of a schemaless `record` (no schema).
    fn apply_schemaless<R: ConnectRecord>(
        &self,
        record: &R,
    ) -> ConnectResult<(Option<SchemaRef>, Value)> {
        let config = self.config()?;
        let raw = P::PART.value(record);
        if raw.is_null() || config.field.is_empty() {
            return Ok((None, convert(config, raw, None)?));
        }
        let entries = require_map(raw, PURPOSE)?;
        let mut updated = entries.to_vec();
        let current = map_get(entries, &config.field).unwrap_or(&Value::Null);
        map_put(&mut updated, &config.field, convert(config, current, None)?);
        Ok((None, Value::Map(updated)))
    }
}

/// The struct schema with `field`'s schema replaced by the target's (its optionality kept);
/// name, version, doc, parameters, optionality and the (converted) default kept.
fn updated_schema(config: &Config, schema: &Schema) -> ConnectResult<SchemaRef> {
    if schema.schema_type != SchemaType::Struct {
        return Err(ConnectError::data("Cannot list fields on non-struct type"));
    }
    let mut built =
        Arc::unwrap_or_clone(copy_schema_basics(schema, SchemaBuilder::struct_()).build());
    for f in &schema.fields {
        let field_schema = if f.name == config.field {
            config.target.schema(f.schema.optional)
        } else {
            f.schema.clone()
        };
        built.fields.push(Field {
            name: f.name.clone(),
            index: f.index,
            schema: field_schema,
        });
    }
    built.optional = schema.optional;
    let without_default = Arc::new(built.clone());
    if let Some(Value::Struct(default)) = &schema.default_value {
        built.default_value = Some(Value::Struct(convert_struct(
            config,
            default,
            &without_default,
        )?));
    }
    Ok(Arc::new(built))
}

/// The struct with `field` converted, as a struct of `updated`.
fn convert_struct(config: &Config, value: &Struct, updated: &SchemaRef) -> ConnectResult<Struct> {
    let mut out = Struct::new(updated.clone())?;
    for f in &value.schema().fields {
        let v = field_value(value, f, config.replace_null_with_default);
        let v = if f.name == config.field {
            let source = Kind::of_schema(&f.schema)?;
            convert(config, &v, Some(source))?
        } else {
            v
        };
        out = out.put(&f.name, v)?;
    }
    Ok(out)
}

/// Converts a timestamp of kind `source` (inferred from the value when `None`) to the
/// target kind; null stays null.
fn convert(config: &Config, value: &Value, source: Option<Kind>) -> ConnectResult<Value> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let source = match source {
        Some(k) => k,
        None => Kind::of_value(value)?,
    };
    let millis = to_millis(config, source, value)?;
    from_millis(config, millis)
}

/// Java's `getClass()` of a value as `Class.toString()` shows it.
fn class_of(value: &Value) -> String {
    format!("class {}", value.kind_name())
}

/// The instant of a timestamp of kind `kind` (Connect's `toRaw`).
fn to_millis(config: &Config, kind: Kind, value: &Value) -> ConnectResult<i64> {
    let date_like = |label: &str| -> ConnectResult<i64> {
        match (kind, value) {
            (_, Value::Date(d)) => Ok(i64::from(*d) * MILLIS_PER_DAY),
            (_, Value::Time(t)) => Ok(i64::from(*t)),
            (_, Value::Timestamp(t)) => Ok(*t),
            // The encoded forms a Date, Time or Timestamp field may hold.
            (Kind::Date, Value::Int32(d)) => Ok(i64::from(*d) * MILLIS_PER_DAY),
            (Kind::Time, Value::Int32(t)) => Ok(i64::from(*t)),
            (Kind::Timestamp, Value::Int64(t)) => Ok(*t),
            (_, other) => Err(ConnectError::data(format!(
                "Expected {label} to be a java.util.Date, but found {}",
                class_of(other)
            ))),
        }
    };
    match kind {
        Kind::String => {
            let Value::String(text) = value else {
                return Err(ConnectError::data(format!(
                    "Expected string timestamp to be a String, but found {}",
                    class_of(value)
                )));
            };
            let format = config.format.as_ref().ok_or_else(|| {
                // Connect dereferences the missing formatter (a NullPointerException).
                ConnectError::connect(
                    "Cannot invoke \"java.text.SimpleDateFormat.parse(String)\" because \
                     \"config.format\" is null",
                )
            })?;
            format.parse(text).ok_or_else(|| {
                ConnectError::data(format!(
                    "Could not parse timestamp: value ({text}) does not match pattern ({})",
                    format.pattern()
                ))
            })
        }
        Kind::Unix => {
            let Value::Int64(n) = value else {
                return Err(ConnectError::data(format!(
                    "Expected Unix timestamp to be a Long, but found {}",
                    class_of(value)
                )));
            };
            Ok(match config.precision {
                Precision::Seconds => n.saturating_mul(1000),
                Precision::Milliseconds => *n,
                Precision::Microseconds => n / 1000,
                Precision::Nanoseconds => n / 1_000_000,
            })
        }
        Kind::Date => date_like("Date"),
        Kind::Time => date_like("Time"),
        Kind::Timestamp => date_like("Timestamp"),
    }
}

/// The instant as the target kind (Connect's `toType`).
fn from_millis(config: &Config, millis: i64) -> ConnectResult<Value> {
    Ok(match config.target {
        Kind::String => match &config.format {
            Some(f) => Value::String(f.format(millis)),
            None => return Err(ConnectError::connect("TimestampConverter has no format")),
        },
        Kind::Unix => Value::Int64(match config.precision {
            Precision::Seconds => millis / 1000,
            Precision::Milliseconds => millis,
            Precision::Microseconds => millis.saturating_mul(1000),
            Precision::Nanoseconds => millis.saturating_mul(1_000_000),
        }),
        Kind::Date => {
            let days = millis.div_euclid(MILLIS_PER_DAY);
            Value::Date(i32::try_from(days).map_err(|_| {
                ConnectError::data(format!("Timestamp {millis} is out of the Date range"))
            })?)
        }
        Kind::Time => Value::Time(millis.rem_euclid(MILLIS_PER_DAY) as i32),
        Kind::Timestamp => Value::Timestamp(millis),
    })
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for TimestampConverter<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse(&Self::config_def(), props)?;
        let target = Kind::parse(settings.string("target.type").unwrap_or_default())
            .ok_or_else(|| ConnectError::config("Unknown target.type"))?;
        let pattern = settings.string("format").unwrap_or_default();
        let blank = pattern.trim().is_empty();
        if target == Kind::String && blank {
            return Err(ConnectError::config(
                "TimestampConverter requires format option to be specified when using string timestamps",
            ));
        }
        let format = if blank {
            None
        } else {
            // Connect builds this ConfigException with its (name, value) constructor, so the
            // message reads oddly; it is kept as users see it.
            Some(JavaDateFormat::new(pattern).map_err(|e| {
                ConnectError::config(format!(
                    "Invalid value java.lang.IllegalArgumentException: {e} for configuration \
                     TimestampConverter requires a SimpleDateFormat-compatible pattern for string \
                     timestamps: {pattern}"
                ))
            })?)
        };
        let precision = match settings.string("unix.precision") {
            Some("seconds") => Precision::Seconds,
            Some("microseconds") => Precision::Microseconds,
            Some("nanoseconds") => Precision::Nanoseconds,
            _ => Precision::Milliseconds,
        };
        self.config = Some(Config {
            field: settings.string("field").unwrap_or_default().to_string(),
            target,
            format,
            precision,
            replace_null_with_default: settings.boolean("replace.null.with.default"),
        });
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let (schema, value) = match P::PART.schema(&record).cloned() {
            Some(schema) => self.apply_with_schema(&record, &schema)?,
            None => self.apply_schemaless(&record)?,
        };
        Ok(Some(P::PART.replace(record, schema, value)))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{map, null, props, sink, source};
    use crate::util::{KeyPart, ValuePart};
    use tributary_api::record::{SinkRecord, SourceRecord};

    type ValueConverter = TimestampConverter<ValuePart>;
    type KeyConverter = TimestampConverter<KeyPart>;

    /// 2024-01-01T10:20:30.123Z.
    const TS: i64 = 1_704_104_430_123;
    /// 2024-01-01 in days since the epoch.
    const DAY: i32 = 19_723;
    /// 10:20:30.123 in ms since midnight.
    const TIME: i32 = 37_230_123;

    fn converter(pairs: &[(&str, &str)]) -> ValueConverter {
        let mut t = ValueConverter::default();
        Transformation::<SourceRecord>::configure(&mut t, &props(pairs)).expect("valid settings");
        t
    }

    fn config_error(pairs: &[(&str, &str)]) -> String {
        let mut t = ValueConverter::default();
        Transformation::<SourceRecord>::configure(&mut t, &props(pairs))
            .unwrap_err()
            .to_string()
    }

    /// The value (schema and value) after converting a schemaless or schema'd value.
    fn run(
        t: &mut ValueConverter,
        schema: Option<SchemaRef>,
        value: Value,
    ) -> ConnectResult<(Option<SchemaRef>, Value)> {
        let out = t
            .apply(source("t", null(), (schema, value), Some(1)))?
            .unwrap();
        Ok((out.value_schema, out.value))
    }

    fn optional(b: SchemaBuilder) -> SchemaRef {
        b.optional().build()
    }

    #[test]
    fn whole_values_with_schema_to_every_target() {
        let ts = || (Some(Timestamp::schema()), Value::Timestamp(TS));
        type Case = (&'static [(&'static str, &'static str)], SchemaRef, Value);
        let cases: Vec<Case> = vec![
            (
                &[("target.type", "Timestamp")],
                Timestamp::schema(),
                Value::Timestamp(TS),
            ),
            (&[("target.type", "Date")], Date::schema(), Value::Date(DAY)),
            (
                &[("target.type", "Time")],
                Time::schema(),
                Value::Time(TIME),
            ),
            (
                &[("target.type", "unix")],
                Schema::int64_schema(),
                Value::Int64(TS),
            ),
            (
                &[("target.type", "unix"), ("unix.precision", "seconds")],
                Schema::int64_schema(),
                Value::Int64(1_704_104_430),
            ),
            (
                &[("target.type", "unix"), ("unix.precision", "microseconds")],
                Schema::int64_schema(),
                Value::Int64(TS * 1000),
            ),
            (
                &[("target.type", "unix"), ("unix.precision", "nanoseconds")],
                Schema::int64_schema(),
                Value::Int64(TS * 1_000_000),
            ),
            (
                &[
                    ("target.type", "string"),
                    ("format", "yyyy-MM-dd HH:mm:ss.SSS z"),
                ],
                Schema::string_schema(),
                Value::from("2024-01-01 10:20:30.123 UTC"),
            ),
        ];
        for (settings, schema, value) in cases {
            let mut t = converter(settings);
            let (s, v) = ts();
            assert_eq!(
                run(&mut t, s, v).unwrap(),
                (Some(schema), value),
                "{settings:?}"
            );
        }
    }

    #[test]
    fn inputs_are_read_by_their_schema() {
        let mut t = converter(&[("target.type", "Timestamp")]);
        let day_ms = i64::from(DAY) * MILLIS_PER_DAY;
        assert_eq!(
            run(&mut t, Some(Date::schema()), Value::Date(DAY))
                .unwrap()
                .1,
            Value::Timestamp(day_ms)
        );
        assert_eq!(
            run(&mut t, Some(Time::schema()), Value::Time(TIME))
                .unwrap()
                .1,
            Value::Timestamp(TIME.into())
        );
        assert_eq!(
            run(&mut t, Some(Schema::int64_schema()), Value::Int64(TS))
                .unwrap()
                .1,
            Value::Timestamp(TS)
        );
        let mut t = converter(&[("target.type", "Timestamp"), ("unix.precision", "seconds")]);
        assert_eq!(
            run(&mut t, Some(Schema::int64_schema()), Value::Int64(-5))
                .unwrap()
                .1,
            Value::Timestamp(-5000)
        );
        let mut t = converter(&[
            ("target.type", "Timestamp"),
            ("unix.precision", "microseconds"),
        ]);
        // Microseconds and nanoseconds are truncated towards zero, as Java's TimeUnit does.
        assert_eq!(
            run(&mut t, Some(Schema::int64_schema()), Value::Int64(-1999))
                .unwrap()
                .1,
            Value::Timestamp(-1)
        );
        let mut t = converter(&[("target.type", "Timestamp"), ("format", "dd/MM/yyyy HH:mm")]);
        assert_eq!(
            run(
                &mut t,
                Some(Schema::string_schema()),
                Value::from("01/01/2024 10:20")
            )
            .unwrap()
            .1,
            Value::Timestamp(1_704_104_400_000)
        );
        let err = run(&mut t, Some(Schema::string_schema()), Value::from("nope")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Could not parse timestamp: value (nope) does not match pattern (dd/MM/yyyy HH:mm)"
        );
        let err = run(&mut t, Some(Schema::int32_schema()), Value::Int32(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Schema Schema{INT32} does not correspond to a known timestamp type format"
        );
        // The schema decides before the value is looked at: even null fails.
        let err = run(&mut t, Some(Schema::optional_int32_schema()), Value::Null).unwrap_err();
        assert!(matches!(err, ConnectError::Connect(_)));
        let err = run(&mut t, Some(Schema::int64_schema()), Value::from("x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Expected Unix timestamp to be a Long, but found class java.lang.String"
        );
    }

    #[test]
    fn optional_schemas_and_nulls() {
        let mut t = converter(&[("target.type", "Date")]);
        assert_eq!(
            run(&mut t, Some(optional(Timestamp::builder())), Value::Null).unwrap(),
            (Some(optional(Date::builder())), Value::Null)
        );
        let mut t = converter(&[("target.type", "unix")]);
        assert_eq!(
            run(
                &mut t,
                Some(optional(Timestamp::builder())),
                Value::Timestamp(TS)
            )
            .unwrap(),
            (Some(Schema::optional_int64_schema()), Value::Int64(TS))
        );
        assert_eq!(run(&mut t, None, Value::Null).unwrap(), (None, Value::Null));
    }

    #[test]
    fn schemaless_values_are_inferred() {
        let mut t = converter(&[("target.type", "string"), ("format", "yyyyMMdd")]);
        assert_eq!(
            run(&mut t, None, Value::Timestamp(TS)).unwrap(),
            (None, Value::from("20240101"))
        );
        assert_eq!(
            run(&mut t, None, Value::Int64(TS)).unwrap(),
            (None, Value::from("20240101"))
        );
        assert_eq!(
            run(&mut t, None, Value::from("20231231")).unwrap(),
            (None, Value::from("20231231"))
        );
        let err = run(&mut t, None, Value::Int32(5)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "TimestampConverter does not support class java.lang.Integer objects as timestamps"
        );
        let mut t = converter(&[("target.type", "Time")]);
        assert_eq!(
            run(&mut t, None, Value::Int64(-1)).unwrap(),
            (None, Value::Time(86_399_999))
        );
        let mut t = converter(&[("target.type", "Date")]);
        assert_eq!(
            run(&mut t, None, Value::Int64(-1)).unwrap(),
            (None, Value::Date(-1))
        );
        // Without a format a string input cannot be read.
        assert_eq!(
            run(&mut t, None, Value::from("2024")).unwrap_err().to_string(),
            "Cannot invoke \"java.text.SimpleDateFormat.parse(String)\" because \"config.format\" is null"
        );
    }

    #[test]
    fn a_field_of_a_struct() {
        let schema = SchemaBuilder::struct_()
            .name("event")
            .version(3)
            .field("id", Schema::int32_schema())
            .unwrap()
            .field("at", Schema::optional_int64_schema())
            .unwrap()
            .build();
        let value = Struct::new(schema.clone())
            .unwrap()
            .put("id", 1)
            .unwrap()
            .put("at", Value::Int64(TS))
            .unwrap();
        let mut t = converter(&[("target.type", "Timestamp"), ("field", "at")]);
        let (s, v) = run(&mut t, Some(schema.clone()), Value::Struct(value)).unwrap();
        let s = s.unwrap();
        assert_eq!((s.name.as_deref(), s.version), (Some("event"), Some(3)));
        assert_eq!(s.fields[0].schema, Schema::int32_schema());
        assert_eq!(s.fields[1].schema, optional(Timestamp::builder()));
        let Value::Struct(st) = v else {
            panic!("struct expected")
        };
        assert_eq!(st.get("id"), Some(&Value::Int32(1)));
        assert_eq!(st.get("at"), Some(&Value::Timestamp(TS)));
        // A null struct keeps the converted schema.
        let (s, v) = run(&mut t, Some(schema.clone()), Value::Null).unwrap();
        assert_eq!(s.unwrap().fields[1].schema, optional(Timestamp::builder()));
        assert_eq!(v, Value::Null);
        // A field that is not there changes nothing but the schema's identity.
        let mut t = converter(&[("target.type", "Timestamp"), ("field", "other")]);
        let (s, _) = run(&mut t, Some(schema.clone()), Value::Null).unwrap();
        assert_eq!(s.unwrap().fields, schema.fields);
        let err = run(&mut t, Some(schema), Value::from("x")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Only Struct objects supported for [converting timestamp formats], found: java.lang.String"
        );
        let err = run(&mut t, Some(Schema::optional_int64_schema()), Value::Null).unwrap_err();
        assert_eq!(err.to_string(), "Cannot list fields on non-struct type");
    }

    #[test]
    fn struct_defaults_are_converted_and_null_replacement_is_configurable() {
        let at = SchemaBuilder::int64()
            .default_value(Value::Int64(0))
            .unwrap()
            .build();
        let plain = SchemaBuilder::struct_()
            .field("at", at.clone())
            .unwrap()
            .build();
        let default = Struct::new(plain.clone())
            .unwrap()
            .put("at", Value::Int64(86_400_000))
            .unwrap();
        let schema = Arc::new(Schema {
            default_value: Some(Value::Struct(default)),
            optional: true,
            ..(*plain).clone()
        });
        let value = Value::Struct(Struct::new(schema.clone()).unwrap());
        let mut t = converter(&[("target.type", "Date"), ("field", "at")]);
        let (s, v) = run(&mut t, Some(schema.clone()), value.clone()).unwrap();
        let s = s.unwrap();
        assert!(s.optional);
        let Some(Value::Struct(d)) = &s.default_value else {
            panic!("struct default expected")
        };
        assert_eq!(d.get("at"), Some(&Value::Date(1)));
        let Value::Struct(st) = v else {
            panic!("struct expected")
        };
        // The unset field was read as its default, 0.
        assert_eq!(st.get("at"), Some(&Value::Date(0)));
        let mut t = converter(&[
            ("target.type", "Date"),
            ("field", "at"),
            ("replace.null.with.default", "false"),
        ]);
        let err = run(&mut t, Some(schema), value).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Invalid value: null used for required field: \"at\", schema type: INT32"
        );
    }

    #[test]
    fn a_field_of_a_map() {
        let mut t = converter(&[("target.type", "unix"), ("field", "at")]);
        let v = map(&[("id", Value::Int32(1)), ("at", Value::Timestamp(TS))]);
        assert_eq!(
            run(&mut t, None, v).unwrap().1,
            map(&[("id", Value::Int32(1)), ("at", Value::Int64(TS))])
        );
        // A missing entry is added as null, as Java's map.put does.
        let v = map(&[("id", Value::Int32(1))]);
        assert_eq!(
            run(&mut t, None, v).unwrap().1,
            map(&[("id", Value::Int32(1)), ("at", Value::Null)])
        );
        assert_eq!(run(&mut t, None, Value::Null).unwrap(), (None, Value::Null));
        let err = run(&mut t, None, Value::Int64(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Only Map objects supported in absence of schema for [converting timestamp formats], found: java.lang.Long"
        );
    }

    #[test]
    fn the_key_variant_works_on_keys() {
        let mut t = KeyConverter::default();
        Transformation::<SinkRecord>::configure(&mut t, &props(&[("target.type", "Date")]))
            .unwrap();
        let r = sink(
            "t",
            (Some(Timestamp::schema()), Value::Timestamp(TS)),
            (Some(Schema::string_schema()), Value::from("v")),
            Some(1),
        );
        let out = t.apply(r).unwrap().unwrap();
        assert_eq!(
            (out.key_schema, out.key),
            (Some(Date::schema()), Value::Date(DAY))
        );
        assert_eq!(out.value, Value::from("v"));
        assert_eq!(out.kafka_offset, 42);
    }

    #[test]
    fn settings_are_checked() {
        assert_eq!(
            config_error(&[]),
            "Missing required configuration \"target.type\" which has no default value."
        );
        assert_eq!(
            config_error(&[("target.type", "date")]),
            "Invalid value date for configuration target.type: String must be one of: string, unix, Date, Time, Timestamp"
        );
        assert_eq!(
            config_error(&[("target.type", "string")]),
            "TimestampConverter requires format option to be specified when using string timestamps"
        );
        assert_eq!(
            config_error(&[("target.type", "string"), ("format", "yyyy-qq")]),
            "Invalid value java.lang.IllegalArgumentException: Illegal pattern character 'q' for \
             configuration TimestampConverter requires a SimpleDateFormat-compatible pattern for \
             string timestamps: yyyy-qq"
        );
        // Any target validates a given pattern.
        assert!(config_error(&[("target.type", "unix"), ("format", "'")])
            .contains("Unterminated quote"));
        assert_eq!(
            config_error(&[("target.type", "unix"), ("unix.precision", "minutes")]),
            "Invalid value minutes for configuration unix.precision: String must be one of: nanoseconds, microseconds, milliseconds, seconds"
        );
        let def = ValueConverter::config_def();
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "field",
                "target.type",
                "format",
                "unix.precision",
                "replace.null.with.default"
            ]
        );
    }
}
