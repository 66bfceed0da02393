//! What standalone and distributed workers do alike at startup: read and check the worker
//! file, bind the REST listener, work out the advertised URL, find the Kafka cluster, and wait
//! for SIGINT/SIGTERM.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tributary_runtime::config::clients;
use tributary_runtime::config::properties::load_properties;
use tributary_runtime::config::worker::{WorkerConfig, WorkerMode};
use tributary_runtime::plugins::Plugins;
use tributary_runtime::rest::{self, BoundListener};

/// A worker ready to start its herder.
pub struct Prepared {
    pub config: WorkerConfig,
    pub plugins: Arc<Plugins>,
    pub bound: BoundListener,
    /// `host:port`.
    pub worker_id: String,
    /// `http://host:port`.
    pub advertised_url: String,
    pub cluster_id: String,
    /// The worker file's name, for error messages.
    pub source: String,
    /// HTTPS and authentication of the REST API.
    pub rest_security: rest::RestSecurity,
    /// The bound `admin.listeners` listener (KIP-495), when `/admin` has its own.
    pub admin_bound: Option<BoundListener>,
}

/// Reads and validates the worker file (errors name the file and key), checks the converter
/// classes, binds the REST listener and contacts Kafka.
pub async fn prepare(mode: WorkerMode, worker_path: &Path) -> Result<Prepared, String> {
    let source = worker_path.display().to_string();
    let raw = load_properties(worker_path).map_err(|e| e.to_string())?;
    let config = parse_worker_config(mode, raw, &source).await?;
    // Connect 4.1.1's `AbstractConfig.logUnused` wording (INFO there, from the clients the
    // worker passes its settings to); a warning here, naming the file.
    // A key close to a known one gets its own warning naming that key, and only that one.
    let misspelled = config.misspelled_keys();
    for (key, closest) in &misspelled {
        tracing::warn!(
            "{source}: '{key}' is not a worker setting Tributary knows; did you mean '{closest}'?"
        );
    }
    let unused: Vec<String> = config
        .unused_keys()
        .into_iter()
        .filter(|k| !misspelled.iter().any(|(m, _)| m == k))
        .collect();
    if !unused.is_empty() {
        tracing::warn!(
            "{source}: These configurations '[{}]' were supplied but are not used yet.",
            unused.join(", ")
        );
    }
    let plugins = Arc::new(load_plugins(&config, &source).await?);
    let settings = config.settings();
    for (key, class) in [
        ("key.converter", &settings.key_converter),
        ("value.converter", &settings.value_converter),
    ] {
        plugins
            .converter_plugin(class)
            .map_err(|e| format!("{source}: key '{key}': {e}"))?;
    }
    let header = plugins
        .header_converter_plugin(&settings.header_converter)
        .map_err(|e| format!("{source}: key 'header.converter': {e}"))?;
    // KIP-891: a worker's converter version requirement no installed version of the converter
    // meets stops the worker, naming the key.
    use tributary_runtime::plugins::PluginKind;
    for (key, kind, class) in [
        (
            "key.converter",
            PluginKind::Converter,
            settings.key_converter.as_str(),
        ),
        (
            "value.converter",
            PluginKind::Converter,
            settings.value_converter.as_str(),
        ),
        (
            "header.converter",
            PluginKind::HeaderConverter,
            header.class,
        ),
    ] {
        let version_key = format!("{key}.plugin.version");
        let Some(setting) = config.raw(&version_key) else {
            continue;
        };
        let class = plugins.plugin_class(class.trim(), kind).unwrap_or(class);
        if plugins.versions(kind, class).is_empty() {
            continue;
        }
        if let Err(e) = plugins.version_in(kind, class, Some(setting)) {
            return Err(format!("{source}: key '{version_key}': {e}"));
        }
    }
    // Kafka client security (TLS stores, SASL): refused here, naming the key, rather than
    // when a client is first created.
    clients::check_worker_security(&config)
        .map_err(|e| format!("{source}: key '{}': {}", e.key, e.message))?;
    // HTTPS listener, the client for other workers, basic auth; the JAAS file is named in
    // KAFKA_OPTS, as for Connect's start scripts.
    let kafka_opts = std::env::var("KAFKA_OPTS").ok();
    let rest_security = rest::RestSecurity::from_worker(&config, kafka_opts.as_deref())
        .map_err(|(key, message)| format!("{source}: key '{key}': {message}"))?;
    let listener = settings
        .listeners
        .first()
        .cloned()
        .ok_or_else(|| format!("{source}: no listener in 'listeners'"))?;
    let bound = rest::bind(&listener).await.map_err(|e| {
        format!(
            "{source}: key 'listeners': cannot bind {}:{}: {e}",
            listener.host, listener.port
        )
    })?;
    let admin_bound = match settings.admin_listeners.as_ref().and_then(|l| l.first()) {
        Some(admin) => Some(rest::bind(admin).await.map_err(|e| {
            format!(
                "{source}: key 'admin.listeners': cannot bind {}:{}: {e}",
                admin.host, admin.port
            )
        })?),
        None => None,
    };
    let (host, port) = rest::advertised(&config, &listener, bound.local_addr);
    check_kafka_credentials(&config)
        .await
        .map_err(|(key, message)| format!("{source}: key '{key}': {message}"))?;
    let cfg = config.clone();
    let cluster_id = tokio::task::spawn_blocking(move || kafka_cluster_id(&cfg))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("{source}: key 'bootstrap.servers': {e}"))?;
    Ok(Prepared {
        config,
        plugins,
        bound,
        worker_id: format!("{host}:{port}"),
        advertised_url: format!("{}://{host}:{port}", listener.protocol),
        cluster_id,
        source,
        rest_security,
        admin_bound,
    })
}

