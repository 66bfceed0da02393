//! `throttle` (issue #36): whether `tributary.throttle.records.per.second` holds. One
//! standalone worker runs a VerifiableSource at an unlimited `throughput` with the limit, and
//! beside it an unlimited one; over `--secs` (default 60) the limited task's records/s is
//! compared with its limit (goal: within 5%) and the unlimited task's with its rate when it
//! runs alone (goal: it keeps it). For each of `--rates` (default 1,000, 10,000, 100,000).
//! A measurement, not a test.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Parser;
use serde_json::json;
use tributary_bench::kafka::Broker;
use tributary_bench::rest::Rest;
use tributary_bench::table::Table;
use tributary_bench::worker::{worker_properties, Worker};
use tributary_bench::{bootstrap, exit_status, say, stamp, tempdir, tributary_binary};

/// Command-line options.
#[derive(Parser, Debug)]
#[command(
    name = "throttle",
    about = "Whether tributary.throttle.records.per.second holds beside an unlimited task."
)]
struct Args {
    /// The limits to measure, records/s.
    #[arg(long, value_delimiter = ',', default_values_t = vec![1_000u64, 10_000, 100_000])]
    rates: Vec<u64>,
    /// Seconds measured per limit.
    #[arg(long, default_value_t = 60)]
    secs: u64,
    /// Kafka bootstrap servers (default: $KAFKA_BOOTSTRAP, else 127.0.0.1:9092).
    #[arg(long)]
    bootstrap: Option<String>,
    /// The `tributary` binary (default: `tributary` next to this executable).
    #[arg(long)]
    tributary: Option<std::path::PathBuf>,
}

/// Creates a VerifiableSource `name` writing to `topic`, with `limit` (records/s) if given.
fn create(rest: &Rest, name: &str, topic: &str, limit: Option<u64>) -> Result<(), String> {
    let mut config = json!({
        "connector.class": "VerifiableSource",
        "tasks.max": "1",
        "topic": topic,
        "throughput": "-1",
    });
    if let Some(l) = limit {
        config["tributary.throttle.records.per.second"] = json!(l.to_string());
    }
    match rest.send("PUT", &format!("/connectors/{name}/config"), Some(&config))? {
        (201, _) => Ok(()),
        (code, body) => Err(format!("creating {name}: {code} {body}")),
    }
}

/// Records/s into `topic` over `secs`, measured between two end offsets after a warm-up.
fn rate_of(broker: &Broker, topic: &str, secs: u64) -> Result<f64, String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while broker.try_end_offset(topic).unwrap_or(0) == 0 {
        if Instant::now() > deadline {
            return Err(format!("nothing reached {topic}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    // A few seconds for the producer's batching to settle.
    std::thread::sleep(Duration::from_secs(3));
    let (t0, e0) = (Instant::now(), broker.try_end_offset(topic)?);
    std::thread::sleep(Duration::from_secs(secs));
    let (t1, e1) = (Instant::now(), broker.try_end_offset(topic)?);
    Ok((e1 - e0) as f64 / (t1 - t0).as_secs_f64())
}

/// One standalone worker running `connectors` (name, topic, limit); returns each one's rate.
fn run_worker(
    args: &Args,
    binary: &std::path::Path,
    broker: &Broker,
    connectors: &[(String, String, Option<u64>)],
) -> Result<Vec<f64>, String> {
    let dir = tempdir()?;
    let props = worker_properties(broker.bootstrap(), dir.path());
    let mut worker = Worker::spawn(binary, dir.path(), &props, &[])?;
    let url = worker.wait_rest(Duration::from_secs(60))?;
    let rest = Rest::new(&url, Duration::from_secs(30))?;
    for (name, topic, limit) in connectors {
        create(&rest, name, topic, *limit)?;
    }
    // Measured one after the other would shift their windows: sampled together.
    let topics: Vec<String> = connectors.iter().map(|c| c.1.clone()).collect();
    let handles: Vec<_> = topics
        .into_iter()
        .map(|t| {
            let b = broker.bootstrap().to_string();
            let secs = args.secs;
            std::thread::spawn(move || {
                Broker::connect(&b).and_then(|broker| rate_of(&broker, &t, secs))
            })
        })
        .collect();
    let rates: Result<Vec<f64>, String> = handles
        .into_iter()
        .map(|h| h.join().map_err(|_| "a sampler panicked".to_string())?)
        .collect();
    worker.terminate(Duration::from_secs(20));
    rates
}

fn run(args: Args) -> Result<(), String> {
    let binary = tributary_binary(args.tributary.as_deref())?;
    let broker = Broker::connect(&bootstrap(args.bootstrap.as_deref()))?;
    let s = stamp();
    let mut topics = Vec::new();
    let topic = |label: &str, topics: &mut Vec<String>| {
        let t = format!("throttle-{s}-{label}");
        topics.push(t.clone());
        t
    };
    say("the unlimited task alone");
    let alone_topic = topic("alone", &mut topics);
    broker.create_topic(&alone_topic)?;
    let alone = run_worker(
        &args,
        &binary,
        &broker,
        &[(format!("alone-{s}"), alone_topic, None)],
    )?[0];
    say(format!("alone: {alone:.0} records/s"));
    let mut table = Table::new(&[
        "limit (records/s)",
        "limited task, records/s",
        "off by",
        "unlimited task beside it, records/s",
        "of its rate alone",
    ]);
    for &limit in &args.rates {
        let (lt, ft) = (
            topic(&format!("limited-{limit}"), &mut topics),
            topic(&format!("free-{limit}"), &mut topics),
        );
        broker.create_topic(&lt)?;
        broker.create_topic(&ft)?;
        let rates = run_worker(
            &args,
            &binary,
            &broker,
            &[
                (format!("limited-{limit}-{s}"), lt, Some(limit)),
                (format!("free-{limit}-{s}"), ft, None),
            ],
        )?;
        say(format!(
            "limit {limit}: limited {:.0} records/s, unlimited beside it {:.0}",
            rates[0], rates[1]
        ));
        table.row(
            limit.to_string(),
            vec![
                format!("{:.0}", rates[0]),
                format!("{:+.1}%", (rates[0] / limit as f64 - 1.0) * 100.0),
                format!("{:.0}", rates[1]),
                format!("{:.0}%", rates[1] / alone * 100.0),
            ],
        );
    }
    let refs: Vec<&str> = topics.iter().map(String::as_str).collect();
    broker.delete_topics(&refs);
    println!("{}", table.text());
    println!("{}", table.markdown());
    println!(
        "VerifiableSource at unlimited throughput (one record a poll), one task each, on one standalone worker (release build, shared producer); rates from the topics' end offsets over {} s after a 3 s warm-up, both tasks sampled over the same window; the unlimited task alone: {alone:.0} records/s.",
        args.secs
    );
    Ok(())
}

fn main() -> ExitCode {
    exit_status("throttle", run(Args::parse()))
}
