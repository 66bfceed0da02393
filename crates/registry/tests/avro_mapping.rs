//! The Connect ↔ Avro mapping and the binary codec, without a registry: schema texts as
//! Confluent's `AvroData` writes them, and bytes checked against the `apache-avro` crate's
//! reader and writer (an independent implementation of the specification).

use std::sync::Arc;

use apache_avro::types::Value as AValue;
use num_bigint::BigInt;
use proptest::prelude::*;
use tributary_api::data::{
    Date, Decimal, Schema, SchemaBuilder, SchemaRef, Struct, Time, Timestamp, Value,
};
use tributary_registry::avro::data::{decode, encode};
use tributary_registry::avro::schema::{
    from_connect_schema, to_connect_schema, AvroDataConfig, AvroSchema,
};

fn avro_text(schema: &Schema) -> String {
    from_connect_schema(&AvroDataConfig::default(), schema).unwrap()
}

fn encode_bytes(schema: &SchemaRef, value: &Value) -> (String, Vec<u8>) {
    let text = avro_text(schema);
    let avro = AvroSchema::parse(&text, &[]).unwrap();
    let mut out = Vec::new();
    encode(&avro, schema, value, &mut out).unwrap();
    (text, out)
}

/// Our bytes read by apache-avro.
fn read_with_apache(text: &str, bytes: &[u8]) -> AValue {
    let schema = apache_avro::Schema::parse_str(text).unwrap();
    let mut input = bytes;
    let v = apache_avro::from_avro_datum(&schema, &mut input, None).unwrap();
    assert!(input.is_empty(), "apache-avro left bytes unread");
    v
}

/// Round trip: our bytes decode (with the Connect schema read back from the Avro text) to
/// the value written.
fn round_trip(schema: &SchemaRef, value: &Value) -> Value {
    let (text, bytes) = encode_bytes(schema, value);
    let avro = AvroSchema::parse(&text, &[]).unwrap();
    let connect = to_connect_schema(&AvroDataConfig::default(), &avro, None).unwrap();
    decode(&avro, &connect, &bytes).unwrap()
}

