//! The release archive (`scripts/package`, issue #33) as a user installs it: unpacked into an
//! empty directory and run with a `PATH` holding neither cargo nor Maven (only bash and the
//! tools the launch scripts use), on the real broker:
//! - `bin/connect-distributed.sh worker.properties` (Apache's arguments) runs a distributed
//!   worker whose `plugin.path` hosts Apache's Java FileStreamSource with no
//!   `tributary.jvm.classpath` set: the archive's bundled bridge is the default; the JVM gets
//!   `KAFKA_HEAP_OPTS`, and `KAFKA_JMX_OPTS` is reported as not applying; Debezium's PostgreSQL
//!   connector (from `scripts/plugins`) is listed, validates with its own `ConfigDef`, and
//!   snapshots a table of the PostgreSQL of `scripts/postgres` into Kafka;
//! - `bin/connect-standalone.sh -daemon worker.properties connector.properties` runs a
//!   standalone worker in the background with its output in `$LOG_DIR/connectStandalone.out`;
//! - without a worker file the scripts answer with Apache's usage line and exit 1.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use serde_json::json;

/// Builds the archive from the test's binary and unpacks it under `dir`: its top directory.
fn unpacked(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(root.join("scripts/package"))
        .args(["--binary", env!("CARGO_BIN_EXE_tributary"), "--out"])
        .arg(dir.join("dist"))
        .stderr(Stdio::inherit())
        .output()
        .expect("running scripts/package");
    assert!(out.status.success(), "scripts/package failed");
    let archive = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert!(archive.ends_with("-linux-x86_64.tar.gz"), "{archive}");
    let install = dir.join("install");
    std::fs::create_dir_all(&install).unwrap();
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&install)
        .status()
        .unwrap();
    assert!(status.success());
    let top: Vec<PathBuf> = std::fs::read_dir(&install)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(top.len(), 1, "one top directory: {top:?}");
    for f in [
        "bin/tributary",
        "bin/connect-distributed.sh",
        "bin/connect-standalone.sh",
        "bin/connect-mirror-maker.sh",
        "config/connect-distributed.properties",
        "config/connect-mirror-maker.properties",
        "libs/jvm-bridge/CLASSPATH",
        "licenses/LICENSE",
        "licenses/THIRD-PARTY-JARS.txt",
    ] {
        assert!(top[0].join(f).exists(), "{f} is in the archive");
    }
    top[0].clone()
}

/// A `PATH` directory with only what the launch scripts need: no cargo, no Maven, no java
/// (the JVM is found through `JAVA_HOME`).
fn bare_path(dir: &Path) -> PathBuf {
    let bin = dir.join("path");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in ["bash", "nohup", "mkdir"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} not found"));
        std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
    }
    bin
}

fn java_home() -> Option<String> {
    let out = Command::new("java")
        .args(["-XshowSettings:properties", "-version"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stderr);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("java.home = "))
        .map(str::to_string)
}

/// Processes whose command line mentions `needle` (the daemon's worker file), to stop them.
fn processes_with(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .collect()
}

struct Killed(Vec<i32>);

/// A child process killed and reaped when dropped.
struct ChildGuard(std::process::Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        for pid in &self.0 {
            Command::new("kill")
                .arg("-9")
                .arg(pid.to_string())
                .status()
                .ok();
        }
    }
}

