//! Behaviour of the data model (`tributary_api::data`): schema building, struct and value
//! validation with Connect's error messages, logical types and Java's text forms of values.
//!
//! Expected messages and strings were checked against Kafka Connect 4.1.1 (`connect-api`) and
//! the JDK's `BigDecimal` / `Double` / `Float` / `java.util.Date` (UTC).

use num_bigint::BigInt;
use tributary_api::data::java_fmt::{double_to_string, float_to_string, to_java_string};
use tributary_api::data::{
    logical_physical_type, Date, Decimal, Schema, SchemaBuilder, SchemaRef, SchemaType, Struct,
    Time, Timestamp, Value,
};
use tributary_api::ConnectError;

/// The message of a [`ConnectError::Data`]; panics on any other result.
fn data_err<T: std::fmt::Debug>(r: Result<T, ConnectError>) -> String {
    match r {
        Err(ConnectError::Data(m)) => m,
        other => panic!("expected a DataException, got {other:?}"),
    }
}

/// A struct schema with a required INT32 `id`, an array of strings `tags`, an optional
/// STRING→INT64 map `m`, a Decimal(2) `d` and an INT32 `n` defaulting to 7.
fn person() -> SchemaRef {
    SchemaBuilder::struct_()
        .name("p")
        .field("id", Schema::int32_schema())
        .unwrap()
        .field(
            "tags",
            SchemaBuilder::array(Schema::string_schema()).build(),
        )
        .unwrap()
        .field(
            "m",
            SchemaBuilder::map(Schema::string_schema(), Schema::int64_schema())
                .optional()
                .build(),
        )
        .unwrap()
        .field("d", Decimal::schema(2))
        .unwrap()
        .field(
            "n",
            SchemaBuilder::int32()
                .default_value(Value::Int32(7))
                .unwrap()
                .build(),
        )
        .unwrap()
        .build()
}

// ---------------------------------------------------------------------------------------------
// SchemaBuilder
// ---------------------------------------------------------------------------------------------

#[test]
fn builder_creates_every_type_required_by_default() {
    let cases: Vec<(SchemaBuilder, SchemaType)> = vec![
        (SchemaBuilder::int8(), SchemaType::Int8),
        (SchemaBuilder::int16(), SchemaType::Int16),
        (SchemaBuilder::int32(), SchemaType::Int32),
        (SchemaBuilder::int64(), SchemaType::Int64),
        (SchemaBuilder::float32(), SchemaType::Float32),
        (SchemaBuilder::float64(), SchemaType::Float64),
        (SchemaBuilder::boolean(), SchemaType::Boolean),
        (SchemaBuilder::string(), SchemaType::String),
        (SchemaBuilder::bytes(), SchemaType::Bytes),
        (SchemaBuilder::struct_(), SchemaType::Struct),
        (
            SchemaBuilder::array(Schema::int8_schema()),
            SchemaType::Array,
        ),
        (
            SchemaBuilder::map(Schema::string_schema(), Schema::int8_schema()),
            SchemaType::Map,
        ),
        (SchemaBuilder::new(SchemaType::Float64), SchemaType::Float64),
    ];
    for (builder, ty) in cases {
        let s = builder.build();
        assert_eq!(s.schema_type, ty);
        assert!(!s.optional, "{ty} should be required by default");
        assert_eq!(s.default_value, None);
        assert_eq!(s.name, None);
        assert_eq!(s.version, None);
        assert_eq!(s.doc, None);
        assert_eq!(s.parameters, None);
        assert!(s.fields.is_empty());
    }
}

#[test]
fn builder_sets_element_key_and_value_schemas() {
    let arr = SchemaBuilder::array(Schema::optional_string_schema()).build();
    assert_eq!(arr.value_schema, Some(Schema::optional_string_schema()));
    assert_eq!(arr.key_schema, None);
    let map = SchemaBuilder::map(Schema::string_schema(), Schema::float64_schema()).build();
    assert_eq!(map.key_schema, Some(Schema::string_schema()));
    assert_eq!(map.value_schema, Some(Schema::float64_schema()));
}

