//! Distributed workers against a real Kafka broker: a group of `tributary distributed`
//! processes sharing connectors through Connect's internal topics.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::*;
use serde_json::json;

fn statuses_by_worker(w: &StandaloneWorker, connector: &str) -> BTreeMap<String, Vec<u64>> {
    let (_, s) = w.get(&format!("/connectors/{connector}/status"));
    let mut out: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for t in s["tasks"].as_array().cloned().unwrap_or_default() {
        out.entry(t["worker_id"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push(t["id"].as_u64().unwrap());
    }
    out
}

fn all_running_on(
    w: &StandaloneWorker,
    connector: &str,
    tasks: usize,
    allowed: &BTreeSet<String>,
) -> bool {
    let (code, s) = w.get(&format!("/connectors/{connector}/status"));
    if code != 200 {
        return false;
    }
    let ts = s["tasks"].as_array().cloned().unwrap_or_default();
    s["connector"]["state"] == "RUNNING"
        && allowed.contains(s["connector"]["worker_id"].as_str().unwrap_or_default())
        && ts.len() == tasks
        && ts.iter().all(|t| {
            t["state"] == "RUNNING" && allowed.contains(t["worker_id"].as_str().unwrap_or_default())
        })
}

/// Connectors created through a follower run with their tasks spread over the workers; a
/// SIGKILLed worker's tasks run elsewhere after the session timeout; VerifiableSource tasks
/// that moved resume their seqno with no gap.
#[test]
fn three_workers_share_tasks_and_take_over_from_a_killed_one() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("dist");
    // The eager protocol: a dead worker's tasks move as soon as the group notices.
    let eager = "connect.protocol=eager";
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, eager);
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, eager);
    let mut w3 = DistributedWorker::start(dir.path(), "w3", &bootstrap, &group, eager);
    w2.wait_joined();
    w3.wait_joined();
    wait_for(
        "one leader among three workers",
        Duration::from_secs(60),
        || {
            let infos: Vec<_> = [&w1, &w2, &w3]
                .iter()
                .map(|w| w.get("/tributary/worker").1)
                .collect();
            let gens: BTreeSet<i64> = infos
                .iter()
                .map(|i| i["generation"].as_i64().unwrap_or(0))
                .collect();
            (gens.len() == 1 && infos.iter().filter(|i| i["leader"] == true).count() == 1)
                .then_some(())
        },
    );
    let leader = [&w1, &w2, &w3]
        .into_iter()
        .find(|w| w.get("/tributary/worker").1["leader"] == true)
        .unwrap()
        .id();
    let follower = [&w1, &w2, &w3]
        .into_iter()
        .find(|w| w.id() != leader)
        .unwrap();

    let topic = unique("verifiable");
    let body = json!({"name": "vs", "config": {"connector.class": "VerifiableSource", "tasks.max": "6", "topic": topic, "throughput": "200"}});
    let (code, created) = follower.send("POST", "/connectors", Some(&body.to_string()));
    assert_eq!(
        code, 201,
        "created through a follower (forwarded to the leader): {created}"
    );
    let everyone: BTreeSet<String> = [&w1, &w2, &w3].iter().map(|w| w.id()).collect();
    wait_for("6 running tasks", Duration::from_secs(60), || {
        all_running_on(&w1, "vs", 6, &everyone).then_some(())
    });
    let spread = statuses_by_worker(&w1, "vs");
    assert_eq!(
        spread.len(),
        3,
        "tasks spread over all three workers: {spread:?}"
    );

    // Kill a worker that runs tasks; its tasks move to the two others.
    let victim = w3.id();
    w3.kill();
    let survivors: BTreeSet<String> = everyone.iter().filter(|w| **w != victim).cloned().collect();
    wait_for(
        "tasks to run on the survivors",
        Duration::from_secs(90),
        || all_running_on(&w1, "vs", 6, &survivors).then_some(()),
    );
    // Let them produce a little on their new owners, then check every task's sequence.
    let before = topic_end(&bootstrap, &topic);
    wait_for(
        "more records after the move",
        Duration::from_secs(60),
        || (topic_end(&bootstrap, &topic) > before + 300).then_some(()),
    );
    let records = read_topic_records(&bootstrap, &topic);
    let mut seqnos: BTreeMap<u32, BTreeSet<i64>> = BTreeMap::new();
    for (k, v) in &records {
        let task: u32 = String::from_utf8_lossy(k).parse().unwrap();
        let seqno: i64 = String::from_utf8_lossy(v).parse().unwrap();
        seqnos.entry(task).or_default().insert(seqno);
    }
    assert_eq!(seqnos.len(), 6, "every task produced");
    for (task, s) in &seqnos {
        let max = *s.iter().max().unwrap();
        assert_eq!(
            s.len() as i64,
            max + 1,
            "task {task}: seqnos 0..={max} with no gap"
        );
    }
}

