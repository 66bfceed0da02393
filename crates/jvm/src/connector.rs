//! A Java connector hosted in the JVM, behind Tributary's [`Connector`] trait. The Java
//! instance is created on first use (on the calling thread: the worker's connector thread,
//! or a blocking REST thread for `config` / `validate`), so creating the Rust value is free.

use std::sync::{Arc, Mutex};

use jni::objects::{GlobalRef, JByteArray, JObject, JString, JValue};
use jni::JNIEnv;
use tributary_api::config::{ConfigDef, ConfigType, ConfigValue, Importance};
use tributary_api::connector::{Connector, ConnectorContext, ConnectorType, ExactlyOnceSupport};
use tributary_api::record::SourceMap;
use tributary_api::source::OffsetStorageReader;
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::codec::{CodecError, Reader, Writer};
use crate::natives::{self, Handle};
use crate::vm::Jvm;

/// One Java connector instance (class `class` of `plugin.path`).
pub struct JavaConnector {
    jvm: Arc<Jvm>,
    class: String,
    version: String,
    connector_type: ConnectorType,
    instance: Mutex<Option<GlobalRef>>,
    context: Option<Handle>,
    /// The registration of the context's offset reader for `Natives.offsets`.
    reader: Option<Handle>,
}

impl JavaConnector {
    /// A connector of `class`; nothing runs until a method is called.
    pub fn new(
        jvm: Arc<Jvm>,
        class: String,
        version: String,
        connector_type: ConnectorType,
    ) -> JavaConnector {
        JavaConnector {
            jvm,
            class,
            version,
            connector_type,
            instance: Mutex::new(None),
            context: None,
            reader: None,
        }
    }

    /// The Java `HostedConnector`, created on first use.
    fn instance(&self) -> ConnectResult<GlobalRef> {
        let mut slot = self.instance.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = slot.as_ref() {
            return Ok(i.clone());
        }
        let (class, version) = (self.class.clone(), self.version.clone());
        let created = self.jvm.call(|env, bridge| {
            let name = env.new_string(&class)?;
            // KIP-891: the version this plugin stands for, of several on plugin.path.
            let version = env.new_string(&version)?;
            let obj = env
                .call_static_method(
                    bridge,
                    "newConnector",
                    "(Ljava/lang/String;Ljava/lang/String;)Lio/tributary/jvm/HostedConnector;",
                    &[JValue::Object(&name), JValue::Object(&version)],
                )?
                .l()?;
            env.new_global_ref(obj)
        })?;
        *slot = Some(created.clone());
        Ok(created)
    }

    fn call_bytes(
        &self,
        method: &str,
        sig: &str,
        arg: Option<Vec<u8>>,
        int_arg: Option<i32>,
    ) -> ConnectResult<Option<Vec<u8>>> {
        let obj = self.instance()?;
        self.jvm.call(|env, _| {
            let arr;
            let mut args: Vec<JValue> = Vec::new();
            if let Some(i) = int_arg {
                args.push(JValue::Int(i));
            }
            if let Some(b) = &arg {
                arr = env.byte_array_from_slice(b)?;
                args.push(JValue::Object(&arr));
            }
            let out = env.call_method(&obj, method, sig, &args)?;
            bytes_result(env, out)
        })
    }
}

/// The offset reader of a connector's context (`SourceConnectorContext.offsetStorageReader()`),
/// asked for on first use: the runtime opens the connector's offset store then.
struct ContextOffsetReader(Arc<dyn ConnectorContext>);

impl OffsetStorageReader for ContextOffsetReader {
    fn offset(&self, partition: &SourceMap) -> ConnectResult<Option<SourceMap>> {
        match self.0.offset_storage_reader()? {
            Some(reader) => reader.offset(partition),
            None => Err(ConnectError::connect(
                "this connector has no offset store (only source connectors do)",
            )),
        }
    }
}