#[test]
fn builder_metadata_and_optionality() {
    let s = SchemaBuilder::string()
        .name("com.example.Name")
        .version(3)
        .doc("a name")
        .optional()
        .build();
    assert_eq!(s.name.as_deref(), Some("com.example.Name"));
    assert_eq!(s.version, Some(3));
    assert_eq!(s.doc.as_deref(), Some("a name"));
    assert!(s.optional);
    assert!(
        !SchemaBuilder::string()
            .optional()
            .required()
            .build()
            .optional
    );
}

#[test]
fn predefined_schemas_match_builder_output() {
    assert_eq!(Schema::int32_schema(), SchemaBuilder::int32().build());
    assert_eq!(
        Schema::optional_bytes_schema(),
        SchemaBuilder::bytes().optional().build()
    );
    assert!(Schema::optional_float32_schema().optional);
    assert!(!Schema::boolean_schema().optional);
    assert_eq!(Schema::int16_schema().schema_type, SchemaType::Int16);
}

#[test]
fn parameters_keep_insertion_order_and_last_write_wins() {
    let s = SchemaBuilder::bytes()
        .parameter("zeta", "1")
        .parameter("alpha", "2")
        .parameter("mid", "3")
        .parameter("alpha", "4")
        .build();
    let params = s.parameters.as_ref().unwrap();
    let keys: Vec<&str> = params.keys().map(String::as_str).collect();
    assert_eq!(keys, ["zeta", "alpha", "mid"]);
    assert_eq!(params["alpha"], "4");
}

#[test]
fn default_value_is_validated_against_the_schema() {
    let s = SchemaBuilder::int32()
        .default_value(Value::Int32(5))
        .unwrap()
        .build();
    assert_eq!(s.default_value, Some(Value::Int32(5)));

    let err = data_err(SchemaBuilder::int32().default_value(Value::from("x")));
    assert!(err.starts_with("Invalid default value"), "{err}");
    assert!(
        err.contains("Invalid Java object for schema with type INT32: class java.lang.String"),
        "{err}"
    );
    // null is only a valid default for an optional schema
    assert!(SchemaBuilder::string().default_value(Value::Null).is_err());
    assert!(SchemaBuilder::string()
        .optional()
        .default_value(Value::Null)
        .is_ok());
    // the default of a nested type is checked element by element
    let err = data_err(
        SchemaBuilder::array(Schema::int64_schema())
            .default_value(Value::Array(vec![Value::Int64(1), Value::Int32(2)])),
    );
    assert!(err.contains("for element of array value"), "{err}");
}

#[test]
fn duplicate_field_is_an_error() {
    let err = data_err(
        SchemaBuilder::struct_()
            .field("a", Schema::int32_schema())
            .unwrap()
            .field("a", Schema::string_schema()),
    );
    assert_eq!(
        err,
        "Cannot create field because of field name duplication a"
    );
}

#[test]
fn field_on_non_struct_is_an_error() {
    for (b, ty) in [
        (SchemaBuilder::int32(), "INT32"),
        (SchemaBuilder::string(), "STRING"),
        (SchemaBuilder::array(Schema::int8_schema()), "ARRAY"),
    ] {
        let err = data_err(b.field("a", Schema::int32_schema()));
        assert_eq!(err, format!("Cannot create fields on type {ty}"));
    }
}

#[test]
fn fields_keep_declaration_order_and_indexes() {
    let s = person();
    let names: Vec<(&str, usize)> = s
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.index))
        .collect();
    assert_eq!(
        names,
        [("id", 0), ("tags", 1), ("m", 2), ("d", 3), ("n", 4)]
    );
    assert_eq!(s.field("d").unwrap().schema, Decimal::schema(2));
    assert!(s.field("nope").is_none());
}

