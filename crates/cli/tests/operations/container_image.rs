//! The container images (`scripts/image`, issue #33) on the real broker, with Debian's podman
//! (`--network host`): three workers of the image with a Java runtime form one group, one
//! configured by Confluent's `CONNECT_*` variables, one by Debezium's image variables, one by a
//! mounted worker file; a pipeline of a native source (three tasks) and Apache's Java
//! FileStreamSink (from a mounted `plugin.path`) writing to a mounted volume survives
//! `podman stop` of one container (SIGTERM: its tasks move at once) and `podman kill` of
//! another (its tasks move after `scheduled.rebalance.max.delay.ms`) with no sequence number
//! lost and every record in the sink's file; a Java Connect 4.4.0 worker then joins the
//! containers' group and is given work. The slim image answers its `HEALTHCHECK` command and
//! has no JVM; the images run as a non-root user; the Kubernetes manifest's worker file runs
//! as its Deployment runs the image. A compose file written for Confluent's
//! `cp-kafka-connect` image (`CONNECT_*` variables, `network_mode: host`, a mounted volume, the
//! image's health check) runs the slim image unchanged apart from the image name, with Debian's
//! docker-compose on podman's Docker API (`scripts/image compose`).

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `scripts/image podman ARGS…` (podman with the flags these machines need).
fn podman(args: &[&str]) -> std::process::Output {
    Command::new(repo().join("scripts/image"))
        .arg("podman")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("running podman")
}

/// The images built from the test's binary: `(slim, jre)`; `None` without podman. Built once
/// for the tests of this binary.
fn images() -> Option<(String, String)> {
    static BUILT: std::sync::OnceLock<Option<(String, String)>> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_images).clone()
}

fn build_images() -> Option<(String, String)> {
    let ok = Command::new(repo().join("scripts/image"))
        .arg("install")
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return missing("podman and mmdebstrap (scripts/image install)");
    }
    java_bridge()?;
    let out = Command::new(repo().join("scripts/image"))
        .args(["--binary", env!("CARGO_BIN_EXE_tributary")])
        .stderr(Stdio::inherit())
        .output()
        .expect("running scripts/image");
    assert!(out.status.success(), "scripts/image failed");
    let tags: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(tags.len(), 2, "{tags:?}");
    Some((tags[0].clone(), tags[1].clone()))
}

/// A running container, removed when dropped.
struct Container {
    name: String,
    url: String,
}

impl Container {
    fn run(name: &str, port: u16, image: &str, options: &[String], args: &[&str]) -> Container {
        let mut all: Vec<String> = vec![
            "run".into(),
            "-d".into(),
            "--name".into(),
            name.into(),
            "--network".into(),
            "host".into(),
            // The image's HEALTHCHECK needs systemd timers to run by itself; the test runs it.
            "--health-cmd".into(),
            "none".into(),
        ];
        all.extend(options.iter().cloned());
        all.push(image.into());
        all.extend(args.iter().map(|a| a.to_string()));
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = podman(&refs);
        assert!(
            out.status.success(),
            "podman run: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let c = Container {
            name: name.into(),
            url: format!("http://127.0.0.1:{port}"),
        };
        wait_for(
            &format!("container {name}"),
            Duration::from_secs(120),
            || {
                reqwest::blocking::get(format!("{}/health", c.url))
                    .ok()
                    .filter(|r| r.status().as_u16() == 200)
                    .map(|_| ())
            },
        );
        c
    }

