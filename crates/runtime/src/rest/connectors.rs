//! Handlers of `/`, `/health` and `/connectors/**` (Connect's `RootResource` and
//! `ConnectorsResource`), with Connect's status codes and bodies.

use std::collections::{BTreeMap, HashMap};

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value as Json_;

use super::authorization::Visible;
use super::entities::ServerInfo;
use super::error::RestError;
use super::{call, call_settled, RestState};
use crate::config::properties::{json_member, json_object_texts, json_text, JsonText};
use crate::config_records::RestartRequest;
use crate::worker::TargetState;
use crate::ConnectorTaskId;

fn query_pairs(q: &Option<String>) -> Vec<(String, String)> {
    q.as_deref()
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// Java's `Boolean.valueOf`: only a case-insensitive "true" is true.
fn java_bool(q: &[(String, String)], key: &str) -> bool {
    q.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.eq_ignore_ascii_case("true"))
        .unwrap_or(false)
}

/// Parses a JSON body; malformed JSON is a 500 carrying the parser's message, as Connect's
/// Jackson failures are.
fn parse_json(body: &Bytes) -> Result<Json_, RestError> {
    serde_json::from_slice(body)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))
}

/// A JSON value (its source text) read as Jackson reads a `String`: a string as it is, a
/// number or a boolean as written, `null` as `None`. An object or an array is refused with 500,
/// as Connect answers a body it cannot deserialize; `what` names the field or key.
pub(crate) fn jackson_string(raw: &str, what: &str) -> Result<Option<String>, RestError> {
    match json_text(raw)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?
    {
        JsonText::Text(s) => Ok(Some(s)),
        JsonText::Null => Ok(None),
        JsonText::Structured(kind) => Err(structured(kind, what)),
    }
}

fn structured(kind: &str, what: &str) -> RestError {
    RestError::new(
        500,
        format!("Cannot deserialize value of type `java.lang.String` from {kind} ({what})"),
    )
}

/// A config map (`Map<String,String>`) from the JSON source text of an object: numbers and
/// booleans become their text as written (`1.50` stays `1.50`, as Jackson keeps it); JSON null
/// is `None` (removes keys in PATCH, is refused or dropped elsewhere).
fn config_map(json: &str) -> Result<HashMap<String, Option<String>>, RestError> {
    let members = json_object_texts(json)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?
        .ok_or_else(|| RestError::new(500, "Cannot deserialize value of type `java.util.HashMap<java.lang.String,java.lang.String>` from non-object JSON"))?;
    members
        .into_iter()
        .map(|(k, v)| match v {
            JsonText::Text(s) => Ok((k, Some(s))),
            JsonText::Null => Ok((k, None)),
            JsonText::Structured(kind) => Err(structured(kind, &format!("for key \"{k}\""))),
        })
        .collect()
}

/// The text of a body that parsed as JSON (and so is UTF-8).
fn body_text(body: &Bytes) -> Result<&str, RestError> {
    std::str::from_utf8(body)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))
}