#[test]
fn schema_type_names_round_trip_and_display_uppercase() {
    let all = [
        SchemaType::Int8,
        SchemaType::Int16,
        SchemaType::Int32,
        SchemaType::Int64,
        SchemaType::Float32,
        SchemaType::Float64,
        SchemaType::Boolean,
        SchemaType::String,
        SchemaType::Bytes,
        SchemaType::Array,
        SchemaType::Map,
        SchemaType::Struct,
    ];
    for t in all {
        assert_eq!(SchemaType::from_name(t.name()), Some(t));
        assert_eq!(t.to_string(), t.name().to_ascii_uppercase());
        assert_eq!(
            t.is_primitive(),
            !matches!(t, SchemaType::Array | SchemaType::Map | SchemaType::Struct)
        );
    }
    assert_eq!(SchemaType::Float32.name(), "float32");
    assert_eq!(SchemaType::from_name("float"), None);
    assert_eq!(SchemaType::from_name("INT32"), None);
}

#[test]
fn schema_display_is_connect_schema_to_string() {
    assert_eq!(Schema::int32_schema().to_string(), "Schema{INT32}");
    assert_eq!(
        Date::schema().to_string(),
        "Schema{org.apache.kafka.connect.data.Date:INT32}"
    );
}

// ---------------------------------------------------------------------------------------------
// Struct and value validation
// ---------------------------------------------------------------------------------------------

#[test]
fn struct_put_and_get() {
    let st = Struct::new(person())
        .unwrap()
        .put("id", 42)
        .unwrap()
        .put("tags", Value::Array(vec!["a".into(), "b".into()]))
        .unwrap();
    assert_eq!(st.get("id"), Some(&Value::Int32(42)));
    assert_eq!(
        st.get("tags"),
        Some(&Value::Array(vec!["a".into(), "b".into()]))
    );
    // unset optional field reads as null; unset field with default reads as the default
    assert_eq!(st.get("m"), Some(&Value::Null));
    assert_eq!(st.get("n"), Some(&Value::Int32(7)));
    // ... while the raw slot stays null
    assert_eq!(st.get_by_index(4), &Value::Null);
    assert_eq!(st.get("missing"), None);
    // overwriting replaces the value
    let st = st.put("id", 43).unwrap();
    assert_eq!(st.get("id"), Some(&Value::Int32(43)));
    // `d` is still unset
    assert!(data_err(st.validate()).contains("field: \"d\""));
}

#[test]
fn struct_put_wrong_type_names_the_field() {
    let err = data_err(Struct::new(person()).unwrap().put("id", "x"));
    assert_eq!(
        err,
        "Invalid Java object for schema with type INT32: class java.lang.String for field: \"id\""
    );
    let err = data_err(Struct::new(person()).unwrap().put("id", Value::Int64(1)));
    assert_eq!(
        err,
        "Invalid Java object for schema with type INT32: class java.lang.Long for field: \"id\""
    );
}

#[test]
fn struct_put_null_into_required_field_is_rejected_even_with_a_default() {
    let err = data_err(Struct::new(person()).unwrap().put("id", Value::Null));
    assert_eq!(
        err,
        "Invalid value: null used for required field: \"id\", schema type: INT32"
    );
    let err = data_err(Struct::new(person()).unwrap().put("n", Value::Null));
    assert_eq!(
        err,
        "Invalid value: null used for required field: \"n\", schema type: INT32"
    );
    assert!(Struct::new(person()).unwrap().put("m", Value::Null).is_ok());
}

#[test]
fn struct_put_unknown_field() {
    let err = data_err(Struct::new(person()).unwrap().put("zz", 1));
    assert_eq!(err, "zz is not a valid field name");
}

#[test]
fn struct_new_requires_a_struct_schema() {
    let err = data_err(Struct::new(Schema::int32_schema()));
    assert_eq!(err, "Not a struct schema: Schema{INT32}");
    let err = data_err(Struct::new(Date::schema()));
    assert_eq!(
        err,
        "Not a struct schema: Schema{org.apache.kafka.connect.data.Date:INT32}"
    );
}

