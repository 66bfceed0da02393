//! A connector instance (Connect's `WorkerConnector`): while started, the [`Connector`] lives on
//! a thread of its own, since its calls may block, and the worker drives it with commands.
//!
//! The thread exists only while it has work: it is spawned by a command that needs the
//! connector (`start`; `task_configs` and `stop` of a started connector), and once no command
//! waits the thread parks the instance and ends. A connector thus holds a thread only while one
//! of its calls runs, however many connectors a worker has (Connect calls them from the herder's
//! thread, so no connector counts on a thread of its own); the next command spawns one again
//! for the same instance.
//!
//! `start` and `stop` are asynchronous, as Connect's target-state transitions are: the caller
//! hands a completion callback and returns at once, so a connector whose `start` blocks holds up
//! nobody but itself (no herder or worker lock waits for it). `task_configs` waits for its
//! answer. [`WorkerConnector::begin_shutdown`] stops the connector without waiting, and
//! [`ShutdownWait::wait`] then waits at most until a deadline, so many connectors stop in
//! parallel; an instance still busy by then is abandoned.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tributary_api::connector::{Connector, ConnectorContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::task::catch_panic;

/// Called on the connector's thread with the outcome of a `start` or `stop`.
pub type Completion = Box<dyn FnOnce(ConnectResult<()>) + Send>;

/// When [`WorkerConnector::send`] spawns a thread for a parked instance.
#[derive(Clone, Copy)]
enum Spawn {
    /// Always (`start`).
    Always,
    /// Only when the instance is started (`stop`, `task_configs`, the shutdown's `stop`).
    IfStarted,
}

enum Command {
    Start(Props, Completion),
    Stop(Completion),
    TaskConfigs(usize, mpsc::Sender<ConnectResult<Vec<Props>>>),
    Shutdown,
}

/// Where the connector instance is.
enum Slot {
    /// No thread: the instance waits here (never started, stopped, or started and idle; see
    /// [`Shared::started`]).
    Parked {
        connector: Box<dyn Connector>,
        /// Whether `initialize` was called (on the first thread, before the first command).
        initialized: bool,
    },
    /// A thread owns the instance; commands go through `tx`.
    Running {
        tx: mpsc::Sender<Command>,
        thread: JoinHandle<()>,
        /// Disconnected when the thread ends.
        ended: mpsc::Receiver<()>,
    },
    /// Shut down: nothing runs, commands are refused.
    Gone,
}

/// What the connector's thread shares with the handle.
struct Shared {
    name: String,
    context: Arc<dyn ConnectorContext>,
    slot: Mutex<Slot>,
    /// Whether `start` succeeded and `stop` was not called since.
    started: AtomicBool,
    /// Whether the worker failed the instance ([`WorkerConnector::fail`]) since it was last
    /// started: it is then not running, though its plugin was not stopped.
    failed: AtomicBool,
}

impl Shared {
    fn slot(&self) -> MutexGuard<'_, Slot> {
        // The slot is only ever replaced whole; a poisoned lock still holds a valid one.
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Handle to a connector instance; shareable (`&self` everywhere).
pub struct WorkerConnector {
    shared: Arc<Shared>,
    /// False once `shutdown` began: completions that arrive later must not report anything.
    live: Arc<AtomicBool>,
}

/// A shutdown in progress ([`WorkerConnector::begin_shutdown`]).
pub struct ShutdownWait {
    /// `None` when no thread ran the instance.
    pending: Option<PendingShutdown>,
    /// The connector's plugin metrics (KIP-877), closed once the wait ends, as Connect
    /// closes them after the connector's `stop`.
    metrics: tributary_api::metrics::PluginMetrics,
}

/// What a shutdown of an instance running on a thread waits for.
type PendingShutdown = (
    // The outcome of the connector's `stop`.
    mpsc::Receiver<ConnectResult<()>>,
    // Disconnected when the thread ended.
    mpsc::Receiver<()>,
    JoinHandle<()>,
);

impl ShutdownWait {
    /// Waits until the connector stopped and its thread ended, at most until `deadline`.
    /// Errors: the connector's `stop` failed, or the thread was still busy at the deadline (it
    /// is then abandoned: it finishes on its own and reports nothing).
    pub fn wait(self, deadline: Instant) -> ConnectResult<()> {
        let metrics = self.metrics.clone();
        let r = self.wait_stopped(deadline);
        metrics.close();
        r
    }