/// The keys of a JSON object whose value is `null`, sorted.
pub(crate) fn null_keys(v: &Json_) -> Vec<String> {
    let mut keys: Vec<String> = v
        .as_object()
        .map(|o| {
            o.iter()
                .filter(|(_, v)| v.is_null())
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    keys.sort();
    keys
}

/// Create and replace refuse a config holding JSON `null` values as Connect does: the config is
/// validated with those keys reported as null, and the answer is the 400 listing every error.
async fn refuse_null_values(
    s: &RestState,
    config: &HashMap<String, Option<String>>,
) -> Result<(), RestError> {
    let mut nulls: Vec<String> = config
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| k.clone())
        .collect();
    if nulls.is_empty() {
        return Ok(());
    }
    nulls.sort();
    let present = non_null(config.clone());
    call(s, move |h| {
        let infos = h.validate_connector_config(&present, &nulls)?;
        crate::herder::validation::invalid_config(&infos)
    })
    .await
}

fn non_null(m: HashMap<String, Option<String>>) -> HashMap<String, String> {
    m.into_iter()
        .filter_map(|(k, v)| v.map(|v| (k, v)))
        .collect()
}

fn parse_task(task: &str) -> Result<u32, RestError> {
    task.parse()
        .map_err(|_| RestError::new(404, "HTTP 404 Not Found"))
}

/// `GET /`.
pub async fn server_info(State(s): State<RestState>) -> Json<ServerInfo> {
    Json(ServerInfo {
        version: crate::COMPATIBLE_KAFKA_VERSION.into(),
        commit: format!("tributary-{}", env!("CARGO_PKG_VERSION")),
        kafka_cluster_id: s.herder.kafka_cluster_id(),
    })
}

/// `GET /health` (KIP-1017): the herder answered a no-op request.
pub async fn health(State(s): State<RestState>) -> Response {
    health_within(&s, HEALTH_CHECK_TIMEOUT).await
}

/// How long `GET /health` waits for the herder (Connect's
/// `RestServer.DEFAULT_HEALTH_CHECK_TIMEOUT_MS`, 10 s).
pub const HEALTH_CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// KIP-1017's health check (Connect's `RootResource.healthCheck`), waiting at most `timeout`
/// for the herder's control loop to answer ([`crate::herder::Herder::health_check`]):
/// 200 `{"status":"healthy",…}` when it does; otherwise 503 `{"status":"starting",…}` while
/// the herder has not completed its startup ([`crate::herder::Herder::is_ready`]), 500
/// `{"status":"unhealthy",…}` after it (a loop busy or stuck for longer than `timeout`).
/// The messages are Connect's (`WorkerStatus`).
pub async fn health_within(s: &RestState, timeout: std::time::Duration) -> Response {
    let herder = s.herder.clone();
    let probe = tokio::task::spawn_blocking(move || herder.health_check());
    let answered = matches!(tokio::time::timeout(timeout, probe).await, Ok(Ok(Ok(()))));
    if answered && s.herder.is_ready() {
        return Json(serde_json::json!({"status":"healthy","message":"Worker has completed startup and is ready to handle requests."})).into_response();
    }
    if !s.herder.is_ready() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({"status":"starting","message":"Worker is still starting up."})),
        )
            .into_response();
    }
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(serde_json::json!({"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests."})),
    )
        .into_response()
}

/// `GET /connectors[?expand=status&expand=info]`.
pub async fn list(
    State(s): State<RestState>,
    RawQuery(q): RawQuery,
) -> Result<Json<Json_>, RestError> {
    let q = query_pairs(&q);
    let expands: Vec<String> = q
        .iter()
        .filter(|(k, _)| k == "expand")
        .map(|(_, v)| v.clone())
        .collect();
    let has_expand = q.iter().any(|(k, _)| k == "expand");
    let names = call(&s, |h| h.connectors()).await?;
    if !has_expand {
        return Ok(Json(serde_json::to_value(names).unwrap()));
    }
    let want_status = expands.iter().any(|e| e.eq_ignore_ascii_case("status"));
    let want_info = expands.iter().any(|e| e.eq_ignore_ascii_case("info"));
    let out = call(&s, move |h| {
        let mut out = serde_json::Map::new();
        for name in names {
            let mut entry = serde_json::Map::new();
            if want_status {
                learn_secrets(h, &name);
                match h.connector_status(&name) {
                    Ok(st) => {
                        entry.insert("status".into(), serde_json::to_value(st).unwrap());
                    }
                    Err(_) => continue,
                }
            }
            if want_info {
                entry.insert(
                    "info".into(),
                    h.connector_info(&name)
                        .ok()
                        .map(|i| serde_json::to_value(i).unwrap())
                        .unwrap_or(Json_::Null),
                );
            }
            out.insert(name, Json_::Object(entry));
        }
        Ok(out)
    })
    .await?;
    Ok(Json(Json_::Object(out)))
}

fn check_name(name: &str, config: &mut HashMap<String, String>) -> Result<(), RestError> {
    match config.get("name") {
        Some(n) if n != name => Err(RestError::new(
            400,
            format!("Connector name configuration ({n}) doesn't match connector name in the URL ({name})"),
        )),
        Some(_) => Ok(()),
        None => {
            config.insert("name".into(), name.to_string());
            Ok(())
        }
    }
}

fn created(s: &RestState, name: &str, body: impl serde::Serialize) -> Response {
    let location = crate::peer::connector_url(&s.advertised_url, name);
    (
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(body),
    )
        .into_response()
}

/// The name of the connector a `POST /connectors` body creates, as the handler reads it and as
/// REST authorization checks it (one reading for both, issue #42): Jackson reads a number or a
/// boolean given for `name` as its text, and refuses an object or an array; a missing or null
/// name is empty (and fails validation); surrounding white space is trimmed, as Connect does.
pub(crate) fn created_name(body: &[u8]) -> Result<String, RestError> {
    let text = std::str::from_utf8(body)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?;
    let name = match json_member(text, "name") {
        Some(n) => jackson_string(n, "for field \"name\"")?.unwrap_or_default(),
        None => String::new(),
    };
    Ok(name.trim().to_string())
}

