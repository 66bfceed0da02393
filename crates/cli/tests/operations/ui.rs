//! The live view (`GET /ui`) in a real browser: headless Chromium (Debian's package, installed
//! by `scripts/chromium`) loads the page from a 3-worker cluster on a real broker, and the test
//! reads the DOM after the page's live updates ran (`--dump-dom` with a virtual time budget):
//! the workers, their tasks and states, the leader and generation; then a worker is killed and
//! the DOM shows it gone, its tasks moved and the departure in the rebalance timeline.
//! The plots, the ownership chart and the actions run in a browser driven over the DevTools
//! protocol ([`crate::browser`]): the plots' data against `/metrics`, actions refused for a
//! read-only principal and done for an operator. Screenshots go into the test directory (the
//! plots' one also to `TRIBUTARY_UI_SCREENSHOT` when set, which is how docs/ui.png is made).

use crate::browser::Browser;
use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

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
        .args(crate::browser::HEADLESS)
        .arg("--virtual-time-budget=5000")
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
    eprintln!("screenshot: {}", file.display());
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
    // The history the plots draw: the follower forwards scope=cluster to the leader, which
    // asks every member; each answers for itself.
    let cluster = wait_for("every member's history", Duration::from_secs(60), || {
        let (code, h) = w2.get("/tributary/history?scope=cluster");
        assert_eq!(code, 200, "{h}");
        let mut ids: Vec<String> = h["workers"]
            .as_array()?
            .iter()
            .map(|w| w["worker_id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        let mut want = vec![w1.id(), w2.id()];
        want.sort();
        (ids == want).then_some(h)
    });
    assert_eq!(cluster["unreachable"], json!([]), "{cluster}");
    for w in cluster["workers"].as_array().unwrap() {
        assert_eq!(w["interval_ms"], 5000, "{w}");
        assert_eq!(w["window_ms"], 900_000, "{w}");
    }
    let (_, own) = w2.get("/tributary/history");
    assert_eq!(own["workers"].as_array().unwrap().len(), 1, "{own}");
    assert_eq!(own["workers"][0]["worker_id"], w2.id());
    let (code, body) = w2.get("/tributary/history?scope=everyone");
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["message"], "scope must be cluster, not everyone");
    let (code, body) = w1.get("/tributary/history?since=yesterday");
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        body["message"],
        "since must be a time in ms since the epoch, not yesterday"
    );
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

const USERS: &[(&str, &str)] = &[
    ("admin", "admin-pw"),
    ("viewer", "viewer-pw"),
    ("ops", "ops-pw"),
];

fn basic(user: &str) -> String {
    let password = USERS.iter().find(|(u, _)| *u == user).unwrap().1;
    basic_authorization(user, password)
}

/// One REST request as `user`: status and body (JSON, or the text as a JSON string).
fn call(url: &str, user: &str, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let auth = basic(user);
    rest_request(
        url,
        method,
        path,
        body.as_ref(),
        &[("Authorization", &auth)],
    )
}

fn wait_connector(url: &str, name: &str, tasks: usize, state: &str) {
    wait_for(
        &format!("{name} {state} with {tasks} tasks"),
        Duration::from_secs(90),
        || {
            let (code, s) = call(
                url,
                "admin",
                "GET",
                &format!("/connectors/{name}/status"),
                None,
            );
            let ts = s["tasks"].as_array().cloned().unwrap_or_default();
            (code == 200
                && s["connector"]["state"] == state
                && ts.len() == tasks
                && ts.iter().all(|t| t["state"] == state))
            .then_some(())
        },
    );
}

/// A gauge of `/metrics` on the worker at `url` for one task.
fn task_metric(url: &str, name: &str, connector: &str, task: &str) -> Option<f64> {
    let (_, page) = call(url, "viewer", "GET", "/metrics", None);
    metric_series(page.as_str().unwrap_or_default(), name)
        .into_iter()
        .find(|(l, _)| {
            l.get("connector").map(String::as_str) == Some(connector)
                && l.get("task").map(String::as_str) == Some(task)
        })
        .map(|(_, v)| v)
}

