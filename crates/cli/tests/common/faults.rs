//! Fault injection for tests: a broker of a test's own (so stopping it touches no other test)
//! and a TCP proxy that can cut a worker off from the broker.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A free port on 127.0.0.1 (the kernel's choice; free when this returns).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A broker of this test's own, started and stopped through `scripts/kafka` (data and log in
/// the test directory).
pub struct OwnBroker {
    pub port: u16,
    pub home: PathBuf,
    extra: String,
}

impl OwnBroker {
    /// Runs `scripts/kafka <what>` for this broker; panics (naming its log) when it fails.
    pub fn run(&self, what: &str) {
        let status = Command::new(repo_root().join("scripts/kafka"))
            .arg(what)
            .env("KAFKA_PORT", self.port.to_string())
            .env("KAFKA_HOME_DIR", &self.home)
            .env("KAFKA_EXTRA_PROPERTIES", &self.extra)
            .status()
            .expect("running scripts/kafka");
        assert!(
            status.success(),
            "scripts/kafka {what} failed; its log: {}",
            self.home.join("kafka.log").display()
        );
    }

    /// A port whose successor (the controller's) is free too.
    pub fn pick_port() -> u16 {
        loop {
            let p = free_port();
            if p < 65000 && TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
                return p;
            }
        }
    }

    /// Starts a broker on a free port; `extra` lines go into its server.properties.
    pub fn start(dir: &Path, extra: &str) -> OwnBroker {
        Self::start_on(dir, Self::pick_port(), extra)
    }

    /// Starts a broker on `port` (and `port + 1` for its controller).
    pub fn start_on(dir: &Path, port: u16, extra: &str) -> OwnBroker {
        let b = OwnBroker {
            port,
            home: dir.join("broker"),
            extra: extra.to_string(),
        };
        b.run("start");
        b
    }

    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for OwnBroker {
    fn drop(&mut self) {
        let _ = Command::new(repo_root().join("scripts/kafka"))
            .arg("stop")
            .env("KAFKA_PORT", self.port.to_string())
            .env("KAFKA_HOME_DIR", &self.home)
            .status();
    }
}

/// A TCP proxy on 127.0.0.1 that forwards to a target port until cut: then it closes every
/// connection and drops new ones at once, as a network partition between the clients behind it
/// and the target would look to them; restoring lets connections through again.
pub struct CutProxy {
    pub port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl CutProxy {
    /// Listens on a free port now; forwards to `target` (which may start listening later).
    pub fn start(target: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (c, o) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if c.load(Ordering::Acquire) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let pipes = (
                    client.try_clone(),
                    server.try_clone(),
                    client.try_clone(),
                    server.try_clone(),
                );
                let (Ok(mut c_read), Ok(mut s_write), Ok(mut c_write), Ok(mut s_read)) = pipes
                else {
                    continue;
                };
                {
                    let mut list = o.lock().unwrap();
                    list.push(client);
                    list.push(server);
                }
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut c_read, &mut s_write);
                    let _ = s_write.shutdown(Shutdown::Both);
                });
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut s_read, &mut c_write);
                    let _ = c_write.shutdown(Shutdown::Both);
                });
            }
        });
        CutProxy { port, cut, open }
    }

    /// Cuts every connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::Release);
    }
}
