//! KIP-745 restart plans (Connect's `RestartPlan`, `AbstractHerder.buildRestartPlan`): which
//! instances a [`RestartRequest`] (in [`crate::config_records`]) selects, decided from a
//! worker's status view. Pure functions, shared by the standalone and distributed herders.

use std::collections::BTreeMap;

use super::info::{ConnectorState, ConnectorStateInfo, TaskState};
use crate::config_records::RestartRequest;
use crate::storage::status::{State, Status};

/// Whether `request` selects an instance in `state` (`!onlyFailed || FAILED`).
fn selects(request: &RestartRequest, state: State) -> bool {
    !request.only_failed || state == State::Failed
}

/// What a restart request selects, per a status view.
#[derive(Debug, Clone, PartialEq)]
pub struct RestartPlan {
    pub request: RestartRequest,
    pub restart_connector: bool,
    pub task_ids: Vec<u32>,
    /// The preview: selected instances show RESTARTING, the others their current state.
    pub state_info: ConnectorStateInfo,
}

/// Builds the plan from a connector's status and its tasks' statuses (only tasks that have a
/// status are considered). `None` when the connector has no status.
pub fn build_restart_plan(
    request: &RestartRequest,
    connector_status: Option<&Status>,
    task_statuses: &BTreeMap<u32, Status>,
    connector_type: &str,
) -> Option<RestartPlan> {
    let cs = connector_status?;
    let restart_connector = selects(request, cs.state);
    let mut task_ids = Vec::new();
    let mut tasks = Vec::new();
    for (id, ts) in task_statuses {
        let selected = request.include_tasks && selects(request, ts.state);
        if selected {
            task_ids.push(*id);
        }
        tasks.push(TaskState {
            id: *id,
            state: if selected {
                State::Restarting.as_str().into()
            } else {
                ts.state.as_str().into()
            },
            worker_id: ts.worker_id.clone(),
            version: ts.version.clone(),
            trace: if selected {
                None
            } else {
                ts.trace.clone().filter(|t| !t.is_empty())
            },
            auto_restart: None,
            progress: None,
            throttle: None,
        });
    }
    Some(RestartPlan {
        request: request.clone(),
        restart_connector,
        task_ids,
        state_info: ConnectorStateInfo {
            name: request.connector.clone(),
            connector: ConnectorState {
                state: if restart_connector {
                    State::Restarting.as_str().into()
                } else {
                    cs.state.as_str().into()
                },
                worker_id: cs.worker_id.clone(),
                version: cs.version.clone(),
                trace: if restart_connector {
                    None
                } else {
                    cs.trace.clone().filter(|t| !t.is_empty())
                },
                auto_restart: None,
            },
            tasks,
            connector_type: connector_type.to_string(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(state: State) -> Status {
        Status {
            state,
            trace: if state == State::Failed {
                Some("boom".into())
            } else {
                None
            },
            worker_id: "w:1".into(),
            generation: 0,
            version: None,
        }
    }

    fn tasks() -> BTreeMap<u32, Status> {
        [
            (0, st(State::Running)),
            (1, st(State::Failed)),
            (2, st(State::Running)),
        ]
        .into_iter()
        .collect()
    }

    fn req(only_failed: bool, include_tasks: bool) -> RestartRequest {
        RestartRequest {
            connector: "c".into(),
            only_failed,
            include_tasks,
        }
    }

    #[test]
    fn every_flag_combination_selects_as_connect_does() {
        let running = st(State::Running);
        let failed = st(State::Failed);
        let cases = [
            (req(false, false), &running, true, vec![]),
            (req(false, true), &running, true, vec![0, 1, 2]),
            (req(true, false), &running, false, vec![]),
            (req(true, true), &running, false, vec![1]),
            (req(true, false), &failed, true, vec![]),
            (req(true, true), &failed, true, vec![1]),
        ];
        for (r, cs, conn, ids) in cases {
            let plan = build_restart_plan(&r, Some(cs), &tasks(), "source").unwrap();
            assert_eq!(plan.restart_connector, conn, "{r:?}");
            assert_eq!(plan.task_ids, ids, "{r:?}");
            let restarting: Vec<u32> = plan
                .state_info
                .tasks
                .iter()
                .filter(|t| t.state == "RESTARTING")
                .map(|t| t.id)
                .collect();
            assert_eq!(restarting, plan.task_ids);
            assert_eq!(plan.state_info.connector.state == "RESTARTING", conn);
        }
    }

    #[test]
    fn no_connector_status_means_no_plan() {
        assert!(build_restart_plan(&req(false, true), None, &tasks(), "source").is_none());
    }
}
