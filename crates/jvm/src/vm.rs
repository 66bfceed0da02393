//! The worker's one in-process JVM: located from `JAVA_HOME` or the `java` on `PATH`, started
//! on first use with the bridge's class path and `tributary.jvm.options`, and the helpers that
//! call into it from any thread (attached for good on first use) and turn Java exceptions into
//! [`ConnectError::Java`] with their stack traces.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use jni::objects::{GlobalRef, JObject, JString, JThrowable, JValue};
use jni::{InitArgsBuilder, JNIEnv, JNIVersion, JavaVM};
use tributary_api::ConnectError;

use crate::natives;

/// Where the JVM and the bridge come from, and how the JVM runs (worker settings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JvmSettings {
    /// The bridge's class path (`tributary.jvm.classpath`, what `scripts/jvm-bridge` prints):
    /// the bridge jar, Connect's runtime and its dependencies, `:`-separated; an entry
    /// ending in `/*` stands for every jar of that directory, as for `java -cp`.
    pub classpath: String,
    /// Extra JVM options (`tributary.jvm.options`, split on white space, e.g. `-Xmx512m`).
    pub options: Vec<String>,
    /// `plugin.path`, as given (comma-separated directories).
    pub plugin_path: String,
    /// `plugin.discovery` (KIP-898): `only_scan`, `hybrid_warn`, `hybrid_fail` or
    /// `service_load`, lowercase.
    pub discovery: String,
    /// Whether the startup scan found that `service_load` discovers exactly the plugins
    /// `discovery` does ([`crate::Scan::service_load_equivalent`]); the in-process JVM then
    /// scans with `service_load`, about 1 s instead of several for a reflective scan of every
    /// jar (Debezium's two plugins: 1.0 s against 6.1 s from JVM start to scanned).
    pub service_load_equivalent: bool,
}

impl JvmSettings {
    /// The `plugin.discovery` mode the in-process JVM scans with: `service_load` when
    /// [`JvmSettings::service_load_equivalent`], otherwise [`JvmSettings::discovery`].
    pub fn in_process_discovery(&self) -> &str {
        if self.service_load_equivalent {
            "service_load"
        } else {
            &self.discovery
        }
    }

