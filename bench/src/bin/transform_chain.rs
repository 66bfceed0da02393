//! `transform-chain` (issue #14's benchmark): FileStreamSource throughput with a chain of three
//! transformations as a ratio of the same pipeline without them, for Tributary and Java Connect
//! 4.1.1 in the same run on the same broker. Goal: the chain keeps at least 80% of the plain
//! throughput.
//!
//! The chain is `HoistField$Value` (the line becomes field `line` of a struct),
//! `InsertField$Value` (a static field `origin`) and `RegexRouter` (`<group>-lines` →
//! `<group>-routed`); both pipelines use `JsonConverter` with schemas (Connect's default), so the
//! plain one writes a JSON string and the chained one a JSON struct, each with its schema.
//!
//! Each round measures, for each runtime (Java first in odd rounds, Tributary first in even
//! ones), the plain pipeline and then the chained one, each on a fresh distributed worker:
//! records/s from `POST /connectors` until the counted topic holds every input line. Java runs
//! as `connect-distributed.sh` runs it (heap `-Xms256M -Xmx2G` unless `--java-heap`). Prints the
//! median of the rounds, each round, and the ratios. A measurement, not a test.

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
    name = "transform-chain",
    about = "FileStreamSource throughput with HoistField + InsertField + RegexRouter as a ratio \
             of the plain pipeline, Tributary and Java Connect 4.1.1 in the same run."
)]
struct Args {
    /// Lines in the input file.
    #[arg(long, default_value_t = 300_000)]
    lines: u64,
    /// Rounds; the table shows the median of the rounds.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    #[command(flatten)]
    runtimes: RuntimeArgs,
    /// Java maximum heap (`-Xmx`); Connect's start script uses 2G.
    #[arg(long, default_value = "2G")]
    java_heap: String,
    /// Directory with the loghub `*.log` files (default: $TRIBUTARY_SHARED/data/loghub).
    #[arg(long)]
    loghub: Option<PathBuf>,
}

/// Which pipeline a measurement runs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Pipeline {
    Plain,
    Chain,
}

/// The connector settings of `pipeline` for a worker group `group`: the converters, and for
/// the chain its three transformations; and the topic its records end in.
fn connector_settings(pipeline: Pipeline, group: &str) -> (Map<String, Value>, Option<String>) {
    let mut m = Map::new();
    m.insert(
        "value.converter".into(),
        json!("org.apache.kafka.connect.json.JsonConverter"),
    );
    m.insert("value.converter.schemas.enable".into(), json!("true"));
    if pipeline == Pipeline::Plain {
        return (m, None);
    }
    for (k, v) in [
        ("transforms", "hoist,origin,route"),
        (
            "transforms.hoist.type",
            "org.apache.kafka.connect.transforms.HoistField$Value",
        ),
        ("transforms.hoist.field", "line"),
        (
            "transforms.origin.type",
            "org.apache.kafka.connect.transforms.InsertField$Value",
        ),
        ("transforms.origin.static.field", "origin"),
        ("transforms.origin.static.value", "bench"),
        (
            "transforms.route.type",
            "org.apache.kafka.connect.transforms.RegexRouter",
        ),
        ("transforms.route.regex", "(.*)-lines"),
        ("transforms.route.replacement", "$1-routed"),
    ] {
        m.insert(k.into(), json!(v));
    }
    (m, Some(format!("{group}-routed")))
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
    let mut results: BTreeMap<(Runtime, Pipeline), Vec<f64>> = BTreeMap::new();
    let mut per_round = Table::new(&["round", "runtime", "plain rec/s", "chain rec/s", "ratio"]);
    for round in 1..=rounds {
        let order = if round % 2 == 1 {
            [Runtime::Java, Runtime::Tributary]
        } else {
            [Runtime::Tributary, Runtime::Java]
        };
        for runtime in order {
            let mut row = Vec::new();
            for pipeline in [Pipeline::Plain, Pipeline::Chain] {
                let group =
                    format!("chainbench-{run}-{round}-{runtime:?}-{pipeline:?}").to_lowercase();
                let (connector_extra, counted_topic) = connector_settings(pipeline, &group);
                let rps = bench.measure(SourceCase {
                    runtime,
                    bootstrap: &bootstrap,
                    group: &group,
                    worker_extra: Vec::new(),
                    connector_extra,
                    counted_topic,
                    read_committed: false,
                })?;
                say(format!(
                    "round {round}: {} {pipeline:?}: {rps:.0} records/s",
                    runtime.title()
                ));
                results.entry((runtime, pipeline)).or_default().push(rps);
                row.push(rps);
            }
            per_round.row(
                round.to_string(),
                vec![
                    runtime.title().to_string(),
                    format!("{:.0}", row[0]),
                    format!("{:.0}", row[1]),
                    format!("{:.2}", row[1] / row[0]),
                ],
            );
        }
    }
    let m = |r, p| median(results.get(&(r, p)).cloned().unwrap_or_default());
    let mut table = Table::new(&[
        "FileStreamSource + JsonConverter, records/s (median)",
        "plain",
        "3-transformation chain",
        "chain / plain",
    ]);
    for runtime in [Runtime::Tributary, Runtime::Java] {
        let (p, c) = (m(runtime, Pipeline::Plain), m(runtime, Pipeline::Chain));
        let label = match runtime {
            Runtime::Java => format!("{} (-Xmx{})", runtime.title(), args.java_heap),
            Runtime::Tributary => runtime.title().to_string(),
        };
        table.row(
            &label,
            vec![
                format!("{p:.0}"),
                format!("{c:.0}"),
                format!("{:.2}", c / p),
            ],
        );
    }
    println!("Median of {rounds} round(s), {} lines:", setup.input.lines);
    print!("{}", table.text());
    println!("\nEach round:");
    print!("{}", per_round.text());
    println!();
    print!("{}", table.markdown());
    println!(
        "\nTributary / Java with the chain: {:.1}x (goal: Tributary's chain / plain >= 0.80)",
        m(Runtime::Tributary, Pipeline::Chain) / m(Runtime::Java, Pipeline::Chain)
    );
    Ok(())
}

fn main() -> ExitCode {
    let args = Args::parse();
    exit_status("transform-chain", run(&args))
}
