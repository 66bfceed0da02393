//! `eos-source` (issue #16's benchmark): FileStreamSource throughput with exactly-once source
//! support (KIP-618) as a ratio of at-least-once, for each transaction boundary a
//! FileStreamSource can use (`poll`: one transaction per batch `poll` returns; `interval`: one
//! per `--interval-ms`), Tributary and Java Connect 4.1.1 in the same run on the same broker.
//! (`transaction.boundary=connector` needs a connector that defines its own transactions;
//! FileStreamSource does not, in either runtime.)
//!
//! Each round measures, for each runtime (Java first in odd rounds, Tributary first in even
//! ones), at-least-once (`exactly.once.source.support` left at its default, `disabled`), then
//! `enabled` with `transaction.boundary=poll`, then with `interval`, each on a fresh
//! distributed worker and topics: records/s from `POST /connectors` until a `read_committed`
//! consumer has seen every input line (the same counting for all three, so at-least-once is not
//! favoured by a cheaper measurement). Java runs as `connect-distributed.sh` runs it (heap
//! `-Xms256M -Xmx2G` unless `--java-heap`). Prints the median of the rounds, each round, and the
//! ratios. A measurement, not a test.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use serde_json::{json, Map, Value};
use tributary_bench::input;
use tributary_bench::source_run::{median, SourceCase, SourceSetup};
use tributary_bench::table::Table;
use tributary_bench::{exit_status, say, stamp, Runtime, RuntimeArgs};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "eos-source",
    about = "FileStreamSource throughput with exactly-once source support (transaction.boundary \
             poll and interval) as a ratio of at-least-once, Tributary and Java Connect 4.1.1 \
             in the same run."
)]
struct Args {
    /// Lines in the input file.
    #[arg(long, default_value_t = 5_000_000)]
    lines: u64,
    /// Rounds; the table shows the median of the rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// `transaction.boundary.interval.ms` of the `interval` runs (ms).
    #[arg(long, default_value_t = 500)]
    interval_ms: u64,
    #[command(flatten)]
    runtimes: RuntimeArgs,
    /// Java maximum heap (`-Xmx`); Connect's start script uses 2G.
    #[arg(long, default_value = "2G")]
    java_heap: String,
    /// Directory with the loghub `*.log` files (default: $TRIBUTARY_SHARED/data/loghub).
    #[arg(long)]
    loghub: Option<PathBuf>,
}

/// The delivery guarantee a measurement runs with.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Mode {
    /// `exactly.once.source.support=disabled` (Connect's default).
    AtLeastOnce,
    /// `enabled`, `transaction.boundary=poll`.
    Poll,
    /// `enabled`, `transaction.boundary=interval`.
    Interval,
}

impl Mode {
    const ALL: [Mode; 3] = [Mode::AtLeastOnce, Mode::Poll, Mode::Interval];

    fn title(self) -> &'static str {
        match self {
            Mode::AtLeastOnce => "at-least-once",
            Mode::Poll => "exactly-once, poll",
            Mode::Interval => "exactly-once, interval",
        }
    }

    /// Worker and connector settings of this mode.
    fn settings(self, interval_ms: u64) -> (Vec<(String, String)>, Map<String, Value>) {
        let mut connector = Map::new();
        let worker = match self {
            Mode::AtLeastOnce => Vec::new(),
            Mode::Poll | Mode::Interval => vec![(
                "exactly.once.source.support".to_string(),
                "enabled".to_string(),
            )],
        };
        match self {
            Mode::AtLeastOnce => {}
            Mode::Poll => {
                connector.insert("transaction.boundary".into(), json!("poll"));
            }
            Mode::Interval => {
                connector.insert("transaction.boundary".into(), json!("interval"));
                connector.insert(
                    "transaction.boundary.interval.ms".into(),
                    json!(interval_ms.to_string()),
                );
            }
        }
        (worker, connector)
    }
}

