//! Credentials rotated without a restart (issue #42): a distributed worker over mutual TLS to the
//! secured broker of `scripts/kafka-secure`, its REST API over HTTPS with basic auth. New
//! certificates (signed by the test CA with openssl, as `scripts/kafka-secure` makes its own) are
//! moved into place for the REST listener and for the worker's Kafka clients, the basic-auth
//! users file and JAAS file change, and broken files are tried: the worker serves the new
//! certificate to new connections, lets the new users in, keeps the old credentials over a bad
//! file, and neither restarts its task nor rebalances.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::secured::{call, https_client, Worker};
use common::*;

/// A key store (PKCS12, password `store-secret`) for a new certificate with common name `cn`,
/// signed by the secured broker's CA, usable as a server and as a client certificate for
/// 127.0.0.1.
fn new_keystore(s: &Secure, dir: &Path, cn: &str) -> std::path::PathBuf {
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    std::fs::write(
        dir.join(format!("{cn}.ext")),
        "basicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature, keyEncipherment\nextendedKeyUsage = serverAuth, clientAuth\nsubjectAltName = IP:127.0.0.1, DNS:localhost\n",
    )
    .unwrap();
    let (key, csr, cert, chain, p12) = (
        format!("{cn}-key.pem"),
        format!("{cn}.csr"),
        format!("{cn}-cert.pem"),
        format!("{cn}-chain.pem"),
        format!("{cn}.p12"),
    );
    run(&[
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-noenc",
        "-subj",
        &format!("/O=Tributary tests/CN={cn}"),
        "-keyout",
        &key,
        "-out",
        &csr,
    ]);
    let serial = format!(
        "0x{:032x}",
        u128::from(std::process::id()) << 64 | u128::from(cn.len() as u32)
    );
    run(&[
        "x509",
        "-req",
        "-in",
        &csr,
        "-CA",
        &s.var("KAFKA_SECURE_CA_PEM"),
        "-CAkey",
        &s.var("KAFKA_SECURE_CA_KEY_PEM"),
        "-set_serial",
        &serial,
        "-days",
        "30",
        "-sha256",
        "-extfile",
        &format!("{cn}.ext"),
        "-out",
        &cert,
    ]);
    let mut chained = std::fs::read_to_string(dir.join(&cert)).unwrap();
    chained.push_str(&std::fs::read_to_string(s.var("KAFKA_SECURE_CA_PEM")).unwrap());
    std::fs::write(dir.join(&chain), chained).unwrap();
    run(&[
        "pkcs12",
        "-export",
        "-name",
        cn,
        "-in",
        &chain,
        "-inkey",
        &key,
        "-passout",
        "pass:store-secret",
        "-out",
        &p12,
    ]);
    dir.join(p12)
}

/// Moves `from` into place at `to` (a rename, as rotation tools do).
fn move_into_place(from: &Path, to: &Path) {
    let staged = to.with_extension("staged");
    std::fs::copy(from, &staged).unwrap();
    std::fs::rename(&staged, to).unwrap();
}

/// The subject of the certificate a new TLS connection to `url` is given.
fn served_subject(url: &str) -> String {
    let host_port = url.trim_start_matches("https://").trim_end_matches('/');
    let out = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            host_port,
            "-servername",
            "localhost",
            "-showcerts",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.trim_start().starts_with("0 s:"))
        .map(str::to_string)
        .unwrap_or_default()
}

