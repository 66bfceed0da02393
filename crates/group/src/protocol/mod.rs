//! Connect worker-group payloads: member metadata (JoinGroup protocol metadata) and assignments
//! (SyncGroup assignment bytes), byte-exact with Java Connect.
//!
//! Pure codecs, no I/O. Mirrors `ConnectProtocol` (V0, eager, wire name `default`),
//! `IncrementalCooperativeConnectProtocol` (V1 `compatible`, V2 `sessioned`, KIP-415/KIP-507),
//! `ExtendedAssignment`, `ExtendedWorkerState` and `ConnectProtocolCompatibility` from
//! `org.apache.kafka.connect.runtime.distributed`, plus Tributary's own V3 `static` protocol
//! (metadata = V2 layout + static claims; assignment = V1/V2 layout).
//!
//! Decoding follows the Java runtime, which reads every blob with the incremental (V1) reader:
//! any version >= 0 is accepted, trailing fields that have defaults may be missing (only when
//! the buffer is exhausted), and extra trailing bytes are ignored.

mod assignment;
pub(crate) mod codec;
mod metadata;

pub use assignment::{
    Assignment, ConnectorEntry, StaticClaims, CONFIG_MISMATCH, CONNECTOR_TASK, NO_ERROR,
};
pub use metadata::WorkerMetadata;

use std::fmt;
use std::str::FromStr;

/// Errors from encoding or decoding Connect group payloads (the Java side raises
/// `SchemaException` for the decode cases).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// The buffer ended inside a field (or before a required field).
    #[error("truncated Connect protocol payload reading `{field}`: needed {needed} bytes, {remaining} left")]
    Truncated {
        /// Field being read.
        field: &'static str,
        /// Bytes (or, for array counts, elements) needed.
        needed: usize,
        /// Bytes left in the buffer.
        remaining: usize,
    },
    /// A negative length/count where null is not allowed (or below -1).
    #[error("invalid negative length {length} for `{field}`")]
    NegativeLength {
        /// Field being read.
        field: &'static str,
        /// The length read.
        length: i32,
    },
    /// The version header was negative.
    #[error("unsupported Connect protocol version {0}")]
    UnsupportedVersion(i16),
    /// A STRING was not valid UTF-8.
    #[error("invalid UTF-8 in `{field}`")]
    InvalidUtf8 {
        /// Field being read.
        field: &'static str,
    },
    /// A STRING longer than 32767 bytes cannot be encoded.
    #[error("`{field}` is {length} bytes, longer than the STRING limit of 32767")]
    StringTooLong {
        /// Field being written.
        field: &'static str,
        /// Its UTF-8 length.
        length: usize,
    },
    /// An array or byte string larger than an INT32 count.
    #[error("`{field}` has {count} elements, more than an INT32 count allows")]
    TooManyElements {
        /// Field being written.
        field: &'static str,
        /// Element count.
        count: usize,
    },
    /// A static task claim used a negative task number.
    #[error("invalid task number {task} for connector `{connector}` in `{field}`")]
    InvalidTaskNumber {
        /// Field being read.
        field: &'static str,
        /// Connector name.
        connector: String,
        /// The task number.
        task: i32,
    },
    /// An unknown `connect.protocol` setting or wire protocol name.
    #[error("unknown Connect protocol `{0}`")]
    UnknownProtocol(String),
    /// A task id string without a numeric `-<n>` suffix.
    #[error("invalid task id `{0}`: expected `<connector>-<task number>`")]
    InvalidTaskId(String),
}

/// The Connect sub-protocol a worker offers or the group selected
/// (Java `ConnectProtocolCompatibility`, plus Tributary's `Static`).
///
/// The variant order is the protocol's age; [`ConnectProtocol::offered`] lists the newest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConnectProtocol {
    /// Eager rebalancing, metadata/assignment V0. Wire name **`default`**, config value `eager`.
    Eager,
    /// Incremental cooperative rebalancing (KIP-415), V1. Wire/config name `compatible`.
    Compatible,
    /// Cooperative plus signed internal REST requests (KIP-507), V2. Wire/config name
    /// `sessioned`; the Java default.
    Sessioned,
    /// Tributary static assignments, V3 (not in Apache Kafka). Wire/config name `static`.
    Static,
}

impl ConnectProtocol {
    /// All variants, oldest first.
    pub const ALL: [ConnectProtocol; 4] = [
        ConnectProtocol::Eager,
        ConnectProtocol::Compatible,
        ConnectProtocol::Sessioned,
        ConnectProtocol::Static,
    ];

