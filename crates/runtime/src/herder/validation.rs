//! Connector config validation (Connect's `AbstractHerder.validateConnectorConfig`): the
//! framework keys of `ConnectorConfig` / `Sink-` / `SourceConnectorConfig` plus the
//! connector's own, reported as `ConfigInfos` and, for create/update, as a 400 listing errors.

use tributary_api::config::{ConfigDef, ConfigValue};
use tributary_api::connector::ConnectorType;
use tributary_api::Props;

use super::info::{ConfigInfo, ConfigInfos, ConfigKeyInfo, ConfigValueInfo};
use super::{HerderError, HerderResult};
use crate::config::connector::{config_def_for, validate_sink_topics};
use crate::config::providers::{has_variables, ConfigProviders};
use crate::config::transforms;
use crate::config::unsupported::{unsupported_settings, WorkerSupport};
use crate::plugins::{is_listed, ClassLookup, PluginKind, Plugins};

/// The error without `connector.class`. Connect 4.4 no longer prints the config in it (4.1
/// did: `Connector config {…} contains no connector type`), so values such as passwords stay
/// out of the answer.
pub const NO_CONNECTOR_TYPE: &str = "Connector config contains no connector type";

/// The error Connect reports on a key whose value is JSON `null`
/// (`AbstractHerder.validateConnectorConfig`).
pub const NULL_VALUE_ERROR: &str = "Null value can not be supplied as the configuration value.";