    fn logs(&self) -> String {
        let out = podman(&["logs", &self.name]);
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    fn worker_id(&self) -> String {
        self.url.trim_start_matches("http://").to_string()
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = podman(&["rm", "-f", "-t", "0", &self.name]);
    }
}

fn env_flags(pairs: &[(&str, String)]) -> Vec<String> {
    pairs
        .iter()
        .flat_map(|(k, v)| ["-e".to_string(), format!("{k}={v}")])
        .collect()
}

#[test]
fn three_containers_share_a_group_and_lose_nothing_when_stopped_or_killed() {
    let Some(bootstrap) = kafka() else { return };
    let Some((slim, jre)) = images() else { return };
    let dir = test_dir();
    let group = unique("image");
    let topic = unique("image-seq");
    // One partition: the reader below reads partition 0.
    create_topic(&bootstrap, &topic, 1);

    // Mounted volumes: plugin.path with Apache's connect-file, and the sink's output.
    let plugins = dir.path().join("plugins");
    let data = dir.path().join("data");
    std::fs::create_dir_all(plugins.join("connect-file")).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    let (_, bridge_plugins) = java_bridge().unwrap();
    std::fs::copy(
        Path::new(&bridge_plugins).join("connect-file/connect-file-4.1.1.jar"),
        plugins.join("connect-file/connect-file-4.1.1.jar"),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
    let volumes = vec![
        "-v".to_string(),
        format!("{}:/plugins:ro", plugins.display()),
        "-v".to_string(),
        format!("{}:/data", data.display()),
    ];
    let common_keys = [
        ("config.storage.topic", format!("{group}-configs")),
        ("offset.storage.topic", format!("{group}-offsets")),
        ("status.storage.topic", format!("{group}-status")),
    ];
    let ports: Vec<u16> = (0..3).map(|_| common::faults::free_port()).collect();

    // 1: Confluent's cp-kafka-connect variables.
    let mut confluent = vec![
        ("CONNECT_BOOTSTRAP_SERVERS", bootstrap.clone()),
        ("CONNECT_GROUP_ID", group.clone()),
        ("CONNECT_CONFIG_STORAGE_TOPIC", common_keys[0].1.clone()),
        ("CONNECT_OFFSET_STORAGE_TOPIC", common_keys[1].1.clone()),
        ("CONNECT_STATUS_STORAGE_TOPIC", common_keys[2].1.clone()),
        ("CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR", "1".into()),
        ("CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR", "1".into()),
        ("CONNECT_STATUS_STORAGE_REPLICATION_FACTOR", "1".into()),
        (
            "CONNECT_KEY_CONVERTER",
            "org.apache.kafka.connect.storage.StringConverter".into(),
        ),
        (
            "CONNECT_VALUE_CONVERTER",
            "org.apache.kafka.connect.storage.StringConverter".into(),
        ),
        ("CONNECT_REST_ADVERTISED_HOST_NAME", "127.0.0.1".into()),
        (
            "CONNECT_LISTENERS",
            format!("http://127.0.0.1:{}", ports[0]),
        ),
        ("CONNECT_PLUGIN_PATH", "/plugins".into()),
        (
            "CONNECT_TRIBUTARY_PLUGINS_PREFER_JAVA",
            "org.apache.kafka.connect.file.FileStreamSinkConnector".into(),
        ),
        ("CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS", "5000".into()),
        ("CONNECT_OFFSET_FLUSH_INTERVAL_MS", "500".into()),
        ("CONNECT_LOG4J_ROOT_LOGLEVEL", "INFO".into()),
    ];
    let mut opts = env_flags(&confluent);
    opts.extend(volumes.clone());
    let c1 = Container::run(&unique("trib-confluent"), ports[0], &jre, &opts, &[]);
    assert!(
        c1.logs()
            .contains("CONNECT_LOG4J_ROOT_LOGLEVEL does not apply"),
        "{}",
        c1.logs()
    );

    // 2: Debezium's image variables (and CONNECT_* for what it has no variable for).
    confluent.retain(|(k, _)| {
        matches!(
            *k,
            "CONNECT_PLUGIN_PATH"
                | "CONNECT_TRIBUTARY_PLUGINS_PREFER_JAVA"
                | "CONNECT_SCHEDULED_REBALANCE_MAX_DELAY_MS"
        )
    });
    let mut debezium = vec![
        ("BOOTSTRAP_SERVERS", bootstrap.clone()),
        ("GROUP_ID", group.clone()),
        ("CONFIG_STORAGE_TOPIC", common_keys[0].1.clone()),
        ("OFFSET_STORAGE_TOPIC", common_keys[1].1.clone()),
        ("STATUS_STORAGE_TOPIC", common_keys[2].1.clone()),
        ("CONFIG_STORAGE_REPLICATION_FACTOR", "1".into()),
        ("OFFSET_STORAGE_REPLICATION_FACTOR", "1".into()),
        ("STATUS_STORAGE_REPLICATION_FACTOR", "1".into()),
        (
            "KEY_CONVERTER",
            "org.apache.kafka.connect.storage.StringConverter".into(),
        ),
        (
            "VALUE_CONVERTER",
            "org.apache.kafka.connect.storage.StringConverter".into(),
        ),
        ("OFFSET_FLUSH_INTERVAL_MS", "500".into()),
        ("REST_HOST_NAME", "127.0.0.1".into()),
        ("REST_PORT", ports[1].to_string()),
        ("ADVERTISED_HOST_NAME", "127.0.0.1".into()),
        ("ADVERTISED_PORT", ports[1].to_string()),
        ("HEAP_OPTS", "-Xmx192m".into()),
    ];
    debezium.extend(confluent.iter().cloned());
    let mut opts = env_flags(&debezium);
    opts.extend(volumes.clone());
    let c2 = Container::run(&unique("trib-debezium"), ports[1], &jre, &opts, &[]);

    // 3: a mounted worker file.
    let conf = dir.path().join("conf");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(
        conf.join("worker.properties"),
        distributed_properties(
            &bootstrap,
            &group,
            "plugin.path=/plugins\ntributary.plugins.prefer.java=org.apache.kafka.connect.file.FileStreamSinkConnector\nscheduled.rebalance.max.delay.ms=5000\nrest.advertised.host.name=127.0.0.1",
        )
        .replace("listeners=http://127.0.0.1:0", &format!("listeners=http://127.0.0.1:{}", ports[2])),
    )
    .unwrap();
    let mut opts = volumes.clone();
    opts.extend(["-v".to_string(), format!("{}:/config:ro", conf.display())]);
    let c3 = Container::run(
        &unique("trib-file"),
        ports[2],
        &jre,
        &opts,
        &["/config/worker.properties"],
    );

    // The containers run as a non-root user.
    let id = podman(&["exec", &c3.name, "id", "-u"]);
    assert_eq!(String::from_utf8_lossy(&id.stdout).trim(), "1000");

    // The pipeline: three source tasks, a Java sink writing to the mounted volume.
    let client = reqwest::blocking::Client::new();
    let post = |body: serde_json::Value| {
        let r = client
            .post(format!("{}/connectors", c3.url))
            .json(&body)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 201, "{:?}", r.text());
    };
    post(
        json!({"name": "seq", "config": {"connector.class": "FlakySource", "topic": topic,
        "tasks.max": "3", "records.per.second": "20"}}),
    );
    post(
        json!({"name": "sink", "config": {"connector.class": "FileStreamSink",
        "topics": topic, "file": "/data/out.txt"}}),
    );
    let status = |name: &str| -> serde_json::Value {
        client
            .get(format!("{}/connectors/{name}/status", c3.url))
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    let workers_of = |s: &serde_json::Value| -> BTreeSet<String> {
        s["tasks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| t["state"] == "RUNNING")
            .map(|t| t["worker_id"].as_str().unwrap().to_string())
            .collect()
    };
    wait_for(
        "the source's tasks on three workers",
        Duration::from_secs(120),
        || {
            let s = status("seq");
            (workers_of(&s).len() == 3).then_some(())
        },
    );
    let records_now = || read_topic_records(&bootstrap, &topic).len();
    let grown = |from: usize| {
        wait_for("more records", Duration::from_secs(60), || {
            (records_now() > from + 60).then_some(())
        })
    };
    grown(0);

    // podman stop (SIGTERM): a clean departure, its tasks move at once.
    let out = podman(&["stop", "-t", "30", &c1.name]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for("c1's tasks elsewhere", Duration::from_secs(60), || {
        let s = status("seq");
        let w = workers_of(&s);
        (s["tasks"].as_array().map(Vec::len) == Some(3)
            && w.iter().all(|id| *id != c1.worker_id())
            && s["tasks"]
                .as_array()
                .unwrap()
                .iter()
                .all(|t| t["state"] == "RUNNING"))
        .then_some(())
    });
    grown(records_now());

    // podman kill: a crash, its tasks move after scheduled.rebalance.max.delay.ms.
    let out = podman(&["kill", &c2.name]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    wait_for(
        "every task on the last container",
        Duration::from_secs(120),
        || {
            let s = status("seq");
            let w = workers_of(&s);
            (w.len() == 1
                && w.contains(&c3.worker_id())
                && s["tasks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|t| t["state"] == "RUNNING"))
            .then_some(())
        },
    );
    grown(records_now());

    // Nothing lost: every task's sequence numbers have no gap, and the sink's file (on the
    // mounted volume) holds every record of the topic.
    let records = read_topic_records(&bootstrap, &topic);
    let by_task = common::eos::seqnos_by_task(&records);
    assert_eq!(by_task.len(), 3, "{:?}", by_task.keys());
    for (task, seqnos) in &by_task {
        let seen: BTreeSet<i64> = seqnos.iter().copied().collect();
        let max = *seen.iter().max().unwrap();
        let gaps: Vec<i64> = (0..max).filter(|s| !seen.contains(s)).take(10).collect();
        assert!(gaps.is_empty(), "task {task}: gaps {gaps:?} below {max}");
    }
    let want: BTreeSet<String> = records
        .iter()
        .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        .collect();
    wait_for(
        "the sink's file to hold every record",
        Duration::from_secs(120),
        || {
            let text = std::fs::read_to_string(data.join("out.txt")).unwrap_or_default();
            let have: BTreeSet<String> = text.lines().map(str::to_string).collect();
            want.is_subset(&have).then_some(())
        },
    );

    // A Java Connect 4.4.0 worker joins the containers' group: it reads the same config topic
    // and is given work by the group (the native source's tasks fail there, Java Connect having
    // no such class, which is why this comes after the checks above).
    let java_port = common::faults::free_port();
    let java_dir = dir.path().join("java");
    std::fs::create_dir_all(&java_dir).unwrap();
    let file_plugins = Command::new(repo().join("scripts/jvm-bridge"))
        .arg("file-plugin-path")
        .output()
        .unwrap();
    assert!(file_plugins.status.success());
    std::fs::write(
        java_dir.join("worker.properties"),
        distributed_properties(
            &bootstrap,
            &group,
            &format!(
                "plugin.path={}\nscheduled.rebalance.max.delay.ms=5000\nrest.advertised.host.name=127.0.0.1\nrest.advertised.port={java_port}",
                String::from_utf8_lossy(&file_plugins.stdout).trim()
            ),
        )
        .replace("listeners=http://127.0.0.1:0", &format!("listeners=http://127.0.0.1:{java_port}")),
    )
    .unwrap();
    let mut java = Command::new(repo().join("scripts/connect-java"))
        .arg(java_dir.join("worker.properties"))
        .env("CONNECT_VERSION", VECTORS_CONNECT_VERSION)
        .env("CONNECT_JAVA_HEAP", "256m")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(java_dir.join("stderr.log")).unwrap())
        .spawn()
        .unwrap();
    let java_id = format!("127.0.0.1:{java_port}");
    let joined = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(
            "the Java worker to be given work",
            Duration::from_secs(180),
            || {
                let s = status("seq");
                let on_java = s["tasks"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(std::iter::once(&s["connector"]))
                    .any(|t| t["worker_id"] == java_id.as_str());
                on_java.then_some(())
            },
        );
        let listed: serde_json::Value = client
            .get(format!("http://{java_id}/connectors"))
            .send()
            .unwrap()
            .json()
            .unwrap();
        let mut names: Vec<&str> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["seq", "sink"],
            "the Java worker reads the containers' config topic"
        );
    }));
    java.kill().ok();
    java.wait().ok();
    if let Err(e) = joined {
        eprintln!(
            "Java worker log: {}",
            std::fs::read_to_string(java_dir.join("stderr.log")).unwrap_or_default()
        );
        std::panic::resume_unwind(e);
    }

    // The slim image: no JVM, its HEALTHCHECK command answers, and no Java plugin is listed.
    let port = common::faults::free_port();
    let slim_env = env_flags(&[
        ("CONNECT_BOOTSTRAP_SERVERS", bootstrap.clone()),
        ("CONNECT_GROUP_ID", unique("image-slim")),
        ("CONNECT_CONFIG_STORAGE_TOPIC", unique("slim-configs")),
        ("CONNECT_OFFSET_STORAGE_TOPIC", unique("slim-offsets")),
        ("CONNECT_STATUS_STORAGE_TOPIC", unique("slim-status")),
        ("CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR", "1".into()),
        ("CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR", "1".into()),
        ("CONNECT_STATUS_STORAGE_REPLICATION_FACTOR", "1".into()),
        (
            "CONNECT_KEY_CONVERTER",
            "org.apache.kafka.connect.json.JsonConverter".into(),
        ),
        (
            "CONNECT_VALUE_CONVERTER",
            "org.apache.kafka.connect.json.JsonConverter".into(),
        ),
        ("CONNECT_LISTENERS", format!("http://127.0.0.1:{port}")),
    ]);
    let s = Container::run(&unique("trib-slim"), port, &slim, &slim_env, &[]);
    let hc = podman(&[
        "exec",
        &s.name,
        "tributary",
        "healthcheck",
        &format!("{}/health", s.url),
    ]);
    assert!(
        hc.status.success(),
        "{}",
        String::from_utf8_lossy(&hc.stderr)
    );
    let inspect = podman(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config.Healthcheck}}",
        &slim,
    ]);
    assert!(
        String::from_utf8_lossy(&inspect.stdout).contains("healthcheck"),
        "the image has a HEALTHCHECK: {}",
        String::from_utf8_lossy(&inspect.stdout)
    );
    let java = podman(&["exec", &s.name, "sh", "-c", "command -v java || echo none"]);
    assert_eq!(String::from_utf8_lossy(&java.stdout).trim(), "none");