    /// The class path with `dir/*` entries expanded to the jars of `dir` (JNI's
    /// `-Djava.class.path` does not expand them as the `java` launcher does).
    pub fn expanded_classpath(&self) -> String {
        let mut out: Vec<String> = Vec::new();
        for entry in self.classpath.split(':').filter(|e| !e.is_empty()) {
            if let Some(dir) = entry.strip_suffix("/*") {
                let mut jars: Vec<String> = std::fs::read_dir(dir)
                    .map(|rd| {
                        rd.filter_map(|e| e.ok())
                            .map(|e| e.path())
                            .filter(|p| p.extension().is_some_and(|x| x == "jar"))
                            .map(|p| p.display().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                jars.sort();
                out.extend(jars);
            } else {
                out.push(entry.to_string());
            }
        }
        out.join(":")
    }
}

/// The Java installation to use: `$JAVA_HOME`, or the `java.home` of the `java` on `PATH`
/// (as `java -XshowSettings:properties -version` reports it).
pub fn java_home() -> Result<PathBuf, String> {
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    let out = Command::new("java")
        .args(["-XshowSettings:properties", "-version"])
        .output()
        .map_err(|e| format!("cannot run `java` (set JAVA_HOME or put java on PATH): {e}"))?;
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("java.home = "))
        .map(|h| PathBuf::from(h.trim()))
        .ok_or_else(|| "`java -XshowSettings:properties -version` reported no java.home".into())
}

/// `libjvm.so` of a Java installation (`lib/server`, or `lib/client`).
pub fn libjvm(home: &std::path::Path) -> Result<PathBuf, String> {
    let name = if cfg!(target_os = "macos") {
        "libjvm.dylib"
    } else {
        "libjvm.so"
    };
    ["lib/server", "lib/client", "jre/lib/amd64/server"]
        .iter()
        .map(|d| home.join(d).join(name))
        .find(|p| p.exists())
        .ok_or_else(|| format!("no {name} under {}", home.display()))
}

/// The worker's JVM, started on first use ([`Jvm::call`]) and never stopped (a JVM cannot be
/// started twice in a process).
pub struct Jvm {
    settings: JvmSettings,
    started: OnceLock<Result<Started, String>>,
    starting: Mutex<()>,
    /// Java logger levels set through `/admin/loggers` (logger name, `root` included → log4j2
    /// level name), applied when the JVM starts and, once it runs, as they are set.
    logger_levels: Mutex<BTreeMap<String, String>>,
}

struct Started {
    vm: JavaVM,
    bridge: GlobalRef,
}

static ANY_STARTED: AtomicBool = AtomicBool::new(false);

/// Whether this process started a JVM (for tests and status: a worker with no Java plugin
/// in use never does).
pub fn jvm_started() -> bool {
    ANY_STARTED.load(Ordering::Acquire)
}

/// The bridge's entry class.
const BRIDGE: &str = "io/tributary/jvm/Bridge";

impl Jvm {
    /// A JVM that starts when first needed.
    pub fn new(settings: JvmSettings) -> Jvm {
        Jvm {
            settings,
            started: OnceLock::new(),
            starting: Mutex::new(()),
            logger_levels: Mutex::new(BTreeMap::new()),
        }
    }

    /// Sets the level of a logger of the hosted plugins (`root` for the root logger; `level`
    /// one of Connect's names, TRACE to OFF), as Connect's `Loggers.setLevel` does for each
    /// logger `/admin/loggers` changes. Never starts the JVM: the level is kept and applied when
    /// it starts; a running JVM gets it on a thread of its own (the caller may be async code),
    /// which applies every kept level, so levels set in quick succession end as last set.
    pub fn set_logger_level(self: &Arc<Self>, logger: &str, level: &str) {
        self.logger_levels
            .lock()
            .unwrap()
            .insert(logger.to_string(), level.to_string());
        if !matches!(self.started.get(), Some(Ok(_))) {
            return;
        }
        let jvm = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("jvm-log-levels".into())
            .spawn(move || {
                if let Err(e) = jvm.call(|env, bridge| jvm.apply_logger_levels(env, bridge)) {
                    tracing::warn!("cannot set the Java plugins' log levels: {e}");
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot set the Java plugins' log levels: {e}");
        }
    }

    /// Applies every kept logger level to the JVM's log4j2 (`Bridge.setLoggerLevel`).
    fn apply_logger_levels(&self, env: &mut JNIEnv, bridge: &GlobalRef) -> jni::errors::Result<()> {
        let levels = self.logger_levels.lock().unwrap().clone();
        for (logger, level) in levels {
            let logger = env.new_string(logger)?;
            let level = env.new_string(level)?;
            env.call_static_method(
                bridge,
                "setLoggerLevel",
                "(Ljava/lang/String;Ljava/lang/String;)V",
                &[JValue::Object(&logger), JValue::Object(&level)],
            )?;
        }
        Ok(())
    }

    /// The settings it starts with.
    pub fn settings(&self) -> &JvmSettings {
        &self.settings
    }

    fn started(&self) -> Result<&Started, ConnectError> {
        if let Some(s) = self.started.get() {
            return s.as_ref().map_err(|e| ConnectError::connect(e.clone()));
        }
        let _guard = self.starting.lock().unwrap_or_else(|e| e.into_inner());
        let s = self.started.get_or_init(|| self.start());
        s.as_ref().map_err(|e| ConnectError::connect(e.clone()))
    }

    fn start(&self) -> Result<Started, String> {
        let home = java_home()?;
        let lib = libjvm(&home)?;
        let mut args = InitArgsBuilder::new()
            .version(JNIVersion::V8)
            .option(format!(
                "-Djava.class.path={}",
                self.settings.expanded_classpath()
            ))
            // The worker handles SIGTERM and SIGINT itself; the JVM must not take them.
            .option("-Xrs");
        for o in &self.settings.options {
            args = args.option(o.as_str());
        }
        let args = args
            .build()
            .map_err(|e| format!("bad tributary.jvm.options: {e}"))?;
        tracing::info!(libjvm = %lib.display(), "starting the JVM for Java plugins");
        let vm = JavaVM::with_libjvm(args, || Ok(lib.as_os_str()))
            .map_err(|e| format!("cannot start the JVM from {}: {e}", lib.display()))?;
        ANY_STARTED.store(true, Ordering::Release);
        let mut env = vm
            .attach_current_thread_permanently()
            .map_err(|e| format!("cannot attach to the JVM: {e}"))?;
        let bridge = env
            .find_class(BRIDGE)
            .and_then(|c| env.new_global_ref(c))
            .map_err(|e| {
                describe(
                    &mut env,
                    e,
                    "io.tributary.jvm.Bridge not found on tributary.jvm.classpath",
                )
            })?;
        natives::register(&mut env).map_err(|e| describe(&mut env, e, "RegisterNatives"))?;
        let path = env
            .new_string(&self.settings.plugin_path)
            .map_err(|e| e.to_string())?;
        let discovery = env
            .new_string(self.settings.in_process_discovery())
            .map_err(|e| e.to_string())?;
        // The plugins log at the level Tributary's own log is at.
        let level = env
            .new_string(
                tracing::level_filters::LevelFilter::current()
                    .into_level()
                    .map_or("OFF".to_string(), |l| l.to_string()),
            )
            .map_err(|e| e.to_string())?;
        env.call_static_method(
            &bridge,
            "init",
            "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;)V",
            &[
                JValue::Object(&path),
                JValue::Object(&discovery),
                JValue::Object(&level),
            ],
        )
        .map_err(|e| {
            let e = java_error(&mut env, &bridge, e);
            format!(
                "scanning plugin.path: {}",
                e.stack_trace().unwrap_or(&e.to_string())
            )
        })?;
        tracing::info!(
            plugin_path = %self.settings.plugin_path,
            discovery = self.settings.in_process_discovery(),
            options = %self.settings.options.join(" "),
            "JVM started, plugin.path scanned"
        );
        // Levels set through /admin/loggers before the JVM ran.
        env.with_local_frame(32, |env| self.apply_logger_levels(env, &bridge))
            .map_err(|e| {
                let e = java_error(&mut env, &bridge, e);
                format!("setting the Java plugins' log levels: {e}")
            })?;
        Ok(Started { vm, bridge })
    }

    /// Runs `f` on this thread attached to the JVM (starting it if needed), inside a local
    /// reference frame, so a long-lived thread leaks no references. A Java exception becomes
    /// [`ConnectError::Java`] (or [`ConnectError::Retriable`] for Connect's
    /// `RetriableException`) with its stack trace.
    pub fn call<T>(
        &self,
        f: impl FnOnce(&mut JNIEnv, &GlobalRef) -> jni::errors::Result<T>,
    ) -> Result<T, ConnectError> {
        let started = self.started()?;
        let mut env = started
            .vm
            .attach_current_thread_permanently()
            .map_err(|e| ConnectError::connect(format!("cannot attach to the JVM: {e}")))?;
        let bridge = &started.bridge;
        let result = env.with_local_frame(32, |env| f(env, bridge));
        result.map_err(|e| java_error(&mut env, bridge, e))
    }
}

impl Jvm {
    /// Whether this JVM runs (never starts it).
    pub fn is_started(&self) -> bool {
        matches!(self.started.get(), Some(Ok(_)))
    }

    /// Deletes a global reference on this thread, attached to the JVM (which runs, since the
    /// reference exists).
    pub fn release(&self, obj: GlobalRef) {
        if let Some(Ok(started)) = self.started.get() {
            if started.vm.attach_current_thread_permanently().is_ok() {
                drop(obj);
                return;
            }
        }
        drop(obj);
    }
}

fn describe(env: &mut JNIEnv, e: jni::errors::Error, what: &str) -> String {
    if matches!(e, jni::errors::Error::JavaException) {
        let trace = pending_trace(env).unwrap_or_default();
        format!("{what}: {trace}")
    } else {
        format!("{what}: {e}")
    }
}

/// The pending exception's trace (clearing it), via `Throwable.printStackTrace`.
fn pending_trace(env: &mut JNIEnv) -> Option<String> {
    let ex = env.exception_occurred().ok()?;
    env.exception_clear().ok()?;
    if ex.is_null() {
        return None;
    }
    let s = env
        .call_method(&ex, "toString", "()Ljava/lang/String;", &[])
        .ok()?
        .l()
        .ok()?;
    let text: String = env.get_string(&JString::from(s)).ok()?.into();
    Some(text)
}

fn java_error(env: &mut JNIEnv, bridge: &GlobalRef, e: jni::errors::Error) -> ConnectError {
    if !matches!(e, jni::errors::Error::JavaException) {
        return ConnectError::connect(format!("JNI call failed: {e}"));
    }
    let described = env.with_local_frame(16, |env| -> jni::errors::Result<ConnectError> {
        let ex: JThrowable = env.exception_occurred()?;
        env.exception_clear()?;
        let as_string = |env: &mut JNIEnv, o: JObject| -> jni::errors::Result<String> {
            if o.is_null() {
                return Ok(String::new());
            }
            Ok(env.get_string(&JString::from(o))?.into())
        };
        let trace = env
            .call_static_method(
                bridge,
                "trace",
                "(Ljava/lang/Throwable;)Ljava/lang/String;",
                &[JValue::Object(&ex)],
            )?
            .l()?;
        let trace = as_string(env, trace)?;
        let retriable = env
            .call_static_method(
                bridge,
                "isRetriable",
                "(Ljava/lang/Throwable;)Z",
                &[JValue::Object(&ex)],
            )?
            .z()?;
        let message = env
            .call_method(&ex, "getMessage", "()Ljava/lang/String;", &[])?
            .l()?;
        let message = as_string(env, message)?;
        let class = env
            .call_method(&ex, "getClass", "()Ljava/lang/Class;", &[])?
            .l()?;
        let class = env
            .call_method(&class, "getName", "()Ljava/lang/String;", &[])?
            .l()?;
        let class = as_string(env, class)?;
        Ok(if retriable {
            ConnectError::Retriable(format!("{class}: {message}"))
        } else {
            ConnectError::Java {
                class,
                message,
                trace,
            }
        })
    });
    described.unwrap_or_else(|e| {
        env.exception_clear().ok();
        ConnectError::connect(format!("a Java exception could not be described: {e}"))
    })
}