/// Validates a connector config. `null_keys` are keys the request gave as JSON `null` (not in
/// `config`): each gets one [`NULL_VALUE_ERROR`], on the framework key of that name or on an
/// entry of its own after the framework keys, as in Connect. Errors: 400
/// [`NO_CONNECTOR_TYPE`] without `connector.class`; 400 when the class is unknown
/// (Connect 4.1's message listing the available connectors). Settings `support` cannot honour
/// (see [`unsupported_settings`]) are errors on their keys. The keys of each transformation and
/// predicate alias follow the framework's, in groups `Transforms: <alias>` / `Predicates:
/// <alias>` ([`transforms::enrich`]); as in Connect, transformations are not configured here,
/// so a `configure` that fails fails the task, not the request.
pub fn validate(
    plugins: &Plugins,
    support: &WorkerSupport,
    config: &Props,
    null_keys: &[String],
) -> HerderResult<ConfigInfos> {
    let class = config
        .get("connector.class")
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| HerderError::BadRequest(NO_CONNECTOR_TYPE.to_string()))?;
    let latest = plugins
        .connector_plugin(class)
        .map_err(|e| HerderError::BadRequest(e.to_string()))?;
    // KIP-891: the version `connector.plugin.version` asks for (the newest without it); when
    // no installed version meets it, the rest is validated with the newest and the key says
    // which versions there are.
    let plugin = plugins
        .connector_plugin_in(
            class,
            config
                .get(crate::config::connector::CONNECTOR_VERSION_CONFIG)
                .map(String::as_str),
        )
        .unwrap_or(latest);
    let connector = (plugin.new)();
    let mut framework = config_def_for(plugin.connector_type);
    // As in Connect, the connector-level converter keys default to the worker's converters
    // (reported by their class names).
    for (key, worker_value) in ["key.converter", "value.converter", "header.converter"]
        .iter()
        .zip(&support.converters)
    {
        let Some(name) = worker_value.as_deref() else {
            continue;
        };
        let class = if *key == "header.converter" {
            plugins.header_converter_plugin(name).map(|p| p.class).ok()
        } else {
            plugins.converter_plugin(name).map(|p| p.class).ok()
        };
        if let (Some(class), Some(k)) = (class, framework.keys.iter_mut().find(|k| k.name == *key))
        {
            k.default = Some(Some(class.to_string()));
        }
    }
    // KIP-891: the plugin versions, by default those of the plugins in effect (the connector,
    // the worker's converters).
    let versions = plugin_versions(plugins, support, config, latest.version);
    for v in &versions {
        if let Some(k) = framework.keys.iter_mut().find(|k| k.name == v.key) {
            k.default = Some(v.default.map(str::to_string));
        }
    }
    let mut framework_values = framework.validate(config);
    check_plugin_versions(plugins, config, &versions, &mut framework_values);
    if plugin.connector_type == ConnectorType::Sink {
        validate_sink_topics(config, &mut framework_values);
    }
    // Connector-level converters (Connect's `validateConverterConfig`): each one's own keys,
    // prefixed, reported after everything else.
    let converters = validate_converters(plugins, config, &mut framework_values);
    // Tributary's automatic restart settings (only reported when the config sets one).
    framework_values.extend(crate::config::auto_restart::problems(config));
    // Tributary's rate limits (issue #36; only reported when the config sets one).
    framework_values.extend(crate::config::throttle::problems(config));
    // Settings Tributary does not implement: refused rather than run without them.
    for problem in unsupported_settings(config, plugin.connector_type, support) {
        if !problem.fatal {
            continue;
        }
        match framework_values.iter_mut().find(|v| v.name == problem.key) {
            Some(v) => v.errors.push(problem.message),
            None => {
                let mut v = ConfigValue::new(&problem.key);
                v.value = config.get(&problem.key).cloned();
                v.errors.push(problem.message);
                framework_values.push(v);
            }
        }
    }
    // KIP-618's checks against the connector itself (distributed workers, as Connect's
    // `DistributedHerder.validateSourceConnectorConfig`).
    if plugin.connector_type == ConnectorType::Source && support.connector_offsets_topics {
        validate_exactly_once(connector.as_ref(), config, &mut framework_values);
    }
    // Transformations and predicates: each alias's keys, as Connect's `ConnectorConfig.enrich`
    // adds them after the framework's.
    let mut enrichment = transforms::enrich(plugins, config, &is_listed);
    for (key, message) in &enrichment.framework_errors {
        if let Some(v) = framework_values.iter_mut().find(|v| &v.name == key) {
            v.errors.push(message.clone());
        }
    }
    for key in null_keys {
        if let Some(v) = framework_values
            .iter_mut()
            .chain(enrichment.values.iter_mut())
            .find(|v| &v.name == key)
        {
            v.errors.push(NULL_VALUE_ERROR.to_string());
            continue;
        }
        let mut v = ConfigValue::new(key);
        v.errors.push(NULL_VALUE_ERROR.to_string());
        framework_values.push(v);
    }
    let connector_def = connector.config();
    let mut connector_values: Vec<ConfigValue> = connector.validate(config);
    refuse_worker_files(plugin.class, config, support, &mut connector_values);
    let mut groups: Vec<String> = Vec::new();
    let mut configs = Vec::new();
    let mut error_count = 0;
    // `per_value`: count values with errors rather than error messages (as Connect counts a
    // converter's).
    let mut push =
        |def: &ConfigDef, values: Vec<ConfigValue>, groups: &mut Vec<String>, per_value: bool| {
            for v in values {
                let key = def.key(&v.name);
                if let Some(g) = key.and_then(|k| k.group.clone()) {
                    if !groups.contains(&g) {
                        groups.push(g);
                    }
                }
                error_count += if per_value {
                    usize::from(!v.errors.is_empty())
                } else {
                    v.errors.len()
                };
                configs.push(ConfigInfo {
                    definition: key.map(|k| ConfigKeyInfo {
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
                    }),
                    value: Some(ConfigValueInfo {
                        name: v.name.clone(),
                        value: v.value.clone(),
                        recommended_values: v.recommended_values.clone(),
                        errors: v.errors.clone(),
                        visible: v.visible,
                    }),
                });
            }
        };
    // A key the connector defines itself wins over the framework's definition.
    let framework_values: Vec<ConfigValue> = framework_values
        .into_iter()
        .filter(|v| connector_def.key(&v.name).is_none() || null_keys.contains(&v.name))
        .collect();
    push(&framework, framework_values, &mut groups, false);
    push(&enrichment.def, enrichment.values, &mut groups, false);
    push(&connector_def, connector_values, &mut groups, false);
    for (def, values) in converters {
        push(&def, values, &mut groups, true);
    }
    Ok(ConfigInfos {
        name: class.clone(),
        error_count,
        groups,
        configs,
    })
}

