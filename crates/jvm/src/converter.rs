//! Java converters and header converters of `plugin.path` (Connect's `Converter` and
//! `HeaderConverter`, e.g. a schema-registry converter shipped as jars), hosted in the worker's
//! JVM behind Tributary's [`Converter`] and [`HeaderConverter`] traits, so a connector (Java or
//! native) may name one in `key.converter`, `value.converter` or `header.converter` (the Java
//! side is `HostedConverter.java`).
//!
//! Each conversion crosses once: Connect data as a JsonConverter envelope (schemas enabled),
//! converted bytes as they are, with the record's Kafka headers (a converter may read them, and
//! add or change them when converting for a source record: the runtime sends them as it
//! leaves them). A Java exception becomes [`ConnectError::Java`], which the runtime's
//! `errors.tolerance` handles as a conversion failure. The instance is created in Java by
//! `configure`, on the task's thread.

use std::sync::Arc;

use jni::objects::{GlobalRef, JValue};
use tributary_api::converter::{Converter, HeaderConverter, RecordHeaders};
use tributary_api::data::{SchemaAndValue, SchemaRef, Value};
use tributary_api::plugin::{ConverterPlugin, HeaderConverterPlugin};
use tributary_api::{ConnectError, ConnectResult, Props};
use tributary_json::JsonConverter;

use crate::codec::{Reader, Writer};
use crate::connector::bytes_result;
use crate::vm::Jvm;

/// The bridge class hosting converters.
const HOSTED: &str = "io/tributary/jvm/HostedConverter";
const NEW_SIG: &str = "(Ljava/lang/String;Ljava/lang/String;)Lio/tributary/jvm/HostedConverter;";

/// One Java converter or header converter instance of `class`.
struct Instance {
    jvm: Arc<Jvm>,
    class: &'static str,
    /// The version of `class` to create (KIP-891: one of several on plugin.path); empty for
    /// the newest.
    version: &'static str,
    obj: Option<GlobalRef>,
    /// Connect data ↔ the envelopes that cross to Java.
    envelope: JsonConverter,
}

impl Instance {
    fn new(jvm: Arc<Jvm>, class: &'static str, version: &'static str) -> Instance {
        Instance {
            jvm,
            class,
            version,
            obj: None,
            envelope: JsonConverter::new().non_finite_floats(),
        }
    }

    fn configure(&mut self, factory: &str, props: &Props, is_key: bool) -> ConnectResult<()> {
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
                    NEW_SIG,
                    &[JValue::Object(&name), JValue::Object(&version)],
                )?
                .l()?;
            let global = env.new_global_ref(&obj)?;
            let arr = env.byte_array_from_slice(&config)?;
            env.call_method(
                &obj,
                "configure",
                "([BZ)V",
                &[JValue::Object(&arr), JValue::Bool(is_key.into())],
            )?;
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

    /// Calls a header converter's `method(topic, key, bytes) -> byte[]` on the instance.
    fn call_with_key(
        &self,
        method: &str,
        topic: &str,
        header_key: &str,
        arg: Option<&[u8]>,
    ) -> ConnectResult<Option<Vec<u8>>> {
        let obj = self.obj()?;
        self.jvm.call(|env, _| {
            let topic = env.new_string(topic)?;
            let key = env.new_string(header_key)?;
            let arr = match arg {
                Some(b) => jni::objects::JObject::from(env.byte_array_from_slice(b)?),
                None => jni::objects::JObject::null(),
            };
            let out = env.call_method(
                obj,
                method,
                "(Ljava/lang/String;Ljava/lang/String;[B)[B",
                &[
                    JValue::Object(&topic),
                    JValue::Object(&key),
                    JValue::Object(&arr),
                ],
            )?;
            bytes_result(env, out)
        })
    }

    /// Calls `method(topic, headers, bytes) -> byte[]` on the instance.
    fn call_with_headers(
        &self,
        method: &str,
        topic: &str,
        headers: &[u8],
        arg: Option<&[u8]>,
    ) -> ConnectResult<Option<Vec<u8>>> {
        let obj = self.obj()?;
        self.jvm.call(|env, _| {
            let topic = env.new_string(topic)?;
            let headers = env.byte_array_from_slice(headers)?;
            let arr = match arg {
                Some(b) => jni::objects::JObject::from(env.byte_array_from_slice(b)?),
                None => jni::objects::JObject::null(),
            };
            let out = env.call_method(
                obj,
                method,
                "(Ljava/lang/String;[B[B)[B",
                &[
                    JValue::Object(&topic),
                    JValue::Object(&headers),
                    JValue::Object(&arr),
                ],
            )?;
            bytes_result(env, out)
        })
    }

    /// KIP-877: hands the Java plugin its metrics if it is `Monitorable`.
    fn with_plugin_metrics(&self, metrics: &tributary_api::metrics::PluginMetrics) {
        if let Some(obj) = self.obj.as_ref() {
            crate::task::hand_plugin_metrics(&self.jvm, obj, self.class, metrics);
        }
    }

