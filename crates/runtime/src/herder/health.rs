//! Connector health summaries (Tributary; `GET /tributary/connector-health` and `/metrics`):
//! one word per connector from its status and its tasks' statuses, so a connector RUNNING
//! with FAILED tasks is never reported healthy. [`connector_health`] is the rule;
//! [`summaries`] applies it to every connector of a status store.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::storage::status::{State, StatusBackingStore};

/// A connector's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConnectorHealth {
    /// The connector and every task RUNNING (at least one task).
    Healthy,
    /// The connector RUNNING, but some tasks are not (failed, unassigned, restarting), or it
    /// has no tasks yet.
    Degraded,
    /// The connector FAILED, or every task FAILED.
    Failed,
    /// PAUSED, STOPPED, UNASSIGNED or RESTARTING as the connector's own state says.
    Paused,
    Stopped,
    Unassigned,
    Restarting,
}

impl ConnectorHealth {
    /// The lower-case name (for metric labels).
    pub fn as_label(self) -> &'static str {
        match self {
            ConnectorHealth::Healthy => "healthy",
            ConnectorHealth::Degraded => "degraded",
            ConnectorHealth::Failed => "failed",
            ConnectorHealth::Paused => "paused",
            ConnectorHealth::Stopped => "stopped",
            ConnectorHealth::Unassigned => "unassigned",
            ConnectorHealth::Restarting => "restarting",
        }
    }
}

/// The health of a connector in state `connector` whose tasks are in `tasks`.
pub fn connector_health(connector: State, tasks: &[State]) -> ConnectorHealth {
    let all = |s: State| !tasks.is_empty() && tasks.iter().all(|t| *t == s);
    match connector {
        State::Failed => ConnectorHealth::Failed,
        State::Paused => ConnectorHealth::Paused,
        State::Stopped => ConnectorHealth::Stopped,
        State::Unassigned | State::Destroyed => ConnectorHealth::Unassigned,
        State::Restarting => ConnectorHealth::Restarting,
        State::Running if all(State::Running) => ConnectorHealth::Healthy,
        State::Running if all(State::Failed) => ConnectorHealth::Failed,
        State::Running => ConnectorHealth::Degraded,
    }
}

/// One connector's summary: `{"health", "connector": state, "tasks": {"total", "<state>": n…}}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub health: ConnectorHealth,
    pub connector: String,
    pub tasks: BTreeMap<String, usize>,
}

impl Summary {
    /// Tasks in `state` (upper case, as in statuses).
    pub fn count(&self, state: &str) -> usize {
        self.tasks.get(state).copied().unwrap_or(0)
    }
}

/// The summaries of `connectors` with a status in `statuses`, by name.
pub fn summaries(
    statuses: &dyn StatusBackingStore,
    connectors: &[String],
) -> BTreeMap<String, Summary> {
    let mut out = BTreeMap::new();
    for name in connectors {
        let Some(cs) = statuses.connector(name) else {
            continue;
        };
        let tasks: Vec<State> = statuses.tasks(name).values().map(|s| s.state).collect();
        let mut counts = BTreeMap::from([("total".to_string(), tasks.len())]);
        for t in &tasks {
            *counts.entry(t.as_str().to_string()).or_default() += 1;
        }
        out.insert(
            name.clone(),
            Summary {
                health: connector_health(cs.state, &tasks),
                connector: cs.state.as_str().to_string(),
                tasks: counts,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use State::*;

    #[test]
    fn running_with_failed_tasks_is_never_healthy() {
        assert_eq!(
            connector_health(Running, &[Running, Running]),
            ConnectorHealth::Healthy
        );
        assert_eq!(
            connector_health(Running, &[Running, Failed]),
            ConnectorHealth::Degraded
        );
        assert_eq!(
            connector_health(Running, &[Failed, Failed]),
            ConnectorHealth::Failed
        );
        assert_eq!(
            connector_health(Running, &[Running, Unassigned]),
            ConnectorHealth::Degraded
        );
        assert_eq!(connector_health(Running, &[]), ConnectorHealth::Degraded);
        assert_eq!(
            connector_health(Failed, &[Running]),
            ConnectorHealth::Failed
        );
        assert_eq!(connector_health(Paused, &[Paused]), ConnectorHealth::Paused);
        assert_eq!(connector_health(Stopped, &[]), ConnectorHealth::Stopped);
    }
}