#[test]
fn primitive_and_logical_schemas_are_written_as_confluents_avro_data_writes_them() {
    assert_eq!(avro_text(&Schema::string_schema()), r#""string""#);
    assert_eq!(
        avro_text(&Schema::optional_string_schema()),
        r#"["null","string"]"#
    );
    assert_eq!(avro_text(&Schema::int64_schema()), r#""long""#);
    assert_eq!(
        avro_text(&Schema::int8_schema()),
        r#"{"type":"int","connect.type":"int8"}"#
    );
    assert_eq!(
        avro_text(&Schema::optional_int16_schema()),
        r#"["null",{"type":"int","connect.type":"int16"}]"#
    );
    // The texts Confluent's converter registers for Connect's logical types (as seen in
    // registries fed by Debezium).
    assert_eq!(
        avro_text(&Decimal::schema(2)),
        r#"{"type":"bytes","scale":2,"precision":64,"connect.version":1,"connect.parameters":{"scale":"2"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}"#
    );
    assert_eq!(
        avro_text(&Timestamp::schema()),
        r#"{"type":"long","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Timestamp","logicalType":"timestamp-millis"}"#
    );
    assert_eq!(
        avro_text(&Date::schema()),
        r#"{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Date","logicalType":"date"}"#
    );
    assert_eq!(
        avro_text(&Time::schema()),
        r#"{"type":"int","connect.version":1,"connect.name":"org.apache.kafka.connect.data.Time","logicalType":"time-millis"}"#
    );
    let precise = Decimal::builder(3)
        .parameter("connect.decimal.precision", "10")
        .build();
    assert_eq!(
        avro_text(&precise),
        r#"{"type":"bytes","scale":3,"precision":10,"connect.version":1,"connect.parameters":{"scale":"3","connect.decimal.precision":"10"},"connect.name":"org.apache.kafka.connect.data.Decimal","logicalType":"decimal"}"#
    );
}

fn customer_schema() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("dbserver1.inventory.customers.Value")
        .field("id", Schema::int32_schema())
        .unwrap()
        .field("first_name", Schema::string_schema())
        .unwrap()
        .field("email", Schema::optional_string_schema())
        .unwrap()
        .build()
}

#[test]
fn structs_become_records_with_null_defaults_for_optional_fields() {
    assert_eq!(
        avro_text(&customer_schema()),
        r#"{"type":"record","name":"Value","namespace":"dbserver1.inventory.customers","fields":[{"name":"id","type":"int"},{"name":"first_name","type":"string"},{"name":"email","type":["null","string"],"default":null}],"connect.name":"dbserver1.inventory.customers.Value"}"#
    );
}

#[test]
fn unnamed_structs_are_numbered_and_an_equal_struct_is_referenced_by_name() {
    let inner = SchemaBuilder::struct_()
        .field("x", Schema::int32_schema())
        .unwrap()
        .build();
    let outer = SchemaBuilder::struct_()
        .field("a", inner.clone())
        .unwrap()
        .field("b", inner)
        .unwrap()
        .field(
            "c",
            SchemaBuilder::struct_()
                .field("y", Schema::string_schema())
                .unwrap()
                .optional()
                .build(),
        )
        .unwrap()
        .build();
    assert_eq!(
        avro_text(&outer),
        concat!(
            r#"{"type":"record","name":"ConnectDefault","namespace":"io.confluent.connect.avro","fields":["#,
            r#"{"name":"a","type":{"type":"record","name":"ConnectDefault2","fields":[{"name":"x","type":"int"}]}},"#,
            r#"{"name":"b","type":"ConnectDefault2"},"#,
            r#"{"name":"c","type":["null",{"type":"record","name":"ConnectDefault3","fields":[{"name":"y","type":"string"}]}],"default":null}]}"#
        )
    );
}

#[test]
fn defaults_docs_and_versions_are_kept_as_connect_properties() {
    let schema = SchemaBuilder::struct_()
        .name("com.example.Order")
        .version(3)
        .doc("an order")
        .field(
            "qty",
            SchemaBuilder::int32()
                .default_value(Value::Int32(1))
                .unwrap()
                .build(),
        )
        .unwrap()
        .field(
            "note",
            SchemaBuilder::string()
                .optional()
                .default_value(Value::String("none".into()))
                .unwrap()
                .build(),
        )
        .unwrap()
        .build();
    let text = avro_text(&schema);
    assert_eq!(
        text,
        r#"{"type":"record","name":"Order","namespace":"com.example","fields":[{"name":"qty","type":{"type":"int","connect.default":1},"default":1},{"name":"note","type":[{"type":"string","connect.default":"none"},"null"],"default":"none"}],"connect.doc":"an order","connect.version":3,"connect.name":"com.example.Order"}"#
    );
    // And back: the same Connect schema (plus nothing Connect would not have).
    let avro = AvroSchema::parse(&text, &[]).unwrap();
    let back = to_connect_schema(&AvroDataConfig::default(), &avro, None).unwrap();
    assert_eq!(back.name.as_deref(), Some("com.example.Order"));
    assert_eq!(back.version, Some(3));
    assert_eq!(back.doc.as_deref(), Some("an order"));
    assert_eq!(back.fields[0].schema.default_value, Some(Value::Int32(1)));
    assert!(back.fields[1].schema.optional);
    assert_eq!(
        back.fields[1].schema.default_value,
        Some(Value::String("none".into()))
    );
}

#[test]
fn the_registry_version_names_the_top_schema_unless_connect_version_is_set() {
    let avro = AvroSchema::parse(&avro_text(&customer_schema()), &[]).unwrap();
    let read = to_connect_schema(&AvroDataConfig::default(), &avro, Some(7)).unwrap();
    assert_eq!(read.version, Some(7));
    assert_eq!(read.fields[1].schema.version, None);
}

fn all_types_schema() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("t.All")
        .field("i8", Schema::int8_schema())
        .unwrap()
        .field("i16", Schema::int16_schema())
        .unwrap()
        .field("i32", Schema::int32_schema())
        .unwrap()
        .field("i64", Schema::int64_schema())
        .unwrap()
        .field("f32", Schema::float32_schema())
        .unwrap()
        .field("f64", Schema::float64_schema())
        .unwrap()
        .field("b", Schema::boolean_schema())
        .unwrap()
        .field("s", Schema::string_schema())
        .unwrap()
        .field("bytes", Schema::bytes_schema())
        .unwrap()
        .field("dec", Decimal::schema(2))
        .unwrap()
        .field("date", Date::schema())
        .unwrap()
        .field("time", Time::schema())
        .unwrap()
        .field("ts", Timestamp::schema())
        .unwrap()
        .field("arr", SchemaBuilder::array(Schema::string_schema()).build())
        .unwrap()
        .field(
            "smap",
            SchemaBuilder::map(Schema::string_schema(), Schema::int64_schema()).build(),
        )
        .unwrap()
        .field(
            "imap",
            SchemaBuilder::map(Schema::int32_schema(), Schema::string_schema()).build(),
        )
        .unwrap()
        .field("opt", Schema::optional_int64_schema())
        .unwrap()
        .build()
}

