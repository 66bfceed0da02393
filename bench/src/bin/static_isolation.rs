//! `static-isolation`: the memory cost of isolating jobs with static assignments.
//!
//! One run, same broker: N single-task VerifiableSource connectors (default 10) run
//! 1. on one wildcard worker (`connect.protocol=static`, no claims), and
//! 2. on N static workers, each claiming exactly one connector and its task
//!    (`static.connectors=cI`, `static.tasks=cI-0`), plus nothing else,
//!
//! and the table compares the total RSS (VmRSS summed over the processes, after the jobs ran
//! for `--settle-secs`). This is a measurement, not a test: nothing is asserted.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use tributary_bench::proc_stats::memory;
use tributary_bench::rest::Rest;
use tributary_bench::table::Table;
use tributary_bench::worker::{distributed_properties, Worker};
use tributary_bench::{say, tempdir};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "static-isolation",
    about = "Total RSS of N single-job static workers against one wildcard worker running the same N jobs."
)]
struct Args {
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    tributary: Option<PathBuf>,
    /// Jobs (single-task connectors), and static workers in the isolated layout.
    #[arg(long, default_value_t = 10)]
    jobs: usize,
    /// Seconds the jobs run before memory is read.
    #[arg(long, default_value_t = 5)]
    settle_secs: u64,
}

fn wait_running(rest: &Rest, connectors: usize, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    loop {
        let all = (0..connectors).all(|i| {
            rest.get(&format!("/connectors/c{i}/status"))
                .map(|(code, s)| {
                    code == 200
                        && s["connector"]["state"] == "RUNNING"
                        && s["tasks"]
                            .as_array()
                            .is_some_and(|t| t.len() == 1 && t[0]["state"] == "RUNNING")
                })
                .unwrap_or(false)
        });
        if all {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("jobs did not all reach RUNNING in time".into());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn run_layout(
    binary: &std::path::Path,
    bootstrap: &str,
    jobs: usize,
    isolated: bool,
    settle: Duration,
) -> Result<(usize, u64), String> {
    let dir = tempdir()?;
    let group = format!("static-iso-{}", tributary_bench::stamp());
    let mut workers = Vec::new();
    let count = if isolated { jobs } else { 1 };
    for i in 0..count {
        let wdir = dir.path().join(format!("w{i}"));
        std::fs::create_dir_all(&wdir).map_err(|e| e.to_string())?;
        let mut props = distributed_properties(bootstrap, &group);
        props.push(("connect.protocol".into(), "static".into()));
        if isolated {
            props.push(("static.connectors".into(), format!("c{i}")));
            props.push(("static.tasks".into(), format!("c{i}-0")));
        }
        let mut w = Worker::spawn_distributed(binary, &wdir, &props)?;
        let url = w.wait_rest(Duration::from_secs(120))?;
        workers.push((w, url));
    }
    let rest = Rest::new(&workers[0].1, Duration::from_secs(30))?;
    for i in 0..jobs {
        let body = json!({"name": format!("c{i}"), "config": {"connector.class": "VerifiableSource", "tasks.max": "1", "topic": format!("{group}-c{i}"), "throughput": "20"}});
        // The leader may still be settling; retry a conflict or a forwarding failure.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (code, _) = rest.send("POST", "/connectors", Some(&body))?;
            if code == 201 || code == 409 {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!("creating c{i}: status {code}"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    wait_running(&rest, jobs, Duration::from_secs(180))?;
    std::thread::sleep(settle);
    let total: u64 = workers
        .iter()
        .filter_map(|(w, _)| memory(w.pid()))
        .map(|m| m.rss_kib)
        .sum();
    for (w, _) in workers.iter_mut() {
        w.terminate(Duration::from_secs(30));
    }
    Ok((count, total))
}

fn main() -> ExitCode {
    let args = Args::parse();
    let bootstrap = tributary_bench::bootstrap(args.bootstrap.as_deref());
    let binary = match tributary_bench::tributary_binary(args.tributary.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("static-isolation: {e}");
            return ExitCode::from(2);
        }
    };
    let settle = Duration::from_secs(args.settle_secs);
    say(format!("one wildcard worker running {} jobs", args.jobs));
    let shared = run_layout(&binary, &bootstrap, args.jobs, false, settle);
    say(format!("{} static workers, one job each", args.jobs));
    let isolated = run_layout(&binary, &bootstrap, args.jobs, true, settle);
    let (shared, isolated) = match (shared, isolated) {
        (Ok(s), Ok(i)) => (s, i),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("static-isolation: {e}");
            return ExitCode::from(1);
        }
    };
    let mib = |kib: u64| format!("{:.1} MiB", kib as f64 / 1024.0);
    let mut t = Table::new(&["layout", "processes", "total RSS", "RSS per job"]);
    t.row(
        "one wildcard worker",
        vec![
            shared.0.to_string(),
            mib(shared.1),
            mib(shared.1 / args.jobs as u64),
        ],
    );
    t.row(
        "one static worker per job",
        vec![
            isolated.0.to_string(),
            mib(isolated.1),
            mib(isolated.1 / args.jobs as u64),
        ],
    );
    t.row(
        "cost of isolation",
        vec![
            String::new(),
            format!("{:.1}x", isolated.1 as f64 / shared.1.max(1) as f64),
            String::new(),
        ],
    );
    println!("{}", t.text());
    println!("{}", t.markdown());
    ExitCode::SUCCESS
}
