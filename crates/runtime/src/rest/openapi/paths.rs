//! The operations of the OpenAPI document, by group of paths: connectors, tasks, plugins,
//! loggers, and the worker's own (`/`, `/tributary/*`, `/metrics`, internal requests).

use super::*;

pub(super) fn connectors_paths(p: &mut Map<String, Value>) {
    p.insert(
        "/connectors".into(),
        json!({
            "get": Op {
                summary: "List connectors",
                description: "The names of all connectors, sorted. With `expand`, an object keyed \
                              by connector name instead, each entry holding the parts asked for.",
                tag: "connectors",
                scope: None,
                parameters: vec![{
                    let mut q = query_param(
                        "expand",
                        "Repeatable. `status` adds each connector's status, `info` its \
                         definition (letter case is ignored). Other values are ignored, but \
                         any `expand` at all switches the answer to the object form.",
                        json!({ "type": "array", "items": { "type": "string",
                                "examples": ["status", "info"] } }),
                    );
                    q["style"] = json!("form");
                    q["explode"] = json!(true);
                    q
                }],
                request: None,
                responses: vec![("200", body(
                    "Connector names, or the expanded object.",
                    json!({ "oneOf": [
                        { "type": "array", "items": { "type": "string" } },
                        { "type": "object",
                          "additionalProperties": schema("ConnectorExpansion") },
                    ]}),
                ))],
            }.build("listConnectors"),
            "post": Op {
                summary: "Create a connector",
                description: "Validates the configuration and creates the connector, running or \
                              in `initial_state`. The `name` setting is added to the config when \
                              it is missing.",
                tag: "connectors",
                scope: None,
                parameters: vec![forward_param()],
                request: Some((schema("CreateConnectorRequest"), "The new connector.")),
                responses: vec![
                    ("201", created()),
                    ("400", error("The configuration is invalid (the message lists every error), \
                                   or its `name` differs from the request's `name`.")),
                    ("409", error("A connector of that name exists already. Also answered in \
                                   distributed mode when a rebalance did not end within 90 s \
                                   (a create that arrives during one waits for it), or when \
                                   forwarding to the leader failed.")),
                    ("415", error(UNSUPPORTED)),
                    ("500", error(&format!("{MALFORMED} Also: `config` missing or null, an \
                                            `initial_state` that is not RUNNING, PAUSED or \
                                            STOPPED; in distributed mode, the configuration \
                                            could not be written or forwarded."))),
                ],
            }.build("createConnector"),
        }),
    );
    p.insert(
        "/connectors/{name}".into(),
        json!({
            "parameters": [connector_param()],
            "get": Op {
                summary: "Get a connector",
                description: "The connector's configuration, tasks and type.",
                tag: "connectors",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The connector.", schema("ConnectorInfo"))),
                    ("404", error(NOT_FOUND)),
                ],
            }.build("getConnector"),
            "delete": Op {
                summary: "Delete a connector",
                description: "Stops the connector and its tasks and removes its configuration.",
                tag: "connectors",
                scope: None,
                parameters: vec![forward_param()],
                request: None,
                responses: vec![
                    ("204", empty("Deleted.")),
                    ("404", error(NOT_FOUND)),
                    ("409", error(CONFLICT)),
                    ("500", error("In distributed mode: the deletion could not be written to \
                                   the config topic, or forwarding it failed.")),
                ],
            }.build("deleteConnector"),
        }),
    );
    p.insert(
        "/connectors/{name}/config".into(),
        json!({
            "parameters": [connector_param()],
            "get": Op {
                summary: "Get a connector's configuration",
                description: "The configuration as stored, keys sorted.",
                tag: "connectors",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The configuration.", schema("ConfigMap"))),
                    ("404", error(NOT_FOUND)),
                ],
            }.build("getConnectorConfig"),
            "put": Op {
                summary: "Create or replace a connector's configuration",
                description: "Validates the configuration; creates the connector when it does \
                              not exist (201), replaces its configuration otherwise (200).",
                tag: "connectors",
                scope: None,
                parameters: vec![forward_param()],
                request: Some((schema("ConfigInput"), "The complete configuration.")),
                responses: vec![
                    ("200", body("The configuration was replaced.", schema("ConnectorInfo"))),
                    ("201", created()),
                    ("400", error("The configuration is invalid (a JSON null value is one of the \
                                   errors), or its `name` differs from the path's.")),
                    ("409", error(CONFLICT)),
                    ("415", error(UNSUPPORTED)),
                    ("500", error(&format!("{MALFORMED} In distributed mode also: the \
                                            configuration could not be written or \
                                            forwarded."))),
                ],
            }.build("putConnectorConfig"),
            "patch": Op {
                summary: "Change part of a connector's configuration",
                description: "Merges the body into the stored configuration: a key with a \
                              string value is set, a key with `null` is removed. The result is \
                              validated and applied like a replacement.",
                tag: "connectors",
                scope: None,
                parameters: vec![forward_param()],
                request: Some((schema("ConfigPatch"), "The keys to set or remove.")),
                responses: vec![
                    ("200", body("The connector with its new configuration.",
                                 schema("ConnectorInfo"))),
                    ("400", error("The merged configuration is invalid.")),
                    ("404", error(NOT_FOUND)),
                    ("409", error(CONFLICT)),
                    ("415", error(UNSUPPORTED)),
                    ("500", error(&format!("{MALFORMED} In distributed mode also: the \
                                            configuration could not be written or \
                                            forwarded."))),
                ],
            }.build("patchConnectorConfig"),
        }),
    );
    p.insert(
        "/connectors/{name}/status".into(),
        json!({
            "parameters": [connector_param()],
            "get": Op {
                summary: "Get a connector's status",
                description: "The state of the connector and of each of its tasks, with the \
                              worker running each and the error trace of failed ones.",
                tag: "connectors",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The status.", schema("ConnectorStateInfo"))),
                    ("404", error("No status is known for a connector of that name.")),
                ],
            }.build("getConnectorStatus"),
        }),
    );
    p.insert(
        "/connectors/{name}/topics".into(),
        json!({
            "parameters": [connector_param()],
            "get": Op {
                summary: "Get the topics a connector used",
                description: "The topics the connector's tasks have produced to or consumed \
                              from since they were last reset (empty for an unknown \
                              connector).",
                tag: "connectors",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The topics, keyed by connector name.",
                                 schema("ConnectorTopics"))),
                    ("403", error("`topic.tracking.enable` is false on this worker.")),
                ],
            }.build("getConnectorTopics"),
        }),
    );
    p.insert(
        "/connectors/{name}/topics/reset".into(),
        json!({
            "parameters": [connector_param()],
            "put": Op {
                summary: "Forget the topics a connector used",
                description: "Clears the connector's set of active topics.",
                tag: "connectors",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("202", empty("Cleared.")),
                    ("403", error("`topic.tracking.enable` or `topic.tracking.allow.reset` is \
                                   false on this worker.")),
                ],
            }.build("resetConnectorTopics"),
        }),
    );
    p.insert(
        "/connectors/{name}/offsets".into(),
        json!({
            "parameters": [connector_param()],
            "get": Op {
                summary: "Get a connector's offsets",
                description: "A source connector's source partitions and offsets from the \
                              offset store; a sink connector's committed offsets in its \
                              consumer group (`kafka_topic`, `kafka_partition`, \
                              `kafka_offset`). KIP-875.",
                tag: "connectors",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The offsets.", schema("ConnectorOffsets"))),
                    ("404", error(NOT_FOUND)),
                    ("500", error("The offsets could not be read.")),
                ],
            }.build("getConnectorOffsets"),
            "patch": Op {
                summary: "Alter a connector's offsets",
                description: "Writes the given offsets (a `null` offset removes one) for a \
                              STOPPED connector, after its `alterOffsets` hook accepted them. \
                              Runs on the leader. KIP-875.",
                tag: "connectors",
                scope: None,
                parameters: vec![forward_param()],
                request: Some((schema("ConnectorOffsets"), "The offsets to write.")),
                responses: vec![
                    ("200", body("The offsets were altered.", schema("Message"))),
                    ("400", error("No offsets given, badly formed sink offsets, or the \
                                   connector is not STOPPED.")),
                    ("404", error(NOT_FOUND)),
                    ("409", error(CONFLICT)),
                    ("415", error(UNSUPPORTED)),
                    ("500", error("The connector refused the offsets, or they could not be \
                                   written.")),
                ],
            }.build("alterConnectorOffsets"),
            "delete": Op {
                summary: "Reset a connector's offsets",
                description: "Removes every offset of a STOPPED connector (source: tombstones \
                              in the offset store; sink: its consumer group is deleted). Runs \
                              on the leader. KIP-875.",
                tag: "connectors",
                scope: None,
                parameters: vec![forward_param()],
                request: None,
                responses: vec![
                    ("200", body("The offsets were reset.", schema("Message"))),
                    ("400", error("The connector is not STOPPED.")),
                    ("404", error(NOT_FOUND)),
                    ("409", error(CONFLICT)),
                    ("500", error("The connector refused the reset, or it could not be \
                                   written.")),
                ],
            }.build("resetConnectorOffsets"),
        }),
    );
    p.insert(
        "/connectors/{name}/restart".into(),
        json!({
            "parameters": [connector_param()],
            "post": Op {
                summary: "Restart a connector",
                description: "Without `includeTasks` and `onlyFailed`, restarts the connector \
                              instance only and answers 204 when it is done. With either, \
                              restarts the selected instances (the connector and, with \
                              `includeTasks`, its tasks; with `onlyFailed`, only those that \
                              failed) and answers 202 at once with the instances to restart \
                              marked RESTARTING.",
                tag: "connectors",
                scope: None,
                parameters: vec![
                    flag_param("includeTasks", "Restart the connector's tasks too."),
                    flag_param("onlyFailed", "Restart only instances that are FAILED."),
                    forward_param(),
                ],
                request: None,
                responses: vec![
                    ("202", body("The restart plan.", schema("ConnectorStateInfo"))),
                    ("204", empty("The connector instance was restarted.")),
                    ("404", error(NOT_FOUND)),
                    ("409", error(CONFLICT)),
                    ("500", error("The connector instance could not be started again; in \
                                   distributed mode also: the request could not be written or \
                                   forwarded.")),
                ],
            }.build("restartConnector"),
        }),
    );
    for (verb, id, summary, description, code, done) in [
        (
            "pause",
            "pauseConnector",
            "Pause a connector",
            "Asks the connector and its tasks to pause; tasks stay assigned but stop moving \
             records. Answers before they have paused.",
            "202",
            "The request was accepted.",
        ),
        (
            "resume",
            "resumeConnector",
            "Resume a connector",
            "Asks a paused or stopped connector and its tasks to run again. Answers before they \
             run.",
            "202",
            "The request was accepted.",
        ),
        (
            "stop",
            "stopConnector",
            "Stop a connector",
            "Stops the connector and shuts its tasks down (their configurations are dropped); \
             the connector stays defined, in state STOPPED.",
            "204",
            "The connector was stopped.",
        ),
    ] {
        let mut responses = vec![
            (code, empty(done)),
            ("404", error(NOT_FOUND)),
            ("409", error(CONFLICT)),
        ];
        let mut parameters = vec![];
        if verb == "stop" {
            parameters.push(forward_param());
            responses.push((
                "500",
                error(
                    "In distributed mode: the request could not be written to the config topic \
                     or forwarded.",
                ),
            ));
        } else {
            responses.push((
                "500",
                error(
                    "In distributed mode: the new state could not be written to the config topic.",
                ),
            ));
        }
        p.insert(
            format!("/connectors/{{name}}/{verb}"),
            json!({
                "parameters": [connector_param()],
                "put": Op {
                    summary,
                    description,
                    tag: "connectors",
                    scope: None,
                    parameters,
                    request: None,
                    responses,
                }.build(id),
            }),
        );
    }
}