/// One KIP-891 version key of a connector config.
struct VersionKey {
    key: &'static str,
    /// The kind of plugin it picks the version of.
    kind: crate::plugins::PluginKind,
    /// The definition's default: the newest version of the plugin in effect.
    default: Option<&'static str>,
    /// The class of the plugin in effect, when it is known.
    in_effect: Option<&'static str>,
}

/// The KIP-891 version keys of a connector config. Each defaults to the newest version of the
/// plugin in effect: the connector's (`latest_version`), and for a converter the connector-level
/// one the config names, else the worker's of that role (none when the named class is no
/// converter).
fn plugin_versions(
    plugins: &Plugins,
    support: &WorkerSupport,
    config: &Props,
    latest_version: &'static str,
) -> Vec<VersionKey> {
    let class = config
        .get("connector.class")
        .map(|c| plugins.resolve_class_name(c.trim()))
        .and_then(|c| plugins.plugin_class(c, crate::plugins::PluginKind::Connector));
    let mut out = vec![VersionKey {
        kind: crate::plugins::PluginKind::Connector,
        key: crate::config::connector::CONNECTOR_VERSION_CONFIG,
        default: Some(latest_version),
        in_effect: class,
    }];
    let converter = |role: &str, name: &str| -> Option<(&'static str, &'static str)> {
        let name = name.trim();
        if role == "header" {
            plugins
                .header_converter_plugin(name)
                .ok()
                .map(|p| (p.class, p.version))
        } else {
            plugins
                .converter_plugin(name)
                .ok()
                .map(|p| (p.class, p.version))
        }
    };
    for ((role, key), worker) in [
        ("key", "key.converter.plugin.version"),
        ("value", "value.converter.plugin.version"),
        ("header", "header.converter.plugin.version"),
    ]
    .into_iter()
    .zip(&support.converters)
    {
        let worker = worker.as_deref().and_then(|w| converter(role, w));
        let in_effect = match config.get(&format!("{role}.converter")) {
            Some(c) if !c.trim().is_empty() => converter(role, c),
            _ => worker,
        };
        out.push(VersionKey {
            kind: if role == "header" {
                crate::plugins::PluginKind::HeaderConverter
            } else {
                crate::plugins::PluginKind::Converter
            },
            key,
            default: in_effect.map(|(_, v)| v),
            in_effect: in_effect.map(|(c, _)| c),
        });
    }
    out
}

/// Recommends every installed version of each plugin in effect and refuses a requirement
/// none meets, in Connect's words (one version: it does not match; several: none does, naming
/// them).
fn check_plugin_versions(
    plugins: &Plugins,
    config: &Props,
    versions: &[VersionKey],
    values: &mut [ConfigValue],
) {
    for VersionKey {
        key,
        kind,
        in_effect,
        ..
    } in versions
    {
        let Some(v) = values.iter_mut().find(|v| v.name == *key) else {
            continue;
        };
        let Some(class) = in_effect else {
            continue;
        };
        v.recommended_values = plugins
            .versions(*kind, class)
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Some(setting) = config.get(*key) {
            if let Err(e) = plugins.version_in(*kind, class, Some(setting)) {
                v.errors.push(e.to_string());
            }
        }
    }
}

