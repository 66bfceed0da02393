//! Avro schemas → Connect schemas (`AvroData.toConnectSchema`) and Avro defaults → Connect
//! values, for any Avro schema (see the mapping in [`super::schema`]).

use indexmap::IndexMap;
use serde_json::{Map, Value as Json};
use tributary_api::data::{
    Date, Decimal, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct, Time, Timestamp, Value,
};
use tributary_api::{ConnectError, ConnectResult};

use super::parsed::{AvroNamedKind, AvroSchema, AvroType};
use super::schema::{
    param, value_schema, AvroDataConfig, AVRO_ENUM_DEFAULT_PREFIX_PROP, AVRO_ENUM_DOC_PREFIX_PROP,
    AVRO_FIELD_DEFAULT_FLAG_PROP, AVRO_FIELD_DOC_PREFIX_PROP, AVRO_RECORD_DOC_PROP, AVRO_TYPE_ENUM,
    AVRO_TYPE_UNION, CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT, CONNECT_AVRO_DECIMAL_PRECISION_PROP,
    CONNECT_AVRO_FIXED_SIZE_PROP, CONNECT_DEFAULT_VALUE_PROP, CONNECT_DOC_PROP,
    CONNECT_INTERNAL_TYPE_NAME, CONNECT_NAME_PROP, CONNECT_PARAMETERS_PROP, CONNECT_TYPE_PROP,
    CONNECT_VERSION_PROP, DEFAULT_SCHEMA_FULL_NAME, MAP_ENTRY_TYPE_NAME, NAMESPACE,
};

/// Converts an Avro schema to a Connect schema (`AvroData.toConnectSchema`); `version` is the
/// registry's version of the schema, used for the top schema when it carries no
/// `connect.version`.
///
/// Errors ([`ConnectError::Data`]): a standalone `null` schema, an `int` with an unknown
/// `connect.type`, a union whose branches map to the same field name, a recursive record.
pub fn to_connect_schema(
    config: &AvroDataConfig,
    schema: &AvroSchema,
    version: Option<i32>,
) -> ConnectResult<SchemaRef> {
    let mut ctx = ToConnect {
        config,
        schema,
        in_progress: Vec::new(),
    };
    ctx.convert(&schema.root, false, None, version)
}

struct ToConnect<'a> {
    config: &'a AvroDataConfig,
    schema: &'a AvroSchema,
    in_progress: Vec<usize>,
}

fn props_of<'a>(schema: &'a AvroSchema, ty: &'a AvroType) -> Option<&'a Map<String, Json>> {
    match ty {
        AvroType::Primitive { props, .. }
        | AvroType::Array { props, .. }
        | AvroType::Map { props, .. } => Some(props),
        AvroType::Ref(i) => Some(&schema.named(*i).props),
        AvroType::Union(_) => None,
    }
}

