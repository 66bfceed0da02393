//! Tributary's Connect ↔ Avro mapping (`tributary_registry::avro`) against Java's, live.
//!
//! `conformance/java/AvroDataVectors.java` is compiled with `javac` against Apache Kafka
//! Connect's jars (`scripts/connect-java classpath`) and Apicurio's converter plugin
//! (`scripts/registry converter-plugin`, whose `AvroData` is derived from Confluent's, and Avro
//! 1.12), then run. For each case of its corpus (every Connect type and logical type, optional
//! fields with and without defaults, defaults of every type, docs, versions, parameters, named,
//! unnamed, repeated and nested structs, arrays, maps with string and other keys, unions,
//! enums, fixed, nulls, several `AvroData` settings) it prints the Connect schema and value as a
//! JsonConverter envelope, the Avro schema text `fromConnectSchema` gives, the datum
//! `fromConnectData` gives (as Avro's `GenericDatumWriter` writes it), and what
//! `toConnectSchema` / `toConnectData` make of that text and datum. Tributary reads the envelope
//! with its own JsonConverter, then, per case, these fields must agree with Java:
//!
//! - `avro_schema`: our `from_connect_schema` text, compared as JSON (key order aside);
//! - `avro_schema_text`: the same text byte for byte (checked when the JSON is equal);
//! - `datum`: our `encode` of the value under Java's Avro schema, byte for byte;
//! - `to_connect_schema`: our `to_connect_schema` of Java's text against Java's
//!   `toConnectSchema` (parameters in order, map entries in any order);
//! - `decode`: our `decode` of Java's datum against Java's `toConnectData` value.
//!
//! A step that fails in Java must fail in Tributary too (and the later steps are skipped).
//! Differences are allowed only where `conformance/avro-allowlist.txt` names the case and the
//! field with a reason (Apicurio's `AvroData` differs from Confluent's, or Tributary differs on
//! purpose); an allowlist line whose field no longer differs fails the test too.
//!
//! Without `java`/`javac`, Connect's jars or Apicurio's plugin (and no way to fetch them) the
//! test prints why and passes (under `CI` it fails).

use tributary_testkit as common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value as Json;
use tributary_api::converter::Converter;
use tributary_api::data::{Schema, SchemaAndValue, SchemaRef, Value};
use tributary_api::Props;
use tributary_plugins::converters::json::JsonConverter;
use tributary_registry::avro::data::{decode, encode};
use tributary_registry::avro::schema::{
    from_connect_schema, to_connect_schema, AvroDataConfig, AvroSchema,
};

const TOPIC: &str = "topic";
const FIELDS: [&str; 5] = [
    "avro_schema",
    "avro_schema_text",
    "datum",
    "to_connect_schema",
    "decode",
];

/// The checkout the test runs in: the manifest directory cargo gives the running test, else
/// the one it was compiled in (a build cache shared by checkouts at other paths may hold a
/// binary compiled in another one).
fn repo_root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf())
        .join("../..")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// One line of the Java program's output.
struct Vector {
    case: String,
    config: AvroDataConfig,
    envelope: String,
    avro: Option<String>,
    datum: Option<Vec<u8>>,
    reverse: Option<String>,
    /// Whether the envelopes replace nulls by defaults (JsonConverter's
    /// `replace.null.with.default`; only where Java could not write them otherwise).
    replace_nulls: bool,
    errors: BTreeMap<String, String>,
}