/// Connect's `validateConverterConfig` for the connector-level `header.converter`,
/// `key.converter` and `value.converter` (in that order): when the config names a converter
/// class and its framework value has no error yet, the class must be a converter (else the
/// error goes on the class key, in Connect's words), and the settings under its prefix, with
/// `converter.type` defaulting to its role, are validated against the converter's
/// [`ConfigDef`] (`Converter::config`; a header converter's is that of the converter of the
/// same class). The converter is not configured, so a value its `ConfigDef` accepts passes
/// (StringConverter's encoding, say). Returns, per converter, its keys and values named with
/// the prefix (`value.converter.schemas.enable`), in Connect's order (its `ConfigDef.validate`
/// answers in `HashMap` order). A converter whose `ConfigDef` is empty (Java converters hosted
/// through the JVM bridge do not expose theirs) is configured instead, its error going on the
/// class key.
fn validate_converters(
    plugins: &Plugins,
    config: &Props,
    framework_values: &mut [ConfigValue],
) -> Vec<(ConfigDef, Vec<ConfigValue>)> {
    let mut out = Vec::new();
    for (key, role) in [
        ("header.converter", "header"),
        ("key.converter", "key"),
        ("value.converter", "value"),
    ] {
        let Some(raw) = config.get(key).map(|c| c.trim()).filter(|c| !c.is_empty()) else {
            continue;
        };
        let Some(class_value) = framework_values
            .iter_mut()
            .find(|v| v.name == key && v.errors.is_empty())
        else {
            continue;
        };
        let kind = if role == "header" {
            PluginKind::HeaderConverter
        } else {
            PluginKind::Converter
        };
        let class = match plugins.classify(raw, kind) {
            ClassLookup::Plugin(class) => class,
            ClassLookup::OtherKind(class) => {
                class_value.errors.push(not_implementing(class, kind));
                continue;
            }
            // The JDK's classes exist on any Connect worker; none is a converter.
            ClassLookup::Unknown if raw.starts_with("java.") || raw.starts_with("javax.") => {
                class_value.errors.push(not_implementing(raw, kind));
                continue;
            }
            ClassLookup::Unknown => {
                class_value.errors.push(format!(
                    "Invalid value {raw} for configuration {key}: Class {raw} could not be found."
                ));
                continue;
            }
            ClassLookup::Abstract(nested) => {
                class_value.errors.push(format!(
                    "This class is abstract and cannot be created. Did you mean {}?",
                    nested.join(", ")
                ));
                continue;
            }
        };
        let prefix = format!("{key}.");
        let mut settings = crate::config::worker::prefixed(config, &prefix);
        // Converters that are also header converters share one `ConfigDef` (Java's
        // `config()` is one method).
        let def = plugins
            .new_converter(class)
            .map(|c| c.config())
            .unwrap_or_default();
        if def.keys.is_empty() {
            let problem = if role == "header" {
                match plugins.new_header_converter(class) {
                    Ok(mut c) => c.configure(&settings).err().map(|e| e.to_string()),
                    Err(e) => Some(e.to_string()),
                }
            } else {
                match plugins.new_converter(class) {
                    Ok(mut c) => c
                        .configure(&settings, role == "key")
                        .err()
                        .map(|e| e.to_string()),
                    Err(e) => Some(e.to_string()),
                }
            };
            if let Some(problem) = problem {
                class_value.errors.push(format!(
                    "Invalid value {raw} for configuration {key}: {problem}"
                ));
            }
            continue;
        }
        settings
            .entry("converter.type".to_string())
            .or_insert_with(|| role.to_string());
        let values = def.validate(&settings);
        let names: Vec<&str> = values.iter().map(|v| v.name.as_str()).collect();
        let order = java_hash_map_order(&names);
        let mut values: Vec<Option<ConfigValue>> = values.into_iter().map(Some).collect();
        let values: Vec<ConfigValue> = order
            .into_iter()
            .filter_map(|i| values[i].take())
            .map(|v| ConfigValue {
                name: format!("{prefix}{}", v.name),
                // Connect rebuilds each value, visible.
                visible: true,
                ..v
            })
            .collect();
        let mut prefixed_def = def;
        for k in &mut prefixed_def.keys {
            k.name = format!("{prefix}{}", k.name);
        }
        out.push((prefixed_def, values));
    }
    out
}

/// The order in which Java's `HashMap` iterates the distinct `keys` (how Connect lists a
/// converter's settings): indices into `keys`.
fn java_hash_map_order(keys: &[&str]) -> Vec<usize> {
    tributary_api::data::java_hash_map::order(keys)
        .into_iter()
        .map(|(key, _)| key)
        .collect()
}

