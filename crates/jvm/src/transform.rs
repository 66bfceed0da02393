//! Java transformations and predicates of `plugin.path` (Connect's `Transformation`, KIP-66,
//! and `Predicate`, KIP-585), hosted in the worker's JVM behind Tributary's [`Transformation`]
//! and [`Predicate`] traits, so that a connector's `transforms` chain mixes them with native
//! ones, for Java and native connectors alike (the Java side is `HostedTransformation.java`).
//!
//! Each `apply` / `test` crosses once per record, carrying the whole record as bytes: key,
//! value and header values as JsonConverter envelopes (schemas enabled), topic, partition,
//! timestamp, and what the record kind adds (a source record's source partition and offset as
//! JSON, a sink record's Kafka offset, timestamp type and original topic, partition and
//! offset), never one call per field. The transformed record comes back as topic, partition,
//! key, value, timestamp and headers, and is rebuilt with [`ConnectRecord::new_record`] (what
//! Connect's `newRecord` keeps, kept). A Java exception becomes the [`ConnectError`] the
//! runtime's `errors.tolerance` handles as for a native transformation.
//!
//! The instance is created in Java by `configure`, on the task's thread; `config()` (for
//! validation and `GET /connector-plugins/{p}/config`) asks the class's `ConfigDef` once per
//! class, and a key with a Java validator is checked by that validator, so validation answers
//! with the plugin's own messages.

use std::marker::PhantomData;
use std::sync::Arc;

use jni::objects::{GlobalRef, JValue};
use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::converter::Converter;
use tributary_api::plugin::PluginSet;
use tributary_api::record::{Header, Headers, SinkRecord, SourceRecord, TimestampType};
use tributary_api::transforms::{
    ConnectRecord, Predicate, PredicatePlugin, Transformation, TransformationPlugin,
};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_json::JsonConverter;

use crate::codec::{CodecError, Reader, Writer};
use crate::connector::{bytes_result, java_string};
use crate::vm::Jvm;
use crate::Merged;

/// The bridge class hosting transformations and predicates.
const HOSTED: &str = "io/tributary/jvm/HostedTransformation";

/// The kinds of Java plugin besides connectors that the scan lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JavaPluginKind {
    /// Connect's `Transformation`.
    Transformation,
    /// Connect's `Predicate`.
    Predicate,
    /// Connect's `Converter` (hosted by [`crate::converter`]).
    Converter,
    /// Connect's `HeaderConverter` (hosted by [`crate::converter`]).
    HeaderConverter,
}

/// A transformation, predicate, converter or header converter found on `plugin.path` (by the
/// scan, `scan::scan_all`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaTransformDesc {
    pub kind: JavaPluginKind,
    /// The class name.
    pub class: String,
    /// What Connect's `PluginDesc.version` gave (`undefined` for an unversioned class).
    pub version: String,
    /// Where it was found (a jar or directory URL).
    pub location: String,
}

/// The `transformation|predicate|converter|header_converter\t<class>\t<version>\t<location>`
/// lines of the scanner's output (other lines are skipped).
pub fn parse_scan(stdout: &str) -> Vec<JavaTransformDesc> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            let kind = match f.next()? {
                "transformation" => JavaPluginKind::Transformation,
                "predicate" => JavaPluginKind::Predicate,
                "converter" => JavaPluginKind::Converter,
                "header_converter" => JavaPluginKind::HeaderConverter,
                _ => return None,
            };
            Some(JavaTransformDesc {
                kind,
                class: f.next()?.to_string(),
                version: f.next()?.to_string(),
                location: f.next().unwrap_or_default().to_string(),
            })
        })
        .collect()
}

fn codec_err(e: CodecError) -> ConnectError {
    ConnectError::connect(e.to_string())
}

/// A record kind that crosses to Java: how it is written for `HostedTransformation`.
pub trait HostedRecord: ConnectRecord {
    /// Writes the kind byte and the fields only this kind has.
    fn write_kind(&self, w: &mut Writer) -> ConnectResult<()>;
}