fn all_types_value(schema: &SchemaRef, opt: Option<i64>) -> Value {
    Value::Struct(
        Struct::new(schema.clone())
            .unwrap()
            .put("i8", Value::Int8(-5))
            .unwrap()
            .put("i16", Value::Int16(300))
            .unwrap()
            .put("i32", Value::Int32(-70000))
            .unwrap()
            .put("i64", Value::Int64(1 << 40))
            .unwrap()
            .put("f32", Value::Float32(1.5))
            .unwrap()
            .put("f64", Value::Float64(-2.25))
            .unwrap()
            .put("b", Value::Boolean(true))
            .unwrap()
            .put("s", Value::String("héllo".into()))
            .unwrap()
            .put("bytes", Value::Bytes(vec![0, 255, 7]))
            .unwrap()
            .put("dec", Value::Decimal(Decimal::new(BigInt::from(-12345), 2)))
            .unwrap()
            .put("date", Value::Date(19000))
            .unwrap()
            .put("time", Value::Time(3_600_000))
            .unwrap()
            .put("ts", Value::Timestamp(1_700_000_000_123))
            .unwrap()
            .put(
                "arr",
                Value::Array(vec![Value::String("a".into()), Value::String("b".into())]),
            )
            .unwrap()
            .put(
                "smap",
                Value::Map(vec![(Value::String("k".into()), Value::Int64(9))]),
            )
            .unwrap()
            .put(
                "imap",
                Value::Map(vec![(Value::Int32(4), Value::String("four".into()))]),
            )
            .unwrap()
            .put("opt", opt.map(Value::Int64).unwrap_or(Value::Null))
            .unwrap(),
    )
}