#[test]
fn struct_validate_reports_first_missing_required_field() {
    let st = Struct::new(person()).unwrap();
    assert_eq!(
        data_err(st.validate()),
        "Invalid value: null used for required field: \"id\", schema type: INT32"
    );
    let st = st.put("id", 1).unwrap();
    assert_eq!(
        data_err(st.validate()),
        "Invalid value: null used for required field: \"tags\", schema type: ARRAY"
    );
    let st = st.put("tags", Value::Array(vec![])).unwrap();
    assert_eq!(
        data_err(st.validate()),
        "Invalid value: null used for required field: \"d\", schema type: BYTES"
    );
    // `m` is optional and `n` has a default: both may stay unset
    let st = st.put("d", Value::Decimal(Decimal::new(150, 2))).unwrap();
    assert!(st.validate().is_ok());
}

#[test]
fn array_elements_are_validated_with_their_location() {
    let err = data_err(
        Struct::new(person())
            .unwrap()
            .put("tags", Value::Array(vec!["a".into(), Value::Int32(1)])),
    );
    assert_eq!(
        err,
        "Invalid Java object for schema with type STRING: class java.lang.Integer for element of array field: \"tags\""
    );
    let err = data_err(
        Struct::new(person())
            .unwrap()
            .put("tags", Value::Array(vec!["a".into(), Value::Null])),
    );
    assert_eq!(
        err,
        "Invalid value: null used for required element of array field: \"tags\", schema type: STRING"
    );
    let top = SchemaBuilder::array(Schema::int8_schema()).build();
    assert_eq!(
        data_err(top.validate_value(&Value::Array(vec![Value::Int8(1), Value::Int32(2)]))),
        "Invalid Java object for schema with type INT8: class java.lang.Integer for element of array value"
    );
    // optional elements may be null
    let opt = SchemaBuilder::array(Schema::optional_int8_schema()).build();
    assert!(opt
        .validate_value(&Value::Array(vec![Value::Null, Value::Int8(3)]))
        .is_ok());
}

#[test]
fn map_keys_and_values_are_validated_with_their_location() {
    let err = data_err(Struct::new(person()).unwrap().put(
        "m",
        Value::Map(vec![("k".into(), Value::String("v".into()))]),
    ));
    assert_eq!(
        err,
        "Invalid Java object for schema with type INT64: class java.lang.String for value of map field: \"m\""
    );
    let err = data_err(
        Struct::new(person())
            .unwrap()
            .put("m", Value::Map(vec![(Value::Int32(1), Value::Int64(2))])),
    );
    assert_eq!(
        err,
        "Invalid Java object for schema with type STRING: class java.lang.Integer for key of map field: \"m\""
    );
    assert!(Struct::new(person())
        .unwrap()
        .put("m", Value::Map(vec![("k".into(), Value::Int64(2))]))
        .is_ok());
}

#[test]
fn nested_structs_are_validated() {
    let inner = SchemaBuilder::struct_()
        .field("x", Schema::int32_schema())
        .unwrap()
        .build();
    let outer = SchemaBuilder::struct_()
        .field("in", inner.clone())
        .unwrap()
        .build();
    // an incomplete inner struct fails with the inner field's name
    let err = data_err(
        Struct::new(outer.clone())
            .unwrap()
            .put("in", Value::Struct(Struct::new(inner.clone()).unwrap())),
    );
    assert_eq!(
        err,
        "Invalid value: null used for required field: \"x\", schema type: INT32"
    );
    // a struct of another schema does not fit
    let other = SchemaBuilder::struct_()
        .field("y", Schema::int32_schema())
        .unwrap()
        .build();
    let err = data_err(Struct::new(outer.clone()).unwrap().put(
        "in",
        Value::Struct(Struct::new(other).unwrap().put("y", 1).unwrap()),
    ));
    assert_eq!(err, "Struct schemas do not match.");
    // a complete inner struct is accepted and the whole validates
    let ok = Struct::new(outer)
        .unwrap()
        .put(
            "in",
            Value::Struct(Struct::new(inner).unwrap().put("x", 5).unwrap()),
        )
        .unwrap();
    assert!(ok.validate().is_ok());
    // arrays of structs validate every element
    let point = SchemaBuilder::struct_()
        .field("x", Schema::int32_schema())
        .unwrap()
        .build();
    let arr = SchemaBuilder::array(point.clone()).build();
    let good = Value::Struct(Struct::new(point.clone()).unwrap().put("x", 1).unwrap());
    let bad = Value::Struct(Struct::new(point).unwrap());
    assert!(arr
        .validate_value(&Value::Array(vec![good.clone()]))
        .is_ok());
    assert!(arr.validate_value(&Value::Array(vec![good, bad])).is_err());
}

