//! [`ConnectorTaskId`]: the identity of a task, shared by the runtime, the group protocol and
//! connectors (Connect's `org.apache.kafka.connect.util.ConnectorTaskId`).

use std::fmt;
use std::str::FromStr;

/// A task's identity: connector name and task number. Displays as `<connector>-<task>`,
/// Connect's form in logs, status keys and `static.tasks`. Task numbers are never negative: the
/// group protocol's `-1` (the connector instance itself) is decoded into a connector, never into
/// a task id. Serialized (REST) as `{"connector": …, "task": …}`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ConnectorTaskId {
    /// Connector name.
    pub connector: String,
    /// Task number, from 0.
    pub task: u32,
}

impl ConnectorTaskId {
    /// The task `task` of `connector`.
    pub fn new(connector: impl Into<String>, task: u32) -> Self {
        ConnectorTaskId {
            connector: connector.into(),
            task,
        }
    }
}

impl fmt::Display for ConnectorTaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.connector, self.task)
    }
}

/// A string that is not `<connector>-<task number>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidTaskId(pub String);

impl fmt::Display for InvalidTaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid task id '{}': expected <connector>-<task number>",
            self.0
        )
    }
}

impl std::error::Error for InvalidTaskId {}

impl FromStr for ConnectorTaskId {
    type Err = InvalidTaskId;

    /// Parses `<connector>-<n>`; the **last** `-` separates the number, so connector names may
    /// contain dashes. The number is decimal digits only (no sign).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || InvalidTaskId(s.to_string());
        let (connector, n) = s.rsplit_once('-').ok_or_else(bad)?;
        if connector.is_empty() || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let task = n.parse::<u32>().map_err(|_| bad())?;
        Ok(ConnectorTaskId::new(connector, task))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_displays_connects_form() {
        assert_eq!(
            "my-conn-12".parse::<ConnectorTaskId>().unwrap(),
            ConnectorTaskId::new("my-conn", 12)
        );
        assert_eq!(ConnectorTaskId::new("a", 3).to_string(), "a-3");
        for bad in ["", "a", "-1", "a-", "a-x", "a-+1", "a-1x", "a-99999999999"] {
            assert!(bad.parse::<ConnectorTaskId>().is_err(), "{bad}");
        }
    }
}
