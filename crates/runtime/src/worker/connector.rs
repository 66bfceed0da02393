//! A running connector instance (Connect's `WorkerConnector`): the [`Connector`] lives on its
//! own thread, since its calls may block, and the worker drives it with commands.
//!
//! `start` and `stop` are asynchronous, as Connect's target-state transitions are: the caller
//! hands a completion callback and returns at once, so a connector whose `start` blocks holds up
//! nobody but itself (no herder or worker lock waits for it). `task_configs` waits for its
//! answer. `shutdown` waits at most a given time for the thread to finish, then abandons it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tributary_api::connector::{Connector, ConnectorContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::task::catch_panic;

/// Called on the connector's thread with the outcome of a `start` or `stop`.
pub type Completion = Box<dyn FnOnce(ConnectResult<()>) + Send>;

enum Command {
    Start(Props, Completion),
    Stop(Completion),
    TaskConfigs(usize, mpsc::Sender<ConnectResult<Vec<Props>>>),
    Shutdown,
}

/// Handle to a connector thread; shareable (`&self` everywhere).
pub struct WorkerConnector {
    tx: Mutex<mpsc::Sender<Command>>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// Whether `start` succeeded and `stop` was not called since.
    started: Arc<AtomicBool>,
    /// False once `shutdown` began: completions that arrive later must not report anything.
    live: Arc<AtomicBool>,
}

impl WorkerConnector {
    /// Spawns the thread owning `connector` and initializes it with `context`.
    pub fn spawn(
        name: &str,
        mut connector: Box<dyn Connector>,
        context: Arc<dyn ConnectorContext>,
    ) -> WorkerConnector {
        let (tx, rx) = mpsc::channel::<Command>();
        let label = format!("connector {name}");
        let started = Arc::new(AtomicBool::new(false));
        let flag = started.clone();
        let thread = std::thread::Builder::new()
            .name(format!("connector-{name}"))
            .spawn(move || {
                if let Err(e) = catch_panic(&label, || {
                    connector.initialize(context);
                    Ok(())
                }) {
                    tracing::error!(connector = %label, error = %e, "initialize failed");
                }
                while let Ok(cmd) = rx.recv() {
                    match cmd {
                        Command::Start(props, done) => {
                            let r = catch_panic(&label, || connector.start(&props));
                            flag.store(r.is_ok(), Ordering::Release);
                            done(r);
                        }
                        Command::Stop(done) => {
                            if flag.swap(false, Ordering::AcqRel) {
                                done(catch_panic(&label, || connector.stop()));
                            } else {
                                done(Ok(()));
                            }
                        }
                        Command::TaskConfigs(max, reply) => {
                            // The receiver may have given up waiting; nothing to do then.
                            let _ignored =
                                reply.send(catch_panic(&label, || connector.task_configs(max)));
                        }
                        Command::Shutdown => break,
                    }
                }
            })
            .expect("spawning a connector thread");
        WorkerConnector {
            tx: Mutex::new(tx),
            thread: Mutex::new(Some(thread)),
            started,
            live: Arc::new(AtomicBool::new(true)),
        }
    }

    fn send(&self, cmd: Command) -> Result<(), Command> {
        self.tx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(cmd)
            .map_err(|e| e.0)
    }

    /// Whether the instance is started (its `start` succeeded and it was not stopped since).
    pub fn is_started(&self) -> bool {
        self.started.load(Ordering::Acquire)
    }

    /// Whether this instance is still in service (no `shutdown` yet). Completions check it
    /// before reporting.
    pub fn liveness(&self) -> Arc<AtomicBool> {
        self.live.clone()
    }

    /// `Connector.start(props)` on the connector's thread; `done` gets the outcome there.
    pub fn start(&self, props: Props, done: Completion) {
        if let Err(Command::Start(_, done)) = self.send(Command::Start(props, done)) {
            done(Err(ConnectError::connect("connector thread is gone")));
        }
    }

    /// `Connector.stop()` on the connector's thread (only if started); `done` gets the outcome.
    pub fn stop(&self, done: Completion) {
        if let Err(Command::Stop(done)) = self.send(Command::Stop(done)) {
            done(Ok(()));
        }
    }

    /// `Connector.taskConfigs(max)`, waiting for the answer.
    pub fn task_configs(&self, max: usize) -> ConnectResult<Vec<Props>> {
        let (reply_tx, reply_rx) = mpsc::channel();
        self.send(Command::TaskConfigs(max, reply_tx))
            .map_err(|_| ConnectError::connect("connector thread is gone"))?;
        reply_rx
            .recv()
            .map_err(|_| ConnectError::connect("connector thread is gone"))?
    }

    /// Stops the connector if started and ends its thread, waiting at most `timeout` for both
    /// (Connect's graceful connector shutdown). Errors: the connector's `stop` failed, or the
    /// thread was still busy after `timeout` (it is then abandoned: it finishes on its own and
    /// reports nothing).
    pub fn shutdown(&self, timeout: Duration) -> ConnectResult<()> {
        self.live.store(false, Ordering::Release);
        let (tx, rx) = mpsc::channel();
        self.stop(Box::new(move |r| {
            let _receiver_may_be_gone = tx.send(r);
        }));
        let _thread_may_be_gone = self.send(Command::Shutdown);
        let deadline = Instant::now() + timeout;
        let stopped = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .map_err(|_| {
                ConnectError::connect(format!(
                    "the connector did not stop within {} ms; abandoning it",
                    timeout.as_millis()
                ))
            })?;
        let handle = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(t) = handle {
            while !t.is_finished() && Instant::now() < deadline {
                // On the herder's blocking thread, polling the connector thread's end.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() && t.join().is_err() {
                tracing::error!("a connector thread panicked outside a plugin call");
            }
        }
        stopped
    }
}
