//! The schemas of the OpenAPI document's `components`: the request and answer bodies of
//! Connect's REST API (and Tributary's additions), field for field.

use super::*;

pub(super) fn components() -> Value {
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
                         "documentation", "group", "order_in_group", "width", "display_name",
                         "dependents"],
            "properties": {
                "name": string.clone(),
                "type": { "type": "string", "examples": ["STRING", "INT", "LONG", "DOUBLE",
                          "BOOLEAN", "LIST", "CLASS", "PASSWORD"] },
                "required": { "type": "boolean" },
                "default_value": nullable(string.clone()),
                "importance": { "type": "string", "enum": ["HIGH", "MEDIUM", "LOW"] },
                "documentation": string.clone(),
                "group": nullable(string.clone()),
                "order_in_group": { "type": "integer" },
                "width": { "type": "string", "enum": ["NONE", "SHORT", "MEDIUM", "LONG"] },
                "display_name": string.clone(),
                "dependents": strings.clone(),
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