#[test]
fn every_connect_type_is_written_as_apache_avro_reads_it() {
    let schema = all_types_schema();
    let (text, bytes) = encode_bytes(&schema, &all_types_value(&schema, Some(42)));
    let AValue::Record(fields) = read_with_apache(&text, &bytes) else {
        panic!("not a record");
    };
    let get = |n: &str| fields.iter().find(|(k, _)| k == n).unwrap().1.clone();
    assert_eq!(get("i8"), AValue::Int(-5));
    assert_eq!(get("i16"), AValue::Int(300));
    assert_eq!(get("i32"), AValue::Int(-70000));
    assert_eq!(get("i64"), AValue::Long(1 << 40));
    assert_eq!(get("f32"), AValue::Float(1.5));
    assert_eq!(get("f64"), AValue::Double(-2.25));
    assert_eq!(get("b"), AValue::Boolean(true));
    assert_eq!(get("s"), AValue::String("héllo".into()));
    assert_eq!(get("bytes"), AValue::Bytes(vec![0, 255, 7]));
    assert_eq!(
        get("dec"),
        AValue::Decimal(apache_avro::Decimal::from(
            BigInt::from(-12345).to_signed_bytes_be()
        ))
    );
    assert_eq!(get("date"), AValue::Date(19000));
    assert_eq!(get("time"), AValue::TimeMillis(3_600_000));
    assert_eq!(get("ts"), AValue::TimestampMillis(1_700_000_000_123));
    assert_eq!(
        get("arr"),
        AValue::Array(vec![AValue::String("a".into()), AValue::String("b".into())])
    );
    assert_eq!(
        get("smap"),
        AValue::Map([("k".to_string(), AValue::Long(9))].into_iter().collect())
    );
    assert_eq!(
        get("imap"),
        AValue::Array(vec![AValue::Record(vec![
            ("key".into(), AValue::Int(4)),
            ("value".into(), AValue::String("four".into())),
        ])])
    );
    assert_eq!(get("opt"), AValue::Union(1, Box::new(AValue::Long(42))));
}

#[test]
fn every_connect_type_round_trips() {
    let schema = all_types_schema();
    for opt in [Some(42), None] {
        let value = all_types_value(&schema, opt);
        let back = round_trip(&schema, &value);
        let (Value::Struct(a), Value::Struct(b)) = (&value, &back) else {
            panic!("not structs");
        };
        for f in &schema.fields {
            assert_eq!(a.get(&f.name), b.get(&f.name), "field {}", f.name);
        }
        // The schema read back is the schema written.
        assert_eq!(b.schema().as_ref(), schema.as_ref());
    }
}

#[test]
fn bytes_apache_avro_writes_are_read() {
    let text = r#"{"type":"record","name":"R","namespace":"n","fields":[
        {"name":"id","type":"long"},
        {"name":"tags","type":{"type":"array","items":"string"}},
        {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
        {"name":"hash","type":{"type":"fixed","name":"H","size":2}},
        {"name":"u","type":["null","int","string"]}]}"#;
    let schema = apache_avro::Schema::parse_str(text).unwrap();
    let value = AValue::Record(vec![
        ("id".into(), AValue::Long(-3)),
        (
            "tags".into(),
            AValue::Array(vec![AValue::String("x".into())]),
        ),
        ("kind".into(), AValue::Enum(1, "B".into())),
        ("hash".into(), AValue::Fixed(2, vec![1, 2])),
        (
            "u".into(),
            AValue::Union(2, Box::new(AValue::String("s".into()))),
        ),
    ]);
    let bytes = apache_avro::to_avro_datum(&schema, value).unwrap();
    let avro = AvroSchema::parse(text, &[]).unwrap();
    let connect = to_connect_schema(&AvroDataConfig::default(), &avro, Some(1)).unwrap();
    assert_eq!(connect.name.as_deref(), Some("n.R"));
    let Value::Struct(s) = decode(&avro, &connect, &bytes).unwrap() else {
        panic!("not a struct");
    };
    assert_eq!(s.get("id"), Some(&Value::Int64(-3)));
    assert_eq!(
        s.get("tags"),
        Some(&Value::Array(vec![Value::String("x".into())]))
    );
    assert_eq!(s.get("kind"), Some(&Value::String("B".into())));
    let kind_schema = &connect.field("kind").unwrap().schema;
    assert_eq!(
        kind_schema
            .parameters
            .as_ref()
            .unwrap()
            .get("io.confluent.connect.avro.Enum")
            .map(String::as_str),
        Some("n.Kind")
    );
    assert_eq!(s.get("hash"), Some(&Value::Bytes(vec![1, 2])));
    // A union of more than null and one type: Connect's union struct, the branch's field set.
    let Some(Value::Struct(u)) = s.get("u") else {
        panic!("union not a struct");
    };
    assert_eq!(
        u.schema().name.as_deref(),
        Some("io.confluent.connect.avro.Union")
    );
    assert_eq!(u.get("string"), Some(&Value::String("s".into())));
    assert_eq!(u.get("int"), Some(&Value::Null));
    // Written back, the same bytes.
    let (_, ours) = {
        let mut out = Vec::new();
        encode(&avro, &connect, &Value::Struct(s), &mut out).unwrap();
        ((), out)
    };
    assert_eq!(ours, bytes);
}

