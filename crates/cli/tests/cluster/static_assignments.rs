//! `connect.protocol=static` against a real broker: claimed jobs run only on their claimants,
//! wait for them, move to standbys after the delay, and the group falls back to `sessioned`
//! (ignoring claims) while a worker without the protocol is a member.

use crate::common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;

/// (instance → (state, worker id)) for a connector: "c" for the connector, "c-N" for tasks.
fn placement(w: &StandaloneWorker, connector: &str) -> BTreeMap<String, (String, String)> {
    let (_, s) = w.get(&format!("/connectors/{connector}/status"));
    let mut out = BTreeMap::new();
    if s["connector"].is_object() {
        out.insert(
            connector.to_string(),
            (
                s["connector"]["state"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                s["connector"]["worker_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            ),
        );
    }
    for t in s["tasks"].as_array().cloned().unwrap_or_default() {
        out.insert(
            format!("{connector}-{}", t["id"]),
            (
                t["state"].as_str().unwrap_or_default().to_string(),
                t["worker_id"].as_str().unwrap_or_default().to_string(),
            ),
        );
    }
    out
}

fn running_on(p: &BTreeMap<String, (String, String)>, job: &str) -> Option<String> {
    p.get(job)
        .filter(|(s, _)| s == "RUNNING")
        .map(|(_, w)| w.clone())
}

#[test]
fn static_jobs_run_only_on_their_claimants_and_fall_back_when_a_member_lacks_the_protocol() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("static");
    let base = "connect.protocol=static\nscheduled.rebalance.max.delay.ms=10000";
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, base);
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, base);
    let mut s1 = DistributedWorker::start(
        dir.path(),
        "s1",
        &bootstrap,
        &group,
        &format!("{base}\nstatic.connectors=pinned\nstatic.tasks=pinned-0"),
    );
    let mut s2 = DistributedWorker::start(
        dir.path(),
        "s2",
        &bootstrap,
        &group,
        &format!("{base}\nstatic.tasks=pinned-0,pinned-1"),
    );
    for w in [&w2, &s1, &s2] {
        w.wait_joined();
    }
    for (name, tasks) in [("pinned", 2), ("free", 4)] {
        let body = json!({"name": name, "config": {"connector.class": "VerifiableSource", "tasks.max": tasks.to_string(), "topic": unique(name), "throughput": "5"}});
        assert_eq!(
            w2.send("POST", "/connectors", Some(&body.to_string())).0,
            201
        );
    }
    let wild = [w1.id(), w2.id()];
    let claimants = [s1.id(), s2.id()];
    // pinned runs on s1 (its only claimant), pinned-1 on s2, pinned-0 on one of its two
    // claimants (the one with fewer jobs when it appeared), unclaimed jobs on wildcards only.
    let settled = |w: &StandaloneWorker| -> Option<String> {
        let p = placement(w, "pinned");
        let f = placement(w, "free");
        let p0 = running_on(&p, "pinned-0")?;
        let ok = running_on(&p, "pinned") == Some(claimants[0].clone())
            && claimants.contains(&p0)
            && running_on(&p, "pinned-1") == Some(claimants[1].clone())
            && f.len() == 5
            && f.keys()
                .all(|j| running_on(&f, j).is_some_and(|w| wild.contains(&w)));
        ok.then_some(p0)
    };
    let owner = wait_for("the static layout", Duration::from_secs(120), || {
        settled(&w1)
    });
    let info = s1.get("/tributary/worker").1;
    assert_eq!(info["protocol"], "static");
    assert_eq!(info["static_in_effect"], true);
    assert_eq!(
        info["static_claims"],
        json!({"connectors": ["pinned"], "tasks": ["pinned-0"]})
    );
    let metrics = reqwest::blocking::get(format!("{}/metrics", s1.url))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics.contains("tributary_worker_static_claims_in_effect 1"),
        "{metrics}"
    );
    assert_eq!(
        w1.get("/tributary/worker").1["static_claims"],
        serde_json::Value::Null,
        "a wildcard worker claims nothing"
    );
    // The layout holds over time.
    for _ in 0..10 {
        assert_eq!(
            settled(&w2),
            Some(owner.clone()),
            "static jobs stay on their claimants"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // pinned-0's owner dies: its jobs wait; after the delay the standby takes pinned-0, while the
    // job only the dead worker claimed stays unassigned and never runs elsewhere.
    let (dead, standby, orphan) = if owner == s1.id() {
        (&mut s1, s2.id(), "pinned")
    } else {
        (&mut s2, s1.id(), "pinned-1")
    };
    dead.kill();
    let killed = Instant::now();
    let unassigned = |j: &str| {
        placement(&w1, "pinned")
            .get(j)
            .is_some_and(|(s, _)| s == "UNASSIGNED")
    };
    wait_for(
        "the dead owner's jobs UNASSIGNED",
        Duration::from_secs(30),
        || (unassigned(orphan) && unassigned("pinned-0")).then_some(()),
    );
    let moved = wait_for("pinned-0 on the standby", Duration::from_secs(60), || {
        let p = placement(&w1, "pinned");
        assert!(
            running_on(&p, orphan).is_none(),
            "{orphan} never runs on a worker that does not claim it: {p:?}"
        );
        (running_on(&p, "pinned-0") == Some(standby.clone())).then(Instant::now)
    });
    assert!(
        moved - killed >= Duration::from_secs(10),
        "the standby took over only after the delay"
    );
    let live_static = if owner == s1.id() { &s2 } else { &s1 };

    // A worker without the protocol joins: the group falls back to sessioned and ignores claims.
    let plain = DistributedWorker::start(
        dir.path(),
        "plain",
        &bootstrap,
        &group,
        "connect.protocol=sessioned\nscheduled.rebalance.max.delay.ms=10000",
    );
    plain.wait_joined();
    wait_for(
        "the fallback to sessioned, reported",
        Duration::from_secs(60),
        || {
            let i = live_static.get("/tributary/worker").1;
            (i["protocol"] == "sessioned" && i["static_in_effect"] == false).then_some(())
        },
    );
    let metrics = reqwest::blocking::get(format!("{}/metrics", live_static.url))
        .unwrap()
        .text()
        .unwrap();
    assert!(
        metrics.contains("tributary_worker_static_claims_in_effect 0"),
        "{metrics}"
    );
    wait_for(
        "the orphan to run somewhere under the fallback",
        Duration::from_secs(60),
        || running_on(&placement(&w1, "pinned"), orphan).map(|_| ()),
    );
    // It leaves: the claims take effect again.
    let mut plain = plain;
    assert!(plain.terminate().success());
    wait_for("static again", Duration::from_secs(60), || {
        let i = live_static.get("/tributary/worker").1;
        (i["protocol"] == "static" && i["static_in_effect"] == true).then_some(())
    });
    wait_for("claims in effect again", Duration::from_secs(90), || {
        let p = placement(&w1, "pinned");
        let f = placement(&w1, "free");
        let ok = running_on(&p, orphan).is_none()
            && running_on(&p, "pinned-0") == Some(standby.clone())
            && f.keys()
                .all(|j| running_on(&f, j).is_some_and(|w| wild.contains(&w)));
        ok.then_some(())
    });
}

/// A malformed static task id stops startup with a message naming the key and the value.
#[test]
fn a_malformed_static_task_id_is_a_startup_error() {
    let dir = test_dir();
    std::fs::write(
        dir.path().join("worker.properties"),
        distributed_properties(
            "127.0.0.1:1",
            "g",
            "connect.protocol=static\nstatic.tasks=good-0,bad",
        ),
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tributary"))
        .args(["distributed", "worker.properties"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("worker.properties") && err.contains("static.tasks") && err.contains("bad"),
        "{err}"
    );
}

/// Claims known to the group survive a leader change (#10): the claimant of a job goes away,
/// then the leader dies; the new leader, which never saw the claimant's metadata, still keeps
/// the claimed jobs off the wildcard worker (they stay UNASSIGNED), and the claimant gets them
/// back when it returns.
#[test]
fn claims_of_an_absent_worker_survive_a_leader_change() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("static-leader");
    let base = "connect.protocol=static\nscheduled.rebalance.max.delay.ms=4000";
    let claims = format!("{base}\nstatic.connectors=pinned\nstatic.tasks=pinned-0");
    let mut leader = DistributedWorker::start(dir.path(), "leader", &bootstrap, &group, base);
    leader.wait_joined();
    let wild = DistributedWorker::start(dir.path(), "wild", &bootstrap, &group, base);
    let mut claimant =
        DistributedWorker::start(dir.path(), "claimant", &bootstrap, &group, &claims);
    wild.wait_joined();
    claimant.wait_joined();
    assert_eq!(leader.get("/tributary/worker").1["leader"], true);
    let body = json!({"name": "pinned", "config": {"connector.class": "VerifiableSource", "tasks.max": "1", "topic": unique("pinned"), "throughput": "5"}});
    assert_eq!(
        wild.send("POST", "/connectors", Some(&body.to_string())).0,
        201
    );
    let on_claimant = |w: &StandaloneWorker, id: &str| {
        let p = placement(w, "pinned");
        (running_on(&p, "pinned").as_deref() == Some(id)
            && running_on(&p, "pinned-0").as_deref() == Some(id))
        .then_some(())
    };
    let claimant_id = claimant.id();
    wait_for("pinned on its claimant", Duration::from_secs(90), || {
        on_claimant(&wild, &claimant_id)
    });

    // The claimant leaves cleanly: its jobs wait, UNASSIGNED.
    assert!(claimant.terminate().success());
    let unassigned = |w: &StandaloneWorker| {
        let p = placement(w, "pinned");
        ["pinned", "pinned-0"]
            .iter()
            .all(|j| p.get(*j).is_some_and(|(s, _)| s == "UNASSIGNED"))
    };
    wait_for("pinned UNASSIGNED", Duration::from_secs(60), || {
        unassigned(&wild).then_some(())
    });

    // The leader dies: the wildcard worker leads a new generation.
    let before = wild.get("/tributary/worker").1["generation"]
        .as_i64()
        .unwrap_or(0);
    leader.kill();
    wait_for(
        "the wildcard worker to lead",
        Duration::from_secs(60),
        || {
            let (_, w) = wild.get("/tributary/worker");
            (w["leader"] == true && w["generation"].as_i64().unwrap_or(0) > before).then_some(())
        },
    );
    // Past the scheduled delay and its rejoin, the claimed jobs still run nowhere.
    let led_at = Instant::now();
    let wild_id = wild.id();
    while led_at.elapsed() < Duration::from_secs(8) {
        let p = placement(&wild, "pinned");
        for job in ["pinned", "pinned-0"] {
            assert!(
                running_on(&p, job).is_none(),
                "{job} claimed by an absent worker runs after the leader change: {p:?}"
            );
        }
        let (_, w) = wild.get("/tributary/worker");
        assert!(
            !w.to_string().contains("\"pinned-0\""),
            "the wildcard worker {wild_id} holds a claimed task: {w}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert!(unassigned(&wild), "{:?}", placement(&wild, "pinned"));

    // The claimant returns and gets its jobs back.
    let back = DistributedWorker::start(dir.path(), "claimant2", &bootstrap, &group, &claims);
    back.wait_joined();
    let back_id = back.id();
    wait_for(
        "pinned back on its claimant",
        Duration::from_secs(90),
        || on_claimant(&wild, &back_id),
    );
}
