//! Shared helpers of Tributary's benchmark binaries (`standalone-throughput`,
//! `distributed-startup`, `distributed-rebalance`, `distributed-restart`, `security-throughput`,
//! `transform-chain`, ...): the broker, worker
//! processes and clusters, their REST API, `/proc` statistics, throughput sampling, the cached
//! input file and table output.
#![warn(missing_docs)]

pub mod cluster;
pub mod input;
pub mod java;
pub mod kafka;
pub mod proc_stats;
pub mod rate;
pub mod rest;
pub mod source_run;
pub mod status_watch;
pub mod table;
pub mod worker;

use std::path::PathBuf;
use std::process::ExitCode;

/// The broker's bootstrap address: `explicit`, else `$KAFKA_BOOTSTRAP`, else `127.0.0.1:9092`.
pub fn bootstrap(explicit: Option<&str>) -> String {
    explicit
        .map(str::to_string)
        .or_else(|| {
            std::env::var("KAFKA_BOOTSTRAP")
                .ok()
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "127.0.0.1:9092".to_string())
}

/// The `tributary` binary: `explicit`, else `tributary` next to the running executable; an error
/// when it is not a file.
pub fn tributary_binary(explicit: Option<&std::path::Path>) -> Result<PathBuf, String> {
    let path = match explicit {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe()
            .map_err(|e| e.to_string())?
            .with_file_name("tributary"),
    };
    if !path.is_file() {
        return Err(format!(
            "{}: no tributary binary (build it with `cargo build --release -p tributary` or pass --tributary)",
            path.display()
        ));
    }
    Ok(path)
}

/// Milliseconds since the Unix epoch, to make topic and group names unique per run.
pub fn stamp() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// A temporary directory named `tributary-bench-*`, removed when dropped.
pub fn tempdir() -> Result<tempfile::TempDir, String> {
    tempfile::Builder::new()
        .prefix("tributary-bench-")
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))
}

/// The command-line options of the benchmarks that run both runtimes: where the broker, the
/// `tributary` binary and the script for Connect's jars are.
#[derive(clap::Args, Debug, Clone)]
pub struct RuntimeArgs {
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    pub bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    pub tributary: Option<PathBuf>,
    /// The script that fetches Apache Kafka Connect's jars and prints their classpath (default:
    /// scripts/connect-java of this workspace).
    #[arg(long)]
    pub connect_java: Option<PathBuf>,
}

/// Which runtime a measurement is of, in the benchmarks that run both.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Runtime {
    /// Tributary's release build.
    Tributary,
    /// Apache Kafka Connect (Java), started by [`java::JavaCmd`].
    Java,
}

impl Runtime {
    /// Its name in group, topic and directory names.
    pub fn label(self) -> &'static str {
        match self {
            Runtime::Tributary => "tributary",
            Runtime::Java => "java",
        }
    }

    /// Its name in progress lines and tables: Java's with the Connect release `scripts/connect-java`
    /// runs (`CONNECT_VERSION`, default 4.1.1).
    pub fn title(self) -> String {
        match self {
            Runtime::Tributary => "Tributary".to_string(),
            Runtime::Java => format!(
                "Java Connect {}",
                std::env::var("CONNECT_VERSION").unwrap_or_else(|_| "4.1.1".to_string())
            ),
        }
    }
}

/// A benchmark binary's exit status for the outcome of its run: success, or failure after
/// printing `<name>: <error>` on stderr.
pub fn exit_status(name: &str, outcome: Result<(), String>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints a progress line (`bench: ...`) on stderr.
pub fn say(msg: impl AsRef<str>) {
    eprintln!("bench: {}", msg.as_ref());
}