    fn wait_stopped(self, deadline: Instant) -> ConnectResult<()> {
        let Some((stopped, ended, thread)) = self.pending else {
            return Ok(());
        };
        let timed_out = |timeout: Duration| {
            ConnectError::connect(format!(
                "the connector did not stop within {} ms; abandoning it",
                timeout.as_millis()
            ))
        };
        let started_waiting = Instant::now();
        let stopped =
            match stopped.recv_timeout(deadline.saturating_duration_since(started_waiting)) {
                Ok(r) => r,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(timed_out(
                        deadline.saturating_duration_since(started_waiting),
                    ))
                }
                // The thread ended without running the stop (a panic outside a plugin call).
                Err(mpsc::RecvTimeoutError::Disconnected) => Ok(()),
            };
        // The thread ends right after `stop` (the shutdown command follows it).
        if let Err(mpsc::RecvTimeoutError::Disconnected) =
            ended.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if thread.join().is_err() {
                tracing::error!("a connector thread panicked outside a plugin call");
            }
        }
        stopped
    }
}

/// What a command's caller gets, handed over once the instance is where it goes next.
enum Outcome {
    /// A `start` or `stop` outcome for its completion.
    Done(Completion, ConnectResult<()>),
    /// The task configs for the waiting `task_configs` call.
    Reply(
        mpsc::Sender<ConnectResult<Vec<Props>>>,
        ConnectResult<Vec<Props>>,
    ),
}

/// The connector's thread: runs commands until shut down, or until no command waits (it then
/// parks the instance in the slot and ends).
fn run(
    shared: Arc<Shared>,
    mut connector: Box<dyn Connector>,
    initialized: bool,
    rx: mpsc::Receiver<Command>,
    _alive: mpsc::Sender<()>,
) {
    let label = format!("connector {}", shared.name);
    if !initialized {
        let context = shared.context.clone();
        if let Err(e) = catch_panic(&label, || {
            connector.initialize(context);
            Ok(())
        }) {
            tracing::error!(connector = %label, error = %e, "initialize failed");
        }
    }
    let mut next = rx.recv().ok();
    while let Some(cmd) = next.take() {
        // What the caller gets, handed over once the instance is parked if it is to be
        // (so that whoever sees the outcome finds the instance where it goes next).
        let outcome = match cmd {
            Command::Start(props, done) => {
                shared.failed.store(false, Ordering::Release);
                let r = catch_panic(&label, || connector.start(&props));
                shared.started.store(r.is_ok(), Ordering::Release);
                Outcome::Done(done, r)
            }
            Command::Stop(done) => {
                let r = if shared.started.swap(false, Ordering::AcqRel) {
                    catch_panic(&label, || connector.stop())
                } else {
                    Ok(())
                };
                Outcome::Done(done, r)
            }
            Command::TaskConfigs(max, reply) => {
                Outcome::Reply(reply, catch_panic(&label, || connector.task_configs(max)))
            }
            Command::Shutdown => return,
        };
        let report = |outcome: Outcome| match outcome {
            Outcome::Done(done, r) => done(r),
            // The receiver may have given up waiting; nothing to do then.
            Outcome::Reply(reply, r) => {
                let _ignored = reply.send(r);
            }
        };
        // Park the instance unless a command waits. Commands are only sent with the slot
        // locked, so none can arrive between this check and the parking.
        let mut slot = shared.slot();
        match rx.try_recv() {
            Ok(cmd) => {
                drop(slot);
                report(outcome);
                next = Some(cmd);
            }
            Err(_) => {
                if matches!(*slot, Slot::Running { .. }) {
                    // Dropping the `Running` slot detaches this thread's own handle.
                    *slot = Slot::Parked {
                        connector,
                        initialized: true,
                    };
                }
                drop(slot);
                report(outcome);
                return;
            }
        }
    }
}

impl WorkerConnector {
    /// A parked instance of `connector` (no thread yet); `context` is handed to its
    /// `initialize` on the first thread that runs it.
    pub fn new(
        name: &str,
        connector: Box<dyn Connector>,
        context: Arc<dyn ConnectorContext>,
    ) -> WorkerConnector {
        WorkerConnector {
            shared: Arc::new(Shared {
                name: name.to_string(),
                context,
                slot: Mutex::new(Slot::Parked {
                    connector,
                    initialized: false,
                }),
                started: AtomicBool::new(false),
                failed: AtomicBool::new(false),
            }),
            live: Arc::new(AtomicBool::new(true)),
        }
    }

