//! Workers against the secured broker of `scripts/kafka-secure` (SASL_SSL with SCRAM, mutual
//! TLS, SASL_PLAINTEXT with unsecured OAUTHBEARER, an ACL authorizer): worker files written as
//! for Java Connect, REST over HTTPS with Connect's basic-auth extension, and the errors a user
//! gets for a wrong password or a missing ACL. `scripts/test` starts the broker and exports its
//! `KAFKA_SECURE_*` variables; without them these tests skip (and fail under CI).

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use common::*;

/// A worker process started with `KAFKA_OPTS` (for the basic-auth JAAS file).
struct Worker {
    child: Child,
    log: PathBuf,
    url: String,
}

impl Worker {
    fn start(dir: &Path, mode: &str, props: &str, kafka_opts: Option<&str>) -> Worker {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("worker.properties"), props).unwrap();
        let log = dir.join(format!("worker-{}.log", unique("run")));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tributary"));
        cmd.args([mode, "worker.properties"])
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap());
        if let Some(o) = kafka_opts {
            cmd.env("KAFKA_OPTS", o);
        }
        let mut child = cmd.spawn().expect("starting tributary");
        let re = regex::Regex::new(r"REST server listening on (https?://\S+)").unwrap();
        let url = wait_for("the worker's REST server", Duration::from_secs(90), || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "worker exited with {status}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            re.captures(&std::fs::read_to_string(&log).unwrap_or_default())
                .map(|c| c[1].to_string())
        });
        Worker { child, log, url }
    }

    /// Runs a worker expected to stop at startup; returns its exit status and output.
    fn run_to_failure(dir: &Path, mode: &str, props: &str) -> (std::process::ExitStatus, String) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("worker.properties"), props).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
            .args([mode, "worker.properties"])
            .current_dir(dir)
            .output()
            .expect("running tributary");
        (
            out.status,
            String::from_utf8_lossy(&out.stderr).to_string()
                + &String::from_utf8_lossy(&out.stdout),
        )
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
        if std::thread::panicking() {
            eprintln!(
                "worker log {}:\n{}",
                self.log.display(),
                std::fs::read_to_string(&self.log).unwrap_or_default()
            );
        }
    }
}

/// An HTTPS client trusting the test CA.
fn https_client(s: &Secure) -> reqwest::blocking::Client {
    let ca = std::fs::read(s.var("KAFKA_SECURE_CA_PEM")).unwrap();
    reqwest::blocking::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&ca).unwrap())
        .build()
        .unwrap()
}