/// Restarting the whole cluster restores connectors, configs and target states from the
/// topics; pause/resume/stop/delete and reconfiguration work end to end; a garbage record in
/// the config topic is skipped.
#[test]
fn cluster_restart_restores_state_and_lifecycle_works() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("life");
    let mut a = DistributedWorker::start(dir.path(), "a", &bootstrap, &group, "");
    let mut b = DistributedWorker::start(dir.path(), "b", &bootstrap, &group, "");
    a.wait_joined();
    b.wait_joined();
    let create = |w: &StandaloneWorker, name: &str, tasks: u32| {
        let body = json!({"name": name, "config": {"connector.class": "VerifiableSource", "tasks.max": tasks.to_string(), "topic": unique(name), "throughput": "10"}});
        let (code, r) = w.send("POST", "/connectors", Some(&body.to_string()));
        assert_eq!(code, 201, "{r}");
    };
    create(&a, "running", 2);
    create(&b, "paused", 1);
    create(&a, "stopped", 1);
    for n in ["running", "paused", "stopped"] {
        a.wait_state(n, 1, "RUNNING");
    }
    assert_eq!(b.send("PUT", "/connectors/paused/pause", None).0, 202);
    assert_eq!(b.send("PUT", "/connectors/stopped/stop", None).0, 204);
    a.wait_state("paused", 1, "PAUSED");
    wait_for("stopped to be STOPPED", Duration::from_secs(60), || {
        let (_, s) = a.get("/connectors/stopped/status");
        (s["connector"]["state"] == "STOPPED" && s["tasks"] == json!([])).then_some(())
    });

    // Reconfiguration: more tasks.
    let (code, _) = b.send("PUT", "/connectors/running/config", Some(&json!({"connector.class": "VerifiableSource", "tasks.max": "3", "topic": unique("r"), "throughput": "10"}).to_string()));
    assert_eq!(code, 200);
    wait_for("3 tasks", Duration::from_secs(60), || {
        (a.get("/connectors/running/tasks")
            .1
            .as_array()
            .map(|t| t.len())
            == Some(3))
        .then_some(())
    });
    a.wait_state("running", 3, "RUNNING");

    // Garbage in the config topic is skipped.
    produce_raw(
        &bootstrap,
        &format!("{group}-configs"),
        b"connector-garbage",
        b"{this is not json",
    );
    create(&b, "after-garbage", 1);
    a.wait_state("after-garbage", 1, "RUNNING");
    assert_eq!(
        a.get("/connectors").1,
        json!(["after-garbage", "paused", "running", "stopped"])
    );

    // Restart the whole cluster.
    assert!(a.terminate().success());
    assert!(b.terminate().success());
    let c = DistributedWorker::start(dir.path(), "c", &bootstrap, &group, "");
    let d = DistributedWorker::start(dir.path(), "d", &bootstrap, &group, "");
    c.wait_joined();
    d.wait_joined();
    assert_eq!(
        c.get("/connectors").1,
        json!(["after-garbage", "paused", "running", "stopped"])
    );
    assert_eq!(c.get("/connectors/running/config").1["tasks.max"], "3");
    c.wait_state("running", 3, "RUNNING");
    c.wait_state("paused", 1, "PAUSED");
    wait_for("stopped stays STOPPED", Duration::from_secs(60), || {
        (c.get("/connectors/stopped/status").1["connector"]["state"] == "STOPPED").then_some(())
    });

    // Resume, delete.
    assert_eq!(d.send("PUT", "/connectors/paused/resume", None).0, 202);
    c.wait_state("paused", 1, "RUNNING");
    assert_eq!(d.send("PUT", "/connectors/stopped/resume", None).0, 202);
    c.wait_state("stopped", 1, "RUNNING");
    assert_eq!(d.send("DELETE", "/connectors/running", None).0, 204);
    wait_for("running to be gone", Duration::from_secs(60), || {
        (c.get("/connectors/running").0 == 404).then_some(())
    });
    wait_for("its statuses to be gone", Duration::from_secs(60), || {
        (c.get("/connectors/running/status").0 == 404).then_some(())
    });
    assert_eq!(d.send("DELETE", "/connectors/running", None).0, 404);
}

