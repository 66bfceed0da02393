//! The Connect ↔ Protobuf mapping, without a registry: schema texts as Confluent's
//! `ProtobufData.fromConnectSchema` + `ProtobufSchema.toString` write them, values written and
//! read back, bytes checked against `prost-reflect` decoding the same descriptor, and bad
//! input refused with errors.

use num_bigint::BigInt;
use prost_reflect::{DynamicMessage, ReflectMessage, Value as PValue};
use tributary_api::data::{
    Date, Decimal, Schema, SchemaBuilder, SchemaRef, Struct, Time, Timestamp, Value,
};
use tributary_api::Props;
use tributary_registry::converter::Format;
use tributary_registry::protobuf::schema::from_connect_schema;
use tributary_registry::protobuf::{read_indexes, write_indexes, ProtobufFormat, ProtobufSchema};

fn format() -> ProtobufFormat {
    ProtobufFormat::configure(&Props::new()).unwrap()
}

/// Reads a record's data after the schema id: its message indexes, then the message.
fn decode_all(
    f: &ProtobufFormat,
    parsed: &ProtobufSchema,
    schema: &SchemaRef,
    bytes: &[u8],
) -> tributary_api::ConnectResult<Value> {
    let (indexes, body) = ProtobufFormat::select(bytes)?;
    f.decode(parsed, &indexes, schema, body)
}

fn order_schema() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("com.example.Order")
        .field("id", Schema::int32_schema())
        .unwrap()
        .field("note", Schema::optional_string_schema())
        .unwrap()
        .field(
            "tags",
            SchemaBuilder::array(Schema::string_schema()).build(),
        )
        .unwrap()
        .field(
            "counts",
            SchemaBuilder::map(Schema::string_schema(), Schema::int64_schema()).build(),
        )
        .unwrap()
        .field(
            "item",
            SchemaBuilder::struct_()
                .name("com.example.Item")
                .field("sku", Schema::string_schema())
                .unwrap()
                .field("qty", Schema::int16_schema())
                .unwrap()
                .build(),
        )
        .unwrap()
        .field("price", Decimal::schema(2))
        .unwrap()
        .field("day", Date::schema())
        .unwrap()
        .field("time", Time::schema())
        .unwrap()
        .field("at", Timestamp::schema())
        .unwrap()
        .field("raw", Schema::optional_bytes_schema())
        .unwrap()
        .field("ok", Schema::boolean_schema())
        .unwrap()
        .field("ratio", Schema::float64_schema())
        .unwrap()
        .build()
}

fn order_value(schema: &SchemaRef) -> Value {
    let item_schema = schema.field("item").unwrap().schema.clone();
    Value::Struct(
        Struct::new(schema.clone())
            .unwrap()
            .put("id", Value::Int32(42))
            .unwrap()
            .put("note", Value::String("first".into()))
            .unwrap()
            .put(
                "tags",
                Value::Array(vec![Value::String("a".into()), Value::String("b".into())]),
            )
            .unwrap()
            .put(
                "counts",
                Value::Map(vec![(Value::String("x".into()), Value::Int64(-7))]),
            )
            .unwrap()
            .put(
                "item",
                Value::Struct(
                    Struct::new(item_schema)
                        .unwrap()
                        .put("sku", Value::String("S-1".into()))
                        .unwrap()
                        .put("qty", Value::Int16(-3))
                        .unwrap(),
                ),
            )
            .unwrap()
            .put(
                "price",
                Value::Decimal(Decimal::new(BigInt::from(-12345), 2)),
            )
            .unwrap()
            .put("day", Value::Date(19_000))
            .unwrap()
            .put("time", Value::Time(45_296_789))
            .unwrap()
            .put("at", Value::Timestamp(-1_500))
            .unwrap()
            .put("ok", Value::Boolean(true))
            .unwrap()
            .put("ratio", Value::Float64(0.25))
            .unwrap(),
    )
}

