//! Classic group-membership client for Connect workers, talking to the Kafka group
//! coordinator over tokio TCP with the `kafka-protocol` crate.
//!
//! Mirrors the behaviour of Java's `AbstractCoordinator` (with `WorkerCoordinator` /
//! `WorkerGroupMember` on top) that a Connect worker relies on: FindCoordinator (key_type 0),
//! JoinGroup with protocol type `connect`, SyncGroup (the leader sends one assignment per
//! member), Heartbeat on its own timer in a background task, LeaveGroup on shutdown, and the
//! error handling of Kafka's `AbstractCoordinator`, which Connect's `WorkerCoordinator` inherits. It does not interpret the Connect payloads; see
//! [`crate::protocol`] and [`crate::assignor`].
//!
//! Typical use:
//! ```no_run
//! # async fn demo() -> Result<(), tributary_group::client::GroupError> {
//! use std::time::Duration;
//! use tributary_group::client::{GroupConfig, GroupMember};
//! let config = GroupConfig::new("connect-cluster", "connect-host:8083");
//! let mut member = GroupMember::connect("127.0.0.1:9092", config).await?;
//! let joined = member.join(vec![("sessioned".into(), vec![/* metadata */])]).await?;
//! let assignments = if joined.is_leader() { /* run the assignor on joined.members */ vec![] } else { vec![] };
//! let my_assignment = member.sync(assignments).await?;
//! let mut rejoin = member.rejoin_needed();
//! rejoin.wait_for(|r| r.is_some()).await.ok(); // heartbeat saw a rebalance: join again
//! member.leave("shutting down").await?;
//! # Ok(()) }
//! ```

pub mod cluster_admin;
mod connection;
pub mod group_offsets;
mod member;
mod membership;
pub mod memory;

pub use connection::{
    check_connection, topic_identity, ConnectionSecurity, SharedTls, TopicIdentity,
};
pub use member::{
    GroupMember, HeartbeatHandle, JoinResult, MemberState, EXPEDITED_HEARTBEAT, PROTOCOL_TYPE,
};
pub use membership::GroupMembership;

use std::time::Duration;