/// With TLS or SASL at worker level, connects once to a bootstrap broker with the worker's
/// settings: a wrong password, a refused mechanism or an untrusted broker certificate stops
/// startup naming the key (`sasl.jaas.config`, `sasl.mechanism`, `ssl.truststore.location`),
/// where librdkafka would only retry and log.
async fn check_kafka_credentials(config: &WorkerConfig) -> Result<(), (String, String)> {
    use tributary_group::client::{check_connection, ConnectionSecurity, GroupError};
    check_oauth_logins(config).await?;
    let security = clients::worker_security(config).map_err(|e| (e.key, e.message))?;
    if security.tls.is_none() && security.sasl.is_none() {
        return Ok(());
    }
    let connection =
        ConnectionSecurity::from_settings(&security).map_err(|e| (e.key, e.message))?;
    match check_connection(
        &config.bootstrap_servers(),
        "tributary-startup-check",
        Duration::from_secs(30),
        &connection,
    )
    .await
    {
        Ok(()) => Ok(()),
        Err(e @ GroupError::Authentication { .. }) => {
            let key = if e.to_string().contains("does not enable") {
                "sasl.mechanism"
            } else {
                "sasl.jaas.config"
            };
            Err((key.to_string(), e.to_string()))
        }
        Err(e @ GroupError::Tls { .. }) => {
            Err(("ssl.truststore.location".to_string(), e.to_string()))
        }
        // Unreachable brokers are reported by the cluster id lookup that follows.
        Err(e) => {
            tracing::debug!(error = %e, "startup connection check could not reach a broker");
            Ok(())
        }
    }
}

/// Gets a first token for every OIDC client-credentials login of the worker file (worker
/// level, `producer.`, `consumer.`, `admin.`), on the blocking pool: a provider that refuses
/// the client secret, or cannot be reached within `sasl.login.retry.backoff.max.ms`, stops
/// startup naming the key (`sasl.jaas.config`, `sasl.oauthbearer.token.endpoint.url`, …, with
/// the prefix). The tokens stay cached for the clients created next.
async fn check_oauth_logins(config: &WorkerConfig) -> Result<(), (String, String)> {
    let mut seen: Vec<String> = Vec::new();
    for (prefix, security) in
        clients::all_client_security(config).map_err(|e| (e.key, e.message))?
    {
        let Some(source) = security.sasl().and_then(|c| c.token_source()) else {
            continue;
        };
        if !source.is_client_credentials() || seen.iter().any(|id| id == source.id()) {
            continue;
        }
        seen.push(source.id().to_string());
        let fetch = source.clone();
        match tokio::task::spawn_blocking(move || fetch.token()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                let e = e.with_prefix(prefix);
                return Err((e.key, format!("no OAuth access token: {}", e.message)));
            }
            Err(e) => {
                return Err((
                    format!("{prefix}sasl.oauthbearer.token.endpoint.url"),
                    e.to_string(),
                ))
            }
        }
    }
    Ok(())
}