    /// Hands `cmd` to the instance's thread, spawning one for a parked instance when `spawn`
    /// says so. Gives the command back when nothing runs it (shut down, parked and not
    /// spawning, or the thread could not be spawned).
    fn send(&self, cmd: Command, spawn: Spawn) -> Result<(), Command> {
        let mut slot = self.shared.slot();
        self.send_locked(&mut slot, cmd, spawn)
    }

    /// [`Self::send`] with the slot locked. Whether a parked instance is started is read here,
    /// under the lock: its thread records the outcome of a `start` or `stop` before it parks.
    fn send_locked(&self, slot: &mut Slot, cmd: Command, spawn: Spawn) -> Result<(), Command> {
        let spawn = match spawn {
            Spawn::Always => true,
            Spawn::IfStarted => self.is_started(),
        };
        match &*slot {
            Slot::Running { tx, .. } => {
                return match tx.send(cmd) {
                    Ok(()) => Ok(()),
                    // The thread ended on its own (a panic outside a plugin call).
                    Err(e) => {
                        *slot = Slot::Gone;
                        Err(e.0)
                    }
                };
            }
            Slot::Gone => return Err(cmd),
            Slot::Parked { .. } if !spawn => return Err(cmd),
            Slot::Parked { .. } => {}
        }
        let Slot::Parked {
            connector,
            initialized,
        } = std::mem::replace(slot, Slot::Gone)
        else {
            unreachable!("checked above")
        };
        let (tx, rx) = mpsc::channel();
        let (alive, ended) = mpsc::channel();
        let shared = self.shared.clone();
        // Every line the connector's thread logs names the connector (Connect's MDC
        // `connector.context`); an error-level span is enabled whatever the log level.
        let span = tracing::error_span!("connector", connector = %self.shared.name);
        let spawned = std::thread::Builder::new()
            .name(format!("connector-{}", self.shared.name))
            .spawn(move || span.in_scope(|| run(shared, connector, initialized, rx, alive)));
        match spawned {
            Ok(thread) => match tx.send(cmd) {
                Ok(()) => {
                    *slot = Slot::Running { tx, thread, ended };
                    Ok(())
                }
                // The new thread is gone already (a panic outside a plugin call).
                Err(e) => Err(e.0),
            },
            Err(e) => {
                // The instance went with the closure: it cannot run any more.
                tracing::error!(connector = %self.shared.name, "cannot spawn a connector thread: {e}");
                Err(cmd)
            }
        }
    }

    /// Whether the instance is started (its `start` succeeded and it was not stopped since).
    pub fn is_started(&self) -> bool {
        self.shared.started.load(Ordering::Acquire)
    }

    /// Whether the instance runs: started and not failed by the worker since (Connect's
    /// `WorkerConnector.isRunning`).
    pub fn is_running(&self) -> bool {
        self.is_started() && !self.is_failed()
    }

    /// Whether the worker failed the instance ([`Self::fail`]) since it was last started.
    pub fn is_failed(&self) -> bool {
        self.shared.failed.load(Ordering::Acquire)
    }

    /// Marks the instance failed (Connect's `WorkerConnector.fail`, e.g. when it generated more
    /// task configs than `tasks.max`): it no longer counts as running, so no task
    /// reconfiguration is attempted for it, until it is started again. The plugin itself is
    /// left as it is (stopped when the instance is stopped or shut down).
    pub fn fail(&self) {
        self.shared.failed.store(true, Ordering::Release);
    }

    /// Whether this instance is still in service (no `shutdown` yet). Completions check it
    /// before reporting.
    pub fn liveness(&self) -> Arc<AtomicBool> {
        self.live.clone()
    }

    /// `Connector.start(props)` on the connector's thread (spawned if needed); `done` gets the
    /// outcome there.
    pub fn start(&self, props: Props, done: Completion) {
        if let Err(Command::Start(_, done)) = self.send(Command::Start(props, done), Spawn::Always)
        {
            done(Err(ConnectError::connect("connector thread is gone")));
        }
    }

