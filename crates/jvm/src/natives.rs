//! Calls from hosted plugins into Tributary (`Natives.java`): the source task's
//! `OffsetStorageReader`, the sink task's `ErrantRecordReporter` and `SinkTaskContext` requests,
//! and the connector's `ConnectorContext`. Java holds a handle (an id); the objects it names live in registries
//! here, dropped when the task or connector is.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jbyteArray, jlong};
use jni::{JNIEnv, NativeMethod};
use tributary_api::connector::ConnectorContext;
use tributary_api::record::SourceMap;
use tributary_api::sink::{ErrantRecordReporter, SinkTaskContext};
use tributary_api::source::OffsetStorageReader;
use tributary_api::ConnectError;
use tributary_json::JsonConverter;

use crate::codec::{Reader, Writer};

static NEXT: AtomicI64 = AtomicI64::new(1);

type Registry<T> = Mutex<HashMap<i64, Arc<T>>>;

fn readers() -> &'static Registry<dyn OffsetStorageReader> {
    static R: std::sync::OnceLock<Registry<dyn OffsetStorageReader>> = std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

fn reporters() -> &'static Registry<dyn ErrantRecordReporter> {
    static R: std::sync::OnceLock<Registry<dyn ErrantRecordReporter>> = std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

fn sink_contexts() -> &'static Registry<SinkTaskContext> {
    static R: std::sync::OnceLock<Registry<SinkTaskContext>> = std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

fn contexts() -> &'static Registry<dyn ConnectorContext> {
    static R: std::sync::OnceLock<Registry<dyn ConnectorContext>> = std::sync::OnceLock::new();
    R.get_or_init(Default::default)
}

/// A registered object; unregistered when dropped.
pub struct Handle {
    pub id: i64,
    remove: fn(i64),
}

impl Drop for Handle {
    fn drop(&mut self) {
        (self.remove)(self.id);
    }
}

/// Registers a source task's offset reader for `Natives.offsets`.
pub fn register_reader(reader: Arc<dyn OffsetStorageReader>) -> Handle {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    readers().lock().unwrap().insert(id, reader);
    Handle {
        id,
        remove: |id| {
            readers().lock().unwrap().remove(&id);
        },
    }
}

/// Registers a sink task's errant record reporter for `Natives.reportErrant`.
pub fn register_reporter(reporter: Arc<dyn ErrantRecordReporter>) -> Handle {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    reporters().lock().unwrap().insert(id, reporter);
    Handle {
        id,
        remove: |id| {
            reporters().lock().unwrap().remove(&id);
        },
    }
}

/// Registers a sink task's context for `Natives.sinkContext` (offset rewinds, timeout, pause,
/// resume, commit requests).
pub fn register_sink_context(context: SinkTaskContext) -> Handle {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    sink_contexts()
        .lock()
        .unwrap()
        .insert(id, Arc::new(context));
    Handle {
        id,
        remove: |id| {
            sink_contexts().lock().unwrap().remove(&id);
        },
    }
}

/// Registers a connector's context for `Natives.requestTaskReconfiguration` / `raiseError`.
pub fn register_context(context: Arc<dyn ConnectorContext>) -> Handle {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    contexts().lock().unwrap().insert(id, context);
    Handle {
        id,
        remove: |id| {
            contexts().lock().unwrap().remove(&id);
        },
    }
}

/// Binds the native methods of `io.tributary.jvm.Natives`.
pub fn register(env: &mut JNIEnv) -> jni::errors::Result<()> {
    let methods = [
        NativeMethod {
            name: "offsets".into(),
            sig: "(J[B)[B".into(),
            fn_ptr: offsets as *mut std::ffi::c_void,
        },
        NativeMethod {
            name: "requestTaskReconfiguration".into(),
            sig: "(J)V".into(),
            fn_ptr: request_task_reconfiguration as *mut std::ffi::c_void,
        },
        NativeMethod {
            name: "reportErrant".into(),
            sig: "(J[BLjava/lang/String;Ljava/lang/String;Ljava/lang/String;)V".into(),
            fn_ptr: report_errant as *mut std::ffi::c_void,
        },
        NativeMethod {
            name: "sinkContext".into(),
            sig: "(JI[B)V".into(),
            fn_ptr: sink_context as *mut std::ffi::c_void,
        },
        NativeMethod {
            name: "log".into(),
            sig: "(ILjava/lang/String;Ljava/lang/String;Ljava/lang/String;)V".into(),
            fn_ptr: log as *mut std::ffi::c_void,
        },
        NativeMethod {
            name: "raiseError".into(),
            sig: "(JLjava/lang/String;)V".into(),
            fn_ptr: raise_error as *mut std::ffi::c_void,
        },
    ];
    env.register_native_methods("io/tributary/jvm/Natives", &methods)
}