/// What the page's plots show: per task (`data-task`) its latest point, per connector row
/// its aggregates, and the ownership chart's bars.
fn plotted(browser: &mut Browser) -> Value {
    browser.eval(
        r#"({
            updates: Number(document.body.dataset.historyUpdates || 0),
            tasks: [...document.querySelectorAll('#plots [data-task]')].map((e) => ({...e.dataset})),
            rows: [...document.querySelectorAll('#plots tr[data-connector]')].map((e) => ({...e.dataset})),
            bars: [...document.querySelectorAll('#owners-chart rect')].map((e) => ({...e.dataset})),
            result: {...document.getElementById('action-result').dataset,
                     text: document.getElementById('action-result').textContent},
        })"#,
    )
}

/// The row of `connector` in what [`plotted`] read.
fn row_of(view: &Value, connector: &str) -> Option<Value> {
    view["rows"]
        .as_array()?
        .iter()
        .find(|r| r["connector"] == connector)
        .cloned()
}

/// The newest plotted series of task `job` (`<connector>-<n>`) in what [`plotted`] read (a
/// task that moved has one per worker).
fn latest_task(view: &Value, job: &str) -> Option<Value> {
    view["tasks"]
        .as_array()?
        .iter()
        .filter(|t| t["task"] == job)
        .max_by_key(|t| num(&t["t"]) as i64)
        .cloned()
}

fn num(v: &Value) -> f64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or(f64::NAN)
}

/// Clicks the page's `action` button of `connector` and waits for the answer the page shows.
fn click(browser: &mut Browser, action: &str, connector: &str) -> Value {
    let clicked = browser.eval(&format!(
        r#"(() => {{ const b = document.querySelector('button[data-action="{action}"][data-connector="{connector}"]');
                    if (!b) return false;
                    document.getElementById('action-result').dataset.status = '';
                    b.click(); return true; }})()"#
    ));
    assert_eq!(clicked, true, "no {action} button for {connector}");
    wait_for(
        &format!("the page's answer to {action} {connector}"),
        Duration::from_secs(60),
        || {
            let r = plotted(browser)["result"].clone();
            (r["status"].as_str().is_some_and(|s| !s.is_empty())
                && r["action"] == action
                && r["connector"] == connector)
                .then_some(r)
        },
    )
}

/// A PNG of the whole page into the test directory (named in the output), and with `docs` to
/// `TRIBUTARY_UI_SCREENSHOT` when set.
fn save_screenshot(browser: &mut Browser, dir: &Path, name: &str, docs: bool) {
    let png = browser.screenshot();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    let file = dir.join(name);
    std::fs::write(&file, &png).unwrap();
    eprintln!("screenshot: {}", file.display());
    if let (true, Ok(dest)) = (docs, std::env::var("TRIBUTARY_UI_SCREENSHOT")) {
        std::fs::write(dest, &png).unwrap();
    }
}

