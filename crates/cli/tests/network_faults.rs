//! A worker cut off from the broker (a TCP proxy between it and a broker listener of its own):
//! once its group session can have expired it has stopped its tasks, the other worker takes
//! them over, and no task ever runs in two worker processes at once; when the network comes
//! back the worker rejoins and gets work again.
//!
//! FlakySource tasks append `<task> <pid> start|stop <ms>` to a lifecycle file, from which
//! the test rebuilds each task's running intervals per process and checks they never overlap.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use common::faults::{free_port, CutProxy, OwnBroker};
use common::*;
use serde_json::{json, Value};

/// Every task's running intervals per process must be disjoint across processes. Returns the
/// intervals (task → [(pid, start, stop)]), an open interval ending at `u128::MAX`.
fn check_no_overlap(lifecycle: &Path) -> BTreeMap<u32, Vec<(u32, u128, u128)>> {
    let text = std::fs::read_to_string(lifecycle).unwrap_or_default();
    let mut events: BTreeMap<u32, Vec<(u128, u32, bool)>> = BTreeMap::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 4, "lifecycle line {l:?}");
        let (task, pid, start, at) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2] == "start",
            f[3].parse().unwrap(),
        );
        events.entry(task).or_default().push((at, pid, start));
    }
    let mut intervals: BTreeMap<u32, Vec<(u32, u128, u128)>> = BTreeMap::new();
    for (task, mut evs) in events {
        evs.sort();
        let mut open: BTreeMap<u32, u128> = BTreeMap::new();
        let list = intervals.entry(task).or_default();
        for (at, pid, start) in evs {
            if start {
                open.insert(pid, at);
            } else if let Some(s) = open.remove(&pid) {
                list.push((pid, s, at));
            }
        }
        list.extend(open.into_iter().map(|(pid, s)| (pid, s, u128::MAX)));
        for (i, a) in list.iter().enumerate() {
            for b in &list[i + 1..] {
                assert!(
                    a.0 == b.0 || a.2 <= b.1 || b.2 <= a.1,
                    "task {task} ran in processes {} and {} at once: {a:?} and {b:?}",
                    a.0,
                    b.0
                );
            }
        }
    }
    intervals
}

fn owners(w: &StandaloneWorker, name: &str) -> Option<(Value, BTreeSet<String>)> {
    let (code, v) = w.get(&format!("/connectors/{name}/status"));
    if code != 200 {
        return None;
    }
    let tasks = v["tasks"].as_array()?.clone();
    let owners = tasks
        .iter()
        .filter(|t| t["state"] == "RUNNING")
        .map(|t| t["worker_id"].as_str().unwrap_or("").to_string())
        .collect();
    (tasks.len() == 4 && tasks.iter().all(|t| t["state"] == "RUNNING")).then_some((v, owners))
}

#[test]
fn a_worker_cut_off_from_the_broker_stops_its_tasks_and_no_task_runs_twice() {
    let Some(_) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    // The broker has a second listener, which the proxy fronts and which advertises the
    // proxy's address: a client bootstrapped through the proxy reaches the broker only
    // through it.
    let port = OwnBroker::pick_port();
    let behind = loop {
        let q = free_port();
        if q != port && q != port + 1 {
            break q;
        }
    };
    let proxy = CutProxy::start(behind);
    let extra = format!(
        "listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{},PROXIED://127.0.0.1:{behind}\nadvertised.listeners=PLAINTEXT://127.0.0.1:{port},PROXIED://127.0.0.1:{}\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,PROXIED:PLAINTEXT\n",
        port + 1,
        proxy.port
    );
    let broker = OwnBroker::start_on(d, port, &extra);
    let group = unique("cutoff");
    let worker_extra = "scheduled.rebalance.max.delay.ms=3000\n";
    let w1 = DistributedWorker::start(d, "w1", &broker.bootstrap(), &group, worker_extra);
    w1.wait_joined();
    let proxied = format!("127.0.0.1:{}", proxy.port);
    let w2 = DistributedWorker::start(d, "w2", &proxied, &group, worker_extra);
    w2.wait_joined();
    let lifecycle = d.join("lifecycle.txt");
    let config = json!({
        "connector.class": "io.tributary.connect.testing.FlakySourceConnector",
        "tasks.max": "4",
        "topic": format!("{group}-data"),
        "records.per.second": "20",
        "lifecycle.file": lifecycle,
    });
    let (code, v) = w1.send(
        "PUT",
        "/connectors/fenced/config",
        Some(&config.to_string()),
    );
    assert_eq!(code, 201, "{v}");
    let (w1_id, w2_id) = (w1.id(), w2.id());
    wait_for(
        "the tasks to spread over both workers",
        Duration::from_secs(120),
        || {
            owners(&w1, "fenced")
                .filter(|(_, o)| o.len() == 2)
                .map(|_| ())
        },
    );
    check_no_overlap(&lifecycle);

    // Cut w2 off. Its session expires; it must have stopped its tasks by the time w1 runs
    // them, and w1 ends up running all four.
    proxy.cut();
    wait_for("w1 to run every task", Duration::from_secs(120), || {
        owners(&w1, "fenced")
            .filter(|(_, o)| *o == BTreeSet::from([w1_id.clone()]))
            .map(|_| ())
    });
    let intervals = check_no_overlap(&lifecycle);
    let w2_pid = w2.child.id();
    for (task, list) in &intervals {
        assert!(
            list.iter()
                .all(|(pid, _, stop)| *pid != w2_pid || *stop != u128::MAX),
            "task {task} still runs on the cut-off worker: {list:?}"
        );
    }
    assert!(
        w2.log_text()
            .contains("no successful heartbeat within the session timeout"),
        "the cut-off worker did not notice its session loss"
    );

    // The network comes back: w2 rejoins and gets tasks again; still never twice at once.
    proxy.restore();
    wait_for(
        "the tasks to spread over both workers again",
        Duration::from_secs(180),
        || {
            owners(&w1, "fenced")
                .filter(|(_, o)| o.contains(&w2_id) && o.contains(&w1_id))
                .map(|_| ())
        },
    );
    check_no_overlap(&lifecycle);
}
