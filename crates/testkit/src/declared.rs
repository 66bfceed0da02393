//! `tributary apply` against a running cluster, Tributary's or Java Connect's (issue #35): the
//! same scenario for both, over the REST API only.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::{tributary_binary, wait_for};

/// The outcome of one `tributary apply` run.
#[derive(Debug)]
pub struct Applied {
    /// The exit code.
    pub code: i32,
    /// What it printed on stdout (the changes and the summary).
    pub stdout: String,
    /// What it printed on stderr (errors).
    pub stderr: String,
}

/// Runs `tributary apply --url URL ARGS…`.
pub fn apply(url: &str, args: &[&str]) -> Applied {
    let out = Command::new(tributary_binary())
        .arg("apply")
        .args(["--url", url])
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("running tributary apply");
    Applied {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// One request to `url` + `path`; `(0, Null)` when nobody answers.
pub fn rest(method: &str, url: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut req = client.request(method.parse().unwrap(), format!("{url}{path}"));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    match req.send() {
        Ok(r) => {
            let status = r.status().as_u16();
            let text = r.text().unwrap_or_default();
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        }
        Err(_) => (0, Value::Null),
    }
}

/// Waits until connector `name`'s status shows `state` (its connector instance).
pub fn wait_connector_state(url: &str, name: &str, state: &str) {
    wait_for(
        &format!("{name} to be {state}"),
        Duration::from_secs(120),
        || {
            let (code, v) = rest("GET", url, &format!("/connectors/{name}/status"), None);
            (code == 200 && v["connector"]["state"] == state).then_some(())
        },
    );
}

/// The stored config of connector `name` (`GET /connectors/{c}/config`), or `None` (404).
pub fn stored_config(url: &str, name: &str) -> Option<Value> {
    let (code, v) = rest("GET", url, &format!("/connectors/{name}/config"), None);
    (code == 200).then_some(v)
}

/// The scenario of issue #35's tests, against the cluster at `url`, with connector files in
/// `dir` (created) and connector names prefixed by `prefix`: a dry run (exit 2, nothing
/// changes), an apply (created, marked as managed), a dry run without drift (exit 0), a
/// changed key, a pause and a stop, a connector created over REST left alone, `--prune` of an
/// undeclared managed connector, a broken file (reported, nothing pruned, exit 1), and a
/// `${file:…}` reference kept as written.
pub fn apply_scenario(url: &str, dir: &Path, prefix: &str) {
    let files = dir.join(format!("{prefix}-connectors"));
    std::fs::create_dir_all(&files).unwrap();
    let (a, b, c) = (
        format!("{prefix}-a"),
        format!("{prefix}-b"),
        format!("{prefix}-c"),
    );
    let input = dir.join(format!("{prefix}-missing-input.txt"));
    let source = |name: &str, topic: &str, state: &str| {
        serde_json::json!({
            "name": name,
            "config": {
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasks.max": "1",
                "file": input.display().to_string(),
                "topic": topic,
                "db.password": "${file:/etc/tributary-secrets.properties:password}",
            },
            "initial_state": state,
        })
        .to_string()
    };
    let write = |file: &str, text: String| std::fs::write(files.join(file), text).unwrap();
    write("a.json", source(&a, &format!("{prefix}-t1"), "RUNNING"));
    write("b.json", source(&b, &format!("{prefix}-t2"), "RUNNING"));
    write(
        "c.properties",
        format!(
            "name={c}\nconnector.class=FileStreamSink\ntasks.max=1\ntopics={prefix}-t1\nfile={}\n",
            dir.join(format!("{prefix}-sink.txt")).display()
        ),
    );
    write("README.md", "not a connector file".into());
    let dir_arg = files.to_str().unwrap();

    // A dry run against a cluster without them: drift, nothing created.
    let dry = apply(url, &["--dry-run", dir_arg]);
    assert_eq!(dry.code, 2, "{dry:?}");
    for name in [&a, &b, &c] {
        assert!(
            dry.stdout.contains(&format!("+ {name} (created, RUNNING)")),
            "{dry:?}"
        );
        assert!(
            stored_config(url, name).is_none(),
            "a dry run created {name}"
        );
    }

    // Apply: all three created, marked as managed, references stored as written. (A Java
    // worker answers a create once it is written, and its GET may lag behind for a moment.)
    let done = apply(url, &[dir_arg]);
    assert_eq!(done.code, 0, "{done:?}");
    // Run again at once, before the connectors' statuses are written (GET /connectors with
    // expand=status leaves such a connector out, on Java as on Tributary): nothing to do.
    // Before issue #42 this reported every connector as still to create.
    let at_once = apply(url, &["--dry-run", dir_arg]);
    assert_eq!(at_once.code, 0, "{at_once:?}");
    assert!(at_once.stdout.contains("0 change(s)"), "{at_once:?}");
    for name in [&a, &b, &c] {
        let config = wait_for(&format!("{name} created"), Duration::from_secs(60), || {
            stored_config(url, name)
        });
        assert_eq!(config["tributary.managed"], "true", "{config}");
        wait_connector_state(url, name, "RUNNING");
    }
    assert_eq!(
        stored_config(url, &a).unwrap()["db.password"],
        "${file:/etc/tributary-secrets.properties:password}"
    );
    let again = wait_for("no drift after the apply", Duration::from_secs(60), || {
        let r = apply(url, &["--dry-run", dir_arg]);
        (r.code == 0).then_some(r)
    });
    assert!(again.stdout.contains("0 change(s)"), "{again:?}");

    // A connector created over REST: never touched, not even by --prune.
    let foreign = format!("{prefix}-rest-made");
    let (code, v) = rest(
        "PUT",
        url,
        &format!("/connectors/{foreign}/config"),
        Some(
            &serde_json::json!({
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasks.max": "1",
                "file": input.display().to_string(),
                "topic": format!("{prefix}-t3"),
            })
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{v}");

    // One key changed, b paused: an update and a pause, nothing else.
    write(
        "a.json",
        source(&a, &format!("{prefix}-t1-changed"), "RUNNING"),
    );
    write("b.json", source(&b, &format!("{prefix}-t2"), "PAUSED"));
    let dry = apply(url, &["--dry-run", dir_arg]);
    assert_eq!(dry.code, 2, "{dry:?}");
    let expected = format!(
        "~ {a}: topic: \"{prefix}-t1\" -> \"{prefix}-t1-changed\"\n~ {b}: state: RUNNING -> PAUSED\n"
    );
    assert!(dry.stdout.starts_with(&expected), "{dry:?}");
    let done = apply(url, &[dir_arg]);
    assert_eq!(done.code, 0, "{done:?}");
    wait_for(&format!("{a} updated"), Duration::from_secs(60), || {
        (stored_config(url, &a).unwrap()["topic"] == format!("{prefix}-t1-changed")).then_some(())
    });
    wait_connector_state(url, &b, "PAUSED");

    // b stopped (KIP-875).
    write("b.json", source(&b, &format!("{prefix}-t2"), "STOPPED"));
    assert_eq!(apply(url, &[dir_arg]).code, 0);
    wait_connector_state(url, &b, "STOPPED");

    // c's file removed: kept without --prune (and said so), deleted with it; the connector
    // created over REST stays.
    std::fs::remove_file(files.join("c.properties")).unwrap();
    let dry = apply(url, &["--dry-run", dir_arg]);
    assert_eq!(dry.code, 0, "{dry:?}");
    assert!(
        dry.stdout.contains("1 managed connector(s) not declared"),
        "{dry:?}"
    );
    let dry = apply(url, &["--dry-run", "--prune", dir_arg]);
    assert_eq!(dry.code, 2, "{dry:?}");
    assert!(dry.stdout.contains(&format!("- {c} (deleted)")), "{dry:?}");
    assert!(!dry.stdout.contains(&foreign), "{dry:?}");
    assert_eq!(apply(url, &["--prune", dir_arg]).code, 0);
    wait_for(&format!("{c} deleted"), Duration::from_secs(60), || {
        stored_config(url, &c).is_none().then_some(())
    });
    assert!(stored_config(url, &foreign).is_some());

    // A broken file: reported by name, the others applied, nothing pruned, exit 1.
    write("broken.json", "{\"name\": ".into());
    std::fs::remove_file(files.join("a.json")).unwrap();
    let broken = apply(url, &["--prune", dir_arg]);
    assert_eq!(broken.code, 1, "{broken:?}");
    assert!(broken.stderr.contains("broken.json"), "{broken:?}");
    assert!(broken.stderr.contains("not pruning"), "{broken:?}");
    assert!(
        stored_config(url, &a).is_some(),
        "a broken file may declare a: nothing is pruned"
    );
    std::fs::remove_file(files.join("broken.json")).unwrap();

    // Bad input: no worker answering is a clear error, exit 1.
    let nobody = apply("http://127.0.0.1:1", &["--dry-run", dir_arg]);
    assert_eq!(nobody.code, 1, "{nobody:?}");
    assert!(nobody.stderr.contains("no worker answered"), "{nobody:?}");
    for name in [&a, &b, &foreign] {
        rest("DELETE", url, &format!("/connectors/{name}"), None);
    }
}

/// Runs `tributary ARGS…` with `env`.
pub fn cli(args: &[&str], env: &[(&str, &str)]) -> Applied {
    let out = Command::new(tributary_binary())
        .args(args)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .output()
        .expect("running tributary");
    Applied {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The admin CLI's scenario (issue #35) against the cluster at `url`: every command's output
/// and exit code, the JSON and YAML outputs, Connect's error message as one line with exit 1,
/// and contexts (in `dir`).
pub fn admin_scenario(url: &str, dir: &Path, prefix: &str) {
    let name = format!("{prefix}-admin");
    let input = dir.join(format!("{prefix}-admin-input.txt"));
    std::fs::write(&input, "one\ntwo\nthree\n").unwrap();
    let (code, v) = rest(
        "PUT",
        url,
        &format!("/connectors/{name}/config"),
        Some(
            &serde_json::json!({
                "connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
                "tasks.max": "1",
                "file": input.display().to_string(),
                "topic": format!("{prefix}-admin-topic"),
                "extra.key": "to be removed",
            })
            .to_string(),
        ),
    );
    assert_eq!(code, 201, "{v}");
    wait_connector_state(url, &name, "RUNNING");
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--url", url]);
        let r = cli(&all, &[]);
        assert_eq!(r.code, 0, "tributary {args:?}: {r:?}");
        r
    };

    // get connectors: a table, JSON and YAML.
    let t = wait_for(
        "the task RUNNING in the table",
        Duration::from_secs(60),
        || {
            let r = run(&["get", "connectors"]);
            r.stdout
                .lines()
                .any(|l| {
                    l.starts_with(&name)
                        && l.contains("source")
                        && l.contains("RUNNING")
                        && l.contains("1/1")
                })
                .then_some(r)
        },
    );
    assert!(
        t.stdout.starts_with("NAME") && t.stdout.contains("TASKS"),
        "{t:?}"
    );
    let j: Value = serde_json::from_str(&run(&["get", "connectors", "-o", "json"]).stdout).unwrap();
    assert_eq!(j[&name]["status"]["connector"]["state"], "RUNNING", "{j}");
    let y = run(&["get", "connectors", "-o", "yaml"]).stdout;
    assert!(
        y.contains(&format!("{name}:")) && y.contains("state: RUNNING"),
        "{y}"
    );
    let plugins = run(&["get", "plugins"]).stdout;
    assert!(
        plugins.contains("org.apache.kafka.connect.file.FileStreamSourceConnector"),
        "{plugins}"
    );
    assert!(plugins.starts_with("TYPE"), "{plugins}");

    // describe: config, status, tasks, topics, offsets in one view.
    let d = wait_for(
        "the topic and offsets in describe",
        Duration::from_secs(60),
        || {
            let r = run(&["describe", "connector", &name]);
            (r.stdout.contains(&format!("{prefix}-admin-topic")) && r.stdout.contains("position"))
                .then_some(r)
        },
    );
    for want in [
        "Name:    ",
        "State:   RUNNING",
        "Config:",
        "extra.key",
        "Tasks:",
        "Topics:",
        "Offsets:",
    ] {
        assert!(d.stdout.contains(want), "{want}: {d:?}");
    }
    let dj: Value =
        serde_json::from_str(&run(&["describe", "connector", &name, "-o", "json"]).stdout).unwrap();
    assert_eq!(dj["config"]["tasks.max"], "1");

    // patch (KIP-477): a key set, a key removed.
    let p = run(&[
        "patch",
        &name,
        "tasks.max=1",
        "topic.extra=x",
        "--remove",
        "extra.key",
    ]);
    assert!(p.stdout.contains(&format!("{name} patched")), "{p:?}");
    let config = wait_for("the patch applied", Duration::from_secs(60), || {
        stored_config(url, &name).filter(|c| c["topic.extra"] == "x")
    });
    assert!(config["extra.key"].is_null(), "{config}");

    // pause, resume, restarts.
    assert!(run(&["pause", &name]).stdout.contains("paused"));
    wait_connector_state(url, &name, "PAUSED");
    assert!(run(&["resume", &name]).stdout.contains("resumed"));
    wait_connector_state(url, &name, "RUNNING");
    assert!(run(&["restart", "connector", &name, "--include-tasks"])
        .stdout
        .contains("restart of"));
    wait_connector_state(url, &name, "RUNNING");
    run(&["restart", "task", &name, "0"]);

    // stop, offsets: listed, reset, altered (KIP-875).
    assert!(run(&["stop", &name]).stdout.contains("stopped"));
    wait_connector_state(url, &name, "STOPPED");
    let o = run(&["get", "offsets", &name]);
    assert!(
        o.stdout.starts_with("PARTITION") && o.stdout.contains("position"),
        "{o:?}"
    );
    let reset = run(&["offsets", "reset", &name]);
    assert!(reset.stdout.to_lowercase().contains("offsets"), "{reset:?}");
    let empty = run(&["get", "offsets", &name, "-o", "json"]);
    let ej: Value = serde_json::from_str(&empty.stdout).unwrap();
    assert_eq!(ej["offsets"].as_array().map(Vec::len), Some(0), "{ej}");
    let offsets_file = dir.join(format!("{prefix}-offsets.json"));
    std::fs::write(
        &offsets_file,
        serde_json::json!({"offsets": [{"partition": {"filename": input.display().to_string()}, "offset": {"position": 4}}]}).to_string(),
    )
    .unwrap();
    let altered = run(&[
        "offsets",
        "alter",
        &name,
        "--file",
        offsets_file.to_str().unwrap(),
    ]);
    assert!(
        altered.stdout.to_lowercase().contains("offsets"),
        "{altered:?}"
    );
    let aj: Value =
        serde_json::from_str(&run(&["get", "offsets", &name, "-o", "json"]).stdout).unwrap();
    assert_eq!(aj["offsets"][0]["offset"]["position"], 4, "{aj}");

    // loggers.
    let l = run(&["get", "loggers"]);
    assert!(
        l.stdout.starts_with("LOGGER") && l.stdout.contains("root"),
        "{l:?}"
    );
    run(&["logger", "set", "org.apache.kafka.connect.file", "DEBUG"]);
    let lj: Value = serde_json::from_str(&run(&["get", "loggers", "-o", "json"]).stdout).unwrap();
    assert_eq!(
        lj["org.apache.kafka.connect.file"]["level"], "DEBUG",
        "{lj}"
    );

    // Errors: Connect's message on one line, exit 1.
    let missing = format!("{prefix}-no-such-connector");
    for args in [
        vec!["describe", "connector", &missing],
        vec!["pause", &missing],
    ] {
        let mut all = args.clone();
        all.extend(["--url", url]);
        let r = cli(&all, &[]);
        assert_eq!(r.code, 1, "{r:?}");
        assert_eq!(r.stderr.trim().lines().count(), 1, "{r:?}");
        assert!(
            r.stderr.contains("404") && r.stderr.contains(&missing),
            "{r:?}"
        );
    }

    // Contexts: the cluster named once, then used without --url.
    let contexts = dir.join(format!("{prefix}-contexts.json"));
    let env = [("TRIBUTARY_CONTEXTS", contexts.to_str().unwrap())];
    let set = cli(&["config", "set-context", "here", "--cluster", url], &env);
    assert_eq!(set.code, 0, "{set:?}");
    let listed = cli(&["config", "get-contexts"], &env);
    assert!(
        listed
            .stdout
            .lines()
            .any(|l| l.starts_with('*') && l.contains("here")),
        "{listed:?}"
    );
    let via = cli(&["get", "connectors"], &env);
    assert_eq!(via.code, 0, "{via:?}");
    assert!(via.stdout.contains(&name), "{via:?}");
    let bad = cli(&["config", "use-context", "nowhere"], &env);
    assert_eq!(bad.code, 1, "{bad:?}");
    let completion = cli(&["completion", "bash"], &[]);
    assert_eq!(completion.code, 0);
    assert!(completion.stdout.contains("tributary"));

    assert!(run(&["delete", &name]).stdout.contains("deleted"));
    wait_for(&format!("{name} deleted"), Duration::from_secs(60), || {
        stored_config(url, &name).is_none().then_some(())
    });
}
