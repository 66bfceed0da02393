use super::*;

fn text(bytes: &[u8]) -> Node {
    parse_json(bytes).unwrap().unwrap()
}

#[test]
fn a_null_default_is_no_default() {
    // A schema whose default is null (set field by field, not through the builder, which
    // clears it) is written as one without a default, not by recursing into the default.
    let mut schema = Schema::new(SchemaType::String);
    schema.optional = true;
    schema.default_value = Some(Value::Null);
    let schema = Arc::new(schema);
    let c = JsonConverter::new_schemaless();
    assert_eq!(
        c.serialize(Some(&schema), &Value::Null).unwrap().as_deref(),
        Some(&b"null"[..])
    );
    let built = tributary_api::data::SchemaBuilder::string()
        .optional()
        .default_value(Value::Null)
        .unwrap()
        .build();
    assert_eq!(built.default_value, None);
}

#[test]
fn parser_keeps_number_kinds() {
    assert_eq!(text(b"7"), Node::Int(7));
    assert_eq!(text(b"007"), Node::Int(7));
    assert_eq!(text(b"3000000000"), Node::Long(3_000_000_000));
    assert!(matches!(text(b"12345678901234567890"), Node::BigInt(_)));
    assert_eq!(text(b"1.50"), Node::Decimal(Decimal::new(150, 2)));
    assert_eq!(text(b"1E2"), Node::Decimal(Decimal::new(1, -2)));
    assert_eq!(parse_json(b"  ").unwrap(), None);
    assert!(parse_json(b"{").is_err());
    assert!(parse_json(b"\"a\x01\"").is_err());
}

#[test]
fn narrowing_follows_java() {
    assert_eq!(text(b"300").int_value() as i8, 44);
    assert_eq!(text(b"12.9").int_value(), 12);
    assert_eq!(text(b"-12.9").int_value(), -12);
    assert_eq!(text(b"18446744073709551617").long_value(), 1);
    assert_eq!(
        text(b"12345678901234567890").long_value(),
        -6101065172474983726
    );
}

/// `BigDecimal.longValue()` by its definition: the integer part computed in full.
fn naive_long_value(d: &Decimal) -> i64 {
    let int_part = if d.scale <= 0 {
        &d.unscaled * BigInt::from(10u8).pow((-d.scale) as u32)
    } else {
        &d.unscaled / BigInt::from(10u8).pow(d.scale as u32)
    };
    low_i64(&int_part)
}

#[test]
fn decimal_narrowing_skips_only_powers_of_ten_that_cannot_matter() {
    let unscaled = [
        BigInt::from(0),
        BigInt::from(1),
        BigInt::from(-7),
        BigInt::from(123_456_789),
        BigInt::from(-987_654_321_987_654_321i64),
        "340282366920938463463374607431768211457".parse().unwrap(),
    ];
    for u in &unscaled {
        for scale in -80..=80 {
            let d = Decimal::new(u.clone(), scale);
            assert_eq!(decimal_low_i64(&d), naive_long_value(&d), "{d:?}");
        }
    }
}