const ORDER_TEXT: &str = r#"syntax = "proto3";
package com.example;

import "confluent/type/decimal.proto";
import "google/type/date.proto";
import "google/type/timeofday.proto";
import "google/protobuf/timestamp.proto";

message Order {
  int32 id = 1;
  string note = 2;
  repeated string tags = 3;
  repeated ConnectDefault1Entry counts = 4;
  Item item = 5;
  confluent.type.Decimal price = 6 [(confluent.field_meta) = {
    params: [
      {
        value: "2",
        key: "scale"
      }
    ]
  }];
  google.type.Date day = 7;
  google.type.TimeOfDay time = 8;
  google.protobuf.Timestamp at = 9;
  bytes raw = 10;
  bool ok = 11;
  double ratio = 12;

  message ConnectDefault1Entry {
    string key = 1;
    int64 value = 2;
  }
  message Item {
    string sku = 1;
    int32 qty = 2 [(confluent.field_meta) = {
      params: [
        {
          key: "connect.type",
          value: "int16"
        }
      ]
    }];
  }
}
"#;

#[test]
fn struct_schema_text_is_confluents() {
    let text = from_connect_schema(&order_schema()).unwrap();
    assert_eq!(text, ORDER_TEXT, "{text}");
    let parsed = ProtobufSchema::parse(&text).unwrap();
    assert_eq!(parsed.root.full_name(), "com.example.Order");
}

#[test]
fn unnamed_struct_tags_and_primitives() {
    let schema = SchemaBuilder::struct_()
        .field(
            "b",
            SchemaBuilder::string()
                .parameter("io.confluent.connect.protobuf.Tag", "7")
                .build(),
        )
        .unwrap()
        .field("c", Schema::int8_schema())
        .unwrap()
        .build();
    let text = from_connect_schema(&schema).unwrap();
    assert!(text.starts_with("syntax = \"proto3\";\n\nmessage ConnectDefault1 {\n  string b = 7;\n  int32 c = 1 [(confluent.field_meta) = {\n"), "{text}");
    let parsed = ProtobufSchema::parse(&text).unwrap();
    let back = format().to_connect_schema(&parsed, &vec![0], None).unwrap();
    assert_eq!(back.name.as_deref(), Some("ConnectDefault1"));
    assert_eq!(
        back.field("c").unwrap().schema.schema_type,
        Schema::int8_schema().schema_type
    );

    let text = from_connect_schema(&Schema::string_schema()).unwrap();
    assert_eq!(
        text,
        "syntax = \"proto3\";\npackage google.protobuf;\n\nmessage StringValue {\n  string value = 1;\n}\n"
    );
    assert!(from_connect_schema(&SchemaBuilder::array(Schema::string_schema()).build()).is_err());
}

fn round_trip(schema: &SchemaRef, value: &Value) -> (Vec<u8>, SchemaRef, Value) {
    let f = format();
    let text = f.schema_text(schema).unwrap();
    let parsed = f.parse(&text, &[]).unwrap();
    let mut out = Vec::new();
    f.encode(&parsed, schema, value, &mut out).unwrap();
    let connect = f.to_connect_schema(&parsed, &vec![0], Some(3)).unwrap();
    let back = decode_all(&f, &parsed, &connect, &out).unwrap();
    (out, connect, back)
}