#[test]
fn the_release_archive_runs_workers_and_java_plugins_without_cargo_or_maven() {
    let Some(bootstrap) = kafka() else { return };
    // Building the archive needs the bridge's jars (java, javac, mvn), as the hosted tests do.
    if java_bridge().is_none() {
        return;
    }
    let Some(java_home) = java_home() else {
        missing::<()>("no java to find JAVA_HOME with");
        return;
    };
    let dir = test_dir();
    let home = unpacked(dir.path());
    let path = bare_path(dir.path());
    for absent in ["cargo", "mvn", "java"] {
        assert!(
            !path.join(absent).exists(),
            "{absent} is not on the test's PATH"
        );
    }
    let script = |name: &str| {
        let mut c = Command::new(home.join("bin").join(name));
        c.env_clear()
            .env("PATH", &path)
            .env("JAVA_HOME", &java_home)
            .env("HOME", dir.path());
        c
    };

    // Without a worker file: Apache's usage line, exit 1.
    let out = script("connect-distributed.sh").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("USAGE: ")
            && String::from_utf8_lossy(&out.stderr)
                .contains("[-daemon] connect-distributed.properties"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = script("connect-mirror-maker.sh").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("[-daemon] mm2.properties"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A distributed worker hosting Apache's Java FileStreamSource from plugin.path, with the
    // bundled bridge.
    let plugin_path = dir.path().join("plugins/connect-file");
    std::fs::create_dir_all(&plugin_path).unwrap();
    // Debezium's plugins (scripts/plugins: the PostgreSQL source, the JDBC sink) as a user
    // would add them to plugin.path.
    let Some((_, debezium)) = debezium_plugins() else {
        return;
    };
    let (_, bridge_plugins) = java_bridge().unwrap();
    std::fs::copy(
        Path::new(&bridge_plugins).join("connect-file/connect-file-4.1.1.jar"),
        plugin_path.join("connect-file-4.1.1.jar"),
    )
    .unwrap();
    let port = common::faults::free_port();
    let group = unique("archive");
    let worker_file = dir.path().join("connect-distributed.properties");
    std::fs::write(
        &worker_file,
        distributed_properties(
            &bootstrap,
            &group,
            &format!(
                "plugin.path={},{debezium}\ntributary.plugins.prefer.java=org.apache.kafka.connect.file.FileStreamSourceConnector",
                dir.path().join("plugins").display()
            ),
        )
        .replace("listeners=http://127.0.0.1:0", &format!("listeners=http://127.0.0.1:{port}")),
    )
    .unwrap();
    let stderr_log = dir.path().join("distributed.log");
    let _distributed = ChildGuard(
        script("connect-distributed.sh")
            .arg(&worker_file)
            .env("KAFKA_HEAP_OPTS", "-Xmx192m")
            .env("KAFKA_JMX_OPTS", "-Dcom.sun.management.jmxremote")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr_log).unwrap())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://127.0.0.1:{port}");
    let client = reqwest::blocking::Client::new();
    wait_for(
        "the archive's distributed worker",
        Duration::from_secs(120),
        || {
            client
                .get(format!("{url}/connectors"))
                .send()
                .ok()
                .filter(|r| r.status().is_success())
                .map(|_| ())
        },
    );
    let log = std::fs::read_to_string(&stderr_log).unwrap();
    assert!(log.contains("KAFKA_JMX_OPTS does not apply"), "{log}");
    let input = dir.path().join("input.txt");
    let lines: String = (0..50).map(|i| format!("archive line {i}\n")).collect();
    std::fs::write(&input, &lines).unwrap();
    let topic = unique("archive");
    create_topic(&bootstrap, &topic, 1);
    let resp = client
        .post(format!("{url}/connectors"))
        .json(&json!({"name": "java-file", "config": {
            "connector.class": "FileStreamSource", "file": input, "topic": topic}}))
        .send()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201, "{:?}", resp.text());
    wait_for(
        "the Java source's 50 records",
        Duration::from_secs(120),
        || (read_topic(&bootstrap, &topic).len() >= 50).then_some(()),
    );
    let plugins: serde_json::Value = client
        .get(format!("{url}/connector-plugins"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(
        plugins.as_array().unwrap().iter().any(|p| p["class"]
            == "org.apache.kafka.connect.file.FileStreamSourceConnector"
            && p["version"] == bridge_connect_version()),
        "the Java FileStreamSource (Connect's version) is listed: {plugins}"
    );
    // Debezium's PostgreSQL connector loads from plugin.path through the bundled bridge, and its
    // own ConfigDef answers validation.
    assert!(
        plugins.as_array().unwrap().iter().any(|p| p["class"]
            == "io.debezium.connector.postgresql.PostgresConnector"
            && p["version"] == "3.6.1.Final"),
        "Debezium's own version, beside the native one: {plugins}"
    );
    let infos: serde_json::Value = client
        .put(format!(
            "{url}/connector-plugins/io.debezium.connector.postgresql.PostgresConnector/config/validate"
        ))
        .json(&json!({"connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "name": "pg", "topic.prefix": "archive"}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert!(
        infos["configs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["value"]["name"] == "database.hostname"),
        "Debezium's keys are validated: {infos}"
    );
    // And it runs: the snapshot of a PostgreSQL table reaches Kafka through the archive's
    // worker and bridge.
    if let Some(pg) = common::postgres::Pg::from_env() {
        let db = unique("archive_pg").replace('-', "_");
        let db_guard = pg.create_db(&db);
        pg.sql(
            &db,
            "CREATE TABLE customers (id INT PRIMARY KEY, name TEXT); \
             INSERT INTO customers VALUES (1, 'ada'), (2, 'grace'), (3, 'edsger');",
        );
        let prefix = unique("archive-dbz");
        let mut config = pg.source_config(&db, &prefix);
        // Debezium's own version (the native one is the class's default).
        config.insert("connector.plugin.version".into(), "3.6.1.Final".into());
        let resp = client
            .post(format!("{url}/connectors"))
            .json(&json!({"name": "pg", "config": config}))
            .send()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 201, "{:?}", resp.text());
        let topic = format!("{prefix}.public.customers");
        wait_for(
            "Debezium's snapshot of 3 rows in Kafka",
            Duration::from_secs(180),
            || (topic_end(&bootstrap, &topic) >= 3).then_some(()),
        );
        let rows = read_topic(&bootstrap, &topic);
        assert!(
            rows.iter()
                .any(|v| String::from_utf8_lossy(v).contains("grace")),
            "the rows' values: {:?}",
            rows.iter()
                .map(|v| String::from_utf8_lossy(v))
                .collect::<Vec<_>>()
        );
        // The task lets go of the replication slot before the database is dropped.
        let resp = client
            .delete(format!("{url}/connectors/pg"))
            .send()
            .unwrap();
        assert_eq!(resp.status().as_u16(), 204);
        drop(db_guard);
    }
    // The embedded JVM got KAFKA_HEAP_OPTS.
    let log = std::fs::read_to_string(&stderr_log).unwrap();
    let started = log
        .lines()
        .find(|l| l.contains("JVM started"))
        .unwrap_or_else(|| panic!("no JVM start in {log}"));
    assert!(started.contains("-Xmx192m"), "{started}");

    // A standalone worker in the background (-daemon), its output under LOG_DIR.
    let sa_port = common::faults::free_port();
    let sa_file = dir
        .path()
        .join(format!("{}.properties", unique("standalone")));
    std::fs::write(
        &sa_file,
        format!(
            "bootstrap.servers={bootstrap}\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename={}\nlisteners=http://127.0.0.1:{sa_port}\noffset.flush.interval.ms=500\n",
            dir.path().join("standalone.offsets").display()
        ),
    )
    .unwrap();
    let sa_topic = unique("archive-sa");
    create_topic(&bootstrap, &sa_topic, 1);
    let connector_file = dir.path().join("source.properties");
    std::fs::write(
        &connector_file,
        format!(
            "name=native-file\nconnector.class=FileStreamSource\nfile={}\ntopic={sa_topic}\n",
            input.display()
        ),
    )
    .unwrap();
    let log_dir = dir.path().join("logs");
    let status = script("connect-standalone.sh")
        .arg("-daemon")
        .arg(&sa_file)
        .arg(&connector_file)
        .env("LOG_DIR", &log_dir)
        .status()
        .unwrap();
    assert!(status.success(), "-daemon returns at once");
    let _standalone = Killed(wait_for(
        "the daemon's process",
        Duration::from_secs(30),
        || {
            let pids = processes_with(sa_file.to_str().unwrap());
            (!pids.is_empty()).then_some(pids)
        },
    ));
    wait_for(
        "the standalone source's 50 records",
        Duration::from_secs(120),
        || (read_topic(&bootstrap, &sa_topic).len() >= 50).then_some(()),
    );
    let out = std::fs::read_to_string(log_dir.join("connectStandalone.out")).unwrap_or_default();
    assert!(
        out.contains("native-file"),
        "the daemon's output is in LOG_DIR: {out}"
    );
}
