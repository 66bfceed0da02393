//! Headless Chromium driven over the Chrome DevTools Protocol on a pipe
//! (`--remote-debugging-pipe`: the browser reads commands from fd 3 and writes answers and
//! events to fd 4, each message JSON ended by a NUL byte), for tests that click in a page and
//! read what it shows, not just a DOM dump. One page per browser.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Chromium's flags for a headless run in a container (no sandbox, GPU or `/dev/shm`), shared
/// with the DOM-dump runs of the live view's tests.
pub const HEADLESS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
];

/// A browser with one page attached.
pub struct Browser {
    child: Child,
    commands: std::process::ChildStdin,
    messages: Receiver<Value>,
    next_id: u64,
    session: String,
}

impl Browser {
    /// Starts `binary` headless with a profile in `profile` and a 1280×`height` page.
    pub fn launch(binary: &Path, profile: &Path, height: u32) -> Browser {
        // The shell moves the pipes on stdin and stdout to fds 3 and 4, then execs the browser.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#)
            .arg(binary)
            .args(HEADLESS)
            .arg("--remote-debugging-pipe")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting chromium");
        let commands = child.stdin.take().unwrap();
        let messages_out = child.stdout.take().unwrap();
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(messages_out);
            loop {
                let mut buf = Vec::new();
                match reader.read_until(0, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {
                        buf.pop();
                        if let Ok(v) = serde_json::from_slice::<Value>(&buf) {
                            if tx.send(v).is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        });
        let mut browser = Browser {
            child,
            commands,
            messages,
            next_id: 0,
            session: String::new(),
        };
        let target = browser.send(None, "Target.createTarget", json!({"url": "about:blank"}));
        let target_id = target["targetId"].as_str().unwrap().to_string();
        let attached = browser.send(
            None,
            "Target.attachToTarget",
            json!({"targetId": target_id, "flatten": true}),
        );
        browser.session = attached["sessionId"].as_str().unwrap().to_string();
        browser.call("Page.enable", json!({}));
        browser.call("Network.enable", json!({}));
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        );
        browser
    }

    fn send(&mut self, session: Option<String>, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = s.into();
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.commands
            .write_all(&bytes)
            .expect("writing to chromium");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .messages
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chromium did not answer {method}"));
            if v["id"].as_u64() == Some(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v["result"].clone();
            }
        }
    }

    /// A command to the page (`Domain.method`), its result.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let session = self.session.clone();
        self.send(Some(session), method, params)
    }

    /// Every request the page makes carries these headers from now on (e.g. a basic-auth
    /// `Authorization`).
    pub fn set_headers(&mut self, headers: Value) {
        self.call("Network.setExtraHTTPHeaders", json!({ "headers": headers }));
    }

    /// Loads `url` and waits until it has loaded.
    pub fn navigate(&mut self, url: &str) {
        let r = self.call("Page.navigate", json!({ "url": url }));
        assert!(r.get("errorText").is_none(), "loading {url}: {r}");
        crate::common::wait_for(&format!("{url} to load"), Duration::from_secs(60), || {
            let state = self.eval("location.href === 'about:blank' ? '' : document.readyState");
            (state == "complete").then_some(())
        });
    }

    /// The value of the JavaScript `expression` in the page (a promise is awaited).
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression} threw: {r}"
        );
        r["result"]["value"].clone()
    }

    /// A PNG of the whole page.
    pub fn screenshot(&mut self) -> Vec<u8> {
        use base64::Engine;
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        );
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Closed as a user closes it (its renderer processes go with it), killed if it does
        // not exit within 10 s; best effort, the browser may have exited already.
        let close = b"{\"id\":0,\"method\":\"Browser.close\"}\0";
        if self.commands.write_all(close).is_ok() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if !matches!(self.child.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