/// `POST /connectors` with `{"name","config","initial_state"?}`: 201 + Location.
pub async fn create(State(s): State<RestState>, body: Bytes) -> Result<Response, RestError> {
    let v = parse_json(&body)?;
    let obj = v.as_object().ok_or_else(|| {
        RestError::new(
            500,
            "Cannot construct instance of `CreateConnectorRequest` from non-object JSON",
        )
    })?;
    for k in obj.keys() {
        if !["name", "config", "initial_state"].contains(&k.as_str()) {
            return Err(RestError::new(500, format!("Unrecognized field \"{k}\" (class org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest), not marked as ignorable")));
        }
    }
    let name = created_name(&body)?;
    let config = match json_member(body_text(&body)?, "config") {
        Some(c) if c != "null" => config_map(c)?,
        _ => return Err(RestError::new(500, "Connector config must be provided")),
    };
    // Any `initial_state` but null or one of the three names (in any case) is refused, as
    // Connect's enum creator refuses it: a number or a boolean is not ignored.
    let initial_state = match obj.get("initial_state") {
        None | Some(Json_::Null) => None,
        Some(v) => {
            // A number or a boolean is read as its text, which names no state either.
            let st = v.as_str().unwrap_or_default();
            Some(match st.to_ascii_uppercase().as_str() {
                "RUNNING" => TargetState::Started,
                "PAUSED" => TargetState::Paused,
                "STOPPED" => TargetState::Stopped,
                _ => return Err(RestError::new(500, format!("Cannot deserialize value of type `InitialState` from {v}: not one of the values accepted for Enum class: [PAUSED, RUNNING, STOPPED]"))),
            })
        }
    };
    refuse_null_values(&s, &config).await?;
    let mut config = non_null(config);
    check_name(&name, &mut config)?;
    let n = name.clone();
    let r = call_settled(&s, move |h| {
        h.put_connector_config(&n, config.clone(), false, initial_state)
    })
    .await?;
    Ok(created(&s, &name, r.result))
}

