use std::fmt;
use std::sync::Arc;

use indexmap::IndexMap;

use super::value::Value;
use crate::error::{ConnectError, ConnectResult};

/// The physical type of a schema (Connect's `Schema.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaType {
    /// 8-bit signed integer (`byte`).
    Int8,
    /// 16-bit signed integer (`short`).
    Int16,
    /// 32-bit signed integer (`int`).
    Int32,
    /// 64-bit signed integer (`long`).
    Int64,
    /// IEEE 754 single precision (`float`).
    Float32,
    /// IEEE 754 double precision (`double`).
    Float64,
    /// `true` or `false`.
    Boolean,
    /// UTF-8 text.
    String,
    /// An arbitrary byte sequence.
    Bytes,
    /// A sequence of values sharing one element schema.
    Array,
    /// Key/value pairs with one key schema and one value schema.
    Map,
    /// Named fields, each with its own schema.
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
    /// The field's name, unique within its struct.
    pub name: String,
    /// Position of the field in the struct, from 0.
    pub index: usize,
    /// The schema of the field's values.
    pub schema: SchemaRef,
}

/// A Connect schema (Connect's `ConnectSchema`): type, optionality, default, name, version, doc,
/// parameters, and the field / key / value schemas of structs, maps and arrays.
///
/// Build one with [`SchemaBuilder`]; the `*_schema()` constructors give Connect's predefined
/// schemas (`Schema.STRING_SCHEMA`, `Schema.OPTIONAL_INT32_SCHEMA`, …).
///
/// Equality is field by field (`ConnectSchema.equals`), except that an instance always equals
/// itself without the walk: records of a connector share schema instances, and comparing
/// them (struct values, records kept for `commitRecord`) walked whole schemas per record.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The physical type.
    pub schema_type: SchemaType,
    /// Whether null is an acceptable value.
    pub optional: bool,
    /// Value used in place of an unset field of this schema.
    pub default_value: Option<Value>,
    /// Fully qualified name; logical types are recognised by it.
    pub name: Option<String>,
    /// Version of a named schema.
    pub version: Option<i32>,
    /// Free-form description.
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

impl PartialEq for Schema {
    fn eq(&self, other: &Schema) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        // Destructured so that a new field cannot be left out of the comparison.
        let Schema {
            schema_type,
            optional,
            default_value,
            name,
            version,
            doc,
            parameters,
            fields,
            key_schema,
            value_schema,
        } = self;
        *schema_type == other.schema_type
            && *optional == other.optional
            && *name == other.name
            && *version == other.version
            && *doc == other.doc
            && *parameters == other.parameters
            && *fields == other.fields
            && *key_schema == other.key_schema
            && *value_schema == other.value_schema
            && *default_value == other.default_value
    }
}

