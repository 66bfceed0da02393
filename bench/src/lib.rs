//! Shared helpers of Tributary's benchmark binaries (`standalone-throughput`,
//! `distributed-startup`, `distributed-rebalance`, `distributed-restart`): the broker, worker
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
pub mod status_watch;
pub mod table;
pub mod worker;

use std::path::PathBuf;

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

/// Prints a progress line (`bench: ...`) on stderr.
pub fn say(msg: impl AsRef<str>) {
    eprintln!("bench: {}", msg.as_ref());
}