/// Numbers whose exponent alone asks for a giant integer (issue #30, case 6). Java
/// (Jackson 2.19 as Connect 4.1.1 configures it, JDK 17) reads `1e700000000` at once: 0
/// under an integer schema (`BigDecimal.longValue()`), itself under a Decimal schema; it
/// refuses an exponent beyond an int and a number of more than 1000 digits while parsing.
/// The conversions run on a thread given a generous deadline, so the test fails rather
/// than hangs when a giant number is computed.
#[test]
fn giant_exponents_are_read_without_computing_giant_numbers() {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let c = JsonConverter::new();
        let read = |schema: &str, payload: &str| {
            c.deserialize(Some(
                format!(r#"{{"schema":{schema},"payload":{payload}}}"#).as_bytes(),
            ))
            .map(|sv| sv.value)
        };
        let decimal = r#"{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}}"#;
        let mut out = Vec::new();
        for payload in [
            "1e700000000",
            "-1e700000000",
            "1.5e700000000",
            "1e-700000000",
        ] {
            out.push(read(r#"{"type":"int64"}"#, payload));
            out.push(read(r#"{"type":"int32"}"#, payload));
            out.push(read(r#"{"type":"int8"}"#, payload));
        }
        out.push(read(decimal, "1e700000000"));
        out.push(read(decimal, "1e2"));
        out.push(read(r#"{"type":"int64"}"#, "1e700000000000000"));
        out.push(read(r#"{"type":"int64"}"#, &"1".repeat(1001)));
        out.push(read(
            r#"{"type":"int64"}"#,
            &format!("{}e11", "1".repeat(999)),
        ));
        out.push(read(
            r#"{"type":"int64"}"#,
            &format!("{}e1", "1".repeat(999)),
        ));
        // The receiver is gone only when the test has already failed.
        tx.send(out).ok();
    });
    let out = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the conversions finish");
    let mut out = out.into_iter();
    for _ in 0..4 {
        assert_eq!(out.next().unwrap().unwrap(), Value::Int64(0));
        assert_eq!(out.next().unwrap().unwrap(), Value::Int32(0));
        assert_eq!(out.next().unwrap().unwrap(), Value::Int8(0));
    }
    // Too far from the schema's scale to rescale: the number's own scale, as in Java.
    assert_eq!(
        out.next().unwrap().unwrap(),
        Value::Decimal(Decimal::new(1, -700_000_000))
    );
    assert_eq!(
        out.next().unwrap().unwrap(),
        Value::Decimal(Decimal::new(10_000, 2))
    );
    for _ in 0..3 {
        match out.next().unwrap() {
            Err(ConnectError::Data(message)) => assert_eq!(
                message,
                "Converting byte[] to Kafka Connect data failed due to serialization error: "
            ),
            other => panic!("{other:?}"),
        }
    }
    // 999 digits and one of exponent: within Jackson's 1000.
    assert!(matches!(out.next().unwrap().unwrap(), Value::Int64(_)));
    assert_eq!(
        parse_json("1".repeat(1001).as_bytes()).unwrap_err(),
        "Number value length (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNumberLength()`)"
    );
}

#[test]
fn the_envelope_follows_each_records_schema_across_the_last_schema_cache() {
    use tributary_api::data::Schema;
    let c = JsonConverter::new();
    let int = Schema::int32_schema();
    let text = Schema::optional_string_schema();
    let write = |s: &SchemaRef, v: Value| {
        String::from_utf8(c.serialize(Some(s), &v).unwrap().unwrap()).unwrap()
    };
    for _ in 0..2 {
        assert_eq!(
            write(&int, Value::Int32(7)),
            r#"{"schema":{"type":"int32","optional":false},"payload":7}"#
        );
        assert_eq!(
            write(&int, Value::Int32(8)),
            r#"{"schema":{"type":"int32","optional":false},"payload":8}"#
        );
        assert_eq!(
            write(&text, Value::from("a\"b")),
            r#"{"schema":{"type":"string","optional":true},"payload":"a\"b"}"#
        );
    }
    assert_eq!(
        c.serialize(None, &Value::from("x")).unwrap().unwrap(),
        br#"{"schema":null,"payload":"x"}"#
    );
}

/// Envelopes of Debezium's shape: a struct key and an optional struct value.
fn change_event(id: i32, name: &str) -> (Vec<u8>, Vec<u8>) {
    let key = format!(
        r#"{{"schema":{{"type":"struct","fields":[{{"type":"int32","optional":false,"field":"id"}}],"optional":false,"name":"db.public.t.Key"}},"payload":{{"id":{id}}}}}"#
    );
    let value = format!(
        r#"{{"schema":{{"type":"struct","fields":[{{"type":"int32","optional":false,"field":"id"}},{{"type":"string","optional":true,"field":"name"}},{{"type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp","version":1,"field":"ts"}}],"optional":true,"name":"db.public.t.Value"}},"payload":{{"id":{id},"name":"{name}","ts":1700000000000000}}}}"#
    );
    (key.into_bytes(), value.into_bytes())
}

#[test]
fn envelopes_with_a_schema_read_before_share_its_instance_and_read_as_without_the_cache() {
    let cached = JsonConverter::new();
    let uncached = JsonConverter {
        schemas_cache_size: 0,
        ..JsonConverter::new()
    };
    let mut keys = Vec::new();
    let mut values = Vec::new();
    for id in 0..3 {
        let (key, value) = change_event(id, &format!("n\\u00e9{id}"));
        let k = cached.deserialize(Some(&key)).unwrap();
        let v = cached.deserialize(Some(&value)).unwrap();
        assert_eq!(k, uncached.deserialize(Some(&key)).unwrap());
        assert_eq!(v, uncached.deserialize(Some(&value)).unwrap());
        keys.push(k.schema.unwrap());
        values.push(v.schema.unwrap());
    }
    // Key and value schemas alternate; each text keeps one instance.
    assert!(keys.iter().all(|s| Arc::ptr_eq(s, &keys[0])));
    assert!(values.iter().all(|s| Arc::ptr_eq(s, &values[0])));
    assert!(!Arc::ptr_eq(&keys[0], &values[0]));
    // Without the cache every record builds its own.
    let (key, _) = change_event(9, "x");
    let a = uncached.deserialize(Some(&key)).unwrap().schema.unwrap();
    let b = uncached.deserialize(Some(&key)).unwrap().schema.unwrap();
    assert!(!Arc::ptr_eq(&a, &b));
}

#[test]
fn envelopes_laid_out_otherwise_or_broken_read_as_without_the_cache() {
    let cached = JsonConverter::new();
    let uncached = JsonConverter {
        schemas_cache_size: 0,
        ..JsonConverter::new()
    };
    let schema = r#"{"type":"struct","fields":[{"type":"string","optional":true,"field":"s"}],"optional":false}"#;
    let inputs = [
        format!(r#" {{ "schema" : {schema} , "payload" : {{"s":"a}}]\"b"}} }} "#),
        format!(r#"{{"payload":{{"s":"x"}},"schema":{schema}}}"#),
        format!(r#"{{"sch\u0065ma":{schema},"payload":{{"s":"x"}}}}"#),
        format!(r#"{{"schema":{schema},"payload":{{"s":"x"}}}} trailing"#),
        format!(r#"{{"schema":{schema},"payload":{{"s":"x"}},"extra":1}}"#),
        format!(r#"{{"schema":{schema},"payload":{{"s":1}}}}"#),
        format!(r#"{{"schema":{schema},"payload":{{"s":"x"}}"#),
        format!(r#"{{"schema":{schema}]],"payload":{{"s":"x"}}}}"#),
        r#"{"schema":{"type":"nope"},"payload":1}"#.to_string(),
        r#"{"schema":{"type":"int32"}},"payload":1}"#.to_string(),
        r#"{"schema":null,"payload":{"a":[1,2]}}"#.to_string(),
        r#"{"schema":"int32","payload":1}"#.to_string(),
        r#"{"schema":{"type":"int32","optional":false},"payload":7}"#.to_string(),
    ];
    // Twice, so that the second pass meets the schemas the first one cached.
    for _ in 0..2 {
        for input in &inputs {
            let got = cached.deserialize(Some(input.as_bytes()));
            let want = uncached.deserialize(Some(input.as_bytes()));
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "{input}"),
                (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{input}"),
                (g, w) => panic!("{input}: {g:?} against {w:?}"),
            }
        }
    }
}

proptest::proptest! {
    /// Envelopes with bytes changed, inserted or removed (broken, re-laid-out or with
    /// another schema text) read as they do with the cache off: the same value, or the
    /// same error. The converter keeps its cache across cases, so the schemas cached by
    /// earlier mutations are met again. (No `e` is inserted: an exponent put before a
    /// long run of digits makes a number whose reading takes minutes either way.)
    #[test]
    fn mutated_envelopes_read_as_without_the_cache(
        which in 0usize..2,
        edits in proptest::collection::vec((0usize..4000, 0u8..3, proptest::sample::select(
            b"{}[],:\" \\0123456789.nulltrfsachmpyod-".to_vec())), 0..4),
    ) {
        thread_local! {
            static CACHED: JsonConverter = JsonConverter::new();
        }
        let (key, value) = change_event(7, "x\\\"y");
        let mut bytes = if which == 0 { key } else { value };
        for (at, kind, b) in edits {
            let at = at % (bytes.len() + 1);
            match kind {
                0 if at < bytes.len() => bytes[at] = b,
                1 => bytes.insert(at, b),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        let uncached = JsonConverter {
            schemas_cache_size: 0,
            ..JsonConverter::new()
        };
        let want = uncached.deserialize(Some(&bytes));
        let got = CACHED.with(|c| c.deserialize(Some(&bytes)));
        match (got, want) {
            (Ok(g), Ok(w)) => proptest::prop_assert_eq!(g, w),
            (Err(g), Err(w)) => proptest::prop_assert_eq!(g.to_string(), w.to_string()),
            (g, w) => proptest::prop_assert!(false, "{:?} against {:?}", g, w),
        }
    }
}

#[test]
fn the_schema_text_cache_keeps_the_most_recent_texts() {
    let c = JsonConverter::new();
    let envelope = |n: usize| {
        format!(r#"{{"schema":{{"type":"int32","optional":false,"name":"s{n}"}},"payload":{n}}}"#)
    };
    let first = c.deserialize(Some(envelope(0).as_bytes())).unwrap().schema;
    for n in 1..SCHEMA_TEXT_CACHE_MAX {
        c.deserialize(Some(envelope(n).as_bytes())).unwrap();
    }
    // Still kept (the cache is full, schema 0 the least recent) ...
    let again = c.deserialize(Some(envelope(0).as_bytes())).unwrap().schema;
    assert!(Arc::ptr_eq(
        first.as_ref().unwrap(),
        again.as_ref().unwrap()
    ));
    // ... and moved to the front: one more text drops schema 1, not schema 0.
    c.deserialize(Some(envelope(SCHEMA_TEXT_CACHE_MAX).as_bytes()))
        .unwrap();
    let kept = c.deserialize(Some(envelope(0).as_bytes())).unwrap().schema;
    assert!(Arc::ptr_eq(first.as_ref().unwrap(), kept.as_ref().unwrap()));
    assert_eq!(c.schema_text.0.lock().unwrap().len(), SCHEMA_TEXT_CACHE_MAX);
    assert!(c
        .schema_text
        .get(
            envelope(1)[10..]
                .split(",\"payload")
                .next()
                .unwrap()
                .as_bytes()
        )
        .is_none());
}

#[test]
fn strings_escape_as_jackson() {
    let mut out = Vec::new();
    write_string(&mut out, "a\"\\/\n\u{1}\u{7f}é😀");
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "\"a\\\"\\\\/\\n\\u0001\u{7f}é\\uD83D\\uDE00\""
    );
}

/// KIP-1054's `schema.content`: with schemas enabled, the bytes are the bare payload of
/// the configured schema; without schemas it is ignored; a schema that is not JSON fails
/// configure with Connect's message; writing still writes envelopes.
#[test]
fn a_configured_schema_reads_bare_payloads() {
    let schema_text = r#"{"type":"struct","fields":[{"field":"a","type":"int32","optional":false},{"field":"b","type":"string","optional":true}],"optional":false,"name":"r"}"#;
    let mut c = JsonConverter::new();
    Converter::configure(
        &mut c,
        &Props::from([("schema.content".to_string(), schema_text.to_string())]),
        false,
    )
    .unwrap();
    let read = c.deserialize(Some(br#"{"a":1,"b":"x"}"#)).unwrap();
    let schema = read.schema.clone().unwrap();
    assert_eq!(schema.name.as_deref(), Some("r"));
    let Value::Struct(st) = &read.value else {
        panic!("{:?}", read.value)
    };
    assert_eq!(st.get("a"), Some(&Value::Int32(1)));
    assert_eq!(st.get("b"), Some(&Value::String("x".into())));
    // An envelope is a payload like any other here: a struct without field `a` fails.
    assert!(c
        .deserialize(Some(br#"{"schema":null,"payload":{"a":1}}"#))
        .is_err());
    assert_eq!(c.deserialize(None).unwrap().value, Value::Null);
    // Writing is not affected: an envelope.
    let written = c.serialize(Some(&schema), &read.value).unwrap().unwrap();
    assert!(written.starts_with(br#"{"schema":"#));

    // Ignored without schemas.
    let mut plain = JsonConverter::new();
    Converter::configure(
        &mut plain,
        &Props::from([
            ("schema.content".to_string(), schema_text.to_string()),
            ("schemas.enable".to_string(), "false".to_string()),
        ]),
        false,
    )
    .unwrap();
    let read = plain.deserialize(Some(br#"{"a":1}"#)).unwrap();
    assert!(read.schema.is_none());

    // Not JSON.
    let mut bad = JsonConverter::new();
    let e = Converter::configure(
        &mut bad,
        &Props::from([("schema.content".to_string(), "{nope".to_string())]),
        false,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Failed to parse schema in converter config due to serialization error: "
    );
}

#[test]
fn non_finite_floats_read_back_only_where_asked() {
    let envelope = |t: &str, v: &str| {
        format!(r#"{{"schema":{{"type":"{t}","optional":false}},"payload":{v}}}"#)
    };
    // Written as Java's Jackson writes them: strings.
    let written = JsonConverter::new()
        .from_connect_data(
            "t",
            Some(&tributary_api::data::SchemaBuilder::float64().build()),
            &Value::Float64(f64::NEG_INFINITY),
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        String::from_utf8(written.clone()).unwrap(),
        envelope("double", "\"-Infinity\"")
    );
    // Connect's JsonConverter reads such a string as 0; the bridge's reading keeps it.
    let connect = JsonConverter::new()
        .to_connect_data("t", Some(&written))
        .unwrap();
    assert_eq!(connect.value, Value::Float64(0.0));
    let bridge = JsonConverter::new().non_finite_floats();
    let kept = bridge.to_connect_data("t", Some(&written)).unwrap();
    assert_eq!(kept.value, Value::Float64(f64::NEG_INFINITY));
    let inf = envelope("float", "\"Infinity\"");
    assert_eq!(
        bridge
            .to_connect_data("t", Some(inf.as_bytes()))
            .unwrap()
            .value,
        Value::Float32(f32::INFINITY)
    );
    let nan = envelope("double", "\"NaN\"");
    match bridge
        .to_connect_data("t", Some(nan.as_bytes()))
        .unwrap()
        .value
    {
        Value::Float64(v) => assert!(v.is_nan()),
        other => panic!("{other:?}"),
    }
    // Any other string is still Connect's 0.
    let other = envelope("double", "\"x\"");
    assert_eq!(
        bridge
            .to_connect_data("t", Some(other.as_bytes()))
            .unwrap()
            .value,
        Value::Float64(0.0)
    );
}
