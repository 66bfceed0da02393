use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;

use super::value::Value;
use crate::error::{ConnectError, ConnectResult};

/// The physical type of a schema (Connect's `Schema.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    Int8,
    Int16,
    Int32,
    Int64,
    Float32,
    Float64,
    Boolean,
    String,
    Bytes,
    Array,
    Map,
    Struct,
}

impl SchemaType {
    /// Connect's lowercase type name as used by the JsonConverter envelope (`"int32"`, `"struct"` …).
    pub fn name(self) -> &'static str {
        match self {
            SchemaType::Int8 => "int8",
            SchemaType::Int16 => "int16",
            SchemaType::Int32 => "int32",
            SchemaType::Int64 => "int64",
            SchemaType::Float32 => "float32",
            SchemaType::Float64 => "float64",
            SchemaType::Boolean => "boolean",
            SchemaType::String => "string",
            SchemaType::Bytes => "bytes",
            SchemaType::Array => "array",
            SchemaType::Map => "map",
            SchemaType::Struct => "struct",
        }
    }

    /// Parses a lowercase type name (inverse of [`SchemaType::name`]).
    pub fn from_name(name: &str) -> Option<SchemaType> {
        Some(match name {
            "int8" => SchemaType::Int8,
            "int16" => SchemaType::Int16,
            "int32" => SchemaType::Int32,
            "int64" => SchemaType::Int64,
            "float32" => SchemaType::Float32,
            "float64" => SchemaType::Float64,
            "boolean" => SchemaType::Boolean,
            "string" => SchemaType::String,
            "bytes" => SchemaType::Bytes,
            "array" => SchemaType::Array,
            "map" => SchemaType::Map,
            "struct" => SchemaType::Struct,
            _ => return None,
        })
    }

    /// Whether values of this type are primitive (not array, map or struct).
    pub fn is_primitive(self) -> bool {
        !matches!(
            self,
            SchemaType::Array | SchemaType::Map | SchemaType::Struct
        )
    }
}

impl fmt::Display for SchemaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name().to_ascii_uppercase())
    }
}

/// A shared, immutable schema.
pub type SchemaRef = Arc<Schema>;

/// A field of a struct schema: name, position and schema (Connect's `Field`).
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub index: usize,
    pub schema: SchemaRef,
}

/// A Connect schema (Connect's `ConnectSchema`): type, optionality, default, name, version, doc,
/// parameters, and the field / key / value schemas of structs, maps and arrays.
///
/// Build one with [`SchemaBuilder`]; the `*_schema()` constructors give Connect's predefined
/// schemas (`Schema.STRING_SCHEMA`, `Schema.OPTIONAL_INT32_SCHEMA`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Schema {
    pub schema_type: SchemaType,
    pub optional: bool,
    pub default_value: Option<Value>,
    pub name: Option<String>,
    pub version: Option<i32>,
    pub doc: Option<String>,
    /// Parameters in insertion order (Java keeps a `LinkedHashMap`).
    pub parameters: Option<IndexMap<String, String>>,
    /// Fields of a struct schema, in declaration order; empty for other types.
    pub fields: Vec<Field>,
    /// Key schema of a map.
    pub key_schema: Option<SchemaRef>,
    /// Value schema of a map, element schema of an array.
    pub value_schema: Option<SchemaRef>,
}

macro_rules! predefined {
    ($($fn_name:ident, $opt_name:ident, $ty:ident;)*) => {
        $(
            #[doc = concat!("Connect's `Schema.", stringify!($ty), "` schema (required).")]
            pub fn $fn_name() -> SchemaRef {
                Arc::new(Schema::new(SchemaType::$ty))
            }
            #[doc = concat!("Connect's optional `", stringify!($ty), "` schema.")]
            pub fn $opt_name() -> SchemaRef {
                Arc::new(Schema { optional: true, ..Schema::new(SchemaType::$ty) })
            }
        )*
    };
}