impl ToConnect<'_> {
    fn convert(
        &mut self,
        ty: &AvroType,
        force_optional: bool,
        field_default: Option<&Json>,
        version: Option<i32>,
    ) -> ConnectResult<SchemaRef> {
        let empty = Map::new();
        let props = props_of(self.schema, ty).unwrap_or(&empty);
        let prop_str = |k: &str| props.get(k).and_then(Json::as_str);
        let connect_type = prop_str(CONNECT_TYPE_PROP);
        let logical = prop_str("logicalType");
        let meta = self.config.connect_meta_data;
        let mut builder = match ty {
            AvroType::Primitive { ty, .. } => match ty.as_str() {
                "boolean" => SchemaBuilder::boolean(),
                "bytes" => decimal_or_bytes(props, logical)?,
                "double" => SchemaBuilder::float64(),
                "float" => SchemaBuilder::float32(),
                "int" => match (connect_type, logical) {
                    (None, None) => SchemaBuilder::int32(),
                    (_, Some(l)) if l.eq_ignore_ascii_case("date") => Date::builder(),
                    (_, Some(l)) if l.eq_ignore_ascii_case("time-millis") => Time::builder(),
                    (_, Some(_)) => SchemaBuilder::int32(),
                    (Some("int8"), None) => SchemaBuilder::int8(),
                    (Some("int16"), None) => SchemaBuilder::int16(),
                    (Some(t), None) => {
                        return Err(ConnectError::data(format!(
                            "Connect type annotation for Avro int field is invalid: {t}"
                        )))
                    }
                },
                "long" => match logical {
                    Some(l) if l.eq_ignore_ascii_case("timestamp-millis") => Timestamp::builder(),
                    _ => SchemaBuilder::int64(),
                },
                "string" => SchemaBuilder::string(),
                "null" => {
                    return Err(ConnectError::data(
                        "Standalone null schemas are not supported by this converter",
                    ))
                }
                other => {
                    return Err(ConnectError::data(format!(
                        "Couldn't translate unsupported schema type {other}."
                    )))
                }
            },
            AvroType::Array { items, .. } => {
                if let Some((key, value)) = self.map_entry(items)? {
                    SchemaBuilder::map(key, value)
                } else {
                    SchemaBuilder::array(self.convert(items, false, None, None)?)
                }
            }
            AvroType::Map { values, .. } => SchemaBuilder::map(
                Schema::string_schema(),
                self.convert(values, false, None, None)?,
            ),
            AvroType::Ref(i) => {
                let named = self.schema.named(*i);
                match &named.kind {
                    AvroNamedKind::Record(fields) => {
                        if self.in_progress.contains(i) {
                            return Err(ConnectError::data(format!(
                                "Recursive Avro record {} cannot be converted to a Connect schema",
                                named.full_name
                            )));
                        }
                        self.in_progress.push(*i);
                        let mut b = SchemaBuilder::struct_();
                        if !self.config.discard_type_doc_default && meta {
                            if let Some(doc) = &named.doc {
                                b = b.parameter(AVRO_RECORD_DOC_PROP, doc.clone());
                            }
                        }
                        for f in fields {
                            if !self.config.discard_type_doc_default && meta {
                                if let Some(doc) = &f.doc {
                                    b = b.parameter(
                                        format!("{AVRO_FIELD_DOC_PREFIX_PROP}{}", f.name),
                                        doc.clone(),
                                    );
                                }
                            }
                            let mut fs = self.convert(&f.ty, false, f.default.as_ref(), None)?;
                            if meta {
                                if let Some(Json::Object(params)) =
                                    f.props.get(CONNECT_PARAMETERS_PROP)
                                {
                                    fs = apply_field_level_params(fs, params);
                                }
                            }
                            b = b.field(f.name.clone(), fs)?;
                        }
                        self.in_progress.pop();
                        b
                    }
                    AvroNamedKind::Enum { symbols, default } => {
                        let short = named.full_name.rsplit('.').next().unwrap_or_default();
                        let mut b = SchemaBuilder::string();
                        if meta {
                            if let Some(doc) = &named.doc {
                                let key = if self.config.discard_type_doc_default {
                                    "connect.enum.doc".to_string()
                                } else {
                                    format!("{AVRO_ENUM_DOC_PREFIX_PROP}{short}")
                                };
                                b = b.parameter(key, doc.clone());
                            }
                            if let (false, Some(d)) =
                                (self.config.discard_type_doc_default, default)
                            {
                                b = b.parameter(
                                    format!("{AVRO_ENUM_DEFAULT_PREFIX_PROP}{short}"),
                                    d.clone(),
                                );
                            }
                        }
                        b = b.parameter(AVRO_TYPE_ENUM, named.full_name.clone());
                        for s in symbols {
                            b = b.parameter(format!("{AVRO_TYPE_ENUM}.{s}"), s.clone());
                        }
                        b
                    }
                    AvroNamedKind::Fixed(size) => decimal_or_bytes(props, logical)?
                        .parameter(CONNECT_AVRO_FIXED_SIZE_PROP, size.to_string()),
                }
            }
            AvroType::Union(branches) => {
                if branches.len() == 1 && self.config.flatten_singleton_unions {
                    return self.convert(&branches[0], false, None, None);
                }
                if branches.len() == 2 {
                    let is_null = |b: &AvroType| matches!(b, AvroType::Primitive { ty, props } if ty == "null" && props.is_empty());
                    if let Some(other) = match (is_null(&branches[0]), is_null(&branches[1])) {
                        (true, false) => Some(&branches[1]),
                        (false, true) => Some(&branches[0]),
                        _ => None,
                    } {
                        return self.convert(other, true, None, None);
                    }
                }
                let mut b = SchemaBuilder::struct_().name(AVRO_TYPE_UNION);
                let mut names = Vec::new();
                for (index, member) in branches.iter().enumerate() {
                    if matches!(member, AvroType::Primitive { ty, .. } if ty == "null") {
                        b = b.optional();
                        continue;
                    }
                    let name = self.union_member_field_name(member, index);
                    if names.contains(&name) {
                        return Err(ConnectError::data(
                            "Multiple union schemas map to the Connect union field name",
                        ));
                    }
                    names.push(name.clone());
                    b = b.field(name, self.convert(member, true, None, None)?)?;
                }
                b
            }
        };
        // `discard.type.doc.default` takes a named type's own doc too; otherwise only
        // `connect.doc` (with `connect.meta.data`) makes the Connect doc.
        let doc = match ty {
            _ if meta && prop_str(CONNECT_DOC_PROP).is_some() => prop_str(CONNECT_DOC_PROP),
            AvroType::Ref(i) if self.config.discard_type_doc_default => {
                self.schema.named(*i).doc.as_deref()
            }
            _ if self.config.discard_type_doc_default => prop_str(CONNECT_DOC_PROP),
            _ => None,
        };
        if let Some(doc) = doc {
            builder = builder.doc(doc);
        }
        let connect_version =
            match props.get(CONNECT_VERSION_PROP) {
                Some(v) => Some(v.as_i64().and_then(|v| i32::try_from(v).ok()).ok_or_else(
                    || ConnectError::data(format!("Invalid Connect version found: {v}")),
                )?),
                None => version,
            };
        if let Some(v) = connect_version.filter(|v| *v >= 0) {
            builder = builder.version(v);
        }
        if meta {
            if let Some(params) = props.get(CONNECT_PARAMETERS_PROP) {
                let obj = params.as_object().ok_or_else(|| {
                    ConnectError::data(format!(
                        "Expected JSON object for schema parameters but found: {params}"
                    ))
                })?;
                for (k, v) in obj {
                    let v = v.as_str().ok_or_else(|| {
                        ConnectError::data(format!(
                            "Expected schema parameter values to be strings but found: {v}"
                        ))
                    })?;
                    builder = builder.parameter(k.clone(), v);
                }
            }
        }
        for (k, v) in props {
            if k.starts_with("avro") {
                let text = match v {
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                };
                builder = builder.parameter(k.clone(), text);
            }
        }
        let connect_default = props.get(CONNECT_DEFAULT_VALUE_PROP);
        let default = match field_default {
            None => connect_default,
            Some(d) => {
                if !self.config.discard_type_doc_default && meta && connect_default.is_none() {
                    builder = builder.parameter(AVRO_FIELD_DEFAULT_FLAG_PROP, "true");
                }
                Some(d)
            }
        };
        let name = match props.get(CONNECT_NAME_PROP) {
            Some(Json::String(n)) => Some(n.clone()),
            Some(other) => return Err(ConnectError::data(format!("Invalid schema name: {other}"))),
            None => match ty {
                AvroType::Ref(i) => {
                    let named = self.schema.named(*i);
                    match named.kind {
                        AvroNamedKind::Fixed(_) if is_decimal_builder(&builder) => None,
                        _ => Some(named.full_name.clone()),
                    }
                }
                _ => None,
            },
        };
        if let Some(name) = name.filter(|n| !n.starts_with(DEFAULT_SCHEMA_FULL_NAME)) {
            builder = builder.name(name);
        }
        if force_optional {
            builder = builder.optional();
        }
        if let Some(d) = default {
            let partial = builder.clone().build();
            match default_value_from_avro(&partial, d) {
                // A null default is no default (Java's `builder.defaultValue(null)`).
                Ok(Value::Null) => {}
                Ok(v) => match builder.clone().default_value(v) {
                    Ok(b) => builder = b,
                    Err(e) => tracing::warn!("Ignoring invalid default for schema: {e}"),
                },
                Err(e) => tracing::warn!("Ignoring invalid default for schema: {e}"),
            }
        }
        Ok(builder.build())
    }

    fn map_entry(&mut self, items: &AvroType) -> ConnectResult<Option<(SchemaRef, SchemaRef)>> {
        let AvroType::Ref(i) = items else {
            return Ok(None);
        };
        let named = self.schema.named(*i);
        let AvroNamedKind::Record(fields) = &named.kind else {
            return Ok(None);
        };
        let is_entry = named.full_name == format!("{NAMESPACE}.{MAP_ENTRY_TYPE_NAME}")
            || named
                .props
                .get(CONNECT_INTERNAL_TYPE_NAME)
                .and_then(Json::as_str)
                == Some(MAP_ENTRY_TYPE_NAME);
        if !is_entry {
            return Ok(None);
        }
        let key = fields.iter().find(|f| f.name == "key");
        let value = fields.iter().find(|f| f.name == "value");
        match (fields.len(), key, value) {
            (2, Some(k), Some(v)) => Ok(Some((
                self.convert(&k.ty, false, None, None)?,
                self.convert(&v.ty, false, None, None)?,
            ))),
            _ => Err(ConnectError::data(
                "Found map encoded as array of key-value pairs, but array elements do not match the expected format.",
            )),
        }
    }

    fn union_member_field_name(&self, member: &AvroType, _index: usize) -> String {
        match member {
            AvroType::Ref(i) => {
                let full = &self.schema.named(*i).full_name;
                if self.config.enhanced_schema_support {
                    full.clone()
                } else {
                    full.rsplit('.').next().unwrap_or_default().to_string()
                }
            }
            AvroType::Primitive { ty, .. } => ty.clone(),
            AvroType::Array { .. } => "array".into(),
            AvroType::Map { .. } => "map".into(),
            AvroType::Union(_) => "union".into(),
        }
    }
}