#[test]
fn values_round_trip_and_match_prost_reflect() {
    let schema = order_schema();
    let value = order_value(&schema);
    let (bytes, connect, back) = round_trip(&schema, &value);
    assert_eq!(bytes[0], 0, "message indexes [0]");
    assert_eq!(connect.version, Some(3));
    assert_eq!(connect.name.as_deref(), Some("Order"));
    let Value::Struct(s) = &back else { panic!() };
    assert_eq!(s.get("id"), Some(&Value::Int32(42)));
    assert_eq!(s.get("note"), Some(&Value::String("first".into())));
    assert_eq!(
        s.get("tags"),
        Some(&Value::Array(vec![
            Value::String("a".into()),
            Value::String("b".into())
        ]))
    );
    assert_eq!(
        s.get("counts"),
        Some(&Value::Map(vec![(
            Value::String("x".into()),
            Value::Int64(-7)
        )]))
    );
    let Some(Value::Struct(item)) = s.get("item") else {
        panic!()
    };
    assert_eq!(item.get("qty"), Some(&Value::Int16(-3)));
    assert_eq!(
        s.get("price"),
        Some(&Value::Decimal(Decimal::new(BigInt::from(-12345), 2)))
    );
    assert_eq!(s.get("day"), Some(&Value::Date(19_000)));
    assert_eq!(s.get("time"), Some(&Value::Time(45_296_789)));
    assert_eq!(s.get("at"), Some(&Value::Timestamp(-1_500)));
    // proto3 bytes without presence read as empty, as Confluent reads them.
    assert_eq!(s.get("raw"), Some(&Value::Bytes(Vec::new())));
    assert_eq!(s.get("ok"), Some(&Value::Boolean(true)));
    assert_eq!(s.get("ratio"), Some(&Value::Float64(0.25)));

    // The same bytes, decoded by prost-reflect with the compiled descriptor.
    let parsed = ProtobufSchema::parse(ORDER_TEXT).unwrap();
    let message = DynamicMessage::decode(parsed.root.clone(), &bytes[1..]).unwrap();
    let field = |name: &str| message.get_field_by_name(name).unwrap().into_owned();
    assert_eq!(field("id"), PValue::I32(42));
    assert_eq!(field("note"), PValue::String("first".into()));
    let PValue::Message(day) = field("day") else {
        panic!()
    };
    assert_eq!(day.get_field_by_name("year").unwrap().as_i32(), Some(2022));
    assert_eq!(day.get_field_by_name("month").unwrap().as_i32(), Some(1));
    assert_eq!(day.get_field_by_name("day").unwrap().as_i32(), Some(8));
    let PValue::Message(at) = field("at") else {
        panic!()
    };
    assert_eq!(at.descriptor().full_name(), "google.protobuf.Timestamp");
    assert_eq!(at.get_field_by_name("seconds").unwrap().as_i64(), Some(-2));
    assert_eq!(
        at.get_field_by_name("nanos").unwrap().as_i32(),
        Some(500_000_000)
    );
    let PValue::Message(price) = field("price") else {
        panic!()
    };
    assert_eq!(
        price
            .get_field_by_name("value")
            .unwrap()
            .as_bytes()
            .unwrap()
            .as_ref(),
        BigInt::from(-12345).to_signed_bytes_be().as_slice()
    );
    assert_eq!(price.get_field_by_name("scale").unwrap().as_i32(), Some(2));
    assert_eq!(
        price.get_field_by_name("precision").unwrap().as_u32(),
        Some(5)
    );
}

#[test]
fn top_level_primitive_round_trips() {
    let (bytes, connect, back) =
        round_trip(&Schema::string_schema(), &Value::String("line".into()));
    assert_eq!(bytes, [0, 10, 4, b'l', b'i', b'n', b'e']);
    assert_eq!(connect.schema_type, Schema::string_schema().schema_type);
    assert_eq!(back, Value::String("line".into()));
    let (_, _, back) = round_trip(&Schema::int64_schema(), &Value::Int64(-5));
    assert_eq!(back, Value::Int64(-5));
}