    /// `Connector.stop()` on the connector's thread (only if started); `done` gets the outcome.
    pub fn stop(&self, done: Completion) {
        // Parked and not started, or shut down: nothing to stop.
        if let Err(Command::Stop(done)) = self.send(Command::Stop(done), Spawn::IfStarted) {
            done(Ok(()));
        }
    }

    /// `Connector.taskConfigs(max)`, waiting for the answer. Errors when the connector is not
    /// running on a thread (parked: it is not started).
    pub fn task_configs(&self, max: usize) -> ConnectResult<Vec<Props>> {
        let (reply_tx, reply_rx) = mpsc::channel();
        self.send(Command::TaskConfigs(max, reply_tx), Spawn::IfStarted)
            .map_err(|_| ConnectError::connect("the connector is not started"))?;
        reply_rx
            .recv()
            .map_err(|_| ConnectError::connect("connector thread is gone"))?
    }

    /// Starts shutting the instance down without waiting: no completion reports anything any
    /// more, the connector is stopped if started and its thread ends. Wait for it with
    /// [`ShutdownWait::wait`] (Connect's graceful connector shutdown).
    pub fn begin_shutdown(&self) -> ShutdownWait {
        self.live.store(false, Ordering::Release);
        let metrics = self.shared.context.plugin_metrics();
        let (stopped_tx, stopped) = mpsc::channel();
        let stop = Command::Stop(Box::new(move |r| {
            let _receiver_may_be_gone = stopped_tx.send(r);
        }));
        // The commands go with the slot locked, so the thread cannot park meanwhile. A running
        // instance gets the stop queued; a started one parked between calls gets a thread of its
        // own for it (its `stop` may block); one that is not started has nothing to stop.
        let mut slot = self.shared.slot();
        let sent = self.send_locked(&mut slot, stop, Spawn::IfStarted).is_ok();
        match std::mem::replace(&mut *slot, Slot::Gone) {
            Slot::Running { tx, thread, ended } if sent => {
                if tx.send(Command::Shutdown).is_err() {
                    // The thread ended on its own: nothing runs the connector.
                    return ShutdownWait {
                        pending: None,
                        metrics,
                    };
                }
                ShutdownWait {
                    pending: Some((stopped, ended, thread)),
                    metrics,
                }
            }
            // Not started (parked), gone, or its thread ended on its own: dropping the
            // instance is all there is to do.
            _ => ShutdownWait {
                pending: None,
                metrics,
            },
        }
    }

    /// Stops the connector if started and ends its thread, waiting at most `timeout` for both.
    /// Errors as [`ShutdownWait::wait`].
    pub fn shutdown(&self, timeout: Duration) -> ConnectResult<()> {
        let deadline = Instant::now() + timeout;
        self.begin_shutdown().wait(deadline)
    }
}

#[cfg(test)]
mod tests {
    use tributary_api::config::ConfigDef;
    use tributary_api::connector::ConnectorType;

    use super::*;

    /// A generous bound for things that happen at once (not a timing assertion).
    const PATIENCE: Duration = Duration::from_secs(30);

    /// Records each call with the name of the thread it ran on; `stop` waits for `release`
    /// when given.
    struct Recording {
        calls: Arc<Mutex<Vec<(String, String)>>>,
        release: Option<mpsc::Receiver<()>>,
    }

    impl Recording {
        fn record(&self, call: &str) {
            let thread = std::thread::current().name().unwrap_or("").to_string();
            self.calls.lock().unwrap().push((call.to_string(), thread));
        }
    }

    impl Connector for Recording {
        fn version(&self) -> String {
            "1".into()
        }
        fn connector_type(&self) -> ConnectorType {
            ConnectorType::Source
        }
        fn task_class(&self) -> String {
            "T".into()
        }
        fn initialize(&mut self, _context: Arc<dyn ConnectorContext>) {
            self.record("initialize");
        }
        fn start(&mut self, _props: &Props) -> ConnectResult<()> {
            self.record("start");
            Ok(())
        }
        fn task_configs(&mut self, _max_tasks: usize) -> ConnectResult<Vec<Props>> {
            self.record("task_configs");
            Ok(vec![Props::new()])
        }
        fn stop(&mut self) -> ConnectResult<()> {
            self.record("stop");
            if let Some(release) = &self.release {
                // The test releases it, or gives up (dropping the sender).
                release.recv().ok();
            }
            Ok(())
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new()
        }
    }

