//! `tributary`: Kafka Connect-compatible workers.
//!
//! - `tributary standalone <worker.properties> [connector.properties|connector.json]...`
//!   (Connect's `connect-standalone`).
//! - `tributary distributed <worker.properties>` (Connect's `connect-distributed`).
//!
//! Configuration problems exit with status 1 and a message naming the file and key.

mod admin;
mod apply;
mod connect_client;
mod container;
mod contexts;
mod distributed;
mod mirror_maker;
mod standalone;
mod startup;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "tributary",
    version,
    about = "A Kafka Connect runtime: same configs, REST API and topics, a fraction of the memory."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs a standalone worker, like connect-standalone.
    Standalone {
        /// The worker configuration (Java properties).
        worker_properties: PathBuf,
        /// Connector configurations (.properties or .json) to start.
        connectors: Vec<PathBuf>,
    },
    /// Runs a worker of a distributed cluster, like connect-distributed.
    Distributed {
        /// The worker configuration (Java properties).
        worker_properties: PathBuf,
    },
    /// Runs MirrorMaker 2 in dedicated mode, like connect-mirror-maker.sh: one herder per
    /// replication flow of an mm2.properties file whose target this process serves.
    MirrorMaker {
        /// MirrorMaker's configuration (mm2.properties).
        mm2_properties: PathBuf,
        /// The target clusters this process serves (default: every cluster of the file).
        #[arg(long, num_args = 1.., value_name = "CLUSTER")]
        clusters: Vec<String>,
    },
    /// A container image's entry point: a distributed worker from a mounted worker file, or
    /// from environment variables (Confluent's CONNECT_* and Debezium's image variables).
    Container {
        /// A worker file; without it the worker file is written from the environment.
        worker_properties: Option<PathBuf>,
    },
    /// Exits 0 when the worker's GET /health answers 200 (an orchestrator's readiness check).
    Healthcheck {
        /// The health URL (default http://127.0.0.1:8083/health).
        url: Option<String>,
    },
    /// Makes a cluster (Tributary or Java Connect) run the connectors declared in files:
    /// creates, updates, pauses/resumes/stops, and with --prune deletes the managed connectors
    /// no file declares. --dry-run prints the changes and exits 2 when there are some.
    Apply(apply::ApplyArgs),
    /// Lists connectors, plugins, a connector's offsets, or the loggers.
    Get {
        #[command(subcommand)]
        what: admin::Get,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Shows a connector's config, status, tasks, topics and offsets.
    Describe {
        #[command(subcommand)]
        what: admin::Describe,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Restarts a connector (KIP-745) or a task.
    Restart {
        #[command(subcommand)]
        what: admin::Restart,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Pauses a connector and its tasks.
    Pause {
        /// The connector.
        name: String,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Resumes a paused or stopped connector.
    Resume {
        /// The connector.
        name: String,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Stops a connector (KIP-875): no tasks, offsets may then be altered.
    Stop {
        /// The connector.
        name: String,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Deletes a connector.
    Delete {
        /// The connector.
        name: String,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Alters or resets a stopped connector's offsets (KIP-875).
    Offsets {
        #[command(subcommand)]
        what: admin::Offsets,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Sets a logger's level (KIP-495; --scope cluster: KIP-976).
    Logger {
        #[command(subcommand)]
        what: admin::Logger,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Changes some keys of a connector's config (KIP-477): key=value sets, --remove drops.
    Patch {
        /// The connector.
        name: String,
        /// `key=value` pairs.
        set: Vec<String>,
        /// Keys to remove (repeatable).
        #[arg(long)]
        remove: Vec<String>,
        #[command(flatten)]
        target: admin::Target,
    },
    /// Contexts: named clusters (URLs, auth) for the admin commands.
    Config {
        #[command(subcommand)]
        what: admin::ConfigCmd,
    },
    /// Prints a shell completion script (bash, zsh, fish, elvish, powershell).
    Completion {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// Standard error with what config providers resolved replaced by the references (issue #42):
/// no log line shows a secret, whatever logged it.
fn redacted_stderr() -> tributary_runtime::config::secrets::RedactingWriter<std::io::Stderr> {
    tributary_runtime::config::secrets::RedactingWriter(std::io::stderr())
}

/// Logs to stderr with the filter in `TRIBUTARY_LOG` (default `info`); `/admin/loggers`
/// changes levels at runtime through a reload handle. `TRIBUTARY_LOG_FORMAT=json` writes one
/// JSON object per line (`timestamp`, `level`, `message` and the event's fields, `span` and
/// `spans` with a connector's or task's `connector` and `task`); the default text format
/// has ANSI colours only when stderr is a terminal (and `NO_COLOR` is unset). Another format
/// name is an error.
fn init_logging() -> Result<(), String> {
    use std::io::IsTerminal;
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::{reload, EnvFilter};
    let initial = std::env::var("TRIBUTARY_LOG")
        .unwrap_or_else(|_| "info,librdkafka=warn,rdkafka=warn".into());
    let filter = EnvFilter::try_new(&initial).unwrap_or_else(|_| EnvFilter::new("info"));
    let (filter, handle) = reload::Layer::new(filter);
    let json = match std::env::var("TRIBUTARY_LOG_FORMAT").as_deref() {
        Err(_) | Ok("") | Ok("text") => false,
        Ok("json") => true,
        Ok(other) => {
            return Err(format!(
                "TRIBUTARY_LOG_FORMAT must be text or json, not {other}"
            ))
        }
    };
    let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let text_layer = (!json).then(|| {
        tracing_subscriber::fmt::layer()
            .with_writer(redacted_stderr)
            .with_ansi(ansi)
            .with_target(false)
    });
    let json_layer = json.then(|| {
        tracing_subscriber::fmt::layer()
            .json()
            .flatten_event(true)
            .with_writer(redacted_stderr)
            .with_target(false)
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(text_layer)
        .with(json_layer)
        .init();
    let root = initial
        .split(',')
        .find(|d| !d.contains('='))
        .unwrap_or("info")
        .to_string();
    tributary_runtime::logging::install(&root, move |directives| {
        if let Ok(f) = EnvFilter::try_new(directives) {
            if let Err(e) = handle.modify(|current| *current = f) {
                tracing::warn!(error = %e, "cannot apply the new log levels");
            }
        }
    });
    Ok(())
}

/// The worker file of `tributary container`: the mounted one, or one written from the
/// environment (`$TMPDIR/tributary-worker.properties`), whose `HEAP_OPTS` goes to the JVM.
fn container_worker_file(mounted: Option<PathBuf>) -> Result<PathBuf, String> {
    let file = match mounted {
        Some(file) => file,
        None => env_worker_file()?,
    };
    // The image's HEALTHCHECK asks the listener this worker file sets.
    if let Ok(props) = tributary_runtime::config::properties::load_properties(&file) {
        let url = container::health_url(&props);
        if let Err(e) = std::fs::write(container::health_url_file(), &url) {
            tracing::warn!(error = %e, "cannot leave the health URL {url} for the health check");
        }
    }
    Ok(file)
}

/// The worker file written from the environment (`$TMPDIR/tributary-worker.properties`).
fn env_worker_file() -> Result<PathBuf, String> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let config = container::from_env(&env)?;
    for note in &config.notes {
        tracing::warn!("{note}");
    }
    if let Some(options) = &config.jvm_options {
        let before = std::env::var("TRIBUTARY_JVM_OPTIONS").unwrap_or_default();
        std::env::set_var("TRIBUTARY_JVM_OPTIONS", format!("{before} {options}"));
    }
    let file = std::env::temp_dir().join("tributary-worker.properties");
    std::fs::write(&file, config.to_properties())
        .map_err(|e| format!("{}: cannot write the worker file: {e}", file.display()))?;
    tracing::info!(
        file = %file.display(),
        keys = config.properties.len(),
        "worker file written from environment variables"
    );
    Ok(file)
}

/// Runs a command that is a client of a cluster (or of the contexts file): `apply`, the
/// admin commands, `config`, `completion`.
async fn client_command(command: Command) -> Result<ExitCode, String> {
    use admin::AdminCommand as A;
    let (target, cmd) = match command {
        Command::Apply(args) => return apply::run(args).await,
        Command::Config { what } => return admin::run_config(what),
        Command::Completion { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "tributary",
                &mut std::io::stdout(),
            );
            return Ok(ExitCode::SUCCESS);
        }
        Command::Get { what, target } => (target, A::Get(what)),
        Command::Describe { what, target } => (target, A::Describe(what)),
        Command::Restart { what, target } => (target, A::Restart(what)),
        Command::Pause { name, target } => (target, A::Pause(name)),
        Command::Resume { name, target } => (target, A::Resume(name)),
        Command::Stop { name, target } => (target, A::Stop(name)),
        Command::Delete { name, target } => (target, A::Delete(name)),
        Command::Offsets { what, target } => (target, A::Offsets(what)),
        Command::Logger { what, target } => (target, A::Logger(what)),
        Command::Patch {
            name,
            set,
            remove,
            target,
        } => (target, A::Patch { name, set, remove }),
        Command::Standalone { .. }
        | Command::Distributed { .. }
        | Command::MirrorMaker { .. }
        | Command::Container { .. }
        | Command::Healthcheck { .. } => unreachable!("worker commands run elsewhere"),
    };
    admin::run(target, cmd).await
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = init_logging() {
        eprintln!("tributary: {e}");
        return ExitCode::from(1);
    }
    // The image's entry point becomes a distributed worker; its worker file (and the JVM
    // options it may put in the environment) is settled before any other thread runs.
    let command = match cli.command {
        Command::Container { worker_properties } => {
            match container_worker_file(worker_properties) {
                Ok(file) => Command::Distributed {
                    worker_properties: file,
                },
                Err(e) => {
                    eprintln!("tributary: {e}");
                    return ExitCode::from(1);
                }
            }
        }
        other => other,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("tributary-rt")
        .build()
        .expect("building the tokio runtime");
    let result = match command {
        Command::Standalone {
            worker_properties,
            connectors,
        } => runtime.block_on(standalone::run(worker_properties, connectors)),
        Command::Distributed { worker_properties } => {
            runtime.block_on(distributed::run(worker_properties))
        }
        Command::MirrorMaker {
            mm2_properties,
            clusters,
        } => runtime.block_on(mirror_maker::run(mm2_properties, clusters)),
        Command::Container { .. } => unreachable!("turned into Distributed above"),
        Command::Healthcheck { url } => runtime.block_on(container::healthcheck(url)),
        Command::Apply(_)
        | Command::Get { .. }
        | Command::Describe { .. }
        | Command::Restart { .. }
        | Command::Pause { .. }
        | Command::Resume { .. }
        | Command::Stop { .. }
        | Command::Delete { .. }
        | Command::Offsets { .. }
        | Command::Logger { .. }
        | Command::Patch { .. }
        | Command::Config { .. }
        | Command::Completion { .. } => {
            let r = runtime.block_on(client_command(command));
            runtime.shutdown_timeout(std::time::Duration::from_millis(500));
            return match r {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("tributary: {e}");
                    ExitCode::from(1)
                }
            };
        }
    };
    // Blocking calls still running (e.g. a startup step abandoned on a signal) do not hold
    // the exit up: the work they were for is gone.
    runtime.shutdown_timeout(std::time::Duration::from_millis(500));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tributary: {e}");
            ExitCode::from(1)
        }
    }
}
