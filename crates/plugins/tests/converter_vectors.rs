//! Golden vectors: the bytes Kafka Connect 4.1.1's converters produce for the same records,
//! produced by `conformance/java/JsonConverterVectors.java` (see its header). Every case name
//! here matches a case of that program; the expected outputs are in [`GOLDEN`] at the end.
//!
//! Result notation (as the Java program prints it): the output bytes as UTF-8 text, `HEX:...`
//! for non-text output, `NULL` for a Kafka null, `ERR:<exception>:<message>` for a failure.

use std::collections::HashMap;
use std::sync::Arc;

use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::data::{
    Date, Decimal, Schema, SchemaAndValue, SchemaBuilder, SchemaRef, Struct, Time, Timestamp, Value,
};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_plugins::converters::byte_array::ByteArrayConverter;
use tributary_plugins::converters::header::SimpleHeaderConverter;
use tributary_plugins::converters::java_fmt::to_java_string;
use tributary_plugins::converters::json::JsonConverter;
use tributary_plugins::converters::string::StringConverter;

const TOPIC: &str = "topic";
const DAY: i64 = 86_400_000;

fn golden(name: &str) -> &'static str {
    GOLDEN
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no golden vector {name}"))
        .1
}

fn err_text(e: &ConnectError) -> String {
    let class = e.java_class().rsplit('.').next().unwrap();
    format!("ERR:{class}:{e}")
}

fn show(res: ConnectResult<Option<Vec<u8>>>) -> String {
    match res {
        Ok(None) => "NULL".into(),
        Ok(Some(b)) => String::from_utf8(b).expect("utf-8 output"),
        Err(e) => err_text(&e),
    }
}

fn show_hex(res: ConnectResult<Option<Vec<u8>>>) -> String {
    match res {
        Ok(None) => "NULL".into(),
        Ok(Some(b)) => format!(
            "HEX:{}",
            b.iter().map(|x| format!("{x:02x}")).collect::<String>()
        ),
        Err(e) => err_text(&e),
    }
}

#[track_caller]
fn check(name: &str, actual: String) {
    assert_eq!(actual, golden(name), "vector {name}");
}

fn json(schemas: bool, decimal: &str, replace: bool, is_key: bool) -> JsonConverter {
    let mut c = JsonConverter::new();
    let props: Props = HashMap::from([
        ("schemas.enable".to_string(), schemas.to_string()),
        ("decimal.format".to_string(), decimal.to_string()),
        ("replace.null.with.default".to_string(), replace.to_string()),
    ]);
    Converter::configure(&mut c, &props, is_key).unwrap();
    c
}

fn enc(c: &JsonConverter, schema: Option<&SchemaRef>, value: Value) -> String {
    show(c.from_connect_data(TOPIC, schema, &value))
}

fn round_trip(c: &JsonConverter, input: &str) -> String {
    match c.to_connect_data(TOPIC, Some(input.as_bytes())) {
        Ok(sv) => show(c.from_connect_data(TOPIC, sv.schema.as_ref(), &sv.value)),
        Err(e) => err_text(&e),
    }
}

/// The Java program's `decode` notation: schema type[/name], value class and toString.
fn describe(sv: &SchemaAndValue) -> String {
    let schema = match &sv.schema {
        None => "null".to_string(),
        Some(s) => format!(
            "{}{}",
            s.schema_type,
            s.name.as_ref().map(|n| format!("/{n}")).unwrap_or_default()
        ),
    };
    let value = match &sv.value {
        Value::Null => "null".to_string(),
        Value::Date(d) => format!("Date:{}", *d as i64 * DAY),
        Value::Time(t) => format!("Date:{t}"),
        Value::Timestamp(t) => format!("Date:{t}"),
        v => {
            let class = v.kind_name().rsplit('.').next().unwrap();
            format!("{class}:{}", to_java_string(v))
        }
    };
    format!("{schema} {value}")
}

fn person_schema() -> SchemaRef {
    let address = SchemaBuilder::struct_()
        .name("com.example.Address")
        .optional()
        .field("street", Schema::string_schema())
        .unwrap()
        .field("zip", Schema::optional_int32_schema())
        .unwrap()
        .build();
    SchemaBuilder::struct_()
        .name("com.example.Person")
        .version(3)
        .doc("A person")
        .parameter("p1", "v1")
        .parameter("a0", "v0")
        .field("name", Schema::string_schema())
        .unwrap()
        .field(
            "age",
            SchemaBuilder::int32()
                .optional()
                .default_value(Value::Int32(18))
                .unwrap()
                .doc("years")
                .build(),
        )
        .unwrap()
        .field("score", Schema::float64_schema())
        .unwrap()
        .field(
            "tags",
            SchemaBuilder::array(Schema::string_schema()).build(),
        )
        .unwrap()
        .field(
            "attrs",
            SchemaBuilder::map(Schema::string_schema(), Schema::int64_schema())
                .optional()
                .build(),
        )
        .unwrap()
        .field(
            "codes",
            SchemaBuilder::map(Schema::int32_schema(), Schema::optional_string_schema()).build(),
        )
        .unwrap()
        .field("address", address)
        .unwrap()
        .field("balance", Decimal::builder(2).optional().build())
        .unwrap()
        .field("birthday", Date::builder().optional().build())
        .unwrap()
        .field("wake", Time::schema())
        .unwrap()
        .field("updated", Timestamp::builder().optional().build())
        .unwrap()
        .field("raw", Schema::optional_bytes_schema())
        .unwrap()
        .build()
}

fn person(s: &SchemaRef) -> Value {
    let address = s.field("address").unwrap().schema.clone();
    Value::Struct(
        Struct::new(s.clone())
            .unwrap()
            .put("name", "Ada")
            .unwrap()
            .put("score", Value::Float64(97.5))
            .unwrap()
            .put("tags", Value::Array(vec!["a".into(), "b".into()]))
            .unwrap()
            .put(
                "attrs",
                Value::Map(vec![
                    ("x".into(), Value::Int64(1)),
                    ("y".into(), Value::Int64(-2)),
                ]),
            )
            .unwrap()
            .put(
                "codes",
                Value::Map(vec![
                    (Value::Int32(1), "one".into()),
                    (Value::Int32(2), Value::Null),
                ]),
            )
            .unwrap()
            .put(
                "address",
                Value::Struct(
                    Struct::new(address)
                        .unwrap()
                        .put("street", "Main St")
                        .unwrap()
                        .put("zip", 12345)
                        .unwrap(),
                ),
            )
            .unwrap()
            .put("balance", Value::Decimal(Decimal::new(-123456, 2)))
            .unwrap()
            .put("birthday", Value::Date(19000))
            .unwrap()
            .put("wake", Value::Time(25200123))
            .unwrap()
            .put("updated", Value::Timestamp(1700000000123))
            .unwrap()
            .put("raw", Value::Bytes(vec![1, 2, 3]))
            .unwrap(),
    )
}

#[test]
#[allow(clippy::excessive_precision)] // the Java literals, as written there
fn json_primitives() {
    let on = json(true, "BASE64", true, false);
    let key = json(true, "BASE64", true, true);
    check(
        "int8",
        enc(&on, Some(&Schema::int8_schema()), Value::Int8(-12)),
    );
    check(
        "int16",
        enc(&on, Some(&Schema::int16_schema()), Value::Int16(1234)),
    );
    check(
        "int32",
        enc(&on, Some(&Schema::int32_schema()), Value::Int32(i32::MIN)),
    );
    check(
        "int64",
        enc(&on, Some(&Schema::int64_schema()), Value::Int64(i64::MAX)),
    );
    check(
        "boolean",
        enc(&on, Some(&Schema::boolean_schema()), Value::Boolean(true)),
    );
    check(
        "string",
        enc(
            &on,
            Some(&Schema::string_schema()),
            "he said \"hi\"\\ / \n\t\r\u{8}\u{c}\u{1}\u{1f}\u{7f} é 😀 \u{2028}".into(),
        ),
    );
    check(
        "bytes",
        enc(
            &on,
            Some(&Schema::bytes_schema()),
            Value::Bytes(vec![0, 1, 2, 255, 128]),
        ),
    );
    check(
        "bytes_empty",
        enc(&on, Some(&Schema::bytes_schema()), Value::Bytes(vec![])),
    );
    check(
        "key_string",
        enc(&key, Some(&Schema::string_schema()), "k".into()),
    );
    let floats: [f32; 17] = [
        1.5,
        0.1,
        3.4028235e38,
        1.4e-45,
        1e-5,
        1e-3,
        1e7,
        9999999.0,
        123456.7,
        -0.0,
        100.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.17549435E-38,
        16777216.0,
        3.0e10,
    ];
    for (i, f) in floats.iter().enumerate() {
        check(
            &format!("float32_{i}"),
            enc(&on, Some(&Schema::float32_schema()), Value::Float32(*f)),
        );
    }
    let doubles: [f64; 20] = [
        0.1,
        1e21,
        1e-7,
        100.0,
        -0.0,
        1.0 / 3.0,
        123456789.125,
        1e7,
        9999999.999,
        0.001,
        0.000999,
        4.9e-324,
        f64::MAX,
        2e-3,
        1e23,
        5e-324,
        f64::NAN,
        f64::INFINITY,
        2.2250738585072014E-308,
        12345678912345678.0,
    ];
    for (i, d) in doubles.iter().enumerate() {
        check(
            &format!("float64_{i}"),
            enc(&on, Some(&Schema::float64_schema()), Value::Float64(*d)),
        );
    }
}

