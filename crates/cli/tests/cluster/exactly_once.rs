//! Exactly-once source support (KIP-618) on the real broker: transactional source tasks whose
//! records and offsets commit together, the task count records of zombie fencing, a worker
//! killed under load whose tasks another worker takes over, and Connect's validation of
//! `exactly.once.support` and `transaction.boundary`.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::eos::*;
use common::*;
use serde_json::json;

/// Worker settings of an exactly-once cluster: lost tasks are reassigned after 2 s rather than
/// Connect's default 5 minutes.
const EOS: &str = "exactly.once.source.support=enabled\nscheduled.rebalance.max.delay.ms=2000";

/// The tasks a worker runs, from `GET /tributary/worker`.
fn tasks_of(w: &DistributedWorker) -> Vec<String> {
    let (_, info) = w.get("/tributary/worker");
    info["tasks"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_killed_workers_tasks_are_taken_over_and_every_record_is_read_exactly_once() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("eos");
    let topic = unique("eos-seq");
    create_topic(&bootstrap, &topic, 1);
    let a = DistributedWorker::start(dir.path(), "a", &bootstrap, &group, EOS);
    a.wait_joined();
    let mut b = DistributedWorker::start(dir.path(), "b", &bootstrap, &group, EOS);
    b.wait_joined();
    // Two tasks under load, each committing a transaction every second.
    let body = json!({"name": "seq", "config": {
        "connector.class": "VerifiableSource", "tasks.max": "2", "topic": topic,
        "throughput": "500", "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "1000",
    }});
    let (code, v) = a.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{v}");
    a.wait_state("seq", 2, "RUNNING");
    // The first task generation under exactly-once support got its task count record (no
    // producer to fence yet).
    assert_eq!(
        task_count_records(&bootstrap, &group, "seq"),
        vec![r#"{"task-count":2}"#.to_string()]
    );
    // The leader writes the config topic in transactions: their commit markers take offsets
    // that hold no record.
    let configs = format!("{group}-configs");
    assert!(
        topic_end(&bootstrap, &configs) > read_committed(&bootstrap, &configs).len() as i64,
        "no transaction marker in the config topic"
    );
    // Under load: records are committed.
    wait_for("committed records", Duration::from_secs(60), || {
        (stable_end(&bootstrap, &topic) > 1000).then_some(())
    });
    // Kill the worker running a task (each runs one), in the middle of a transaction: once its
    // task's open transaction holds records in the log (a kill right after a commit, which the
    // wait above tends to meet, would leave nothing to abort).
    let b_task = tasks_of(&b).first().cloned().expect("b runs no task");
    let b_key = b_task.rsplit('-').next().unwrap().as_bytes().to_vec();
    wait_for(
        "b's open transaction to hold records",
        Duration::from_secs(30),
        || {
            open_transaction_keys(&bootstrap, &topic)
                .contains(&b_key)
                .then_some(())
        },
    );
    b.kill();
    let before_takeover = seqnos_by_task(&read_committed(&bootstrap, &topic));
    let end_at_kill = stable_end(&bootstrap, &topic);
    // The survivor takes both tasks over; they go on from their committed offsets.
    wait_for("a to run both tasks", Duration::from_secs(90), || {
        (tasks_of(&a).len() == 2).then_some(())
    });
    a.wait_state("seq", 2, "RUNNING");
    wait_for("the tasks to go on", Duration::from_secs(90), || {
        (stable_end(&bootstrap, &topic) > end_at_kill + 2000).then_some(())
    });
    // A new task generation with fewer tasks: the leader fences the producers of both old
    // tasks before task 0 starts again, and records the new count.
    let mut config = body["config"].clone();
    config["tasks.max"] = json!("1");
    let (code, v) = a.send("PUT", "/connectors/seq/config", Some(&config.to_string()));
    assert_eq!(code, 200, "{v}");
    wait_for(
        "the task count record of the new generation",
        Duration::from_secs(60),
        || (task_count_records(&bootstrap, &group, "seq").len() == 2).then_some(()),
    );
    assert_eq!(
        task_count_records(&bootstrap, &group, "seq"),
        vec![
            r#"{"task-count":2}"#.to_string(),
            r#"{"task-count":1}"#.to_string()
        ]
    );
    a.wait_state("seq", 1, "RUNNING");
    let end_at_reconfig = stable_end(&bootstrap, &topic);
    wait_for("task 0 to go on", Duration::from_secs(90), || {
        (stable_end(&bootstrap, &topic) > end_at_reconfig + 1000).then_some(())
    });
    // Stopped: the task commits its last transaction and the topic no longer grows.
    let (code, v) = a.send("PUT", "/connectors/seq/stop", None);
    assert_eq!(code, 204, "{v}");
    a.wait_state("seq", 0, "STOPPED");
    let committed = read_committed(&bootstrap, &topic);
    let by_task = seqnos_by_task(&committed);
    assert_eq!(by_task.len(), 2, "{:?}", by_task.keys());
    assert_exactly_once(&by_task);
    // Both tasks went on after the takeover (no gap is not enough: a task that never ran
    // again would have none either).
    for (task, before) in &before_takeover {
        assert!(
            by_task[task].len() > before.len(),
            "task {task} did not resume"
        );
    }
    // A read_uncommitted reader also sees the records of the transaction the kill cut short
    // (aborted when the task's producer was initialised again): the kill did land in the
    // middle of a transaction, and none of its records reached the read_committed reader.
    let all = uncommitted_count(&bootstrap, &topic);
    assert!(
        all > committed.len(),
        "no aborted record: {all} records in the log, {} committed",
        committed.len()
    );
}

#[test]
fn validation_follows_connect_for_exactly_once_settings() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("eos-validate");
    let w = DistributedWorker::start(dir.path(), "w", &bootstrap, &group, EOS);
    w.wait_joined();
    let errors = |class: &str, extra: serde_json::Value| {
        let mut config =
            json!({"connector.class": class, "name": "v", "topic": "t", "file": "/tmp/x"});
        for (k, v) in extra.as_object().unwrap() {
            config[k] = v.clone();
        }
        let (code, v) = w.send(
            "PUT",
            &format!("/connector-plugins/{class}/config/validate"),
            Some(&config.to_string()),
        );
        assert_eq!(code, 200, "{v}");
        let mut out = BTreeMap::new();
        for c in v["configs"].as_array().unwrap() {
            let errs = &c["value"]["errors"];
            if !errs.as_array().unwrap().is_empty() {
                out.insert(
                    c["value"]["name"].as_str().unwrap().to_string(),
                    errs.clone(),
                );
            }
        }
        out
    };
    // FileStreamSource reading a file declares exactly-once support.
    let ok = errors(
        "FileStreamSource",
        json!({"exactly.once.support": "required"}),
    );
    assert!(ok.is_empty(), "{ok:?}");
    // VerifiableSource does not say: `required` is refused with Connect's message.
    let refused = errors(
        "VerifiableSource",
        json!({"exactly.once.support": "required"}),
    );
    let msg = refused["exactly.once.support"][0].as_str().unwrap();
    assert!(
        msg.starts_with("The connector does not implement the API required for preflight validation of exactly-once source support."),
        "{msg}"
    );
    // FileStreamSource does not define its own transaction boundaries; FlakySource does
    // when told to.
    let ok = errors(
        "FlakySource",
        json!({"transaction.boundary": "connector", "define.transactions": "fibonacci"}),
    );
    assert!(ok.is_empty(), "{ok:?}");
    let refused = errors(
        "FileStreamSource",
        json!({"transaction.boundary": "connector"}),
    );
    assert_eq!(
        refused["transaction.boundary"][0],
        "The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition."
    );
    // `requested` and the poll and interval boundaries pass.
    let ok = errors(
        "VerifiableSource",
        json!({"exactly.once.support": "requested", "transaction.boundary": "interval"}),
    );
    assert!(ok.is_empty(), "{ok:?}");
}

#[test]
fn a_worker_cut_off_from_the_broker_is_fenced_and_its_late_writes_never_become_visible() {
    if kafka().is_none() {
        return;
    }
    let dir = test_dir();
    let d = dir.path();
    let (broker, proxy) = common::faults::broker_behind_proxy(d);
    let bootstrap = broker.bootstrap();
    let group = unique("eos-cut");
    let topic = unique("eos-cut-seq");
    create_topic(&bootstrap, &topic, 1);
    let direct = DistributedWorker::start(d, "direct", &bootstrap, &group, EOS);
    direct.wait_joined();
    let proxied_bootstrap = format!("127.0.0.1:{}", proxy.port);
    let proxied = DistributedWorker::start(d, "proxied", &proxied_bootstrap, &group, EOS);
    proxied.wait_joined();
    let body = json!({"name": "seq", "config": {
        "connector.class": "VerifiableSource", "tasks.max": "2", "topic": topic,
        "throughput": "300", "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": "100",
    }});
    let (code, v) = direct.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{v}");
    direct.wait_state("seq", 2, "RUNNING");
    wait_for("each worker to run a task", Duration::from_secs(60), || {
        (tasks_of(&direct).len() == 1 && tasks_of(&proxied).len() == 1).then_some(())
    });
    wait_for("committed records", Duration::from_secs(60), || {
        (stable_end(&bootstrap, &topic) > 500).then_some(())
    });
    // The proxied worker is cut off in the middle of a transaction: it cannot commit, and the
    // direct worker takes its task over once the group has given it up.
    proxy.cut();
    let before_takeover = seqnos_by_task(&read_committed(&bootstrap, &topic));
    wait_for(
        "the direct worker to run both tasks",
        Duration::from_secs(90),
        || (tasks_of(&direct).len() == 2).then_some(()),
    );
    let end_at_takeover = stable_end(&bootstrap, &topic);
    wait_for("both tasks to go on", Duration::from_secs(90), || {
        (stable_end(&bootstrap, &topic) > end_at_takeover + 1000).then_some(())
    });
    // The cut-off worker comes back: whatever its old producer still holds is refused (its
    // epoch was fenced when the task's producer was initialised on the direct worker).
    proxy.restore();
    let generation = |w: &DistributedWorker| w.get("/tributary/worker").1["generation"].as_i64();
    let direct_generation = generation(&direct);
    wait_for(
        "the proxied worker to rejoin",
        Duration::from_secs(90),
        || (generation(&proxied) >= direct_generation).then_some(()),
    );
    let end_at_rejoin = stable_end(&bootstrap, &topic);
    wait_for(
        "the tasks to go on after the rejoin",
        Duration::from_secs(90),
        || (stable_end(&bootstrap, &topic) > end_at_rejoin + 1000).then_some(()),
    );
    let (code, v) = direct.send("PUT", "/connectors/seq/stop", None);
    assert_eq!(code, 204, "{v}");
    direct.wait_state("seq", 0, "STOPPED");
    let by_task = seqnos_by_task(&read_committed(&bootstrap, &topic));
    assert_eq!(by_task.len(), 2, "{:?}", by_task.keys());
    assert_exactly_once(&by_task);
    for (task, before) in &before_takeover {
        assert!(
            by_task[task].len() > before.len(),
            "task {task} did not resume"
        );
    }
}

#[test]
fn a_task_defining_its_own_transactions_has_its_commits_and_aborts_honoured() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("eos-connector");
    let topic = unique("eos-connector-seq");
    create_topic(&bootstrap, &topic, 1);
    let w = DistributedWorker::start(dir.path(), "w", &bootstrap, &group, EOS);
    w.wait_joined();
    // The task ends a transaction at every Fibonacci seqno, committing odd and aborting even
    // ones, half of them by naming the record and half by asking for the batch.
    let body = json!({"name": "flaky", "config": {
        "connector.class": "FlakySource", "tasks.max": "1", "topic": topic,
        "records.per.second": "300", "define.transactions": "fibonacci",
        "transaction.boundary": "connector",
    }});
    let (code, v) = w.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(code, 201, "{v}");
    w.wait_state("flaky", 1, "RUNNING");
    let committed = || read_committed(&bootstrap, &topic).len();
    wait_for("committed records", Duration::from_secs(60), || {
        (committed() >= 150).then_some(())
    });
    // Stopped in the middle of a transaction it has not ended: that one is aborted, and the
    // resumed task writes its records again from the last committed offset.
    assert_eq!(w.send("PUT", "/connectors/flaky/stop", None).0, 204);
    w.wait_state("flaky", 0, "STOPPED");
    let at_stop = committed();
    assert_eq!(w.send("PUT", "/connectors/flaky/resume", None).0, 202);
    wait_for("more committed records", Duration::from_secs(60), || {
        (committed() >= at_stop + 100).then_some(())
    });
    assert_eq!(w.send("PUT", "/connectors/flaky/stop", None).0, 204);
    w.wait_state("flaky", 0, "STOPPED");
    // A read_committed consumer sees exactly the records of the committed transactions, each
    // once and in order.
    let by_task = seqnos_by_task(&read_committed(&bootstrap, &topic));
    let seqnos = &by_task[&0];
    let last = *seqnos.last().unwrap();
    let expected: Vec<i64> = (0..=last).filter(|s| fibonacci_committed(*s)).collect();
    assert_eq!(*seqnos, expected);
    assert!(
        last > 233,
        "the task did not go on after the resume: last seqno {last}"
    );
    // The aborted records did reach the log.
    assert!(uncommitted_count(&bootstrap, &topic) > seqnos.len());
    // Each transaction's offset was committed, an aborted one's in a transaction of its own
    // right after the abort, so its records are not read again.
    let key = offset_key("flaky", json!({"task": 0}));
    let offsets: Vec<i64> = read_all(&bootstrap, &format!("{group}-offsets"))
        .records
        .into_iter()
        .filter(|(k, _)| *k == key)
        .filter_map(|(_, v)| v.and_then(|v| v["seqno"].as_i64()))
        .collect();
    assert_eq!(
        offsets[..10],
        [1, 2, 3, 5, 8, 13, 21, 34, 55, 89],
        "{offsets:?}"
    );
}