/// `AvroData.applyFieldLevelParams`: a record field's own `connect.parameters` (which
/// [`from_connect_schema`] writes where the field's named type is only referenced by name)
/// added to the field's schema, unless the schema has every one of them already.
fn apply_field_level_params(schema: SchemaRef, params: &Map<String, Json>) -> SchemaRef {
    let text = |v: &Json| match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    };
    if params
        .iter()
        .all(|(k, v)| param(&schema, k) == Some(text(v).as_str()))
    {
        return schema;
    }
    let mut s = (*schema).clone();
    let merged = s.parameters.get_or_insert_with(IndexMap::new);
    for (k, v) in params {
        merged.insert(k.clone(), text(v));
    }
    SchemaRef::new(s)
}

fn is_decimal_builder(b: &SchemaBuilder) -> bool {
    b.clone().build().name.as_deref() == Some(Decimal::LOGICAL_NAME)
}

fn decimal_or_bytes(
    props: &Map<String, Json>,
    logical: Option<&str>,
) -> ConnectResult<SchemaBuilder> {
    if !logical.is_some_and(|l| l.eq_ignore_ascii_case("decimal")) {
        return Ok(SchemaBuilder::bytes());
    }
    let scale = props.get("scale").and_then(Json::as_i64).unwrap_or(0);
    let mut b = Decimal::builder(scale as i32);
    if let Some(p) = props.get("precision") {
        let p = p.as_i64().ok_or_else(|| {
            ConnectError::data(
                "precision property must be a JSON Integer. https://avro.apache.org/docs/1.9.1/spec.html#Decimal",
            )
        })?;
        if p != CONNECT_AVRO_DECIMAL_PRECISION_DEFAULT {
            b = b.parameter(CONNECT_AVRO_DECIMAL_PRECISION_PROP, p.to_string());
        }
    }
    Ok(b)
}

