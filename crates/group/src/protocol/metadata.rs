//! JoinGroup member metadata (Java `ConnectProtocol.WorkerState` / `ExtendedWorkerState`).
//!
//! V0: version, url STRING, config-offset INT64.
//! V1/V2: V0 + allocation NULLABLE_BYTES (a complete assignment blob with the same version
//! header, null when the worker holds nothing; may be missing).
//! V3 (`static`, Tributary): V2 + static_connectors nullable ARRAY(STRING) + static_tasks
//! nullable ARRAY(ConnectorAssignment entries); both may be missing (read as null).

use super::codec::{array_count, Reader, Writer};
use super::{Assignment, ConnectProtocol, ConnectorEntry, ConnectorTaskId, ProtocolError};

/// A worker's JoinGroup metadata.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkerMetadata {
    /// Advertised REST URL, e.g. `http://host:8083/` (Java usually has a trailing `/`).
    pub url: String,
    /// Config-topic snapshot offset: the next offset to read; -1 if nothing was read yet.
    pub config_offset: i64,
    /// The worker's current full assignment (V1+); `None` = holds nothing (written as null).
    /// Encoded with the same version as the enclosing metadata. The leader only uses its
    /// `connectors` and `tasks`.
    pub allocation: Option<Assignment>,
    /// `static.connectors` claim (V3 only): `None` = unset, `Some(vec![])` = set to empty.
    pub static_connectors: Option<Vec<String>>,
    /// `static.tasks` claim (V3 only): `None` = unset, `Some(vec![])` = set to empty.
    pub static_tasks: Option<Vec<ConnectorTaskId>>,
}

impl WorkerMetadata {
    /// Creates metadata without allocation or static claims.
    pub fn new(url: impl Into<String>, config_offset: i64) -> Self {
        WorkerMetadata {
            url: url.into(),
            config_offset,
            ..Default::default()
        }
    }

    /// True if this worker is a static worker (either claim set, even to empty).
    pub fn is_static(&self) -> bool {
        self.static_connectors.is_some() || self.static_tasks.is_some()
    }

    /// Encodes the metadata for one JoinGroup protocol entry: V0 for `default` (allocation and
    /// claims dropped), V1/V2 with the allocation, V3 with allocation and static claims.
    pub fn encode(&self, protocol: ConnectProtocol) -> Result<Vec<u8>, ProtocolError> {
        self.encode_version(protocol.version())
    }

    /// Encodes with an explicit version header: 0 = V0 layout, 1..=2 = V1 layout,
    /// >= 3 = V3 layout. Errors for negative versions, strings over 32767 bytes.
    pub fn encode_version(&self, version: i16) -> Result<Vec<u8>, ProtocolError> {
        if version < 0 {
            return Err(ProtocolError::UnsupportedVersion(version));
        }
        let mut w = Writer::default();
        w.i16(version);
        w.string("url", &self.url)?;
        w.i64(self.config_offset);
        if version >= 1 {
            let alloc = match &self.allocation {
                Some(a) => Some(a.encode_version(version)?),
                None => None,
            };
            w.nullable_bytes("allocation", alloc.as_deref())?;
        }
        if version >= 3 {
            match &self.static_connectors {
                None => w.i32(-1),
                Some(cs) => {
                    w.i32(array_count("static_connectors", cs.len())?);
                    for c in cs {
                        w.string("static_connectors", c)?;
                    }
                }
            }
            match &self.static_tasks {
                None => w.i32(-1),
                Some(ts) => ConnectorEntry::write_array(
                    &mut w,
                    "static_tasks",
                    &ConnectorEntry::group(&[], ts),
                )?,
            }
        }
        Ok(w.buf)
    }

    /// Decodes metadata of any version >= 0. See [`decode_versioned`](Self::decode_versioned).
    pub fn decode(buf: &[u8]) -> Result<Self, ProtocolError> {
        Self::decode_versioned(buf).map(|(_, m)| m)
    }

    /// Decodes metadata and returns its version header too. Like Java's incremental reader,
    /// every version reads url, config-offset and (if bytes remain) the allocation; versions
    /// 3 and up additionally read the static claims if bytes remain. Extra trailing bytes are
    /// ignored. Errors: negative version, truncation inside a field, bad lengths, a negative
    /// task number in `static_tasks`, or an undecodable allocation blob.
    pub fn decode_versioned(buf: &[u8]) -> Result<(i16, Self), ProtocolError> {
        let mut r = Reader::new(buf);
        let version = r.i16("version")?;
        if version < 0 {
            return Err(ProtocolError::UnsupportedVersion(version));
        }
        let url = r.string("url")?;
        let config_offset = r.i64("config-offset")?;
        let allocation = if r.is_exhausted() {
            None
        } else {
            match r.nullable_bytes("allocation")? {
                None => None,
                Some(bytes) => Some(Assignment::decode(bytes)?),
            }
        };
        let mut static_connectors = None;
        let mut static_tasks = None;
        if version >= 3 {
            if !r.is_exhausted() {
                if let Some(n) = r.array_len("static_connectors", true)? {
                    let mut cs = Vec::with_capacity(n);
                    for _ in 0..n {
                        cs.push(r.string("static_connectors")?);
                    }
                    static_connectors = Some(cs);
                }
            }
            if !r.is_exhausted() {
                if let Some(entries) = ConnectorEntry::read_array(&mut r, "static_tasks")? {
                    let mut ts = Vec::new();
                    for e in entries {
                        for t in e.tasks {
                            let Ok(n) = u32::try_from(t) else {
                                return Err(ProtocolError::InvalidTaskNumber {
                                    field: "static_tasks",
                                    connector: e.connector,
                                    task: t,
                                });
                            };
                            ts.push(ConnectorTaskId::new(e.connector.clone(), n));
                        }
                    }
                    static_tasks = Some(ts);
                }
            }
        }
        Ok((
            version,
            WorkerMetadata {
                url,
                config_offset,
                allocation,
                static_connectors,
                static_tasks,
            },
        ))
    }
}
