//! The secrets crawler (issue #42): secrets planted through each built-in config provider
//! (file, directory, environment) and as a plain password-type setting, on a two-worker
//! cluster with basic auth and a REST authorization policy; then, as a principal of each role
//! on the leader and on the follower, every GET endpoint of the OpenAPI document (each
//! connector, task, plugin and logger filled in), the validating writes, the live view's data,
//! status traces and `/metrics` are read, and so are the workers' logs at TRACE. No answer and
//! no log line may hold a value a provider resolved; the plain password may appear only in
//! answers to principals that may read that connector's config.
//!
//! The findings of the issue are checked on the way, each one an assertion that failed before:
//! validation printing a resolved value (and a read principal having references resolved at
//! all), a create named by a JSON number passing the policy, hide-config leaving traces,
//! offsets and topics visible, `/metrics` naming every connector, PATCH moving a connector's
//! name.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

const USERS: &[(&str, &str)] = &[
    ("admin", "admin-pw-Secret-91b7"),
    ("alice", "alice-pw"),
    ("bob", "bob-pw"),
    ("ops", "ops-pw"),
    ("carol", "carol-pw"),
];

/// The policy, and carol, who reads b-* with their configs.
const POLICY: &str = "\
admin admin
alice write a-*
bob   read  b-* hide-config
ops   operate *
carol read  b-*
";

/// What a provider resolves: none may appear in any answer or log line.
const FILE_SECRET: &str = "TopSecret-file-4f1c";
const DB_SECRET: &str = "TopSecret-db-93ad";
/// A list value: each item must stay hidden too.
const LIST_SECRET: [&str; 2] = ["TopSecret-item1-a4", "TopSecret-item2-b5"];
/// A value whose quote `{:?}` and JSON escape.
const QUOTED_SECRET: &str = "Quoted\"Secret-77";
const DIR_SECRET: &str = "TopSecret-dir-7e22";
const ENV_SECRET: &str = "TopSecret-env-5b0d";
/// A plain password-type value: only principals that may read b-flaky's config may see it.
const PLAIN_PASSWORD: &str = "PlainPassword-c3d9";

const FLAKY: &str = "io.tributary.connect.testing.FlakySourceConnector";

/// One answer the crawler read.
struct Answer {
    user: &'static str,
    worker: &'static str,
    request: String,
    status: u16,
    body: String,
}

fn password(user: &str) -> &'static str {
    USERS.iter().find(|(u, _)| *u == user).unwrap().1
}

