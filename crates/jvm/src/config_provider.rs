//! Java config providers of `plugin.path` (KIP-297's `ConfigProvider`, e.g. a secrets
//! manager's), hosted in the worker's JVM behind [`PluginConfigProvider`] (the Java side is
//! `HostedConfigProvider.java`): created and configured as a Java worker creates the providers
//! its file declares, then asked for values whenever the runtime resolves a reference to them.
//! Calls block (JNI): the runtime makes them from its blocking threads.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use jni::objects::{GlobalRef, JValue};
use tributary_api::config_provider::{
    ConfigData, PluginConfigProvider, PluginConfigProviderFactory,
};
use tributary_api::{ConnectError, ConnectResult};

use crate::codec::{Reader, Writer};
use crate::connector::bytes_result;
use crate::vm::Jvm;

const HOSTED: &str = "io/tributary/jvm/HostedConfigProvider";

/// One configured Java provider.
struct JavaConfigProvider {
    jvm: Arc<Jvm>,
    class: String,
    obj: Option<GlobalRef>,
}

impl PluginConfigProvider for JavaConfigProvider {
    fn class(&self) -> &str {
        &self.class
    }

    fn get(&self, path: &str, keys: &BTreeSet<&str>) -> ConnectResult<ConfigData> {
        let obj = self
            .obj
            .as_ref()
            .ok_or_else(|| ConnectError::connect(format!("{} is closed", self.class)))?;
        let mut wanted = Writer::new();
        let keys: Vec<(String, String)> = keys
            .iter()
            .map(|k| (k.to_string(), String::new()))
            .collect();
        wanted.pairs(&keys);
        let wanted = wanted.into_bytes();
        let out = self.jvm.call(|env, _| {
            let path = env.new_string(path)?;
            let keys = env.byte_array_from_slice(&wanted)?;
            let out = env.call_method(
                obj,
                "get",
                "(Ljava/lang/String;[B)[B",
                &[JValue::Object(&path), JValue::Object(&keys)],
            )?;
            bytes_result(env, out)
        })?;
        let out = out.ok_or_else(|| ConnectError::connect("the provider answered nothing"))?;
        let mut r = Reader::new(&out);
        let bad = |e| ConnectError::connect(format!("reading the provider's answer: {e}"));
        let data: HashMap<String, String> = r.map().map_err(bad)?.into_iter().collect();
        let ttl = r.i64().map_err(bad)?;
        Ok(ConfigData {
            data,
            ttl_ms: (ttl >= 0).then_some(ttl),
        })
    }
}

impl Drop for JavaConfigProvider {
    fn drop(&mut self) {
        if let Some(obj) = self.obj.take() {
            let closed = self
                .jvm
                .call(|env, _| env.call_method(&obj, "close", "()V", &[]).map(drop));
            if let Err(e) = closed {
                tracing::warn!(class = %self.class, "closing the config provider: {e}");
            }
            self.jvm.release(obj);
        }
    }
}

/// The factory the runtime creates Java providers with (`config.providers.<name>.class` naming
/// a class of `plugin.path`): `Plugins.newConfigProvider` in `jvm`, which starts when the first
/// one is created. Errors: Connect's (no such class on `plugin.path`, its `configure` threw),
/// with the Java trace.
pub fn factory(jvm: Arc<Jvm>) -> PluginConfigProviderFactory {
    Arc::new(move |name, class, settings| {
        let mut w = Writer::new();
        w.map(settings);
        let bytes = w.into_bytes();
        let obj = jvm.call(|env, _| {
            let name = env.new_string(name)?;
            let settings = env.byte_array_from_slice(&bytes)?;
            let obj = env
                .call_static_method(
                    HOSTED,
                    "create",
                    "(Ljava/lang/String;[B)Lio/tributary/jvm/HostedConfigProvider;",
                    &[JValue::Object(&name), JValue::Object(&settings)],
                )?
                .l()?;
            env.new_global_ref(&obj)
        })?;
        tracing::info!(provider = name, class, "Java config provider configured");
        Ok(Some(Arc::new(JavaConfigProvider {
            jvm: Arc::clone(&jvm),
            class: class.to_string(),
            obj: Some(obj),
        }) as Arc<dyn PluginConfigProvider>))
    })
}