/// Every file pushed through a distributed FileStream pipeline arrives complete: generated logs
/// and, when present, the loghub sample logs.
#[test]
fn files_through_a_distributed_pipeline() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("files");
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    w1.wait_joined();
    w2.wait_joined();
    let mut files = Vec::new();
    for (i, data) in [
        corpus::synthetic_log(20_000, 11),
        corpus::synthetic_log(3_000, 12),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.path().join(format!("generated-{i}.log"));
        std::fs::write(&path, data).unwrap();
        files.push(path);
    }
    files.extend(corpus::loghub_files());
    let mut cases = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let topic = unique(&format!("dfile{i}"));
        let out = dir.path().join(format!("out-{i}.txt"));
        let src = json!({"connector.class": "FileStreamSource", "file": f, "topic": topic});
        let sink = json!({"connector.class": "FileStreamSink", "file": out, "topics": topic});
        assert_eq!(
            w1.send(
                "PUT",
                &format!("/connectors/src-{i}/config"),
                Some(&src.to_string())
            )
            .0,
            201
        );
        assert_eq!(
            w2.send(
                "PUT",
                &format!("/connectors/sink-{i}/config"),
                Some(&sink.to_string())
            )
            .0,
            201
        );
        cases.push((f.clone(), out));
    }
    for (input, output) in &cases {
        let expected = terminated_lines(&std::fs::read(input).unwrap());
        wait_for(
            &format!("{} lines from {}", expected.len(), input.display()),
            Duration::from_secs(180),
            || {
                let n = std::fs::read(output)
                    .map(|d| d.iter().filter(|&&b| b == b'\n').count())
                    .unwrap_or(0);
                (n >= expected.len()).then_some(())
            },
        );
        let out = std::fs::read(output).unwrap();
        let got: Vec<&[u8]> = out.split(|&b| b == b'\n').collect();
        let got = &got[..got.len() - 1];
        let got_set: BTreeSet<&[u8]> = got.iter().copied().collect();
        for line in &expected {
            assert!(
                got_set.contains(line.as_slice()),
                "a line of {} is missing",
                input.display()
            );
        }
        assert!(!out.contains(&b'\r'));
    }
    // Active topics (KIP-558) are recorded in the status topic and seen by every worker.
    let topic0 = w1.get("/connectors/src-0/config").1["topic"]
        .as_str()
        .unwrap()
        .to_string();
    wait_for(
        "src-0's active topic on both workers",
        Duration::from_secs(30),
        || {
            [&w1, &w2]
                .iter()
                .all(|w| {
                    w.get("/connectors/src-0/topics").1 == json!({"src-0": {"topics": [topic0]}})
                })
                .then_some(())
        },
    );
}

