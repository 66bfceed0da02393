//! Connect values and their JSON form (`JsonConverter.convertToJson` and `convertToConnect`),
//! logical types included.

use super::*;

impl JsonConverter {
    /// The JSON form of a value under an optional schema (`convertToJson`).
    pub(super) fn to_json(&self, schema: Option<&Schema>, value: &Value) -> ConnectResult<Node> {
        if value.is_null() {
            let Some(schema) = schema else {
                return Ok(Node::Null);
            };
            if let (Some(default), true) = (&schema.default_value, self.replace_null_with_default) {
                // A null default (a schema built field by field) is no default: no recursion.
                if !default.is_null() {
                    return self.to_json(Some(schema), default);
                }
            }
            if schema.optional {
                return Ok(Node::Null);
            }
            return Err(ConnectError::data(
                "Conversion error: null value for field that is required and has no default value",
            ));
        }
        if let Some(schema) = schema {
            if let Some(name) = schema.name.as_deref() {
                if let Some(node) = self.logical_to_json(name, schema, value)? {
                    return Ok(node);
                }
            }
        }
        let schema_type = match schema {
            Some(s) => s.schema_type,
            None => match value {
                Value::Decimal(_) | Value::Date(_) | Value::Time(_) | Value::Timestamp(_) => {
                    return Err(ConnectError::data(format!(
                        "Java class class {} does not have corresponding schema type.",
                        value.kind_name()
                    )))
                }
                // Cannot be null: handled above.
                v => v.inferred_type().expect("non-null value has a type"),
            },
        };
        let wrong_type = || {
            let ty = schema.map_or("unknown schema".to_string(), |s| s.schema_type.to_string());
            ConnectError::data(format!(
                "Invalid type for {ty}: class {}",
                value.kind_name()
            ))
        };
        Ok(match (schema_type, value) {
            (SchemaType::Int8, Value::Int8(v)) => Node::Int(*v as i32),
            (SchemaType::Int16, Value::Int16(v)) => Node::Int(*v as i32),
            (SchemaType::Int32, Value::Int32(v)) => Node::Int(*v),
            (SchemaType::Int64, Value::Int64(v)) => Node::Long(*v),
            (SchemaType::Float32, Value::Float32(v)) => Node::Float(*v),
            (SchemaType::Float64, Value::Float64(v)) => Node::Double(*v),
            (SchemaType::Boolean, Value::Boolean(v)) => Node::Bool(*v),
            (SchemaType::String, Value::String(v)) => Node::Text(v.clone()),
            (SchemaType::Bytes, Value::Bytes(v)) => Node::Binary(v.clone()),
            (SchemaType::Bytes, v) => {
                return Err(ConnectError::data(format!(
                    "Invalid type for bytes type: class {}",
                    v.kind_name()
                )))
            }
            (SchemaType::Array, Value::Array(items)) => {
                let elem = schema.and_then(|s| s.value_schema.as_deref());
                Node::Array(
                    items
                        .iter()
                        .map(|item| self.to_json(elem, item))
                        .collect::<ConnectResult<_>>()?,
                )
            }
            (SchemaType::Map, Value::Map(entries)) => {
                let object_mode = match schema {
                    None => entries.iter().all(|(k, _)| matches!(k, Value::String(_))),
                    Some(s) => {
                        s.key_schema.as_ref().map(|k| k.schema_type) == Some(SchemaType::String)
                    }
                };
                let key_schema = schema.and_then(|s| s.key_schema.as_deref());
                let value_schema = schema.and_then(|s| s.value_schema.as_deref());
                if object_mode {
                    let mut obj = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        let key = self.to_json(key_schema, k)?.as_text();
                        let val = self.to_json(value_schema, v)?;
                        set(&mut obj, &key, val);
                    }
                    Node::Object(obj)
                } else {
                    let mut list = Vec::with_capacity(entries.len());
                    for (k, v) in entries {
                        list.push(Node::Array(vec![
                            self.to_json(key_schema, k)?,
                            self.to_json(value_schema, v)?,
                        ]));
                    }
                    Node::Array(list)
                }
            }
            (SchemaType::Struct, Value::Struct(st)) => {
                let schema = match schema {
                    Some(s)
                        if std::ptr::eq(st.schema().as_ref(), s) || st.schema().as_ref() == s =>
                    {
                        s
                    }
                    _ => return Err(ConnectError::data("Mismatching schema.")),
                };
                let mut obj = Vec::with_capacity(schema.fields.len());
                for field in &schema.fields {
                    let v = self.to_json(Some(&field.schema), st.get_by_index(field.index))?;
                    set(&mut obj, &field.name, v);
                }
                Node::Object(obj)
            }
            _ => return Err(wrong_type()),
        })
    }

    /// The JSON form of a logical value, or `None` when `name` is not a logical type.
    pub(super) fn logical_to_json(
        &self,
        name: &str,
        schema: &Schema,
        value: &Value,
    ) -> ConnectResult<Option<Node>> {
        let wrong = |what: &str, expected: &str| {
            ConnectError::data(format!(
                "Invalid type for {what}, expected {expected} but was class {}",
                value.kind_name()
            ))
        };
        Ok(Some(match name {
            Decimal::LOGICAL_NAME => {
                let decimal = match value {
                    Value::Decimal(d) => d.clone(),
                    Value::Bytes(b) => Decimal::to_logical(schema, b)?,
                    _ => return Err(wrong("Decimal", "BigDecimal")),
                };
                match self.decimal_format {
                    DecimalFormat::Numeric => Node::Decimal(decimal),
                    DecimalFormat::Base64 => Node::Binary(decimal_bytes(schema, &decimal)?),
                }
            }
            Date::LOGICAL_NAME => match value {
                Value::Date(d) | Value::Int32(d) => Node::Int(*d),
                _ => return Err(wrong("Date", "Date")),
            },
            Time::LOGICAL_NAME => match value {
                Value::Time(t) | Value::Int32(t) => {
                    if *t < 0 || *t as i64 > MILLIS_PER_DAY {
                        return Err(ConnectError::data(
                            "Kafka Connect Time type should not have any date fields set to non-zero values.",
                        ));
                    }
                    Node::Int(*t)
                }
                _ => return Err(wrong("Time", "Date")),
            },
            Timestamp::LOGICAL_NAME => match value {
                Value::Timestamp(t) | Value::Int64(t) => Node::Long(*t),
                _ => return Err(wrong("Timestamp", "Date")),
            },
            _ => return Ok(None),
        }))
    }

    /// The non-finite number a string node names, when this converter reads them
    /// ([`JsonConverter::non_finite_floats`]).
    fn non_finite(&self, node: &Node) -> Option<f64> {
        if !self.non_finite_floats {
            return None;
        }
        match node {
            Node::Text(t) if t == "NaN" => Some(f64::NAN),
            Node::Text(t) if t == "Infinity" => Some(f64::INFINITY),
            Node::Text(t) if t == "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        }
    }

    /// A Connect value from JSON (`convertToConnect`); `None` is an absent node (Java's null).
    pub(super) fn to_connect(
        &self,
        schema: Option<&SchemaRef>,
        node: Option<&Node>,
    ) -> ConnectResult<Value> {
        let schema_type = match schema {
            Some(schema) => {
                if matches!(node, None | Some(Node::Null)) {
                    if let (Some(default), true) =
                        (&schema.default_value, self.replace_null_with_default)
                    {
                        return Ok(default.clone());
                    }
                    if schema.optional {
                        return Ok(Value::Null);
                    }
                    return Err(ConnectError::data(format!(
                        "Invalid null value for required {} field",
                        schema.schema_type
                    )));
                }
                schema.schema_type
            }
            None => match node {
                None | Some(Node::Null) => return Ok(Value::Null),
                Some(Node::Bool(_)) => SchemaType::Boolean,
                Some(n) if n.is_number() => {
                    if n.is_integral() {
                        SchemaType::Int64
                    } else {
                        SchemaType::Float64
                    }
                }
                Some(Node::Array(_)) => SchemaType::Array,
                Some(Node::Object(_)) => SchemaType::Map,
                Some(Node::Text(_)) => SchemaType::String,
                Some(_) => return Err(ConnectError::data("Unknown schema type: null")),
            },
        };
        let node = node.expect("null nodes handled above");
        if let Some(schema) = schema {
            if let Some(name) = schema.name.as_deref() {
                if let Some(v) = logical_to_connect(name, schema, node)? {
                    return Ok(v);
                }
            }
        }
        Ok(match schema_type {
            SchemaType::Boolean => Value::Boolean(matches!(node, Node::Bool(true))),
            SchemaType::Int8 => Value::Int8(node.int_value() as i8),
            SchemaType::Int16 => Value::Int16(node.int_value() as i16),
            SchemaType::Int32 => Value::Int32(node.int_value()),
            SchemaType::Int64 => Value::Int64(node.long_value()),
            SchemaType::Float32 => Value::Float32(
                self.non_finite(node)
                    .map_or_else(|| node.float_value(), |v| v as f32),
            ),
            SchemaType::Float64 => {
                Value::Float64(self.non_finite(node).unwrap_or_else(|| node.double_value()))
            }
            SchemaType::Bytes => match node.binary_value() {
                Ok(Some(b)) => Value::Bytes(b),
                Ok(None) => Value::Null,
                Err(()) => return Err(ConnectError::data("Invalid bytes field")),
            },
            SchemaType::String => match node {
                Node::Text(t) => Value::String(t.clone()),
                _ => Value::Null,
            },
            SchemaType::Array => {
                let elem = schema.and_then(|s| s.value_schema.as_ref());
                let items: Vec<&Node> = match node {
                    Node::Array(items) => items.iter().collect(),
                    Node::Object(entries) => entries.iter().map(|(_, v)| v).collect(),
                    _ => Vec::new(),
                };
                Value::Array(
                    items
                        .into_iter()
                        .map(|n| self.to_connect(elem, Some(n)))
                        .collect::<ConnectResult<_>>()?,
                )
            }
            SchemaType::Map => {
                let key_schema = schema.and_then(|s| s.key_schema.as_ref());
                let value_schema = schema.and_then(|s| s.value_schema.as_ref());
                let mut entries: Vec<(Value, Value)> = Vec::new();
                if schema.is_none() || key_schema.map(|k| k.schema_type) == Some(SchemaType::String)
                {
                    let Node::Object(fields) = node else {
                        return Err(ConnectError::data(format!(
                            "Maps with string fields should be encoded as JSON objects, but found {}",
                            node.node_type()
                        )));
                    };
                    for (k, v) in fields {
                        entries.push((
                            Value::String(k.clone()),
                            self.to_connect(value_schema, Some(v))?,
                        ));
                    }
                } else {
                    let Node::Array(items) = node else {
                        return Err(ConnectError::data(format!(
                            "Maps with non-string fields should be encoded as JSON array of tuples, but found {}",
                            node.node_type()
                        )));
                    };
                    for item in items {
                        let Node::Array(pair) = item else {
                            return Err(ConnectError::data(format!(
                                "Found invalid map entry instead of array tuple: {}",
                                item.node_type()
                            )));
                        };
                        if pair.len() != 2 {
                            return Err(ConnectError::data(format!(
                                "Found invalid map entry, expected length 2 but found :{}",
                                pair.len()
                            )));
                        }
                        let k = self.to_connect(key_schema, Some(&pair[0]))?;
                        let v = self.to_connect(value_schema, Some(&pair[1]))?;
                        match entries.iter_mut().find(|(ek, _)| *ek == k) {
                            Some(e) => e.1 = v,
                            None => entries.push((k, v)),
                        }
                    }
                }
                Value::Map(entries)
            }
            SchemaType::Struct => {
                let Node::Object(fields) = node else {
                    return Err(ConnectError::data(format!(
                        "Structs should be encoded as JSON objects, but found {}",
                        node.node_type()
                    )));
                };
                let schema = schema.expect("struct values only come with a schema");
                let mut st = Struct::new(schema.clone())?;
                for field in &schema.fields {
                    let v = self.to_connect(Some(&field.schema), get(fields, &field.name))?;
                    st = st.put(&field.name, v)?;
                }
                Value::Struct(st)
            }
        })
    }
}