    /// The protocol name sent in JoinGroup and returned by the coordinator (always lowercase).
    pub fn wire_name(self) -> &'static str {
        match self {
            ConnectProtocol::Eager => "default",
            ConnectProtocol::Compatible => "compatible",
            ConnectProtocol::Sessioned => "sessioned",
            ConnectProtocol::Static => "static",
        }
    }

    /// The `connect.protocol` config value naming this protocol (lowercase).
    pub fn config_name(self) -> &'static str {
        match self {
            ConnectProtocol::Eager => "eager",
            other => other.wire_name(),
        }
    }

    /// The version header written in metadata and assignments of this protocol (0..=3).
    pub fn version(self) -> i16 {
        match self {
            ConnectProtocol::Eager => 0,
            ConnectProtocol::Compatible => 1,
            ConnectProtocol::Sessioned => 2,
            ConnectProtocol::Static => 3,
        }
    }

    /// True for the incremental cooperative family (`compatible`, `sessioned`, `static`):
    /// assignments are deltas with explicit revocations.
    pub fn is_cooperative(self) -> bool {
        self != ConnectProtocol::Eager
    }

    /// Parses a wire protocol name (case-insensitive, as Java's `fromProtocol`).
    pub fn from_wire_name(name: &str) -> Result<Self, ProtocolError> {
        Self::ALL
            .into_iter()
            .find(|p| p.wire_name().eq_ignore_ascii_case(name))
            .ok_or_else(|| ProtocolError::UnknownProtocol(name.to_string()))
    }

    /// Parses a `connect.protocol` config value (case-insensitive, as Java's `compatibility`).
    pub fn from_config(value: &str) -> Result<Self, ProtocolError> {
        let value = value.trim();
        Self::ALL
            .into_iter()
            .find(|p| p.config_name().eq_ignore_ascii_case(value))
            .ok_or_else(|| ProtocolError::UnknownProtocol(value.to_string()))
    }

    /// The protocols a worker with this `connect.protocol` setting offers in JoinGroup, most
    /// preferred first: `eager` → `[default]`; `compatible` → `[compatible, default]`;
    /// `sessioned` → `[sessioned, compatible, default]`; `static` →
    /// `[static, sessioned, compatible, default]`.
    pub fn offered(self) -> &'static [ConnectProtocol] {
        use ConnectProtocol::*;
        match self {
            Eager => &[Eager],
            Compatible => &[Compatible, Eager],
            Sessioned => &[Sessioned, Compatible, Eager],
            Static => &[Static, Sessioned, Compatible, Eager],
        }
    }

    /// Builds the JoinGroup protocol list `(wire name, metadata bytes)` for a worker configured
    /// with this setting: one entry per [`offered`](Self::offered) protocol, each with the
    /// metadata encoded at that protocol's version (the allocation inside carries the same
    /// version; static claims only go into the `static` entry).
    pub fn join_protocols(
        self,
        metadata: &WorkerMetadata,
    ) -> Result<Vec<(String, Vec<u8>)>, ProtocolError> {
        self.offered()
            .iter()
            .map(|p| Ok((p.wire_name().to_string(), metadata.encode(*p)?)))
            .collect()
    }
}

impl fmt::Display for ConnectProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

impl FromStr for ConnectProtocol {
    type Err = ProtocolError;

    /// Same as [`ConnectProtocol::from_config`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_config(s)
    }
}

pub use tributary_api::ConnectorTaskId;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_and_config_names() {
        assert_eq!(ConnectProtocol::Eager.wire_name(), "default");
        assert_eq!(
            ConnectProtocol::from_config("EAGER").unwrap(),
            ConnectProtocol::Eager
        );
        assert_eq!(
            ConnectProtocol::from_wire_name("Sessioned").unwrap(),
            ConnectProtocol::Sessioned
        );
        assert_eq!(
            ConnectProtocol::from_wire_name("default").unwrap(),
            ConnectProtocol::Eager
        );
        assert!(ConnectProtocol::from_config("default").is_err());
        assert!(ConnectProtocol::from_wire_name("eager").is_err());
        assert_eq!(
            "static".parse::<ConnectProtocol>().unwrap(),
            ConnectProtocol::Static
        );
    }

    #[test]
    fn offered_lists() {
        let names = |p: ConnectProtocol| {
            p.offered()
                .iter()
                .map(|p| p.wire_name())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(ConnectProtocol::Eager), ["default"]);
        assert_eq!(
            names(ConnectProtocol::Compatible),
            ["compatible", "default"]
        );
        assert_eq!(
            names(ConnectProtocol::Sessioned),
            ["sessioned", "compatible", "default"]
        );
        assert_eq!(
            names(ConnectProtocol::Static),
            ["static", "sessioned", "compatible", "default"]
        );
    }
}

#[cfg(test)]
mod java_fixtures;
#[cfg(test)]
mod wire_tests;
