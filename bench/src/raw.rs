//! The raw ceiling: the input file produced by a plain librdkafka `ThreadedProducer` configured
//! exactly as Tributary configures a source task's producer.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::util::Timeout;
use rdkafka::{ClientConfig, ClientContext};

use crate::input::InputFile;
use crate::proc_stats::{cpu_seconds_self, memory};

/// Counts acknowledgements and keeps the first delivery error.
#[derive(Default)]
pub struct AckCounter {
    acked: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
    first_error: Arc<Mutex<Option<String>>>,
}

impl ClientContext for AckCounter {}

impl ProducerContext for AckCounter {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(_) => {
                self.acked.fetch_add(1, Ordering::Relaxed);
            }
            Err((e, _)) => {
                self.failed.fetch_add(1, Ordering::Relaxed);
                self.first_error
                    .lock()
                    .unwrap()
                    .get_or_insert_with(|| e.to_string());
            }
        }
    }
}

/// What the raw producer achieved.
#[derive(Debug, Clone)]
pub struct RawResult {
    /// From the first line read until every record was acknowledged.
    pub elapsed: Duration,
    /// Records acknowledged.
    pub records: u64,
    /// CPU time (user + system) of the benchmark process while producing, in seconds; this
    /// includes librdkafka's threads.
    pub cpu_seconds: f64,
    /// Peak resident size of the benchmark process (`VmHWM`) after producing, in KiB: mostly
    /// librdkafka's queue of records not yet acknowledged.
    pub peak_rss_kib: u64,
}

/// Reads `input` line by line and produces every line (no key, the line as value) to `topic`,
/// then waits until all are acknowledged. `config` is the producer configuration (Tributary's
/// source producer configuration); `limit` stops after that many lines.
pub fn run(
    config: &ClientConfig,
    input: &InputFile,
    topic: &str,
    limit: Option<u64>,
) -> Result<RawResult, String> {
    let ctx = AckCounter::default();
    let (acked, failed, first_error) = (
        ctx.acked.clone(),
        ctx.failed.clone(),
        ctx.first_error.clone(),
    );
    let producer: ThreadedProducer<AckCounter> = config
        .create_with_context(ctx)
        .map_err(|e| format!("creating the raw producer: {e}"))?;
    let file = File::open(&input.path).map_err(|e| format!("{}: {e}", input.path.display()))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut line = Vec::with_capacity(1024);
    let cpu_before = cpu_seconds_self();
    let start = Instant::now();
    let mut sent = 0u64;
    while limit != Some(sent) {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading {}: {e}", input.path.display()))?;
        if n == 0 {
            break;
        }
        let value = line.strip_suffix(b"\n").unwrap_or(&line);
        let mut record: BaseRecord<'_, (), [u8]> = BaseRecord::to(topic).payload(value);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    record = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err((e, _)) => return Err(format!("producing to {topic}: {e}")),
            }
        }
        sent += 1;
    }
    producer
        .flush(Timeout::After(Duration::from_secs(600)))
        .map_err(|e| format!("flushing the raw producer: {e}"))?;
    let elapsed = start.elapsed();
    let cpu_seconds = cpu_seconds_self() - cpu_before;
    let peak_rss_kib = memory(std::process::id()).map_or(0, |m| m.hwm_kib);
    if let Some(e) = first_error.lock().unwrap().take() {
        return Err(format!(
            "{} deliveries failed, first: {e}",
            failed.load(Ordering::Relaxed)
        ));
    }
    let records = acked.load(Ordering::Relaxed);
    if records != sent {
        return Err(format!(
            "sent {sent} records but {records} were acknowledged"
        ));
    }
    Ok(RawResult {
        elapsed,
        records,
        cpu_seconds,
        peak_rss_kib,
    })
}
