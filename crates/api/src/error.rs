//! The error type of the connector API (Connect's `ConnectException` family).

/// An error raised by a connector, task, converter or the data model.
///
/// Mirrors Connect's exception classes: `ConnectException` ([`ConnectError::Connect`]),
/// `DataException` ([`ConnectError::Data`]), `RetriableException` ([`ConnectError::Retriable`])
/// and `ConfigException` ([`ConnectError::Config`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConnectError {
    /// A general failure of a connector or task (`ConnectException`).
    #[error("{0}")]
    Connect(String),
    /// Data does not match its schema or cannot be converted (`DataException`).
    #[error("{0}")]
    Data(String),
    /// A transient failure; the operation may be retried (`RetriableException`).
    #[error("{0}")]
    Retriable(String),
    /// A configuration value is missing or invalid (`ConfigException`): names the key.
    #[error("{0}")]
    Config(String),
    /// A service a plugin depends on does not answer (e.g. a schema registry, Confluent's
    /// `NetworkException`): retried like [`ConnectError::Retriable`] within
    /// `errors.retry.timeout`, but never tolerated by `errors.tolerance=all`: the task fails
    /// rather than skip a record only because the service was down.
    #[error("{0}")]
    Unavailable(String),
    /// An exception thrown by a hosted Java plugin (crate `tributary-jvm`): its class, its
    /// message and its stack trace as `Throwable.printStackTrace` writes it, which is what
    /// Connect shows in a FAILED status.
    #[error("{class}: {message}")]
    Java {
        class: String,
        message: String,
        trace: String,
    },
}

impl ConnectError {
    /// A [`ConnectError::Connect`] with the given message.
    pub fn connect(msg: impl Into<String>) -> Self {
        ConnectError::Connect(msg.into())
    }
    /// A [`ConnectError::Data`] with the given message.
    pub fn data(msg: impl Into<String>) -> Self {
        ConnectError::Data(msg.into())
    }
    /// A [`ConnectError::Config`] with the given message.
    pub fn config(msg: impl Into<String>) -> Self {
        ConnectError::Config(msg.into())
    }
    /// Connect's exception class name for this error, used in traces
    /// (e.g. `org.apache.kafka.connect.errors.DataException`).
    pub fn java_class(&self) -> &'static str {
        match self {
            ConnectError::Connect(_) => "org.apache.kafka.connect.errors.ConnectException",
            ConnectError::Data(_) => "org.apache.kafka.connect.errors.DataException",
            ConnectError::Retriable(_) => "org.apache.kafka.connect.errors.RetriableException",
            ConnectError::Config(_) => "org.apache.kafka.common.config.ConfigException",
            ConnectError::Unavailable(_) => "org.apache.kafka.common.errors.NetworkException",
            ConnectError::Java { .. } => "org.apache.kafka.connect.errors.ConnectException",
        }
    }

    /// The full stack trace of an error that carries one ([`ConnectError::Java`]).
    pub fn stack_trace(&self) -> Option<&str> {
        match self {
            ConnectError::Java { trace, .. } => Some(trace),
            _ => None,
        }
    }
}

/// Result alias of the connector API.
pub type ConnectResult<T> = Result<T, ConnectError>;