impl HostedRecord for SourceRecord {
    fn write_kind(&self, w: &mut Writer) -> ConnectResult<()> {
        let json = |m: &tributary_api::record::SourceMap| {
            serde_json::to_vec(m).map_err(|e| ConnectError::data(e.to_string()))
        };
        w.u8(0);
        w.bytes(Some(&json(&self.source_partition)?));
        w.bytes(Some(&json(&self.source_offset)?));
        Ok(())
    }
}

impl HostedRecord for SinkRecord {
    fn write_kind(&self, w: &mut Writer) -> ConnectResult<()> {
        w.u8(1).i64(self.kafka_offset);
        w.u8(match self.timestamp_type {
            TimestampType::NoTimestampType => 0,
            TimestampType::CreateTime => 1,
            TimestampType::LogAppendTime => 2,
        });
        w.str(&self.original_topic)
            .i32(self.original_kafka_partition)
            .i64(self.original_kafka_offset);
        Ok(())
    }
}

/// One Java instance (transformation or predicate) of `class`, created by `configure`.
struct Instance {
    jvm: Arc<Jvm>,
    class: &'static str,
    /// The version of `class` to create (KIP-891: one of several on plugin.path); empty for
    /// the newest.
    version: &'static str,
    kind: JavaPluginKind,
    obj: Option<GlobalRef>,
    envelope: JsonConverter,
}

impl Instance {
    fn new(
        jvm: Arc<Jvm>,
        class: &'static str,
        version: &'static str,
        kind: JavaPluginKind,
    ) -> Instance {
        Instance {
            jvm,
            class,
            version,
            kind,
            obj: None,
            envelope: JsonConverter::new().non_finite_floats(),
        }
    }

    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let factory = match self.kind {
            JavaPluginKind::Predicate => "newPredicate",
            _ => "newTransformation",
        };
        let (class, version) = (self.class, self.version);
        let mut config = Writer::new();
        config.map(props);
        let config = config.into_bytes();
        let obj = self.jvm.call(|env, _| {
            let name = env.new_string(class)?;
            let version = env.new_string(version)?;
            let obj = env
                .call_static_method(
                    HOSTED,
                    factory,
                    "(Ljava/lang/String;Ljava/lang/String;)Lio/tributary/jvm/HostedTransformation;",
                    &[JValue::Object(&name), JValue::Object(&version)],
                )?
                .l()?;
            let global = env.new_global_ref(&obj)?;
            let arr = env.byte_array_from_slice(&config)?;
            env.call_method(&obj, "configure", "([B)V", &[JValue::Object(&arr)])?;
            Ok(global)
        })?;
        if let Some(old) = self.obj.replace(obj) {
            self.jvm.release(old);
        }
        Ok(())
    }

    fn obj(&self) -> ConnectResult<&GlobalRef> {
        self.obj
            .as_ref()
            .ok_or_else(|| ConnectError::connect(format!("{} was not configured", self.class)))
    }

    /// The record in `HostedTransformation`'s layout.
    fn encode<R: HostedRecord>(&self, r: &R) -> ConnectResult<Vec<u8>> {
        let mut w = Writer::new();
        r.write_kind(&mut w)?;
        let topic = r.topic();
        w.str(topic);
        match r.kafka_partition() {
            Some(p) => w.u8(1).i32(p),
            None => w.u8(0).i32(0),
        };
        let key = self
            .envelope
            .from_connect_data(topic, r.key_schema(), r.key())?;
        w.bytes(key.as_deref());
        let value = self
            .envelope
            .from_connect_data(topic, r.value_schema(), r.value())?;
        w.bytes(value.as_deref());
        match r.timestamp() {
            Some(t) => w.u8(1).i64(t),
            None => w.u8(0).i64(0),
        };
        w.i32(r.headers().len() as i32);
        for h in r.headers().iter() {
            let hv = self
                .envelope
                .from_connect_data(topic, h.schema.as_ref(), &h.value)?;
            w.str(&h.key).bytes(hv.as_deref());
        }
        Ok(w.into_bytes())
    }

    /// `record` rebuilt with what Java's `apply` returned.
    fn decode<R: HostedRecord>(&self, record: &R, bytes: &[u8]) -> ConnectResult<R> {
        let mut r = Reader::new(bytes);
        let topic = r.str().map_err(codec_err)?;
        let has_partition = r.u8().map_err(codec_err)? == 1;
        let partition = r.i32().map_err(codec_err)?;
        let key =
            crate::codec::envelope_data(&self.envelope, &topic, r.bytes().map_err(codec_err)?)?;
        let value =
            crate::codec::envelope_data(&self.envelope, &topic, r.bytes().map_err(codec_err)?)?;
        let has_ts = r.u8().map_err(codec_err)? == 1;
        let ts = r.i64().map_err(codec_err)?;
        let n = r.count().map_err(codec_err)?;
        let mut headers = Headers::new();
        for _ in 0..n {
            let hk = r.str().map_err(codec_err)?;
            let hv =
                crate::codec::envelope_data(&self.envelope, &topic, r.bytes().map_err(codec_err)?)?;
            headers.0.push(Header {
                key: hk,
                schema: hv.schema,
                value: hv.value,
            });
        }
        Ok(record.new_record(
            topic,
            has_partition.then_some(partition),
            key.schema,
            key.value,
            value.schema,
            value.value,
            has_ts.then_some(ts),
            headers,
        ))
    }

    /// KIP-877: hands the Java plugin its metrics if it is `Monitorable`.
    fn with_plugin_metrics(&self, metrics: &tributary_api::metrics::PluginMetrics) {
        if let Some(obj) = self.obj.as_ref() {
            crate::task::hand_plugin_metrics(&self.jvm, obj, self.class, metrics);
        }
    }

    fn close(&mut self) {
        let Some(obj) = self.obj.take() else {
            return;
        };
        let result = self.jvm.call(|env, _| {
            env.call_method(&obj, "close", "()V", &[])?;
            Ok(())
        });
        if let Err(e) = result {
            tracing::error!(class = self.class, error = %e, "the Java plugin's close() failed");
        }
        self.jvm.release(obj);
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(obj) = self.obj.take() {
            self.jvm.release(obj);
        }
    }
}