    struct NoContext;

    impl ConnectorContext for NoContext {
        fn request_task_reconfiguration(&self) {}
        fn raise_error(&self, _message: String) {}
    }

    type Calls = Arc<Mutex<Vec<(String, String)>>>;

    fn connector(release: Option<mpsc::Receiver<()>>) -> (WorkerConnector, Calls) {
        let calls: Calls = Arc::default();
        let wc = WorkerConnector::new(
            "c",
            Box::new(Recording {
                calls: calls.clone(),
                release,
            }),
            Arc::new(NoContext),
        );
        (wc, calls)
    }

    fn has_thread(wc: &WorkerConnector) -> bool {
        matches!(*wc.shared.slot(), Slot::Running { .. })
    }

    /// Runs `f` with a completion and waits for its outcome.
    fn completed(f: impl FnOnce(Completion)) -> ConnectResult<()> {
        let (tx, rx) = mpsc::channel();
        f(Box::new(move |r| {
            tx.send(r).unwrap();
        }));
        rx.recv_timeout(PATIENCE).expect("a completion")
    }

    fn names(calls: &Calls) -> Vec<String> {
        calls
            .lock()
            .unwrap()
            .iter()
            .map(|(c, _)| c.clone())
            .collect()
    }

    #[test]
    fn a_connector_holds_a_thread_only_while_one_of_its_calls_runs() {
        let (release, hold) = mpsc::channel();
        let (wc, calls) = connector(Some(hold));
        assert!(!has_thread(&wc), "no thread before start");
        completed(|done| wc.stop(done)).unwrap();
        assert!(
            !has_thread(&wc),
            "stopping a connector that is not started spawns nothing"
        );
        assert!(wc.task_configs(1).is_err(), "not started");

        completed(|done| wc.start(Props::new(), done)).unwrap();
        assert!(wc.is_started());
        assert!(!has_thread(&wc), "parked between calls while started");
        assert_eq!(wc.task_configs(1).unwrap().len(), 1);
        assert!(!has_thread(&wc));
        // A `stop` that blocks holds the thread until it returns.
        let (stopped_tx, stopped) = mpsc::channel();
        wc.stop(Box::new(move |r| stopped_tx.send(r).unwrap()));
        assert!(has_thread(&wc), "the stop runs on a thread");
        release.send(()).unwrap();
        stopped.recv_timeout(PATIENCE).unwrap().unwrap();
        assert!(!wc.is_started());
        assert!(!has_thread(&wc), "parked once stopped");

        // Started again: the same instance, initialized once; the shutdown stops it on a thread
        // of its own although it was parked.
        completed(|done| wc.start(Props::new(), done)).unwrap();
        assert!(!has_thread(&wc));
        release.send(()).unwrap();
        wc.shutdown(PATIENCE).unwrap();
        assert!(!has_thread(&wc));
        assert_eq!(
            names(&calls),
            [
                "initialize",
                "start",
                "task_configs",
                "stop",
                "start",
                "stop"
            ]
        );
        assert!(calls
            .lock()
            .unwrap()
            .iter()
            .all(|(_, thread)| thread == "connector-c"));
    }

    #[test]
    fn a_shut_down_connector_refuses_to_start() {
        let (wc, calls) = connector(None);
        wc.shutdown(PATIENCE).unwrap();
        assert!(completed(|done| wc.start(Props::new(), done)).is_err());
        assert!(names(&calls).is_empty(), "never initialized nor started");
    }

    #[test]
    fn a_connector_whose_stop_hangs_is_abandoned_at_the_deadline() {
        let (release, hold) = mpsc::channel();
        let (wc, _calls) = connector(Some(hold));
        completed(|done| wc.start(Props::new(), done)).unwrap();
        let wait = wc.begin_shutdown();
        let err = wait
            .wait(Instant::now() + Duration::from_millis(50))
            .unwrap_err();
        assert!(err.to_string().contains("did not stop within"), "{err}");
        // Later completions report nothing; the abandoned thread finishes once released (or
        // when the test ends and the sender goes).
        assert!(!wc.liveness().load(Ordering::Acquire));
        release.send(()).ok();
    }
}
