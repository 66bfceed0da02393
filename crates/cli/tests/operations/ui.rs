//! The live view (`GET /ui`) in a real browser: headless Chromium (Debian's package, installed
//! by `scripts/chromium`) loads the page from a 3-worker cluster on a real broker, and the test
//! reads the DOM after the page's live updates ran (`--dump-dom` with a virtual time budget):
//! the workers, their tasks and states, the leader and generation; then a worker is killed and
//! the DOM shows it gone, its tasks moved and the departure in the rebalance timeline.
//! Screenshots go into the test directory (and to `TRIBUTARY_UI_SCREENSHOT` when set, which
//! is how docs/ui.png is made).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

/// Chromium's binary, or `None` (after [`missing`]) when it cannot be installed.
fn chromium() -> Option<PathBuf> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/chromium");
    let out = Command::new(&script)
        .arg("path")
        .stderr(Stdio::inherit())
        .output()
        .ok()
        .filter(|o| o.status.success());
    match out {
        Some(o) => Some(PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())),
        None => missing("Chromium is not installed and scripts/chromium could not install it"),
    }
}

/// Headless Chromium with a profile of its own in `dir`, `args` and the page's URL last; the
/// virtual time budget lets the page's timers (its 1 s polls) run about 5 s.
fn headless(browser: &Path, dir: &Path, args: &[String], url: &str) -> String {
    let profile = dir.join(unique("chromium-profile"));
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("running chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the page shows, read from its DOM.
#[derive(Debug)]
struct View {
    /// Worker rows (`data-worker`), in page order.
    workers: Vec<String>,
    /// `(task, state, worker)` of the task chips in the worker rows.
    tasks: Vec<(String, String, String)>,
    generation: i64,
    leader: String,
    updates: i64,
    dom: String,
}

fn read_view(dom: &str) -> View {
    let attr = |name: &str| {
        regex::Regex::new(&format!(r#"<body[^>]* data-{name}="([^"]*)""#))
            .unwrap()
            .captures(dom)
            .map(|c| c[1].to_string())
            .unwrap_or_default()
    };
    // The workers table ends before the timeline's section.
    let table = dom
        .split("id=\"workers\"")
        .nth(1)
        .and_then(|t| t.split("</table>").next())
        .unwrap_or("");
    let row = regex::Regex::new(r#"<tr data-worker="([^"]+)""#).unwrap();
    let chip = regex::Regex::new(
        r#"class="job task s-[A-Z]+" data-job="([^"]+)" data-state="([A-Z]+)" data-worker="([^"]*)""#,
    )
    .unwrap();
    View {
        workers: row.captures_iter(table).map(|c| c[1].to_string()).collect(),
        tasks: chip
            .captures_iter(table)
            .map(|c| (c[1].to_string(), c[2].to_string(), c[3].to_string()))
            .collect(),
        generation: attr("generation").parse().unwrap_or(0),
        leader: attr("leader"),
        updates: attr("updates").parse().unwrap_or(0),
        dom: dom.to_string(),
    }
}

/// Loads the page until `ok` holds for what it shows (each load runs the page ~5 s).
fn wait_view(
    browser: &Path,
    dir: &Path,
    url: &str,
    what: &str,
    ok: impl Fn(&View) -> bool,
) -> View {
    let mut last = None;
    for _ in 0..12 {
        let v = read_view(&headless(browser, dir, &["--dump-dom".into()], url));
        if v.updates > 0 && ok(&v) {
            return v;
        }
        last = Some(v);
    }
    panic!(
        "the page never showed {what}; last DOM: {:#?}",
        last.map(|v| v.dom)
    );
}

fn screenshot(browser: &Path, dir: &Path, url: &str, name: &str) {
    let file = dir.join(name);
    headless(
        browser,
        dir,
        &[
            format!("--screenshot={}", file.display()),
            "--window-size=1280,820".into(),
        ],
        url,
    );
    let png = std::fs::read(&file).expect("chromium wrote no screenshot");
    assert!(
        png.starts_with(b"\x89PNG"),
        "{} is not a PNG",
        file.display()
    );
    if let Ok(dest) = std::env::var("TRIBUTARY_UI_SCREENSHOT") {
        std::fs::copy(&file, dest).unwrap();
    }
}

#[test]
fn the_live_view_shows_the_cluster_and_follows_a_departure() {
    let Some(bootstrap) = kafka() else { return };
    let Some(browser) = chromium() else { return };
    let dir = test_dir();
    let group = unique("ui");
    // Jobs of a departed worker move at once (no scheduled delay).
    let extra = "scheduled.rebalance.max.delay.ms=0";
    let mut workers: Vec<DistributedWorker> = ["w1", "w2", "w3"]
        .iter()
        .map(|n| DistributedWorker::start(dir.path(), n, &bootstrap, &group, extra))
        .collect();
    for w in &workers {
        w.wait_joined();
    }
    for (name, tasks) in [("orders", 3), ("clicks", 2)] {
        let config = json!({"connector.class": "FlakySource", "topic": unique(name),
                            "tasks.max": tasks.to_string(), "records.per.second": "2"});
        let (code, body) = workers[0].send(
            "POST",
            "/connectors",
            Some(&json!({"name": name, "config": config}).to_string()),
        );
        assert_eq!(code, 201, "{body}");
        workers[0].wait_state(name, tasks, "RUNNING");
    }
    // The page is served by the leader; a follower is killed.
    let (_, info) = workers[0].get("/tributary/worker");
    let leader = info["leader_url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let host = workers.iter().position(|w| w.id() == leader).unwrap();
    let url = format!("{}/ui", workers[host].url);
    let ids: Vec<String> = workers.iter().map(|w| w.id()).collect();
    let all_tasks = ["clicks-0", "clicks-1", "orders-0", "orders-1", "orders-2"];

    let before = wait_view(
        &browser,
        dir.path(),
        &url,
        "3 workers and 5 RUNNING tasks",
        |v| {
            let mut shown = v.workers.clone();
            shown.sort();
            let mut want = ids.clone();
            want.sort();
            shown == want
                && v.tasks.len() == all_tasks.len()
                && v.tasks
                    .iter()
                    .all(|(_, s, w)| s == "RUNNING" && ids.contains(w))
        },
    );
    assert_eq!(before.leader, leader);
    assert!(before.generation > 0, "{before:?}");
    let mut tasks: Vec<&str> = before.tasks.iter().map(|t| t.0.as_str()).collect();
    tasks.sort();
    assert_eq!(tasks, all_tasks);
    // Each worker runs some of them, and the timeline has the rounds that formed the group.
    for id in &ids {
        assert!(
            before.tasks.iter().any(|t| &t.2 == id),
            "{id} runs no task: {before:?}"
        );
    }
    assert!(before.dom.contains("<li data-generation="), "no timeline");
    assert!(before.dom.contains("this worker"), "{}", before.dom);
    screenshot(&browser, dir.path(), &url, "ui-before.png");

    let victim = (0..3).find(|i| *i != host).unwrap();
    let gone = ids[victim].clone();
    workers[victim].kill();
    let after = wait_view(
        &browser,
        dir.path(),
        &url,
        "the killed worker gone and its tasks RUNNING elsewhere",
        |v| {
            v.workers.len() == 2
                && !v.workers.contains(&gone)
                && v.tasks.len() == all_tasks.len()
                && v.tasks.iter().all(|(_, s, w)| s == "RUNNING" && w != &gone)
        },
    );
    assert!(after.generation > before.generation, "{after:?}");
    // The leader's record of the round says who left and which tasks moved away from it.
    assert!(
        after
            .dom
            .contains(&format!("<span class=\"left\">−{gone}</span>")),
        "the timeline does not show {gone} leaving: {}",
        after.dom
    );
    assert!(after.dom.contains("moved:"), "{}", after.dom);
    screenshot(&browser, dir.path(), &url, "ui-after.png");
}

#[test]
fn the_rebalance_timeline_records_rounds_and_refuses_an_unknown_scope() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let group = unique("ui-timeline");
    let w1 = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    w1.wait_joined();
    let w2 = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    w2.wait_joined();
    // The leader (the first worker) saw the second one join.
    let timeline = wait_for("w1 to record w2 joining", Duration::from_secs(60), || {
        let (code, t) = w1.get("/tributary/rebalances");
        assert_eq!(code, 200, "{t}");
        let records = t["rebalances"].as_array().cloned().unwrap_or_default();
        records
            .iter()
            .any(|r| {
                r["is_leader"] == true
                    && r["joined"]
                        .as_array()
                        .is_some_and(|j| j.iter().any(|m| m.as_str().unwrap().contains(&w2.id())))
            })
            .then_some(t)
    });
    let last = timeline["rebalances"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["members"].as_array().unwrap().len(), 2, "{last}");
    assert!(last["duration_ms"].is_u64() && last["completed_ms"].as_i64().unwrap() > 0);
    assert!(last["protocol"].is_string() && last["generation"].as_i64().unwrap() > 0);
    // A follower's own records have no membership; scope=leader answers with the leader's.
    let (_, own) = w2.get("/tributary/rebalances");
    let own_last = own["rebalances"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(own_last["is_leader"], false);
    assert!(own_last.get("members").is_none(), "{own_last}");
    let (code, led) = w2.get("/tributary/rebalances?scope=leader");
    assert_eq!(code, 200, "{led}");
    assert_eq!(led["worker_id"], w1.id());
    let (code, body) = w2.get("/tributary/rebalances?scope=everyone");
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["message"], "scope must be leader, not everyone");
    // The page itself is plain HTML from every worker.
    let r = reqwest::blocking::get(format!("{}/ui", w2.url)).unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(r.text().unwrap().contains("Tributary cluster"));
}

#[test]
fn a_standalone_worker_serves_the_live_view_of_itself() {
    let Some(bootstrap) = kafka() else { return };
    let Some(browser) = chromium() else { return };
    let dir = test_dir();
    std::fs::write(
        dir.path().join("clicks.properties"),
        format!(
            "name=clicks\nconnector.class=FlakySource\ntopic={}\ntasks.max=2\nrecords.per.second=2\n",
            unique("clicks")
        ),
    )
    .unwrap();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &["clicks.properties"]);
    w.wait_state("clicks", 2, "RUNNING");
    let id = w.url.trim_start_matches("http://").to_string();
    let url = format!("{}/ui", w.url);
    let view = wait_view(&browser, dir.path(), &url, "the worker's two tasks", |v| {
        v.workers == vec![id.clone()]
            && v.tasks.len() == 2
            && v.tasks.iter().all(|(_, s, w)| s == "RUNNING" && w == &id)
    });
    assert!(view.dom.contains("(standalone)"), "{}", view.dom);
    assert!(
        view.dom.contains("No rebalance yet (standalone worker)."),
        "{}",
        view.dom
    );
}