#[test]
fn proto3_features_read_as_confluent_maps_them() {
    let text = r#"syntax = "proto3";
package acme;
import "google/protobuf/wrappers.proto";
message Event {
  oneof payload {
    string text = 1;
    int64 number = 2;
  }
  Kind kind = 3;
  map<string, int32> counts = 4;
  sint32 delta = 5;
  uint32 size = 6;
  google.protobuf.StringValue label = 7;
  optional string maybe = 8;
  enum Kind {
    UNKNOWN = 0;
    BIG = 1;
  }
}
"#;
    let f = format();
    let parsed = f.parse(text, &[]).unwrap();
    assert_eq!(ProtobufFormat::record_name(&parsed), "acme.Event");
    let schema = f.to_connect_schema(&parsed, &vec![0], None).unwrap();
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "payload_0",
            "kind",
            "counts",
            "delta",
            "size",
            "label",
            "maybe"
        ]
    );
    let union = &schema.field("payload_0").unwrap().schema;
    assert_eq!(
        union.name.as_deref(),
        Some("io.confluent.connect.protobuf.Union.payload")
    );
    let kind = &schema.field("kind").unwrap().schema;
    assert_eq!(kind.name.as_deref(), Some("Kind"));
    let p = kind.parameters.as_ref().unwrap();
    assert_eq!(
        p.get("io.confluent.connect.protobuf.Enum.BIG")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        schema
            .field("delta")
            .unwrap()
            .schema
            .parameters
            .as_ref()
            .unwrap()
            .get("io.confluent.connect.protobuf.Type")
            .map(String::as_str),
        Some("sint32")
    );
    assert_eq!(
        schema.field("counts").unwrap().schema.name.as_deref(),
        Some("counts")
    );

    // A message written by prost-reflect reads back.
    let mut m = DynamicMessage::new(parsed.root.clone());
    m.set_field_by_name("number", PValue::I64(9));
    m.set_field_by_name("kind", PValue::EnumNumber(1));
    m.set_field_by_name("delta", PValue::I32(-4));
    m.set_field_by_name("size", PValue::U32(4_000_000_000));
    let mut bytes = vec![0];
    prost_reflect::prost::Message::encode(&m, &mut bytes).unwrap();
    let value = decode_all(&f, &parsed, &schema, &bytes).unwrap();
    let Value::Struct(s) = &value else { panic!() };
    let Some(Value::Struct(u)) = s.get("payload_0") else {
        panic!("{value:?}")
    };
    assert_eq!(u.get("number"), Some(&Value::Int64(9)));
    assert_eq!(u.get("text"), Some(&Value::Null));
    assert_eq!(s.get("kind"), Some(&Value::String("BIG".into())));
    assert_eq!(s.get("delta"), Some(&Value::Int32(-4)));
    assert_eq!(s.get("size"), Some(&Value::Int64(4_000_000_000)));
    assert_eq!(s.get("label"), Some(&Value::Null));
    assert_eq!(s.get("maybe"), Some(&Value::Null));

    // And writes back to the same bytes.
    let mut again = Vec::new();
    f.encode(&parsed, &schema, &value, &mut again).unwrap();
    assert_eq!(
        DynamicMessage::decode(parsed.root.clone(), &again[1..]).unwrap(),
        m
    );
}

#[test]
fn message_indexes_follow_confluent() {
    let mut out = Vec::new();
    write_indexes(&[0], &mut out);
    assert_eq!(out, [0]);
    out.clear();
    write_indexes(&[1, 2], &mut out);
    assert_eq!(out, [4, 2, 4]);
    assert_eq!(
        read_indexes(&[4, 2, 4, 9]).unwrap(),
        (vec![1, 2], &[9u8][..])
    );
    assert_eq!(read_indexes(&[0, 7]).unwrap(), (vec![0], &[7u8][..]));
    assert!(read_indexes(&[]).is_err());
    assert!(read_indexes(&[4, 2]).is_err());
    assert!(read_indexes(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80]).is_err());
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let f = format();
    let parsed = f.parse(ORDER_TEXT, &[]).unwrap();
    let schema = f.to_connect_schema(&parsed, &vec![0], None).unwrap();
    for bytes in [
        &[][..],
        &[0, 0xff, 0xff][..],
        &[0, 10, 200][..],
        &[2, 8][..],
        &[0, 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f][..],
    ] {
        assert!(
            decode_all(&f, &parsed, &schema, bytes).is_err(),
            "{bytes:?}"
        );
    }
    assert!(f.parse("syntax = \"proto3\"; message {", &[]).is_err());
    let err = f
        .parse(
            "syntax = \"proto3\";\nimport \"other/thing.proto\";\nmessage A { other.T t = 1; }\n",
            &[],
        )
        .unwrap_err()
        .to_string();
    assert!(err.contains("other/thing.proto"), "{err}");
    // A value of the wrong type.
    let order = order_schema();
    let wrong = Value::Struct(
        Struct::new(order.clone())
            .unwrap()
            .put("id", Value::Int32(1))
            .unwrap(),
    );
    let mut out = Vec::new();
    assert!(f
        .encode(&parsed, &order, &Value::String("x".into()), &mut out)
        .is_err());
    assert!(f.encode(&parsed, &order, &wrong, &mut out).is_ok());
}

