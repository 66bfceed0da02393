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

mod components;
mod paths;

use components::components;
use paths::{connectors_paths, loggers_paths, plugins_paths, tasks_paths, worker_paths};

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