fn run(args: &Args) -> Result<(), String> {
    let bootstrap = tributary_bench::bootstrap(args.runtimes.bootstrap.as_deref());
    let loghub = input::loghub_dir(args.loghub.clone());
    let setup = SourceSetup::prepare(
        args.runtimes.tributary.as_deref(),
        args.runtimes.connect_java.as_deref(),
        &args.java_heap,
        &bootstrap,
        loghub.as_deref(),
        args.lines,
    )?;
    let bench = setup.bench();
    let run = stamp();
    let rounds = args.rounds.max(1);
    let mut results: BTreeMap<(Runtime, Mode), Vec<f64>> = BTreeMap::new();
    let mut first: BTreeMap<(Runtime, Mode), Vec<f64>> = BTreeMap::new();
    let mut per_round = Table::new(&[
        "round",
        "runtime",
        "at-least-once rec/s",
        "EOS poll rec/s",
        "EOS interval rec/s",
    ]);
    for round in 1..=rounds {
        let order = if round % 2 == 1 {
            [Runtime::Java, Runtime::Tributary]
        } else {
            [Runtime::Tributary, Runtime::Java]
        };
        for runtime in order {
            let mut row = Vec::new();
            for mode in Mode::ALL {
                let group = format!("eosbench-{run}-{round}-{runtime:?}-{mode:?}").to_lowercase();
                let (worker_extra, connector_extra) = mode.settings(args.interval_ms);
                let m = bench.measure_timed(SourceCase {
                    runtime,
                    bootstrap: &bootstrap,
                    group: &group,
                    worker_extra,
                    connector_extra,
                    counted_topic: None,
                    read_committed: true,
                })?;
                let rps = m.records_per_sec;
                first
                    .entry((runtime, mode))
                    .or_default()
                    .push(m.first_record.as_secs_f64());
                say(format!(
                    "round {round}: {} {}: {rps:.0} records/s, first record after {:.2} s",
                    runtime.title(),
                    mode.title(),
                    m.first_record.as_secs_f64()
                ));
                results.entry((runtime, mode)).or_default().push(rps);
                row.push(format!("{rps:.0}"));
            }
            let mut cells = vec![runtime.title().to_string()];
            cells.extend(row);
            per_round.row(round.to_string(), cells);
        }
    }
    let m = |r, mode| median(results.get(&(r, mode)).cloned().unwrap_or_default());
    let mut table = Table::new(&[
        "FileStreamSource, records/s (median)",
        "at-least-once",
        "EOS poll",
        "poll / ALO",
        &format!("EOS interval {} ms", args.interval_ms),
        "interval / ALO",
    ]);
    for runtime in [Runtime::Tributary, Runtime::Java] {
        let alo = m(runtime, Mode::AtLeastOnce);
        let (poll, interval) = (m(runtime, Mode::Poll), m(runtime, Mode::Interval));
        let label = match runtime {
            Runtime::Java => format!("{} (-Xmx{})", runtime.title(), args.java_heap),
            Runtime::Tributary => runtime.title().to_string(),
        };
        table.row(
            &label,
            vec![
                format!("{alo:.0}"),
                format!("{poll:.0}"),
                format!("{:.2}", poll / alo),
                format!("{interval:.0}"),
                format!("{:.2}", interval / alo),
            ],
        );
    }
    println!(
        "Median of {rounds} round(s), {} lines, counted by a read_committed consumer:",
        setup.input.lines
    );
    print!("{}", table.text());
    println!("\nEach round:");
    print!("{}", per_round.text());
    println!();
    print!("{}", table.markdown());
    let mut starts = Table::new(&[
        "first record counted after, s (median)",
        "at-least-once",
        "EOS poll",
        "EOS interval",
    ]);
    for runtime in [Runtime::Tributary, Runtime::Java] {
        let f = |mode| median(first.get(&(runtime, mode)).cloned().unwrap_or_default());
        starts.row(
            runtime.title(),
            Mode::ALL.iter().map(|m| format!("{:.2}", f(*m))).collect(),
        );
    }
    println!();
    print!("{}", starts.markdown());
    println!();
    for mode in Mode::ALL {
        println!(
            "Tributary / Java, {}: {:.1}x",
            mode.title(),
            m(Runtime::Tributary, mode) / m(Runtime::Java, mode)
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit_status("eos-source", run(&args))
}