#[test]
fn json_nulls_and_defaults() {
    let on = json(true, "BASE64", true, false);
    let off = json(false, "BASE64", true, false);
    let no_replace = json(true, "BASE64", false, false);
    check(
        "optional_null",
        enc(&on, Some(&Schema::optional_int32_schema()), Value::Null),
    );
    check(
        "optional_null_off",
        enc(&off, Some(&Schema::optional_int32_schema()), Value::Null),
    );
    check(
        "required_null",
        enc(&on, Some(&Schema::int32_schema()), Value::Null),
    );
    check("schemaless_null", enc(&on, None, Value::Null));
    check("schemaless_null_off", enc(&off, None, Value::Null));
    let with_default = SchemaBuilder::string()
        .optional()
        .default_value("dflt".into())
        .unwrap()
        .name("n")
        .version(2)
        .doc("d \"q\"")
        .parameter("k", "v")
        .build();
    check(
        "default_null_replaced",
        enc(&on, Some(&with_default), Value::Null),
    );
    check(
        "default_null_not_replaced",
        enc(&no_replace, Some(&with_default), Value::Null),
    );
    check(
        "default_value_set",
        enc(&on, Some(&with_default), "x".into()),
    );
    let req_default = SchemaBuilder::int64()
        .default_value(Value::Int64(7))
        .unwrap()
        .build();
    check(
        "required_default_null",
        enc(&on, Some(&req_default), Value::Null),
    );
    check(
        "required_default_null_not_replaced",
        enc(&no_replace, Some(&req_default), Value::Null),
    );
    check(
        "wrong_type",
        enc(&on, Some(&Schema::int32_schema()), "nope".into()),
    );
    check(
        "wrong_type_bytes",
        enc(&on, Some(&Schema::bytes_schema()), "nope".into()),
    );
}

#[test]
fn json_complex_types() {
    let on = json(true, "BASE64", true, false);
    let off = json(false, "BASE64", true, false);
    let num = json(true, "NUMERIC", true, false);
    let no_replace = json(true, "BASE64", false, false);
    let no_replace_off = json(false, "BASE64", false, false);
    let arr = SchemaBuilder::array(Schema::optional_string_schema())
        .optional()
        .build();
    check(
        "array_optional_elems",
        enc(
            &on,
            Some(&arr),
            Value::Array(vec!["a".into(), Value::Null, "c".into()]),
        ),
    );
    let arr_of_arr =
        SchemaBuilder::array(SchemaBuilder::array(Schema::int8_schema()).build()).build();
    check(
        "array_of_array",
        enc(
            &on,
            Some(&arr_of_arr),
            Value::Array(vec![
                Value::Array(vec![Value::Int8(1), Value::Int8(2)]),
                Value::Array(vec![]),
            ]),
        ),
    );
    let str_map = SchemaBuilder::map(Schema::string_schema(), Schema::float32_schema()).build();
    check(
        "map_string_keys",
        enc(
            &on,
            Some(&str_map),
            Value::Map(vec![
                ("b".into(), Value::Float32(1.25)),
                ("a".into(), Value::Float32(-2.0)),
            ]),
        ),
    );
    let bool_map = SchemaBuilder::map(
        Schema::boolean_schema(),
        SchemaBuilder::array(Schema::int16_schema()).build(),
    )
    .build();
    check(
        "map_bool_keys",
        enc(
            &on,
            Some(&bool_map),
            Value::Map(vec![
                (Value::Boolean(true), Value::Array(vec![Value::Int16(1)])),
                (Value::Boolean(false), Value::Array(vec![])),
            ]),
        ),
    );
    let empty = SchemaBuilder::struct_().build();
    check(
        "struct_empty",
        enc(
            &on,
            Some(&empty),
            Value::Struct(Struct::new(empty.clone()).unwrap()),
        ),
    );
    let ps = person_schema();
    let p = person(&ps);
    check("struct_person", enc(&on, Some(&ps), p.clone()));
    check("struct_person_off", enc(&off, Some(&ps), p.clone()));
    check("struct_person_numeric", enc(&num, Some(&ps), p.clone()));
    check(
        "struct_person_no_replace",
        enc(&no_replace, Some(&ps), p.clone()),
    );
    check(
        "struct_person_no_replace_off",
        enc(&no_replace_off, Some(&ps), p.clone()),
    );
    let other = SchemaBuilder::struct_()
        .field("a", Schema::int32_schema())
        .unwrap()
        .build();
    check("struct_mismatch", enc(&on, Some(&other), p));

    let inner = SchemaBuilder::struct_()
        .optional()
        .field("a", Schema::int32_schema())
        .unwrap()
        .field("b", Schema::optional_string_schema())
        .unwrap()
        .build();
    let outer = SchemaBuilder::struct_()
        .field("inner", inner)
        .unwrap()
        .field(
            "list",
            SchemaBuilder::array(Schema::int32_schema())
                .optional()
                .default_value(Value::Array(vec![Value::Int32(1), Value::Int32(2)]))
                .unwrap()
                .build(),
        )
        .unwrap()
        .field(
            "map",
            SchemaBuilder::map(Schema::string_schema(), Schema::boolean_schema())
                .optional()
                .default_value(Value::Map(vec![("t".into(), Value::Boolean(true))]))
                .unwrap()
                .build(),
        )
        .unwrap()
        .field(
            "when",
            Date::builder()
                .optional()
                .default_value(Value::Date(1))
                .unwrap()
                .build(),
        )
        .unwrap()
        .build();
    let empty_outer = Value::Struct(Struct::new(outer.clone()).unwrap());
    check(
        "complex_defaults",
        enc(&on, Some(&outer), empty_outer.clone()),
    );
    check(
        "complex_defaults_no_replace",
        enc(&no_replace, Some(&outer), empty_outer),
    );
}

#[test]
fn json_logical_types() {
    let on = json(true, "BASE64", true, false);
    let off = json(false, "BASE64", true, false);
    let num = json(true, "NUMERIC", true, false);
    let num_off = json(false, "NUMERIC", true, false);
    let dec2 = Decimal::schema(2);
    check(
        "decimal_base64",
        enc(&on, Some(&dec2), Value::Decimal(Decimal::new(1234567, 2))),
    );
    check(
        "decimal_base64_neg",
        enc(&on, Some(&dec2), Value::Decimal(Decimal::new(-1, 2))),
    );
    check(
        "decimal_base64_zero",
        enc(&on, Some(&dec2), Value::Decimal(Decimal::new(0, 2))),
    );
    check(
        "decimal_numeric",
        enc(&num, Some(&dec2), Value::Decimal(Decimal::new(1234560, 2))),
    );
    check(
        "decimal_numeric_off",
        enc(&num_off, Some(&dec2), Value::Decimal(Decimal::new(-5, 2))),
    );
    let dec8 = Decimal::schema(8);
    check(
        "decimal_numeric_small",
        enc(&num_off, Some(&dec8), Value::Decimal(Decimal::new(1, 8))),
    );
    let dec_neg = Decimal::schema(-2);
    check(
        "decimal_numeric_negscale",
        enc(
            &num_off,
            Some(&dec_neg),
            Value::Decimal(Decimal::new(5, -2)),
        ),
    );
    check(
        "decimal_base64_negscale",
        enc(&on, Some(&dec_neg), Value::Decimal(Decimal::new(5, -2))),
    );
    check(
        "decimal_scale_mismatch",
        enc(&on, Some(&dec2), Value::Decimal(Decimal::new(15, 1))),
    );
    let big = Decimal::parse("123456789012345678901234567890").unwrap();
    let big_dec = Arc::new(Schema {
        optional: true,
        default_value: Some(Value::Decimal(big)),
        ..(*Decimal::schema(0)).clone()
    });
    check(
        "decimal_default_base64",
        enc(&on, Some(&big_dec), Value::Null),
    );
    check(
        "decimal_default_numeric",
        enc(&num, Some(&big_dec), Value::Null),
    );
    check("date", enc(&on, Some(&Date::schema()), Value::Date(-1)));
    check(
        "time",
        enc(&on, Some(&Time::schema()), Value::Time(3723004)),
    );
    check(
        "timestamp",
        enc(&on, Some(&Timestamp::schema()), Value::Timestamp(-1)),
    );
    check(
        "timestamp_off",
        enc(
            &off,
            Some(&Timestamp::schema()),
            Value::Timestamp(1700000000123),
        ),
    );
    let ts_default = Timestamp::builder()
        .optional()
        .default_value(Value::Timestamp(0))
        .unwrap()
        .build();
    check(
        "timestamp_default",
        enc(&on, Some(&ts_default), Value::Null),
    );
}