/// Where Connect's file connectors may read and write ([`crate::config::file_connectors`],
/// issue #42): an error on `file` when it may not be used.
fn refuse_worker_files(
    class: &str,
    config: &Props,
    support: &WorkerSupport,
    values: &mut Vec<ConfigValue>,
) {
    let Some(file) = config.get("file") else {
        return;
    };
    let Some(message) = support.file_paths.refusal(class, file) else {
        return;
    };
    ConfigValue::add_error(values, "file", Some(file), message);
}

/// Connect's message for a class that is not of the plugin `kind` wanted.
fn not_implementing(class: &str, kind: PluginKind) -> String {
    format!(
        "Class class {class} does not implement the {} interface",
        kind.interface_name()
    )
}

/// Validates `config` as stored (config provider references unresolved) the way Connect 4.4
/// does (`AbstractHerder.validateConnectorConfig`): `config.providers*` keys are dropped, the
/// references are resolved with the worker's `providers` and the resolved config is validated,
/// so a reference is checked by the value it stands for; then every key whose value a
/// reference changed is reported as written ([`redact_resolved`]), so that no answer shows
/// what a provider returned. A provider that fails is a 500 naming the key, the reference and
/// the provider.
pub fn validate_resolving(
    plugins: &Plugins,
    support: &WorkerSupport,
    providers: &ConfigProviders,
    config: &Props,
    null_keys: &[String],
) -> HerderResult<ConfigInfos> {
    let config = without_config_providers(config);
    let (resolved, found) = resolve_for_validation(providers, &config)?;
    let mut infos = validate(plugins, support, &resolved, null_keys)?;
    redact_resolved(&mut infos, &config, &resolved);
    // What is derived from a resolved value (the keys of a resolved `transforms` list, their
    // documentation, messages quoting it) shows the reference: with this request's own values
    // only, so that the answer cannot tell whether a text sent is another's secret.
    if !found.is_empty() {
        let mut v = serde_json::to_value(&infos)
            .map_err(|e| HerderError::Internal(format!("cannot redact the validation: {e}")))?;
        found.redact_json(&mut v);
        infos = serde_json::from_value(v)
            .map_err(|e| HerderError::Internal(format!("cannot redact the validation: {e}")))?;
    }
    Ok(infos)
}

/// Validates `config` without resolving its config provider references (issue #42: the caller
/// may not have them resolved, `why` says so): each key holding a reference to a configured
/// provider is reported as written with `why` as its one error, whatever the reference stands
/// for.
pub fn validate_unresolved(
    plugins: &Plugins,
    support: &WorkerSupport,
    providers: &ConfigProviders,
    config: &Props,
    null_keys: &[String],
    why: &str,
) -> HerderResult<ConfigInfos> {
    let config = without_config_providers(config);
    let mut infos = validate(plugins, support, &config, null_keys)?;
    for info in &mut infos.configs {
        let Some(v) = info.value.as_mut() else {
            continue;
        };
        let Some(raw) = config.get(&v.name) else {
            continue;
        };
        let refers = crate::config::providers::variables(raw)
            .iter()
            .any(|var| providers.get(var.provider).is_some());
        if refers {
            v.value = Some(raw.clone());
            v.recommended_values.clear();
            let error = format!("Configuration '{}' was not validated: {why}", v.name);
            replace_errors(&mut infos.error_count, &mut v.errors, vec![error]);
        }
    }
    Ok(infos)
}