/// The `ConfigDef` of `class` (its `config()`), with each Java validator checked in Java.
/// A failure (the class cannot be created, or its `config()` throws) is logged and gives an
/// empty definition, as for a Java connector's `config()`.
fn config_def(jvm: &Arc<Jvm>, class: &'static str) -> ConfigDef {
    match read_config_def(jvm, class) {
        Ok(def) => def,
        Err(e) => {
            tracing::error!(class, error = %e, "config() failed");
            ConfigDef::new()
        }
    }
}

fn read_config_def(jvm: &Arc<Jvm>, class: &'static str) -> ConnectResult<ConfigDef> {
    let bytes = jvm
        .call(|env, _| {
            let name = env.new_string(class)?;
            let out = env.call_static_method(
                HOSTED,
                "configDef",
                "(Ljava/lang/String;)[B",
                &[JValue::Object(&name)],
            )?;
            bytes_result(env, out)
        })?
        .unwrap_or_default();
    let mut r = Reader::new(&bytes);
    let n = r.count().map_err(codec_err)?;
    let mut def = ConfigDef::new();
    for _ in 0..n {
        let name = r.str().map_err(codec_err)?;
        let config_type = parse_type(&r.str().map_err(codec_err)?);
        let has_default = r.u8().map_err(codec_err)? == 1;
        let default = r.opt_str().map_err(codec_err)?;
        let importance = match r.str().map_err(codec_err)?.as_str() {
            "HIGH" => Importance::High,
            "MEDIUM" => Importance::Medium,
            _ => Importance::Low,
        };
        let doc = r.opt_str().map_err(codec_err)?.unwrap_or_default();
        let validator = (r.u8().map_err(codec_err)? == 1)
            .then(|| java_validator(jvm.clone(), class, name.clone()));
        let default = has_default.then_some(default.as_deref());
        def = def.define(&name, config_type, default, validator, importance, &doc);
    }
    Ok(def)
}