#[test]
fn top_level_values_use_the_value_location() {
    assert_eq!(
        data_err(Schema::int32_schema().validate_value(&Value::from("x"))),
        "Invalid Java object for schema with type INT32: class java.lang.String for value"
    );
    assert_eq!(
        data_err(Schema::int32_schema().validate_value(&Value::Null)),
        "Invalid value: null used for required value, schema type: INT32"
    );
    assert_eq!(
        data_err(Schema::string_schema().validate_value(&Value::Bytes(vec![1]))),
        "Invalid Java object for schema with type STRING: class [B for value"
    );
    assert!(Schema::optional_int32_schema()
        .validate_value(&Value::Null)
        .is_ok());
}

#[test]
fn every_physical_type_accepts_its_value_and_rejects_others() {
    let samples: Vec<(SchemaRef, Value)> = vec![
        (Schema::int8_schema(), Value::Int8(1)),
        (Schema::int16_schema(), Value::Int16(1)),
        (Schema::int32_schema(), Value::Int32(1)),
        (Schema::int64_schema(), Value::Int64(1)),
        (Schema::float32_schema(), Value::Float32(1.0)),
        (Schema::float64_schema(), Value::Float64(1.0)),
        (Schema::boolean_schema(), Value::Boolean(true)),
        (Schema::string_schema(), Value::from("s")),
        (Schema::bytes_schema(), Value::Bytes(vec![0])),
        (
            SchemaBuilder::array(Schema::int8_schema()).build(),
            Value::Array(vec![]),
        ),
        (
            SchemaBuilder::map(Schema::string_schema(), Schema::int8_schema()).build(),
            Value::Map(vec![]),
        ),
    ];
    for (i, (schema, value)) in samples.iter().enumerate() {
        for (j, (_, other)) in samples.iter().enumerate() {
            let r = schema.validate_value(other);
            assert_eq!(
                r.is_ok(),
                i == j,
                "{} with {other:?}: {r:?}",
                schema.schema_type
            );
        }
        assert!(schema.validate_value(value).is_ok());
    }
}

// ---------------------------------------------------------------------------------------------
// Logical types
// ---------------------------------------------------------------------------------------------

#[test]
fn decimal_schema_shape() {
    let s = Decimal::schema(4);
    assert_eq!(s.schema_type, SchemaType::Bytes);
    assert_eq!(
        s.name.as_deref(),
        Some("org.apache.kafka.connect.data.Decimal")
    );
    assert_eq!(s.version, Some(1));
    assert_eq!(s.parameters.as_ref().unwrap()["scale"], "4");
    assert!(Decimal::builder(1).optional().build().optional);
    assert_eq!(
        logical_physical_type(Decimal::LOGICAL_NAME),
        Some(SchemaType::Bytes)
    );
}

#[test]
fn decimal_from_and_to_logical_round_trip() {
    // (unscaled, scale, BigInteger.toByteArray())
    let cases: &[(i64, i32, &[u8])] = &[
        (1234, 8, &[4, 0xD2]),
        (-1234, 8, &[0xFB, 0x2E]),
        (12345, 2, &[48, 57]),
        (-12345, 2, &[0xCF, 0xC7]),
        (-1, 1, &[0xFF]),
        (0, 3, &[0]),
        (128, 0, &[0, 128]),
        (-128, 0, &[0x80]),
        (1, -3, &[1]),
    ];
    for &(unscaled, scale, bytes) in cases {
        let schema = Decimal::schema(scale);
        let d = Decimal::new(unscaled, scale);
        let encoded = Decimal::from_logical(&schema, &d).unwrap();
        assert_eq!(encoded, bytes, "{unscaled}E-{scale}");
        let decoded = Decimal::to_logical(&schema, &encoded).unwrap();
        assert_eq!(decoded, d);
        assert_eq!(decoded.unscaled, BigInt::from(unscaled));
    }
}

