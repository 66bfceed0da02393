//! Connect's metrics on `/metrics`, scraped by a real Prometheus server (Debian's package,
//! started by `scripts/prometheus`) from a 2-worker cluster on a real broker: the series carry
//! the names the Prometheus JMX exporter's rules give Connect's MBeans, and the values Prometheus
//! stores agree with what the connectors moved.

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// A Prometheus server of this test, stopped (killed) when dropped.
struct Prometheus {
    child: Child,
    url: String,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

impl Prometheus {
    /// Starts Prometheus scraping `targets` (host:port) every second, or `None` (after
    /// [`missing`]) when the package cannot be installed.
    fn start(dir: &Path, targets: &[String]) -> Option<Prometheus> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/prometheus");
        let installed = Command::new(&script)
            .arg("path")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !installed {
            return missing(
                "Prometheus is not installed and scripts/prometheus could not install it",
            );
        }
        let port = common::faults::free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new(&script)
            .arg("run")
            .arg(dir.join("prometheus"))
            .arg(port.to_string())
            .args(targets)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("starting scripts/prometheus");
        let p = Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        wait_for("Prometheus to be ready", Duration::from_secs(60), || {
            reqwest::blocking::get(format!("{}/-/ready", p.url))
                .ok()
                .filter(|r| r.status().is_success())
                .map(|_| ())
        });
        Some(p)
    }

