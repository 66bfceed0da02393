//! SyncGroup assignment bytes (Java `ConnectProtocol.Assignment` / `ExtendedAssignment`).
//!
//! V0 layout: version, error, leader, leader-url, config-offset, assignment ARRAY (non-null).
//! V1+ layout: the same, then revoked ARRAY and delay INT32; `assignment`, `revoked` and
//! `delay` may be missing (read as empty / empty / 0) and the arrays may be null (-1).

use super::codec::{array_count, Reader, Writer};
use super::{ConnectProtocol, ConnectorTaskId, ProtocolError};

/// `error` value of a successful assignment (Java `Assignment.NO_ERROR`).
pub const NO_ERROR: i16 = 0;
/// `error` value sent to every member when the leader is behind the config topic
/// (Java `Assignment.CONFIG_MISMATCH`).
pub const CONFIG_MISMATCH: i16 = 1;
/// Sentinel task number meaning "the connector instance itself" (Java `CONNECTOR_TASK`).
pub const CONNECTOR_TASK: i32 = -1;

/// One wire `ConnectorAssignment` entry: a connector name and its task numbers, where
/// [`CONNECTOR_TASK`] (-1) stands for the connector instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorEntry {
    /// Connector name.
    pub connector: String,
    /// Task numbers; -1 = the connector itself.
    pub tasks: Vec<i32>,
}

impl ConnectorEntry {
    /// Groups connectors and tasks into wire entries. Entry order is the first appearance of
    /// each connector name in `connectors`, then in `tasks`; an assigned connector's -1 comes
    /// first in its entry (as Java writes it). Order is not meaningful to readers.
    pub fn group(connectors: &[String], tasks: &[ConnectorTaskId]) -> Vec<ConnectorEntry> {
        let mut entries: Vec<ConnectorEntry> = Vec::new();
        let mut index = std::collections::HashMap::<&str, usize>::new();
        for c in connectors {
            let i = *index.entry(c.as_str()).or_insert_with(|| {
                entries.push(ConnectorEntry {
                    connector: c.clone(),
                    tasks: Vec::new(),
                });
                entries.len() - 1
            });
            if !entries[i].tasks.contains(&CONNECTOR_TASK) {
                entries[i].tasks.push(CONNECTOR_TASK);
            }
        }
        for t in tasks {
            let i = *index.entry(t.connector.as_str()).or_insert_with(|| {
                entries.push(ConnectorEntry {
                    connector: t.connector.clone(),
                    tasks: Vec::new(),
                });
                entries.len() - 1
            });
            // Task numbers come from connector task counts, far below i32::MAX.
            entries[i]
                .tasks
                .push(i32::try_from(t.task).unwrap_or(i32::MAX));
        }
        entries
    }

    /// Splits entries back into (connectors, tasks), keeping entry order. Errors with
    /// [`ProtocolError::InvalidTaskNumber`] on a negative task number other than
    /// [`CONNECTOR_TASK`].
    pub fn split(
        field: &'static str,
        entries: &[ConnectorEntry],
    ) -> Result<(Vec<String>, Vec<ConnectorTaskId>), ProtocolError> {
        let mut connectors = Vec::new();
        let mut tasks = Vec::new();
        for e in entries {
            for &t in &e.tasks {
                if t == CONNECTOR_TASK {
                    connectors.push(e.connector.clone());
                } else {
                    let n = u32::try_from(t).map_err(|_| ProtocolError::InvalidTaskNumber {
                        field,
                        connector: e.connector.clone(),
                        task: t,
                    })?;
                    tasks.push(ConnectorTaskId::new(e.connector.clone(), n));
                }
            }
        }
        Ok((connectors, tasks))
    }

    pub(crate) fn write_array(
        w: &mut Writer,
        field: &'static str,
        entries: &[ConnectorEntry],
    ) -> Result<(), ProtocolError> {
        w.i32(array_count(field, entries.len())?);
        for e in entries {
            w.string(field, &e.connector)?;
            w.i32(array_count(field, e.tasks.len())?);
            for &t in &e.tasks {
                w.i32(t);
            }
        }
        Ok(())
    }