/// Finds the Kafka cluster id; failing means Kafka is unreachable (Connect fails startup too).
pub(crate) fn kafka_cluster_id(config: &WorkerConfig) -> Result<String, String> {
    use rdkafka::producer::{BaseProducer, Producer};
    use tributary_runtime::kafka_client::{set_initial_token, WorkerClientContext};
    let admin = clients::admin_config(config).map_err(|e| e.to_string())?;
    let producer: BaseProducer<WorkerClientContext> = admin
        .create_with_context(WorkerClientContext)
        .map_err(|e| format!("cannot create a Kafka client: {e}"))?;
    set_initial_token(producer.client(), &admin).map_err(|e| e.to_string())?;
    producer
        .client()
        .fetch_cluster_id(Duration::from_secs(30))
        .ok_or_else(|| {
            format!(
                "could not reach a Kafka broker at {} within 30 s",
                config.bootstrap_servers()
            )
        })
}

/// The running REST servers: the main listener and, with `admin.listeners`, the admin one.
pub struct RestServers {
    servers: Vec<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<std::io::Result<()>>,
    )>,
}

impl RestServers {
    /// Serves `state` on `bound`, and the `/admin` endpoints on `admin_bound` when given.
    pub fn start(
        bound: BoundListener,
        admin_bound: Option<BoundListener>,
        state: rest::RestState,
    ) -> RestServers {
        let mut servers = Vec::new();
        if let Some(admin) = admin_bound {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let scheme = if state.admin_tls.is_some() {
                "https"
            } else {
                "http"
            };
            tracing::info!(
                "admin REST endpoints listening on {scheme}://{}",
                admin.local_addr
            );
            let handle = tokio::spawn(rest::serve_admin(admin, state.clone(), async move {
                stopped.await.ok();
            }));
            servers.push((stop, handle));
        }
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(rest::serve(bound, state, async move {
            // A dropped sender (the worker is ending anyway) stops the server too.
            stopped.await.ok();
        }));
        servers.push((stop, handle));
        RestServers { servers }
    }

    /// Stops every server and waits for them; a failure of a server (which nothing else
    /// reports once it runs) is logged.
    pub async fn stop(self) {
        self.stop_within(None).await;
    }

    /// [`Self::stop`], giving requests in flight at most `bound` (when set) before the
    /// servers are dropped with their connections.
    pub async fn stop_within(self, bound: Option<Duration>) {
        for (stop, server) in self.servers {
            // An error means the server already ended: awaiting it below reports why.
            stop.send(()).ok();
            let abort = server.abort_handle();
            let outcome = match bound {
                Some(b) => match tokio::time::timeout(b, server).await {
                    Ok(r) => r,
                    Err(_) => {
                        tracing::info!(?b, "requests still in flight when stopping; closing them");
                        abort.abort();
                        continue;
                    }
                },
                None => server.await,
            };
            match outcome {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::error!(error = %e, "the REST server failed"),
                Err(e) => tracing::error!(error = %e, "the REST server's task failed"),
            }
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    ShutdownSignal::install().wait().await;
}

/// SIGINT and SIGTERM, caught from the moment [`ShutdownSignal::install`] is called (before
/// that, a SIGTERM kills the process) and remembered: [`ShutdownSignal::wait`] resolves at once
/// for a signal that came earlier, so startup steps can be abandoned when one arrives.
#[derive(Clone)]
pub struct ShutdownSignal(tokio::sync::watch::Receiver<bool>);

impl ShutdownSignal {
    /// Installs the handlers (panics if the OS refuses, which only a broken runtime does).
    pub fn install() -> ShutdownSignal {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("installing SIGTERM handler");
        let (tx, rx) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {},
                _ = term.recv() => {},
            }
            tx.send_replace(true);
            // Keep the sender, so that waiters never see it dropped.
            std::future::pending::<()>().await;
        });
        ShutdownSignal(rx)
    }

    /// Resolves once a signal has arrived.
    pub async fn wait(&self) {
        let mut rx = self.0.clone();
        // The sender lives as long as the process.
        rx.wait_for(|s| *s).await.ok();
    }
}