fn basic(user: &str, password: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

fn call(
    client: &reqwest::blocking::Client,
    method: &str,
    url: &str,
    auth: Option<&str>,
    body: Option<String>,
) -> (u16, String) {
    let mut req = client.request(method.parse().unwrap(), url);
    if let Some(a) = auth {
        req = req.header("Authorization", a);
    }
    if let Some(b) = body {
        req = req.header("Content-Type", "application/json").body(b);
    }
    let r = req.send().unwrap();
    (r.status().as_u16(), r.text().unwrap())
}

/// Three distributed workers over SASL_SSL (SCRAM-SHA-512; JKS, PKCS12 and PEM trust stores,
/// one per worker) run a FileStreamSource → topic → FileStreamSink pipeline; their REST API is
/// HTTPS with basic auth: 401 without credentials, and a create sent to any worker (forwarded
/// to the leader over HTTPS with the credentials) succeeds.
#[test]
fn three_workers_over_sasl_ssl_run_a_pipeline_behind_https_and_basic_auth() {
    let Some(s) = secure() else { return };
    let dir = test_dir();
    let group = unique("secured");
    let creds = dir.path().join("users.properties");
    std::fs::write(&creds, "admin=admin-pw\n").unwrap();
    let jaas = dir.path().join("rest.jaas");
    std::fs::write(
        &jaas,
        format!(
            "KafkaConnect {{\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n  file=\"{}\";\n}};\n",
            creds.display()
        ),
    )
    .unwrap();
    let opts = format!("-Djava.security.auth.login.config={}", jaas.display());
    let rest_tls = format!(
        "listeners=https://127.0.0.1:0\nlisteners.https.ssl.keystore.type=PKCS12\nlisteners.https.ssl.keystore.location={}\nlisteners.https.ssl.keystore.password=store-secret\nlisteners.https.ssl.truststore.type=PEM\nlisteners.https.ssl.truststore.location={}\nrest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension\nscheduled.rebalance.max.delay.ms=2000\n",
        s.var("KAFKA_SECURE_WORKER_KEYSTORE_P12"),
        s.var("KAFKA_SECURE_CA_PEM"),
    );
    let workers: Vec<Worker> = ["JKS", "PKCS12", "PEM"]
        .iter()
        .enumerate()
        .map(|(i, store)| {
            let props = format!(
                "{}{}{}",
                distributed_properties(&s.sasl_ssl, &group, ""),
                sasl_ssl_lines(&s, "connect", "connect-secret", store),
                rest_tls
            );
            Worker::start(
                &dir.path().join(format!("w{i}")),
                "distributed",
                &props,
                Some(&opts),
            )
        })
        .collect();
    assert!(workers.iter().all(|w| w.url.starts_with("https://")));
    let http = https_client(&s);
    let auth = basic("admin", "admin-pw");
    // Without credentials, or with wrong ones: Connect's 401.
    let (code, body) = call(
        &http,
        "GET",
        &format!("{}/connectors", workers[0].url),
        None,
        None,
    );
    assert_eq!(
        (code, body.as_str()),
        (401, "User cannot access the resource.")
    );
    let (code, _) = call(
        &http,
        "GET",
        &format!("{}/connectors", workers[1].url),
        Some(&basic("admin", "nope")),
        None,
    );
    assert_eq!(code, 401);
    // Every worker has joined (the group client authenticated over TLS).
    for w in &workers {
        wait_for("the worker to join", Duration::from_secs(90), || {
            let (code, body) = call(
                &http,
                "GET",
                &format!("{}/tributary/worker", w.url),
                Some(&auth),
                None,
            );
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            (code == 200 && v["generation"].as_i64().unwrap_or(0) > 0).then_some(())
        });
    }
    let lines: Vec<String> = (0..2000).map(|i| format!("secured line {i}")).collect();
    let input = dir.path().join("in.txt");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let output = dir.path().join("out.txt");
    let topic = unique("secured-topic");
    // Creates go to different workers: those that are not the leader forward over HTTPS.
    let source = format!(
        r#"{{"name":"src","config":{{"connector.class":"FileStreamSource","file":"{}","topic":"{topic}"}}}}"#,
        input.display()
    );
    let sink = format!(
        r#"{{"name":"sink","config":{{"connector.class":"FileStreamSink","file":"{}","topics":"{topic}"}}}}"#,
        output.display()
    );
    let (code, body) = call(
        &http,
        "POST",
        &format!("{}/connectors", workers[1].url),
        Some(&auth),
        Some(source),
    );
    assert_eq!(code, 201, "{body}");
    let (code, body) = call(
        &http,
        "POST",
        &format!("{}/connectors", workers[2].url),
        Some(&auth),
        Some(sink),
    );
    assert_eq!(code, 201, "{body}");
    let got = wait_for(
        "every line in the sink file",
        Duration::from_secs(90),
        || {
            let text = std::fs::read_to_string(&output).unwrap_or_default();
            (text.lines().count() >= lines.len()).then_some(text)
        },
    );
    assert_eq!(got.lines().collect::<Vec<_>>(), lines);
    // The records went through the secured broker's topic.
    let (code, body) = call(
        &http,
        "GET",
        &format!("{}/connectors/src/topics", workers[0].url),
        Some(&auth),
        None,
    );
    assert_eq!(code, 200, "{body}");
    assert!(body.contains(&topic), "{body}");
}

/// A wrong password stops a worker at startup with a message naming `sasl.jaas.config`.
#[test]
fn a_wrong_password_stops_startup_naming_the_key() {
    let Some(s) = secure() else { return };
    let dir = test_dir();
    let group = unique("badpw");
    let props = format!(
        "{}{}",
        distributed_properties(&s.sasl_ssl, &group, ""),
        sasl_ssl_lines(&s, "connect", "wrong-secret", "JKS")
    );
    let (status, out) = Worker::run_to_failure(dir.path(), "distributed", &props);
    assert!(!status.success(), "{out}");
    assert!(out.contains("sasl.jaas.config"), "{out}");
    assert!(out.to_lowercase().contains("authentication"), "{out}");
}

/// A store that cannot be opened (wrong password) stops startup naming the store's key.
#[test]
fn a_wrong_store_password_stops_startup_naming_the_key() {
    let Some(s) = secure() else { return };
    let dir = test_dir();
    let props = format!(
        "{}security.protocol=SSL\nssl.truststore.location={}\nssl.truststore.password=wrong\n",
        distributed_properties(&s.mtls, &unique("badstore"), ""),
        s.var("KAFKA_SECURE_TRUSTSTORE_JKS")
    );
    let (status, out) = Worker::run_to_failure(dir.path(), "distributed", &props);
    assert!(!status.success(), "{out}");
    assert!(out.contains("ssl.truststore.location"), "{out}");
}

/// A standalone worker over mutual TLS (PEM key store with an encrypted key) and one over
/// SASL_PLAINTEXT with an unsecured OAUTHBEARER token each move lines into a topic.
#[test]
fn mutual_tls_and_oauthbearer_pipelines() {
    let Some(s) = secure() else { return };
    let dir = test_dir();
    let mtls = format!(
        "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={}\nssl.keystore.type=PEM\nssl.keystore.certificate.chain={}\nssl.keystore.key={}\nssl.key.password=key-secret\n",
        s.var("KAFKA_SECURE_CA_PEM"),
        std::fs::read_to_string(s.var("KAFKA_SECURE_CLIENT_CERT_PEM")).unwrap().replace('\n', "\\n"),
        std::fs::read_to_string(s.var("KAFKA_SECURE_CLIENT_KEY_ENCRYPTED_PEM")).unwrap().replace('\n', "\\n"),
    );
    let oauth = "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"connect\";\n".to_string();
    for (name, bootstrap, security) in
        [("mtls", &s.mtls, mtls), ("oauth", &s.sasl_plaintext, oauth)]
    {
        let wdir = dir.path().join(name);
        std::fs::create_dir_all(&wdir).unwrap();
        let mut lines = security.clone();
        for prefix in ["producer.", "consumer.", "admin."] {
            for l in security.lines() {
                lines.push_str(&format!("{prefix}{l}\n"));
            }
        }
        let input = wdir.join("in.txt");
        std::fs::write(&input, "a\nb\nc\n").unwrap();
        let topic = unique(name);
        // Created through the broker's internal listener, so reading it back below never
        // races the producer's first metadata request.
        create_topic(&s.var("KAFKA_SECURE_INTERNAL"), &topic, 1);
        std::fs::write(
            wdir.join("source.properties"),
            format!(
                "name=src\nconnector.class=FileStreamSource\nfile={}\ntopic={topic}\n",
                input.display()
            ),
        )
        .unwrap();
        let props = format!(
            "bootstrap.servers={bootstrap}\nkey.converter=org.apache.kafka.connect.storage.StringConverter\nvalue.converter=org.apache.kafka.connect.storage.StringConverter\noffset.storage.file.filename={}/offsets\noffset.flush.interval.ms=500\nlisteners=http://127.0.0.1:0\n{lines}",
            wdir.display()
        );
        std::fs::write(wdir.join("worker.properties"), props).unwrap();
        let w = StandaloneWorker::spawn(&wdir, &["source.properties"]);
        w.wait_state("src", 1, "RUNNING");
        // The broker's internal listener (no security) reads the topic back.
        let values = wait_for("the lines in the topic", Duration::from_secs(60), || {
            let v = read_topic(&s.var("KAFKA_SECURE_INTERNAL"), &topic);
            (v.len() >= 3).then_some(v)
        });
        assert_eq!(
            values,
            vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()],
            "{name}"
        );
    }
}

/// A principal without the ACLs Connect needs gets an error naming what it was refused.
#[test]
fn a_missing_acl_is_a_clear_error() {
    let Some(s) = secure() else { return };
    let dir = test_dir();
    let props = format!(
        "{}{}",
        distributed_properties(&s.sasl_ssl, &unique("noacl"), ""),
        sasl_ssl_lines(&s, "limited", "limited-secret", "PEM")
    );
    let (status, out) = Worker::run_to_failure(dir.path(), "distributed", &props);
    assert!(!status.success(), "{out}");
    // Which resource and which operation, as Connect's logs say.
    assert!(out.contains("Not authorized to create topic"), "{out}");
    assert!(
        out.contains("config.storage.topic")
            || out.contains("offset.storage.topic")
            || out.contains("status.storage.topic"),
        "{out}"
    );
}