impl Drop for JavaConnector {
    fn drop(&mut self) {
        let instance = self
            .instance
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(obj) = instance {
            crate::task::close_metrics(&self.jvm, &obj);
            // Deleted on this thread, attached (a detached thread would attach just for it).
            self.jvm.release(obj);
        }
    }
}

/// The byte array a method returned (`None` for void or null).
pub(crate) fn bytes_result(
    env: &mut JNIEnv,
    out: jni::objects::JValueOwned,
) -> jni::errors::Result<Option<Vec<u8>>> {
    match out {
        jni::objects::JValueGen::Object(o) if !o.is_null() => {
            let arr = JByteArray::from(o);
            Ok(Some(env.convert_byte_array(&arr)?))
        }
        _ => Ok(None),
    }
}

pub(crate) fn java_string(env: &mut JNIEnv, o: JObject) -> jni::errors::Result<String> {
    if o.is_null() {
        return Ok(String::new());
    }
    Ok(env.get_string(&JString::from(o))?.into())
}

fn codec(e: CodecError) -> ConnectError {
    ConnectError::connect(e.to_string())
}

fn props_bytes(props: &Props) -> Vec<u8> {
    let mut w = Writer::new();
    w.map(props);
    w.into_bytes()
}

impl JavaConnector {
    /// The Java connector's answer to a KIP-618 question, `method(config)` returning the name
    /// of an enum constant (`HostedConnector`); `None` when it cannot be asked or the call
    /// fails (logged, naming `method`).
    fn ask(&self, method: &str, config: &Props) -> Option<String> {
        let obj = self.instance().ok()?;
        let bytes = props_bytes(config);
        let answer = self.jvm.call(|env, _| {
            let arr = env.byte_array_from_slice(&bytes)?;
            let s = env
                .call_method(
                    &obj,
                    method,
                    "([B)Ljava/lang/String;",
                    &[JValue::Object(&arr)],
                )?
                .l()?;
            java_string(env, s)
        });
        match answer {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::error!(connector = %self.class, error = %e, "{method}() failed");
                None
            }
        }
    }
}

impl Connector for JavaConnector {
    fn version(&self) -> String {
        self.version.clone()
    }

    fn connector_type(&self) -> ConnectorType {
        self.connector_type
    }

    fn task_class(&self) -> String {
        let result = self.instance().and_then(|obj| {
            self.jvm.call(|env, _| {
                let s = env
                    .call_method(&obj, "taskClass", "()Ljava/lang/String;", &[])?
                    .l()?;
                java_string(env, s)
            })
        });
        result.unwrap_or_else(|e| {
            tracing::error!(connector = %self.class, error = %e, "taskClass() failed");
            String::new()
        })
    }

