//! Handlers of `/connector-plugins/**` (Connect's `ConnectorPluginsResource`).

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::Json;
use tributary_api::config::ConfigDef;

use super::entities::PluginInfo;
use super::error::RestError;
use super::{call, RestState};
use crate::config::connector::config_def_for;
use crate::herder::info::ConfigKeyInfo;
use crate::plugins::{is_listed, ClassLookup, PluginKind};

/// Connect's reading of `connectorsOnly` (a Java `boolean` defaulting to true): absent or
/// empty is true; otherwise only `true`, in any case, is true (`Boolean.valueOf`).
fn connectors_only(query: Option<&str>) -> bool {
    query
        .and_then(|q| {
            form_urlencoded::parse(q.as_bytes())
                .into_owned()
                .find(|(k, _)| k == "connectorsOnly")
        })
        .map(|(_, v)| v.is_empty() || v.eq_ignore_ascii_case("true"))
        .unwrap_or(true)
}

/// `GET /connector-plugins?connectorsOnly=` (default true): sinks, then sources, each sorted
/// by class (then, when `connectorsOnly` is not true, transformations, predicates, converters
/// and header converters, as Connect's `ConnectorPluginsResource` lists them). Tributary's test
/// plugins are left out ([`crate::plugins::HIDDEN_PLUGINS`]).
pub async fn list(State(s): State<RestState>, RawQuery(q): RawQuery) -> Json<Vec<PluginInfo>> {
    let connectors_only = connectors_only(q.as_deref());
    let plugins = s.herder.plugins();
    let info = |class: &str, plugin_type: &str, version: &str| PluginInfo {
        class: class.into(),
        plugin_type: plugin_type.into(),
        version: Some(version.into()),
    };
    let mut out: Vec<PluginInfo> = plugins
        .connectors()
        .into_iter()
        .filter(|p| is_listed(p.class))
        .map(|p| info(p.class, p.connector_type.as_str(), p.version))
        .collect();
    if !connectors_only {
        out.extend(
            plugins
                .transformations()
                .into_iter()
                .filter(|p| is_listed(p.class))
                .map(|p| info(p.class, "transformation", p.version)),
        );
        out.extend(
            plugins
                .predicates()
                .into_iter()
                .filter(|p| is_listed(p.class))
                .map(|p| info(p.class, "predicate", p.version)),
        );
        out.extend(
            plugins
                .converters()
                .into_iter()
                .map(|p| info(p.class, "converter", p.version)),
        );
        out.extend(
            plugins
                .header_converters()
                .into_iter()
                .map(|p| info(p.class, "header_converter", p.version)),
        );
    }
    Json(out)
}

fn key_infos(def: &ConfigDef) -> Vec<ConfigKeyInfo> {
    def.keys
        .iter()
        .map(|k| ConfigKeyInfo {
            name: k.name.clone(),
            config_type: k.config_type.name().into(),
            required: k.required(),
            default_value: k.default_string(),
            importance: k.importance.name().into(),
            documentation: k.documentation.clone(),
            group: k.group.clone(),
            width: k.width.name().into(),
            display_name: k.display_name.clone(),
            dependents: k.dependents.clone(),
            order_in_group: k.order_in_group,
        })
        .collect()
}