#[test]
fn json_schemaless() {
    let on = json(true, "BASE64", true, false);
    let off = json(false, "BASE64", true, false);
    let map = Value::Map(vec![
        ("s".into(), "x".into()),
        ("i".into(), Value::Int32(1)),
        ("l".into(), Value::Int64(2)),
        ("b".into(), Value::Int8(3)),
        ("f".into(), Value::Float32(1.5)),
        ("d".into(), Value::Float64(2.5)),
        ("t".into(), Value::Boolean(false)),
        ("n".into(), Value::Null),
        ("bytes".into(), Value::Bytes(b"hi".to_vec())),
        (
            "list".into(),
            Value::Array(vec![Value::Int32(1), "two".into(), Value::Null]),
        ),
    ]);
    check("schemaless_map_off", enc(&off, None, map.clone()));
    check("schemaless_map_on", enc(&on, None, map));
    check(
        "schemaless_map_mixed_keys",
        enc(
            &off,
            None,
            Value::Map(vec![
                ("a".into(), Value::Int32(1)),
                (Value::Int32(2), "b".into()),
            ]),
        ),
    );
    check("schemaless_string", enc(&off, None, "plain".into()));
    check("schemaless_int", enc(&off, None, Value::Int32(42)));
    let other = SchemaBuilder::struct_()
        .field("a", Schema::int32_schema())
        .unwrap()
        .build();
    check(
        "schemaless_struct",
        enc(
            &off,
            None,
            Value::Struct(Struct::new(other).unwrap().put("a", 1).unwrap()),
        ),
    );
    check(
        "schemaless_decimal",
        enc(&off, None, Value::Decimal(Decimal::new(15, 1))),
    );
    check("schemaless_date", enc(&off, None, Value::Timestamp(0)));
}