/// A validator that runs the Java key's own (`HostedTransformation.checkValue`). Its message
/// is Connect's `ConfigException` text without the `Invalid value … for configuration …: `
/// that the caller puts back.
fn java_validator(jvm: Arc<Jvm>, class: &'static str, key: String) -> Validator {
    Validator::Custom(Arc::new(move |parsed: &Parsed| {
        let value = parsed.to_config_string();
        let message = jvm
            .call(|env, _| {
                let c = env.new_string(class)?;
                let k = env.new_string(&key)?;
                let v = match &value {
                    Some(v) => env.new_string(v)?.into(),
                    None => jni::objects::JObject::null(),
                };
                let out = env
                    .call_static_method(
                        HOSTED,
                        "checkValue",
                        "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;",
                        &[JValue::Object(&c), JValue::Object(&k), JValue::Object(&v)],
                    )?
                    .l()?;
                if out.is_null() {
                    return Ok(None);
                }
                java_string(env, out).map(Some)
            })
            .map_err(|e| e.to_string())?;
        match message {
            None => Ok(()),
            Some(m) => Err(validator_message(&m, &key)),
        }
    }))
}

/// The part of a Java `ConfigException` message after `Invalid value <v> for configuration
/// <key>: ` (the whole message when it is not worded so).
fn validator_message(message: &str, key: &str) -> String {
    let marker = format!(" for configuration {key}: ");
    match (message.starts_with("Invalid value "), message.find(&marker)) {
        (true, Some(i)) => message[i + marker.len()..].to_string(),
        _ => message.to_string(),
    }
}

/// Connect's `ConfigDef.Type` name as Tributary's [`ConfigType`].
fn parse_type(name: &str) -> ConfigType {
    match name {
        "BOOLEAN" => ConfigType::Boolean,
        "INT" => ConfigType::Int,
        "SHORT" => ConfigType::Short,
        "LONG" => ConfigType::Long,
        "DOUBLE" => ConfigType::Double,
        "LIST" => ConfigType::List,
        "CLASS" => ConfigType::Class,
        "PASSWORD" => ConfigType::Password,
        _ => ConfigType::String,
    }
}

/// A Java `Transformation` of `plugin.path`, for records of kind `R`.
pub struct JavaTransformation<R> {
    instance: Instance,
    _kind: PhantomData<fn(R) -> R>,
}

impl<R> JavaTransformation<R> {
    /// A transformation of `class`; created in Java by `configure`.
    pub fn new(jvm: Arc<Jvm>, class: &'static str) -> Self {
        Self::of_version(jvm, class, "")
    }

    /// A transformation of `class` in `version` (KIP-891), of several on plugin.path.
    pub fn of_version(jvm: Arc<Jvm>, class: &'static str, version: &'static str) -> Self {
        JavaTransformation {
            instance: Instance::new(jvm, class, version, JavaPluginKind::Transformation),
            _kind: PhantomData,
        }
    }
}

impl<R: HostedRecord> Transformation<R> for JavaTransformation<R> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        self.instance.configure(props)
    }

    fn with_plugin_metrics(&mut self, metrics: tributary_api::metrics::PluginMetrics) {
        self.instance.with_plugin_metrics(&metrics);
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let batch = self.instance.encode(&record)?;
        let obj = self.instance.obj()?;
        let out = self.instance.jvm.call(|env, _| {
            let arr = env.byte_array_from_slice(&batch)?;
            let out = env.call_method(obj, "apply", "([B)[B", &[JValue::Object(&arr)])?;
            bytes_result(env, out)
        })?;
        match out {
            None => Ok(None),
            Some(bytes) => self.instance.decode(&record, &bytes).map(Some),
        }
    }

    fn config(&self) -> ConfigDef {
        config_def(&self.instance.jvm, self.instance.class)
    }

    fn close(&mut self) {
        self.instance.close();
    }
}

/// A Java `Predicate` of `plugin.path`, for records of kind `R`.
pub struct JavaPredicate<R> {
    instance: Instance,
    _kind: PhantomData<fn(R) -> R>,
}

impl<R> JavaPredicate<R> {
    /// A predicate of `class`; created in Java by `configure`.
    pub fn new(jvm: Arc<Jvm>, class: &'static str) -> Self {
        Self::of_version(jvm, class, "")
    }

    /// A predicate of `class` in `version` (KIP-891), of several on plugin.path.
    pub fn of_version(jvm: Arc<Jvm>, class: &'static str, version: &'static str) -> Self {
        JavaPredicate {
            instance: Instance::new(jvm, class, version, JavaPluginKind::Predicate),
            _kind: PhantomData,
        }
    }
}

