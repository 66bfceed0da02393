use std::fmt;

use num_bigint::BigInt;

use super::logical::Decimal;
use super::schema::{SchemaRef, SchemaType};
use crate::error::{ConnectError, ConnectResult};

/// A Connect value: what Java represents as `Object` under a schema.
///
/// Logical values have their own variants: [`Value::Decimal`] (`java.math.BigDecimal`),
/// [`Value::Date`] (days since the epoch), [`Value::Time`] (milliseconds since midnight) and
/// [`Value::Timestamp`] (milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Java `null`.
    Null,
    /// An INT8 value.
    Int8(i8),
    /// An INT16 value.
    Int16(i16),
    /// An INT32 value.
    Int32(i32),
    /// An INT64 value.
    Int64(i64),
    /// A FLOAT32 value.
    Float32(f32),
    /// A FLOAT64 value.
    Float64(f64),
    /// A BOOLEAN value.
    Boolean(bool),
    /// A STRING value.
    String(String),
    /// A BYTES value.
    Bytes(Vec<u8>),
    /// An ARRAY value: the elements in order.
    Array(Vec<Value>),
    /// Map entries in insertion order.
    Map(Vec<(Value, Value)>),
    /// A STRUCT value.
    Struct(Struct),
    /// A Decimal logical value (`java.math.BigDecimal`).
    Decimal(Decimal),
    /// Days since 1970-01-01 (the Date logical type).
    Date(i32),
    /// Milliseconds since midnight (the Time logical type).
    Time(i32),
    /// Milliseconds since 1970-01-01T00:00:00Z (the Timestamp logical type).
    Timestamp(i64),
}

impl Value {
    /// Whether this is [`Value::Null`].
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The Java class name of the value, as Connect's error messages name it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Int8(_) => "java.lang.Byte",
            Value::Int16(_) => "java.lang.Short",
            Value::Int32(_) => "java.lang.Integer",
            Value::Int64(_) => "java.lang.Long",
            Value::Float32(_) => "java.lang.Float",
            Value::Float64(_) => "java.lang.Double",
            Value::Boolean(_) => "java.lang.Boolean",
            Value::String(_) => "java.lang.String",
            Value::Bytes(_) => "[B",
            Value::Array(_) => "java.util.ArrayList",
            Value::Map(_) => "java.util.HashMap",
            Value::Struct(_) => "org.apache.kafka.connect.data.Struct",
            Value::Decimal(_) => "java.math.BigDecimal",
            Value::Date(_) | Value::Time(_) | Value::Timestamp(_) => "java.util.Date",
        }
    }

    /// The string, for a [`Value::String`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The schema type a schemaless value would be inferred as (Connect's
    /// `ConnectSchema.schemaType(Class)`); `None` for null.
    pub fn inferred_type(&self) -> Option<SchemaType> {
        Some(match self {
            Value::Null => return None,
            Value::Int8(_) => SchemaType::Int8,
            Value::Int16(_) => SchemaType::Int16,
            Value::Int32(_) | Value::Date(_) | Value::Time(_) => SchemaType::Int32,
            Value::Int64(_) | Value::Timestamp(_) => SchemaType::Int64,
            Value::Float32(_) => SchemaType::Float32,
            Value::Float64(_) => SchemaType::Float64,
            Value::Boolean(_) => SchemaType::Boolean,
            Value::String(_) => SchemaType::String,
            Value::Bytes(_) | Value::Decimal(_) => SchemaType::Bytes,
            Value::Array(_) => SchemaType::Array,
            Value::Map(_) => SchemaType::Map,
            Value::Struct(_) => SchemaType::Struct,
        })
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}
impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Int32(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int64(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Boolean(v)
    }
}

/// Writes the value as Java's `String.valueOf(object)` would for the object it stands for
/// (what FileStreamSink writes): `Struct{a=1,b=x}`, `[1, 2]`, `{k=v}`, `null`, floats as
/// `Double.toString` / `Float.toString` print them. See [`super::java_fmt::to_java_string`].
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::java_fmt::to_java_string(self))
    }
}