    /// Reads an ARRAY of entries; `None` when the array is null (-1). The inner task array is
    /// non-nullable, as in Java.
    pub(crate) fn read_array(
        r: &mut Reader<'_>,
        field: &'static str,
    ) -> Result<Option<Vec<ConnectorEntry>>, ProtocolError> {
        let Some(n) = r.array_len(field, true)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let connector = r.string(field)?;
            let count = r.array_len(field, false)?.unwrap_or(0);
            let mut tasks = Vec::with_capacity(count);
            for _ in 0..count {
                tasks.push(r.i32(field)?);
            }
            out.push(ConnectorEntry { connector, tasks });
        }
        Ok(Some(out))
    }
}

/// A Connect assignment as carried in SyncGroup (Java `ExtendedAssignment`; V0 is
/// `ConnectProtocol.Assignment`).
///
/// In the cooperative protocols `connectors`/`tasks` are the jobs **newly** assigned in this
/// round; in eager (V0) they are the full assignment and the revoked lists and `delay` are not
/// on the wire. Inside a member's metadata `allocation`, the lists hold everything the worker
/// currently runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    /// [`NO_ERROR`] or [`CONFIG_MISMATCH`].
    pub error: i16,
    /// The leader's member id.
    pub leader: String,
    /// The leader's advertised REST URL (from its metadata).
    pub leader_url: String,
    /// Config-topic offset the assignment was computed at (next offset to read).
    pub config_offset: i64,
    /// Connector instances assigned.
    pub connectors: Vec<String>,
    /// Tasks assigned.
    pub tasks: Vec<ConnectorTaskId>,
    /// Connector instances to stop (V1+ only).
    pub revoked_connectors: Vec<String>,
    /// Tasks to stop (V1+ only).
    pub revoked_tasks: Vec<ConnectorTaskId>,
    /// Milliseconds after which every member should rejoin (scheduled rebalance); 0 = none
    /// (V1+ only).
    pub delay: i32,
    /// The static claims the leader knows, of present and absent workers (`static`, version 3 only;
    /// a trailing field written only when non-empty, so other readers skip it). Every member
    /// keeps the list of its last assignment; a member that becomes leader starts from it, so
    /// a job claimed by an absent worker stays off wildcard workers across a leader change.
    pub static_claims: Vec<StaticClaims>,
}

/// One static worker's claims as the leader remembers them (see [`Assignment::static_claims`]).
///
/// Wire (V3 trailing field `static_claims`, nullable ARRAY of): `worker` STRING, `connectors`
/// ARRAY of STRING, `tasks` ARRAY of connector-assignment entries.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StaticClaims {
    /// The worker's identity: its advertised REST URL, else its member id.
    pub worker: String,
    /// Claimed connector instances (`static.connectors`).
    pub connectors: Vec<String>,
    /// Claimed tasks (`static.tasks`).
    pub tasks: Vec<ConnectorTaskId>,
}

impl Assignment {
    /// The assignment the leader sends to every member when it could not read the config topic
    /// up to `max_offset` (as `WorkerCoordinator` answers a leader behind on the config topic): error [`CONFIG_MISMATCH`], empty lists, delay 0.
    pub fn config_mismatch(
        leader: impl Into<String>,
        leader_url: impl Into<String>,
        max_offset: i64,
    ) -> Self {
        Assignment {
            error: CONFIG_MISMATCH,
            leader: leader.into(),
            leader_url: leader_url.into(),
            config_offset: max_offset,
            ..Default::default()
        }
    }

    /// True when `error != NO_ERROR` (Java `Assignment.failed()`).
    pub fn failed(&self) -> bool {
        self.error != NO_ERROR
    }

    /// Encodes with the version header and layout of `protocol` (V0 for eager, V1+ otherwise).
    pub fn encode(&self, protocol: ConnectProtocol) -> Result<Vec<u8>, ProtocolError> {
        self.encode_version(protocol.version())
    }

    /// Encodes with an explicit version header. Version 0 uses the V0 layout, which cannot
    /// carry `revoked_*` and `delay` (they are dropped); any other version uses the V1 layout.
    /// Errors only for strings over 32767 bytes or absurd element counts.
    pub fn encode_version(&self, version: i16) -> Result<Vec<u8>, ProtocolError> {
        if version < 0 {
            return Err(ProtocolError::UnsupportedVersion(version));
        }
        let mut w = Writer::default();
        w.i16(version);
        self.write_body(&mut w, version)?;
        Ok(w.buf)
    }