#[test]
fn decimal_scale_mismatch_and_missing_scale() {
    let err = data_err(Decimal::from_logical(
        &Decimal::schema(2),
        &Decimal::new(15, 1),
    ));
    assert_eq!(
        err,
        "Decimal value has mismatching scale for given Decimal schema. Schema has scale 2, value has scale 1."
    );
    let no_scale = SchemaBuilder::bytes().name(Decimal::LOGICAL_NAME).build();
    assert_eq!(
        data_err(Decimal::from_logical(&no_scale, &Decimal::new(1, 0))),
        "Invalid Decimal schema: scale parameter not found."
    );
    assert_eq!(
        data_err(Decimal::to_logical(&no_scale, &[1])),
        "Invalid Decimal schema: scale parameter not found."
    );
}

#[test]
fn decimal_values_validate_like_connect() {
    let s = person();
    // Connect checks the class only; the scale is checked when encoding
    assert!(Struct::new(s.clone())
        .unwrap()
        .put("d", Value::Decimal(Decimal::new(15, 1)))
        .is_ok());
    let err = data_err(Struct::new(s).unwrap().put("d", "1.0"));
    assert_eq!(
        err,
        "Invalid Java object for schema \"org.apache.kafka.connect.data.Decimal\" with type BYTES: class java.lang.String for field: \"d\""
    );
    // a decimal is not a valid value of a plain BYTES schema
    assert!(Schema::bytes_schema()
        .validate_value(&Value::Decimal(Decimal::new(1, 0)))
        .is_err());
}

#[test]
fn decimal_to_string_matches_big_decimal() {
    // (unscaled, scale, BigDecimal.toString(), BigDecimal.toPlainString()) from the JDK
    let cases: &[(i64, i32, &str, &str)] = &[
        (1234, 8, "0.00001234", "0.00001234"),
        (1234, 10, "1.234E-7", "0.0000001234"),
        (1, -3, "1E+3", "1000"),
        (123, -2, "1.23E+4", "12300"),
        (0, -2, "0E+2", "0"),
        (0, 8, "0E-8", "0.00000000"),
        (-1234, 8, "-0.00001234", "-0.00001234"),
        (-5, 10, "-5E-10", "-0.0000000005"),
        (-123, -2, "-1.23E+4", "-12300"),
        (12345, 2, "123.45", "123.45"),
        (-12345, 2, "-123.45", "-123.45"),
        (5, 0, "5", "5"),
        (-1, 1, "-0.1", "-0.1"),
        (1, 6, "0.000001", "0.000001"),
        (1, 7, "1E-7", "0.0000001"),
        (100, 0, "100", "100"),
    ];
    for &(unscaled, scale, display, plain) in cases {
        let d = Decimal::new(unscaled, scale);
        assert_eq!(d.to_string(), display, "toString of {unscaled}E-{scale}");
        assert_eq!(
            d.to_plain_string(),
            plain,
            "toPlainString of {unscaled}E-{scale}"
        );
        assert_eq!(Value::Decimal(d).to_string(), display);
    }
}

#[test]
fn decimal_parse_keeps_scale() {
    assert_eq!(Decimal::parse("-12.345").unwrap(), Decimal::new(-12345, 3));
    assert_eq!(Decimal::parse("1E+3").unwrap(), Decimal::new(1, -3));
    assert_eq!(Decimal::parse("1.234E-7").unwrap(), Decimal::new(1234, 10));
    assert_eq!(Decimal::parse("0.00").unwrap(), Decimal::new(0, 2));
    assert_eq!(
        data_err(Decimal::parse("abc")),
        "Invalid decimal: abc".to_string()
    );
    for s in ["0.00001234", "-1.23E+4", "5", "-0.1"] {
        assert_eq!(Decimal::parse(s).unwrap().to_string(), s);
    }
}