pub(super) fn tasks_paths(p: &mut Map<String, Value>) {
    p.insert(
        "/connectors/{name}/fence".into(),
        json!({
            "parameters": [connector_param()],
            "put": Op {
                summary: "Fence a source connector's zombie tasks (internal)",
                description: "Sent to the group's leader by a worker about to start an \
                              exactly-once source task (KIP-618): the leader fences the \
                              transactional producers of the connector's previous task \
                              generation and writes the connector's task count record to the \
                              config topic. When the group uses the `sessioned` protocol the \
                              request must be signed with the session key. Not for clients; a \
                              standalone worker answers 404.",
                tag: "internal",
                scope: Some("internal"),
                parameters: vec![forward_param()],
                request: None,
                responses: vec![
                    ("204", empty("Fenced (or nothing was left to fence).")),
                    ("400", error("The connector is not a source connector, or the request's \
                                   signature is missing or uses an unknown algorithm.")),
                    ("403", error("The request's signature does not match.")),
                    ("404", error("Unknown connector (always, on a standalone worker).")),
                    ("409", error("This worker is not the leader and the request could not be \
                                   forwarded to it, or new task configurations were generated \
                                   during the fencing.")),
                    ("500", error("The config topic could not be read, or the producers could \
                                   not be fenced.")),
                    ("503", error("This worker has no session key yet to check the \
                                   signature.")),
                ],
            }.build("fenceZombieSourceTasks"),
        }),
    );
    p.insert(
        "/connectors/{name}/tasks".into(),
        json!({
            "parameters": [connector_param()],
            "get": Op {
                summary: "List a connector's tasks",
                description: "Each task's id and the configuration its connector generated for \
                              it.",
                tag: "tasks",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The tasks.",
                                 json!({ "type": "array", "items": schema("TaskInfo") }))),
                    ("404", error(NOT_FOUND)),
                ],
            }.build("listConnectorTasks"),
            "post": Op {
                summary: "Hand over task configurations (internal)",
                description: "Sent by the worker running a connector to the group's leader, \
                              with the task configurations the connector generated; the leader \
                              writes them to the config topic. When the group uses the \
                              `sessioned` protocol the request must be signed with the session \
                              key (`X-Connect-Authorization`, \
                              `X-Connect-Request-Signature-Algorithm`). Not for clients; a \
                              standalone worker answers 404.",
                tag: "internal",
                scope: Some("internal"),
                parameters: vec![forward_param()],
                request: Some((
                    json!({ "type": "array", "items": schema("ConfigInput") }),
                    "One configuration per task.",
                )),
                responses: vec![
                    ("204", empty("Written.")),
                    ("400", error("The request's signature is missing or uses an unknown \
                                   algorithm.")),
                    ("403", error("The request's signature does not match.")),
                    ("404", error("Unknown connector (always, on a standalone worker).")),
                    ("409", error("This worker is not the leader and the request could not be \
                                   forwarded to it (no leader is known during a rebalance; the \
                                   sending worker retries), or it was already forwarded twice.")),
                    ("415", error(UNSUPPORTED)),
                    ("500", error(&format!("{MALFORMED} Also: the configurations could not be \
                                            written."))),
                    ("503", error("This worker has no session key yet to check the \
                                   signature.")),
                ],
            }.build("putConnectorTaskConfigs"),
        }),
    );
    p.insert(
        "/connectors/{name}/tasks/{task}/status".into(),
        json!({
            "parameters": [connector_param(), task_param()],
            "get": Op {
                summary: "Get a task's status",
                description: "The task's state, the worker running it, and its error trace when \
                              it failed.",
                tag: "tasks",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The status.", schema("TaskState"))),
                    ("404", error("No status is known for that task, or `task` is not a task \
                                   number.")),
                ],
            }.build("getTaskStatus"),
        }),
    );
    p.insert(
        "/connectors/{name}/tasks/{task}/restart".into(),
        json!({
            "parameters": [connector_param(), task_param()],
            "post": Op {
                summary: "Restart a task",
                description: "Stops the task and starts it again with its current \
                              configuration; answers when it has started.",
                tag: "tasks",
                scope: None,
                parameters: vec![forward_param()],
                request: None,
                responses: vec![
                    ("204", empty("Restarted.")),
                    ("404", error("No such connector or task, or `task` is not a task number.")),
                    ("409", error(CONFLICT)),
                    ("500", error("The task could not be started again; in distributed mode \
                                   also: forwarding the request failed.")),
                ],
            }.build("restartTask"),
        }),
    );
}