    // The Kubernetes manifest's worker file (its ConfigMap, with the pod IP from the
    // environment through EnvVarConfigProvider), run as its Deployment runs the image: the
    // file mounted at /config, given as the argument; its readiness probe's /health answers.
    let manifest =
        std::fs::read_to_string(repo().join("packaging/kubernetes/tributary.yaml")).unwrap();
    let start = manifest.find("connect-distributed.properties: |").unwrap();
    let worker_file: String = manifest[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("    "))
        .map(|l| format!("{}\n", &l[4..]))
        .collect();
    let port = common::faults::free_port();
    let k8s_group = unique("k8s");
    let worker_file = worker_file
        .replace("kafka:9092", &bootstrap)
        .replace("http://0.0.0.0:8083", &format!("http://127.0.0.1:{port}"))
        .replace("group.id=tributary", &format!("group.id={k8s_group}"))
        .replace("=tributary-", &format!("={k8s_group}-"))
        + "config.storage.replication.factor=1\noffset.storage.replication.factor=1\nstatus.storage.replication.factor=1\n";
    let k8s_conf = dir.path().join("k8s");
    std::fs::create_dir_all(&k8s_conf).unwrap();
    std::fs::write(k8s_conf.join("connect-distributed.properties"), worker_file).unwrap();
    assert!(manifest.contains(r#"args: ["/config/connect-distributed.properties"]"#));
    let k = Container::run(
        &unique("trib-k8s"),
        port,
        &slim,
        &[
            "-e".into(),
            "POD_IP=127.0.0.1".into(),
            "-v".into(),
            format!("{}:/config:ro", k8s_conf.display()),
        ],
        &["/config/connect-distributed.properties"],
    );
    let (code, _) = http_get(&format!("{}/connectors", k.url));
    assert_eq!(code, 200, "{}", k.logs());
}

fn http_get(url: &str) -> (u16, String) {
    let r = reqwest::blocking::get(url).unwrap();
    (r.status().as_u16(), r.text().unwrap_or_default())
}

/// A `docker-compose.yml` written for Confluent's `cp-kafka-connect`, only the image name
/// changed, runs a worker that serves a FileStreamSource pipeline from a mounted volume and
/// passes the image's own health check; `down` stops and removes it.
#[test]
fn a_compose_file_written_for_cp_kafka_connect_runs_the_image() {
    let Some(bootstrap) = kafka() else { return };
    let Some((slim, _)) = images() else { return };
    let installed = Command::new("docker-compose")
        .arg("version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        missing::<()>("docker-compose (scripts/image install)");
        return;
    }
    let dir = test_dir();
    let group = unique("compose");
    let port = common::faults::free_port();
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let lines: String = (0..20).map(|i| format!("compose line {i}\n")).collect();
    std::fs::write(data.join("input.txt"), &lines).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o777)).unwrap();
    let project = unique("tributary-compose").replace('-', "");
    // As users write them for cp-kafka-connect (the image name aside).
    let compose = format!(
        r#"version: "3"
services:
  connect:
    image: {slim}
    network_mode: host
    volumes:
      - {data}:/data
    environment:
      CONNECT_BOOTSTRAP_SERVERS: {bootstrap}
      CONNECT_REST_PORT: {port}
      CONNECT_LISTENERS: http://127.0.0.1:{port}
      CONNECT_REST_ADVERTISED_HOST_NAME: 127.0.0.1
      CONNECT_GROUP_ID: {group}
      CONNECT_CONFIG_STORAGE_TOPIC: {group}-configs
      CONNECT_OFFSET_STORAGE_TOPIC: {group}-offsets
      CONNECT_STATUS_STORAGE_TOPIC: {group}-status
      CONNECT_CONFIG_STORAGE_REPLICATION_FACTOR: 1
      CONNECT_OFFSET_STORAGE_REPLICATION_FACTOR: 1
      CONNECT_STATUS_STORAGE_REPLICATION_FACTOR: 1
      CONNECT_KEY_CONVERTER: org.apache.kafka.connect.storage.StringConverter
      CONNECT_VALUE_CONVERTER: org.apache.kafka.connect.storage.StringConverter
      CONNECT_PLUGIN_PATH: /usr/share/java,/usr/share/confluent-hub-components
"#,
        data = data.display()
    );
    std::fs::write(dir.path().join("docker-compose.yml"), compose).unwrap();
    let compose_cmd = |args: &[&str]| {
        let out = Command::new(repo().join("scripts/image"))
            .arg("compose")
            .args(["-p", &project])
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("running scripts/image compose");
        (
            out.status.success(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    struct Down<'a>(&'a dyn Fn(&[&str]) -> (bool, String));
    impl Drop for Down<'_> {
        fn drop(&mut self) {
            let _ = (self.0)(&["down", "-t", "5"]);
        }
    }
    let (up, out) = compose_cmd(&["up", "-d"]);
    assert!(up, "docker-compose up: {out}");
    let _down = Down(&compose_cmd);
    let url = format!("http://127.0.0.1:{port}");
    wait_for(
        "the compose worker's REST API",
        Duration::from_secs(120),
        || {
            reqwest::blocking::get(format!("{url}/connectors"))
                .ok()
                .filter(|r| r.status().is_success())
                .map(|_| ())
        },
    );
    let topic = unique("compose");
    create_topic(&bootstrap, &topic, 1);
    let resp = reqwest::blocking::Client::new()
        .post(format!("{url}/connectors"))
        .json(&json!({"name": "file", "config": {
            "connector.class": "FileStreamSource", "file": "/data/input.txt", "topic": topic}}))
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201, "{:?}", resp.text());
    wait_for("the 20 lines in Kafka", Duration::from_secs(120), || {
        (read_topic(&bootstrap, &topic).len() >= 20).then_some(())
    });
    // The image's HEALTHCHECK passes in the container compose started.
    let container = format!("{project}_connect_1");
    let out = podman(&["healthcheck", "run", &container]);
    assert!(
        out.status.success(),
        "health check: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // cp-kafka-connect's CONNECT_REST_PORT sets rest.port, which Connect 4 no longer reads:
    // warned about as Connect does, never silently taken.
    let out = podman(&["logs", &container]);
    let logs = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(logs.contains("rest.port"), "{logs}");
    let (down, out) = compose_cmd(&["down", "-t", "5"]);
    assert!(down, "docker-compose down: {out}");
    let out = podman(&["ps", "-a", "--format", "{{.Names}}"]);
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains(&container),
        "removed by down"
    );
}
