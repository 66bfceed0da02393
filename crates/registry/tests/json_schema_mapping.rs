//! The Connect ↔ JSON Schema mapping and the JSON text of values, without a registry: schemas
//! as Confluent's `JsonSchemaData` builds them, values as its serializer writes them, and both
//! read back.

use num_bigint::BigInt;
use serde_json::{json, Value as Json};
use tributary_api::data::{
    Date, Decimal, Schema, SchemaBuilder, SchemaRef, Struct, Timestamp, Value,
};
use tributary_registry::json_schema::data::{read_value, write_value, JsonDataConfig};
use tributary_registry::json_schema::schema::{from_connect_schema, to_connect_schema};

fn schema_json(schema: &Schema) -> Json {
    serde_json::from_str(&from_connect_schema(&JsonDataConfig::default(), schema).unwrap()).unwrap()
}

fn text(schema: &Schema, value: &Value) -> String {
    let mut out = Vec::new();
    assert!(write_value(&JsonDataConfig::default(), Some(schema), value, &mut out).unwrap());
    String::from_utf8(out).unwrap()
}

fn order_schema() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("com.example.Order")
        .field("id", Schema::int32_schema())
        .unwrap()
        .field("note", Schema::optional_string_schema())
        .unwrap()
        .field("price", Decimal::schema(2))
        .unwrap()
        .field("at", Timestamp::schema())
        .unwrap()
        .field(
            "tags",
            SchemaBuilder::array(Schema::string_schema()).build(),
        )
        .unwrap()
        .field(
            "counts",
            SchemaBuilder::map(Schema::int32_schema(), Schema::float64_schema()).build(),
        )
        .unwrap()
        .field("day", Date::schema())
        .unwrap()
        .field("raw", Schema::optional_bytes_schema())
        .unwrap()
        .build()
}

fn order(schema: &SchemaRef, note: Option<&str>) -> Value {
    Value::Struct(
        Struct::new(schema.clone())
            .unwrap()
            .put("id", Value::Int32(7))
            .unwrap()
            .put(
                "note",
                note.map(|n| Value::String(n.into())).unwrap_or(Value::Null),
            )
            .unwrap()
            .put("price", Value::Decimal(Decimal::new(BigInt::from(1999), 2)))
            .unwrap()
            .put("at", Value::Timestamp(1_700_000_000_000))
            .unwrap()
            .put("tags", Value::Array(vec![Value::String("a\"b".into())]))
            .unwrap()
            .put(
                "counts",
                Value::Map(vec![(Value::Int32(1), Value::Float64(0.5))]),
            )
            .unwrap()
            .put("day", Value::Date(19_000))
            .unwrap()
            .put("raw", Value::Bytes(vec![1, 2, 255]))
            .unwrap(),
    )
}

#[test]
fn structs_become_objects_with_connect_indexes_and_optional_fields_one_of_null() {
    let s = schema_json(&order_schema());
    assert_eq!(s["type"], "object");
    assert_eq!(s["title"], "com.example.Order");
    let p = &s["properties"];
    assert_eq!(
        p["id"],
        json!({"type":"integer","connect.type":"int32","connect.index":0})
    );
    assert_eq!(
        p["note"],
        json!({"oneOf":[{"type":"null"},{"type":"string"}],"connect.index":1})
    );
    assert_eq!(
        p["price"],
        json!({"type":"string","title":"org.apache.kafka.connect.data.Decimal",
               "connect.type":"bytes","connect.version":1,
               "connect.parameters":{"scale":"2"},"connect.index":2})
    );
    assert_eq!(
        p["counts"],
        json!({"type":"array","items":{"type":"object","properties":{
                 "key":{"type":"integer","connect.type":"int32","connect.index":0},
                 "value":{"type":"number","connect.type":"float64","connect.index":1}}},
               "connect.type":"map","connect.index":5})
    );
    assert!(s.get("additionalProperties").is_none(), "{s}");
}