impl<R: HostedRecord> Predicate<R> for JavaPredicate<R> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        self.instance.configure(props)
    }

    fn with_plugin_metrics(&mut self, metrics: tributary_api::metrics::PluginMetrics) {
        self.instance.with_plugin_metrics(&metrics);
    }

    fn test(&mut self, record: &R) -> bool {
        self.try_test(record).unwrap_or_else(|e| {
            tracing::error!(class = self.instance.class, error = %e, "the Java predicate's test() failed");
            false
        })
    }

    fn try_test(&mut self, record: &R) -> ConnectResult<bool> {
        let batch = self.instance.encode(record)?;
        let obj = self.instance.obj()?;
        self.instance.jvm.call(|env, _| {
            let arr = env.byte_array_from_slice(&batch)?;
            env.call_method(obj, "test", "([B)Z", &[JValue::Object(&arr)])?
                .z()
        })
    }

    fn config(&self) -> ConfigDef {
        config_def(&self.instance.jvm, self.instance.class)
    }

    fn close(&mut self) {
        self.instance.close();
    }
}

/// The transformation, predicate, converter and header converter plugins for scanned Java
/// classes, hosted in `jvm`. Class names and versions are leaked (once per worker) to fit the
/// `'static` names of the plugins.
pub fn plugin_set(jvm: &Arc<Jvm>, descs: &[JavaTransformDesc]) -> PluginSet {
    let mut set = PluginSet::default();
    for d in descs {
        let class: &'static str = Box::leak(d.class.clone().into_boxed_str());
        let version: &'static str = Box::leak(d.version.clone().into_boxed_str());
        let (j1, j2) = (jvm.clone(), jvm.clone());
        match d.kind {
            JavaPluginKind::Transformation => set.transformations.push(TransformationPlugin {
                class,
                version,
                new_source: Arc::new(move || {
                    Box::new(JavaTransformation::of_version(j1.clone(), class, version))
                }),
                new_sink: Arc::new(move || {
                    Box::new(JavaTransformation::of_version(j2.clone(), class, version))
                }),
            }),
            JavaPluginKind::Predicate => set.predicates.push(PredicatePlugin {
                class,
                version,
                new_source: Arc::new(move || {
                    Box::new(JavaPredicate::of_version(j1.clone(), class, version))
                }),
                new_sink: Arc::new(move || {
                    Box::new(JavaPredicate::of_version(j2.clone(), class, version))
                }),
            }),
            JavaPluginKind::Converter => set
                .converters
                .push(crate::converter::converter_plugin(jvm, class, version)),
            JavaPluginKind::HeaderConverter => {
                set.header_converters
                    .push(crate::converter::header_converter_plugin(
                        jvm, class, version,
                    ))
            }
        }
    }
    set
}

/// Adds Java transformations, predicates, converters and header converters (`java`, from
/// [`plugin_set`]) to `set`, with the connectors' precedence: a class Tributary has built in
/// stays native unless `prefer_java` names it, in which case the Java plugin replaces it.
pub fn merge(set: &mut PluginSet, java: PluginSet, prefer_java: &[String]) -> Vec<Merged> {
    let mut out = Vec::new();
    let preferred = |c: &str| prefer_java.iter().any(|p| p == c);
    merge_kind(
        &mut out,
        &mut set.transformations,
        java.transformations,
        |p| p.class,
        preferred,
    );
    merge_kind(
        &mut out,
        &mut set.predicates,
        java.predicates,
        |p| p.class,
        preferred,
    );
    merge_kind(
        &mut out,
        &mut set.converters,
        java.converters,
        |p| p.class,
        preferred,
    );
    merge_kind(
        &mut out,
        &mut set.header_converters,
        java.header_converters,
        |p| p.class,
        preferred,
    );
    out
}