    fn write_body(&self, w: &mut Writer, version: i16) -> Result<(), ProtocolError> {
        w.i16(self.error);
        w.string("leader", &self.leader)?;
        w.string("leader-url", &self.leader_url)?;
        w.i64(self.config_offset);
        ConnectorEntry::write_array(
            w,
            "assignment",
            &ConnectorEntry::group(&self.connectors, &self.tasks),
        )?;
        if version >= 1 {
            ConnectorEntry::write_array(
                w,
                "revoked",
                &ConnectorEntry::group(&self.revoked_connectors, &self.revoked_tasks),
            )?;
            w.i32(self.delay);
        }
        if version == 3 && !self.static_claims.is_empty() {
            w.i32(array_count("static_claims", self.static_claims.len())?);
            for c in &self.static_claims {
                w.string("static_claims", &c.worker)?;
                w.i32(array_count("static_claims", c.connectors.len())?);
                for name in &c.connectors {
                    w.string("static_claims", name)?;
                }
                ConnectorEntry::write_array(
                    w,
                    "static_claims",
                    &ConnectorEntry::group(&[], &c.tasks),
                )?;
            }
        }
        Ok(())
    }

    /// Decodes assignment bytes of any version >= 0 with the tolerant V1 reader (as the Java
    /// runtime does). See [`decode_versioned`](Self::decode_versioned).
    pub fn decode(buf: &[u8]) -> Result<Self, ProtocolError> {
        Self::decode_versioned(buf).map(|(_, a)| a)
    }

    /// Decodes and also returns the version header. Null arrays read as empty, missing
    /// trailing `assignment`/`revoked`/`delay` read as empty/empty/0, extra bytes are ignored.
    /// Errors: negative version, truncated fields, bad lengths, invalid UTF-8. A zero-length
    /// buffer is an error (Java cannot decode it either).
    pub fn decode_versioned(buf: &[u8]) -> Result<(i16, Self), ProtocolError> {
        let mut r = Reader::new(buf);
        let version = r.i16("version")?;
        if version < 0 {
            return Err(ProtocolError::UnsupportedVersion(version));
        }
        let a = Self::read_body(&mut r, version)?;
        Ok((version, a))
    }

    pub(crate) fn read_body(r: &mut Reader<'_>, version: i16) -> Result<Self, ProtocolError> {
        let error = r.i16("error")?;
        let leader = r.string("leader")?;
        let leader_url = r.string("leader-url")?;
        let config_offset = r.i64("config-offset")?;
        let assigned = if r.is_exhausted() {
            None
        } else {
            ConnectorEntry::read_array(r, "assignment")?
        };
        let revoked = if r.is_exhausted() {
            None
        } else {
            ConnectorEntry::read_array(r, "revoked")?
        };
        let delay = if r.is_exhausted() { 0 } else { r.i32("delay")? };
        let (connectors, tasks) =
            ConnectorEntry::split("assignment", assigned.as_deref().unwrap_or_default())?;
        let (revoked_connectors, revoked_tasks) =
            ConnectorEntry::split("revoked", revoked.as_deref().unwrap_or_default())?;
        let mut static_claims = Vec::new();
        // Only the `static` layout (3) defines this field; later versions are read with the
        // V1 layout and anything after `delay` ignored, as Connect does.
        if version == 3 && !r.is_exhausted() {
            if let Some(n) = r.array_len("static_claims", true)? {
                for _ in 0..n {
                    let worker = r.string("static_claims")?;
                    let count = r.array_len("static_claims", false)?.unwrap_or(0);
                    let mut connectors = Vec::with_capacity(count);
                    for _ in 0..count {
                        connectors.push(r.string("static_claims")?);
                    }
                    let entries =
                        ConnectorEntry::read_array(r, "static_claims")?.unwrap_or_default();
                    let (_, tasks) = ConnectorEntry::split("static_claims", &entries)?;
                    static_claims.push(StaticClaims {
                        worker,
                        connectors,
                        tasks,
                    });
                }
            }
        }
        Ok(Assignment {
            error,
            leader,
            leader_url,
            config_offset,
            connectors,
            tasks,
            revoked_connectors,
            revoked_tasks,
            delay,
            static_claims,
        })
    }
}