/// `GET /connector-plugins/{p}/config` (Connect's `connectorPluginConfig`): the plugin's keys,
/// then the framework's for connectors; a transformation's or predicate's own keys, in the
/// order it defines them. 404 `Unknown plugin {p}.` for a name that is no plugin; 500
/// `Instantiation error` for the abstract outer class of `$Key` / `$Value` plugins. A
/// connector's `?version=` (KIP-891: a version, a Maven range, default `latest`) picks the
/// installed version whose keys are listed; 400 with Connect's message when none meets it.
pub async fn config(
    State(s): State<RestState>,
    Path(plugin): Path<String>,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> Result<Response, RestError> {
    let plugins = s.herder.plugins();
    if plugins.connector_plugin(&plugin).is_ok() {
        let requirement = query.get("version").map(String::as_str);
        let p = plugins
            .connector_plugin_in(&plugin, requirement)
            .map_err(|e| RestError::new(400, e.to_string()))?;
        // A hosted (Java) plugin's `config()` calls into its JVM: off the async threads.
        let (new, connector_type, version) = (p.new.clone(), p.connector_type, p.version);
        let own = tokio::task::spawn_blocking(move || new().config())
            .await
            .map_err(|_| RestError::new(500, "the connector's config() panicked"))?;
        let mut framework = config_def_for(connector_type);
        // KIP-891: the connector's version key defaults to this plugin's version.
        if let Some(k) = framework
            .keys
            .iter_mut()
            .find(|k| k.name == crate::config::connector::CONNECTOR_VERSION_CONFIG)
        {
            k.default = Some(Some(version.to_string()));
        }
        let def = own.merge(&framework);
        return Ok(Json(key_infos(&def)).into_response());
    }
    if let Ok(p) = plugins.converter_plugin(&plugin) {
        return Ok(Json(key_infos(&(p.new)().config())).into_response());
    }
    if plugins.header_converter_plugin(&plugin).is_ok() {
        return Ok(Json(Vec::<ConfigKeyInfo>::new()).into_response());
    }
    // A hosted (Java) transformation's or predicate's `config()` calls into the JVM too.
    let own = if let Ok(p) = plugins.transformation_plugin(&plugin) {
        let new = p.new_source.clone();
        Some(tokio::task::spawn_blocking(move || new().config()).await)
    } else if let Ok(p) = plugins.predicate_plugin(&plugin) {
        let new = p.new_source.clone();
        Some(tokio::task::spawn_blocking(move || new().config()).await)
    } else {
        None
    };
    if let Some(own) = own {
        let def = own.map_err(|_| RestError::new(500, "the plugin's config() panicked"))?;
        return Ok(Json(key_infos(&def)).into_response());
    }
    for kind in [PluginKind::Transformation, PluginKind::Predicate] {
        if let ClassLookup::Abstract(_) = plugins.classify(&plugin, kind) {
            return Err(RestError::new(500, "Instantiation error"));
        }
    }
    Err(RestError::new(404, format!("Unknown plugin {plugin}.")))
}

/// `PUT /connector-plugins/{p}/config/validate`: 200 `ConfigInfos`, even with errors.
///
/// Under REST authorization, config provider references are resolved only for a caller with
/// the write role over the connector the config names (issue #42): for any other caller the
/// keys holding them are reported unresolved ([`crate::herder::validation::validate_unresolved`]),
/// so that validation cannot be used to read what a provider would return.
pub async fn validate(
    State(s): State<RestState>,
    Path(plugin): Path<String>,
    principal: Option<axum::Extension<super::authorization::RequestPrincipal>>,
    body: Bytes,
) -> Result<Response, RestError> {
    let v: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| RestError::new(500, format!("Cannot deserialize request body: {e}")))?;
    let text = std::str::from_utf8(&body).map_err(|e| RestError::new(500, e.to_string()))?;
    let config = crate::config::properties::json_string_map(text)
        .map_err(|e| RestError::new(500, e.to_string()))?;
    let null_keys = super::connectors::null_keys(&v);
    // The connector class in the body must be the plugin of the path (Connect compares the
    // names without a trailing "Connector").
    if let Some(included) = config.get("connector.class") {
        let norm = |n: &str| match n.strip_suffix("Connector") {
            Some(stem) if !stem.is_empty() => stem.to_string(),
            _ => n.to_string(),
        };
        if !norm(included).ends_with(&norm(&plugin)) {
            return Err(RestError::new(
                400,
                format!("Included connector type {included} does not match request type {plugin}"),
            ));
        }
    }
    // Connect 4.1 reports a bad request met while validating (no connector class, unknown class)
    // as 500 with the exception's `toString()`, unlike create/update which answer 400.
    let resolve = super::authorization::may_resolve(
        &s,
        principal.as_ref().map(|p| &p.0 .0),
        config.get("name").map(String::as_str),
    );
    let infos = call(&s, move |h| match &resolve {
        Ok(()) => h.validate_connector_config(&config, &null_keys),
        Err(why) => crate::herder::validation::validate_unresolved(
            h.plugins(),
            &crate::config::unsupported::WorkerSupport::of(h.worker_config()),
            h.worker_config().providers(),
            &config,
            &null_keys,
            why,
        ),
    })
    .await
    .map_err(|e| {
        if e.status == 400 {
            RestError::new(
                500,
                format!(
                    "org.apache.kafka.connect.runtime.rest.errors.BadRequestException: {}",
                    e.message
                ),
            )
        } else {
            e
        }
    })?;
    Ok(Json(infos).into_response())
}