/// `AvroData.defaultValueFromAvro` for a default given as JSON: the Connect value of `json`
/// under `schema`.
pub fn default_value_from_avro(schema: &Schema, json: &Json) -> ConnectResult<Value> {
    let bad = || {
        ConnectError::data(format!(
            "Invalid default value {json} for a {} schema",
            schema.schema_type.name()
        ))
    };
    if json.is_null() {
        return Ok(Value::Null);
    }
    let name = schema.name.as_deref();
    Ok(match schema.schema_type {
        SchemaType::Boolean => Value::Boolean(json.as_bool().ok_or_else(bad)?),
        SchemaType::Int8 => Value::Int8(json.as_i64().ok_or_else(bad)? as i8),
        SchemaType::Int16 => Value::Int16(json.as_i64().ok_or_else(bad)? as i16),
        SchemaType::Int32 => {
            let v = json.as_i64().ok_or_else(bad)? as i32;
            match name {
                Some(Date::LOGICAL_NAME) => Value::Date(v),
                Some(Time::LOGICAL_NAME) => Value::Time(v),
                _ => Value::Int32(v),
            }
        }
        SchemaType::Int64 => {
            let v = json.as_i64().ok_or_else(bad)?;
            match name {
                Some(Timestamp::LOGICAL_NAME) => Value::Timestamp(v),
                _ => Value::Int64(v),
            }
        }
        SchemaType::Float32 => Value::Float32(json.as_f64().ok_or_else(bad)? as f32),
        SchemaType::Float64 => Value::Float64(json.as_f64().ok_or_else(bad)?),
        SchemaType::String => Value::String(json.as_str().ok_or_else(bad)?.to_string()),
        SchemaType::Bytes => {
            let bytes: Vec<u8> = json
                .as_str()
                .ok_or_else(bad)?
                .chars()
                .map(|c| u8::try_from(u32::from(c)).map_err(|_| bad()))
                .collect::<ConnectResult<_>>()?;
            if name == Some(Decimal::LOGICAL_NAME) {
                Value::Decimal(Decimal::to_logical(schema, &bytes)?)
            } else {
                Value::Bytes(bytes)
            }
        }
        SchemaType::Array => {
            let elem = value_schema(schema)?;
            Value::Array(
                json.as_array()
                    .ok_or_else(bad)?
                    .iter()
                    .map(|v| default_value_from_avro(elem, v))
                    .collect::<ConnectResult<_>>()?,
            )
        }
        SchemaType::Map => {
            // Only an Avro map (a required STRING key) has a default Java can read: for a map
            // written as an array of key/value records, `defaultValueFromAvro` tries each
            // `[key, value]` pair (or `{"key":…,"value":…}` record) as a record of the map's
            // value schema and fails, so the default is dropped.
            let key = schema.key_schema.as_ref().ok_or_else(bad)?;
            let val = value_schema(schema)?;
            match json {
                Json::Object(o) if key.schema_type == SchemaType::String && !key.optional => {
                    Value::Map(
                        o.iter()
                            .map(|(k, v)| {
                                Ok((Value::String(k.clone()), default_value_from_avro(val, v)?))
                            })
                            .collect::<ConnectResult<_>>()?,
                    )
                }
                _ => return Err(bad()),
            }
        }
        SchemaType::Struct => {
            let obj = json.as_object().ok_or_else(bad)?;
            let mut s = Struct::new(std::sync::Arc::new(schema.clone()))?;
            for f in &schema.fields {
                if let Some(v) = obj.get(&f.name) {
                    s = s.put(&f.name, default_value_from_avro(&f.schema, v)?)?;
                }
            }
            Value::Struct(s)
        }
    })
}
