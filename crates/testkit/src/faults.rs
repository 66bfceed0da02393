//! Fault injection for tests: a broker of a test's own (so stopping it touches no other test)
//! and a TCP proxy that can cut a worker off from the broker.

use std::collections::BTreeMap;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

fn repo_root() -> PathBuf {
    crate::repo_root()
}

/// Ports handed out by [`free_port`] come from below the kernel's ephemeral range (Linux's
/// default starts at 32768): a port found free there cannot be taken, between the check and the
/// process that binds it, by some client's outgoing connection, as a port the kernel picked for
/// a `bind(0)` can.
const FREE_PORTS: std::ops::Range<u16> = 20000..32000;

/// The next candidate port: a per-process cursor starting at a point derived from the process
/// id and the clock, so threads of one test binary never get the same port and two binaries
/// rarely start at the same place.
fn next_candidate() -> u16 {
    static CURSOR: std::sync::OnceLock<AtomicU64> = std::sync::OnceLock::new();
    let cursor = CURSOR.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos() as u64)
            .unwrap_or(0);
        AtomicU64::new(nanos ^ (std::process::id() as u64).wrapping_mul(7919))
    });
    let span = (FREE_PORTS.end - FREE_PORTS.start) as u64;
    // Steps of 2 keep `p + 1` (a broker's controller) out of the next candidate.
    FREE_PORTS.start + (cursor.fetch_add(2, Ordering::Relaxed) % span) as u16
}

/// A free port on 127.0.0.1 for a process the test starts (a broker, a Java worker, a
/// registry): free when this returns, and outside the range outgoing connections draw from.
pub fn free_port() -> u16 {
    free_ports(1)
}

/// A port `p` such that `p .. p + count` are all free on 127.0.0.1 (see [`free_port`]).
pub fn free_ports(count: u16) -> u16 {
    for _ in 0..5000 {
        let p = next_candidate();
        let held: Option<Vec<TcpListener>> = (0..count)
            .map(|i| TcpListener::bind(("127.0.0.1", p + i)).ok())
            .collect();
        if held.is_some() {
            return p;
        }
    }
    panic!("no {count} consecutive free ports in {FREE_PORTS:?}");
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
        free_ports(2)
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
        // Best effort in a drop: say so when the broker could not be stopped.
        if let Err(e) = Command::new(repo_root().join("scripts/kafka"))
            .arg("stop")
            .env("KAFKA_PORT", self.port.to_string())
            .env("KAFKA_HOME_DIR", &self.home)
            .status()
        {
            eprintln!("cannot stop the test broker on port {}: {e}", self.port);
        }
    }
}

/// Copies `from` to `to`, each chunk after the proxy's current latency, until either side ends.
fn forward(from: &mut TcpStream, to: &mut TcpStream, latency_ms: &AtomicU64) {
    use std::io::{Read, Write};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let ms = latency_ms.load(Ordering::Acquire);
        if ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        if to.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// A TCP proxy on 127.0.0.1 that forwards to a target port until cut: then it closes every
/// connection and drops new ones at once, as a network partition between the clients behind it
/// and the target would look to them; restoring lets connections through again.
pub struct CutProxy {
    pub port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    /// Milliseconds each chunk waits before it is forwarded, either way (a slow link).
    latency_ms: Arc<AtomicU64>,
}

impl CutProxy {
    /// Listens on a free port now; forwards to `target` (which may start listening later).
    pub fn start(target: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let latency_ms = Arc::new(AtomicU64::new(0));
        let (c, o, lat) = (cut.clone(), open.clone(), latency_ms.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if c.load(Ordering::Acquire) {
                    client.shutdown(Shutdown::Both).ok(); // refused either way
                    continue;
                }
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    client.shutdown(Shutdown::Both).ok(); // refused either way
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
                let (lat1, lat2) = (lat.clone(), lat.clone());
                std::thread::spawn(move || {
                    forward(&mut c_read, &mut s_write, &lat1);
                    s_write.shutdown(Shutdown::Both).ok(); // may be closed already
                });
                std::thread::spawn(move || {
                    forward(&mut s_read, &mut c_write, &lat2);
                    c_write.shutdown(Shutdown::Both).ok(); // may be closed already
                });
            }
        });
        CutProxy {
            port,
            cut,
            open,
            latency_ms,
        }
    }

    /// Delays every chunk by `ms` milliseconds from now on (0: none).
    pub fn set_latency_ms(&self, ms: u64) {
        self.latency_ms.store(ms, Ordering::Release);
    }

    /// Cuts every connection and refuses new ones.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::Release);
        for s in self.open.lock().unwrap().drain(..) {
            s.shutdown(Shutdown::Both).ok(); // may be closed already
        }
    }

    /// Lets connections through again.
    pub fn restore(&self) {
        self.cut.store(false, Ordering::Release);
    }
}