fn throw(env: &mut JNIEnv, message: &str) {
    env.throw_new("org/apache/kafka/connect/errors/ConnectException", message)
        .ok();
}

/// Reads the offsets of the partitions in `partitions` (int count, JSON bytes each); answers
/// in the same layout, null for a partition without a committed offset.
fn read_offsets(reader: &dyn OffsetStorageReader, partitions: &[u8]) -> Result<Vec<u8>, String> {
    let mut r = Reader::new(partitions);
    let n = r.count().map_err(|e| e.to_string())?;
    let mut w = Writer::new();
    w.i32(n as i32);
    for _ in 0..n {
        let bytes = r.bytes().map_err(|e| e.to_string())?.unwrap_or(b"null");
        let partition: SourceMap = serde_json::from_slice(bytes)
            .map_err(|e| format!("a source partition is not a JSON object: {e}"))?;
        match reader.offset(&partition).map_err(|e| e.to_string())? {
            Some(offset) => {
                let json = serde_json::to_vec(&offset).map_err(|e| e.to_string())?;
                w.bytes(Some(&json))
            }
            None => w.bytes(None),
        };
    }
    Ok(w.into_bytes())
}

extern "system" fn offsets<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    partitions: JByteArray<'l>,
) -> jbyteArray {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<Vec<u8>, String> {
        let reader = readers()
            .lock()
            .unwrap()
            .get(&handle)
            .cloned()
            .ok_or("the task's offset reader is gone")?;
        let bytes = env
            .convert_byte_array(&partitions)
            .map_err(|e| e.to_string())?;
        read_offsets(reader.as_ref(), &bytes)
    }))
    .unwrap_or_else(|_| Err("reading offsets panicked".into()));
    match result.and_then(|b| env.byte_array_from_slice(&b).map_err(|e| e.to_string())) {
        Ok(arr) => arr.into_raw(),
        Err(e) => {
            throw(&mut env, &e);
            std::ptr::null_mut()
        }
    }
}

/// `ErrantRecordReporter.report` of a hosted sink task: decodes the record (one record of a
/// put batch, `task::decode_sink_record`) and hands it with the Java error
/// ([`ConnectError::Java`]) to the task's reporter; its refusal (tolerance exceeded) is thrown
/// as a `ConnectException`, as Connect's reporter throws.
extern "system" fn report_errant<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    record: JByteArray<'l>,
    class: JString<'l>,
    message: JString<'l>,
    trace: JString<'l>,
) {
    let mut string =
        |s: &JString<'l>| -> String { env.get_string(s).map(|s| s.into()).unwrap_or_default() };
    let error = ConnectError::Java {
        class: string(&class),
        message: string(&message),
        trace: string(&trace),
    };
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let reporter = reporters()
            .lock()
            .unwrap()
            .get(&handle)
            .cloned()
            .ok_or("the task's errant record reporter is gone")?;
        let bytes = env.convert_byte_array(&record).map_err(|e| e.to_string())?;
        let record = crate::task::decode_sink_record(
            &mut Reader::new(&bytes),
            &JsonConverter::new().non_finite_floats(),
        )
        .map_err(|e| e.to_string())?;
        reporter.report(&record, error).map_err(|e| e.to_string())
    }))
    .unwrap_or_else(|_| Err("reporting an errant record panicked".into()));
    if let Err(e) = result {
        throw(&mut env, &e);
    }
}

/// Operations of `Natives.sinkContext` (`HostedSinkTask.OFFSETS` …).
const SINK_OFFSETS: i32 = 0;
const SINK_TIMEOUT: i32 = 1;
const SINK_PAUSE: i32 = 2;
const SINK_RESUME: i32 = 3;
const SINK_REQUEST_COMMIT: i32 = 4;