#[test]
fn values_are_written_as_confluents_serializer_writes_them() {
    let schema = order_schema();
    assert_eq!(
        text(&schema, &order(&schema, None)),
        r#"{"id":7,"note":null,"price":"B88=","at":1700000000000,"tags":["a\"b"],"counts":[{"key":1,"value":0.5}],"day":19000,"raw":"AQL/"}"#
    );
    let numeric = JsonDataConfig {
        decimal_numeric: true,
        ..JsonDataConfig::default()
    };
    let mut out = Vec::new();
    write_value(
        &numeric,
        Some(&Decimal::schema(2)),
        &Value::Decimal(Decimal::new(BigInt::from(-5), 2)),
        &mut out,
    )
    .unwrap();
    assert_eq!(out, b"-0.05");
    // A required field without value or default is left out, as Confluent's JsonSchemaData.
    let required = SchemaBuilder::struct_()
        .field("a", Schema::string_schema())
        .unwrap()
        .build();
    let partial = Value::Struct(Struct::from_values(required.clone(), vec![Value::Null]).unwrap());
    assert_eq!(text(&required, &partial), "{}");
}

#[test]
fn schemas_and_values_read_back_equal() {
    let schema = order_schema();
    let json_schema = schema_json(&schema);
    let back = to_connect_schema(&JsonDataConfig::default(), &json_schema, None).unwrap();
    assert_eq!(back.as_ref(), schema.as_ref());
    for note in [Some("ünï"), None] {
        let value = order(&schema, note);
        let json: Json = serde_json::from_str(&text(&schema, &value)).unwrap();
        let read = read_value(&JsonDataConfig::default(), Some(&back), Some(&json)).unwrap();
        assert_eq!(read, value);
    }
}

#[test]
fn foreign_schemas_map_as_confluent_maps_them() {
    let producer_schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Person",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "score": {"type": "number"},
            "email": {"type": ["null", "string"]},
            "kind": {"enum": ["a", "b"]},
            "address": {"$ref": "#/definitions/Address"}
        },
        "required": ["name"],
        "definitions": {
            "Address": {"type": "object", "properties": {"city": {"type": "string"}}}
        }
    });
    let s = to_connect_schema(&JsonDataConfig::default(), &producer_schema, Some(3)).unwrap();
    assert_eq!(s.name.as_deref(), Some("Person"));
    assert_eq!(s.version, Some(3));
    let names: Vec<&str> = s.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "age", "score", "email", "kind", "address"]);
    let ty = |n: &str| s.field(n).unwrap().schema.schema_type.name();
    assert_eq!(ty("age"), "int64");
    assert_eq!(ty("score"), "float64");
    assert!(s.field("email").unwrap().schema.optional);
    assert_eq!(ty("address"), "struct");
    let v = read_value(
        &JsonDataConfig::default(),
        Some(&s),
        Some(&json!({"name":"x","age":5,"score":1.5,"email":null,"kind":"b","address":{"city":"Y"},"extra":1})),
    )
    .unwrap();
    let Value::Struct(st) = v else { panic!() };
    assert_eq!(st.get("age"), Some(&Value::Int64(5)));
    assert_eq!(st.get("kind"), Some(&Value::String("b".into())));
    // Schemas allowing anything and references elsewhere are refused, not guessed.
    assert!(to_connect_schema(&JsonDataConfig::default(), &json!({}), None).is_err());
    assert!(to_connect_schema(
        &JsonDataConfig::default(),
        &json!({"$ref": "other.json#/x"}),
        None
    )
    .is_err());
}

#[test]
fn bad_values_are_data_errors() {
    let schema = order_schema();
    for bad in [
        json!("text"),
        json!({"id": "seven"}),
        json!({"id": 1, "raw": "!!"}),
    ] {
        assert!(
            read_value(&JsonDataConfig::default(), Some(&schema), Some(&bad)).is_err(),
            "{bad}"
        );
    }
}
