//! `GET /openapi.json`: an OpenAPI 3.1 description of the REST API this worker serves, built as
//! data with `serde_json`.
//!
//! Every path of [`super::routes`] is described here, with its methods, path and query
//! parameters, JSON request bodies, and the status codes and bodies Tributary answers with. The
//! unit tests below serve the real router and check both directions: every route is in the
//! document with the same methods, and every documented operation reaches a handler rather than
//! the 404/405 fallbacks.
//!
//! Operations that are not part of Connect's public API carry an `x-tributary-scope` extension:
//! `internal` for requests workers send each other, `tributary` for Tributary's own additions
//! (`/tributary/*`, `/metrics`, `/openapi.json`).

use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// `GET /openapi.json`.
pub async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        document().to_string(),
    )
        .into_response()
}

/// The OpenAPI document (built once).
pub fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(build)
}

fn schema(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

fn nullable(s: Value) -> Value {
    json!({ "anyOf": [s, { "type": "null" }] })
}

fn content(schema: Value) -> Value {
    json!({ "application/json": { "schema": schema } })
}

/// A response with a JSON body.
fn body(description: &str, s: Value) -> Value {
    json!({ "description": description, "content": content(s) })
}

/// A response without a body.
fn empty(description: &str) -> Value {
    json!({ "description": description })
}

/// An error response: `{"error_code","message"}`.
fn error(description: &str) -> Value {
    body(description, schema("ErrorMessage"))
}

/// The 201 of a create: the connector and where to find it.
fn created() -> Value {
    json!({
        "description": "The connector was created. `Location` is its URL on the advertised \
                        address, with the name percent-encoded as one path segment.",
        "headers": { "Location": {
            "description": "URL of the new connector.",
            "schema": { "type": "string" }
        }},
        "content": content(schema("ConnectorInfo")),
    })
}

fn path_param(name: &str, description: &str, s: Value) -> Value {
    json!({ "name": name, "in": "path", "required": true, "description": description,
            "schema": s })
}

fn query_param(name: &str, description: &str, s: Value) -> Value {
    json!({ "name": name, "in": "query", "required": false, "description": description,
            "schema": s })
}

fn connector_param() -> Value {
    path_param(
        "name",
        "Connector name (any string; percent-encode characters that are not allowed in a \
         path segment).",
        json!({ "type": "string" }),
    )
}

fn task_param() -> Value {
    path_param(
        "task",
        "Task number, from 0. Any other value matches no task (404).",
        json!({ "type": "integer", "minimum": 0 }),
    )
}

fn plugin_param() -> Value {
    path_param(
        "plugin",
        "Plugin class name, or its alias (the simple class name, with or without the \
         `Connector` suffix).",
        json!({ "type": "string" }),
    )
}

fn logger_param() -> Value {
    path_param(
        "logger",
        "Logger name: `root`, or a dotted namespace.",
        json!({ "type": "string" }),
    )
}

/// The hop counter of forwarded requests (see `rest::forward`).
fn forward_param() -> Value {
    let mut p = query_param(
        "forward",
        "Set by workers when they forward a request in distributed mode; clients leave it \
         out. Absent: the request may be forwarded, then carries `forward=true`, which may be \
         forwarded once more with `forward=false`; a request with `forward=false` that still \
         cannot run here is answered 409. A standalone worker never forwards.",
        json!({ "type": "string" }),
    );
    p["x-tributary-scope"] = json!("internal");
    p
}

/// A Java-style boolean query parameter: only `true` (in any case) is true.
fn flag_param(name: &str, description: &str) -> Value {
    query_param(
        name,
        &format!(
            "{description} Only `true`, in any letter case, counts as true; any other value, \
             or none, counts as false."
        ),
        json!({ "type": "string", "examples": ["true", "false"] }),
    )
}

/// An operation. `scope`: `None` for Connect's API, or `internal` / `tributary`.
struct Op<'a> {
    summary: &'a str,
    description: &'a str,
    tag: &'a str,
    scope: Option<&'a str>,
    parameters: Vec<Value>,
    request: Option<(Value, &'a str)>,
    responses: Vec<(&'a str, Value)>,
}

impl Op<'_> {
    fn build(self, id: &str) -> Value {
        let mut o = Map::new();
        o.insert("operationId".into(), json!(id));
        o.insert("summary".into(), json!(self.summary));
        o.insert("description".into(), json!(self.description));
        o.insert("tags".into(), json!([self.tag]));
        if let Some(scope) = self.scope {
            o.insert("x-tributary-scope".into(), json!(scope));
        }
        if !self.parameters.is_empty() {
            o.insert("parameters".into(), Value::Array(self.parameters));
        }
        if let Some((s, description)) = self.request {
            o.insert(
                "requestBody".into(),
                json!({ "required": true, "description": description, "content": content(s) }),
            );
        }
        let mut responses = Map::new();
        for (code, r) in self.responses {
            responses.insert(code.into(), r);
        }
        o.insert("responses".into(), Value::Object(responses));
        Value::Object(o)
    }
}

const MALFORMED: &str = "The body is not JSON of the expected shape (malformed JSON, a value \
                         of the wrong type, an unknown field). Connect answers these with 500, \
                         and so does Tributary; the message is the parser's.";
const UNSUPPORTED: &str = "The request's `Content-Type` is not JSON (`application/json`, `*/*` or \
     `application/*+json`). A request without `Content-Type` is read as JSON.";
const NOT_FOUND: &str = "No connector of that name.";
const CONFLICT: &str = "In distributed mode: a rebalance did not end within 90 s (a request \
                        that arrives during a rebalance waits for it), the worker is stopping, \
                        the request could not be forwarded to the worker that must run it, or \
                        it was already forwarded twice.";

fn connectors_paths(p: &mut Map<String, Value>) {
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

fn tasks_paths(p: &mut Map<String, Value>) {
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

fn plugins_paths(p: &mut Map<String, Value>) {
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

fn loggers_paths(p: &mut Map<String, Value>) {
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

fn worker_paths(p: &mut Map<String, Value>) {
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
        "/ui".into(),
        json!({
            "get": Op {
                summary: "Live view of the cluster",
                description: "One self-contained HTML page (no external resources) showing \
                              workers with their connectors and tasks and states, the leader, \
                              generation and protocol, static claims, and recent rebalances; \
                              it polls this worker's JSON endpoints every second.",
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

fn components() -> Value {
    let string = json!({ "type": "string" });
    let strings = json!({ "type": "array", "items": { "type": "string" } });
    json!({ "schemas": {
        "ErrorMessage": {
            "description": "Every error answer's body.",
            "type": "object",
            "required": ["error_code", "message"],
            "properties": {
                "error_code": { "type": "integer",
                                "description": "The HTTP status code of the answer." },
                "message": { "type": "string" },
            },
        },
        "ServerInfo": {
            "type": "object",
            "required": ["version", "commit", "kafka_cluster_id"],
            "properties": {
                "version": { "type": "string",
                             "description": "Kafka release whose Connect API is implemented." },
                "commit": { "type": "string", "description": "`tributary-<version>`." },
                "kafka_cluster_id": nullable(string.clone()),
            },
        },
        "HealthStatus": {
            "type": "object",
            "required": ["status", "message"],
            "properties": {
                "status": { "type": "string", "examples": ["healthy", "unhealthy"] },
                "message": { "type": "string" },
            },
        },
        "ConfigMap": {
            "description": "A configuration: setting names to their values.",
            "type": "object",
            "additionalProperties": { "type": "string" },
        },
        "ConfigInput": {
            "description": "A configuration sent to the worker: setting names to values. \
                            Values are strings; numbers and booleans are accepted too and \
                            kept as their JSON text (as Connect's Jackson does). A `null` \
                            value is accepted as JSON but makes the configuration invalid \
                            (400).",
            "type": "object",
            "additionalProperties": { "type": ["string", "number", "boolean", "null"] },
        },
        "ConfigPatch": {
            "description": "Setting names to values, where `null` marks a key to remove \
                            (PATCH) or is reported as an error on its key (validate). Numbers \
                            and booleans are kept as their JSON text.",
            "type": "object",
            "additionalProperties": { "type": ["string", "number", "boolean", "null"] },
        },
        "CreateConnectorRequest": {
            "type": "object",
            "required": ["name", "config"],
            "additionalProperties": false,
            "properties": {
                "name": { "type": ["string", "number", "boolean"],
                          "description": "The connector's name, a string (surrounding blanks \
                                          are trimmed; a number or a boolean is read as its \
                                          text)." },
                "config": schema("ConfigInput"),
                "initial_state": {
                    "description": "State to create the connector in (letter case is \
                                    ignored); RUNNING when absent or null. Any other value \
                                    is refused (500).",
                    "type": ["string", "null"],
                    "enum": ["RUNNING", "PAUSED", "STOPPED", null],
                },
            },
        },
        "ConnectorTaskId": {
            "type": "object",
            "required": ["connector", "task"],
            "properties": {
                "connector": string.clone(),
                "task": { "type": "integer", "minimum": 0 },
            },
        },
        "ConnectorInfo": {
            "type": "object",
            "required": ["name", "config", "tasks", "type"],
            "properties": {
                "name": string.clone(),
                "config": schema("ConfigMap"),
                "tasks": { "type": "array", "items": schema("ConnectorTaskId") },
                "type": { "type": "string", "enum": ["source", "sink", "unknown"] },
            },
        },
        "ConnectorState": {
            "type": "object",
            "required": ["state", "worker_id"],
            "properties": {
                "state": { "type": "string", "examples": ["RUNNING", "PAUSED", "STOPPED",
                           "FAILED", "UNASSIGNED", "RESTARTING"] },
                "worker_id": string.clone(),
                "version": nullable(string.clone()),
                "trace": { "type": "string",
                           "description": "The error of a FAILED instance." },
                "auto_restart": schema("AutoRestart"),
            },
        },
        "AutoRestart": {
            "description": "Tributary's automatic restarts of the instance \
                            (`tributary.restart.*`), shown by the worker running it.",
            "type": "object",
            "required": ["restarts", "last_failure_ms", "exhausted"],
            "properties": {
                "restarts": { "type": "integer", "minimum": 0 },
                "last_failure_trace": string.clone(),
                "last_failure_ms": { "type": "integer" },
                "next_restart_in_ms": { "type": "integer", "minimum": 0 },
                "backoff_ms": { "type": "integer", "minimum": 0 },
                "exhausted": { "type": "boolean" },
            },
        },
        "TaskProgress": {
            "description": "A stalled task running on the answering worker: its `poll` \
                            (source) or `put` (sink) has run for \
                            `tributary.task.stall.threshold.ms` or more (Tributary).",
            "type": "object",
            "required": ["stalled"],
            "properties": {
                "last_call_age_ms": { "type": "integer", "minimum": 0 },
                "call_running_ms": { "type": "integer", "minimum": 0 },
                "stalled": { "type": "boolean" },
            },
        },
        "TaskState": {
            "type": "object",
            "required": ["id", "state", "worker_id"],
            "properties": {
                "id": { "type": "integer", "minimum": 0 },
                "state": { "type": "string" },
                "worker_id": string.clone(),
                "version": nullable(string.clone()),
                "trace": string.clone(),
                "auto_restart": schema("AutoRestart"),
                "progress": schema("TaskProgress"),
            },
        },
        "ConnectorStateInfo": {
            "type": "object",
            "required": ["name", "connector", "tasks", "type"],
            "properties": {
                "name": string.clone(),
                "connector": schema("ConnectorState"),
                "tasks": { "type": "array", "items": schema("TaskState") },
                "type": { "type": "string", "enum": ["source", "sink", "unknown"] },
            },
        },
        "ConnectorExpansion": {
            "description": "One connector in `GET /connectors?expand=…`.",
            "type": "object",
            "properties": {
                "status": schema("ConnectorStateInfo"),
                "info": nullable(schema("ConnectorInfo")),
            },
        },
        "ConnectorOffsets": {
            "type": "object",
            "required": ["offsets"],
            "properties": {
                "offsets": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "partition": { "type": ["object", "null"] },
                            "offset": { "type": ["object", "null"] },
                        },
                    },
                },
            },
        },
        "Message": {
            "type": "object",
            "required": ["message"],
            "properties": { "message": { "type": "string" } },
        },
        "ConnectorTopics": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["topics"],
                "properties": { "topics": strings.clone() },
            },
        },
        "TaskInfo": {
            "type": "object",
            "required": ["id", "config"],
            "properties": {
                "id": schema("ConnectorTaskId"),
                "config": schema("ConfigMap"),
            },
        },
        "PluginInfo": {
            "type": "object",
            "required": ["class", "type"],
            "properties": {
                "class": string.clone(),
                "type": { "type": "string",
                          "enum": ["source", "sink", "converter", "header_converter",
                                   "transformation", "predicate"] },
                "version": string.clone(),
            },
        },
        "ConfigKeyInfo": {
            "description": "The definition of one setting.",
            "type": "object",
            "required": ["name", "type", "required", "default_value", "importance",
                         "documentation", "group", "width", "display_name", "dependents",
                         "order"],
            "properties": {
                "name": string.clone(),
                "type": { "type": "string", "examples": ["STRING", "INT", "LONG", "DOUBLE",
                          "BOOLEAN", "LIST", "CLASS", "PASSWORD"] },
                "required": { "type": "boolean" },
                "default_value": nullable(string.clone()),
                "importance": { "type": "string", "enum": ["HIGH", "MEDIUM", "LOW"] },
                "documentation": string.clone(),
                "group": nullable(string.clone()),
                "width": { "type": "string", "enum": ["NONE", "SHORT", "MEDIUM", "LONG"] },
                "display_name": string.clone(),
                "dependents": strings.clone(),
                "order": { "type": "integer" },
            },
        },
        "ConfigValueInfo": {
            "description": "The value of one setting and its problems.",
            "type": "object",
            "required": ["name", "value", "recommended_values", "errors", "visible"],
            "properties": {
                "name": string.clone(),
                "value": nullable(string.clone()),
                "recommended_values": strings.clone(),
                "errors": strings.clone(),
                "visible": { "type": "boolean" },
            },
        },
        "ConfigInfo": {
            "type": "object",
            "required": ["definition", "value"],
            "properties": {
                "definition": nullable(schema("ConfigKeyInfo")),
                "value": nullable(schema("ConfigValueInfo")),
            },
        },
        "ConfigInfos": {
            "type": "object",
            "required": ["name", "error_count", "groups", "configs"],
            "properties": {
                "name": { "type": "string", "description": "The connector class." },
                "error_count": { "type": "integer", "minimum": 0 },
                "groups": strings.clone(),
                "configs": { "type": "array", "items": schema("ConfigInfo") },
            },
        },
        "LoggerLevel": {
            "type": "object",
            "required": ["level", "last_modified"],
            "properties": {
                "level": string.clone(),
                "last_modified": {
                    "description": "When the level was last set through the API (milliseconds \
                                    since the epoch); null when never.",
                    "type": ["integer", "null"],
                },
            },
        },
        "LoggerLevelRequest": {
            "type": "object",
            "required": ["level"],
            "properties": {
                "level": { "type": "string",
                           "description": "TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF \
                                           (letter case is ignored).",
                           "examples": ["INFO", "DEBUG"] },
            },
        },
        "Counters": {
            "type": "object",
            "required": ["starts", "stops", "records", "offset_commits", "skipped"],
            "properties": {
                "starts": { "type": "integer", "minimum": 0 },
                "stops": { "type": "integer", "minimum": 0 },
                "records": { "type": "integer", "minimum": 0 },
                "offset_commits": { "type": "integer", "minimum": 0 },
                "skipped": { "type": "integer", "minimum": 0,
                             "description": "Records skipped because errors.tolerance=all \
                                             tolerated their failure." },
            },
        },
        "WorkerInfo": {
            "type": "object",
            "required": ["worker_id", "mode"],
            "properties": {
                "worker_id": string.clone(),
                "mode": { "type": "string", "enum": ["standalone", "distributed"] },
            },
        },
    }})
}

const BAD_PATH: &str = "A path parameter is not valid percent-encoded UTF-8.";
const TOO_LARGE: &str = "The body is larger than 16 MiB (Connect sets no limit).";

/// Answers every operation of a kind shares: 400 for a path parameter that does not decode,
/// 413 for a body over the limit ([`super::forward::MAX_BODY`]).
fn add_common_answers(paths: &mut Map<String, Value>) {
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, op) in item.iter_mut() {
            if method == "parameters" {
                continue;
            }
            let has_body = op.get("requestBody").is_some();
            let responses = op["responses"].as_object_mut().unwrap();
            if path.contains('{') {
                match responses.get_mut("400") {
                    Some(r) => {
                        let d = r["description"].as_str().unwrap_or_default();
                        r["description"] = json!(format!("{d} Also: {BAD_PATH}"));
                    }
                    None => {
                        responses.insert("400".into(), error(BAD_PATH));
                    }
                }
            }
            if has_body {
                responses.insert("413".into(), error(TOO_LARGE));
            }
            // Status codes in ascending order, as a reader expects them.
            let mut sorted: Vec<(String, Value)> = std::mem::take(responses).into_iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            responses.extend(sorted);
        }
    }
}

fn build() -> Value {
    let mut paths = Map::new();
    worker_paths(&mut paths);
    connectors_paths(&mut paths);
    tasks_paths(&mut paths);
    plugins_paths(&mut paths);
    loggers_paths(&mut paths);
    add_common_answers(&mut paths);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Tributary REST API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": format!(
                "The REST API of a Tributary worker: the paths, status codes and JSON bodies of \
                 Kafka Connect {kafka}'s REST API, plus a few Tributary additions (marked \
                 `x-tributary-scope: tributary`) and the requests workers send each other \
                 (`x-tributary-scope: internal`). Errors are answered with an `ErrorMessage` \
                 body whose `error_code` repeats the status. Unknown paths are answered 404 and \
                 known paths with another method 405, both with that body. Requests under \
                 `/connectors`, `/connector-plugins` and `/admin/loggers` whose `Content-Type` \
                 is not JSON are answered 415.",
                kafka = crate::COMPATIBLE_KAFKA_VERSION
            ),
        },
        "tags": [
            { "name": "worker", "description": "The worker itself." },
            { "name": "connectors", "description": "Creating, configuring and controlling \
                                                    connectors." },
            { "name": "tasks", "description": "A connector's tasks." },
            { "name": "plugins", "description": "The plugins this worker has." },
            { "name": "loggers", "description": "Log levels." },
            { "name": "tributary", "description": "Tributary additions, not in Kafka Connect." },
            { "name": "internal", "description": "Requests between workers, not for clients." },
        ],
        "paths": paths,
        "components": components(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;
    use crate::rest::routes;
    use crate::rest::test_server::serve;

    const METHODS: [&str; 5] = ["get", "put", "post", "patch", "delete"];

    fn doc_paths() -> &'static Map<String, Value> {
        document()["paths"].as_object().unwrap()
    }

    /// The documented methods of a path item, lowercase.
    fn doc_methods(item: &Value) -> BTreeSet<&'static str> {
        METHODS
            .into_iter()
            .filter(|m| item.get(*m).is_some())
            .collect()
    }

    /// The path with its parameters filled in.
    fn concrete(path: &str) -> String {
        path.replace("{name}", "openapi-probe")
            .replace("{task}", "0")
            .replace("{plugin}", "FileStreamSource")
            .replace("{logger}", "tributary.openapi.probe")
    }

    /// Whether an answer came from the router's fallbacks (unknown path or method).
    fn from_fallback(status: u16, body: &Value) -> bool {
        status == 405
            || (status == 404
                && body == &json!({"error_code": 404, "message": "HTTP 404 Not Found"}))
    }

    #[test]
    fn the_document_describes_exactly_the_routers_paths() {
        let routed: BTreeSet<&str> = routes().into_iter().map(|(p, _)| p).collect();
        let documented: BTreeSet<&str> = doc_paths().keys().map(String::as_str).collect();
        assert_eq!(routed, documented);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_method_is_served_exactly_when_it_is_documented() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let http = reqwest::Client::new();
        let mut checked = 0;
        for (path, item) in doc_paths() {
            let documented = doc_methods(item);
            for method in METHODS {
                let mut req = http.request(
                    method.to_uppercase().parse().unwrap(),
                    format!("{url}{}", concrete(path)),
                );
                if item
                    .get(method)
                    .is_some_and(|op| op.get("requestBody").is_some())
                {
                    req = req.header("Content-Type", "application/json").body("{}");
                }
                let r = req.send().await.unwrap();
                let status = r.status().as_u16();
                let body: Value = r.json().await.unwrap_or(Value::Null);
                if documented.contains(method) {
                    assert!(
                        !from_fallback(status, &body),
                        "{method} {path} is documented but not routed: {status} {body}"
                    );
                    checked += 1;
                } else {
                    assert_eq!(
                        (status, body),
                        (
                            405,
                            json!({"error_code": 405, "message": "HTTP 405 Method Not Allowed"})
                        ),
                        "{method} {path} is routed but not documented"
                    );
                }
            }
        }
        assert!(checked >= routes().len(), "{checked} operations checked");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_worker_serves_the_document() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let r = reqwest::get(format!("{url}/openapi.json")).await.unwrap();
        assert_eq!(r.status().as_u16(), 200);
        assert_eq!(r.headers()["content-type"], "application/json");
        let served: Value = r.json().await.unwrap();
        assert_eq!(&served, document());
        assert_eq!(served["openapi"], "3.1.0");
    }

    #[test]
    fn path_parameters_match_each_path_template() {
        let template = regex::Regex::new(r"\{([^}]+)\}").unwrap();
        for (path, item) in doc_paths() {
            let in_template: BTreeSet<String> = template
                .captures_iter(path)
                .map(|c| c[1].to_string())
                .collect();
            let declared = |params: Option<&Value>| -> Vec<String> {
                params
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "path")
                    .map(|p| p["name"].as_str().unwrap().to_string())
                    .collect()
            };
            for method in doc_methods(item) {
                let mut names = declared(item.get("parameters"));
                names.extend(declared(item[method].get("parameters")));
                let set: BTreeSet<String> = names.iter().cloned().collect();
                assert_eq!(set.len(), names.len(), "{method} {path}: duplicates");
                assert_eq!(set, in_template, "{method} {path}");
            }
        }
    }

    #[test]
    fn operations_are_complete_and_references_resolve() {
        let doc = document();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        let mut ids = BTreeMap::new();
        for (path, item) in doc_paths() {
            for method in doc_methods(item) {
                let op = &item[method];
                let id = op["operationId"].as_str().unwrap();
                assert!(ids.insert(id, (method, path)).is_none(), "{id} twice");
                assert!(op["summary"].is_string() && op["description"].is_string());
                let responses = op["responses"].as_object().unwrap();
                assert!(!responses.is_empty(), "{method} {path}");
                for (code, r) in responses {
                    assert!(r["description"].is_string(), "{method} {path} {code}");
                    let status: u16 = code.parse().unwrap();
                    // Every error answer of the API body is an ErrorMessage, except /health's.
                    if status >= 400 && path != "/health" {
                        assert_eq!(
                            r["content"]["application/json"]["schema"],
                            schema("ErrorMessage"),
                            "{method} {path} {code}"
                        );
                    }
                }
                // A body is JSON, and so it may be refused with 415 under the checked prefixes.
                if op.get("requestBody").is_some() {
                    assert!(op["requestBody"]["content"]["application/json"].is_object());
                    assert!(responses.contains_key("415"), "{method} {path}");
                    assert!(responses.contains_key("413"), "{method} {path}");
                }
            }
        }
        fn refs<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
            match v {
                Value::Object(o) => {
                    if let Some(Value::String(r)) = o.get("$ref") {
                        out.push(r);
                    }
                    o.values().for_each(|v| refs(v, out));
                }
                Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
                _ => {}
            }
        }
        let mut found = Vec::new();
        refs(doc, &mut found);
        assert!(!found.is_empty());
        for r in found {
            let name = r.strip_prefix("#/components/schemas/").unwrap();
            assert!(schemas.contains_key(name), "dangling {r}");
        }
    }
}