fn fetch(url: &str, user: &str, method: &str, path: &str, body: Option<&Value>) -> (u16, String) {
    let client = reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let mut req = client
        .request(method.parse().unwrap(), format!("{url}{path}"))
        .header("Authorization", basic_authorization(user, password(user)));
    if let Some(b) = body {
        req = req
            .header("Content-Type", "application/json")
            .body(b.to_string());
    }
    let r = req.send().unwrap();
    (r.status().as_u16(), r.text().unwrap_or_default())
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[test]
fn no_role_reads_a_secret_it_may_not_through_any_answer_or_log_line() {
    let Some(bootstrap) = kafka() else { return };
    let dir = test_dir();
    let d = dir.path();
    let auth = RestBasicAuth::write(d, USERS);
    let policy = d.join("policy.txt");
    std::fs::write(&policy, POLICY).unwrap();

    // The planted secrets.
    let secrets_dir = d.join("secrets");
    std::fs::create_dir_all(secrets_dir.join("by-key")).unwrap();
    let input = d.join("in").join(format!("{FILE_SECRET}.txt"));
    std::fs::create_dir_all(input.parent().unwrap()).unwrap();
    std::fs::write(&input, "one\ntwo\nthree\n").unwrap();
    let secrets = secrets_dir.join("secrets.properties");
    std::fs::write(
        &secrets,
        format!(
            "input.path={}\ndb.password={DB_SECRET}\nlist.password={}\nquoted.password={QUOTED_SECRET}\n",
            input.display(),
            LIST_SECRET.join(",")
        ),
    )
    .unwrap();
    let unwritable = d.join("no-such-dir").join(DIR_SECRET).join("out.txt");
    std::fs::write(
        secrets_dir.join("by-key").join("sink.path"),
        unwritable.display().to_string(),
    )
    .unwrap();
    let env_topic = format!("topic-{ENV_SECRET}");
    let providers = |restricted: bool| {
        let allowed = if restricted {
            format!(
                "config.providers.file.param.allowed.paths={}\nconfig.providers.dir.param.allowed.paths={}\n",
                secrets_dir.display(),
                secrets_dir.display()
            )
        } else {
            String::new()
        };
        format!(
            "config.providers=file,dir,env\n\
             config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider\n\
             config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider\n\
             config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider\n\
             {allowed}"
        )
    };
    // Under a policy the file connectors need directories of their own.
    let file_dirs = format!(
        "tributary.file.connectors.allowed.paths={},{}\n",
        d.join("in").display(),
        d.join("no-such-dir").display()
    );
    let extra = |restricted: bool| {
        format!(
            "{}tributary.rest.authorization.file={}\n{}{file_dirs}",
            RestBasicAuth::SETTING,
            policy.display(),
            providers(restricted)
        )
    };
    let group = unique("secrets");
    let env = [
        ("KAFKA_OPTS", auth.kafka_opts.as_str()),
        ("TRIB_SECRET_TOPIC", env_topic.as_str()),
        ("TRIBUTARY_LOG", "trace"),
    ];
    let joined = |w: &DistributedWorker| {
        wait_for("a worker to join", Duration::from_secs(90), || {
            let (_, v) = fetch(&w.url, "admin", "GET", "/tributary/worker", None);
            (json_of(&v)["generation"].as_i64().unwrap_or(0) > 0).then_some(())
        })
    };
    let leader = DistributedWorker::start_with_env(d, "w1", &bootstrap, &group, &extra(true), &env);
    joined(&leader);
    // The follower's file and directory providers may read any path: it says so at startup,
    // since a policy is in force.
    let follower =
        DistributedWorker::start_with_env(d, "w2", &bootstrap, &group, &extra(false), &env);
    joined(&follower);
    assert!(
        follower
            .log_text()
            .contains("config provider(s) dir, env, file are not limited"),
        "no warning about unrestricted providers"
    );
    assert!(leader
        .log_text()
        .contains("config provider(s) env are not limited"));
    let workers = [
        ("leader", leader.url.clone()),
        ("follower", follower.url.clone()),
    ];
    let f = follower.url.as_str();

    // The connectors: alice's source reads the file a provider names into the topic the
    // environment names; admin's sink writes where a directory provider says (and fails);
    // admin's flaky source holds a plain password.
    let file_ref = format!("${{file:{}:input.path}}", secrets.display());
    let db_ref = format!("${{file:{}:db.password}}", secrets.display());
    let dir_ref = format!(
        "${{dir:{}:sink.path}}",
        secrets_dir.join("by-key").display()
    );
    let env_ref = "${env:TRIB_SECRET_TOPIC}".to_string();
    let a_src = json!({"connector.class": "FileStreamSource", "file": file_ref, "topic": env_ref, "tasks.max": "1"});
    let (code, v) = fetch(f, "alice", "PUT", "/connectors/a-src/config", Some(&a_src));
    assert_eq!(code, 201, "{v}");
    let sink_topic = unique("sink-in");
    let b_sink =
        json!({"connector.class": "FileStreamSink", "file": dir_ref, "topics": sink_topic});
    let (code, v) = fetch(
        f,
        "admin",
        "PUT",
        "/connectors/b-sink/config",
        Some(&b_sink),
    );
    assert_eq!(code, 201, "{v}");
    let b_flaky = json!({"connector.class": FLAKY, "topic": unique("flaky"), "credential": PLAIN_PASSWORD, "tasks.max": "1"});
    let (code, v) = fetch(
        f,
        "admin",
        "PUT",
        "/connectors/b-flaky/config",
        Some(&b_flaky),
    );
    assert_eq!(code, 201, "{v}");
    // Everything ran: the source's offsets name its file, the sink's task failed on its path.
    let offsets = wait_for("a-src's offsets", Duration::from_secs(90), || {
        let (_, v) = fetch(f, "admin", "GET", "/connectors/a-src/offsets", None);
        let v = json_of(&v);
        (v["offsets"].as_array().is_some_and(|o| !o.is_empty())).then_some(v)
    });
    assert!(
        offsets.to_string().contains(&file_ref),
        "the offsets name the reference: {offsets}"
    );
    let status = wait_for("b-sink's task to fail", Duration::from_secs(90), || {
        let (_, v) = fetch(f, "admin", "GET", "/connectors/b-sink/status", None);
        let v = json_of(&v);
        (v["tasks"][0]["state"] == "FAILED").then_some(v)
    });
    let trace = status["tasks"][0]["trace"].as_str().unwrap_or_default();
    assert!(
        trace.contains(&dir_ref),
        "the trace names the reference: {trace}"
    );
    wait_for("b-flaky running", Duration::from_secs(90), || {
        let (_, v) = fetch(f, "admin", "GET", "/connectors/b-flaky/status", None);
        (json_of(&v)["tasks"][0]["state"] == "RUNNING").then_some(())
    });
    let (_, topics) = fetch(f, "admin", "GET", "/connectors/a-src/topics", None);
    assert!(topics.contains("${env:TRIB_SECRET_TOPIC}"), "{topics}");

    // Finding 1: validation by a reader resolves nothing; by an admin it resolves but reports
    // the reference with Connect 4.4's message; a create by a writer likewise.
    let probe = json!({"name": "b-probe", "connector.class": "FileStreamSource", "topic": "t", "tasks.max": db_ref});
    let users_file = auth_users_file(d);
    let users_probe = json!({"name": "b-probe", "connector.class": "FileStreamSource", "topic": "t",
        "tasks.max": format!("${{file:{}:admin}}", users_file.display())});
    let environ_probe = json!({"name": "b-probe", "connector.class": "FileStreamSource", "topic": "t",
        "tasks.max": "${file:/proc/self/environ:KAFKA_OPTS}"});
    let validate = "/connector-plugins/FileStreamSource/config/validate";
    let errors_of = |body: &str| {
        json_of(body)["configs"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|c| c["value"]["name"] == "tasks.max")
            .map(|c| c["value"]["errors"].clone())
            .unwrap_or(Value::Null)
    };
    let (code, body) = fetch(f, "bob", "PUT", validate, Some(&probe));
    assert_eq!(code, 200, "{body}");
    let bob_errors = errors_of(&body).to_string();
    assert!(
        bob_errors.contains("was not validated")
            && bob_errors.contains("bob may not write connector b-probe"),
        "{body}"
    );
    let (code, body) = fetch(f, "admin", "PUT", validate, Some(&probe));
    assert_eq!(code, 200, "{body}");
    assert_eq!(
        errors_of(&body),
        json!(["Invalid value for configuration 'tasks.max': the value resolved from the config provider reference failed validation"]),
        "{body}"
    );
    let create = json!({"name": "a-probe", "config": {"connector.class": "FileStreamSource", "topic": "t", "tasks.max": db_ref}});
    let (code, body) = fetch(f, "alice", "POST", "/connectors", Some(&create));
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("the value resolved from the config provider reference failed validation"),
        "{body}"
    );

    // Finding 2: a create named by a number or a boolean is checked against that name.
    for name in [json!(12345), json!(true)] {
        let body = json!({"name": name, "config": {"connector.class": FLAKY, "topic": "x"}});
        let (code, answer) = fetch(f, "alice", "POST", "/connectors", Some(&body));
        assert_eq!(code, 403, "alice created {name}: {answer}");
    }
    let (_, names) = fetch(f, "admin", "GET", "/connectors", None);
    let names: BTreeSet<String> = serde_json::from_str(&names).unwrap();
    assert_eq!(
        names,
        ["a-src", "b-flaky", "b-sink"].map(String::from).into()
    );

    // Finding 3: hide-config hides traces, offsets and topics.
    let (code, body) = fetch(f, "bob", "GET", "/connectors/b-sink/status", None);
    assert_eq!(code, 200, "{body}");
    assert!(!body.contains("trace"), "bob sees a trace: {body}");
    let (_, body) = fetch(f, "bob", "GET", "/connectors?expand=status", None);
    assert!(!body.contains("trace") && body.contains("b-sink"), "{body}");
    for path in ["/connectors/b-sink/offsets", "/connectors/b-flaky/topics"] {
        assert_eq!(
            fetch(f, "bob", "GET", path, None).0,
            403,
            "bob reads {path}"
        );
    }
    // ... and /metrics shows a principal only its connectors.
    let (_, metrics) = fetch(f, "alice", "GET", "/metrics", None);
    assert!(
        metrics.contains("connector=\"a-src\"") && !metrics.contains("b-flaky"),
        "alice's metrics"
    );

    // ... nor producer metrics of connectors it may not read, nor the class of one whose
    // config it may not see (found by an attack on the first version).
    let (_, metrics) = fetch(f, "bob", "GET", "/metrics", None);
    assert!(
        !metrics.contains("connector-producer-a-src")
            && !metrics.contains("connector_class=\"FileStreamSink\""),
        "bob's metrics name a-src's producer or b-sink's class"
    );

    // From an attack on the first version: redaction must not be an oracle. A text sent that
    // happens to be another connector's secret comes back as it was sent, not as the reference
    // that would say it is right (and where it lives).
    for (method, path, body) in [
        ("GET", format!("/x/{DB_SECRET}/y"), None),
        (
            "PUT",
            validate.to_string(),
            Some(json!({"connector.class": format!("guess {DB_SECRET}"), "topic": "t"})),
        ),
    ] {
        let (_, answer) = fetch(f, "bob", method, &path, body.as_ref());
        assert!(
            !answer.contains("db.password") && !answer.contains("${file:"),
            "{method} {path}: the answer confirms the guess: {answer}"
        );
    }
    // A resolved list of transformation aliases, and a file connector aimed at the worker's own
    // files (alice appended `alice admin` to the policy with a FileStreamSink, and read the
    // users file with a FileStreamSource).
    let list_ref = format!("${{file:{}:list.password}}", secrets.display());
    let (code, body) = fetch(
        f,
        "alice",
        "POST",
        "/connectors",
        Some(
            &json!({"name": "a-aliases", "config": {"connector.class": "FileStreamSource", "topic": "t", "transforms": list_ref}}),
        ),
    );
    assert_eq!(code, 400, "{body}");
    // A second attack: the worker file (absolute or relative), the providers' secrets, a path
    // through a missing directory, anything outside the file connectors' directories.
    let own = "which no connector may read or write";
    let w2_file = d.join("w2").join("worker.properties");
    for (class, file, why) in [
        ("FileStreamSink", policy.display().to_string(), own),
        ("FileStreamSource", users_file.display().to_string(), own),
        (
            "org.apache.kafka.connect.file.FileStreamSinkConnector",
            auth.kafka_opts.split('=').nth(1).unwrap().to_string(),
            own,
        ),
        ("FileStreamSink", w2_file.display().to_string(), own),
        (
            "FileStreamSink",
            d.join("nonexistent/../policy.txt").display().to_string(),
            own,
        ),
        (
            "FileStreamSink",
            "worker.properties".to_string(),
            "must be an absolute path",
        ),
        (
            "FileStreamSource",
            d.join("elsewhere.txt").display().to_string(),
            "lies outside tributary.file.connectors.allowed.paths",
        ),
    ] {
        let config = json!({"connector.class": class, "topic": "t", "topics": "t", "file": file});
        let (code, body) = fetch(
            f,
            "alice",
            "PUT",
            "/connectors/a-own-files/config",
            Some(&config),
        );
        assert_eq!(code, 400, "{class} on {file}: {body}");
        assert!(body.contains(why), "{class} on {file}: {body}");
    }
    // The leader's providers have allowed.paths: what they may read is the worker's own.
    let config = json!({"connector.class": "FileStreamSource", "topic": "t", "file": secrets.display().to_string()});
    let (code, body) = fetch(
        &leader.url,
        "alice",
        "PUT",
        "/connectors/a-own-files/config",
        Some(&config),
    );
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("param.allowed.paths, which no connector may"),
        "{body}"
    );
    // A file checked at validation, then named otherwise behind its reference: checked again
    // when the task starts, which fails rather than writes the policy.
    let aim = secrets_dir.join("aim.properties");
    std::fs::write(
        &aim,
        format!("p={}\n", d.join("in").join("harmless.txt").display()),
    )
    .unwrap();
    let aimed = json!({"connector.class": "FileStreamSink", "topics": "t",
        "file": format!("${{file:{}:p}}", aim.display())});
    let (code, body) = fetch(
        f,
        "alice",
        "PUT",
        "/connectors/a-aimed/config",
        Some(&aimed),
    );
    assert_eq!(code, 201, "{body}");
    // Running on the harmless file first.
    wait_for("a-aimed running", Duration::from_secs(60), || {
        let (_, v) = fetch(f, "alice", "GET", "/connectors/a-aimed/status", None);
        (json_of(&v)["tasks"][0]["state"] == "RUNNING").then_some(())
    });
    let policy_text = std::fs::read_to_string(&policy).unwrap();
    std::fs::write(&aim, format!("p={}\n", policy.display())).unwrap();
    let (code, body) = fetch(
        f,
        "alice",
        "POST",
        "/connectors/a-aimed/restart?includeTasks=true",
        None,
    );
    assert_eq!(code, 202, "{body}");
    wait_for(
        "a-aimed to refuse the policy file",
        Duration::from_secs(60),
        || {
            let (_, v) = fetch(f, "alice", "GET", "/connectors/a-aimed/status", None);
            let v = json_of(&v);
            // The connector or its task, whichever starts first after the change.
            let refused = [&v["connector"]["trace"], &v["tasks"][0]["trace"]]
                .iter()
                .any(|t| t.as_str().unwrap_or_default().contains(own));
            refused.then_some(())
        },
    );
    assert_eq!(std::fs::read_to_string(&policy).unwrap(), policy_text);
    let (code, _) = fetch(f, "admin", "DELETE", "/connectors/a-aimed", None);
    assert_eq!(code, 204);
    // An internal request's basic-auth header names nobody in the audit (it is not checked).
    let r = reqwest::blocking::Client::new()
        .post(format!("{f}/connectors/a-src/tasks"))
        .header("Authorization", basic_authorization("admin", "wrong"))
        .header("Content-Type", "application/json")
        .body("[]")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);

    // Finding 4: PATCH cannot give a connector another's name.
    let (code, body) = fetch(
        f,
        "alice",
        "PATCH",
        "/connectors/a-src/config",
        Some(&json!({"name": "b-sink"})),
    );
    assert_eq!(code, 400, "{body}");

    // The crawl.
    let (_, openapi) = fetch(f, "admin", "GET", "/openapi.json", None);
    let openapi = json_of(&openapi);
    let connectors = ["a-src", "b-sink", "b-flaky"];
    let plugins = ["FileStreamSource", "FileStreamSink", FLAKY];
    let mut gets: Vec<String> = Vec::new();
    for (path, item) in openapi["paths"].as_object().unwrap() {
        if item.get("get").is_none() {
            continue;
        }
        let mut filled = vec![path.clone()];
        for (param, values) in [
            ("{name}", &connectors[..]),
            ("{plugin}", &plugins[..]),
            ("{task}", &["0"][..]),
            ("{logger}", &["root"][..]),
        ] {
            filled = filled
                .into_iter()
                .flat_map(|p| {
                    if p.contains(param) {
                        values.iter().map(|v| p.replace(param, v)).collect()
                    } else {
                        vec![p]
                    }
                })
                .collect();
        }
        gets.extend(filled);
    }
    assert!(
        gets.len() > 30,
        "the OpenAPI document lists too few reads: {gets:?}"
    );
    gets.extend(
        [
            "/connectors?expand=status&expand=info",
            "/tributary/history?scope=cluster",
            "/tributary/rebalances?scope=leader",
        ]
        .map(String::from),
    );
    let quoted_ref = format!("${{file:{}:quoted.password}}", secrets.display());
    let mut writes: Vec<(&str, String, Value)> = vec![
        ("PUT", validate.to_string(), probe.clone()),
        (
            "PUT",
            validate.to_string(),
            json!({"name": "a-probe", "connector.class": "FileStreamSource", "topic": "t", "transforms": list_ref, "tasks.max": quoted_ref}),
        ),
        (
            "PUT",
            validate.to_string(),
            json!({"name": "a-probe", "connector.class": "FileStreamSource", "topic": "t", "predicates": db_ref}),
        ),
        ("PUT", validate.to_string(), users_probe.clone()),
        ("PUT", validate.to_string(), environ_probe.clone()),
        ("POST", "/connectors".into(), create.clone()),
        (
            "PUT",
            "/connectors/a-src/config".into(),
            json!({"connector.class": "FileStreamSource", "topic": "t", "tasks.max": db_ref}),
        ),
        (
            "PATCH",
            "/connectors/b-flaky/config".into(),
            json!({"tasks.max": db_ref}),
        ),
    ];
    for (c, config) in [
        ("a-src", &a_src),
        ("b-sink", &b_sink),
        ("b-flaky", &b_flaky),
    ] {
        let class = config["connector.class"].as_str().unwrap();
        let mut body = config.clone();
        body["name"] = json!(c);
        writes.push((
            "PUT",
            format!("/connector-plugins/{class}/config/validate"),
            body,
        ));
    }
    let mut answers = Vec::new();
    for user in ["admin", "alice", "bob", "ops", "carol"] {
        for (worker, url) in &workers {
            for path in &gets {
                let (status, body) = fetch(url, user, "GET", path, None);
                answers.push(Answer {
                    user,
                    worker,
                    request: format!("GET {path}"),
                    status,
                    body,
                });
            }
            for (method, path, body) in &writes {
                let (status, answer) = fetch(url, user, method, path, Some(body));
                answers.push(Answer {
                    user,
                    worker,
                    request: format!("{method} {path}"),
                    status,
                    body: answer,
                });
            }
        }
    }
    // The writes above changed nothing (each config is invalid or refused).
    let (_, after) = fetch(f, "admin", "GET", "/connectors/a-src/config", None);
    assert_eq!(json_of(&after)["tasks.max"], "1", "{after}");

    let resolved = [
        FILE_SECRET,
        DB_SECRET,
        DIR_SECRET,
        ENV_SECRET,
        password("admin"),
        LIST_SECRET[0],
        LIST_SECRET[1],
        // The quoted one, in every escaped form.
        "Secret-77",
    ];
    let may_read_flaky_config = |user: &str| matches!(user, "admin" | "ops" | "carol");
    let mut leaks = Vec::new();
    for a in &answers {
        for secret in resolved {
            if a.body.contains(secret) {
                leaks.push(format!(
                    "{} on the {}: {} ({}) shows {secret}",
                    a.user, a.worker, a.request, a.status
                ));
            }
        }
        if !may_read_flaky_config(a.user) && a.body.contains(PLAIN_PASSWORD) {
            leaks.push(format!(
                "{} on the {}: {} ({}) shows b-flaky's password",
                a.user, a.worker, a.request, a.status
            ));
        }
    }
    // The crawl reached what it is meant to: the plain password where it may be read, and
    // statuses with traces for the principals that may see them.
    assert!(
        answers
            .iter()
            .any(|a| a.user == "carol" && a.body.contains(PLAIN_PASSWORD)),
        "carol never saw b-flaky's config: the crawl missed it"
    );
    assert!(answers
        .iter()
        .any(|a| a.user == "ops" && a.body.contains(&dir_ref)));
    assert!(answers.iter().filter(|a| a.status == 200).count() > 100);
    let logs = format!("{}{}", leader.log_text(), follower.log_text());
    assert!(logs.contains("TRACE"), "the workers did not log at TRACE");
    for secret in resolved.iter().chain([&PLAIN_PASSWORD]) {
        if let Some(line) = logs.lines().find(|l| l.contains(secret)) {
            leaks.push(format!("a log line shows {secret}: {line}"));
        }
    }
    assert!(
        leaks.is_empty(),
        "{} leaks:\n{}",
        leaks.len(),
        leaks.join("\n")
    );

    // The audit names the connector of a refused create.
    assert!(
        logs.lines().any(|l| l.contains("refused")
            && l.contains("principal=\"alice\"")
            && l.contains("connector=\"12345\"")),
        "no audit line naming connector 12345"
    );
    assert!(
        !logs
            .lines()
            .any(|l| l.contains("principal=\"admin\"") && l.contains("/connectors/a-src/tasks")),
        "an unchecked basic-auth header named the principal of an internal request"
    );
}

/// The basic-auth users file [`RestBasicAuth::write`] wrote into `dir`.
fn auth_users_file(dir: &std::path::Path) -> std::path::PathBuf {
    let file = dir.join("users.properties");
    assert!(file.exists(), "no users file at {}", file.display());
    file
}
