//! A running connector instance (Connect's `WorkerConnector`): the [`Connector`] lives on its
//! own thread, since its calls may block, and the worker drives it with commands.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;

use tributary_api::connector::{Connector, ConnectorContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::task::catch_panic;

enum Command {
    Start(Props, mpsc::Sender<ConnectResult<()>>),
    Stop(mpsc::Sender<ConnectResult<()>>),
    TaskConfigs(usize, mpsc::Sender<ConnectResult<Vec<Props>>>),
    Shutdown,
}

/// Handle to a connector thread.
pub struct WorkerConnector {
    tx: mpsc::Sender<Command>,
    thread: Option<JoinHandle<()>>,
    /// Whether `start` succeeded and `stop` was not called since.
    pub started: bool,
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
        let thread = std::thread::Builder::new()
            .name(format!("connector-{name}"))
            .spawn(move || {
                let _ = catch_panic(&label, || {
                    connector.initialize(context);
                    Ok(())
                });
                while let Ok(cmd) = rx.recv() {
                    match cmd {
                        Command::Start(props, reply) => {
                            let _ = reply.send(catch_panic(&label, || connector.start(&props)));
                        }
                        Command::Stop(reply) => {
                            let _ = reply.send(catch_panic(&label, || connector.stop()));
                        }
                        Command::TaskConfigs(max, reply) => {
                            let _ = reply.send(catch_panic(&label, || connector.task_configs(max)));
                        }
                        Command::Shutdown => break,
                    }
                }
            })
            .expect("spawning a connector thread");
        WorkerConnector {
            tx,
            thread: Some(thread),
            started: false,
        }
    }

    fn call<T>(
        &self,
        make: impl FnOnce(mpsc::Sender<ConnectResult<T>>) -> Command,
    ) -> ConnectResult<T> {
        let (reply_tx, reply_rx) = mpsc::channel();
        self.tx
            .send(make(reply_tx))
            .map_err(|_| ConnectError::connect("connector thread is gone"))?;
        reply_rx
            .recv()
            .map_err(|_| ConnectError::connect("connector thread is gone"))?
    }

    /// `Connector.start(props)`.
    pub fn start(&mut self, props: Props) -> ConnectResult<()> {
        let r = self.call(|r| Command::Start(props, r));
        self.started = r.is_ok();
        r
    }

    /// `Connector.stop()` (only if started).
    pub fn stop(&mut self) -> ConnectResult<()> {
        if !self.started {
            return Ok(());
        }
        self.started = false;
        self.call(Command::Stop)
    }

    /// `Connector.taskConfigs(max)`.
    pub fn task_configs(&self, max: usize) -> ConnectResult<Vec<Props>> {
        self.call(|r| Command::TaskConfigs(max, r))
    }

    /// Stops the connector if started and ends its thread.
    pub fn shutdown(mut self) -> ConnectResult<()> {
        let r = self.stop();
        let _ = self.tx.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        r
    }
}