#[test]
fn bad_data_is_a_data_error_not_a_panic() {
    let schema = customer_schema();
    let text = avro_text(&schema);
    let avro = AvroSchema::parse(&text, &[]).unwrap();
    let connect = to_connect_schema(&AvroDataConfig::default(), &avro, None).unwrap();
    for bytes in [&b""[..], &[2], &[2, 40], &[0xff; 12], &[2, 2, b'a', 4]] {
        assert!(decode(&avro, &connect, bytes).is_err(), "{bytes:?}");
    }
    // A value of the wrong type for its schema.
    let mut out = Vec::new();
    assert!(encode(&avro, &schema, &Value::String("x".into()), &mut out).is_err());
}

#[test]
fn invalid_names_are_refused_with_avros_message_unless_scrubbed() {
    let schema = SchemaBuilder::struct_()
        .name("my-server.public.t.Value")
        .field("a", Schema::int32_schema())
        .unwrap()
        .build();
    let err = from_connect_schema(&AvroDataConfig::default(), &schema).unwrap_err();
    assert_eq!(err.to_string(), "Illegal character in: my-server");
    let field = SchemaBuilder::struct_()
        .field("1st", Schema::int32_schema())
        .unwrap()
        .build();
    let err = from_connect_schema(&AvroDataConfig::default(), &field).unwrap_err();
    assert_eq!(err.to_string(), "Illegal initial character: 1st");
}

#[test]
fn invalid_names_are_scrubbed_when_asked() {
    let schema = SchemaBuilder::struct_()
        .name("my-server.public.2t")
        .field("a b", Schema::int32_schema())
        .unwrap()
        .build();
    let config = AvroDataConfig {
        scrub_invalid_names: true,
        ..AvroDataConfig::default()
    };
    let text = from_connect_schema(&config, &schema).unwrap();
    assert_eq!(
        text,
        r#"{"type":"record","name":"x2t","namespace":"my_server.public","fields":[{"name":"a_b","type":"int"}],"connect.name":"my-server.public.2t"}"#
    );
}

fn arb_leaf() -> impl Strategy<Value = (SchemaRef, BoxedStrategy<Value>)> {
    prop_oneof![
        Just((
            Schema::int8_schema(),
            any::<i8>().prop_map(Value::Int8).boxed()
        )),
        Just((
            Schema::int16_schema(),
            any::<i16>().prop_map(Value::Int16).boxed()
        )),
        Just((
            Schema::int32_schema(),
            any::<i32>().prop_map(Value::Int32).boxed()
        )),
        Just((
            Schema::int64_schema(),
            any::<i64>().prop_map(Value::Int64).boxed()
        )),
        Just((
            Schema::float64_schema(),
            any::<f64>()
                .prop_filter("nan", |f| !f.is_nan())
                .prop_map(Value::Float64)
                .boxed()
        )),
        Just((
            Schema::boolean_schema(),
            any::<bool>().prop_map(Value::Boolean).boxed()
        )),
        Just((
            Schema::string_schema(),
            ".{0,20}".prop_map(Value::String).boxed()
        )),
        Just((
            Schema::bytes_schema(),
            proptest::collection::vec(any::<u8>(), 0..20)
                .prop_map(Value::Bytes)
                .boxed()
        )),
        Just((
            Decimal::schema(3),
            any::<i64>()
                .prop_map(|u| Value::Decimal(Decimal::new(u, 3)))
                .boxed()
        )),
        Just((
            Timestamp::schema(),
            any::<i64>().prop_map(Value::Timestamp).boxed()
        )),
        Just((
            Schema::optional_string_schema(),
            proptest::option::of(".{0,5}")
                .prop_map(|o| o.map(Value::String).unwrap_or(Value::Null))
                .boxed()
        )),
    ]
}