/// Carries out one `SinkTaskContext` request of a hosted sink task on its context in Tributary.
fn apply_sink_request(context: &SinkTaskContext, op: i32, arg: &[u8]) -> Result<(), String> {
    let partitions = |arg: &[u8]| -> Result<Vec<tributary_api::record::TopicPartition>, String> {
        let mut r = Reader::new(arg);
        let n = r.count().map_err(|e| e.to_string())?;
        (0..n)
            .map(|_| {
                Ok(tributary_api::record::TopicPartition::new(
                    r.str().map_err(|e| e.to_string())?,
                    r.i32().map_err(|e| e.to_string())?,
                ))
            })
            .collect()
    };
    match op {
        SINK_OFFSETS => {
            let offsets = crate::codec::read_offsets(arg).map_err(|e| e.to_string())?;
            context.offsets(offsets);
            Ok(())
        }
        SINK_TIMEOUT => {
            let ms = Reader::new(arg).i64().map_err(|e| e.to_string())?;
            context.timeout(ms.max(0) as u64);
            Ok(())
        }
        SINK_PAUSE => context.pause(&partitions(arg)?).map_err(|e| e.to_string()),
        SINK_RESUME => context.resume(&partitions(arg)?).map_err(|e| e.to_string()),
        SINK_REQUEST_COMMIT => {
            context.request_commit();
            Ok(())
        }
        other => Err(format!("unknown SinkTaskContext operation {other}")),
    }
}

extern "system" fn sink_context<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    op: jni::sys::jint,
    arg: JByteArray<'l>,
) {
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<(), String> {
        let context = sink_contexts()
            .lock()
            .unwrap()
            .get(&handle)
            .cloned()
            .ok_or("the sink task's context is gone")?;
        let bytes = if arg.is_null() {
            Vec::new()
        } else {
            env.convert_byte_array(&arg).map_err(|e| e.to_string())?
        };
        apply_sink_request(&context, op, &bytes)
    }))
    .unwrap_or_else(|_| Err("a SinkTaskContext request panicked".into()));
    if let Err(e) = result {
        throw(&mut env, &e);
    }
}

/// A hosted plugin's log event (`TributaryAppender`) as a `tracing` event of target `java`,
/// on the thread that logged: inside a task's or connector's span there, it carries that
/// context as Tributary's own lines do. log4j2's FATAL and ERROR are errors.
extern "system" fn log<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    level: jni::sys::jint,
    logger: JString<'l>,
    message: JString<'l>,
    trace: JString<'l>,
) {
    let mut string = |s: &JString<'l>| -> Option<String> {
        if s.is_null() {
            return None;
        }
        env.get_string(s).ok().map(Into::into)
    };
    let logger = string(&logger).unwrap_or_default();
    let message = string(&message).unwrap_or_default();
    let trace = string(&trace);
    let text = match trace {
        Some(t) => format!("{message}\n{t}"),
        None => message,
    };
    catch_unwind(AssertUnwindSafe(|| match level {
        i32::MIN..=200 => tracing::error!(target: "java", logger, "{text}"),
        201..=300 => tracing::warn!(target: "java", logger, "{text}"),
        301..=400 => tracing::info!(target: "java", logger, "{text}"),
        401..=500 => tracing::debug!(target: "java", logger, "{text}"),
        _ => tracing::trace!(target: "java", logger, "{text}"),
    }))
    .ok();
}

extern "system" fn request_task_reconfiguration<'l>(
    _env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
) {
    let ctx = contexts().lock().unwrap().get(&handle).cloned();
    if let Some(ctx) = ctx {
        catch_unwind(AssertUnwindSafe(|| ctx.request_task_reconfiguration())).ok();
    }
}

extern "system" fn raise_error<'l>(
    mut env: JNIEnv<'l>,
    _class: JClass<'l>,
    handle: jlong,
    trace: JString<'l>,
) {
    let trace: String = env.get_string(&trace).map(|s| s.into()).unwrap_or_default();
    let ctx = contexts().lock().unwrap().get(&handle).cloned();
    if let Some(ctx) = ctx {
        catch_unwind(AssertUnwindSafe(|| ctx.raise_error(trace))).ok();
    }
}
