//! A worker cut off from the broker (a TCP proxy between it and a broker listener of its own):
//! once its group session can have expired it has stopped its tasks, the other worker takes
//! them over, and no task ever runs in two worker processes at once; when the network comes
//! back the worker rejoins and gets work again.
//!
//! FlakySource tasks append `<task> <pid> start|stop <ms>` to a lifecycle file, from which
//! the test rebuilds each task's running intervals per process and checks they never overlap.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::faults::{broker_behind_proxy, check_no_overlap, record_kill};
use common::*;
use serde_json::{json, Value};

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

/// A broker of the test's own, worker `w1` connected directly and `w2` only through `proxy`,
/// both in one sessioned group, running FlakySource connector `name` with `tasks` tasks that
/// record their lifecycle in `lifecycle`.
struct ProxiedPair {
    broker: common::faults::OwnBroker,
    proxy: common::faults::CutProxy,
    group: String,
    w1: DistributedWorker,
    w2: DistributedWorker,
    lifecycle: std::path::PathBuf,
}

const WORKER_EXTRA: &str = "scheduled.rebalance.max.delay.ms=3000\n";

fn proxied_pair(d: &std::path::Path, group: &str, name: &str, tasks: usize) -> ProxiedPair {
    // The broker has a second listener, which the proxy fronts and which advertises the
    // proxy's address: a client bootstrapped through the proxy reaches the broker only
    // through it.
    let (broker, proxy) = broker_behind_proxy(d);
    let group = unique(group);
    let w1 = DistributedWorker::start(d, "w1", &broker.bootstrap(), &group, WORKER_EXTRA);
    w1.wait_joined();
    let proxied = format!("127.0.0.1:{}", proxy.port);
    let w2 = DistributedWorker::start(d, "w2", &proxied, &group, WORKER_EXTRA);
    w2.wait_joined();
    let lifecycle = d.join("lifecycle.txt");
    let config = json!({
        "connector.class": "io.tributary.connect.testing.FlakySourceConnector",
        "tasks.max": tasks.to_string(),
        "topic": format!("{group}-data"),
        "records.per.second": "20",
        "lifecycle.file": lifecycle,
    });
    let (code, v) = w1.send(
        "PUT",
        &format!("/connectors/{name}/config"),
        Some(&config.to_string()),
    );
    assert_eq!(code, 201, "{v}");
    ProxiedPair {
        broker,
        proxy,
        group,
        w1,
        w2,
        lifecycle,
    }
}

#[test]
fn a_worker_cut_off_from_the_broker_stops_its_tasks_and_no_task_runs_twice() {
    let Some(_) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    // Every part is bound: an unbound one (the broker) would be dropped, and stopped, here.
    let ProxiedPair {
        broker: _broker,
        proxy,
        group: _,
        w1,
        w2,
        lifecycle,
    } = proxied_pair(d, "cutoff", "fenced", 4);
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

/// Workers joining and leaving repeatedly (clean exits and SIGKILLs) while one worker's link to
/// the broker is slow (it reads the config topic and heartbeats late): the cluster settles
/// balanced, every worker's REST status shows the newest state, and no task ever ran in two
/// processes at once.
#[test]
fn flapping_members_and_a_slow_link_settle_balanced_with_no_task_run_twice() {
    let Some(_) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let ProxiedPair {
        broker,
        proxy,
        group,
        w1,
        w2,
        lifecycle,
    } = proxied_pair(d, "flap", "flap", 6);
    let extra = WORKER_EXTRA;
    let all_running = |w: &StandaloneWorker| -> Option<(Value, BTreeMap<String, usize>)> {
        let (code, v) = w.get("/connectors/flap/status");
        let tasks = v["tasks"].as_array()?.clone();
        if code != 200
            || v["connector"]["state"] != "RUNNING"
            || tasks.len() != 6
            || tasks.iter().any(|t| t["state"] != "RUNNING")
        {
            return None;
        }
        let mut per: BTreeMap<String, usize> = BTreeMap::new();
        for t in &tasks {
            *per.entry(t["worker_id"].as_str()?.to_string()).or_default() += 1;
        }
        Some((v, per))
    };
    wait_for("six tasks RUNNING", Duration::from_secs(120), || {
        all_running(&w1)
    });

    // Members come and go, cleanly and not, while w2's link is slow.
    for round in 0..3 {
        proxy.set_latency_ms(if round % 2 == 0 { 250 } else { 0 });
        let mut w3 = DistributedWorker::start(
            d,
            &format!("w3-{round}"),
            &broker.bootstrap(),
            &group,
            extra,
        );
        w3.wait_joined();
        if round % 2 == 0 {
            assert!(w3.terminate().success());
        } else {
            let pid = w3.child.id();
            w3.kill();
            record_kill(&lifecycle, pid);
        }
        let mut w4 = DistributedWorker::start(
            d,
            &format!("w4-{round}"),
            &broker.bootstrap(),
            &group,
            extra,
        );
        w4.wait_joined();
        let pid = w4.child.id();
        w4.kill();
        record_kill(&lifecycle, pid);
        check_no_overlap(&lifecycle);
    }
    proxy.set_latency_ms(100);

    // Settled: balanced 3/3 over the two remaining workers, and both report that state.
    let (w1_id, w2_id) = (w1.id(), w2.id());
    let settled = wait_for(
        "the cluster to settle balanced",
        Duration::from_secs(180),
        || {
            let (a, per) = all_running(&w1)?;
            let (b, _) = all_running(&w2)?;
            let balanced = per.get(&w1_id) == Some(&3) && per.get(&w2_id) == Some(&3);
            (balanced && a["tasks"] == b["tasks"]).then_some(a)
        },
    );
    assert_eq!(settled["connector"]["state"], "RUNNING");
    check_no_overlap(&lifecycle);
}