proptest! {
    #[test]
    fn random_structs_round_trip_and_apache_avro_reads_them(
        leaves in proptest::collection::vec(arb_leaf(), 1..8),
        seed in any::<u64>(),
    ) {
        let mut b = SchemaBuilder::struct_().name("p.Rec");
        for (i, (s, _)) in leaves.iter().enumerate() {
            b = b.field(format!("f{i}"), s.clone()).unwrap();
        }
        let schema = b.build();
        let mut runner = proptest::test_runner::TestRunner::new_with_rng(
            proptest::test_runner::Config::default(),
            proptest::test_runner::TestRng::from_seed(
                proptest::test_runner::RngAlgorithm::ChaCha,
                &{ let mut k = [0u8; 32]; k[..8].copy_from_slice(&seed.to_le_bytes()); k },
            ),
        );
        let mut st = Struct::new(schema.clone()).unwrap();
        for (i, (_, values)) in leaves.iter().enumerate() {
            let v = values.new_tree(&mut runner).unwrap().current();
            st = st.put(&format!("f{i}"), v).unwrap();
        }
        let value = Value::Struct(st);
        let (text, bytes) = encode_bytes(&schema, &value);
        read_with_apache(&text, &bytes);
        let back = round_trip(&schema, &value);
        prop_assert_eq!(back, value);
    }
}

#[test]
fn an_optional_schema_with_a_default_puts_its_type_first() {
    let schema: SchemaRef = Arc::new(
        SchemaBuilder::int32()
            .optional()
            .default_value(Value::Int32(5))
            .unwrap()
            .build()
            .as_ref()
            .clone(),
    );
    let (text, bytes) = encode_bytes(&schema, &Value::Int32(7));
    assert_eq!(text, r#"[{"type":"int","connect.default":5},"null"]"#);
    assert_eq!(bytes, [0, 14]);
    assert_eq!(
        read_with_apache(&text, &bytes),
        AValue::Union(0, Box::new(AValue::Int(7)))
    );
}

/// The keys of an Avro map datum of `int` values, in the order they are written.
fn map_keys_written(keys: &[String]) -> Vec<String> {
    let schema = SchemaBuilder::map(Schema::string_schema(), Schema::int32_schema()).build();
    let value = Value::Map(
        keys.iter()
            .enumerate()
            .map(|(i, k)| (Value::String(k.clone()), Value::Int32(i as i32)))
            .collect(),
    );
    let (text, bytes) = encode_bytes(&schema, &value);
    match read_with_apache(&text, &bytes) {
        AValue::Map(_) => {}
        other => panic!("not a map: {other:?}"),
    }
    // One block: count, then (length, key, int) per entry.
    fn long(input: &mut &[u8]) -> i64 {
        let (mut n, mut shift) = (0u64, 0);
        loop {
            let b = input[0];
            *input = &input[1..];
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return ((n >> 1) as i64) ^ -((n & 1) as i64);
            }
            shift += 7;
        }
    }
    let mut input = &bytes[..];
    let count = long(&mut input);
    let mut out = Vec::new();
    for _ in 0..count {
        let len = long(&mut input) as usize;
        out.push(String::from_utf8(input[..len].to_vec()).unwrap());
        input = &input[len..];
        long(&mut input);
    }
    out
}