const ENVELOPE_CASES: &[(&str, &str)] = &[
    (
        "rt_envelope_null_schema",
        r#"{"schema":null,"payload":{"k":[1]}}"#,
    ),
    (
        "rt_envelope_reversed",
        r#"{"payload":5,"schema":{"type":"int16"}}"#,
    ),
    (
        "rt_int8_truncate",
        r#"{"schema":{"type":"int8"},"payload":300}"#,
    ),
    (
        "rt_int32_from_float",
        r#"{"schema":{"type":"int32"},"payload":12.9}"#,
    ),
    (
        "rt_int32_from_string",
        r#"{"schema":{"type":"int32"},"payload":"12"}"#,
    ),
    (
        "rt_int64_from_big",
        r#"{"schema":{"type":"int64"},"payload":18446744073709551617}"#,
    ),
    ("rt_float32", r#"{"schema":{"type":"float"},"payload":0.1}"#),
    (
        "rt_float64_int",
        r#"{"schema":{"type":"double"},"payload":3}"#,
    ),
    (
        "rt_boolean_from_int",
        r#"{"schema":{"type":"boolean","optional":true},"payload":1}"#,
    ),
    (
        "rt_string_from_int",
        r#"{"schema":{"type":"string","optional":true},"payload":1}"#,
    ),
    (
        "rt_bytes",
        r#"{"schema":{"type":"bytes"},"payload":"AAEC/w=="}"#,
    ),
    (
        "rt_bytes_from_int",
        r#"{"schema":{"type":"bytes","optional":true},"payload":1}"#,
    ),
    (
        "rt_bytes_bad_base64",
        r#"{"schema":{"type":"bytes"},"payload":"!!"}"#,
    ),
    (
        "rt_array_from_object",
        r#"{"schema":{"type":"array","items":{"type":"int32"}},"payload":{"a":1}}"#,
    ),
    (
        "rt_map_int_keys",
        r#"{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"string"}},"payload":[[1,"a"]]}"#,
    ),
    (
        "rt_optional_flag_string",
        r#"{"schema":{"type":"int32","optional":"true"},"payload":1}"#,
    ),
    (
        "rt_version_float",
        r#"{"schema":{"type":"int32","version":2.5,"name":5,"doc":"d"},"payload":1}"#,
    ),
    (
        "rt_default_null_optional",
        r#"{"schema":{"type":"int32","optional":true,"default":null},"payload":null}"#,
    ),
    (
        "rt_default_replaces_null",
        r#"{"schema":{"type":"int32","optional":true,"default":9},"payload":null}"#,
    ),
    (
        "rt_struct_missing_field_default",
        r#"{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"default":4,"field":"a"},{"type":"string","optional":true,"field":"b"}]},"payload":{"c":1}}"#,
    ),
    (
        "rt_decimal_numeric_in",
        r#"{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":1.50}"#,
    ),
    (
        "rt_date",
        r#"{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date","version":1},"payload":19000}"#,
    ),
    (
        "rt_timestamp",
        r#"{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp"},"payload":1700000000123}"#,
    ),
    (
        "rt_map_string_keys",
        r#"{"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}},"payload":{"only":1}}"#,
    ),
    ("err_not_envelope", r#"{"a":1}"#),
    ("err_envelope_extra", r#"{"schema":null,"payload":1,"x":2}"#),
    ("err_array_top", "[1]"),
    ("err_invalid_json", "{"),
    ("err_empty_on", ""),
    ("err_no_type", r#"{"schema":{},"payload":1}"#),
    ("err_type_not_text", r#"{"schema":{"type":1},"payload":1}"#),
    (
        "err_unknown_type",
        r#"{"schema":{"type":"float128"},"payload":1}"#,
    ),
    (
        "err_array_no_items",
        r#"{"schema":{"type":"array"},"payload":[]}"#,
    ),
    (
        "err_map_no_keys",
        r#"{"schema":{"type":"map","values":{"type":"int32"}},"payload":{}}"#,
    ),
    (
        "err_map_no_values",
        r#"{"schema":{"type":"map","keys":{"type":"int32"}},"payload":{}}"#,
    ),
    (
        "err_struct_no_fields",
        r#"{"schema":{"type":"struct"},"payload":{}}"#,
    ),
    (
        "err_struct_field_no_name",
        r#"{"schema":{"type":"struct","fields":[{"type":"int32"}]},"payload":{}}"#,
    ),
    (
        "err_params_not_string",
        r#"{"schema":{"type":"int32","parameters":{"a":1}},"payload":1}"#,
    ),
    (
        "err_required_null",
        r#"{"schema":{"type":"int32"},"payload":null}"#,
    ),
    (
        "err_required_default_null",
        r#"{"schema":{"type":"string","default":null},"payload":"x"}"#,
    ),
    (
        "err_struct_not_object",
        r#"{"schema":{"type":"struct","fields":[]},"payload":[]}"#,
    ),
    (
        "err_struct_missing_required",
        r#"{"schema":{"type":"struct","fields":[{"type":"int32","field":"a"}]},"payload":{}}"#,
    ),
    (
        "err_map_string_not_object",
        r#"{"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int32"}},"payload":[]}"#,
    ),
    (
        "err_map_not_array",
        r#"{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":{}}"#,
    ),
    (
        "err_map_entry_not_array",
        r#"{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":[1]}"#,
    ),
    (
        "err_map_entry_len",
        r#"{"schema":{"type":"map","keys":{"type":"int32"},"values":{"type":"int32"}},"payload":[[1,2,3]]}"#,
    ),
    (
        "err_decimal_bad_type",
        r#"{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":true}"#,
    ),
    (
        "err_decimal_bad_base64",
        r#"{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"!!"}"#,
    ),
    (
        "err_date_not_int",
        r#"{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":"x"}"#,
    ),
    (
        "err_time_not_int",
        r#"{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Time"},"payload":1.5}"#,
    ),
    (
        "err_time_range",
        r#"{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Time"},"payload":-1}"#,
    ),
    (
        "err_timestamp_not_integral",
        r#"{"schema":{"type":"int64","name":"org.apache.kafka.connect.data.Timestamp"},"payload":1.5}"#,
    ),
];

const SCHEMALESS_CASES: &[(&str, &str)] = &[
    (
        "rt_schemaless_nested",
        r#"{"a":[1,2.5,"x",true,null,{"b":[]}]}"#,
    ),
    ("rt_leading_zeros", "007"),
    ("rt_big_int", "12345678901234567890"),
    ("rt_big_float", "1e400"),
    ("rt_float_precise", "0.1000000000000000055511151231257827"),
    ("rt_exp", "1E2"),
    ("rt_trailing", "1 2"),
    ("rt_trailing_garbage", r#"{"a":1} xyz"#),
    ("rt_whitespace", " \n\"s\"\t "),
    ("rt_unicode_escapes", r#""\u00e9\ud83d\ude00\/\n""#),
    ("err_invalid_json_off", r#"{"a":}"#),
    ("err_empty_off", ""),
];

#[test]
fn json_decoding_with_envelope() {
    let on = json(true, "BASE64", true, false);
    for (name, input) in ENVELOPE_CASES {
        check(name, round_trip(&on, input));
    }
    let num = json(true, "NUMERIC", true, false);
    let no_replace = json(true, "BASE64", false, false);
    check(
        "rt_default_no_replace",
        round_trip(
            &no_replace,
            r#"{"schema":{"type":"int32","optional":true,"default":9},"payload":null}"#,
        ),
    );
    let dec = |scale: &str, payload: &str| {
        format!(
            r#"{{"schema":{{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{{"scale":"{scale}"}}}},"payload":{payload}}}"#
        )
    };
    check(
        "rt_decimal_numeric_in_num",
        round_trip(&num, &dec("2", "12.34")),
    );
    check("rt_decimal_int_in_num", round_trip(&num, &dec("0", "12")));
    check(
        "rt_decimal_base64_in",
        round_trip(&num, &dec("3", "\"MDk=\"")),
    );
}

#[test]
fn json_decoding_schemaless() {
    let off = json(false, "BASE64", true, false);
    for (name, input) in SCHEMALESS_CASES {
        check(name, round_trip(&off, input));
    }
    let on = json(true, "BASE64", true, false);
    check(
        "dec_tombstone",
        describe(&on.to_connect_data(TOPIC, None).unwrap()),
    );
    check(
        "dec_schemaless_int",
        describe(&off.to_connect_data(TOPIC, Some(b"5")).unwrap()),
    );
    check(
        "dec_schemaless_float",
        describe(&off.to_connect_data(TOPIC, Some(b"5.0")).unwrap()),
    );
    check(
        "dec_schemaless_null",
        describe(&off.to_connect_data(TOPIC, Some(b"null")).unwrap()),
    );
}

#[test]
fn json_decimal_number_is_rescaled_to_the_schema_scale() {
    // Java keeps the number's own scale (golden `dec_decimal_scale`: BigDecimal 1.5); the Rust
    // data model requires the schema's scale, so 1.5 is read as 1.50.
    assert_eq!(
        golden("dec_decimal_scale"),
        "BYTES/org.apache.kafka.connect.data.Decimal BigDecimal:1.5"
    );
    let on = json(true, "BASE64", true, false);
    let input = r#"{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":1.5}"#;
    let sv = on.to_connect_data(TOPIC, Some(input.as_bytes())).unwrap();
    assert_eq!(sv.value, Value::Decimal(Decimal::new(150, 2)));
}

#[test]
fn json_round_trips_records() {
    let ps = person_schema();
    // An unset field with a default reads back as the default, so set it for equality.
    let Value::Struct(st) = person(&ps) else {
        unreachable!()
    };
    let p = Value::Struct(st.put("age", 18).unwrap());
    for c in [
        json(true, "BASE64", true, false),
        json(true, "NUMERIC", true, false),
    ] {
        let bytes = c.from_connect_data(TOPIC, Some(&ps), &p).unwrap();
        let sv = c.to_connect_data(TOPIC, bytes.as_deref()).unwrap();
        assert_eq!(sv.schema.as_deref(), Some(ps.as_ref()));
        assert_eq!(sv.value, p);
    }
    // Java re-encodes what it decoded to the same bytes.
    let on = json(true, "BASE64", true, false);
    check("rt_person", round_trip(&on, golden("struct_person")));
    let num = json(true, "NUMERIC", true, false);
    check(
        "rt_person_numeric",
        round_trip(&num, golden("struct_person_numeric")),
    );
    // Schemaless values come back with inferred types.
    let off = JsonConverter::new_schemaless();
    let v = Value::Map(vec![(
        "a".into(),
        Value::Array(vec![Value::Int64(1), Value::Float64(2.5), Value::Null]),
    )]);
    let bytes = off.from_connect_data(TOPIC, None, &v).unwrap();
    assert_eq!(
        off.to_connect_data(TOPIC, bytes.as_deref()).unwrap(),
        SchemaAndValue {
            schema: None,
            value: v
        }
    );
}

#[test]
fn string_converter() {
    let mut sc = StringConverter::new();
    Converter::configure(&mut sc, &Props::new(), false).unwrap();
    let s = |schema: Option<&SchemaRef>, v: Value| show(sc.from_connect_data(TOPIC, schema, &v));
    check(
        "string_conv_string",
        s(Some(&Schema::string_schema()), "héllo".into()),
    );
    check(
        "string_conv_null",
        s(Some(&Schema::optional_string_schema()), Value::Null),
    );
    check(
        "string_conv_int",
        s(Some(&Schema::int32_schema()), Value::Int32(42)),
    );
    check(
        "string_conv_float",
        s(Some(&Schema::float32_schema()), Value::Float32(1e10)),
    );
    check(
        "string_conv_double",
        s(Some(&Schema::float64_schema()), Value::Float64(1e-4)),
    );
    check(
        "string_conv_decimal",
        s(
            Some(&Decimal::schema(8)),
            Value::Decimal(Decimal::new(1, 8)),
        ),
    );
    check(
        "string_conv_list",
        s(
            None,
            Value::Array(vec![
                Value::Int32(1),
                "a".into(),
                Value::Null,
                Value::Float64(2.5),
            ]),
        ),
    );
    let other = SchemaBuilder::struct_()
        .field("a", Schema::int32_schema())
        .unwrap()
        .build();
    check(
        "string_conv_struct",
        s(
            Some(&other),
            Value::Struct(Struct::new(other.clone()).unwrap().put("a", 7).unwrap()),
        ),
    );
    let mut sc16 = StringConverter::new();
    Converter::configure(
        &mut sc16,
        &HashMap::from([("converter.encoding".into(), "UTF-16".into())]),
        false,
    )
    .unwrap();
    check(
        "string_conv_utf16",
        show_hex(sc16.from_connect_data(TOPIC, None, &"hé".into())),
    );
    assert_eq!(
        sc16.to_connect_data(TOPIC, Some(&[0xfe, 0xff, 0, 0x68, 0, 0xe9]))
            .unwrap()
            .value,
        "hé".into()
    );
    let mut latin = StringConverter::new();
    Converter::configure(
        &mut latin,
        &HashMap::from([("converter.encoding".into(), "ISO-8859-1".into())]),
        false,
    )
    .unwrap();
    check(
        "string_conv_latin1",
        show_hex(latin.from_connect_data(TOPIC, None, &"hé€".into())),
    );
    let back = sc.to_connect_data(TOPIC, Some("héllo".as_bytes())).unwrap();
    assert_eq!(
        back,
        SchemaAndValue {
            schema: Some(Schema::optional_string_schema()),
            value: "héllo".into()
        }
    );
    let mut bad = StringConverter::new();
    let err = Converter::configure(
        &mut bad,
        &HashMap::from([("converter.encoding".into(), "NOPE".into())]),
        false,
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Unsupported encoding NOPE");
}

#[test]
fn byte_array_converter() {
    let c = ByteArrayConverter::new();
    let b = |schema: Option<&SchemaRef>, v: Value| show(c.from_connect_data(TOPIC, schema, &v));
    check(
        "bytearray_ok",
        b(Some(&Schema::bytes_schema()), Value::Bytes(b"ab".to_vec())),
    );
    check(
        "bytearray_schema",
        b(Some(&Schema::string_schema()), "ab".into()),
    );
    check("bytearray_value", b(None, "ab".into()));
    check(
        "bytearray_decimal",
        b(
            Some(&Decimal::schema(2)),
            Value::Decimal(Decimal::new(100, 2)),
        ),
    );
    let back = c.to_connect_data(TOPIC, Some(b"ab")).unwrap();
    assert_eq!(
        back,
        SchemaAndValue {
            schema: Some(Schema::optional_bytes_schema()),
            value: Value::Bytes(b"ab".to_vec())
        }
    );
}

#[test]
fn simple_header_converter() {
    let hc = SimpleHeaderConverter::new();
    let h =
        |schema: Option<&SchemaRef>, v: Value| show(hc.from_connect_header(TOPIC, "h", schema, &v));
    check(
        "header_string",
        h(Some(&Schema::string_schema()), "a \"b\"".into()),
    );
    check(
        "header_int",
        h(Some(&Schema::int32_schema()), Value::Int32(5)),
    );
    check(
        "header_float",
        h(Some(&Schema::float64_schema()), Value::Float64(1e7)),
    );
    check(
        "header_bool",
        h(Some(&Schema::boolean_schema()), Value::Boolean(true)),
    );
    check(
        "header_bytes",
        h(Some(&Schema::bytes_schema()), Value::Bytes(vec![1, 2, 3])),
    );
    check(
        "header_list",
        h(
            None,
            Value::Array(vec![
                "a\\b".into(),
                Value::Int32(1),
                Value::Null,
                Value::Bytes(vec![1]),
            ]),
        ),
    );
    check(
        "header_map",
        h(
            None,
            Value::Map(vec![
                ("k".into(), "v".into()),
                ("n".into(), Value::Float32(1.5)),
            ]),
        ),
    );
    let ps = person_schema();
    check("header_struct", h(Some(&ps), person(&ps)));
    check(
        "header_decimal",
        h(
            Some(&Decimal::schema(8)),
            Value::Decimal(Decimal::new(1, 8)),
        ),
    );
    check("header_date", h(Some(&Date::schema()), Value::Date(19000)));
    check(
        "header_time",
        h(Some(&Time::schema()), Value::Time(3723004)),
    );
    check(
        "header_timestamp",
        h(Some(&Timestamp::schema()), Value::Timestamp(1700000000123)),
    );
    let inputs = [
        "",
        "true",
        "false",
        "null",
        "12",
        "-129",
        "40000",
        "3000000000",
        "12345678901234567890",
        "1.5",
        "0.1",
        "1e400",
        "2023-11-14",
        "10:20:30.123Z",
        "2023-11-14T22:13:20.123Z",
        "hello",
        " 7 ",
        "true}",
        "abc,def",
        "+5",
    ];
    for (i, input) in inputs.iter().enumerate() {
        let sv = hc
            .to_connect_header(TOPIC, "h", Some(input.as_bytes()))
            .unwrap();
        check(&format!("header_parse_{i}"), describe(&sv));
    }
}

#[test]
fn plugins_are_listed_under_java_class_names() {
    let set = tributary_plugins::converters::plugins();
    let classes: Vec<_> = set.converters.iter().map(|p| p.class).collect();
    assert_eq!(
        classes,
        [
            "org.apache.kafka.connect.storage.StringConverter",
            "org.apache.kafka.connect.converters.ByteArrayConverter",
            "org.apache.kafka.connect.json.JsonConverter",
            "org.apache.kafka.connect.converters.ShortConverter",
            "org.apache.kafka.connect.converters.IntegerConverter",
            "org.apache.kafka.connect.converters.LongConverter",
            "org.apache.kafka.connect.converters.FloatConverter",
            "org.apache.kafka.connect.converters.DoubleConverter",
            "org.apache.kafka.connect.converters.BooleanConverter",
        ]
    );
    assert!(set
        .header_converters
        .iter()
        .any(|p| p.class == "org.apache.kafka.connect.storage.SimpleHeaderConverter"));
    let json = (set.converters[2].new)();
    let keys: Vec<_> = json.config().keys.iter().map(|k| k.name.clone()).collect();
    assert_eq!(
        keys,
        [
            "converter.type",
            "schemas.enable",
            "schemas.cache.size",
            "schema.content",
            "decimal.format",
            "replace.null.with.default"
        ]
    );
}

// Generated from the output of conformance/java/JsonConverterVectors.java (Kafka 4.1.1,
// JDK 25; JDK 17 differs only in float32_14, float32_16 and float64_14, see java_fmt.rs).
const GOLDEN: &[(&str, &str)] = &[
    (
        "int8",
        r##"{"schema":{"type":"int8","optional":false},"payload":-12}"##,
    ),
    (
        "int16",
        r##"{"schema":{"type":"int16","optional":false},"payload":1234}"##,
    ),
    (
        "int32",
        r##"{"schema":{"type":"int32","optional":false},"payload":-2147483648}"##,
    ),
    (
        "int64",
        r##"{"schema":{"type":"int64","optional":false},"payload":9223372036854775807}"##,
    ),
    (
        "boolean",
        r##"{"schema":{"type":"boolean","optional":false},"payload":true}"##,
    ),
    (
        "string",
        r##"{"schema":{"type":"string","optional":false},"payload":"he said \"hi\"\\ / \n\t\r\b\f\u0001\u001F é \uD83D\uDE00  "}"##,
    ),
    (
        "bytes",
        r##"{"schema":{"type":"bytes","optional":false},"payload":"AAEC/4A="}"##,
    ),
    (
        "bytes_empty",
        r##"{"schema":{"type":"bytes","optional":false},"payload":""}"##,
    ),
    (
        "key_string",
        r##"{"schema":{"type":"string","optional":false},"payload":"k"}"##,
    ),
    (
        "float32_0",
        r##"{"schema":{"type":"float","optional":false},"payload":1.5}"##,
    ),
    (
        "float32_1",
        r##"{"schema":{"type":"float","optional":false},"payload":0.1}"##,
    ),
    (
        "float32_2",
        r##"{"schema":{"type":"float","optional":false},"payload":3.4028235E38}"##,
    ),
    (
        "float32_3",
        r##"{"schema":{"type":"float","optional":false},"payload":1.4E-45}"##,
    ),
    (
        "float32_4",
        r##"{"schema":{"type":"float","optional":false},"payload":1.0E-5}"##,
    ),
    (
        "float32_5",
        r##"{"schema":{"type":"float","optional":false},"payload":0.001}"##,
    ),
    (
        "float32_6",
        r##"{"schema":{"type":"float","optional":false},"payload":1.0E7}"##,
    ),
    (
        "float32_7",
        r##"{"schema":{"type":"float","optional":false},"payload":9999999.0}"##,
    ),
    (
        "float32_8",
        r##"{"schema":{"type":"float","optional":false},"payload":123456.7}"##,
    ),
    (
        "float32_9",
        r##"{"schema":{"type":"float","optional":false},"payload":-0.0}"##,
    ),
    (
        "float32_10",
        r##"{"schema":{"type":"float","optional":false},"payload":100.0}"##,
    ),
    (
        "float32_11",
        r##"{"schema":{"type":"float","optional":false},"payload":"NaN"}"##,
    ),
    (
        "float32_12",
        r##"{"schema":{"type":"float","optional":false},"payload":"Infinity"}"##,
    ),
    (
        "float32_13",
        r##"{"schema":{"type":"float","optional":false},"payload":"-Infinity"}"##,
    ),
    (
        "float32_14",
        r##"{"schema":{"type":"float","optional":false},"payload":1.1754944E-38}"##,
    ),
    (
        "float32_15",
        r##"{"schema":{"type":"float","optional":false},"payload":1.6777216E7}"##,
    ),
    (
        "float32_16",
        r##"{"schema":{"type":"float","optional":false},"payload":3.0E10}"##,
    ),
    (
        "float64_0",
        r##"{"schema":{"type":"double","optional":false},"payload":0.1}"##,
    ),
    (
        "float64_1",
        r##"{"schema":{"type":"double","optional":false},"payload":1.0E21}"##,
    ),
    (
        "float64_2",
        r##"{"schema":{"type":"double","optional":false},"payload":1.0E-7}"##,
    ),
    (
        "float64_3",
        r##"{"schema":{"type":"double","optional":false},"payload":100.0}"##,
    ),
    (
        "float64_4",
        r##"{"schema":{"type":"double","optional":false},"payload":-0.0}"##,
    ),
    (
        "float64_5",
        r##"{"schema":{"type":"double","optional":false},"payload":0.3333333333333333}"##,
    ),
    (
        "float64_6",
        r##"{"schema":{"type":"double","optional":false},"payload":1.23456789125E8}"##,
    ),
    (
        "float64_7",
        r##"{"schema":{"type":"double","optional":false},"payload":1.0E7}"##,
    ),
    (
        "float64_8",
        r##"{"schema":{"type":"double","optional":false},"payload":9999999.999}"##,
    ),
    (
        "float64_9",
        r##"{"schema":{"type":"double","optional":false},"payload":0.001}"##,
    ),
    (
        "float64_10",
        r##"{"schema":{"type":"double","optional":false},"payload":9.99E-4}"##,
    ),
    (
        "float64_11",
        r##"{"schema":{"type":"double","optional":false},"payload":4.9E-324}"##,
    ),
    (
        "float64_12",
        r##"{"schema":{"type":"double","optional":false},"payload":1.7976931348623157E308}"##,
    ),
    (
        "float64_13",
        r##"{"schema":{"type":"double","optional":false},"payload":0.002}"##,
    ),
    (
        "float64_14",
        r##"{"schema":{"type":"double","optional":false},"payload":1.0E23}"##,
    ),
    (
        "float64_15",
        r##"{"schema":{"type":"double","optional":false},"payload":4.9E-324}"##,
    ),
    (
        "float64_16",
        r##"{"schema":{"type":"double","optional":false},"payload":"NaN"}"##,
    ),
    (
        "float64_17",
        r##"{"schema":{"type":"double","optional":false},"payload":"Infinity"}"##,
    ),
    (
        "float64_18",
        r##"{"schema":{"type":"double","optional":false},"payload":2.2250738585072014E-308}"##,
    ),
    (
        "float64_19",
        r##"{"schema":{"type":"double","optional":false},"payload":1.2345678912345678E16}"##,
    ),
    (
        "optional_null",
        r##"{"schema":{"type":"int32","optional":true},"payload":null}"##,
    ),
    ("optional_null_off", r##"null"##),
    (
        "required_null",
        r##"ERR:DataException:Conversion error: null value for field that is required and has no default value"##,
    ),
    ("schemaless_null", r##"NULL"##),
    ("schemaless_null_off", r##"NULL"##),
    (
        "default_null_replaced",
        r##"{"schema":{"type":"string","optional":true,"name":"n","version":2,"doc":"d \"q\"","parameters":{"k":"v"},"default":"dflt"},"payload":"dflt"}"##,
    ),
    (
        "default_null_not_replaced",
        r##"{"schema":{"type":"string","optional":true,"name":"n","version":2,"doc":"d \"q\"","parameters":{"k":"v"},"default":"dflt"},"payload":null}"##,
    ),
    (
        "default_value_set",
        r##"{"schema":{"type":"string","optional":true,"name":"n","version":2,"doc":"d \"q\"","parameters":{"k":"v"},"default":"dflt"},"payload":"x"}"##,
    ),
    (
        "required_default_null",
        r##"{"schema":{"type":"int64","optional":false,"default":7},"payload":7}"##,
    ),
    (
        "required_default_null_not_replaced",
        r##"ERR:DataException:Conversion error: null value for field that is required and has no default value"##,
    ),
    (
        "wrong_type",
        r##"ERR:DataException:Invalid type for INT32: class java.lang.String"##,
    ),
    (
        "wrong_type_bytes",
        r##"ERR:DataException:Invalid type for bytes type: class java.lang.String"##,
    ),
    (
        "array_optional_elems",
        r##"{"schema":{"type":"array","items":{"type":"string","optional":true},"optional":true},"payload":["a",null,"c"]}"##,
    ),
    (
        "array_of_array",
        r##"{"schema":{"type":"array","items":{"type":"array","items":{"type":"int8","optional":false},"optional":false},"optional":false},"payload":[[1,2],[]]}"##,
    ),
    (
        "map_string_keys",
        r##"{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"float","optional":false},"optional":false},"payload":{"b":1.25,"a":-2.0}}"##,
    ),
    (
        "map_bool_keys",
        r##"{"schema":{"type":"map","keys":{"type":"boolean","optional":false},"values":{"type":"array","items":{"type":"int16","optional":false},"optional":false},"optional":false},"payload":[[true,[1]],[false,[]]]}"##,
    ),
    (
        "struct_empty",
        r##"{"schema":{"type":"struct","fields":[],"optional":false},"payload":{}}"##,
    ),
    (
        "struct_person",
        r##"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"int32","optional":true,"doc":"years","default":18,"field":"age"},{"type":"double","optional":false,"field":"score"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"attrs"},{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":true},"optional":false,"field":"codes"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"street"},{"type":"int32","optional":true,"field":"zip"}],"optional":true,"name":"com.example.Address","field":"address"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"balance"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"birthday"},{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"wake"},{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"updated"},{"type":"bytes","optional":true,"field":"raw"}],"optional":false,"name":"com.example.Person","version":3,"doc":"A person","parameters":{"p1":"v1","a0":"v0"}},"payload":{"name":"Ada","age":18,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":"/h3A","birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}}"##,
    ),
    (
        "struct_person_off",
        r##"{"name":"Ada","age":18,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":"/h3A","birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}"##,
    ),
    (
        "struct_person_numeric",
        r##"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"int32","optional":true,"doc":"years","default":18,"field":"age"},{"type":"double","optional":false,"field":"score"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"attrs"},{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":true},"optional":false,"field":"codes"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"street"},{"type":"int32","optional":true,"field":"zip"}],"optional":true,"name":"com.example.Address","field":"address"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"balance"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"birthday"},{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"wake"},{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"updated"},{"type":"bytes","optional":true,"field":"raw"}],"optional":false,"name":"com.example.Person","version":3,"doc":"A person","parameters":{"p1":"v1","a0":"v0"}},"payload":{"name":"Ada","age":18,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":-1234.56,"birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}}"##,
    ),
    (
        "struct_person_no_replace",
        r##"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"int32","optional":true,"doc":"years","default":18,"field":"age"},{"type":"double","optional":false,"field":"score"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"attrs"},{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":true},"optional":false,"field":"codes"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"street"},{"type":"int32","optional":true,"field":"zip"}],"optional":true,"name":"com.example.Address","field":"address"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"balance"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"birthday"},{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"wake"},{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"updated"},{"type":"bytes","optional":true,"field":"raw"}],"optional":false,"name":"com.example.Person","version":3,"doc":"A person","parameters":{"p1":"v1","a0":"v0"}},"payload":{"name":"Ada","age":null,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":"/h3A","birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}}"##,
    ),
    (
        "struct_person_no_replace_off",
        r##"{"name":"Ada","age":null,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":"/h3A","birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}"##,
    ),
    (
        "struct_mismatch",
        r##"ERR:DataException:Mismatching schema."##,
    ),
    (
        "complex_defaults",
        r##"{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":true,"field":"inner"},{"type":"array","items":{"type":"int32","optional":false},"optional":true,"default":[1,2],"field":"list"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"boolean","optional":false},"optional":true,"default":{"t":true},"field":"map"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"default":1,"field":"when"}],"optional":false},"payload":{"inner":null,"list":[1,2],"map":{"t":true},"when":1}}"##,
    ),
    (
        "complex_defaults_no_replace",
        r##"{"schema":{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int32","optional":false,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":true,"field":"inner"},{"type":"array","items":{"type":"int32","optional":false},"optional":true,"default":[1,2],"field":"list"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"boolean","optional":false},"optional":true,"default":{"t":true},"field":"map"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"default":1,"field":"when"}],"optional":false},"payload":{"inner":null,"list":null,"map":null,"when":null}}"##,
    ),
    (
        "decimal_base64",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"EtaH"}"##,
    ),
    (
        "decimal_base64_neg",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"/w=="}"##,
    ),
    (
        "decimal_base64_zero",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":"AA=="}"##,
    ),
    (
        "decimal_numeric",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"}},"payload":12345.60}"##,
    ),
    ("decimal_numeric_off", r##"-0.05"##),
    ("decimal_numeric_small", r##"1E-8"##),
    ("decimal_numeric_negscale", r##"5E+2"##),
    (
        "decimal_base64_negscale",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"-2"}},"payload":"BQ=="}"##,
    ),
    (
        "decimal_scale_mismatch",
        r##"ERR:DataException:Decimal value has mismatching scale for given Decimal schema. Schema has scale 2, value has scale 1."##,
    ),
    (
        "decimal_default_base64",
        r##"{"schema":{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"0"},"default":"AY7pD/bDc+DuTj8K0g=="},"payload":"AY7pD/bDc+DuTj8K0g=="}"##,
    ),
    (
        "decimal_default_numeric",
        r##"{"schema":{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"0"},"default":123456789012345678901234567890},"payload":123456789012345678901234567890}"##,
    ),
    (
        "date",
        r##"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":-1}"##,
    ),
    (
        "time",
        r##"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},"payload":3723004}"##,
    ),
    (
        "timestamp",
        r##"{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1},"payload":-1}"##,
    ),
    ("timestamp_off", r##"1700000000123"##),
    (
        "timestamp_default",
        r##"{"schema":{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"default":0},"payload":0}"##,
    ),
    (
        "schemaless_map_off",
        r##"{"s":"x","i":1,"l":2,"b":3,"f":1.5,"d":2.5,"t":false,"n":null,"bytes":"aGk=","list":[1,"two",null]}"##,
    ),
    (
        "schemaless_map_on",
        r##"{"schema":null,"payload":{"s":"x","i":1,"l":2,"b":3,"f":1.5,"d":2.5,"t":false,"n":null,"bytes":"aGk=","list":[1,"two",null]}}"##,
    ),
    ("schemaless_map_mixed_keys", r##"[["a",1],[2,"b"]]"##),
    ("schemaless_string", r##""plain""##),
    ("schemaless_int", r##"42"##),
    (
        "schemaless_struct",
        r##"ERR:DataException:Mismatching schema."##,
    ),
    (
        "schemaless_decimal",
        r##"ERR:DataException:Java class class java.math.BigDecimal does not have corresponding schema type."##,
    ),
    (
        "schemaless_date",
        r##"ERR:DataException:Java class class java.util.Date does not have corresponding schema type."##,
    ),
    (
        "rt_person",
        r##"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"int32","optional":true,"doc":"years","default":18,"field":"age"},{"type":"double","optional":false,"field":"score"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"attrs"},{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":true},"optional":false,"field":"codes"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"street"},{"type":"int32","optional":true,"field":"zip"}],"optional":true,"name":"com.example.Address","field":"address"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"balance"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"birthday"},{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"wake"},{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"updated"},{"type":"bytes","optional":true,"field":"raw"}],"optional":false,"name":"com.example.Person","version":3,"doc":"A person","parameters":{"p1":"v1","a0":"v0"}},"payload":{"name":"Ada","age":18,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":"/h3A","birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}}"##,
    ),
    (
        "rt_person_numeric",
        r##"{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"name"},{"type":"int32","optional":true,"doc":"years","default":18,"field":"age"},{"type":"double","optional":false,"field":"score"},{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int64","optional":false},"optional":true,"field":"attrs"},{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":true},"optional":false,"field":"codes"},{"type":"struct","fields":[{"type":"string","optional":false,"field":"street"},{"type":"int32","optional":true,"field":"zip"}],"optional":true,"name":"com.example.Address","field":"address"},{"type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"balance"},{"type":"int32","optional":true,"name":"org.apache.kafka.connect.data.Date","version":1,"field":"birthday"},{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1,"field":"wake"},{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"updated"},{"type":"bytes","optional":true,"field":"raw"}],"optional":false,"name":"com.example.Person","version":3,"doc":"A person","parameters":{"p1":"v1","a0":"v0"}},"payload":{"name":"Ada","age":18,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":[[1,"one"],[2,null]],"address":{"street":"Main St","zip":12345},"balance":-1234.56,"birthday":19000,"wake":25200123,"updated":1700000000123,"raw":"AQID"}}"##,
    ),
    (
        "rt_schemaless_nested",
        r##"{"a":[1,2.5,"x",true,null,{"b":[]}]}"##,
    ),
    ("rt_leading_zeros", r##"7"##),
    ("rt_big_int", r##"-6101065172474983726"##),
    ("rt_big_float", r##""Infinity""##),
    ("rt_float_precise", r##"0.1"##),
    ("rt_exp", r##"100.0"##),
    ("rt_trailing", r##"1"##),
    ("rt_trailing_garbage", r##"{"a":1}"##),
    ("rt_whitespace", r##""s""##),
    ("rt_unicode_escapes", r##""é\uD83D\uDE00/\n""##),
    (
        "rt_envelope_null_schema",
        r##"{"schema":null,"payload":{"k":[1]}}"##,
    ),
    (
        "rt_envelope_reversed",
        r##"{"schema":{"type":"int16","optional":false},"payload":5}"##,
    ),
    (
        "rt_int8_truncate",
        r##"{"schema":{"type":"int8","optional":false},"payload":44}"##,
    ),
    (
        "rt_int32_from_float",
        r##"{"schema":{"type":"int32","optional":false},"payload":12}"##,
    ),
    (
        "rt_int32_from_string",
        r##"{"schema":{"type":"int32","optional":false},"payload":0}"##,
    ),
    (
        "rt_int64_from_big",
        r##"{"schema":{"type":"int64","optional":false},"payload":1}"##,
    ),
    (
        "rt_float32",
        r##"{"schema":{"type":"float","optional":false},"payload":0.1}"##,
    ),
    (
        "rt_float64_int",
        r##"{"schema":{"type":"double","optional":false},"payload":3.0}"##,
    ),
    (
        "rt_boolean_from_int",
        r##"{"schema":{"type":"boolean","optional":true},"payload":false}"##,
    ),
    (
        "rt_string_from_int",
        r##"{"schema":{"type":"string","optional":true},"payload":null}"##,
    ),
    (
        "rt_bytes",
        r##"{"schema":{"type":"bytes","optional":false},"payload":"AAEC/w=="}"##,
    ),
    (
        "rt_bytes_from_int",
        r##"{"schema":{"type":"bytes","optional":true},"payload":null}"##,
    ),
    (
        "rt_bytes_bad_base64",
        r##"ERR:DataException:Invalid bytes field"##,
    ),
    (
        "rt_array_from_object",
        r##"{"schema":{"type":"array","items":{"type":"int32","optional":false},"optional":false},"payload":[1]}"##,
    ),
    (
        "rt_map_int_keys",
        r##"{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},"optional":false},"payload":[[1,"a"]]}"##,
    ),
    (
        "rt_optional_flag_string",
        r##"{"schema":{"type":"int32","optional":false},"payload":1}"##,
    ),
    (
        "rt_version_float",
        r##"{"schema":{"type":"int32","optional":false,"doc":"d"},"payload":1}"##,
    ),
    (
        "rt_default_null_optional",
        r##"{"schema":{"type":"int32","optional":true},"payload":null}"##,
    ),
    (
        "rt_default_replaces_null",
        r##"{"schema":{"type":"int32","optional":true,"default":9},"payload":9}"##,
    ),
    (
        "rt_default_no_replace",
        r##"{"schema":{"type":"int32","optional":true,"default":9},"payload":null}"##,
    ),
    (
        "rt_struct_missing_field_default",
        r##"{"schema":{"type":"struct","fields":[{"type":"int32","optional":true,"default":4,"field":"a"},{"type":"string","optional":true,"field":"b"}],"optional":false},"payload":{"a":4,"b":null}}"##,
    ),
    (
        "rt_decimal_numeric_in",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":"AJY="}"##,
    ),
    (
        "rt_decimal_numeric_in_num",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":12.34}"##,
    ),
    (
        "rt_decimal_int_in_num",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"0"}},"payload":12}"##,
    ),
    (
        "rt_decimal_base64_in",
        r##"{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"3"}},"payload":12.345}"##,
    ),
    (
        "rt_date",
        r##"{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":19000}"##,
    ),
    (
        "rt_timestamp",
        r##"{"schema":{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp"},"payload":1700000000123}"##,
    ),
    (
        "rt_map_string_keys",
        r##"{"schema":{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false},"payload":{"only":1}}"##,
    ),
    (
        "err_not_envelope",
        r##"ERR:DataException:JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."##,
    ),
    (
        "err_envelope_extra",
        r##"ERR:DataException:JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."##,
    ),
    (
        "err_array_top",
        r##"ERR:DataException:JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."##,
    ),
    (
        "err_invalid_json",
        r##"ERR:DataException:Converting byte[] to Kafka Connect data failed due to serialization error: "##,
    ),
    (
        "err_invalid_json_off",
        r##"ERR:DataException:Converting byte[] to Kafka Connect data failed due to serialization error: "##,
    ),
    (
        "err_empty_on",
        r##"ERR:DataException:JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration."##,
    ),
    ("err_empty_off", r##"NULL"##),
    (
        "err_no_type",
        r##"ERR:DataException:Schema must contain 'type' field"##,
    ),
    (
        "err_type_not_text",
        r##"ERR:DataException:Schema must contain 'type' field"##,
    ),
    (
        "err_unknown_type",
        r##"ERR:DataException:Unknown schema type: float128"##,
    ),
    (
        "err_array_no_items",
        r##"ERR:DataException:Array schema did not specify the element type"##,
    ),
    (
        "err_map_no_keys",
        r##"ERR:DataException:Map schema did not specify the key type"##,
    ),
    (
        "err_map_no_values",
        r##"ERR:DataException:Map schema did not specify the value type"##,
    ),
    (
        "err_struct_no_fields",
        r##"ERR:DataException:Struct schema's "fields" argument is not an array."##,
    ),
    (
        "err_struct_field_no_name",
        r##"ERR:DataException:Struct schema's field name not specified properly"##,
    ),
    (
        "err_params_not_string",
        r##"ERR:DataException:Schema parameters must have string values."##,
    ),
    (
        "err_required_null",
        r##"ERR:DataException:Invalid null value for required INT32 field"##,
    ),
    (
        "err_required_default_null",
        r##"ERR:DataException:Invalid null value for required STRING field"##,
    ),
    (
        "err_struct_not_object",
        r##"ERR:DataException:Structs should be encoded as JSON objects, but found ARRAY"##,
    ),
    (
        "err_struct_missing_required",
        r##"ERR:DataException:Invalid null value for required INT32 field"##,
    ),
    (
        "err_map_string_not_object",
        r##"ERR:DataException:Maps with string fields should be encoded as JSON objects, but found ARRAY"##,
    ),
    (
        "err_map_not_array",
        r##"ERR:DataException:Maps with non-string fields should be encoded as JSON array of tuples, but found OBJECT"##,
    ),
    (
        "err_map_entry_not_array",
        r##"ERR:DataException:Found invalid map entry instead of array tuple: NUMBER"##,
    ),
    (
        "err_map_entry_len",
        r##"ERR:DataException:Found invalid map entry, expected length 2 but found :3"##,
    ),
    (
        "err_decimal_bad_type",
        r##"ERR:DataException:Invalid type for Decimal, underlying representation should be numeric or bytes but was BOOLEAN"##,
    ),
    (
        "err_decimal_bad_base64",
        r##"ERR:DataException:Invalid bytes for Decimal field"##,
    ),
    (
        "err_date_not_int",
        r##"ERR:DataException:Invalid type for Date, underlying representation should be integer but was STRING"##,
    ),
    (
        "err_time_not_int",
        r##"ERR:DataException:Invalid type for Time, underlying representation should be integer but was NUMBER"##,
    ),
    (
        "err_time_range",
        r##"ERR:DataException:Time values must use number of milliseconds greater than 0 and less than 86400000"##,
    ),
    (
        "err_timestamp_not_integral",
        r##"ERR:DataException:Invalid type for Timestamp, underlying representation should be integral but was NUMBER"##,
    ),
    ("dec_tombstone", r##"null null"##),
    ("dec_schemaless_int", r##"null Long:5"##),
    ("dec_schemaless_float", r##"null Double:5.0"##),
    ("dec_schemaless_null", r##"null null"##),
    (
        "dec_decimal_scale",
        r##"BYTES/org.apache.kafka.connect.data.Decimal BigDecimal:1.5"##,
    ),
    ("string_conv_string", r##"héllo"##),
    ("string_conv_null", r##"NULL"##),
    ("string_conv_int", r##"42"##),
    ("string_conv_float", r##"1.0E10"##),
    ("string_conv_double", r##"1.0E-4"##),
    ("string_conv_decimal", r##"1E-8"##),
    ("string_conv_list", r##"[1, a, null, 2.5]"##),
    ("string_conv_struct", r##"Struct{a=7}"##),
    ("string_conv_utf16", r##"HEX:feff006800e9"##),
    ("string_conv_latin1", r##"HEX:68e93f"##),
    ("bytearray_ok", r##"ab"##),
    (
        "bytearray_schema",
        r##"ERR:DataException:Invalid schema type for ByteArrayConverter: STRING"##,
    ),
    (
        "bytearray_value",
        r##"ERR:DataException:ByteArrayConverter is not compatible with objects of type class java.lang.String"##,
    ),
    (
        "bytearray_decimal",
        r##"ERR:DataException:ByteArrayConverter is not compatible with objects of type class java.math.BigDecimal"##,
    ),
    ("header_string", r##"a "b""##),
    ("header_int", r##"5"##),
    ("header_float", r##"1.0E7"##),
    ("header_bool", r##"true"##),
    ("header_bytes", r##"AQID"##),
    ("header_list", r##"["a\\b",1,null,"AQ=="]"##),
    ("header_map", r##"{"k":"v","n":1.5}"##),
    (
        "header_struct",
        r##"{"name":"Ada","age":18,"score":97.5,"tags":["a","b"],"attrs":{"x":1,"y":-2},"codes":{1:"one",2:null},"address":{"street":"Main St","zip":12345},"balance":-1234.56,"birthday":2022-01-08,"wake":07:00:00.123Z,"updated":2023-11-14T22:13:20.123Z,"raw":"AQID"}"##,
    ),
    ("header_decimal", r##"1E-8"##),
    ("header_date", r##"2022-01-08"##),
    ("header_time", r##"01:02:03.004Z"##),
    ("header_timestamp", r##"2023-11-14T22:13:20.123Z"##),
    ("header_parse_0", r##"STRING String:"##),
    ("header_parse_1", r##"BOOLEAN Boolean:true"##),
    ("header_parse_2", r##"BOOLEAN Boolean:false"##),
    ("header_parse_3", r##"null null"##),
    ("header_parse_4", r##"INT8 Byte:12"##),
    ("header_parse_5", r##"INT16 Short:-129"##),
    ("header_parse_6", r##"INT32 Integer:40000"##),
    ("header_parse_7", r##"INT64 Long:3000000000"##),
    (
        "header_parse_8",
        r##"BYTES/org.apache.kafka.connect.data.Decimal BigDecimal:12345678901234567890"##,
    ),
    ("header_parse_9", r##"FLOAT32 Float:1.5"##),
    ("header_parse_10", r##"FLOAT32 Float:0.1"##),
    (
        "header_parse_11",
        r##"BYTES/org.apache.kafka.connect.data.Decimal BigDecimal:1E+400"##,
    ),
    (
        "header_parse_12",
        r##"INT32/org.apache.kafka.connect.data.Date Date:1699920000000"##,
    ),
    (
        "header_parse_13",
        r##"INT32/org.apache.kafka.connect.data.Time Date:37230123"##,
    ),
    (
        "header_parse_14",
        r##"INT64/org.apache.kafka.connect.data.Timestamp Date:1700000000123"##,
    ),
    ("header_parse_15", r##"STRING String:hello"##),
    ("header_parse_16", r##"INT8 Byte:7"##),
    ("header_parse_17", r##"STRING String:true}"##),
    ("header_parse_18", r##"STRING String:abc,def"##),
    ("header_parse_19", r##"INT8 Byte:5"##),
];