    /// An instant query: the result vector (`[{metric, value: [t, "v"]}]`).
    fn query(&self, q: &str) -> Vec<Value> {
        let r: Value = reqwest::blocking::Client::new()
            .get(format!("{}/api/v1/query", self.url))
            .query(&[("query", q)])
            .send()
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(r["status"], "success", "query {q}: {r}");
        r["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// The single value of a query (`None` when it has no result).
    fn value(&self, q: &str) -> Option<f64> {
        let v = self.query(q);
        v.first()
            .and_then(|s| s["value"][1].as_str())
            .and_then(|s| s.parse().ok())
    }

    /// Waits until the query's single value is `want`; the panic shows the last value.
    fn wait_value(&self, q: &str, want: f64) {
        let mut last = None;
        let ok = (0..1200).any(|_| {
            last = self.value(q);
            if last == Some(want) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
            false
        });
        assert!(ok, "{q}: wanted {want}, last value {last:?}");
    }
}

#[test]
fn prometheus_scrapes_connect_metrics_from_two_workers() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("metrics");
    // librdkafka statistics every second, so the client series appear quickly.
    let extra = "metrics.sample.window.ms=1000";
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, extra);
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, extra);
    w1.wait_joined();
    w2.wait_joined();
    // KIP-1017: a joined worker is healthy, with Connect's body.
    for w in [&w1, &w2] {
        assert_eq!(
            w.get("/health"),
            (
                200,
                json!({"status": "healthy", "message": "Worker has completed startup and is ready to handle requests."})
            )
        );
    }
    let Some(prom) = Prometheus::start(dir.path(), &[w1.id(), w2.id()]) else {
        return;
    };

    // A source moves N lines into a topic; a 2-task sink reads a 2-partition topic of N records.
    const N: usize = 500;
    let lines: String = (0..N).map(|i| format!("line {i}\n")).collect();
    let input = dir.path().join("input.txt");
    std::fs::write(&input, lines).unwrap();
    let source_topic = unique("metrics-src");
    let sink_topic = unique("metrics-sink");
    create_topic(&bootstrap, &sink_topic, 2);
    let values: Vec<String> = (0..N).map(|i| format!("v{i}")).collect();
    produce_values(&bootstrap, &sink_topic, Some(0), &values[..N / 2]);
    produce_values(&bootstrap, &sink_topic, Some(1), &values[N / 2..]);
    let (code, body) = w1.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "src", "config": {
                "connector.class": "FileStreamSource",
                "file": input.to_str().unwrap(),
                "topic": source_topic,
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    let (code, body) = w1.send(
        "POST",
        "/connectors",
        Some(
            &json!({"name": "snk", "config": {
                "connector.class": "FileStreamSink",
                "file": dir.path().join("out.txt").to_str().unwrap(),
                "topics": sink_topic,
                "tasks.max": "2",
            }})
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{body}");
    w1.wait_state("src", 1, "RUNNING");
    let status = w1.wait_state("snk", 2, "RUNNING");

    // Both workers are scraped.
    prom.wait_value("count(up{job=\"tributary\"} == 1)", 2.0);
    prom.wait_value("count(kafka_connect_worker_connector_count)", 2.0);
    prom.wait_value("sum(kafka_connect_worker_connector_count)", 2.0);
    prom.wait_value("sum(kafka_connect_worker_task_count)", 3.0);
    // The workers' app-info, one per worker id (KIP-1120's client-id tag).
    prom.wait_value(
        "count(count by (clientId) (kafka_connect_version_info{version=\"4.4.0\"}))",
        2.0,
    );
    prom.wait_value("count(kafka_connect_start_time_seconds > 1.7e9)", 2.0);
    prom.wait_value(
        "count(kafka_connect_worker_rebalance_completed_rebalances_total >= 1)",
        2.0,
    );

    // Records counted equal records moved: the source's writes and the sink's reads and puts,
    // summed over the workers that run the tasks.
    prom.wait_value(
        "sum(kafka_connect_source_task_source_record_poll_total{connector=\"src\"})",
        N as f64,
    );
    prom.wait_value(
        "sum(kafka_connect_source_task_source_record_write_total{connector=\"src\"})",
        N as f64,
    );
    assert_eq!(topic_end(&bootstrap, &source_topic), N as i64);
    prom.wait_value(
        "sum(kafka_connect_sink_task_sink_record_read_total{connector=\"snk\"})",
        N as f64,
    );
    prom.wait_value(
        "sum(kafka_connect_sink_task_sink_record_send_total{connector=\"snk\"})",
        N as f64,
    );
    prom.wait_value(
        "count(kafka_connect_sink_task_sink_record_read_total{connector=\"snk\"})",
        2.0,
    );
    // Each sink task on the worker the status names, as scraped.
    for t in status["tasks"].as_array().unwrap() {
        let q = format!(
            "count(kafka_connect_connector_task_status{{connector=\"snk\",task=\"{}\",status=\"running\",instance=\"{}\"}})",
            t["id"], t["worker_id"].as_str().unwrap()
        );
        prom.wait_value(&q, 1.0);
    }
    prom.wait_value(
        "kafka_connect_connector_status{connector=\"src\",status=\"running\"}",
        1.0,
    );
    prom.wait_value(
        "kafka_connect_connector_connector_type{connector=\"snk\",connector_type=\"sink\"}",
        1.0,
    );
    prom.wait_value(
        "sum(kafka_connect_worker_connector_running_task_count{connector=\"snk\"})",
        2.0,
    );
    prom.wait_value(
        "sum(kafka_connect_task_error_total_record_errors{connector=\"snk\"})",
        0.0,
    );
    // Offsets are committed (the sink's commits complete).
    prom.wait_value(
        "count(kafka_connect_sink_task_offset_commit_completion_total{connector=\"snk\"} > 0)",
        2.0,
    );
    prom.wait_value(
        "count(kafka_connect_connector_task_offset_commit_success_percentage{connector=\"src\"} == 1)",
        1.0,
    );

    // The clients' librdkafka statistics: what the producer sent and the consumers received,
    // and a lag that drains to 0.
    prom.wait_value(
        "sum(kafka_producer_record_send_total{clientId=\"connector-producer-src-0\"})",
        N as f64,
    );
    prom.wait_value(
        "sum(kafka_consumer_fetch_manager_records_consumed_total{clientId=~\"connector-consumer-snk-.*\"})",
        N as f64,
    );
    prom.wait_value(
        "max(kafka_consumer_fetch_manager_records_lag_max{clientId=~\"connector-consumer-snk-.*\"})",
        0.0,
    );
    prom.wait_value(
        "count(kafka_consumer_fetch_manager_records_lag{clientId=~\"connector-consumer-snk-.*\"})",
        2.0,
    );
    // Latency: librdkafka's round-trip window (NaN in an interval without requests).
    prom.wait_value(
        "count(kafka_producer_request_latency_avg{clientId=\"connector-producer-src-0\"})",
        1.0,
    );
}