/// `GET /connectors/{c}`.
pub async fn get_connector(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Response, RestError> {
    Ok(Json(call(&s, move |h| h.connector_info(&name)).await?).into_response())
}

/// `GET /connectors/{c}/config`.
pub async fn get_config(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Response, RestError> {
    let cfg = call(&s, move |h| h.connector_config(&name)).await?;
    let sorted: BTreeMap<_, _> = cfg.into_iter().collect();
    Ok(Json(sorted).into_response())
}

/// `PUT /connectors/{c}/config`: 201 + Location when created, 200 when updated.
pub async fn put_config(
    State(s): State<RestState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, RestError> {
    parse_json(&body)?;
    let config = config_map(body_text(&body)?)?;
    refuse_null_values(&s, &config).await?;
    let mut config = non_null(config);
    check_name(&name, &mut config)?;
    let n = name.clone();
    let r = call_settled(&s, move |h| {
        h.put_connector_config(&n, config.clone(), true, None)
    })
    .await?;
    if r.created {
        Ok(created(&s, &name, r.result))
    } else {
        Ok(Json(r.result).into_response())
    }
}

/// `PATCH /connectors/{c}/config`: null values remove keys; always 200.
pub async fn patch_config(
    State(s): State<RestState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, RestError> {
    parse_json(&body)?;
    let patch = config_map(body_text(&body)?)?;
    // Unlike Connect, which stores a patched `name` under the URL's connector, a name that
    // differs is refused as PUT refuses it (issue #42: a config that names another connector).
    if let Some(Some(n)) = patch
        .get("name")
        .filter(|n| n.as_deref() != Some(name.as_str()))
    {
        return Err(RestError::new(
            400,
            format!("Connector name configuration ({n}) doesn't match connector name in the URL ({name})"),
        ));
    }
    Ok(
        Json(call_settled(&s, move |h| h.patch_connector_config(&name, patch.clone())).await?)
            .into_response(),
    )
}

/// `DELETE /connectors/{c}`: 204.
pub async fn delete(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, RestError> {
    call_settled(&s, move |h| h.delete_connector(&name)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /connectors/{c}/status`.
pub async fn status(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Response, RestError> {
    Ok(Json(
        call(&s, move |h| {
            learn_secrets(h, &name);
            h.connector_status(&name)
        })
        .await?,
    )
    .into_response())
}

/// Registers what the config providers resolve in connector `name`'s stored config
/// ([`crate::config::secrets::learn_from`]), before an answer that may quote it (a trace, an
/// offset, a topic) is redacted.
fn learn_secrets(h: &dyn crate::herder::Herder, name: &str) {
    if let Ok(config) = h.connector_config(name) {
        crate::config::secrets::learn_from(h.worker_config().providers(), name, &config);
    }
}

/// `POST /connectors/{c}/restart?includeTasks=&onlyFailed=`: 204 for the legacy form, 202
/// with the plan preview otherwise (KIP-745).
pub async fn restart(
    State(s): State<RestState>,
    Path(name): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<Response, RestError> {
    let q = query_pairs(&q);
    let request = RestartRequest {
        connector: name,
        only_failed: java_bool(&q, "onlyFailed"),
        include_tasks: java_bool(&q, "includeTasks"),
    };
    if request.is_legacy() {
        let n = request.connector.clone();
        call_settled(&s, move |h| h.restart_connector(&n)).await?;
        return Ok(StatusCode::NO_CONTENT.into_response());
    }
    let info = call_settled(&s, move |h| h.restart_connector_and_tasks(request.clone())).await?;
    Ok((StatusCode::ACCEPTED, Json(info)).into_response())
}

/// `PUT /connectors/{c}/pause`: 202.
pub async fn pause(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, RestError> {
    call(&s, move |h| h.pause_connector(&name)).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `PUT /connectors/{c}/resume`: 202.
pub async fn resume(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, RestError> {
    call(&s, move |h| h.resume_connector(&name)).await?;
    Ok(StatusCode::ACCEPTED)
}

/// `PUT /connectors/{c}/stop` (KIP-875): 204.
pub async fn stop(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, RestError> {
    call_settled(&s, move |h| h.stop_connector(&name)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /connectors/{c}/offsets` (KIP-875): `{"offsets": [{"partition": …, "offset": …}]}`.
pub async fn get_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Response, RestError> {
    let connector = name.clone();
    let offsets = call(&s, move |h| {
        learn_secrets(h, &name);
        h.connector_offsets(&name)
    })
    .await?;
    // A source's partitions and offsets are its own words about what it was given (a file
    // name): what a provider resolved shows as the reference (issue #42).
    let mut v = serde_json::to_value(offsets)
        .map_err(|e| RestError::new(500, format!("cannot write the offsets: {e}")))?;
    crate::config::secrets::of_connector(&connector).redact_json(&mut v);
    Ok(Json(v).into_response())
}

/// `PATCH /connectors/{c}/offsets` (KIP-875): 200 with Connect's `{"message": …}`; 400
/// `Partitions / offsets need to be provided for an alter offsets request` for a body without
/// offsets; runs on the leader (forwarded).
pub async fn alter_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
    body: Bytes,
) -> Result<Response, RestError> {
    let none = || {
        RestError::new(
            400,
            "Partitions / offsets need to be provided for an alter offsets request",
        )
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(none());
    }
    let parsed: crate::worker::connector_offsets::ConnectorOffsets = serde_json::from_slice(&body)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?;
    let offsets = parsed.offsets.filter(|o| !o.is_empty()).ok_or_else(none)?;
    let message = call_settled(&s, move |h| {
        h.modify_connector_offsets(&name, Some(offsets.clone()))
    })
    .await?;
    Ok(Json(message).into_response())
}

/// `DELETE /connectors/{c}/offsets` (KIP-875): resets them; 200 with Connect's
/// `{"message": …}`; runs on the leader (forwarded).
pub async fn reset_offsets(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Response, RestError> {
    let message = call_settled(&s, move |h| h.modify_connector_offsets(&name, None)).await?;
    Ok(Json(message).into_response())
}

/// `GET /connectors/{c}/tasks`.
pub async fn tasks(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Response, RestError> {
    let connector = name.clone();
    let tasks = call(&s, move |h| {
        learn_secrets(h, &name);
        h.task_configs(&name)
    })
    .await?;
    // Keys that hold a reference in the connector's config are stored with it
    // (`reverse_transform`); a value a connector derived from a resolved one is shown as the
    // reference too (issue #42).
    let mut v = serde_json::to_value(tasks)
        .map_err(|e| RestError::new(500, format!("cannot write the task configs: {e}")))?;
    crate::config::secrets::of_connector(&connector).redact_json(&mut v);
    Ok(Json(v).into_response())
}

/// `GET /connectors/{c}/tasks/{t}/status`.
pub async fn task_status(
    State(s): State<RestState>,
    Path((name, task)): Path<(String, String)>,
) -> Result<Response, RestError> {
    let id = ConnectorTaskId::new(name, parse_task(&task)?);
    Ok(Json(
        call(&s, move |h| {
            learn_secrets(h, &id.connector);
            h.task_status(&id)
        })
        .await?,
    )
    .into_response())
}

/// `POST /connectors/{c}/tasks/{t}/restart`: 204.
pub async fn restart_task(
    State(s): State<RestState>,
    Path((name, task)): Path<(String, String)>,
) -> Result<StatusCode, RestError> {
    let id = ConnectorTaskId::new(name, parse_task(&task)?);
    call_settled(&s, move |h| h.restart_task(&id)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /tributary/task-counters` (Tributary addition): per task on this worker, how often it
/// was started and stopped, records moved and offset commits.
pub async fn task_counters(
    State(s): State<RestState>,
    visible: Visible,
) -> Result<Response, RestError> {
    let counters = call(&s, |h| Ok(h.task_counters())).await?;
    let map: BTreeMap<String, _> = counters
        .into_iter()
        .filter(|(id, _)| visible.connector(&id.connector))
        .map(|(id, c)| (id.to_string(), c))
        .collect();
    Ok(Json(map).into_response())
}

/// `GET /tributary/connector-health` (Tributary): every connector's health summary from the
/// statuses ([`crate::herder::health`]): `{"<name>": {"health": "HEALTHY"|"DEGRADED"|…,
/// "connector": "<state>", "tasks": {"total": n, "<STATE>": n…}}}`.
pub async fn connector_health(
    State(s): State<RestState>,
    visible: Visible,
) -> Result<Response, RestError> {
    let summaries = call(&s, move |h| {
        let mut names = h.connectors()?;
        names.retain(|n| visible.connector(n));
        Ok(crate::herder::health::summaries(
            h.status_store().as_ref(),
            &names,
        ))
    })
    .await?;
    Ok(Json(summaries).into_response())
}

/// Internal `POST /connectors/{c}/tasks`: task configs from the worker running the connector,
/// written by the leader (204).
pub async fn put_tasks(
    State(s): State<RestState>,
    Path(name): Path<String>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<StatusCode, RestError> {
    let header = |h: &str| {
        headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let signature = crate::herder::session::RequestSignature {
        signature: header(crate::herder::session::SIGNATURE_HEADER),
        algorithm: header(crate::herder::session::ALGORITHM_HEADER),
    };
    let v = parse_json(&body)?;
    if !v.is_array() {
        return Err(RestError::new(
            500,
            "Cannot deserialize value of type `java.util.ArrayList` from non-array JSON",
        ));
    }
    let list: Vec<&serde_json::value::RawValue> = serde_json::from_str(body_text(&body)?)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?;
    let configs = list
        .iter()
        .map(|c| config_map(c.get()).map(non_null))
        .collect::<Result<Vec<_>, _>>()?;
    call(&s, move |h| {
        h.put_task_configs(&name, configs, &body, signature)
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Internal `PUT /connectors/{c}/fence` (KIP-618, Connect's `ConnectorsResource.fenceZombies`):
/// the leader fences the producers of the source connector's previous task generation and
/// records the new one (204); signed per KIP-507 when the group runs a sessioned protocol;
/// forwarded to the leader when sent elsewhere.
pub async fn fence_zombies(
    State(s): State<RestState>,
    Path(name): Path<String>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> Result<StatusCode, RestError> {
    let header = |h: &str| {
        headers
            .get(h)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let signature = crate::herder::session::RequestSignature {
        signature: header(crate::herder::session::SIGNATURE_HEADER),
        algorithm: header(crate::herder::session::ALGORITHM_HEADER),
    };
    call(&s, move |h| h.fence_zombies(&name, &body, signature)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /tributary/worker` (Tributary addition): this worker's id, mode, and in distributed
/// mode its group view: leader, generation, protocol, assignment, rebalance count and time.
pub async fn worker_info(
    State(s): State<RestState>,
    visible: Visible,
) -> Json<crate::herder::info::WorkerInfo> {
    let mut info = s.herder.worker_info();
    if !visible.is_all() {
        // REST authorization (issue #36): only the jobs the caller may read.
        if let Some(g) = info.group.as_mut() {
            g.connectors.retain(|c| visible.connector(c));
            g.tasks.retain(|t| visible.job(t));
            if let Some(claims) = g.static_claims.as_mut() {
                for list in [&mut claims.connectors, &mut claims.tasks]
                    .into_iter()
                    .flatten()
                {
                    list.retain(|j| visible.job(j));
                }
            }
        }
        if let Some(dir) = info.connectors_dir.as_mut() {
            dir.last_drift.retain(|line| {
                line.split_once(':')
                    .is_some_and(|(c, _)| visible.connector(c))
            });
            dir.errors.clear();
        }
    }
    info.shared_producers = s
        .herder
        .worker()
        .shared_producers
        .live()
        .into_iter()
        .map(|(client_id, tasks)| crate::herder::info::SharedProducerInfo { client_id, tasks })
        .collect();
    Json(info)
}

fn topic_tracking(s: &RestState, reset: bool) -> Result<(), RestError> {
    let cfg = s.herder.worker_config().settings();
    if !cfg.topic_tracking_enable {
        return Err(RestError::new(403, "Topic tracking is disabled."));
    }
    if reset && !cfg.topic_tracking_allow_reset {
        return Err(RestError::new(403, "Topic tracking reset is disabled."));
    }
    Ok(())
}

/// `GET /connectors/{c}/topics` (KIP-558): `{"c":{"topics":[…]}}`, empty for unknown connectors.
pub async fn topics(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<Json<Json_>, RestError> {
    topic_tracking(&s, false)?;
    let n = name.clone();
    let topics = call(&s, move |h| {
        learn_secrets(h, &n);
        Ok(h.status_store().topics(&n))
    })
    .await?;
    let mut v = serde_json::json!({ name.clone(): { "topics": topics } });
    crate::config::secrets::of_connector(&name).redact_json(&mut v);
    Ok(Json(v))
}

/// `PUT /connectors/{c}/topics/reset` (KIP-558): 202.
pub async fn reset_topics(
    State(s): State<RestState>,
    Path(name): Path<String>,
) -> Result<StatusCode, RestError> {
    topic_tracking(&s, true)?;
    s.herder.status_store().delete_topics(&name);
    Ok(StatusCode::ACCEPTED)
}

/// `GET /tributary/connector-counters` (Tributary addition): per connector instance on this
/// worker, how often it was started and stopped.
pub async fn connector_counters(
    State(s): State<RestState>,
    visible: Visible,
) -> Result<Response, RestError> {
    let counters = call(&s, |h| Ok(h.connector_counters())).await?;
    let map: BTreeMap<String, _> = counters
        .into_iter()
        .filter(|(c, _)| visible.connector(c))
        .collect();
    Ok(Json(map).into_response())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::rest::test_server::{send, serve};

    fn create_body(name: Json_, initial_state: Option<Json_>) -> String {
        let mut body = json!({"name": name, "config": {
            "connector.class": "FileStreamSource",
            "topic": "t",
            "file": "/dev/null",
        }});
        if let Some(s) = initial_state {
            body["initial_state"] = s;
        }
        body.to_string()
    }

    use super::Json_;

    // Found by scripts/fuzz-rest: an `initial_state` that is not a string was ignored and the
    // connector created RUNNING; Connect refuses the body (500) and creates nothing.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_initial_state_that_is_not_a_state_name_is_refused_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        for bad in [
            json!(5),
            json!(true),
            json!(1.5),
            json!({}),
            json!([]),
            json!("idle"),
        ] {
            let (code, v) = send(
                &url,
                "POST",
                "/connectors",
                Some(&create_body(json!("c"), Some(bad.clone()))),
            )
            .await;
            assert_eq!(code, 500, "{bad}: {v}");
            assert_eq!(v["error_code"], 500, "{v}");
            assert!(
                v["message"].as_str().unwrap().contains("InitialState"),
                "{v}"
            );
        }
        assert_eq!(
            send(&url, "GET", "/connectors", None).await,
            (200, json!([]))
        );
        // null is "not given", and the names are read in any case.
        let (code, v) = send(
            &url,
            "POST",
            "/connectors",
            Some(&create_body(json!("stopped"), Some(json!("stopped")))),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        let (code, v) = send(&url, "GET", "/connectors/stopped/status", None).await;
        assert_eq!(
            (code, &v["connector"]["state"]),
            (200, &json!("STOPPED")),
            "{v}"
        );
    }

    // Found the same way: a number or boolean `name` was taken as an empty name (400); Jackson
    // reads it as its text, and an object or array is a 500.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_scalar_name_is_read_as_its_text_and_a_structured_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        for (name, text) in [(json!(5), "5"), (json!(true), "true")] {
            let (code, v) = send(
                &url,
                "POST",
                "/connectors",
                Some(&create_body(name, Some(json!("STOPPED")))),
            )
            .await;
            assert_eq!(code, 201, "{v}");
            assert_eq!(v["name"], text);
            assert_eq!(v["config"]["name"], text);
        }
        for bad in [json!({}), json!(["x"])] {
            let (code, v) = send(
                &url,
                "POST",
                "/connectors",
                Some(&create_body(bad.clone(), Some(json!("STOPPED")))),
            )
            .await;
            assert_eq!(code, 500, "{bad}: {v}");
        }
        assert_eq!(
            send(&url, "GET", "/connectors", None).await,
            (200, json!(["5", "true"]))
        );
    }

    // Found the same way: a number in a body was stored normalized (`1e5` as `100000.0`, a
    // big integer as `1e+23`); Connect keeps the number as written, in names and configs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn numbers_in_bodies_are_kept_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let body = r#"{"name": 1.50, "initial_state": "STOPPED", "config": {
            "connector.class": "FileStreamSource", "topic": "t", "file": "/dev/null",
            "e": 1e5, "big": 100000000000000000000000, "neg": -0.0}}"#;
        let (code, v) = send(&url, "POST", "/connectors", Some(body)).await;
        assert_eq!(code, 201, "{v}");
        assert_eq!(v["name"], "1.50");
        let (_, config) = send(&url, "GET", "/connectors/1.50/config", None).await;
        assert_eq!(
            (&config["e"], &config["big"], &config["neg"]),
            (
                &json!("1e5"),
                &json!("100000000000000000000000"),
                &json!("-0.0")
            )
        );
        let (code, v) = send(
            &url,
            "PATCH",
            "/connectors/1.50/config",
            Some(r#"{"e": 2.50E3, "neg": null}"#),
        )
        .await;
        assert_eq!(code, 200, "{v}");
        assert_eq!(v["config"]["e"], "2.50E3");
        assert!(v["config"].get("neg").is_none(), "{v}");
    }

    /// A standalone worker's REST server with Connect's `FileConfigProvider` as `file`.
    async fn serve_with_file_provider(dir: &std::path::Path) -> String {
        crate::rest::test_server::serve_with(
            dir,
            &[
                ("config.providers", "file"),
                (
                    "config.providers.file.class",
                    "org.apache.kafka.common.config.provider.FileConfigProvider",
                ),
            ],
            true,
        )
        .await
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_resolved_value_reaches_no_answer() {
        // Issue #42, finding 1: validation and create printed what a provider resolved
        // (`Invalid value TopSecret456 for configuration tasks.max`); finding 3: a task's trace
        // named the resolved file. Connect 4.4.0 (apache/kafka PR 23163) reports such a key as
        // written, with one error of its own.
        let dir = tempfile::tempdir().unwrap();
        let secrets = dir.path().join("secrets.properties");
        let hidden_path = dir
            .path()
            .join("no-such-dir")
            .join("TopSecret-path-77")
            .join("out");
        std::fs::write(
            &secrets,
            format!(
                "db.secret=TopSecret456\nsink.file={}\n",
                hidden_path.display()
            ),
        )
        .unwrap();
        let url = serve_with_file_provider(dir.path()).await;
        let tasks_max = format!("${{file:{}:db.secret}}", secrets.display());
        let config = json!({
            "name": "c",
            "connector.class": "FileStreamSink",
            "topics": "t",
            "tasks.max": tasks_max,
        });
        let (code, v) = send(
            &url,
            "PUT",
            "/connector-plugins/FileStreamSink/config/validate",
            Some(&config.to_string()),
        )
        .await;
        assert_eq!((code, &v["error_count"]), (200, &json!(1)), "{v}");
        assert!(!v.to_string().contains("TopSecret456"), "{v}");
        let value = &v["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == "tasks.max")
            .unwrap()["value"];
        assert_eq!(value["value"], json!(tasks_max), "{v}");
        assert_eq!(value["recommended_values"], json!([]), "{v}");
        let only_error = "Invalid value for configuration 'tasks.max': the value resolved from the config provider reference failed validation";
        assert_eq!(value["errors"], json!([only_error]), "{v}");
        let (code, v) = send(
            &url,
            "PUT",
            "/connectors/c/config",
            Some(&config.to_string()),
        )
        .await;
        assert_eq!(code, 400, "{v}");
        let message = v["message"].as_str().unwrap();
        assert!(
            message.contains(only_error) && !message.contains("TopSecret456"),
            "{v}"
        );

        // A task failing on the resolved path: its trace names the reference.
        let sink_file = format!("${{file:{}:sink.file}}", secrets.display());
        let config = json!({"connector.class": "FileStreamSink", "topics": "t", "file": sink_file});
        let (code, v) = send(
            &url,
            "PUT",
            "/connectors/s/config",
            Some(&config.to_string()),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            let (_, v) = send(&url, "GET", "/connectors/s/status", None).await;
            if v["tasks"][0]["state"] == "FAILED" {
                break v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the task did not fail: {v}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        let trace = status["tasks"][0]["trace"].as_str().unwrap();
        assert!(
            trace.contains("Couldn't find or create file") && trace.contains(&sink_file),
            "{trace}"
        );
        assert!(
            !status.to_string().contains("TopSecret-path-77"),
            "{status}"
        );
    }

    /// Config provider references (KIP-297): stored and shown as written, resolved for
    /// validation and when the connector and its task start; a provider that fails at start
    /// fails the instance, naming the provider and the key.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn config_provider_references_are_shown_as_written_and_resolved_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = dir.path().join("secrets.properties");
        let out = dir.path().join("resolved-out.txt");
        std::fs::write(&secrets, format!("out.file={}\n", out.display())).unwrap();
        let url = serve_with_file_provider(dir.path()).await;
        let reference = format!("${{file:{}:out.file}}", secrets.display());
        let config = json!({
            "name": "c",
            "connector.class": "FileStreamSink",
            "topics": "t",
            "file": reference,
        });

        // Validation sees the resolved value but reports the reference.
        let (code, v) = send(
            &url,
            "PUT",
            "/connector-plugins/FileStreamSink/config/validate",
            Some(&config.to_string()),
        )
        .await;
        assert_eq!((code, &v["error_count"]), (200, &json!(0)), "{v}");
        let file = v["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["value"]["name"] == "file")
            .unwrap();
        assert_eq!(file["value"]["value"], json!(reference), "{v}");

        let (code, v) = send(
            &url,
            "PUT",
            "/connectors/c/config",
            Some(&config.to_string()),
        )
        .await;
        assert_eq!(code, 201, "{v}");
        assert_eq!(v["config"]["file"], json!(reference));
        let (_, v) = send(&url, "GET", "/connectors/c/config", None).await;
        assert_eq!(v["file"], json!(reference));
        // The task writes to the resolved path; its stored config keeps the reference.
        crate::rest::test_server::wait_until("the task to open the resolved file", || out.exists())
            .await;
        let (_, v) = send(&url, "GET", "/connectors/c/tasks", None).await;
        assert_eq!(v[0]["config"]["file"], json!(reference), "{v}");

        // The secrets file goes away: a restart fails the connector and the task, naming the
        // provider and the key; the worker carries on.
        std::fs::remove_file(&secrets).unwrap();
        let (code, v) = send(&url, "POST", "/connectors/c/restart", None).await;
        assert_eq!(code, 500, "{v}");
        let (code, v) = send(&url, "POST", "/connectors/c/tasks/0/restart", None).await;
        assert_eq!(code, 500, "{v}");
        let (_, v) = send(&url, "GET", "/connectors/c/status", None).await;
        for trace in [&v["connector"]["trace"], &v["tasks"][0]["trace"]] {
            let trace = trace.as_str().unwrap_or_default();
            assert!(
                trace.contains("config provider 'file' (FileConfigProvider)")
                    && trace.contains("in configuration file")
                    && trace.contains(&reference),
                "{v}"
            );
        }
        assert_eq!(v["connector"]["state"], "FAILED", "{v}");
        assert_eq!(v["tasks"][0]["state"], "FAILED", "{v}");

        // Validating or creating with a provider that fails is Connect's 500.
        let (code, v) = send(
            &url,
            "PUT",
            "/connector-plugins/FileStreamSink/config/validate",
            Some(&config.to_string()),
        )
        .await;
        assert_eq!(code, 500, "{v}");
        assert!(
            v["message"]
                .as_str()
                .unwrap()
                .contains("Could not read properties from file"),
            "{v}"
        );
        let (code, _) = send(
            &url,
            "PUT",
            "/connectors/d/config",
            Some(&json!({"name": "d", "connector.class": "FileStreamSink", "topics": "t", "file": reference}).to_string()),
        )
        .await;
        assert_eq!(code, 500);
        assert_eq!(send(&url, "GET", "/connectors", None).await.1, json!(["c"]));
    }
}