/// Connect 4.4's `removeCustomConfigProviders`: a connector config cannot declare providers of
/// its own, so `config.providers` and `config.providers.*` are left out of validation.
fn without_config_providers(config: &Props) -> Props {
    config
        .iter()
        .filter(|(k, _)| {
            *k != crate::config::providers::CONFIG_PROVIDERS_CONFIG
                && !k.starts_with("config.providers.")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Connect 4.4's `redactResolvedValues` (apache/kafka PR 23163): a key whose resolved value
/// differs from the value as written shows the value as written, no recommended values, and
/// instead of its errors (which may quote the resolved value) at most one: `Invalid value for
/// configuration '<key>': the value resolved from the config provider reference failed
/// validation`. The count of errors follows. The errors themselves are logged at TRACE, and
/// the log redacts the resolved values ([`crate::config::secrets`]).
pub fn redact_resolved(infos: &mut ConfigInfos, raw: &Props, resolved: &Props) {
    for info in &mut infos.configs {
        let Some(v) = info.value.as_mut() else {
            continue;
        };
        let (Some(as_written), Some(value)) = (raw.get(&v.name), resolved.get(&v.name)) else {
            continue;
        };
        if as_written == value {
            continue;
        }
        v.value = Some(as_written.clone());
        v.recommended_values.clear();
        if !v.errors.is_empty() {
            tracing::trace!(
                "Error while validating configuration {} for connector {}: {}",
                v.name,
                raw.get("name").map(String::as_str).unwrap_or(""),
                v.errors.join("; ")
            );
            let error = format!(
                "Invalid value for configuration '{}': the value resolved from the config provider reference failed validation",
                v.name
            );
            replace_errors(&mut infos.error_count, &mut v.errors, vec![error]);
        }
    }
}

/// A key's errors replaced by `new`, the count of errors following.
fn replace_errors(count: &mut usize, errors: &mut Vec<String>, new: Vec<String>) {
    *count = (*count + new.len()).saturating_sub(errors.len());
    *errors = new;
}

/// `config` with its references resolved, for validation: a failing provider is a 500, and a
/// config without a connector class is refused naming the config as given.
fn resolve_for_validation(
    providers: &ConfigProviders,
    config: &Props,
) -> HerderResult<(Props, crate::config::secrets::Redactions)> {
    let (resolved, found) = providers
        .resolve("connector config validation", config)
        .map_err(|e| HerderError::Internal(e.to_string()))?;
    // For the log's redaction only: no answer is redacted with them.
    crate::config::secrets::record(None, &found);
    if resolved
        .get("connector.class")
        .is_none_or(|c| c.trim().is_empty())
    {
        return Err(HerderError::BadRequest(NO_CONNECTOR_TYPE.to_string()));
    }
    Ok((resolved, found))
}

/// Validates for create/update (references resolved and redacted as [`validate_resolving`]
/// does): 400 `Connector configuration is invalid and contains the following N error(s):…`
/// when any key has errors.
pub fn validate_for_put(
    plugins: &Plugins,
    support: &WorkerSupport,
    providers: &ConfigProviders,
    config: &Props,
) -> HerderResult<ConnectorType> {
    let infos = validate_resolving(plugins, support, providers, config, &[])?;
    invalid_config(&infos)?;
    let class = &config["connector.class"];
    let resolved_class = if has_variables(class) {
        resolve_for_validation(providers, config)?.0["connector.class"].clone()
    } else {
        class.clone()
    };
    Ok(plugins
        .connector_type(&resolved_class)
        .expect("validated class resolves"))
}

/// 400 `Connector configuration is invalid and contains the following N error(s):…` (Connect's
/// create/update answer) when `infos` has errors.
pub fn invalid_config(infos: &ConfigInfos) -> HerderResult<()> {
    if infos.error_count > 0 {
        let mut msg = format!(
            "Connector configuration is invalid and contains the following {} error(s):",
            infos.error_count
        );
        for c in &infos.configs {
            if let Some(v) = &c.value {
                for e in &v.errors {
                    msg.push('\n');
                    msg.push_str(e);
                }
            }
        }
        msg.push_str("\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`");
        return Err(HerderError::BadRequest(msg));
    }
    Ok(())
}

/// Connect's `validateSourceConnectorExactlyOnceSupport` and
/// `validateSourceConnectorTransactionBoundary` (KIP-618): with `exactly.once.support=required`
/// the connector must answer `ExactlyOnceSupport::Supported` from its `exactly_once_support`;
/// with `transaction.boundary=connector`, `ConnectorTransactionBoundaries::Supported` from its
/// `can_define_transaction_boundaries`. Connect's messages are added to the keys'
/// values (only when the key has no error yet, as in Connect).
fn validate_exactly_once(
    connector: &dyn tributary_api::connector::Connector,
    config: &Props,
    values: &mut [ConfigValue],
) {
    use tributary_api::connector::{ConnectorTransactionBoundaries, ExactlyOnceSupport};
    let setting = |key: &str| {
        config
            .get(key)
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default()
    };
    if setting("exactly.once.support") == "required" {
        if let Some(v) = values.iter_mut().find(|v| v.name == "exactly.once.support") {
            // The worker's own message (when exactly-once support is off) is already there.
            let worker_refused = v
                .errors
                .iter()
                .all(|e| e == "This worker does not have exactly-once source support enabled.");
            if worker_refused {
                match connector.exactly_once_support(config) {
                    Some(ExactlyOnceSupport::Supported) => {}
                    Some(ExactlyOnceSupport::Unsupported) => v.errors.push(
                        "The connector does not support exactly-once semantics with the provided configuration.".into(),
                    ),
                    None => v.errors.push(
                        "The connector does not implement the API required for preflight validation of exactly-once source support. Please consult the documentation for the connector to determine whether it supports exactly-once semantics, and then consider reconfiguring the connector to use the value \"requested\" for this property (which will disable this preflight check and allow the connector to be created).".into(),
                    ),
                }
            }
        }
    }
    if setting("transaction.boundary") == "connector" {
        if let Some(v) = values
            .iter_mut()
            .find(|v| v.name == "transaction.boundary" && v.errors.is_empty())
        {
            if connector.can_define_transaction_boundaries(config)
                != ConnectorTransactionBoundaries::Supported
            {
                v.errors.push("The connector does not support connector-defined transaction boundaries with the given configuration. Please reconfigure it to use a different transaction boundary definition.".into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validate_source(extra: &[(&str, &str)]) -> ConfigInfos {
        let plugins = Plugins::new(tributary_plugins::builtin());
        let mut config: Props = [
            ("connector.class", "FileStreamSource"),
            ("name", "v"),
            ("topic", "t"),
        ]
        .iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        config.retain(|_, v| !v.is_empty());
        validate(&plugins, &WorkerSupport::default(), &config, &[]).unwrap()
    }

    fn value<'a>(infos: &'a ConfigInfos, name: &str) -> &'a ConfigValueInfo {
        infos
            .configs
            .iter()
            .filter_map(|c| c.value.as_ref())
            .find(|v| v.name == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
    }

    #[test]
    fn java_hash_map_order_is_javas() {
        // As Connect 4.1.1 lists JsonConverter's keys in a validate response.
        let keys = [
            "converter.type",
            "schemas.enable",
            "schemas.cache.size",
            "decimal.format",
            "replace.null.with.default",
        ];
        let order: Vec<&str> = java_hash_map_order(&keys)
            .into_iter()
            .map(|i| keys[i])
            .collect();
        assert_eq!(
            order,
            [
                "decimal.format",
                "converter.type",
                "schemas.cache.size",
                "replace.null.with.default",
                "schemas.enable"
            ]
        );
    }

    /// KIP-891: the version keys default to the versions of the plugins in effect, recommend
    /// them, accept them, `latest` or a range, and refuse another version naming the plugin.
    #[test]
    fn plugin_version_keys_default_to_the_plugins_in_effect_and_refuse_other_versions() {
        let version = tributary_plugins::converters::VERSION;
        let infos = validate_source(&[(
            "value.converter",
            "org.apache.kafka.connect.json.JsonConverter",
        )]);
        assert_eq!(infos.error_count, 0);
        for key in [
            "connector.plugin.version",
            "key.converter.plugin.version",
            "value.converter.plugin.version",
            "header.converter.plugin.version",
        ] {
            let v = value(&infos, key);
            // The worker of `WorkerSupport::default()` names no converters: only the connector
            // and the connector-level value converter are in effect.
            let in_effect = matches!(
                key,
                "connector.plugin.version" | "value.converter.plugin.version"
            );
            assert_eq!(v.value.is_some(), in_effect, "{key}: {v:?}");
            assert_eq!(v.recommended_values.len(), usize::from(in_effect), "{key}");
        }
        assert_eq!(
            value(&infos, "value.converter.plugin.version")
                .value
                .as_deref(),
            Some(version)
        );
        for accepted in [version, "latest", "[0.0.1,99)"] {
            let infos = validate_source(&[("connector.plugin.version", accepted)]);
            assert_eq!(infos.error_count, 0, "{accepted}");
        }
        let infos = validate_source(&[("connector.plugin.version", "9.9.9")]);
        assert_eq!(infos.error_count, 1);
        assert_eq!(
            value(&infos, "connector.plugin.version").errors,
            [format!(
                "Plugin org.apache.kafka.connect.file.FileStreamSourceConnector has version {} which does not match the required version range [9.9.9]",
                tributary_plugins::file::VERSION
            )]
        );
    }

    /// KAFKA-13328/13329: a converter's own keys are validated and listed, prefixed, in its
    /// groups; errors go on those keys, not on the converter class.
    #[test]
    fn converter_settings_are_validated_on_their_own_keys() {
        let infos = validate_source(&[
            (
                "key.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
            ("key.converter.decimal.format", "FOO"),
            (
                "value.converter",
                "org.apache.kafka.connect.json.JsonConverter",
            ),
            ("value.converter.schemas.enable", "maybe"),
            (
                "header.converter",
                "org.apache.kafka.connect.storage.StringConverter",
            ),
            ("header.converter.converter.encoding", "NOPE-8"),
        ]);
        assert_eq!(infos.error_count, 2);
        for key in ["key.converter", "value.converter", "header.converter"] {
            assert_eq!(value(&infos, key).errors, Vec::<String>::new(), "{key}");
        }
        assert_eq!(
            value(&infos, "value.converter.schemas.enable").errors,
            ["Invalid value maybe for configuration schemas.enable: Expected value to be either true or false"]
        );
        assert_eq!(
            value(&infos, "key.converter.decimal.format").errors.len(),
            1
        );
        assert_eq!(
            value(&infos, "value.converter.converter.type")
                .value
                .as_deref(),
            Some("value")
        );
        assert_eq!(
            value(&infos, "header.converter.converter.encoding").errors,
            Vec::<String>::new()
        );
        for key in [
            "value.converter.decimal.format",
            "value.converter.schemas.cache.size",
            "value.converter.replace.null.with.default",
            "key.converter.schemas.enable",
        ] {
            value(&infos, key);
        }
        let def = infos
            .configs
            .iter()
            .filter_map(|c| c.definition.as_ref())
            .find(|d| d.name == "value.converter.decimal.format")
            .unwrap();
        assert_eq!(def.group.as_deref(), Some("Serialization"));
        // Connect's groups: the converters' after the framework's, in HashMap order.
        assert_eq!(
            infos.groups[infos.groups.len() - 2..],
            ["Serialization".to_string(), "Schemas".to_string()]
        );
    }

    #[test]
    fn a_class_that_is_not_a_converter_is_refused_in_connects_words() {
        let infos = validate_source(&[
            ("value.converter", "java.lang.String"),
            ("value.converter.schemas.enable", "maybe"),
            ("key.converter", "FileStreamSink"),
            ("header.converter", "com.example.Nope"),
        ]);
        assert_eq!(
            value(&infos, "value.converter").errors,
            ["Class class java.lang.String does not implement the Converter interface"]
        );
        assert_eq!(
            value(&infos, "key.converter").errors,
            ["Class class org.apache.kafka.connect.file.FileStreamSinkConnector does not implement the Converter interface"]
        );
        assert_eq!(
            value(&infos, "header.converter").errors,
            ["Invalid value com.example.Nope for configuration header.converter: Class com.example.Nope could not be found."]
        );
        assert!(infos
            .configs
            .iter()
            .filter_map(|c| c.value.as_ref())
            // The framework's KIP-891 key is not one of the converter's own.
            .all(|v| !v.name.starts_with("value.converter.")
                || v.name == "value.converter.plugin.version"));
        assert_eq!(infos.error_count, 3);
    }
}