#[test]
fn the_live_view_plots_the_jobs_and_acts_under_the_rest_authorization() {
    let Some(bootstrap) = kafka() else { return };
    let Some(binary) = chromium() else { return };
    let dir = test_dir();
    let d = dir.path();
    let auth = RestBasicAuth::write(d, USERS);
    std::fs::write(
        d.join("policy.txt"),
        "admin   admin\nviewer  read\nops     operate  orders\n",
    )
    .unwrap();
    let opts = auth.kafka_opts;
    let extra = format!(
        "{}tributary.rest.authorization.file={}\n",
        RestBasicAuth::SETTING,
        d.join("policy.txt").display()
    );
    let group = unique("ui-live");
    let env = [("KAFKA_OPTS", opts.as_str())];
    let joined = |url: &str| {
        wait_for("the worker to join", Duration::from_secs(90), || {
            let (_, w) = call(url, "viewer", "GET", "/tributary/worker", None);
            (w["generation"].as_i64().unwrap_or(0) > 0).then_some(w)
        })
    };
    let w1 = DistributedWorker::start_with_env(d, "w1", &bootstrap, &group, &extra, &env);
    joined(&w1.url);
    let w2 = DistributedWorker::start_with_env(d, "w2", &bootstrap, &group, &extra, &env);
    let info = joined(&w2.url);
    assert_eq!(info["leader"], false, "{info}");
    let urls: std::collections::BTreeMap<String, String> =
        [&w1, &w2].iter().map(|w| (w.id(), w.url.clone())).collect();
    let topic = unique("orders");
    for (name, config, tasks) in [
        (
            "orders",
            json!({"connector.class": "FlakySource", "topic": topic, "tasks.max": "2",
                   "records.per.second": "20"}),
            2,
        ),
        (
            "slow",
            json!({"connector.class": "VerifiableSource", "topic": unique("slow"), "tasks.max": "1",
                   "throughput": "1000", "tributary.throttle.records.per.second": "40"}),
            1,
        ),
        (
            "lines",
            json!({"connector.class": "VerifiableSink", "topics": topic, "tasks.max": "1"}),
            1,
        ),
    ] {
        let (code, body) = call(
            &w2.url,
            "admin",
            "PUT",
            &format!("/connectors/{name}/config"),
            Some(config),
        );
        assert_eq!(code, 201, "{body}");
        wait_connector(&w1.url, name, tasks, "RUNNING");
    }

    // A read-only principal looks at the leader's page (which asks the follower for its
    // history on the viewer's behalf).
    let mut browser = Browser::launch(&binary, &d.join(unique("chromium-profile")), 1600);
    browser.set_headers(json!({"Authorization": basic("viewer")}));
    browser.navigate(&format!("{}/ui?tasks=open", w1.url));
    let all_tasks = ["lines-0", "orders-0", "orders-1", "slow-0"];
    let view = wait_for(
        "the plots of every task, with rates, and the ownership chart",
        Duration::from_secs(120),
        || {
            let v = plotted(&mut browser);
            let mut tasks: Vec<String> = v["tasks"]
                .as_array()?
                .iter()
                .map(|t| t["task"].as_str().unwrap().to_string())
                .collect();
            tasks.sort();
            tasks.dedup();
            let row = |c: &str| row_of(&v, c);
            let bars: Vec<String> = v["bars"]
                .as_array()?
                .iter()
                .map(|b| b["job"].as_str().unwrap().to_string())
                .collect();
            (tasks == all_tasks
                && num(&row("orders")?["inRate"]) > 0.0
                && num(&row("lines")?["inRate"]) > 0.0
                && num(&row("slow")?["throttled"]) > 0.0
                && all_tasks.iter().all(|t| bars.iter().any(|b| b == t))
                && ["orders", "slow", "lines"]
                    .iter()
                    .all(|c| bars.iter().any(|b| b == c)))
            .then_some(v)
        },
    );
    // The ownership chart and the plots name the workers the statuses name.
    for t in view["tasks"].as_array().unwrap() {
        let worker = t["worker"].as_str().unwrap();
        assert!(urls.contains_key(worker), "{t}");
    }
    let workers: std::collections::BTreeSet<&str> = view["bars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["worker"].as_str().unwrap())
        .collect();
    assert_eq!(workers.len(), 2, "both workers hold jobs: {view}");
    // The rate limit holds in the plot: 40 records/s, at most a batch above.
    let slow = row_of(&view, "slow").unwrap();
    assert!(num(&slow["outRate"]) < 60.0, "{slow}");

    // The plotted counters are /metrics' own: with the source paused (its counters still),
    // the page's last point of each task equals what its worker's /metrics says.
    let (code, body) = call(&w1.url, "admin", "PUT", "/connectors/orders/pause", None);
    assert_eq!(code, 202, "{body}");
    wait_connector(&w1.url, "orders", 2, "PAUSED");
    let paused_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    for task in ["0", "1"] {
        let job = format!("orders-{task}");
        wait_for(
            &format!("{job}'s plot to equal /metrics"),
            Duration::from_secs(60),
            || {
                let v = plotted(&mut browser);
                let t = latest_task(&v, &job)?;
                let url = &urls[t["worker"].as_str()?];
                let polled = task_metric(
                    url,
                    "kafka_connect_source_task_source_record_poll_total",
                    "orders",
                    task,
                )?;
                let written = task_metric(
                    url,
                    "kafka_connect_source_task_source_record_write_total",
                    "orders",
                    task,
                )?;
                (num(&t["t"]) as i64 > paused_at
                    && polled > 0.0
                    && num(&t["inTotal"]) == polled
                    && num(&t["outTotal"]) == written)
                    .then_some(())
            },
        );
    }
    // The sink caught up with the paused source: its records read and its lag are /metrics'.
    wait_for(
        "lines-0's plot to equal /metrics",
        Duration::from_secs(120),
        || {
            let v = plotted(&mut browser);
            let t = latest_task(&v, "lines-0")?;
            let url = &urls[t["worker"].as_str()?];
            let read = task_metric(
                url,
                "kafka_connect_sink_task_sink_record_read_total",
                "lines",
                "0",
            )?;
            let lag = task_metric(
                url,
                "kafka_connect_sink_task_sink_record_lag_max",
                "lines",
                "0",
            )?;
            (read > 0.0 && num(&t["inTotal"]) == read && num(&t["lag"]) == lag).then_some(())
        },
    );
    // Throttling: the page's time waited is what /metrics counted by then.
    let v = plotted(&mut browser);
    let slow_task = latest_task(&v, "slow-0").unwrap();
    let waited = task_metric(
        &urls[slow_task["worker"].as_str().unwrap()],
        "tributary_task_throttled_seconds_total",
        "slow",
        "0",
    )
    .unwrap();
    let plotted_ms = num(&slow_task["throttledMs"]);
    assert!(
        plotted_ms > 0.0 && plotted_ms <= waited * 1000.0 + 0.5,
        "plotted {plotted_ms} ms, /metrics {waited} s"
    );

    // Actions: the viewer may only look.
    let r = click(&mut browser, "resume", "orders");
    assert_eq!(r["status"], "403", "{r}");
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .contains("viewer may not PUT /connectors/orders/resume"),
        "{r}"
    );
    let (_, s) = call(&w1.url, "admin", "GET", "/connectors/orders/status", None);
    assert_eq!(s["connector"]["state"], "PAUSED", "{s}");
    save_screenshot(&mut browser, d, "ui-live.png", true);
    // An operator of orders resumes it and restarts its tasks, and may not stop another.
    browser.set_headers(json!({"Authorization": basic("ops")}));
    let r = click(&mut browser, "resume", "orders");
    assert_eq!(r["status"], "202", "{r}");
    wait_connector(&w1.url, "orders", 2, "RUNNING");
    let r = click(&mut browser, "restart-tasks", "orders");
    assert_eq!(r["status"], "202", "{r}");
    let r = click(&mut browser, "stop", "slow");
    assert_eq!(r["status"], "403", "{r}");
    let (_, s) = call(&w1.url, "admin", "GET", "/connectors/slow/status", None);
    assert_eq!(s["connector"]["state"], "RUNNING", "{s}");
    // The restart shows on the plot.
    wait_for(
        "the restart on orders' plot",
        Duration::from_secs(90),
        || {
            let v = plotted(&mut browser);
            let row = row_of(&v, "orders")?;
            (num(&row["restarts"]) >= 1.0).then_some(())
        },
    );
    // A stopped connector's tasks are gone: its row shows no rate now, not its last one.
    let (code, body) = call(&w1.url, "admin", "PUT", "/connectors/slow/stop", None);
    assert_eq!(code, 204, "{body}");
    wait_for(
        "the stopped connector without a rate",
        Duration::from_secs(90),
        || {
            let v = plotted(&mut browser);
            let row = row_of(&v, "slow")?;
            (row["inRate"] == "" && row["outRate"] == "").then_some(())
        },
    );
    save_screenshot(&mut browser, d, "ui-actions.png", false);
}
