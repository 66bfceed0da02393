//! REST authorization (issue #36) on a two-worker cluster with basic auth: roles over connector
//! patterns, `hide-config`, the connector list filtered, 403 with Connect's body, requests sent
//! to the follower authorized as their caller on the leader (the principal signed with the
//! session key; a forged one is ignored), audit lines, the policy reloaded on change, and a
//! broken policy refused at startup naming the line.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const USERS: &[(&str, &str)] = &[
    ("alice", "alice-pw"),
    ("ops", "ops-pw"),
    ("ci", "ci-pw"),
    ("dev", "dev-pw"),
    // A basic-auth user named like a certificate whose CN is alice's.
    ("CN=alice", "evil-pw"),
];

const POLICY: &str = "\
# who   role     connectors
alice   admin
ops     operate  pay-* hide-config
ci      read
dev     write    dev-*
CN=alice read    dev-*
";

fn call(url: &str, user: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    call_with(url, user, method, path, body, &[])
}

fn call_with(
    url: &str,
    user: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> (u16, Value) {
    let password = USERS.iter().find(|(u, _)| *u == user).unwrap().1;
    let auth = basic_authorization(user, password);
    let mut all = vec![("Authorization", auth.as_str())];
    all.extend_from_slice(headers);
    rest_request(url, method, path, body.as_ref(), &all)
}

#[test]
fn roles_over_connector_patterns_hold_on_every_worker_and_are_audited() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let auth = RestBasicAuth::write(d, USERS);
    let policy = d.join("policy.txt");
    std::fs::write(&policy, POLICY).unwrap();
    let opts = auth.kafka_opts;
    let extra = format!(
        "{}tributary.rest.authorization.file={}\n",
        RestBasicAuth::SETTING,
        policy.display()
    );
    let group = unique("authz");
    let env = [("KAFKA_OPTS", opts.as_str())];
    let leader = DistributedWorker::start_with_env(d, "w1", &bootstrap, &group, &extra, &env);
    wait_for("the leader to join", Duration::from_secs(90), || {
        let (_, w) = call(&leader.url, "ci", "GET", "/tributary/worker", None);
        (w["generation"].as_i64().unwrap_or(0) > 0).then_some(())
    });
    let follower = DistributedWorker::start_with_env(d, "w2", &bootstrap, &group, &extra, &env);
    wait_for("the follower to join", Duration::from_secs(90), || {
        let (_, w) = call(&follower.url, "ci", "GET", "/tributary/worker", None);
        (w["generation"].as_i64().unwrap_or(0) > 0 && w["leader"] == false).then_some(())
    });
    let f = follower.url.as_str();
    let source = |topic: &str| json!({"connector.class": "VerifiableSource", "topic": topic, "throughput": "1", "tasks.max": "1"});
    // alice (admin) creates through the follower: forwarded to the leader as alice.
    let (code, v) = call(
        f,
        "alice",
        "PUT",
        "/connectors/pay-in/config",
        Some(source("pay")),
    );
    assert_eq!(code, 201, "{v}");
    let (code, v) = call(
        f,
        "alice",
        "PUT",
        "/connectors/orders/config",
        Some(source("orders")),
    );
    assert_eq!(code, 201, "{v}");
    // dev writes dev-* only, on the leader too (its principal went along signed).
    let (code, v) = call(
        f,
        "dev",
        "POST",
        "/connectors",
        Some(json!({"name": "dev-1", "config": source("dev")})),
    );
    assert_eq!(code, 201, "{v}");
    let (code, v) = call(
        f,
        "dev",
        "POST",
        "/connectors",
        Some(json!({"name": "prod-1", "config": source("prod")})),
    );
    assert_eq!(code, 403, "{v}");
    assert_eq!(v["error_code"], 403, "Connect's error body: {v}");
    assert!(v["message"].as_str().unwrap().contains("prod-1"), "{v}");
    for (code, what) in [
        (
            call(f, "dev", "DELETE", "/connectors/orders", None).0,
            "dev deleting orders",
        ),
        (
            call(f, "ci", "PUT", "/connectors/pay-in/pause", None).0,
            "ci pausing",
        ),
        (
            call(f, "ops", "PUT", "/connectors/orders/pause", None).0,
            "ops pausing orders",
        ),
        (
            call(f, "ops", "DELETE", "/connectors/pay-in", None).0,
            "ops deleting",
        ),
        (
            call(f, "ops", "GET", "/connectors/pay-in/config", None).0,
            "ops reading a hidden config",
        ),
        (
            call(
                f,
                "ops",
                "PUT",
                "/admin/loggers/root",
                Some(json!({"level": "DEBUG"})),
            )
            .0,
            "ops setting a logger",
        ),
    ] {
        assert_eq!(code, 403, "{what}");
    }
    // ops operates pay-*: pause, resume, status; no configs.
    wait_for("pay-in to run", Duration::from_secs(60), || {
        let (_, s) = call(f, "ops", "GET", "/connectors/pay-in/status", None);
        (s["connector"]["state"] == "RUNNING").then_some(())
    });
    let (code, v) = call(f, "ops", "PUT", "/connectors/pay-in/pause", None);
    assert_eq!(code, 202, "{v}");
    wait_for("pay-in paused", Duration::from_secs(60), || {
        let (_, s) = call(f, "ops", "GET", "/connectors/pay-in/status", None);
        (s["connector"]["state"] == "PAUSED").then_some(())
    });
    // Listing shows what each may read; ops sees pay-in without its config.
    let (_, listed) = call(f, "ops", "GET", "/connectors", None);
    assert_eq!(listed, json!(["pay-in"]));
    let (_, expanded) = call(
        f,
        "ops",
        "GET",
        "/connectors?expand=info&expand=status",
        None,
    );
    assert!(expanded["pay-in"]["info"]["config"].is_null(), "{expanded}");
    assert_eq!(expanded["pay-in"]["status"]["connector"]["state"], "PAUSED");
    let (_, all) = call(f, "ci", "GET", "/connectors", None);
    assert_eq!(all.as_array().map(Vec::len), Some(3), "{all}");
    // A forged principal (no valid signature) is ignored: ci stays ci, even on the leader.
    let (code, _) = call_with(
        &leader.url,
        "ci",
        "DELETE",
        "/connectors/orders",
        None,
        &[
            ("X-Tributary-Principal", "alice"),
            ("X-Tributary-Principal-Signature", "Zm9yZ2Vk"),
        ],
    );
    assert_eq!(code, 403);
    // The live view's endpoints show a principal only the jobs it may read, on the worker it
    // asks and through the leader's fan-out; a user named like a DN stays that user when its
    // request is forwarded (before, the leader took "CN=alice" for alice's certificate).
    let dev_only = |jobs: Vec<String>| jobs.iter().all(|j| j.starts_with("dev-"));
    for user in ["dev", "CN=alice"] {
        let shown = wait_for(
            "dev-1 in the cluster's history",
            Duration::from_secs(60),
            || {
                let (code, h) = call(f, user, "GET", "/tributary/history?scope=cluster", None);
                assert_eq!(code, 200, "{h}");
                let mut names = Vec::new();
                for w in h["workers"].as_array().unwrap() {
                    for series in ["tasks", "connectors"] {
                        for s in w[series].as_array().unwrap() {
                            names.push(s["connector"].as_str().unwrap().to_string());
                        }
                    }
                }
                names.iter().any(|n| n == "dev-1").then_some(names)
            },
        );
        assert!(dev_only(shown.clone()), "{user} sees {shown:?}");
    }
    let (_, timeline) = call(f, "dev", "GET", "/tributary/rebalances?scope=leader", None);
    let mut jobs = Vec::new();
    for r in timeline["rebalances"].as_array().unwrap() {
        for side in ["assigned", "revoked"] {
            for kind in ["connectors", "tasks"] {
                for j in r[side][kind].as_array().unwrap() {
                    jobs.push(j.as_str().unwrap().to_string());
                }
            }
        }
        for m in r["moved"].as_array().into_iter().flatten() {
            jobs.push(m["job"].as_str().unwrap().to_string());
        }
    }
    assert!(jobs.iter().any(|j| j == "dev-1"), "{timeline}");
    assert!(dev_only(jobs.clone()), "dev sees {jobs:?}");
    let (_, health) = call(f, "dev", "GET", "/tributary/connector-health", None);
    assert_eq!(
        health.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["dev-1"],
        "{health}"
    );
    let (_, all_health) = call(f, "ci", "GET", "/tributary/connector-health", None);
    assert_eq!(
        all_health.as_object().unwrap().len(),
        3,
        "ci reads every connector: {all_health}"
    );
    for url in [&leader.url, &follower.url] {
        let (_, w) = call(url, "dev", "GET", "/tributary/worker", None);
        for kind in ["connectors", "tasks"] {
            let listed: Vec<String> = w[kind]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| j.as_str().unwrap().to_string())
                .collect();
            assert!(dev_only(listed.clone()), "dev sees {listed:?} on {url}");
        }
    }
    // Audit lines: the refusal and the writes, with the principal.
    let logs = format!("{}{}", leader.log_text(), follower.log_text());
    assert!(
        logs.lines().any(|l| l.contains("refused")
            && l.contains("principal=\"dev\"")
            && l.contains("POST")),
        "no audit line for dev's refused create"
    );
    assert!(
        logs.lines().any(|l| l.contains("write")
            && l.contains("principal=\"ops\"")
            && l.contains("/pause")),
        "no audit line for ops's pause"
    );
    // The policy changes: ops may now delete pay-*; a broken edit keeps the last good policy.
    std::fs::write(&policy, POLICY.replace("ops     operate", "ops     write")).unwrap();
    wait_for(
        "the policy reloaded by both workers",
        Duration::from_secs(30),
        || {
            (leader.log_text().contains("authorization policy reloaded")
                && follower
                    .log_text()
                    .contains("authorization policy reloaded"))
            .then_some(())
        },
    );
    let (code, _) = call(f, "ops", "GET", "/connectors/pay-in/config", None);
    assert_eq!(code, 200, "ops may read configs now");
    std::fs::write(&policy, "alice admin\nops writer pay-*\n").unwrap();
    wait_for(
        "the broken policy noticed by both workers",
        Duration::from_secs(30),
        || {
            let broken = "line 2: unknown role \"writer\"";
            (leader.log_text().contains(broken) && follower.log_text().contains(broken))
                .then_some(())
        },
    );
    let (code, _) = call(f, "ops", "GET", "/connectors/pay-in/config", None);
    assert_eq!(code, 200, "the last good policy stays in force");
    let (code, _) = call(f, "ops", "DELETE", "/connectors/pay-in", None);
    assert_eq!(code, 204);
    // A worker whose policy file is broken does not start; the message names the line.
    let bad = d.join("bad-policy.txt");
    std::fs::write(&bad, "alice admin\nbob reader\n").unwrap();
    let props = distributed_properties(
        &bootstrap,
        &unique("authz-bad"),
        &format!("tributary.rest.authorization.file={}\n", bad.display()),
    );
    let wdir = d.join("bad");
    std::fs::create_dir_all(&wdir).unwrap();
    std::fs::write(wdir.join("worker.properties"), props).unwrap();
    let out = std::process::Command::new(tributary_binary())
        .args(["distributed", "worker.properties"])
        .current_dir(&wdir)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tributary.rest.authorization.file") && err.contains("line 2"),
        "{err}"
    );
}