    fn initialize(&mut self, context: Arc<dyn ConnectorContext>) {
        let tags = crate::codec::metric_tags(&context.plugin_metrics());
        let reader = natives::register_reader(Arc::new(ContextOffsetReader(context.clone())));
        let reader_id = reader.id;
        self.reader = Some(reader);
        let handle = natives::register_context(context);
        let id = handle.id;
        self.context = Some(handle);
        let result = self.instance().and_then(|obj| {
            self.jvm.call(|env, _| {
                let tags = env.byte_array_from_slice(&tags)?;
                env.call_method(
                    &obj,
                    "initialize",
                    "(JJ[B)V",
                    &[
                        JValue::Long(id),
                        JValue::Long(reader_id),
                        JValue::Object(&tags),
                    ],
                )?;
                Ok(())
            })
        });
        if let Err(e) = result {
            // `start` creates the instance again and reports the failure.
            tracing::error!(connector = %self.class, error = %e, "initialize() failed");
        }
    }

    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.call_bytes("start", "([B)V", Some(props_bytes(props)), None)
            .map(|_| ())
    }

    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        let max = i32::try_from(max_tasks).unwrap_or(i32::MAX);
        let bytes = self
            .call_bytes("taskConfigs", "(I)[B", None, Some(max))?
            .unwrap_or_default();
        let mut r = Reader::new(&bytes);
        let n = r.count().map_err(codec)?;
        (0..n).map(|_| r.map().map_err(codec)).collect()
    }

    fn stop(&mut self) -> ConnectResult<()> {
        if self
            .instance
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
        {
            return Ok(());
        }
        self.call_bytes("stop", "()V", None, None).map(|_| ())
    }

    /// The Java connector's `canDefineTransactionBoundaries(config)` (KIP-618); unsupported when
    /// the call fails (logged). Its tasks then get a `TransactionContext`
    /// (`HostedSourceTask.TransactionRequests`) whose requests reach the runtime's.
    fn can_define_transaction_boundaries(
        &self,
        config: &Props,
    ) -> tributary_api::connector::ConnectorTransactionBoundaries {
        use tributary_api::connector::ConnectorTransactionBoundaries as B;
        match self
            .ask("canDefineTransactionBoundaries", config)
            .as_deref()
        {
            Some("SUPPORTED") => B::Supported,
            _ => B::Unsupported,
        }
    }

    /// The Java connector's `exactlyOnceSupport(config)` (KIP-618); `None` when it does not say,
    /// or when the call fails (logged).
    fn exactly_once_support(&self, config: &Props) -> Option<ExactlyOnceSupport> {
        match self.ask("exactlyOnceSupport", config).as_deref() {
            Some("SUPPORTED") => Some(ExactlyOnceSupport::Supported),
            Some("UNSUPPORTED") => Some(ExactlyOnceSupport::Unsupported),
            _ => None,
        }
    }

    fn config(&self) -> ConfigDef {
        match self.config_def() {
            Ok(def) => def,
            Err(e) => {
                tracing::error!(connector = %self.class, error = %e, "config() failed");
                ConfigDef::new()
            }
        }
    }

    fn validate(&self, props: &Props) -> Vec<ConfigValue> {
        match self.validate_values(props) {
            Ok(values) => values,
            Err(e) => {
                let mut v = ConfigValue::new("connector.class");
                v.value = Some(self.class.clone());
                v.errors.push(e.to_string());
                vec![v]
            }
        }
    }
}

impl JavaConnector {
    fn config_def(&self) -> ConnectResult<ConfigDef> {
        let bytes = self
            .call_bytes("config", "()[B", None, None)?
            .unwrap_or_default();
        let mut r = Reader::new(&bytes);
        let n = r.count().map_err(codec)?;
        let mut def = ConfigDef::new();
        for _ in 0..n {
            let name = r.str().map_err(codec)?;
            let config_type = parse_type(&r.str().map_err(codec)?);
            let has_default = r.u8().map_err(codec)? == 1;
            let default = r.opt_str().map_err(codec)?;
            let importance = match r.str().map_err(codec)?.as_str() {
                "HIGH" => Importance::High,
                "MEDIUM" => Importance::Medium,
                _ => Importance::Low,
            };
            let doc = r.opt_str().map_err(codec)?.unwrap_or_default();
            let default = has_default.then_some(default.as_deref());
            def = def.define(&name, config_type, default, None, importance, &doc);
        }
        Ok(def)
    }

    fn validate_values(&self, props: &Props) -> ConnectResult<Vec<ConfigValue>> {
        let bytes = self
            .call_bytes("validate", "([B)[B", Some(props_bytes(props)), None)?
            .unwrap_or_default();
        let mut r = Reader::new(&bytes);
        let n = r.count().map_err(codec)?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let mut v = ConfigValue::new(r.str().map_err(codec)?);
            v.value = r.opt_str().map_err(codec)?;
            for _ in 0..r.count().map_err(codec)? {
                v.recommended_values
                    .push(r.opt_str().map_err(codec)?.unwrap_or_default());
            }
            for _ in 0..r.count().map_err(codec)? {
                v.errors
                    .push(r.opt_str().map_err(codec)?.unwrap_or_default());
            }
            v.visible = r.u8().map_err(codec)? == 1;
            out.push(v);
        }
        Ok(out)
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
