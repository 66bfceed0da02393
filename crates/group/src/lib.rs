//! Kafka Connect worker-group protocol for Tributary, wire-compatible with Java Connect workers.
//!
//! Organised in rskafka style, pure codecs apart from I/O:
//! - [`protocol`]: Connect member metadata and assignment payloads (V0 `default`/eager,
//!   V1 `compatible`, V2 `sessioned`, V3 `static`), byte-exact with Java's
//!   `ConnectProtocol` / `IncrementalCooperativeConnectProtocol`. No I/O.
//! - [`assignor`]: leader-side assignment computations as pure functions (the eager assignor
//!   of Java's `EagerAssignor`, the incremental cooperative assignor of Java's
//!   `IncrementalCooperativeAssignor` (KIP-415), Tributary's static assignor for the V3
//!   `static` protocol, and the config-offset check shared by all assignors).
//! - [`client`]: a classic group-membership client (FindCoordinator, JoinGroup, SyncGroup,
//!   Heartbeat, LeaveGroup) over tokio TCP using the `kafka-protocol` crate, mirroring the parts
//!   of Java's `AbstractCoordinator`/`WorkerCoordinator` a Connect worker relies on.

// Async code must not block its runtime thread (clippy.toml names the methods).
#![deny(clippy::disallowed_methods)]
#![warn(missing_docs)]

pub mod assignor;
pub mod client;
pub mod protocol;

pub use protocol::{
    Assignment, ConnectProtocol, ConnectorTaskId, ProtocolError, StaticClaims, WorkerMetadata,
};