/// [`merge`] for the plugins of one kind: each Java plugin is added, replaces the native one of
/// its class when `preferred`, or is shadowed by it; what happened is pushed to `out`.
fn merge_kind<T>(
    out: &mut Vec<Merged>,
    native: &mut Vec<T>,
    java: Vec<T>,
    class: impl Fn(&T) -> &'static str,
    preferred: impl Fn(&str) -> bool,
) {
    // Only classes built in can shadow or be replaced; a Java class in several versions
    // (KIP-891) adds each, the first replacing a preferred built-in one.
    let built_in: Vec<&'static str> = native.iter().map(&class).collect();
    let mut replaced: Vec<&'static str> = Vec::new();
    for plugin in java {
        let name = class(&plugin);
        let native_at = built_in
            .contains(&name)
            .then(|| native.iter().position(|n| class(n) == name))
            .flatten();
        match native_at {
            None => {
                out.push(Merged::Added(name));
                native.push(plugin);
            }
            Some(_) if replaced.contains(&name) => {
                out.push(Merged::Added(name));
                native.push(plugin);
            }
            Some(i) if preferred(name) => {
                out.push(Merged::ReplacedNative(name));
                replaced.push(name);
                native[i] = plugin;
            }
            Some(_) => out.push(Merged::ShadowedByNative(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::{jvm_started, JvmSettings};

    #[test]
    fn scanner_lines_for_transformations_and_predicates() {
        let out = "connector\tsink\ta.B\t1.0\tfile:/p/x/\ntransformation\tio.debezium.transforms.ExtractNewRecordState\t3.6.1.Final\tfile:/p/d/\npredicate\tx.P\tundefined\tfile:/p/y.jar\nnoise\n";
        let d = parse_scan(out);
        assert_eq!(
            d,
            vec![
                JavaTransformDesc {
                    kind: JavaPluginKind::Transformation,
                    class: "io.debezium.transforms.ExtractNewRecordState".into(),
                    version: "3.6.1.Final".into(),
                    location: "file:/p/d/".into(),
                },
                JavaTransformDesc {
                    kind: JavaPluginKind::Predicate,
                    class: "x.P".into(),
                    version: "undefined".into(),
                    location: "file:/p/y.jar".into(),
                },
            ]
        );
    }

    #[test]
    fn validator_messages_lose_the_part_the_runtime_adds() {
        assert_eq!(
            validator_message(
                "Invalid value x for configuration target.type: String must be one of: a, b",
                "target.type"
            ),
            "String must be one of: a, b"
        );
        assert_eq!(validator_message("odd text", "k"), "odd text");
    }

    #[test]
    fn native_transformations_win_unless_the_worker_prefers_java() {
        let jvm = Arc::new(Jvm::new(JvmSettings::default()));
        let desc = |kind, class: &str| JavaTransformDesc {
            kind,
            class: class.into(),
            version: "4.1.1".into(),
            location: "file:/p/".into(),
        };
        let java = plugin_set(
            &jvm,
            &[
                desc(
                    JavaPluginKind::Transformation,
                    "org.apache.kafka.connect.transforms.HoistField$Value",
                ),
                desc(
                    JavaPluginKind::Transformation,
                    "org.apache.kafka.connect.transforms.Filter",
                ),
                desc(
                    JavaPluginKind::Transformation,
                    "io.debezium.transforms.ExtractNewRecordState",
                ),
                desc(
                    JavaPluginKind::Predicate,
                    "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
                ),
            ],
        );
        let mut set = tributary_plugins::builtin();
        let native_count = set.transformations.len();
        let merged = merge(
            &mut set,
            java,
            &[
                "org.apache.kafka.connect.transforms.Filter".to_string(),
                "org.apache.kafka.connect.transforms.predicates.HasHeaderKey".to_string(),
            ],
        );
        assert_eq!(
            merged,
            vec![
                Merged::ShadowedByNative("org.apache.kafka.connect.transforms.HoistField$Value"),
                Merged::ReplacedNative("org.apache.kafka.connect.transforms.Filter"),
                Merged::Added("io.debezium.transforms.ExtractNewRecordState"),
                Merged::ReplacedNative(
                    "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"
                ),
            ]
        );
        assert_eq!(set.transformations.len(), native_count + 1);
        // Creating the Rust values starts no JVM.
        let t = set
            .transformations
            .iter()
            .find(|t| t.class == "io.debezium.transforms.ExtractNewRecordState")
            .unwrap();
        let _instance = (t.new_sink)();
        assert!(!jvm_started());
    }
}