#[cfg(test)]
mod tests {
    use super::connectors_only;
    use crate::rest::test_server::{send, serve};

    // Found by scripts/fuzz-rest: `connectorsOnly` is a Java boolean, so any value but `true`
    // (in any case) is false; only `false` was.
    #[test]
    fn connectors_only_reads_the_flag_as_java_does() {
        for (q, expected) in [
            (None, true),
            (Some(""), true),
            (Some("other=1"), true),
            (Some("connectorsOnly="), true),
            (Some("connectorsOnly=true"), true),
            (Some("connectorsOnly=TRUE"), true),
            (Some("connectorsOnly=false"), false),
            (Some("connectorsOnly=0"), false),
            (Some("connectorsOnly=yes"), false),
        ] {
            assert_eq!(connectors_only(q), expected, "{q:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn any_value_but_true_also_lists_converters() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let types = |v: serde_json::Value| -> Vec<String> {
            let mut t: Vec<String> = v
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p["type"].as_str().unwrap().to_string())
                .collect();
            t.dedup();
            t
        };
        let (code, v) = send(&url, "GET", "/connector-plugins?connectorsOnly=no", None).await;
        assert_eq!(code, 200);
        // Connect's order of kinds; transformations and predicates appear when the build has
        // listed ones (the test ones are hidden).
        let order = [
            "sink",
            "source",
            "transformation",
            "predicate",
            "converter",
            "header_converter",
        ];
        let got = types(v);
        let positions: Vec<usize> = got
            .iter()
            .map(|t| order.iter().position(|o| o == t).unwrap())
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{got:?}");
        for t in ["sink", "source", "converter", "header_converter"] {
            assert!(got.iter().any(|g| g == t), "{got:?}");
        }
        let (_, v) = send(&url, "GET", "/connector-plugins?connectorsOnly=True", None).await;
        assert_eq!(types(v), ["sink", "source"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn transformations_and_predicates_have_their_config_and_test_ones_are_hidden() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let (_, v) = send(&url, "GET", "/connector-plugins?connectorsOnly=false", None).await;
        let classes: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["class"].as_str().unwrap())
            .collect();
        assert!(!classes
            .iter()
            .any(|c| c.starts_with("io.tributary.connect.testing")));
        // By alias and by class name: the plugin's own keys only.
        for name in [
            "TestTransformation",
            "io.tributary.connect.testing.TestTransformation",
        ] {
            let (code, keys) = send(
                &url,
                "GET",
                &format!("/connector-plugins/{name}/config"),
                None,
            )
            .await;
            assert_eq!(code, 200, "{keys}");
            let names: Vec<&str> = keys
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k["name"].as_str().unwrap())
                .collect();
            assert!(
                names.contains(&"retriable.failures") && !names.contains(&"predicate"),
                "{names:?}"
            );
        }
        let (code, keys) = send(&url, "GET", "/connector-plugins/TestPredicate/config", None).await;
        assert_eq!(
            (code, &keys[0]["name"]),
            (200, &serde_json::json!("value.contains"))
        );
        let (code, v) = send(&url, "GET", "/connector-plugins/Value/config", None).await;
        assert_eq!(
            (code, &v["message"]),
            (404, &serde_json::json!("Unknown plugin Value."))
        );
    }

    // Found while checking the fuzzer's limits against Connect (which reads any size): a body
    // over 2 MiB was refused (413) by the handler, and one over 16 MiB answered 500 by the
    // forwarding layer. Now bodies up to 16 MiB are read, and larger ones are a 413.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn bodies_up_to_the_limit_are_read_and_larger_ones_are_413() {
        let dir = tempfile::tempdir().unwrap();
        let url = serve(dir.path()).await;
        let body = |size: usize| {
            serde_json::json!({"connector.class": "FileStreamSource", "x": "a".repeat(size)})
                .to_string()
        };
        let path = "/connector-plugins/FileStreamSource/config/validate";
        let (code, v) = send(&url, "PUT", path, Some(&body(3 << 20))).await;
        assert_eq!(code, 200, "{}", v["message"]);
        assert_eq!(v["name"], "FileStreamSource");
        let (code, v) = send(
            &url,
            "PUT",
            path,
            Some(&body(crate::rest::forward::MAX_BODY)),
        )
        .await;
        assert_eq!(
            (code, &v["error_code"]),
            (413, &serde_json::json!(413)),
            "{v}"
        );
    }
}