#[test]
fn unimplemented_settings_are_refused_naming_the_key() {
    let mut props = Props::new();
    props.insert("optional.for.nullables".into(), "true".into());
    let err = ProtobufFormat::configure(&props).err().unwrap().to_string();
    assert!(err.contains("optional.for.nullables"), "{err}");
    let mut props = Props::new();
    props.insert("wrapper.for.raw.primitives".into(), "true".into());
    props.insert("flatten.unions".into(), "false".into());
    assert!(ProtobufFormat::configure(&props).is_ok());
}

/// A file of several messages, as Confluent's serializer registers it for a generated class:
/// each record's message indexes name its message, which is read with its own Connect schema
/// and looked up under its own name.
#[test]
fn message_indexes_select_the_message_of_a_file_with_several() {
    let text = "syntax = \"proto3\";\npackage shop;\n\nmessage Customer {\n  string name = 1;\n}\nmessage Order {\n  int64 id = 1;\n  message Line {\n    string sku = 1;\n  }\n  repeated Line lines = 2;\n}\n";
    let f = format();
    let parsed = f.parse(text, &[]).unwrap();
    let order = parsed.selected(&[1]).unwrap();
    assert_eq!(
        ProtobufFormat::selected_name(&parsed, &vec![1]).unwrap(),
        "shop.Order"
    );
    assert_eq!(
        ProtobufFormat::selected_name(&parsed, &vec![1, 0]).unwrap(),
        "shop.Order.Line"
    );
    let mut message = DynamicMessage::new(order.clone());
    message.set_field_by_name("id", PValue::I64(42));
    let mut line = DynamicMessage::new(parsed.selected(&[1, 0]).unwrap());
    line.set_field_by_name("sku", PValue::String("A-1".into()));
    message.set_field_by_name("lines", PValue::List(vec![PValue::Message(line)]));
    let mut bytes = Vec::new();
    write_indexes(&[1], &mut bytes);
    prost_reflect::prost::Message::encode(&message, &mut bytes).unwrap();
    let (indexes, _) = ProtobufFormat::select(&bytes).unwrap();
    assert_eq!(indexes, vec![1]);
    let connect = f.to_connect_schema(&parsed, &indexes, None).unwrap();
    assert_eq!(connect.name.as_deref(), Some("Order"));
    let Value::Struct(v) = decode_all(&f, &parsed, &connect, &bytes).unwrap() else {
        panic!("not a struct");
    };
    assert_eq!(v.get("id"), Some(&Value::Int64(42)));
    let Some(Value::Array(lines)) = v.get("lines") else {
        panic!("no lines");
    };
    let Value::Struct(l) = &lines[0] else {
        panic!("line not a struct")
    };
    assert_eq!(l.get("sku"), Some(&Value::String("A-1".into())));
    // Indexes that name no message are an error.
    let mut bad = Vec::new();
    write_indexes(&[5], &mut bad);
    let (indexes, _) = ProtobufFormat::select(&bad).unwrap();
    assert!(f.to_connect_schema(&parsed, &indexes, None).is_err());
}
