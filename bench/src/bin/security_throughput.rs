//! FileStreamSource throughput over SASL_SSL (SCRAM-SHA-512) as a ratio of PLAINTEXT, for
//! Tributary and Java Connect in the same run, on the secured broker of `scripts/kafka-secure`
//! (its PLAINTEXT `INTERNAL` listener and its SASL_SSL listener are the same broker, so only
//! the transport differs).
//!
//! Each round starts one distributed worker per (runtime, transport), creates a FileStreamSource
//! over the same generated input file into a fresh topic, and times create → every record in
//! the topic (end offsets read through the PLAINTEXT listener). Java is started as
//! `connect-distributed.sh` starts it (the shared launcher of `tributary_bench::java`: Connect's
//! shipped heap `-Xms256M -Xmx2G` and `kafka-run-class.sh`'s JVM options). Prints the median
//! records/s of the rounds, and the ratios.
//!
//! Usage: `security-throughput [--lines N] [--rounds R] [--tributary PATH]` with the
//! `KAFKA_SECURE_*` variables of `scripts/kafka-secure env` in the environment
//! (`scripts/bench security` sets them).

use std::collections::BTreeMap;
use std::path::PathBuf;

use tributary_bench::source_run::{median, SourceBench, SourceCase, SourceSetup};
use tributary_bench::table::Table;
use tributary_bench::{say, stamp, Runtime};

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| {
        format!("{name} is not set: run through `scripts/bench security`, which starts scripts/kafka-secure")
    })
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Transport {
    Plaintext,
    SaslSsl,
}

impl Transport {
    fn label(self) -> &'static str {
        match self {
            Transport::Plaintext => "PLAINTEXT",
            Transport::SaslSsl => "SASL_SSL (SCRAM-SHA-512)",
        }
    }
}

/// The security lines of a worker file for `transport`, at worker level and under `producer.`
/// and `admin.` (Connect's task producers do not inherit worker-level keys).
fn security_lines(transport: Transport) -> Result<Vec<(String, String)>, String> {
    if transport == Transport::Plaintext {
        return Ok(Vec::new());
    }
    let common = vec![
        ("security.protocol".to_string(), "SASL_SSL".to_string()),
        ("sasl.mechanism".to_string(), "SCRAM-SHA-512".to_string()),
        (
            "sasl.jaas.config".to_string(),
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"connect\" password=\"connect-secret\";".to_string(),
        ),
        ("ssl.truststore.type".to_string(), "PKCS12".to_string()),
        (
            "ssl.truststore.location".to_string(),
            env("KAFKA_SECURE_TRUSTSTORE_P12")?,
        ),
        ("ssl.truststore.password".to_string(), "store-secret".to_string()),
    ];
    let mut out = common.clone();
    for prefix in ["producer.", "consumer.", "admin."] {
        out.extend(
            common
                .iter()
                .map(|(k, v)| (format!("{prefix}{k}"), v.clone())),
        );
    }
    Ok(out)
}

/// The Java worker's maximum heap: Connect's shipped `-Xmx2G` (with `-Xms256M`).
const JAVA_HEAP: &str = "2G";

/// One measurement: records/s from create to the last record in the topic.
fn measure(
    bench: &SourceBench<'_>,
    runtime: Runtime,
    transport: Transport,
    tag: &str,
) -> Result<f64, String> {
    let bootstrap = match transport {
        Transport::Plaintext => env("KAFKA_SECURE_INTERNAL")?,
        Transport::SaslSsl => env("KAFKA_SECURE_SASL_SSL")?,
    };
    bench.measure(SourceCase {
        runtime,
        bootstrap: &bootstrap,
        group: &format!("secbench-{tag}"),
        worker_extra: security_lines(transport)?,
        connector_extra: Default::default(),
        counted_topic: None,
        read_committed: false,
    })
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().collect();
    let lines: u64 = arg(&args, "--lines")
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let rounds: usize = arg(&args, "--rounds")
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let tributary = arg(&args, "--tributary").map(PathBuf::from);
    let setup = SourceSetup::prepare(
        tributary.as_deref(),
        None,
        JAVA_HEAP,
        &env("KAFKA_SECURE_INTERNAL")?,
        None,
        lines,
    )?;
    let bench = setup.bench();
    let mut results: BTreeMap<(Runtime, Transport), Vec<f64>> = BTreeMap::new();
    let run = stamp();
    for round in 1..=rounds {
        for runtime in [Runtime::Tributary, Runtime::Java] {
            for transport in [Transport::Plaintext, Transport::SaslSsl] {
                let tag = format!("{run}-{round}-{runtime:?}-{transport:?}").to_lowercase();
                let rps = measure(&bench, runtime, transport, &tag)?;
                say(format!(
                    "round {round}: {runtime:?} over {}: {rps:.0} records/s",
                    transport.label()
                ));
                results.entry((runtime, transport)).or_default().push(rps);
            }
        }
    }
    let m = |r, t| median(results.get(&(r, t)).cloned().unwrap_or_default());
    let mut table = Table::new(&[
        "FileStreamSource, records/s (median)",
        "PLAINTEXT",
        "SASL_SSL",
        "SASL_SSL / PLAINTEXT",
    ]);
    for (label, r) in [
        ("Tributary", Runtime::Tributary),
        ("Java Connect 4.1.1 (-Xms256M -Xmx2G)", Runtime::Java),
    ] {
        let (p, s) = (m(r, Transport::Plaintext), m(r, Transport::SaslSsl));
        table.row(
            label,
            vec![
                format!("{p:.0}"),
                format!("{s:.0}"),
                format!("{:.2}", s / p),
            ],
        );
    }
    println!("Median of {rounds} round(s), {} lines:", setup.input.lines);
    print!("{}", table.text());
    println!();
    print!("{}", table.markdown());
    println!(
        "\nTributary / Java over SASL_SSL: {:.1}x",
        m(Runtime::Tributary, Transport::SaslSsl) / m(Runtime::Java, Transport::SaslSsl)
    );
    Ok(())
}
