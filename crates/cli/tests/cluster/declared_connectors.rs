//! Connectors as code (issue #35) on a Tributary cluster: `tributary apply` run against a
//! follower of a two-worker group (its writes are forwarded to the leader), with the scenario
//! the Java test runs too (`mixed_cluster.rs`).

use crate::common;

use common::declared::apply_scenario;
use common::*;

#[test]
fn apply_makes_a_tributary_cluster_run_the_declared_connectors() {
    let Some(bootstrap) = kafka() else {
        return;
    };
    let dir = test_dir();
    let group = unique("apply");
    let leader = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    leader.wait_joined();
    let follower = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    follower.wait_joined();
    apply_scenario(&follower.url, dir.path(), &group);
}

/// The admin CLI against a Tributary worker: every command's output and exit code.
#[test]
fn the_admin_cli_drives_a_tributary_cluster() {
    let Some(bootstrap) = kafka() else {
        return;
    };
    let dir = test_dir();
    let group = unique("admin-cli");
    let w = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w.wait_joined();
    common::declared::admin_scenario(&w.url, dir.path(), &group);
}

/// `tributary.connectors.dir`: the leader creates what the files declare, reverts a REST edit
/// of a managed connector (counted as drift in the live view and `/metrics`), leaves
/// connectors created over REST alone, keeps a connector running when its file's config is
/// refused (and says why), follows a file's state, and after a leader change the new leader
/// goes on (creates and prunes) without creating anything twice.
#[test]
fn the_leader_keeps_the_cluster_in_line_with_the_connectors_dir() {
    use std::time::Duration;

    use common::declared::{rest, stored_config, wait_connector_state};
    use serde_json::json;

    let Some(bootstrap) = kafka() else {
        return;
    };
    let dir = test_dir();
    let d = dir.path();
    let group = unique("connectors-dir");
    let files = d.join("connectors");
    std::fs::create_dir_all(&files).unwrap();
    let input = d.join("missing-input.txt");
    let source = |name: &str, topic: &str, state: &str| {
        json!({
            "name": name,
            "config": {
                "connector.class": "FileStreamSource",
                "tasks.max": "1",
                "file": input.display().to_string(),
                "topic": topic,
            },
            "initial_state": state,
        })
        .to_string()
    };
    let (a, b, c) = (
        format!("{group}-a"),
        format!("{group}-b"),
        format!("{group}-c"),
    );
    let sink = |class: &str| {
        format!(
            "name={b}\nconnector.class={class}\ntasks.max=1\ntopics={group}-t\nfile={}\n",
            d.join("sink.txt").display()
        )
    };
    std::fs::write(
        files.join("a.json"),
        source(&a, &format!("{group}-t"), "RUNNING"),
    )
    .unwrap();
    std::fs::write(files.join("b.properties"), sink("FileStreamSink")).unwrap();
    let extra = format!(
        "tributary.connectors.dir={}\ntributary.connectors.reconcile.interval.ms=1000\n",
        files.display()
    );
    let mut w1 = DistributedWorker::start(d, "w1", &bootstrap, &group, &extra);
    w1.wait_joined();
    let w2 = DistributedWorker::start(d, "w2", &bootstrap, &group, &extra);
    w2.wait_joined();
    let url = w2.url.clone();
    // The files' connectors appear, managed.
    for name in [&a, &b] {
        wait_for(&format!("{name} created"), Duration::from_secs(60), || {
            stored_config(&url, name)
        });
        wait_connector_state(&url, name, "RUNNING");
        assert_eq!(
            stored_config(&url, name).unwrap()["tributary.managed"],
            "true"
        );
    }
    let report = |w: &DistributedWorker| w.get("/tributary/worker").1["connectors_dir"].clone();
    assert_eq!(report(&w1)["active"], true, "{}", report(&w1));
    assert_eq!(
        report(&w2)["active"],
        false,
        "a follower does not reconcile"
    );

    // A REST edit of a managed connector is reverted and counted as drift.
    let mut edited = stored_config(&url, &a).unwrap();
    edited["topic"] = json!(format!("{group}-edited"));
    let (code, v) = rest(
        "PUT",
        &url,
        &format!("/connectors/{a}/config"),
        Some(&edited.to_string()),
    );
    assert_eq!(code, 200, "{v}");
    wait_for("the edit reverted", Duration::from_secs(30), || {
        (stored_config(&url, &a).unwrap()["topic"] == format!("{group}-t")).then_some(())
    });
    // The pass counts what it reverted once its changes are made: the config may show the
    // revert a moment before the report does.
    let r = wait_for("the drift counted", Duration::from_secs(30), || {
        let r = report(&w1);
        (r["drift_total"].as_u64().unwrap_or(0) >= 1).then_some(r)
    });
    assert!(r["last_drift"].to_string().contains(&a), "{r}");
    assert!(
        metric_series(&metrics_page(&w1.url), "tributary_connectors_drift_total")
            .iter()
            .any(|(_, v)| *v >= 1.0),
        "the drift is in /metrics"
    );

    // A connector created over REST is left alone, pass after pass.
    let foreign = format!("{group}-rest-made");
    let (code, v) = rest(
        "PUT",
        &url,
        &format!("/connectors/{foreign}/config"),
        Some(&json!({"connector.class": "FileStreamSource", "tasks.max": "1", "file": input.display().to_string(), "topic": format!("{group}-f")}).to_string()),
    );
    assert_eq!(code, 201, "{v}");
    let passes = |w: &DistributedWorker| report(w)["passes"].as_u64().unwrap_or(0);
    let seen = passes(&w1);
    wait_for("two more passes", Duration::from_secs(30), || {
        (passes(&w1) >= seen + 2).then_some(())
    });
    assert!(stored_config(&url, &foreign).is_some());
    assert!(stored_config(&url, &foreign).unwrap()["tributary.managed"].is_null());

    // A file whose config is refused leaves the running connector as it is, and says why.
    std::fs::write(files.join("b.properties"), sink("NoSuchConnector")).unwrap();
    wait_for(
        "the refused config reported",
        Duration::from_secs(30),
        || {
            let r = report(&w1);
            r["errors"]
                .to_string()
                .contains("b.properties")
                .then_some(r)
        },
    );
    assert_eq!(
        stored_config(&url, &b).unwrap()["connector.class"],
        "FileStreamSink"
    );
    wait_connector_state(&url, &b, "RUNNING");
    std::fs::write(files.join("b.properties"), sink("FileStreamSink")).unwrap();

    // A file's state is followed.
    std::fs::write(
        files.join("a.json"),
        source(&a, &format!("{group}-t"), "PAUSED"),
    )
    .unwrap();
    wait_connector_state(&url, &a, "PAUSED");

    // The leader stops: the other worker leads and goes on, creating nothing twice.
    assert!(w1.terminate().success());
    wait_for("w2 leads and reconciles", Duration::from_secs(60), || {
        (report(&w2)["active"] == true && passes(&w2) >= 1).then_some(())
    });
    std::fs::write(
        files.join("c.json"),
        source(&c, &format!("{group}-t"), "STOPPED"),
    )
    .unwrap();
    wait_connector_state(&url, &c, "STOPPED");
    let (_, names) = w2.get("/connectors");
    let mut names: Vec<String> = serde_json::from_value(names).unwrap();
    names.sort();
    let mut expected = vec![a.clone(), b.clone(), c.clone(), foreign.clone()];
    expected.sort();
    assert_eq!(names, expected);
    assert_eq!(report(&w2)["drift_total"], 0, "{}", report(&w2));
    wait_connector_state(&url, &a, "PAUSED");

    // A file removed: its connector is deleted; the REST-made one stays.
    std::fs::remove_file(files.join("c.json")).unwrap();
    wait_for(&format!("{c} deleted"), Duration::from_secs(30), || {
        stored_config(&url, &c).is_none().then_some(())
    });
    assert!(stored_config(&url, &foreign).is_some());
}