pub(super) fn plugins_paths(p: &mut Map<String, Value>) {
    p.insert(
        "/connector-plugins".into(),
        json!({
            "get": Op {
                summary: "List plugins",
                description: "The connector plugins this worker has, sinks then sources, each \
                              group sorted by class (test connectors are left out). With \
                              `connectorsOnly=false`, converters and header converters follow.",
                tag: "plugins",
                scope: None,
                parameters: vec![query_param(
                    "connectorsOnly",
                    "Connectors only when absent, empty or `true` (in any letter case); \
                     any other value also lists converters and header converters.",
                    json!({ "type": "string", "examples": ["true", "false"] }),
                )],
                request: None,
                responses: vec![("200", body(
                    "The plugins.",
                    json!({ "type": "array", "items": schema("PluginInfo") }),
                ))],
            }.build("listPlugins"),
        }),
    );
    p.insert(
        "/connector-plugins/{plugin}/config".into(),
        json!({
            "parameters": [plugin_param()],
            "get": Op {
                summary: "Describe a plugin's settings",
                description: "The settings a plugin takes. For a connector, its own settings \
                              followed by the framework's settings for its kind (source or \
                              sink).",
                tag: "plugins",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The settings.",
                                 json!({ "type": "array", "items": schema("ConfigKeyInfo") }))),
                    ("404", error("No plugin of that name.")),
                ],
            }.build("getPluginConfig"),
        }),
    );
    p.insert(
        "/connector-plugins/{plugin}/config/validate".into(),
        json!({
            "parameters": [plugin_param()],
            "put": Op {
                summary: "Validate a connector configuration",
                description: "Checks a configuration without creating anything. The answer is \
                              200 whether or not the configuration has errors: `error_count` \
                              says how many, and each setting's `value.errors` lists its own. A \
                              JSON null value is reported as an error on its key.",
                tag: "plugins",
                scope: None,
                parameters: vec![],
                request: Some((schema("ConfigPatch"), "The configuration to check.")),
                responses: vec![
                    ("200", body("The validation result.", schema("ConfigInfos"))),
                    ("400", error("`connector.class` in the body names another plugin than the \
                                   path.")),
                    ("415", error(UNSUPPORTED)),
                    ("500", error(&format!("{MALFORMED} Also, as in Connect 4.1: the body has no \
                                            `connector.class`, or names a class this worker \
                                            does not have (the message starts with \
                                            `org.apache.kafka.connect.runtime.rest.errors.\
                                            BadRequestException`)."))),
                ],
            }.build("validateConnectorConfig"),
        }),
    );
}