macro_rules! predefined {
    ($($fn_name:ident, $opt_name:ident, $ty:ident;)*) => {
        $(
            #[doc = concat!("Connect's `Schema.", stringify!($ty), "` schema (required); one shared instance, as Java's constant.")]
            pub fn $fn_name() -> SchemaRef {
                static SCHEMA: std::sync::LazyLock<SchemaRef> =
                    std::sync::LazyLock::new(|| Arc::new(Schema::new(SchemaType::$ty)));
                SCHEMA.clone()
            }
            #[doc = concat!("Connect's optional `", stringify!($ty), "` schema; one shared instance, as Java's constant.")]
            pub fn $opt_name() -> SchemaRef {
                static SCHEMA: std::sync::LazyLock<SchemaRef> = std::sync::LazyLock::new(|| {
                    Arc::new(Schema { optional: true, ..Schema::new(SchemaType::$ty) })
                });
                SCHEMA.clone()
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
    /// A null passes only when the schema is optional. Errors are [`ConnectError::Data`] with
    /// Connect's messages; they say where the bad value sits (`value`, `field: "f"`,
    /// `element of array …`, `key of map …`, `value of map …`).
    pub fn validate_value(&self, value: &Value) -> ConnectResult<()> {
        self.validate_in(Location::Value, value)
    }

    /// Like [`Schema::validate_value`] for the value of struct field `field`.
    pub(crate) fn validate_field(&self, field: &str, value: &Value) -> ConnectResult<()> {
        self.validate_in(Location::Field(field), value)
    }

    fn validate_in(&self, location: Location<'_>, value: &Value) -> ConnectResult<()> {
        if value.is_null() {
            if self.optional {
                return Ok(());
            }
            return Err(ConnectError::data(format!(
                "Invalid value: null used for required {location}, schema type: {}",
                self.schema_type
            )));
        }
        let logical = self
            .name
            .as_deref()
            .and_then(|name| super::logical::value_matches_logical(name, value));
        let ok = logical.unwrap_or(matches!(
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
        ));
        if !ok {
            let name = match &self.name {
                Some(n) => format!(" \"{n}\""),
                None => String::new(),
            };
            return Err(ConnectError::data(format!(
                "Invalid Java object for schema{name} with type {}: class {} for {location}",
                self.schema_type,
                value.kind_name(),
            )));
        }
        match value {
            Value::Array(items) => {
                let at = Location::Element(&location);
                let elem = self.value_schema.as_ref().ok_or_else(|| no_schema(at))?;
                for item in items {
                    elem.validate_in(at, item)?;
                }
            }
            Value::Map(entries) => {
                let key_at = Location::MapKey(&location);
                let value_at = Location::MapValue(&location);
                let ks = self.key_schema.as_ref().ok_or_else(|| no_schema(key_at))?;
                let vs = self
                    .value_schema
                    .as_ref()
                    .ok_or_else(|| no_schema(value_at))?;
                for (k, v) in entries {
                    ks.validate_in(key_at, k)?;
                    vs.validate_in(value_at, v)?;
                }
            }
            Value::Struct(s) => {
                if s.schema().as_ref() != self {
                    return Err(ConnectError::data("Struct schemas do not match."));
                }
                s.validate()?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Where a validated value sits, as Connect's validation messages name it (`value`,
/// `field: "f"`, `element of array …`, `key of map …`, `value of map …`); written out only
/// when a message needs it.
#[derive(Clone, Copy)]
enum Location<'a> {
    Value,
    Field(&'a str),
    Element(&'a Location<'a>),
    MapKey(&'a Location<'a>),
    MapValue(&'a Location<'a>),
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Value => f.write_str("value"),
            Location::Field(name) => write!(f, "field: \"{name}\""),
            Location::Element(at) => write!(f, "element of array {at}"),
            Location::MapKey(at) => write!(f, "key of map {at}"),
            Location::MapValue(at) => write!(f, "value of map {at}"),
        }
    }
}

/// Connect's error for an array or map schema missing its element, key or value schema.
fn no_schema(location: Location<'_>) -> ConnectError {
    ConnectError::data(format!("No schema defined for {location}"))
}

/// `ConnectSchema.toString()`: `Schema{TYPE}`, or `Schema{name:TYPE}` for a named schema.
impl fmt::Display for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.name {
            Some(name) => write!(f, "Schema{{{name}:{}}}", self.schema_type),
            None => write!(f, "Schema{{{}}}", self.schema_type),
        }
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
    /// A builder for a required INT8 schema.
    pub fn int8() -> Self {
        Self::new(SchemaType::Int8)
    }
    /// A builder for a required INT16 schema.
    pub fn int16() -> Self {
        Self::new(SchemaType::Int16)
    }
    /// A builder for a required INT32 schema.
    pub fn int32() -> Self {
        Self::new(SchemaType::Int32)
    }
    /// A builder for a required INT64 schema.
    pub fn int64() -> Self {
        Self::new(SchemaType::Int64)
    }
    /// A builder for a required FLOAT32 schema.
    pub fn float32() -> Self {
        Self::new(SchemaType::Float32)
    }
    /// A builder for a required FLOAT64 schema.
    pub fn float64() -> Self {
        Self::new(SchemaType::Float64)
    }
    /// A builder for a required BOOLEAN schema.
    pub fn boolean() -> Self {
        Self::new(SchemaType::Boolean)
    }
    /// A builder for a required STRING schema.
    pub fn string() -> Self {
        Self::new(SchemaType::String)
    }
    /// A builder for a required BYTES schema.
    pub fn bytes() -> Self {
        Self::new(SchemaType::Bytes)
    }
    /// A builder for a required STRUCT schema (add fields with [`SchemaBuilder::field`]).
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
    /// Makes the schema accept null.
    pub fn optional(mut self) -> Self {
        self.schema.optional = true;
        self
    }
    /// Makes the schema reject null (the default).
    pub fn required(mut self) -> Self {
        self.schema.optional = false;
        self
    }
    /// Sets the schema's fully qualified name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.schema.name = Some(name.into());
        self
    }
    /// Sets the schema version.
    pub fn version(mut self, version: i32) -> Self {
        self.schema.version = Some(version);
        self
    }
    /// Sets the description.
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
    /// Sets the default value; it must conform to the schema built so far. A null (valid for
    /// an optional schema) clears the default, as Java's `defaultValue(null)` does.
    pub fn default_value(mut self, value: Value) -> ConnectResult<Self> {
        self.schema
            .validate_value(&value)
            .map_err(|e| ConnectError::data(format!("Invalid default value: {e}")))?;
        // Java's `defaultValue(null)` (valid for an optional schema only): no default.
        self.schema.default_value = (!value.is_null()).then_some(value);
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