/// Requests that must run on the leader or on an instance's owner are forwarded there from
/// any worker; cluster-wide log levels reach every worker.
#[test]
fn requests_are_forwarded_to_the_leader_and_to_owners() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("fwd");
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    w1.wait_joined();
    w2.wait_joined();
    let workers = [&w1, &w2];
    let body = json!({"name": "vs", "config": {"connector.class": "VerifiableSource", "tasks.max": "2", "topic": unique("fwd"), "throughput": "20"}});
    assert_eq!(
        w2.send("POST", "/connectors", Some(&body.to_string())).0,
        201
    );
    assert_eq!(
        w1.send("POST", "/connectors", Some(&body.to_string())).0,
        409,
        "duplicate create, from either side"
    );
    let everyone: BTreeSet<String> = workers.iter().map(|w| w.id()).collect();
    wait_for("vs running", Duration::from_secs(60), || {
        all_running_on(&w1, "vs", 2, &everyone).then_some(())
    });
    let starts = |task: &str| -> u64 {
        workers
            .iter()
            .map(|w| {
                w.get("/tributary/task-counters").1[task]["starts"]
                    .as_u64()
                    .unwrap_or(0)
            })
            .sum()
    };
    for w in workers {
        assert_eq!(
            w.send("POST", "/connectors/vs/restart", None).0,
            204,
            "legacy restart through {}",
            w.name
        );
        for t in 0..2 {
            let before = starts(&format!("vs-{t}"));
            assert_eq!(
                w.send("POST", &format!("/connectors/vs/tasks/{t}/restart"), None)
                    .0,
                204,
                "task restart through {}",
                w.name
            );
            // The restarted task starts on its own thread, as in Connect.
            wait_for(
                &format!("vs-{t} to start again"),
                Duration::from_secs(30),
                || (starts(&format!("vs-{t}")) > before).then_some(()),
            );
            assert_eq!(
                starts(&format!("vs-{t}")),
                before + 1,
                "one task restart through {} starts vs-{t} once",
                w.name
            );
        }
        let before: Vec<u64> = (0..2).map(|t| starts(&format!("vs-{t}"))).collect();
        let (code, plan) = w.send("POST", "/connectors/vs/restart?includeTasks=true", None);
        assert_eq!(code, 202, "{plan}");
        assert_eq!(plan["connector"]["state"], "RESTARTING");
        // The 202 comes once the request is in the config topic; the owners restart the tasks
        // after it. Waiting for that keeps the next worker's counts its own.
        wait_for(
            &format!("the tasks restarted by the plan through {}", w.name),
            Duration::from_secs(30),
            || {
                (0..2)
                    .all(|t| starts(&format!("vs-{t}")) > before[t])
                    .then_some(())
            },
        );
    }
    wait_for("vs running again", Duration::from_secs(60), || {
        all_running_on(&w2, "vs", 2, &everyone).then_some(())
    });
    assert_eq!(
        w1.send("POST", "/connectors/nope/tasks/0/restart", None).0,
        404
    );
    assert_eq!(
        w2.send("POST", "/connectors/vs/tasks/9/restart", None),
        (
            404,
            json!({"error_code": 404, "message": "Unknown task: vs-9"})
        )
    );

    // Cluster-wide log level (KIP-976), set through one worker, applied on both.
    assert_eq!(
        w1.send(
            "PUT",
            "/admin/loggers/tributary_group?scope=cluster",
            Some(r#"{"level":"DEBUG"}"#)
        )
        .0,
        204
    );
    for w in workers {
        wait_for(
            &format!("DEBUG on {}", w.name),
            Duration::from_secs(30),
            || (w.get("/admin/loggers/tributary_group").1["level"] == "DEBUG").then_some(()),
        );
    }
}