#[test]
fn credentials_are_rotated_without_a_restart() {
    let Some(s) = secure() else { return };
    let dir = test_dir();
    let d = dir.path();
    let certs = d.join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    // The files the worker reads, copied so that the test can replace them.
    let rest_store = d.join("rest.p12");
    std::fs::copy(s.var("KAFKA_SECURE_WORKER_KEYSTORE_P12"), &rest_store).unwrap();
    let client_store = d.join("client.p12");
    std::fs::copy(s.var("KAFKA_SECURE_CLIENT_KEYSTORE_P12"), &client_store).unwrap();
    let auth = RestBasicAuth::write(d, &[("admin", "admin-pw"), ("old", "old-pw")]);
    let users = d.join("users.properties");
    let jaas = auth
        .kafka_opts
        .split('=')
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap();
    let group = unique("rotation");
    let props = format!(
        "{}security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={ca}\nssl.keystore.type=PKCS12\nssl.keystore.location={client}\nssl.keystore.password=store-secret\n\
         {clients}\
         listeners=https://127.0.0.1:0\nlisteners.https.ssl.keystore.type=PKCS12\nlisteners.https.ssl.keystore.location={rest}\nlisteners.https.ssl.keystore.password=store-secret\n\
         rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension\n",
        distributed_properties(&s.mtls, &group, "").replace("listeners=http://127.0.0.1:0\n", ""),
        ca = s.var("KAFKA_SECURE_CA_PEM"),
        client = client_store.display(),
        clients = ["producer.", "consumer.", "admin."]
            .map(|p| format!(
                "{p}security.protocol=SSL\n{p}ssl.truststore.type=PEM\n{p}ssl.truststore.location={}\n{p}ssl.keystore.type=PKCS12\n{p}ssl.keystore.location={}\n{p}ssl.keystore.password=store-secret\n",
                s.var("KAFKA_SECURE_CA_PEM"),
                client_store.display()
            ))
            .concat(),
        rest = rest_store.display(),
    );
    let w = Worker::start(&d.join("w1"), "distributed", &props, Some(&auth.kafka_opts));
    let http = https_client(&s);
    let admin = basic_authorization("admin", "admin-pw");
    let get =
        |path: &str, who: &str| call(&http, "GET", &format!("{}{path}", w.url), Some(who), None);
    let generation = wait_for("the worker to join", Duration::from_secs(90), || {
        let (_, v) = get("/tributary/worker", &admin);
        let v: serde_json::Value = serde_json::from_str(&v).unwrap_or_default();
        v["generation"].as_i64().filter(|g| *g > 0)
    });
    // A source whose task must run through all of it.
    let topic = unique("rotation");
    let config = format!(
        r#"{{"connector.class":"io.tributary.connect.testing.FlakySourceConnector","topic":"{topic}","tasks.max":"1","records.per.second":"50"}}"#
    );
    let (code, body) = call(
        &http,
        "PUT",
        &format!("{}/connectors/before/config", w.url),
        Some(&admin),
        Some(config.clone()),
    );
    assert_eq!(code, 201, "{body}");
    let starts = |name: &str| {
        let (_, v) = get("/tributary/task-counters", &admin);
        let v: serde_json::Value = serde_json::from_str(&v).unwrap_or_default();
        v[format!("{name}-0")]["starts"].as_u64()
    };
    wait_for("the task to start", Duration::from_secs(60), || {
        starts("before")
    });
    // The generation the task started in (a worker's generation is set when it joins, before
    // it starts what it was given): any rebalance from here on moves it.
    let generation_now = || {
        let (_, v) = get("/tributary/worker", &admin);
        let v: serde_json::Value = serde_json::from_str(&v).unwrap_or_default();
        v["generation"].as_i64()
    };
    let running_in = generation_now();
    assert!(running_in.is_some());
    assert!(
        served_subject(&w.url).contains("CN = tributary-worker"),
        "{}",
        served_subject(&w.url)
    );

    // The REST listener's certificate: a new one moved into place is served to new connections.
    let rest_two = new_keystore(&s, &certs, "rest-two");
    move_into_place(&rest_two, &rest_store);
    wait_for("the new REST certificate", Duration::from_secs(30), || {
        served_subject(&w.url)
            .contains("CN = rest-two")
            .then_some(())
    });
    // A broken store keeps the last good certificate.
    std::fs::write(&rest_store, b"not a key store").unwrap();
    wait_for("the broken store noticed", Duration::from_secs(30), || {
        std::fs::read_to_string(&w.log)
            .unwrap()
            .contains("the previous certificate stays in force")
            .then_some(())
    });
    assert!(served_subject(&w.url).contains("CN = rest-two"));
    assert_eq!(get("/connectors", &admin).0, 200);

    // Basic auth: a user added, one removed; then a broken JAAS file keeps them as they were.
    std::fs::write(&users, "admin: admin-pw\nnewbie: newbie-pw\n").unwrap();
    let newbie = basic_authorization("newbie", "newbie-pw");
    wait_for("the new user let in", Duration::from_secs(30), || {
        (get("/connectors", &newbie).0 == 200).then_some(())
    });
    assert_eq!(
        get("/connectors", &basic_authorization("old", "old-pw")).0,
        401
    );
    let jaas_text = std::fs::read_to_string(&jaas).unwrap();
    std::fs::write(&jaas, "KafkaConnect { broken").unwrap();
    wait_for(
        "the broken JAAS file noticed",
        Duration::from_secs(30),
        || {
            std::fs::read_to_string(&w.log)
                .unwrap()
                .contains("the previous basic-auth credentials stay in force")
                .then_some(())
        },
    );
    assert_eq!(get("/connectors", &newbie).0, 200);
    std::fs::write(&jaas, jaas_text).unwrap();

    // The Kafka clients' key store: a new client certificate (CN=connect, as the broker's ACLs
    // want) moved into place; a connector created afterwards produces with it.
    let client_two = new_keystore(&s, &certs, "connect");
    move_into_place(&client_two, &client_store);
    wait_for(
        "the client stores reloaded",
        Duration::from_secs(30),
        || {
            std::fs::read_to_string(&w.log)
                .unwrap()
                .contains("Kafka key and trust stores were reloaded")
                .then_some(())
        },
    );
    assert_eq!(
        generation_now(),
        running_in,
        "a rotation made the worker rebalance"
    );
    let after = config.replace(&topic, &unique("rotation-after"));
    let (code, body) = call(
        &http,
        "PUT",
        &format!("{}/connectors/after/config", w.url),
        Some(&admin),
        Some(after),
    );
    assert_eq!(code, 201, "{body}");
    wait_for(
        "the new connector's task to produce",
        Duration::from_secs(90),
        || {
            let (_, v) = get("/tributary/task-counters", &admin);
            let v: serde_json::Value = serde_json::from_str(&v).unwrap_or_default();
            (v["after-0"]["records"].as_u64().unwrap_or(0) > 0).then_some(())
        },
    );

    // Through all of it the first task ran on, never restarted.
    assert_eq!(starts("before"), Some(1), "the task was restarted");
    let (_, v) = get("/connectors/before/status", &admin);
    assert!(v.contains("RUNNING") && !v.contains("FAILED"), "{v}");
    let (_, info) = get("/tributary/worker", &admin);
    let info: serde_json::Value = serde_json::from_str(&info).unwrap();
    assert!(info["generation"].as_i64().unwrap() >= generation, "{info}");
}
