//! Connect schemas and their JSON form in the envelope (`JsonConverter.asJsonSchema` and
//! `asConnectSchema`).

use super::*;

impl JsonConverter {
    /// The JSON form of a schema (`asJsonSchema`).
    pub(super) fn schema_to_json(&self, schema: &Schema) -> ConnectResult<Node> {
        let type_name = match schema.schema_type {
            SchemaType::Float32 => "float",
            SchemaType::Float64 => "double",
            t => t.name(),
        };
        let mut obj: Vec<(String, Node)> = vec![("type".into(), Node::Text(type_name.into()))];
        match schema.schema_type {
            SchemaType::Array => {
                obj.push((
                    "items".into(),
                    self.opt_schema_to_json(schema.value_schema.as_deref())?,
                ));
            }
            SchemaType::Map => {
                obj.push((
                    "keys".into(),
                    self.opt_schema_to_json(schema.key_schema.as_deref())?,
                ));
                obj.push((
                    "values".into(),
                    self.opt_schema_to_json(schema.value_schema.as_deref())?,
                ));
            }
            SchemaType::Struct => {
                let mut fields = Vec::with_capacity(schema.fields.len());
                for field in &schema.fields {
                    let mut f = match self.schema_to_json(&field.schema)? {
                        Node::Object(entries) => entries,
                        _ => unreachable!("schemas are objects"),
                    };
                    set(&mut f, "field", Node::Text(field.name.clone()));
                    fields.push(Node::Object(f));
                }
                obj.push(("fields".into(), Node::Array(fields)));
            }
            _ => {}
        }
        obj.push(("optional".into(), Node::Bool(schema.optional)));
        if let Some(name) = &schema.name {
            obj.push(("name".into(), Node::Text(name.clone())));
        }
        if let Some(version) = schema.version {
            obj.push(("version".into(), Node::Int(version)));
        }
        if let Some(doc) = &schema.doc {
            obj.push(("doc".into(), Node::Text(doc.clone())));
        }
        if let Some(params) = &schema.parameters {
            let params = params
                .iter()
                .map(|(k, v)| (k.clone(), Node::Text(v.clone())))
                .collect();
            obj.push(("parameters".into(), Node::Object(params)));
        }
        if let Some(default) = &schema.default_value {
            obj.push(("default".into(), self.to_json(Some(schema), default)?));
        }
        Ok(Node::Object(obj))
    }

    pub(super) fn opt_schema_to_json(&self, schema: Option<&Schema>) -> ConnectResult<Node> {
        match schema {
            Some(s) => self.schema_to_json(s),
            None => Ok(Node::Null),
        }
    }

    /// A schema from its JSON form (`asConnectSchema`); the node is not null.
    pub(super) fn schema_from_json(&self, node: &Node) -> ConnectResult<SchemaRef> {
        let type_name = match node.get("type") {
            Some(Node::Text(t)) => t.as_str(),
            _ => return Err(ConnectError::data("Schema must contain 'type' field")),
        };
        let sub = |n: Option<&Node>| -> ConnectResult<Option<SchemaRef>> {
            match n {
                None | Some(Node::Null) => Ok(None),
                Some(n) => self.schema_from_json(n).map(Some),
            }
        };
        let schema_type = match type_name {
            "float" => SchemaType::Float32,
            "double" => SchemaType::Float64,
            "float32" | "float64" => {
                return Err(ConnectError::data(format!(
                    "Unknown schema type: {type_name}"
                )));
            }
            t => SchemaType::from_name(t)
                .ok_or_else(|| ConnectError::data(format!("Unknown schema type: {type_name}")))?,
        };
        let mut schema = Schema::new(schema_type);
        match schema_type {
            SchemaType::Array => {
                let items = match node.get("items") {
                    None | Some(Node::Null) => {
                        return Err(ConnectError::data(
                            "Array schema did not specify the element type",
                        ))
                    }
                    Some(n) => n,
                };
                schema.value_schema = Some(self.schema_from_json(items)?);
            }
            SchemaType::Map => {
                let keys = node
                    .get("keys")
                    .ok_or_else(|| ConnectError::data("Map schema did not specify the key type"))?;
                let values = node.get("values").ok_or_else(|| {
                    ConnectError::data("Map schema did not specify the value type")
                })?;
                schema.key_schema = Some(
                    sub(Some(keys))?
                        .ok_or_else(|| ConnectError::data("keySchema cannot be null."))?,
                );
                schema.value_schema = Some(
                    sub(Some(values))?
                        .ok_or_else(|| ConnectError::data("valueSchema cannot be null."))?,
                );
            }
            SchemaType::Struct => {
                let fields = match node.get("fields") {
                    Some(Node::Array(fields)) => fields,
                    _ => {
                        return Err(ConnectError::data(
                            "Struct schema's \"fields\" argument is not an array.",
                        ))
                    }
                };
                for field in fields {
                    let name = match field.get("field") {
                        Some(Node::Text(name)) => name.clone(),
                        _ => {
                            return Err(ConnectError::data(
                                "Struct schema's field name not specified properly",
                            ))
                        }
                    };
                    if schema.field(&name).is_some() {
                        return Err(ConnectError::data(format!(
                            "Cannot create field because of field name duplication {name}"
                        )));
                    }
                    let field_schema = self.schema_from_json(field)?;
                    let index = schema.fields.len();
                    schema.fields.push(Field {
                        name,
                        index,
                        schema: field_schema,
                    });
                }
            }
            _ => {}
        }
        schema.optional = matches!(node.get("optional"), Some(Node::Bool(true)));
        if let Some(Node::Text(name)) = node.get("name") {
            schema.name = Some(name.clone());
        }
        if let Some(v) = node.get("version") {
            if v.is_integral() {
                schema.version = Some(v.int_value());
            }
        }
        if let Some(Node::Text(doc)) = node.get("doc") {
            schema.doc = Some(doc.clone());
        }
        if let Some(Node::Object(params)) = node.get("parameters") {
            let mut map = indexmap::IndexMap::new();
            for (k, v) in params {
                match v {
                    Node::Text(t) => {
                        map.insert(k.clone(), t.clone());
                    }
                    _ => {
                        return Err(ConnectError::data(
                            "Schema parameters must have string values.",
                        ))
                    }
                }
            }
            schema.parameters = Some(map);
        }
        if let Some(default) = node.get("default") {
            let partial = Arc::new(schema.clone());
            let value = self.to_connect(Some(&partial), Some(default))?;
            if !value.is_null() {
                partial
                    .validate_value(&value)
                    .map_err(|_| ConnectError::data("Invalid default value"))?;
                schema.default_value = Some(value);
            }
        }
        Ok(Arc::new(schema))
    }
}