    fn close(&mut self) {
        if let Some(obj) = self.obj.take() {
            let closed = self
                .jvm
                .call(|env, _| env.call_method(&obj, "close", "()V", &[]).map(|_| ()));
            if let Err(e) = closed {
                tracing::warn!(class = self.class, error = %e, "closing the Java converter failed");
            }
            self.jvm.release(obj);
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.close();
    }
}

/// A Java `Converter` of `plugin.path`.
pub struct JavaConverter {
    instance: Instance,
}

impl JavaConverter {
    /// A converter of `class`; created in Java by `configure`.
    pub fn new(jvm: Arc<Jvm>, class: &'static str) -> Self {
        Self::of_version(jvm, class, "")
    }

    /// A converter of `class` in `version` (KIP-891), of several on plugin.path.
    pub fn of_version(jvm: Arc<Jvm>, class: &'static str, version: &'static str) -> Self {
        JavaConverter {
            instance: Instance::new(jvm, class, version),
        }
    }
}

/// Headers in the bridge's layout: count, then key and bytes each.
fn write_headers(w: &mut Writer, headers: &RecordHeaders) {
    w.i32(headers.len() as i32);
    for (k, v) in headers {
        w.str(k).bytes(v.as_deref());
    }
}

fn codec_err(e: crate::codec::CodecError) -> ConnectError {
    ConnectError::connect(e.to_string())
}

impl Converter for JavaConverter {
    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()> {
        self.instance.configure("newConverter", configs, is_key)
    }

    fn with_plugin_metrics(&mut self, metrics: tributary_api::metrics::PluginMetrics) {
        self.instance.with_plugin_metrics(&metrics);
    }

    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        self.from_connect_data_with_headers(topic, &mut Vec::new(), schema, value)
    }

    fn to_connect_data(&self, topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        self.to_connect_data_with_headers(topic, &Vec::new(), value)
    }

    fn uses_headers(&self) -> bool {
        true
    }

    fn from_connect_data_with_headers(
        &self,
        topic: &str,
        headers: &mut RecordHeaders,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        let data = self
            .instance
            .envelope
            .from_connect_data(topic, schema, value)?;
        let mut h = Writer::new();
        write_headers(&mut h, headers);
        let h = h.into_bytes();
        let out = self
            .instance
            .call_with_headers("fromConnectData", topic, &h, data.as_deref())?
            .unwrap_or_default();
        let mut r = Reader::new(&out);
        let bytes = r.bytes().map_err(codec_err)?.map(<[u8]>::to_vec);
        let n = r.count().map_err(codec_err)?;
        headers.clear();
        for _ in 0..n {
            let k = r.str().map_err(codec_err)?;
            let v = r.bytes().map_err(codec_err)?.map(<[u8]>::to_vec);
            headers.push((k, v));
        }
        Ok(bytes)
    }

    fn to_connect_data_with_headers(
        &self,
        topic: &str,
        headers: &RecordHeaders,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        let mut h = Writer::new();
        write_headers(&mut h, headers);
        let data =
            self.instance
                .call_with_headers("toConnectData", topic, &h.into_bytes(), value)?;
        crate::codec::envelope_data(&self.instance.envelope, topic, data.as_deref())
    }
}

/// A Java `HeaderConverter` of `plugin.path`.
pub struct JavaHeaderConverter {
    instance: Instance,
}

impl JavaHeaderConverter {
    /// A header converter of `class`; created in Java by `configure`.
    pub fn new(jvm: Arc<Jvm>, class: &'static str) -> Self {
        Self::of_version(jvm, class, "")
    }

    /// A header converter of `class` in `version` (KIP-891), of several on plugin.path.
    pub fn of_version(jvm: Arc<Jvm>, class: &'static str, version: &'static str) -> Self {
        JavaHeaderConverter {
            instance: Instance::new(jvm, class, version),
        }
    }
}

impl HeaderConverter for JavaHeaderConverter {
    fn configure(&mut self, configs: &Props) -> ConnectResult<()> {
        self.instance
            .configure("newHeaderConverter", configs, false)
    }

    fn with_plugin_metrics(&mut self, metrics: tributary_api::metrics::PluginMetrics) {
        self.instance.with_plugin_metrics(&metrics);
    }

    fn from_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        let data = self
            .instance
            .envelope
            .from_connect_data(topic, schema, value)?;
        self.instance
            .call_with_key("fromConnectHeader", topic, header_key, data.as_deref())
    }

    fn to_connect_header(
        &self,
        topic: &str,
        header_key: &str,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        let data = self
            .instance
            .call_with_key("toConnectHeader", topic, header_key, value)?;
        crate::codec::envelope_data(&self.instance.envelope, topic, data.as_deref())
    }
}

/// The converter plugin of a scanned Java class.
pub fn converter_plugin(
    jvm: &Arc<Jvm>,
    class: &'static str,
    version: &'static str,
) -> ConverterPlugin {
    let jvm = jvm.clone();
    ConverterPlugin {
        class,
        version,
        new: Arc::new(move || Box::new(JavaConverter::of_version(jvm.clone(), class, version))),
    }
}

/// The header converter plugin of a scanned Java class.
pub fn header_converter_plugin(
    jvm: &Arc<Jvm>,
    class: &'static str,
    version: &'static str,
) -> HeaderConverterPlugin {
    let jvm = jvm.clone();
    HeaderConverterPlugin {
        class,
        version,
        new: Arc::new(move || {
            Box::new(JavaHeaderConverter::of_version(jvm.clone(), class, version))
        }),
    }
}