/// A struct value: a struct schema plus one value per field (Connect's `Struct`).
///
/// [`Struct::put`] checks each value against its field's schema and names the field in the
/// error; [`Struct::validate`] checks that every required field is set.
#[derive(Debug, Clone, PartialEq)]
pub struct Struct {
    schema: SchemaRef,
    values: Vec<Value>,
}

impl Struct {
    /// An empty struct of the given schema. Errors if the schema is not a struct schema.
    pub fn new(schema: SchemaRef) -> ConnectResult<Struct> {
        if schema.schema_type != SchemaType::Struct {
            return Err(ConnectError::data(format!("Not a struct schema: {schema}")));
        }
        let values = vec![Value::Null; schema.fields.len()];
        Ok(Struct { schema, values })
    }

    /// A struct of the given schema holding `values`, one per field in field order, as a
    /// decoder that read them by the schema produces them: the values are not checked against
    /// their fields' schemas (use [`Struct::validate`] for that). Errors if the schema is not a
    /// struct schema or the number of values differs from the number of fields.
    pub fn from_values(schema: SchemaRef, values: Vec<Value>) -> ConnectResult<Struct> {
        if schema.schema_type != SchemaType::Struct {
            return Err(ConnectError::data(format!("Not a struct schema: {schema}")));
        }
        if values.len() != schema.fields.len() {
            return Err(ConnectError::data(format!(
                "Struct of {} fields given {} values",
                schema.fields.len(),
                values.len()
            )));
        }
        Ok(Struct { schema, values })
    }

    /// The struct's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Sets a field, validating the value against the field's schema.
    /// Errors: unknown field name, or a value that does not match (the error names the field).
    pub fn put(mut self, field: &str, value: impl Into<Value>) -> ConnectResult<Struct> {
        let value = value.into();
        let f = self
            .schema
            .field(field)
            .ok_or_else(|| ConnectError::data(format!("{field} is not a valid field name")))?;
        f.schema.validate_field(field, &value)?;
        let idx = f.index;
        self.values[idx] = value;
        Ok(self)
    }

    /// The value of a field, or its schema default when unset; `None` for an unknown field.
    pub fn get(&self, field: &str) -> Option<&Value> {
        let f = self.schema.field(field)?;
        let v = &self.values[f.index];
        if v.is_null() {
            if let Some(d) = &f.schema.default_value {
                return Some(d);
            }
        }
        Some(v)
    }

    /// The raw values of the fields (no default applied), by position, taking the struct
    /// apart (so a transformation can move them into another struct without copying).
    pub fn into_values(self) -> Vec<Value> {
        self.values
    }

    /// The raw value of a field (no default applied), by position.
    pub fn get_by_index(&self, index: usize) -> &Value {
        &self.values[index]
    }

    /// Checks every field's value against its schema; an unset field passes when its schema is
    /// optional or has a default. The first failure is returned and names its field.
    pub fn validate(&self) -> ConnectResult<()> {
        for f in &self.schema.fields {
            let v = &self.values[f.index];
            if v.is_null() && (f.schema.optional || f.schema.default_value.is_some()) {
                continue;
            }
            f.schema.validate_field(&f.name, v)?;
        }
        Ok(())
    }
}

/// `Struct.toString()`: `Struct{name=value,…}` in field order, unset (null) fields left out.
impl fmt::Display for Struct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        super::java_fmt::append_struct(&mut s, self);
        f.write_str(&s)
    }
}

/// A schema (absent for schemaless data) with its value: Connect's `SchemaAndValue`.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaAndValue {
    /// The schema; `None` for schemaless data.
    pub schema: Option<SchemaRef>,
    /// The value.
    pub value: Value,
}

impl SchemaAndValue {
    /// `SchemaAndValue.NULL`: no schema, null value.
    pub fn null() -> Self {
        SchemaAndValue {
            schema: None,
            value: Value::Null,
        }
    }
}

/// Used by Decimal's Display.
pub(crate) fn bigint_to_string(v: &BigInt) -> String {
    v.to_string()
}