impl Vector {
    fn parse(line: &str) -> Vector {
        let j: Json = serde_json::from_str(line).expect("a JSON line from AvroDataVectors");
        let s = |k: &str| j.get(k).and_then(Json::as_str).map(str::to_string);
        let flag = |k: &str, default: bool| match j["config"].get(k).and_then(Json::as_str) {
            Some(v) => v == "true",
            None => default,
        };
        Vector {
            case: s("case").expect("case"),
            config: AvroDataConfig {
                connect_meta_data: flag("connect.meta.data", true),
                enhanced_schema_support: flag("enhanced.avro.schema.support", false),
                scrub_invalid_names: flag("scrub.invalid.names", false),
                ..AvroDataConfig::default()
            },
            envelope: s("envelope").expect("envelope"),
            avro: s("avro"),
            datum: s("datum").map(|h| unhex(&h)),
            reverse: s("reverse"),
            replace_nulls: j["replace_nulls"].as_bool().unwrap_or(false),
            errors: j["errors"]
                .as_object()
                .map(|o| {
                    o.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    fn java_error(&self, step: &str) -> String {
        self.errors
            .get(step)
            .cloned()
            .unwrap_or_else(|| "(no error)".into())
    }
}

/// Compiles and runs the Java program; its output lines, or `None` (after
/// [`common::missing`]) without Java or the jars.
fn java_vectors() -> Option<Vec<Vector>> {
    let plugin = common::apicurio_converter_plugin()?;
    let jars = Path::new(&plugin).join("apicurio-registry-converter");
    if !jars.is_dir() {
        return common::missing(&format!(
            "{} does not hold Apicurio's converter jars",
            jars.display()
        ));
    }
    let (cp, _dir) =
        common::java_vector_program_with("AvroDataVectors.java", &format!("{}/*", jars.display()))?;
    let out = Command::new("java")
        .args([
            "-Xmx256m",
            "-Duser.timezone=UTC",
            "-cp",
            &cp,
            "AvroDataVectors",
        ])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("running java");
    assert!(out.status.success(), "AvroDataVectors failed");
    let text = String::from_utf8(out.stdout).expect("ASCII output");
    Some(
        text.lines()
            .filter(|l| l.starts_with("{\"case\""))
            .map(Vector::parse)
            .collect(),
    )
}

// ------------------------------------------------------------------ comparisons

/// Values equal as Connect data: struct fields by position and name (whatever the struct's
/// schema instance), map entries in any order, floats bit for bit.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Struct(x), Value::Struct(y)) => {
            let (fx, fy) = (&x.schema().fields, &y.schema().fields);
            fx.len() == fy.len()
                && fx.iter().zip(fy).all(|(p, q)| p.name == q.name)
                && (0..fx.len()).all(|i| same_value(x.get_by_index(i), y.get_by_index(i)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.iter()
                        .any(|(k2, v2)| same_value(k, k2) && same_value(v, v2))
                })
        }
        (Value::Float32(x), Value::Float32(y)) => x.to_bits() == y.to_bits(),
        (Value::Float64(x), Value::Float64(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// Schemas equal field by field, parameters in the same order, defaults by [`same_value`].
fn same_schema(a: &Schema, b: &Schema) -> bool {
    let params = |s: &Schema| -> Vec<(String, String)> {
        s.parameters
            .iter()
            .flatten()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let opt = |x: &Option<SchemaRef>, y: &Option<SchemaRef>| match (x, y) {
        (Some(x), Some(y)) => same_schema(x, y),
        (None, None) => true,
        _ => false,
    };
    let default = match (&a.default_value, &b.default_value) {
        (Some(x), Some(y)) => same_value(x, y),
        (None, None) => true,
        _ => false,
    };
    a.schema_type == b.schema_type
        && a.optional == b.optional
        && a.name == b.name
        && a.version == b.version
        && a.doc == b.doc
        && params(a) == params(b)
        && default
        && a.fields.len() == b.fields.len()
        && a.fields
            .iter()
            .zip(&b.fields)
            .all(|(x, y)| x.name == y.name && same_schema(&x.schema, &y.schema))
        && opt(&a.key_schema, &b.key_schema)
        && opt(&a.value_schema, &b.value_schema)
}

/// Tributary's JsonConverter as the Java program's: schemas enabled, nulls replaced by
/// defaults or not.
fn json_converter(replace_nulls: bool) -> JsonConverter {
    let mut c = JsonConverter::new();
    let props: Props = [
        ("schemas.enable".to_string(), "true".to_string()),
        (
            "replace.null.with.default".to_string(),
            replace_nulls.to_string(),
        ),
    ]
    .into_iter()
    .collect();
    c.configure(&props, false).expect("JsonConverter settings");
    c
}

/// A schema and value for a report: the JsonConverter envelope, or the Debug form.
fn show(schema: &SchemaRef, value: &Value) -> String {
    match json_converter(false).from_connect_data(TOPIC, Some(schema), value) {
        Ok(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        _ => format!("{schema:?} / {value:?}"),
    }
}

/// Runs every check of one case; the fields that differ, with what each side gave.
fn check(v: &Vector) -> (BTreeMap<&'static str, String>, bool) {
    let json = json_converter(v.replace_nulls);
    let SchemaAndValue { schema, value } = json
        .to_connect_data(TOPIC, Some(v.envelope.as_bytes()))
        .unwrap_or_else(|e| {
            panic!(
                "{}: Tributary's JsonConverter cannot read Java's envelope {}: {e}",
                v.case, v.envelope
            )
        });
    let schema = schema.unwrap_or_else(|| panic!("{}: envelope without schema", v.case));
    let mut diffs = BTreeMap::new();
    let mut text_identical = false;

    // fromConnectSchema
    let ours = from_connect_schema(&v.config, &schema);
    match (&v.avro, &ours) {
        (Some(java), Ok(ours)) => {
            let parse = |t: &str| serde_json::from_str::<Json>(t).expect("Avro schema JSON");
            if parse(java) != parse(ours) {
                diffs.insert("avro_schema", format!("java {java}\n      ours {ours}"));
            } else if java != ours {
                diffs.insert(
                    "avro_schema_text",
                    format!("java {java}\n      ours {ours}"),
                );
            } else {
                text_identical = true;
            }
        }
        (None, Err(_)) => {}
        (Some(java), Err(e)) => {
            diffs.insert("avro_schema", format!("java {java}\n      ours error: {e}"));
        }
        (None, Ok(ours)) => {
            diffs.insert(
                "avro_schema",
                format!("java error: {}\n      ours {ours}", v.java_error("avro")),
            );
        }
    }
    let Some(java_text) = &v.avro else {
        return (diffs, text_identical);
    };
    let avro = match AvroSchema::parse(java_text, &[]) {
        Ok(a) => a,
        Err(e) => {
            for f in ["datum", "to_connect_schema", "decode"] {
                diffs.insert(f, format!("Tributary cannot parse Java's Avro schema: {e}"));
            }
            return (diffs, text_identical);
        }
    };

    // fromConnectData + GenericDatumWriter
    let mut out = Vec::new();
    let encoded = encode(&avro, &schema, &value, &mut out).map(|()| out);
    match (&v.datum, &encoded) {
        (Some(java), Ok(ours)) if java == ours => {}
        (Some(java), Ok(ours)) => {
            diffs.insert(
                "datum",
                format!("java {}\n      ours {}", hex(java), hex(ours)),
            );
        }
        (None, Err(_)) => {}
        (Some(java), Err(e)) => {
            diffs.insert(
                "datum",
                format!("java {}\n      ours error: {e}", hex(java)),
            );
        }
        (None, Ok(ours)) => {
            diffs.insert(
                "datum",
                format!(
                    "java error: {}\n      ours {}",
                    v.java_error("datum"),
                    hex(ours)
                ),
            );
        }
    }
    let Some(bytes) = &v.datum else {
        return (diffs, text_identical);
    };

    // toConnectSchema / toConnectData
    let java = v.reverse.as_ref().map(|r| {
        let sv = json
            .to_connect_data(TOPIC, Some(r.as_bytes()))
            .unwrap_or_else(|e| panic!("{}: cannot read Java's reverse envelope {r}: {e}", v.case));
        (sv.schema.expect("reverse schema"), sv.value)
    });
    let ours_schema = to_connect_schema(&v.config, &avro, None);
    let ours_value = ours_schema
        .as_ref()
        .map_err(|e| e.to_string())
        .and_then(|s| decode(&avro, s, bytes).map_err(|e| e.to_string()));
    match (&java, &ours_schema) {
        (Some((js, jv)), Ok(os)) => {
            if !same_schema(js, os) {
                let ov = ours_value.as_ref().unwrap_or(&Value::Null);
                diffs.insert(
                    "to_connect_schema",
                    format!("java {}\n      ours {}", show(js, jv), show(os, ov)),
                );
            }
        }
        (None, Err(_)) => {}
        (Some((js, jv)), Err(e)) => {
            diffs.insert(
                "to_connect_schema",
                format!("java {}\n      ours error: {e}", show(js, jv)),
            );
        }
        (None, Ok(os)) => {
            diffs.insert(
                "to_connect_schema",
                format!("java error: {}\n      ours {os:?}", v.java_error("reverse")),
            );
        }
    }
    match (&java, &ours_value) {
        (Some((_, jv)), Ok(ov)) => {
            if !same_value(jv, ov) {
                diffs.insert("decode", format!("java {jv:?}\n      ours {ov:?}"));
            }
        }
        (None, Err(_)) => {}
        (Some((_, jv)), Err(e)) => {
            diffs.insert("decode", format!("java {jv:?}\n      ours error: {e}"));
        }
        (None, Ok(ov)) => {
            diffs.insert(
                "decode",
                format!("java error: {}\n      ours {ov:?}", v.java_error("reverse")),
            );
        }
    }
    (diffs, text_identical)
}

/// `conformance/avro-allowlist.txt`: `<case> <field> <reason>` per line, `#` comments.
fn allowlist() -> BTreeMap<(String, String), String> {
    let path = repo_root().join("conformance/avro-allowlist.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for l in text.lines().map(str::trim) {
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let mut parts = l.splitn(3, ' ');
        let (Some(case), Some(field), Some(reason)) = (parts.next(), parts.next(), parts.next())
        else {
            panic!("allowlist line without a case, a field and a reason: {l}");
        };
        assert!(
            FIELDS.contains(&field),
            "allowlist line with an unknown field {field} (one of {FIELDS:?}): {l}"
        );
        let dup = out.insert(
            (case.to_string(), field.to_string()),
            reason.trim().to_string(),
        );
        assert!(dup.is_none(), "allowlist line given twice: {l}");
    }
    out
}

#[test]
fn avro_mapping_matches_javas_avro_data() {
    let Some(vectors) = java_vectors() else {
        return;
    };
    assert!(
        vectors.len() >= 100,
        "AvroDataVectors printed only {} cases",
        vectors.len()
    );
    let names: BTreeSet<&str> = vectors.iter().map(|v| v.case.as_str()).collect();
    assert_eq!(names.len(), vectors.len(), "case names must be unique");
    let allowed = allowlist();

    let mut failures = Vec::new();
    let mut used = BTreeSet::new();
    let mut differing = 0;
    let mut identical_texts = 0;
    let mut per_field: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for v in &vectors {
        let (diffs, identical) = check(v);
        identical_texts += usize::from(identical);
        for f in FIELDS {
            let e = per_field.entry(f).or_default();
            if diffs.contains_key(f) {
                e.1 += 1;
            } else {
                e.0 += 1;
            }
        }
        if !diffs.is_empty() {
            differing += 1;
        }
        for (field, detail) in diffs {
            let key = (v.case.clone(), field.to_string());
            match allowed.get(&key) {
                Some(reason) => {
                    used.insert(key);
                    eprintln!("  allowlisted {} {field}: {reason}", v.case);
                }
                None => failures.push(format!("{} {field}:\n      {detail}", v.case)),
            }
        }
    }
    let stale: Vec<String> = allowed
        .keys()
        .filter(|k| !used.contains(*k))
        .map(|(c, f)| {
            if names.contains(c.as_str()) {
                format!("{c} {f}")
            } else {
                format!("{c} {f} (no such case)")
            }
        })
        .collect();
    eprintln!(
        "{} cases: {} agree with Java on every field, {differing} differ somewhere; {} Avro schema texts byte-identical",
        vectors.len(),
        vectors.len() - differing,
        identical_texts
    );
    for (f, (same, diff)) in &per_field {
        eprintln!("  {f}: {same} same, {diff} different");
    }
    assert!(
        failures.is_empty(),
        "differences not in conformance/avro-allowlist.txt:\n  {}",
        failures.join("\n  ")
    );
    assert!(
        stale.is_empty(),
        "allowlist entries that no longer differ (remove them from conformance/avro-allowlist.txt): {stale:?}"
    );
}
