//! `admin.listeners` (KIP-495): the `/admin` endpoints on their own listener, or disabled by an
//! empty value; unset, they stay on `listeners`.

use crate::common;

use std::time::Duration;

use common::*;

fn admin_url(w: &StandaloneWorker) -> String {
    let re = regex::Regex::new(r"admin REST endpoints listening on (https?://\S+)").unwrap();
    wait_for("the admin listener", Duration::from_secs(30), || {
        re.captures(&w.log_text()).map(|c| c[1].to_string())
    })
}

fn status(url: &str) -> u16 {
    reqwest::blocking::get(url).unwrap().status().as_u16()
}

#[test]
fn admin_endpoints_move_to_their_own_listener_or_are_disabled() {
    let Some(bootstrap) = kafka() else { return };
    // Unset: /admin on the main listener.
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "", &[]);
    assert_eq!(status(&format!("{}/admin/loggers", w.url)), 200);
    drop(w);
    // Their own listener: only /admin there, and no /admin on the main one.
    let dir = test_dir();
    let w = StandaloneWorker::start(
        dir.path(),
        &bootstrap,
        "admin.listeners=http://127.0.0.1:0",
        &[],
    );
    let admin = admin_url(&w);
    assert_ne!(admin, w.url);
    assert_eq!(status(&format!("{admin}/admin/loggers")), 200);
    assert_eq!(status(&format!("{admin}/connectors")), 404);
    assert_eq!(status(&format!("{}/admin/loggers", w.url)), 404);
    assert_eq!(status(&format!("{}/connectors", w.url)), 200);
    drop(w);
    // Empty: disabled.
    let dir = test_dir();
    let w = StandaloneWorker::start(dir.path(), &bootstrap, "admin.listeners=", &[]);
    assert_eq!(status(&format!("{}/admin/loggers", w.url)), 404);
    assert_eq!(status(&format!("{}/connectors", w.url)), 200);
    assert!(!w.log_text().contains("admin REST endpoints listening"));
}