#[test]
fn temporal_schemas() {
    let cases: [(SchemaRef, &str, SchemaType); 3] = [
        (Date::schema(), Date::LOGICAL_NAME, SchemaType::Int32),
        (Time::schema(), Time::LOGICAL_NAME, SchemaType::Int32),
        (
            Timestamp::schema(),
            Timestamp::LOGICAL_NAME,
            SchemaType::Int64,
        ),
    ];
    for (schema, name, ty) in cases {
        assert_eq!(schema.schema_type, ty);
        assert_eq!(schema.name.as_deref(), Some(name));
        assert_eq!(schema.version, Some(1));
        assert!(!schema.optional);
        assert_eq!(logical_physical_type(name), Some(ty));
    }
    assert_eq!(Date::LOGICAL_NAME, "org.apache.kafka.connect.data.Date");
    assert_eq!(Time::LOGICAL_NAME, "org.apache.kafka.connect.data.Time");
    assert_eq!(
        Timestamp::LOGICAL_NAME,
        "org.apache.kafka.connect.data.Timestamp"
    );
    assert_eq!(logical_physical_type("com.example.Other"), None);
    assert!(Date::builder().optional().build().optional);
}

#[test]
fn temporal_values_validate() {
    assert!(Date::schema().validate_value(&Value::Date(19000)).is_ok());
    assert!(Date::schema().validate_value(&Value::Int32(19000)).is_ok());
    assert!(Time::schema().validate_value(&Value::Time(1000)).is_ok());
    assert!(Timestamp::schema()
        .validate_value(&Value::Timestamp(1))
        .is_ok());
    assert!(Timestamp::schema().validate_value(&Value::Int64(1)).is_ok());
    assert_eq!(
        data_err(Date::schema().validate_value(&Value::from("x"))),
        "Invalid Java object for schema \"org.apache.kafka.connect.data.Date\" with type INT32: class java.lang.String for value"
    );
    assert!(Timestamp::schema()
        .validate_value(&Value::Int32(1))
        .is_err());
    assert!(Date::schema().validate_value(&Value::Timestamp(1)).is_err());
}

// ---------------------------------------------------------------------------------------------
// Java text forms (String.valueOf)
// ---------------------------------------------------------------------------------------------

#[test]
fn value_display_prints_doubles_like_java() {
    let cases: &[(f64, &str)] = &[
        (1e7, "1.0E7"),
        (1e-5, "1.0E-5"),
        (100.0, "100.0"),
        (0.001, "0.001"),
        (123456789.0, "1.23456789E8"),
        (-0.0, "-0.0"),
        (0.1, "0.1"),
        (-1.5, "-1.5"),
        (f64::NAN, "NaN"),
        (f64::INFINITY, "Infinity"),
        (f64::NEG_INFINITY, "-Infinity"),
    ];
    for &(v, want) in cases {
        assert_eq!(Value::Float64(v).to_string(), want, "{v:e}");
        assert_eq!(double_to_string(v), want);
    }
}

#[test]
fn value_display_prints_floats_like_java() {
    let cases: &[(f32, &str)] = &[
        (0.1, "0.1"),
        (1e7, "1.0E7"),
        (100.0, "100.0"),
        (1.23, "1.23"),
        (1e-5, "1.0E-5"),
        (f32::NAN, "NaN"),
        (f32::INFINITY, "Infinity"),
    ];
    for &(v, want) in cases {
        assert_eq!(Value::Float32(v).to_string(), want, "{v:e}");
        assert_eq!(float_to_string(v), want);
    }
}

#[test]
fn value_display_scalars() {
    assert_eq!(Value::Null.to_string(), "null");
    assert_eq!(Value::Int8(-8).to_string(), "-8");
    assert_eq!(Value::Int16(300).to_string(), "300");
    assert_eq!(Value::Int32(i32::MIN).to_string(), "-2147483648");
    assert_eq!(Value::Int64(i64::MAX).to_string(), "9223372036854775807");
    assert_eq!(Value::Boolean(true).to_string(), "true");
    assert_eq!(Value::from("plain text").to_string(), "plain text");
    assert_eq!(Value::Bytes(vec![1, 2, 255]).to_string(), "[1, 2, 255]");
}