/// The built-in plugins plus the Java connectors, transformations and predicates of
/// `plugin.path` (found by a short-lived `java` process; no JVM starts in the worker until a
/// Java plugin is used).
/// Errors name the key: `plugin.path` without `tributary.jvm.classpath`, a scan that fails,
/// `tributary.plugins.prefer.java` naming no Java plugin found on `plugin.path`.
/// The worker's JVM when one was made before its plugins were loaded: for a Java config
/// provider the worker file declares ([`parse_worker_config`]); [`load_plugins`] hosts the
/// plugins in the same one (a process has one JVM).
static EARLY_JVM: std::sync::OnceLock<Arc<tributary_jvm::Jvm>> = std::sync::OnceLock::new();

/// [`WorkerConfig::parse`], on a blocking thread. When the file declares a config provider
/// whose class is not one of Connect's built-in ones (`config.providers.<name>.class`), the
/// class is a Java one from `plugin.path`: the worker's JVM is made for it here (it starts
/// when the provider is created), so the references in the worker file itself resolve through
/// it, as Connect's `WorkerConfig` resolves them. A worker file without one starts no JVM.
/// Errors name the file and key.
pub(crate) async fn parse_worker_config(
    mode: WorkerMode,
    raw: HashMap<String, String>,
    source: &str,
) -> Result<WorkerConfig, String> {
    let java_provider =
        tributary_runtime::config::providers::ConfigProviders::declares_plugin_classes(&raw);
    let factory = if java_provider {
        let get = |key: &str| raw.get(key).cloned();
        match jvm_settings(&get, source)? {
            Some(settings) => {
                let jvm = Arc::clone(
                    EARLY_JVM.get_or_init(|| Arc::new(tributary_jvm::Jvm::new(settings))),
                );
                Some(tributary_jvm::config_provider::factory(jvm))
            }
            None => None,
        }
    } else {
        None
    };
    let source = source.to_string();
    tokio::task::spawn_blocking(move || {
        WorkerConfig::parse_with(mode, raw, &source, factory.as_ref()).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| format!("reading the worker file: {e}"))?
}

/// The JVM settings the worker settings `get` reads give (`plugin.path`,
/// `tributary.jvm.classpath`, `tributary.jvm.options`, `plugin.discovery`); `None` when
/// `plugin.path` holds no Java code. Errors: no bridge to host Java code with.
fn jvm_settings(
    get: &dyn Fn(&str) -> Option<String>,
    source: &str,
) -> Result<Option<tributary_jvm::JvmSettings>, String> {
    let plugin_path: Vec<String> = get("plugin.path")
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if plugin_path.is_empty() || !holds_java_code(&plugin_path) {
        return Ok(None);
    }
    let classpath = match get("tributary.jvm.classpath")
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
    {
        Some(c) => c,
        None => bundled_jvm_classpath().ok_or_else(|| {
            format!(
                "{source}: key 'plugin.path': Java plugins need Tributary's Java bridge: set tributary.jvm.classpath to what `scripts/jvm-bridge` prints (a release archive sets it to its bundled bridge)"
            )
        })?,
    };
    Ok(Some(tributary_jvm::JvmSettings {
        classpath,
        options: jvm_options(get("tributary.jvm.options").as_deref()),
        plugin_path: plugin_path.join(","),
        discovery: get("plugin.discovery")
            .map(|d| d.trim().to_ascii_lowercase())
            .unwrap_or_else(|| "hybrid_warn".to_string()),
        service_load_equivalent: false,
    }))
}

pub(crate) async fn load_plugins(config: &WorkerConfig, source: &str) -> Result<Plugins, String> {
    let mut set = tributary_plugins::builtin();
    set.extend(tributary_registry::plugins());
    set.extend(tributary_mirror::plugins());
    set.extend(tributary_postgres::plugins());
    let list = |key: &str| -> Vec<String> {
        config
            .raw(key)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let prefer_java = list("tributary.plugins.prefer.java");
    let get = |key: &str| config.raw(key).map(str::to_string);
    let Some(settings) = jvm_settings(&get, source)? else {
        let plugin_path = list("plugin.path");
        if !plugin_path.is_empty() {
            // As Connect finds no plugin there: nothing to host, so no JVM is needed (the slim
            // image runs compose files whose plugin.path names the usual directories).
            tracing::warn!(
                plugin_path = %plugin_path.join(","),
                "plugin.path holds no jar or class file: no Java plugin to host, no JVM started"
            );
        }
        if let Some(first) = prefer_java.first() {
            return Err(format!(
                "{source}: key 'tributary.plugins.prefer.java': {first} names a Java plugin, but plugin.path is not set"
            ));
        }
        return Ok(Plugins::new(set));
    };
    let scanned = {
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || tributary_jvm::scan_all(&settings))
            .await
            .map_err(|e| format!("{source}: key 'plugin.path': the scan panicked: {e}"))?
    }
    .map_err(|e| {
        format!("{source}: key 'plugin.path' (scanned with tributary.jvm.options): {e}")
    })?;
    let tributary_jvm::Scan {
        connectors: scanned,
        transforms: scanned_transforms,
        service_load_equivalent,
    } = scanned;
    let settings = tributary_jvm::JvmSettings {
        service_load_equivalent,
        ..settings
    };
    for class in &prefer_java {
        if !scanned.iter().any(|d| &d.class == class)
            && !scanned_transforms.iter().any(|d| &d.class == class)
        {
            return Err(format!(
                "{source}: key 'tributary.plugins.prefer.java': no Java connector, transformation or predicate {class} on plugin.path"
            ));
        }
    }
    // The JVM a Java config provider of the worker file already uses, if any (one a process).
    let jvm = match EARLY_JVM.get() {
        Some(jvm) => Arc::clone(jvm),
        None => Arc::new(tributary_jvm::Jvm::new(settings)),
    };
    // The hosted plugins' own metrics (KIP-877) on /metrics.
    set.metric_collectors
        .push(tributary_jvm::metric_collector(&jvm));
    // /admin/loggers reaches the hosted plugins' loggers (kept until the JVM starts).
    let levels = Arc::clone(&jvm);
    tributary_runtime::logging::on_java_level(move |logger, level| {
        levels.set_logger_level(logger, level)
    });
    let java = tributary_jvm::plugin_set(&jvm, &scanned);
    let java_transforms = tributary_jvm::transform::plugin_set(&jvm, &scanned_transforms);
    for merged in tributary_jvm::transform::merge(&mut set, java_transforms, &prefer_java) {
        match merged {
            tributary_jvm::Merged::Added(c) => {
                tracing::info!(class = c, "Java transformation or predicate")
            }
            tributary_jvm::Merged::ReplacedNative(c) => tracing::info!(
                class = c,
                "Java transformation or predicate runs instead of the built-in class (tributary.plugins.prefer.java)"
            ),
            // Apache's connect-transforms in a plugin directory is common: no warning.
            tributary_jvm::Merged::ShadowedByNative(c) => tracing::info!(
                class = c,
                "Java transformation or predicate not used: the built-in class of that name runs natively"
            ),
            // Transformations and predicates have no previews nor native defaults.
            tributary_jvm::Merged::AddedBesidePreview(c)
            | tributary_jvm::Merged::AddedBesideNative(c) => {
                tracing::info!(class = c, "Java transformation or predicate")
            }
        }
    }
    for merged in tributary_jvm::merge(&mut set, java, &prefer_java) {
        match merged {
            tributary_jvm::Merged::Added(c) => tracing::info!(class = c, "Java connector plugin"),
            tributary_jvm::Merged::ReplacedNative(c) => tracing::info!(
                class = c,
                "Java connector plugin runs instead of the built-in class (tributary.plugins.prefer.java)"
            ),
            tributary_jvm::Merged::AddedBesidePreview(c) => tracing::info!(
                class = c,
                "Java connector plugin, the default version of its class; the native preview runs when connector.plugin.version names Tributary's version"
            ),
            tributary_jvm::Merged::AddedBesideNative(c) => tracing::info!(
                class = c,
                "Java connector plugin, another version of a class that runs natively by default; it runs when connector.plugin.version names its version"
            ),
            tributary_jvm::Merged::ShadowedByNative(c) => tracing::warn!(
                class = c,
                "Java connector plugin not used: the built-in class of that name runs natively (list it in tributary.plugins.prefer.java to run the Java one)"
            ),
        }
    }
    Ok(Plugins::new(set))
}

/// The Java bridge bundled with a release archive (`scripts/package`): the jars listed, in
/// order, by `libs/jvm-bridge/CLASSPATH` beside the binary's `bin/` directory, as a class path;
/// `None` outside an archive. What `tributary.jvm.classpath` defaults to.
fn bundled_jvm_classpath() -> Option<String> {
    let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
    let dir = exe.parent()?.parent()?.join("libs/jvm-bridge");
    let listing = std::fs::read_to_string(dir.join("CLASSPATH")).ok()?;
    let jars: Vec<String> = listing
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|jar| dir.join(jar).display().to_string())
        .collect();
    (!jars.is_empty()).then(|| jars.join(":"))
}