pub(super) fn loggers_paths(p: &mut Map<String, Value>) {
    p.insert(
        "/admin/loggers".into(),
        json!({
            "get": Op {
                summary: "List logger levels",
                description: "Every logger whose level was set on this worker, and `root`.",
                tag: "loggers",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![("200", body(
                    "Levels keyed by logger name.",
                    json!({ "type": "object", "additionalProperties": schema("LoggerLevel") }),
                ))],
            }.build("listLoggers"),
        }),
    );
    p.insert(
        "/admin/loggers/{logger}".into(),
        json!({
            "parameters": [logger_param()],
            "get": Op {
                summary: "Get a logger's level",
                description: "The level in effect for the logger: its own, or the closest \
                              ancestor's.",
                tag: "loggers",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("The level.", schema("LoggerLevel"))),
                    ("404", error("No logger of that name exists on this worker.")),
                ],
            }.build("getLogger"),
            "put": Op {
                summary: "Set a logger's level",
                description: "Sets the level of the logger and of every logger below it. With \
                              `scope=cluster`, the level is applied on every worker of the \
                              group (in standalone mode, on this one) and the answer is 204.",
                tag: "loggers",
                scope: None,
                parameters: vec![query_param(
                    "scope",
                    "`cluster` (in any letter case) for every worker; anything else, or \
                     nothing, for this worker only.",
                    json!({ "type": "string", "examples": ["worker", "cluster"] }),
                )],
                request: Some((schema("LoggerLevelRequest"), "The new level.")),
                responses: vec![
                    ("200", body("The names of the loggers whose level changed on this worker.",
                                 json!({ "type": "array", "items": { "type": "string" } }))),
                    ("204", empty("Applied to the whole cluster.")),
                    ("400", error("The body has no `level`, or it is null.")),
                    ("404", error("`level` is not a known level (a number or a boolean is \
                                   read as its text, and is not one).")),
                    ("415", error(UNSUPPORTED)),
                    ("500", error(&format!("{MALFORMED} In distributed mode with \
                                            `scope=cluster` also: the level could not be \
                                            written to the config topic."))),
                ],
            }.build("setLoggerLevel"),
        }),
    );
}