/// Timeouts and identity of a group member (the subset of Java `DistributedConfig` /
/// `GroupRebalanceConfig` the protocol uses). All durations are sent to the broker in ms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupConfig {
    /// `group.id`.
    pub group_id: String,
    /// `client.id`; the broker prefixes member ids with it (`<client.id>-<uuid>`). Connect's
    /// default is `connect-<host:port>`.
    pub client_id: String,
    /// `session.timeout.ms` (default 10 000 ms); must lie within the broker's
    /// `group.{min,max}.session.timeout.ms`.
    pub session_timeout: Duration,
    /// `rebalance.timeout.ms` (default 60 000 ms).
    pub rebalance_timeout: Duration,
    /// `heartbeat.interval.ms` (default 3 000 ms); must be below the session timeout.
    pub heartbeat_interval: Duration,
    /// `request.timeout.ms` (default 40 000 ms). JoinGroup waits
    /// max(this, rebalance timeout + 5 s).
    pub request_timeout: Duration,
    /// `retry.backoff.ms` (default 100 ms): first backoff for retriable errors.
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms` (default 1 000 ms): cap of the exponential backoff.
    pub retry_backoff_max: Duration,
    /// TLS and SASL for every broker connection (`security.protocol`, `ssl.*`, `sasl.*` of the
    /// worker); plain TCP by default.
    pub security: ConnectionSecurity,
}

impl GroupConfig {
    /// Connect defaults for `group_id` and `client_id`.
    pub fn new(group_id: impl Into<String>, client_id: impl Into<String>) -> Self {
        GroupConfig {
            group_id: group_id.into(),
            client_id: client_id.into(),
            session_timeout: Duration::from_millis(10_000),
            rebalance_timeout: Duration::from_millis(60_000),
            heartbeat_interval: Duration::from_millis(3_000),
            request_timeout: Duration::from_millis(40_000),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(1_000),
            security: ConnectionSecurity::default(),
        }
    }

    /// Checks `heartbeat_interval < session_timeout` and non-empty ids (Java fails startup).
    pub fn validate(&self) -> Result<(), GroupError> {
        if self.group_id.is_empty() {
            return Err(GroupError::InvalidConfig(
                "group.id must not be empty".into(),
            ));
        }
        if self.heartbeat_interval >= self.session_timeout {
            return Err(GroupError::InvalidConfig(format!(
                "heartbeat.interval.ms ({} ms) must be less than session.timeout.ms ({} ms)",
                self.heartbeat_interval.as_millis(),
                self.session_timeout.as_millis()
            )));
        }
        if self.session_timeout.as_millis() > i32::MAX as u128
            || self.rebalance_timeout.as_millis() > i32::MAX as u128
        {
            return Err(GroupError::InvalidConfig(
                "timeouts must fit in an INT32 of ms".into(),
            ));
        }
        Ok(())
    }

    /// The client-side timeout of a JoinGroup request: max(request timeout, rebalance
    /// timeout + 5 s), as Java's `AbstractCoordinator`.
    pub fn join_timeout(&self) -> Duration {
        self.request_timeout
            .max(self.rebalance_timeout + Duration::from_secs(5))
    }
}

/// Why the owner must call [`GroupMember::join`] again (delivered through
/// [`GroupMember::rejoin_needed`] or as [`GroupError::RejoinNeeded`] from `sync`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RejoinReason {
    /// The coordinator started a rebalance (Heartbeat or SyncGroup REBALANCE_IN_PROGRESS).
    /// Generation and member id are kept.
    RebalanceInProgress,
    /// ILLEGAL_GENERATION: the generation was reset to -1, the member id kept.
    IllegalGeneration,
    /// UNKNOWN_MEMBER_ID: generation and member id were reset; the next join starts from "".
    UnknownMemberId,
    /// No heartbeat succeeded within the session timeout (coordinator unreachable or moved).
    /// The coordinator has probably expired this member; per Connect rules the owner should
    /// stop its jobs if it cannot rejoin promptly.
    SessionLost,
    /// The coordinator moved or was unreachable during SyncGroup.
    CoordinatorLost,
    /// The owner asked for it ([`GroupMember::request_rejoin`]).
    Requested(String),
}

impl std::fmt::Display for RejoinReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RejoinReason::RebalanceInProgress => f.write_str("group is rebalancing"),
            RejoinReason::IllegalGeneration => f.write_str("generation is no longer valid"),
            RejoinReason::UnknownMemberId => f.write_str("member id is unknown to the coordinator"),
            RejoinReason::SessionLost => {
                f.write_str("no successful heartbeat within the session timeout")
            }
            RejoinReason::CoordinatorLost => f.write_str("group coordinator lost"),
            RejoinReason::Requested(r) => write!(f, "requested: {r}"),
        }
    }
}

/// Errors of the group client.
#[derive(Debug, thiserror::Error)]
pub enum GroupError {
    /// Invalid [`GroupConfig`] or bootstrap string.
    #[error("invalid group configuration: {0}")]
    InvalidConfig(String),
    /// No bootstrap server was given or reachable.
    #[error("no bootstrap server reachable")]
    NoBootstrap,
    /// TCP error talking to a broker (the connection is dropped and the coordinator rediscovered).
    #[error("I/O error talking to {addr}: {source}")]
    Io {
        /// Broker address.
        addr: String,
        /// Underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A request or connect attempt timed out.
    #[error("timed out: {what}")]
    Timeout {
        /// What timed out.
        what: String,
    },
    /// Kafka wire encoding/decoding failed.
    #[error("Kafka protocol codec error: {0}")]
    Codec(String),
    /// The broker does not support a usable version of an API this client needs.
    #[error("broker does not support a usable version of API key {api} (broker range {broker:?})")]
    UnsupportedApi {
        /// API key.
        api: i16,
        /// Broker (min, max), if it listed the API at all.
        broker: Option<(i16, i16)>,
    },
    /// Retriable coordinator error (COORDINATOR_NOT_AVAILABLE 15, NOT_COORDINATOR 16,
    /// COORDINATOR_LOAD_IN_PROGRESS 14) while locating the coordinator.
    #[error("group coordinator not available: {name} ({code})")]
    CoordinatorUnavailable {
        /// Kafka error code.
        code: i16,
        /// Kafka error name.
        name: String,
    },
    /// A non-retriable error from the broker, e.g. INCONSISTENT_GROUP_PROTOCOL (23),
    /// INVALID_SESSION_TIMEOUT (26), GROUP_AUTHORIZATION_FAILED (30), GROUP_MAX_SIZE_REACHED
    /// (81); Java raises these to the herder.
    #[error("{api} failed: {name} ({code}){}", authorization_hint(*code))]
    Broker {
        /// API that failed.
        api: &'static str,
        /// Kafka error code.
        code: i16,
        /// Kafka error name.
        name: String,
    },
    /// The group state changed during SyncGroup: call [`GroupMember::join`] again.
    #[error("rejoin needed: {0}")]
    RejoinNeeded(RejoinReason),
    /// `sync` was called without a completed `join` for the current generation.
    #[error("not joined: SyncGroup requires a successful JoinGroup first")]
    NotJoined,
    /// The broker's response contradicted the protocol (e.g. a different protocol type/name,
    /// or `skip_assignment` for a non-static member).
    #[error("protocol violation: {0}")]
    IllegalState(String),
    /// The TLS handshake with a broker failed (an untrusted or misnamed certificate, a client
    /// certificate the broker refused).
    #[error("TLS handshake with {addr} failed: {message}")]
    Tls {
        /// Broker address.
        addr: String,
        /// What failed.
        message: String,
    },
    /// SASL authentication failed (SaslHandshake or SaslAuthenticate; Kafka's
    /// `SaslAuthenticationException` or `IllegalSaslStateException`): wrong credentials, or a
    /// mechanism the broker does not enable. Not retried: Java fails the worker too.
    #[error("SASL authentication with {addr} failed: {message}")]
    Authentication {
        /// Broker address.
        addr: String,
        /// The broker's message, or what went wrong.
        message: String,
    },
    /// No OAUTHBEARER access token could be had from the OIDC provider (unreachable, or it
    /// refused the client's credentials) and the cached one has expired. Retried like a lost
    /// coordinator: the provider may answer again.
    #[error("no OAuth access token for {addr}: {message}")]
    Token {
        /// Broker address the token was for.
        addr: String,
        /// The provider's answer or the connection error, naming the setting.
        message: String,
    },
}

impl GroupError {
    /// True for transport-level failures after which the coordinator must be rediscovered.
    pub fn is_coordinator_error(&self) -> bool {
        matches!(
            self,
            GroupError::Io { .. }
                | GroupError::Timeout { .. }
                | GroupError::Codec(_)
                | GroupError::CoordinatorUnavailable { .. }
                | GroupError::NoBootstrap
                | GroupError::Token { .. }
        )
    }
}

/// What an authorization error means for a Connect worker: which resource and operation its
/// principal lacks (as Connect's `GroupAuthorizationException` says); empty for other codes.
fn authorization_hint(code: i16) -> &'static str {
    match code {
        // GROUP_AUTHORIZATION_FAILED
        30 => ": the worker's principal is not authorized to access its group (group.id); it needs READ on the group",
        // CLUSTER_AUTHORIZATION_FAILED
        31 => ": the worker's principal is not authorized for a cluster operation",
        // TOPIC_AUTHORIZATION_FAILED
        29 => ": the worker's principal is not authorized to access a topic it needs",
        _ => "",
    }
}

/// Kafka error name for a code, e.g. `MemberIdRequired`.
pub(crate) fn error_name(code: i16) -> String {
    match kafka_protocol::ResponseError::try_from_code(code) {
        None => "NONE".to_string(),
        Some(e) => format!("{e:?}"),
    }
}

/// Kafka error codes used by the group protocol.
pub(crate) mod codes {
    pub const NONE: i16 = 0;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const ILLEGAL_GENERATION: i16 = 22;
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    pub const FENCED_INSTANCE_ID: i16 = 82;
    pub const MEMBER_ID_REQUIRED: i16 = 79;
}

/// Exponential backoff ×2 with ±20 % jitter between `base` and `max` (Java
/// `ExponentialBackoff` as used for `retry.backoff.ms` / `retry.backoff.max.ms`).
pub(crate) fn backoff(base: Duration, max: Duration, attempt: u32) -> Duration {
    let exp = base.as_millis() as f64 * 2f64.powi(attempt.min(30) as i32);
    let capped = exp.min(max.as_millis().max(base.as_millis()) as f64);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = 0.8 + 0.4 * (nanos % 1000) as f64 / 1000.0;
    Duration::from_millis((capped * jitter) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_validation_and_join_timeout() {
        let c = GroupConfig::new("g", "c");
        c.validate().unwrap();
        assert_eq!(c.join_timeout(), Duration::from_millis(65_000));
        let bad = GroupConfig {
            heartbeat_interval: Duration::from_secs(10),
            ..c.clone()
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn backoff_grows_and_caps() {
        let b0 = backoff(Duration::from_millis(100), Duration::from_millis(1000), 0);
        assert!(b0 >= Duration::from_millis(80) && b0 <= Duration::from_millis(120));
        let b9 = backoff(Duration::from_millis(100), Duration::from_millis(1000), 9);
        assert!(b9 >= Duration::from_millis(800) && b9 <= Duration::from_millis(1200));
    }

    #[test]
    fn authorization_errors_say_what_is_missing() {
        let e = GroupError::Broker {
            api: "JoinGroup",
            code: 30,
            name: error_name(30),
        };
        let text = e.to_string();
        assert!(
            text.starts_with("JoinGroup failed: GroupAuthorizationFailed (30)"),
            "{text}"
        );
        assert!(text.contains("READ on the group"), "{text}");
        let plain = GroupError::Broker {
            api: "JoinGroup",
            code: 23,
            name: error_name(23),
        };
        assert!(!plain.to_string().contains("authorized"));
    }

    #[test]
    fn bootstrap_parsing_and_error_names() {
        assert_eq!(
            connection::parse_bootstrap(" a:1 ,b:2,,"),
            vec!["a:1".to_string(), "b:2".to_string()]
        );
        assert_eq!(error_name(79), "MemberIdRequired");
        assert_eq!(error_name(0), "NONE");
    }
}