/// The embedded JVM's options: `TRIBUTARY_JVM_OPTIONS` from the environment (where the
/// archive's `connect-distributed.sh` / `connect-standalone.sh` put `KAFKA_HEAP_OPTS`,
/// `KAFKA_JVM_PERFORMANCE_OPTS` and `KAFKA_OPTS`), then the worker file's
/// `tributary.jvm.options`, which win where both set the same option (the JVM takes the last).
fn jvm_options(from_file: Option<&str>) -> Vec<String> {
    let from_env = std::env::var("TRIBUTARY_JVM_OPTIONS").unwrap_or_default();
    from_env
        .split_whitespace()
        .chain(from_file.unwrap_or_default().split_whitespace())
        .map(str::to_string)
        .collect()
}

/// Whether any `plugin.path` entry is, or holds (at any depth), a `.jar`, `.zip` or `.class`
/// file: Java code a JVM would scan. Unreadable or missing entries hold none, as Connect's
/// scan finds nothing there.
fn holds_java_code(entries: &[String]) -> bool {
    fn java_file(p: &std::path::Path) -> bool {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "jar" | "zip" | "class"))
    }
    fn walk(p: &std::path::Path, depth: usize) -> bool {
        if java_file(p) && p.is_file() {
            return true;
        }
        if depth == 0 || !p.is_dir() {
            return false;
        }
        std::fs::read_dir(p)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| walk(&e.path(), depth - 1))
    }
    entries.iter().any(|e| walk(std::path::Path::new(e), 16))
}

#[cfg(test)]
mod tests {
    use super::holds_java_code;

    #[test]
    fn only_a_plugin_path_with_jar_zip_or_class_files_needs_a_jvm() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let s = |p: &std::path::Path| p.display().to_string();
        // Missing and empty directories, and other files, hold no Java code.
        std::fs::create_dir_all(root.join("empty")).unwrap();
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/README.txt"), "x").unwrap();
        assert!(!holds_java_code(&[
            s(&root.join("missing")),
            s(&root.join("empty")),
            s(&root.join("docs")),
        ]));
        // A jar in a plugin's directory, a class file deep down, a jar named directly.
        std::fs::create_dir_all(root.join("plugins/debezium")).unwrap();
        std::fs::write(root.join("plugins/debezium/connector.JAR"), "").unwrap();
        assert!(holds_java_code(&[s(&root.join("plugins"))]));
        std::fs::create_dir_all(root.join("classes/a/b/c")).unwrap();
        std::fs::write(root.join("classes/a/b/c/Task.class"), "").unwrap();
        assert!(holds_java_code(&[s(&root.join("classes"))]));
        assert!(holds_java_code(&[s(
            &root.join("plugins/debezium/connector.JAR")
        )]));
    }
}