pub(super) fn worker_paths(p: &mut Map<String, Value>) {
    p.insert(
        "/".into(),
        json!({
            "get": Op {
                summary: "Describe the worker",
                description: "The Kafka version whose Connect API this worker implements, \
                              Tributary's build, and the Kafka cluster's id.",
                tag: "worker",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![("200", body("The worker.", schema("ServerInfo")))],
            }.build("serverInfo"),
        }),
    );
    p.insert(
        "/health".into(),
        json!({
            "get": Op {
                summary: "Check the worker's health",
                description: "KIP-1017: healthy when the worker has completed its startup \
                              and its herder loop answers within 10 s; `starting` (503) before \
                              the first rebalance completed, `unhealthy` (500) when the loop is \
                              stuck.",
                tag: "worker",
                scope: None,
                parameters: vec![],
                request: None,
                responses: vec![
                    ("200", body("Healthy.", schema("HealthStatus"))),
                    ("500", body("The herder did not answer.", schema("HealthStatus"))),
                    ("503", body("The worker is still starting.", schema("HealthStatus"))),
                ],
            }.build("health"),
        }),
    );
    p.insert(
        "/openapi.json".into(),
        json!({
            "get": Op {
                summary: "This document",
                description: "The OpenAPI description of this worker's REST API.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", body("The document.", json!({ "type": "object" })))],
            }.build("openapi"),
        }),
    );
    p.insert(
        "/tributary/task-counters".into(),
        json!({
            "get": Op {
                summary: "Per-task counters",
                description: "For each task this worker has run: how often it started and \
                              stopped, records it moved, and offset commits.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", body(
                    "Counters keyed by task id (`connector-task`).",
                    json!({ "type": "object", "additionalProperties": schema("Counters") }),
                ))],
            }.build("taskCounters"),
        }),
    );
    p.insert(
        "/tributary/connector-counters".into(),
        json!({
            "get": Op {
                summary: "Per-connector counters",
                description: "For each connector instance this worker has run: how often it \
                              started and stopped.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", body(
                    "Counters keyed by connector name.",
                    json!({ "type": "object", "additionalProperties": schema("Counters") }),
                ))],
            }.build("connectorCounters"),
        }),
    );
    p.insert(
        "/tributary/worker".into(),
        json!({
            "get": Op {
                summary: "This worker's view of its group",
                description: "The worker's id and mode; in distributed mode also the leader, \
                              generation, protocol in use, whether a rebalance is in progress \
                              and whether the worker is stopping, assignment, and rebalance \
                              counts and times.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", body("The worker's view.", schema("WorkerInfo")))],
            }.build("workerInfo"),
        }),
    );
    p.insert(
        "/tributary/rebalances".into(),
        json!({
            "get": Op {
                summary: "Recent rebalances",
                description: "The last 50 rounds this worker completed, oldest first: \
                              generation, protocol, leader, duration (ms), completion time \
                              (ms since the epoch), the jobs assigned to and revoked from \
                              this worker; the leader's records also list the members, those \
                              that joined or left, and the jobs that moved. scope=leader \
                              answers with the leader's timeline.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![query_param(
                    "scope",
                    "leader: the leader's timeline (forwarded to it).",
                    json!({ "type": "string", "enum": ["leader"] }),
                )],
                request: None,
                responses: vec![
                    ("200", body(
                    "The timeline.",
                    json!({ "type": "object", "required": ["worker_id", "rebalances"],
                            "properties": {
                                "worker_id": { "type": "string" },
                                "leader_url": nullable(json!({ "type": "string" })),
                                "rebalances": { "type": "array", "items": { "type": "object" } },
                            } }),
                    )),
                    ("400", error("scope is not leader.")),
                ],
            }.build("rebalances"),
        }),
    );
    p.insert(
        "/tributary/history".into(),
        json!({
            "get": Op {
                summary: "The last 15 minutes of the jobs' counters",
                description: "What the live view plots: every 5 s sample of each task this \
                              worker ran (records in and out, sink lag, ms throttled, starts, \
                              as /metrics counts them) and of each connector it ran, kept 15 \
                              minutes in memory. scope=cluster answers with every member's, \
                              as the leader asks them (forwarded to it); since=<ms> keeps the \
                              points after that time. Only connectors the caller may read.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![
                    query_param(
                        "scope",
                        "cluster: every member's history (forwarded to the leader).",
                        json!({ "type": "string", "enum": ["cluster"] }),
                    ),
                    query_param(
                        "since",
                        "Only points after this time, ms since the epoch.",
                        json!({ "type": "integer", "format": "int64" }),
                    ),
                ],
                request: None,
                responses: vec![
                    ("200", body(
                    "The history of each worker.",
                    json!({ "type": "object", "required": ["workers", "unreachable"],
                            "properties": {
                                "workers": { "type": "array", "items": { "type": "object",
                                    "required": ["worker_id", "worker_url", "interval_ms",
                                                 "window_ms", "connectors", "tasks"] } },
                                "unreachable": { "type": "array", "items": { "type": "object" } },
                            } }),
                    )),
                    ("400", error("scope is not cluster, or since is not a number.")),
                ],
            }.build("history"),
        }),
    );
    p.insert(
        "/ui".into(),
        json!({
            "get": Op {
                summary: "Live view of the cluster",
                description: "One self-contained HTML page (no external resources) showing \
                              workers with their connectors and tasks and states, the leader, \
                              generation and protocol, static claims, recent rebalances, plots \
                              of the last 15 minutes (records/s, sink lag, throttling, \
                              restarts, which worker held which job) and actions (pause, \
                              resume, restart, stop) under the REST authorization; it polls \
                              this worker's JSON endpoints every second.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", json!({
                    "description": "The page.",
                    "content": { "text/html": { "schema": { "type": "string" } } },
                }))],
            }.build("ui"),
        }),
    );
    p.insert(
        "/tributary/connector-health".into(),
        json!({
            "get": Op {
                summary: "Connector health summaries",
                description: "For every connector, from the statuses: HEALTHY (connector and \
                              every task RUNNING), DEGRADED (RUNNING with tasks that are not), \
                              FAILED (the connector or every task FAILED), or the connector's \
                              own PAUSED, STOPPED, UNASSIGNED or RESTARTING; with task counts \
                              by state.",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", body(
                    "Summaries keyed by connector name.",
                    json!({ "type": "object", "additionalProperties": {
                        "type": "object",
                        "required": ["health", "connector", "tasks"],
                        "properties": {
                            "health": { "type": "string", "enum": ["HEALTHY", "DEGRADED",
                                "FAILED", "PAUSED", "STOPPED", "UNASSIGNED", "RESTARTING"] },
                            "connector": { "type": "string" },
                            "tasks": { "type": "object",
                                       "additionalProperties": { "type": "integer" } },
                        },
                    }}),
                ))],
            }.build("connectorHealth"),
        }),
    );
    p.insert(
        "/metrics".into(),
        json!({
            "get": Op {
                summary: "Metrics",
                description: "Connect's metric groups (worker, rebalance, connector, task, \
                              source, sink, task errors) under the Prometheus JMX exporter's \
                              names, the task clients' librdkafka statistics, and Tributary's \
                              own series, in the OpenMetrics text format (docs/metrics.md).",
                tag: "tributary",
                scope: Some("tributary"),
                parameters: vec![],
                request: None,
                responses: vec![("200", json!({
                    "description": "The metrics.",
                    "content": { "application/openmetrics-text": {
                        "schema": { "type": "string" }
                    }},
                }))],
            }.build("metrics"),
        }),
    );
}