/// Appends `* <pid> killed <ms>` to a lifecycle file: the process was SIGKILLed now, so the
/// tasks it ran ended with it.
pub fn record_kill(lifecycle: &Path, pid: u32) {
    use std::io::Write;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(lifecycle)
        .unwrap();
    writeln!(f, "* {pid} killed {now}").unwrap();
}

/// Every task's running intervals per process must be disjoint across processes. Returns the
/// intervals (task → [(pid, start, stop)]), an open interval ending at `u128::MAX`.
pub fn check_no_overlap(lifecycle: &Path) -> BTreeMap<u32, Vec<(u32, u128, u128)>> {
    let text = std::fs::read_to_string(lifecycle).unwrap_or_default();
    let mut events: BTreeMap<u32, Vec<(u128, u32, bool)>> = BTreeMap::new();
    let mut kills: Vec<(u32, u128)> = Vec::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(f.len(), 4, "lifecycle line {l:?}");
        if f[0] == "*" {
            // `* <pid> killed <ms>`: the process died then, with every task it ran.
            kills.push((f[1].parse().unwrap(), f[3].parse().unwrap()));
            continue;
        }
        let (task, pid, start, at) = (
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2] == "start",
            f[3].parse().unwrap(),
        );
        events.entry(task).or_default().push((at, pid, start));
    }
    for evs in events.values_mut() {
        for (pid, at) in &kills {
            evs.push((*at, *pid, false));
        }
    }
    let mut intervals: BTreeMap<u32, Vec<(u32, u128, u128)>> = BTreeMap::new();
    for (task, mut evs) in events {
        // Stable: events of one millisecond keep the order they were written in.
        evs.sort_by_key(|e| e.0);
        let mut open: BTreeMap<u32, u128> = BTreeMap::new();
        let list = intervals.entry(task).or_default();
        for (at, pid, start) in evs {
            if start {
                open.insert(pid, at);
            } else if let Some(s) = open.remove(&pid) {
                list.push((pid, s, at));
            }
        }
        list.extend(open.into_iter().map(|(pid, s)| (pid, s, u128::MAX)));
        for (i, a) in list.iter().enumerate() {
            for b in &list[i + 1..] {
                assert!(
                    a.0 == b.0 || a.2 <= b.1 || b.2 <= a.1,
                    "task {task} ran in processes {} and {} at once: {a:?} and {b:?}",
                    a.0,
                    b.0
                );
            }
        }
    }
    intervals
}

/// A broker of the test's own with a second listener that only `proxy` reaches: clients
/// bootstrapped at `proxy`'s address talk to the broker through it alone.
pub fn broker_behind_proxy(dir: &Path) -> (OwnBroker, CutProxy) {
    let port = OwnBroker::pick_port();
    let behind = loop {
        let q = free_port();
        if q != port && q != port + 1 {
            break q;
        }
    };
    let proxy = CutProxy::start(behind);
    let extra = format!(
        "listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{},PROXIED://127.0.0.1:{behind}\nadvertised.listeners=PLAINTEXT://127.0.0.1:{port},PROXIED://127.0.0.1:{}\nlistener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,PROXIED:PLAINTEXT\n",
        port + 1,
        proxy.port
    );
    (OwnBroker::start_on(dir, port, &extra), proxy)
}