/// Decimal's wire bytes, with Connect's message for a scale that differs from the schema's.
pub(super) fn decimal_bytes(schema: &Schema, decimal: &Decimal) -> ConnectResult<Vec<u8>> {
    let scale = schema
        .parameters
        .as_ref()
        .and_then(|p| p.get(Decimal::SCALE_FIELD))
        .and_then(|s| s.parse::<i32>().ok());
    match scale {
        Some(s) if s != decimal.scale => Err(ConnectError::data(format!(
            "Decimal value has mismatching scale for given Decimal schema. Schema has scale {s}, value has scale {}.",
            decimal.scale
        ))),
        _ => Decimal::from_logical(schema, decimal),
    }
}

/// A logical value from JSON, or `None` when `name` is not a logical type.
pub(super) fn logical_to_connect(
    name: &str,
    schema: &Schema,
    node: &Node,
) -> ConnectResult<Option<Value>> {
    Ok(Some(match name {
        Decimal::LOGICAL_NAME => {
            if node.is_number() {
                let mut d = node.decimal_value();
                let scale = schema
                    .parameters
                    .as_ref()
                    .and_then(|p| p.get(Decimal::SCALE_FIELD))
                    .and_then(|s| s.parse::<i32>().ok());
                // Rescaling appends zeros; more than a JSON number may have digits (a
                // `1e700000000`) would be a giant computation, so such a number keeps its own
                // scale, as every number does in Java.
                if let Some(scale) = scale {
                    if scale > d.scale
                        && i64::from(scale) - i64::from(d.scale) <= MAX_NUMBER_LENGTH as i64
                    {
                        d = Decimal::new(
                            d.unscaled * BigInt::from(10u8).pow((scale - d.scale) as u32),
                            scale,
                        );
                    }
                }
                Value::Decimal(d)
            } else if matches!(node, Node::Text(_) | Node::Binary(_)) {
                let bytes = node
                    .binary_value()
                    .ok()
                    .flatten()
                    .ok_or_else(|| ConnectError::data("Invalid bytes for Decimal field"))?;
                Value::Decimal(
                    Decimal::to_logical(schema, &bytes)
                        .map_err(|_| ConnectError::data("Invalid bytes for Decimal field"))?,
                )
            } else {
                return Err(ConnectError::data(format!(
                    "Invalid type for Decimal, underlying representation should be numeric or bytes but was {}",
                    node.node_type()
                )));
            }
        }
        Date::LOGICAL_NAME => match node {
            Node::Int(d) => Value::Date(*d),
            _ => {
                return Err(ConnectError::data(format!(
                    "Invalid type for Date, underlying representation should be integer but was {}",
                    node.node_type()
                )))
            }
        },
        Time::LOGICAL_NAME => match node {
            Node::Int(t) => {
                if *t < 0 || *t as i64 > MILLIS_PER_DAY {
                    return Err(ConnectError::data(
                        "Time values must use number of milliseconds greater than 0 and less than 86400000",
                    ));
                }
                Value::Time(*t)
            }
            _ => {
                return Err(ConnectError::data(format!(
                    "Invalid type for Time, underlying representation should be integer but was {}",
                    node.node_type()
                )))
            }
        },
        Timestamp::LOGICAL_NAME => {
            if !node.is_integral() {
                return Err(ConnectError::data(format!(
                    "Invalid type for Timestamp, underlying representation should be integral but was {}",
                    node.node_type()
                )));
            }
            Value::Timestamp(node.long_value())
        }
        _ => return Ok(None),
    }))
}

