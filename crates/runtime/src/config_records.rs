//! The values besides configurations that Connect's config topic carries and the herders and
//! the worker act on: a connector's [`TargetState`] (`target-state-…` records), KIP-745 restart
//! requests ([`RestartRequest`], `restart-connector-…` records) and the KIP-507 session key
//! ([`SessionKey`], the `session-key` record).
//!
//! They sit here, below [`crate::storage`], [`crate::herder`] and [`crate::worker`], because
//! all of them use them: the config topic store decodes and writes them, the herders create
//! and act on them (the standalone herder takes restart requests straight from the REST API),
//! the worker runs connectors and tasks in a target state. Keeping them out of `herder` and
//! `worker` lets `storage` depend on neither. Connect likewise keeps `TargetState`,
//! `RestartRequest` and `SessionKey` in `org.apache.kafka.connect.runtime`, outside its herders
//! and its `storage` package.

/// The state the herder wants a connector and its tasks in (Connect's `TargetState`): written
/// to the config topic as `{"state": "STARTED"|"PAUSED"}` plus, for `Stopped` (KIP-875),
/// `"state.v2": "STOPPED"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetState {
    Started,
    Paused,
    Stopped,
}

/// `POST /connectors/{c}/restart?includeTasks=&onlyFailed=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartRequest {
    /// The connector to restart.
    pub connector: String,
    /// `onlyFailed`: select only FAILED instances.
    pub only_failed: bool,
    /// `includeTasks`: also select the connector's tasks.
    pub include_tasks: bool,
}

impl RestartRequest {
    /// Whether this is the legacy connector-only restart (both flags false, answered 204).
    pub fn is_legacy(&self) -> bool {
        !self.only_failed && !self.include_tasks
    }

    /// The impact rank used to keep the stronger of two pending requests (0 lowest):
    /// failed connector only < failed connector and tasks < connector only < everything.
    pub fn impact(&self) -> u8 {
        match (self.only_failed, self.include_tasks) {
            (true, false) => 0,
            (true, true) => 1,
            (false, false) => 2,
            (false, true) => 3,
        }
    }
}

/// The KIP-507 session key shared by the workers of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    /// Raw key bytes.
    pub key: Vec<u8>,
    /// e.g. `HmacSHA256`.
    pub algorithm: String,
    /// Creation time, ms since the epoch.
    pub creation_timestamp: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(only_failed: bool, include_tasks: bool) -> RestartRequest {
        RestartRequest {
            connector: "c".into(),
            only_failed,
            include_tasks,
        }
    }

    #[test]
    fn impact_ranks_follow_connect() {
        let mut ranks: Vec<_> = [
            req(false, true),
            req(true, false),
            req(false, false),
            req(true, true),
        ]
        .iter()
        .map(|r| r.impact())
        .collect();
        ranks.sort();
        assert_eq!(ranks, vec![0, 1, 2, 3]);
        assert!(req(false, true).impact() > req(true, true).impact());
    }
}