#[test]
fn string_keyed_maps_are_written_in_the_order_javas_hash_map_iterates_them() {
    // Confluent's AvroData copies a map into a java.util.HashMap before Avro writes it; the
    // expected orders are what `new HashMap<>()` filled in this order iterates (Java 17).
    let keys = ["x", "y", "alpha", "beta", "gamma"].map(String::from);
    assert_eq!(
        map_keys_written(&keys),
        ["alpha", "x", "y", "beta", "gamma"]
    );
    // 30 keys, 10 of which share a bin: the table grows to 64 bins and that bin becomes a
    // red-black tree, whose list starts with the tree's root.
    let keys: Vec<String> = (0..30u8)
        .map(|i| format!("key-{}{i}", char::from(b'z' - i % 26)))
        .collect();
    let java = "key-z26 key-y27 key-x28 key-w29 key-q9 key-s7 key-u5 key-w3 key-y1 key-f20 \
                key-e21 key-d22 key-c23 key-b24 key-a25 key-r8 key-t6 key-v4 key-m13 key-p10 \
                key-o11 key-n12 key-l14 key-k15 key-j16 key-i17 key-h18 key-g19 key-x2 key-z0";
    assert_eq!(
        map_keys_written(&keys),
        java.split_whitespace().collect::<Vec<_>>()
    );
}

#[test]
fn texts_are_javas_for_float_defaults_control_characters_and_union_branch_defaults() {
    // The texts Java's AvroData and Avro's Schema.toString() write for the same schemas
    // (crates/registry/tests/avro_vectors.rs checks these and more live against Java).
    let double = SchemaBuilder::float64()
        .default_value(Value::Float64(1e10))
        .unwrap()
        .build();
    assert_eq!(
        avro_text(&double),
        r#"{"type":"double","connect.default":1.0E10}"#
    );
    let string = SchemaBuilder::string()
        .optional()
        .doc("tab\there \u{1b}")
        .default_value(Value::String("\u{1f}\u{b}\u{2028}😀".into()))
        .unwrap()
        .build();
    assert_eq!(
        avro_text(&string),
        "[{\"type\":\"string\",\"connect.doc\":\"tab\\there \\u001B\",\"connect.default\":\"\\u001F\\u000B\u{2028}😀\"},\"null\"]"
    );
    // AvroData.nonOptional keeps a union branch's default.
    let union = SchemaBuilder::struct_()
        .name("io.confluent.connect.avro.Union")
        .field(
            "int",
            SchemaBuilder::int32()
                .optional()
                .default_value(Value::Int32(5))
                .unwrap()
                .build(),
        )
        .unwrap()
        .field("string", Schema::optional_string_schema())
        .unwrap()
        .build();
    assert_eq!(
        avro_text(&union),
        r#"[{"type":"int","connect.default":5},"string"]"#
    );
}

#[test]
fn a_named_type_seen_before_carries_its_parameters_on_the_field_and_they_are_read_back() {
    // Confluent's addAvroRecordField / applyFieldLevelParams.
    let tagged = |color: &str| {
        SchemaBuilder::struct_()
            .name("com.example.Tagged")
            .parameter("color", color)
            .field("v", Schema::int32_schema())
            .unwrap()
            .build()
    };
    let schema = SchemaBuilder::struct_()
        .name("com.example.TaggedTwice")
        .field("a", tagged("red"))
        .unwrap()
        .field("b", tagged("blue"))
        .unwrap()
        .build();
    let text = avro_text(&schema);
    assert_eq!(
        text,
        r#"{"type":"record","name":"TaggedTwice","namespace":"com.example","fields":[{"name":"a","type":{"type":"record","name":"Tagged","fields":[{"name":"v","type":"int"}],"connect.parameters":{"color":"red"},"connect.name":"com.example.Tagged"}},{"name":"b","type":"Tagged","connect.parameters":{"color":"blue"}}],"connect.name":"com.example.TaggedTwice"}"#
    );
    let avro = AvroSchema::parse(&text, &[]).unwrap();
    let back = to_connect_schema(&AvroDataConfig::default(), &avro, None).unwrap();
    let color = |i: usize| back.fields[i].schema.parameters.as_ref().unwrap()["color"].clone();
    assert_eq!(
        (color(0), color(1)),
        ("red".to_string(), "blue".to_string())
    );
}