/// `BigDecimal.longValue()`: the fraction dropped, the low 64 bits kept, without computing a
/// power of ten the result cannot depend on (so `1e700000000` costs no more than `1e7`). As
/// the JDK: a value below one in magnitude is 0, and so is one whose scale is -64 or less
/// (10^64 is a multiple of 2^64, so its low 64 bits are all zero).
pub(super) fn decimal_low_i64(d: &Decimal) -> i64 {
    if d.scale <= -64 {
        return 0;
    }
    if d.scale <= 0 {
        return low_i64(&(&d.unscaled * BigInt::from(10u8).pow((-d.scale) as u32)));
    }
    // |unscaled| < 2^bits < 10^scale when bits * 0.302 <= scale (0.302 > log10 2): only a
    // fraction.
    if d.unscaled.bits() * 302 <= d.scale as u64 * 1000 {
        return 0;
    }
    // Here scale < bits * 0.302: 10^scale is about the size of the unscaled value itself.
    low_i64(&(&d.unscaled / BigInt::from(10u8).pow(d.scale as u32)))
}

/// The low 64 bits of a big integer, as Java's `BigInteger.longValue()`.
pub(super) fn low_i64(v: &BigInt) -> i64 {
    let bytes = v.to_signed_bytes_le();
    let mut buf = [if v.sign() == num_bigint::Sign::Minus {
        0xff
    } else {
        0
    }; 8];
    for (i, b) in bytes.iter().take(8).enumerate() {
        buf[i] = *b;
    }
    i64::from_le_bytes(buf)
}