impl Schema {
    /// A bare required schema of the given type with no name, doc or parameters.
    pub fn new(schema_type: SchemaType) -> Schema {
        Schema {
            schema_type,
            optional: false,
            default_value: None,
            name: None,
            version: None,
            doc: None,
            parameters: None,
            fields: Vec::new(),
            key_schema: None,
            value_schema: None,
        }
    }

    predefined! {
        int8_schema, optional_int8_schema, Int8;
        int16_schema, optional_int16_schema, Int16;
        int32_schema, optional_int32_schema, Int32;
        int64_schema, optional_int64_schema, Int64;
        float32_schema, optional_float32_schema, Float32;
        float64_schema, optional_float64_schema, Float64;
        boolean_schema, optional_boolean_schema, Boolean;
        string_schema, optional_string_schema, String;
        bytes_schema, optional_bytes_schema, Bytes;
    }

    /// The field with the given name, for struct schemas.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Checks that `value` conforms to this schema (Connect's `ConnectSchema.validateValue`).
    ///
    /// Errors are [`ConnectError::Data`] naming the offending field where there is one.
    pub fn validate_value(&self, value: &Value) -> ConnectResult<()> {
        self.validate_at(None, value)
    }

    pub(crate) fn validate_at(&self, field: Option<&str>, value: &Value) -> ConnectResult<()> {
        let where_ = || match field {
            Some(f) => format!(" for field: \"{f}\""),
            None => String::new(),
        };
        if value.is_null() {
            if self.optional || self.default_value.is_some() {
                return Ok(());
            }
            return Err(ConnectError::data(format!(
                "Invalid value: null used for required field: \"{}\", schema type: {}",
                field.unwrap_or("null"),
                self.schema_type
            )));
        }
        if let Some(name) = self.name.as_deref() {
            if let Some(ok) = super::logical::value_matches_logical(name, self, value) {
                return if ok {
                    Ok(())
                } else {
                    Err(ConnectError::data(format!(
                        "Invalid Java object for logical type {name}: {}{}",
                        value.kind_name(),
                        where_()
                    )))
                };
            }
        }
        let ok = matches!(
            (self.schema_type, value),
            (SchemaType::Int8, Value::Int8(_))
                | (SchemaType::Int16, Value::Int16(_))
                | (SchemaType::Int32, Value::Int32(_))
                | (SchemaType::Int64, Value::Int64(_))
                | (SchemaType::Float32, Value::Float32(_))
                | (SchemaType::Float64, Value::Float64(_))
                | (SchemaType::Boolean, Value::Boolean(_))
                | (SchemaType::String, Value::String(_))
                | (SchemaType::Bytes, Value::Bytes(_))
                | (SchemaType::Array, Value::Array(_))
                | (SchemaType::Map, Value::Map(_))
                | (SchemaType::Struct, Value::Struct(_))
        );
        if !ok {
            return Err(ConnectError::data(format!(
                "Invalid Java object for schema with type {}: {}{}",
                self.schema_type,
                value.kind_name(),
                where_()
            )));
        }
        match value {
            Value::Array(items) => {
                let elem = self
                    .value_schema
                    .as_ref()
                    .ok_or_else(|| ConnectError::data("Array schema has no value schema"))?;
                for item in items {
                    elem.validate_at(field, item)?;
                }
            }
            Value::Map(entries) => {
                let ks = self
                    .key_schema
                    .as_ref()
                    .ok_or_else(|| ConnectError::data("Map schema has no key schema"))?;
                let vs = self
                    .value_schema
                    .as_ref()
                    .ok_or_else(|| ConnectError::data("Map schema has no value schema"))?;
                for (k, v) in entries {
                    ks.validate_at(field, k)?;
                    vs.validate_at(field, v)?;
                }
            }
            Value::Struct(s) => {
                if s.schema().as_ref() != self {
                    return Err(ConnectError::data(format!(
                        "Struct schemas do not match{}.",
                        where_()
                    )));
                }
                s.validate()?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Builder of [`Schema`]s (Connect's `SchemaBuilder`).
///
/// Errors ([`ConnectError::Data`] / `SchemaBuilderException` in Java): a field added to a
/// non-struct, a duplicate field name, or a default value that does not match the schema.
#[derive(Debug, Clone)]
pub struct SchemaBuilder {
    schema: Schema,
}

impl SchemaBuilder {
    /// A builder for a schema of the given type.
    pub fn new(schema_type: SchemaType) -> Self {
        SchemaBuilder {
            schema: Schema::new(schema_type),
        }
    }
    pub fn int8() -> Self {
        Self::new(SchemaType::Int8)
    }
    pub fn int16() -> Self {
        Self::new(SchemaType::Int16)
    }
    pub fn int32() -> Self {
        Self::new(SchemaType::Int32)
    }
    pub fn int64() -> Self {
        Self::new(SchemaType::Int64)
    }
    pub fn float32() -> Self {
        Self::new(SchemaType::Float32)
    }
    pub fn float64() -> Self {
        Self::new(SchemaType::Float64)
    }
    pub fn boolean() -> Self {
        Self::new(SchemaType::Boolean)
    }
    pub fn string() -> Self {
        Self::new(SchemaType::String)
    }
    pub fn bytes() -> Self {
        Self::new(SchemaType::Bytes)
    }
    pub fn struct_() -> Self {
        Self::new(SchemaType::Struct)
    }
    /// An array schema with the given element schema.
    pub fn array(value_schema: SchemaRef) -> Self {
        let mut b = Self::new(SchemaType::Array);
        b.schema.value_schema = Some(value_schema);
        b
    }
    /// A map schema with the given key and value schemas.
    pub fn map(key_schema: SchemaRef, value_schema: SchemaRef) -> Self {
        let mut b = Self::new(SchemaType::Map);
        b.schema.key_schema = Some(key_schema);
        b.schema.value_schema = Some(value_schema);
        b
    }
    pub fn optional(mut self) -> Self {
        self.schema.optional = true;
        self
    }
    pub fn required(mut self) -> Self {
        self.schema.optional = false;
        self
    }
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.schema.name = Some(name.into());
        self
    }
    pub fn version(mut self, version: i32) -> Self {
        self.schema.version = Some(version);
        self
    }
    pub fn doc(mut self, doc: impl Into<String>) -> Self {
        self.schema.doc = Some(doc.into());
        self
    }
    /// Adds a parameter (kept in insertion order).
    pub fn parameter(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.schema
            .parameters
            .get_or_insert_with(IndexMap::new)
            .insert(key.into(), value.into());
        self
    }
    /// Sets the default value; it must conform to the schema built so far.
    pub fn default_value(mut self, value: Value) -> ConnectResult<Self> {
        self.schema
            .validate_value(&value)
            .map_err(|e| ConnectError::data(format!("Invalid default value: {e}")))?;
        self.schema.default_value = Some(value);
        Ok(self)
    }
    /// Adds a struct field. Errors on a non-struct schema or a duplicate field name.
    pub fn field(mut self, name: impl Into<String>, schema: SchemaRef) -> ConnectResult<Self> {
        let name = name.into();
        if self.schema.schema_type != SchemaType::Struct {
            return Err(ConnectError::data(format!(
                "Cannot create fields on type {}",
                self.schema.schema_type
            )));
        }
        if self.schema.field(&name).is_some() {
            return Err(ConnectError::data(format!(
                "Cannot create field because of field name duplication {name}"
            )));
        }
        let index = self.schema.fields.len();
        self.schema.fields.push(Field {
            name,
            index,
            schema,
        });
        Ok(self)
    }
    /// The finished schema.
    pub fn build(self) -> SchemaRef {
        Arc::new(self.schema)
    }
}