#[test]
fn value_display_temporal_values_as_java_util_date_in_utc() {
    assert_eq!(
        Value::Date(19000).to_string(),
        "Sat Jan 08 00:00:00 UTC 2022"
    );
    assert_eq!(
        Value::Time(3_723_004).to_string(),
        "Thu Jan 01 01:02:03 UTC 1970"
    );
    assert_eq!(
        Value::Timestamp(1_700_000_000_123).to_string(),
        "Tue Nov 14 22:13:20 UTC 2023"
    );
    assert_eq!(
        Value::Timestamp(-1).to_string(),
        "Wed Dec 31 23:59:59 UTC 1969"
    );
}

#[test]
fn value_display_lists_and_maps() {
    let list = Value::Array(vec![
        Value::Int32(1),
        Value::Float64(2.5),
        Value::Null,
        Value::from("x"),
    ]);
    assert_eq!(list.to_string(), "[1, 2.5, null, x]");
    assert_eq!(Value::Array(vec![]).to_string(), "[]");
    let map = Value::Map(vec![
        ("a".into(), Value::Float32(1.0)),
        (
            Value::Int32(2),
            Value::Array(vec![Value::Int64(1), Value::Int64(2)]),
        ),
    ]);
    assert_eq!(map.to_string(), "{a=1.0, 2=[1, 2]}");
    assert_eq!(Value::Map(vec![]).to_string(), "{}");
}

#[test]
fn value_display_structs_skip_null_fields() {
    let s: SchemaRef = SchemaBuilder::struct_()
        .field("a", Schema::int32_schema())
        .unwrap()
        .field("b", Schema::optional_string_schema())
        .unwrap()
        .field("c", Schema::float64_schema())
        .unwrap()
        .build();
    let st = Struct::new(s.clone())
        .unwrap()
        .put("a", 1)
        .unwrap()
        .put("c", Value::Float64(1e7))
        .unwrap();
    assert_eq!(st.to_string(), "Struct{a=1,c=1.0E7}");
    assert_eq!(Value::Struct(st.clone()).to_string(), "Struct{a=1,c=1.0E7}");
    assert_eq!(to_java_string(&Value::Struct(st)), "Struct{a=1,c=1.0E7}");
    assert_eq!(Struct::new(s.clone()).unwrap().to_string(), "Struct{}");

    // nested: a struct inside a list inside a struct
    let outer = SchemaBuilder::struct_()
        .field("items", SchemaBuilder::array(s.clone()).build())
        .unwrap()
        .field("name", Schema::string_schema())
        .unwrap()
        .build();
    let inner = Struct::new(s)
        .unwrap()
        .put("a", 2)
        .unwrap()
        .put("b", "hi")
        .unwrap()
        .put("c", Value::Float64(0.5))
        .unwrap();
    let st = Struct::new(outer)
        .unwrap()
        .put("items", Value::Array(vec![Value::Struct(inner)]))
        .unwrap()
        .put("name", "n")
        .unwrap();
    assert_eq!(
        st.to_string(),
        "Struct{items=[Struct{a=2,b=hi,c=0.5}],name=n}"
    );
}

#[test]
fn value_helpers() {
    assert!(Value::Null.is_null());
    assert!(!Value::Int32(0).is_null());
    assert_eq!(Value::from("s").as_str(), Some("s"));
    assert_eq!(Value::Int32(1).as_str(), None);
    assert_eq!(Value::from(3i64), Value::Int64(3));
    assert_eq!(Value::from(true), Value::Boolean(true));
    assert_eq!(Value::from(String::from("o")), Value::String("o".into()));
    assert_eq!(Value::Date(1).inferred_type(), Some(SchemaType::Int32));
    assert_eq!(Value::Timestamp(1).inferred_type(), Some(SchemaType::Int64));
    assert_eq!(
        Value::Decimal(Decimal::new(1, 0)).inferred_type(),
        Some(SchemaType::Bytes)
    );
    assert_eq!(Value::Null.inferred_type(), None);
    assert_eq!(Value::Bytes(vec![]).kind_name(), "[B");
    assert_eq!(
        Value::Struct(Struct::new(person()).unwrap()).kind_name(),
        "org.apache.kafka.connect.data.Struct"
    );
}
