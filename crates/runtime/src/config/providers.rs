//! Config providers (KIP-297, KIP-421, KIP-887, KIP-993): values written as
//! `${provider:path:key}` or `${provider:key}` are replaced with what a provider returns for
//! them, as Apache Kafka's `ConfigTransformer` does.
//!
//! The worker file declares the providers: `config.providers=file,dir,env`, each with
//! `config.providers.<name>.class` set to one of Connect's built-in classes
//! ([`FILE_CONFIG_PROVIDER`], [`DIRECTORY_CONFIG_PROVIDER`], [`ENV_VAR_CONFIG_PROVIDER`]) and
//! its parameters under `config.providers.<name>.param.` (`allowed.paths` for the file and
//! directory providers, `allowlist.pattern` for the environment provider). Any other class is a
//! plugin's ([`ConfigProvider::Plugin`]: a Java provider of `plugin.path`, hosted in the JVM),
//! created by the factory the CLI gives ([`ConfigProviders::from_worker_config_with`]); without
//! one it is refused at startup.
//!
//! What resolves where, as in Connect:
//! - the worker file itself, once at startup (Connect's `AbstractConfig` does it with the
//!   providers of the same file): see [`crate::config::worker::WorkerConfig::parse`];
//! - connector and task configs, each time an instance starts (Connect's
//!   `WorkerConfigTransformer`), while the config topic, `GET /connectors/{c}/config` and the
//!   task configs keep the references ([`reverse_transform`]);
//! - the config a connector is validated with (`AbstractHerder.validateConnectorConfig`).
//!
//! A reference whose provider is not configured, or whose key the provider does not have, is
//! left as it is. A provider that fails (an unreadable file, a path outside `allowed.paths`,
//! a path given to the environment provider) makes the whole resolution fail with a
//! [`ResolveError`] naming the config key, the reference and the provider.
//!
//! Connect's built-in providers return no TTL; a plugin's provider may, and a connector whose
//! values have one is restarted when it expires under `config.action.reload=restart` (the
//! default; [`ConfigProviders::resolve_with_ttls`], `Worker::resolve_connector_config`,
//! [`crate::herder::config_reload`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::path::{Component, Path, PathBuf};

use std::sync::Arc;

use tributary_api::config_provider::{PluginConfigProvider, PluginConfigProviderFactory};

use super::properties::prefixed;

/// `config.providers`: the comma-separated names of the providers the worker declares.
pub const CONFIG_PROVIDERS_CONFIG: &str = "config.providers";

/// Connect's `FileConfigProvider`: `${name:path:key}` is `key` of the Java properties file at
/// `path`.
pub const FILE_CONFIG_PROVIDER: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";

/// Connect's `DirectoryConfigProvider` (KIP-632): `${name:dir:file}` is the content of the
/// regular file `file` in the directory `dir`.
pub const DIRECTORY_CONFIG_PROVIDER: &str =
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider";

/// Connect's `EnvVarConfigProvider` (KIP-887): `${name:VAR}` is the environment variable `VAR`.
pub const ENV_VAR_CONFIG_PROVIDER: &str =
    "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// The `allowed.paths` parameter of the file and directory providers (KIP-993).
pub const ALLOWED_PATHS_PARAM: &str = "allowed.paths";

/// The `allowlist.pattern` parameter of the environment provider (KIP-887).
pub const ALLOWLIST_PATTERN_PARAM: &str = "allowlist.pattern";

/// One variable reference in a config value, as `ConfigTransformer.DEFAULT_PATTERN`
/// (`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`) matches it: the provider is the text up to the first
/// colon, the path the text up to the next colon (empty without one), the key everything after
/// it up to the closing brace. So a path can hold no colon: in `${file:C:\dir\f:key}` the path
/// is `C` and the key `\dir\f:key`, as Connect reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigVariable<'a> {
    /// The whole reference, `${…}`.
    pub text: &'a str,
    /// Byte offset of `$` in the value.
    pub start: usize,
    /// Byte offset just past `}`.
    pub end: usize,
    /// The provider's name.
    pub provider: &'a str,
    /// The path; empty for `${provider:key}`.
    pub path: &'a str,
    /// The key.
    pub key: &'a str,
}

/// The variable references in `value`, left to right, as Java's `Matcher.find` finds them.
pub fn variables(value: &str) -> Vec<ConfigVariable<'_>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = value[from..].find("${") {
        let start = from + rel;
        let body_start = start + 2;
        // No group of the pattern can hold `}`, so a match ends at the first one.
        let Some(close) = value[body_start..].find('}').map(|i| body_start + i) else {
            break;
        };
        let body = &value[body_start..close];
        match body.split_once(':') {
            Some((provider, rest)) => {
                let (path, key) = rest.split_once(':').unwrap_or(("", rest));
                out.push(ConfigVariable {
                    text: &value[start..=close],
                    start,
                    end: close + 1,
                    provider,
                    path,
                    key,
                });
                from = close + 1;
            }
            // No match starting here; the search goes on from the next character.
            None => from = start + 1,
        }
    }
    out
}

/// Whether `value` holds a variable reference (Connect's `keysWithVariableValues` test).
pub fn has_variables(value: &str) -> bool {
    !variables(value).is_empty()
}

/// Puts the references back into task configs generated from a resolved connector config
/// (Connect's `AbstractHerder.reverseTransform`): every key that holds a reference in the raw
/// connector config and appears in a task config gets the raw value, so that resolved values
/// (secrets) are never written to the config topic nor shown by `GET /connectors/{c}/tasks`.
pub fn reverse_transform(
    raw_connector_config: &HashMap<String, String>,
    task_configs: &mut [HashMap<String, String>],
) {
    let with_refs: Vec<(&String, &String)> = raw_connector_config
        .iter()
        .filter(|(_, v)| has_variables(v))
        .collect();
    for config in task_configs {
        for (k, raw) in &with_refs {
            if let Some(v) = config.get_mut(*k) {
                v.clone_from(raw);
            }
        }
    }
}

/// A problem with the provider settings of the worker file, found at startup: `key` is the
/// setting to name (`config.providers.<name>.class` or `config.providers.<name>.param.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSetupError {
    /// The worker setting at fault.
    pub key: String,
    /// Connect's wording: `Invalid value … for configuration …: …`.
    pub message: String,
}

impl fmt::Display for ProviderSetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// A resolution that failed because a provider did: names the config key holding the
/// reference, the reference and the provider (its name and class), and says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolveError {
    /// The config key whose value holds the reference (the first one in key order when several
    /// refer to the same provider and path).
    pub key: String,
    /// The reference, `${provider:path:key}`.
    pub reference: String,
    /// The provider's name (`config.providers` entry).
    pub provider: String,
    /// The provider's class.
    pub class: String,
    /// What went wrong (Connect's `ConfigException` message, with the cause).
    pub message: String,
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot resolve {} in configuration {}: config provider '{}' ({}) failed: {}",
            self.reference,
            self.key,
            self.provider,
            short_class(&self.class),
            self.message
        )
    }
}

fn short_class(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

/// KIP-993's `allowed.paths` (Connect's `AllowedPaths`): when set, a comma-separated list of
/// absolute, existing paths; a provider then reads only paths that, once normalised (`.` and
/// `..` resolved lexically, symbolic links not followed), lie under one of them. Unset or empty,
/// every path is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedPaths {
    paths: Option<Vec<PathBuf>>,
}

/// An entry of `allowed.paths` the providers cannot use (Connect's messages).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllowedPathError {
    /// The entry is relative.
    #[error("Path {} is not absolute", .0.display())]
    NotAbsolute(PathBuf),
    /// Nothing exists at the entry.
    #[error("Path {} does not exist", .0.display())]
    Missing(PathBuf),
}

impl AllowedPaths {
    /// Everything allowed (`allowed.paths` unset).
    pub fn any() -> AllowedPaths {
        AllowedPaths { paths: None }
    }

    /// Parses an `allowed.paths` value. Entries are split on `,` as Java's `String.split` does
    /// (no trimming; trailing empty entries dropped). Errors, in Connect's words: `Path p is not
    /// absolute`, `Path p does not exist`.
    pub fn parse(value: Option<&str>) -> Result<AllowedPaths, AllowedPathError> {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Ok(AllowedPaths::any());
        };
        let mut entries: Vec<&str> = value.split(',').collect();
        while entries.last() == Some(&"") {
            entries.pop();
        }
        let mut paths = Vec::with_capacity(entries.len());
        for entry in entries {
            let normalised = normalise(Path::new(entry));
            if !normalised.is_absolute() {
                return Err(AllowedPathError::NotAbsolute(normalised));
            }
            if !normalised.exists() {
                return Err(AllowedPathError::Missing(normalised));
            }
            paths.push(normalised);
        }
        Ok(AllowedPaths { paths: Some(paths) })
    }

    /// The path to read for `path`, or `None` when it lies outside the allowed paths
    /// (`AllowedPaths.parseUntrustedPath`). Without a list, `path` as given.
    pub fn check(&self, path: &str) -> Option<PathBuf> {
        match &self.paths {
            None => Some(PathBuf::from(path)),
            Some(allowed) => {
                let normalised = normalise(Path::new(path));
                allowed
                    .iter()
                    .any(|a| normalised.starts_with(a))
                    .then_some(normalised)
            }
        }
    }

    /// The allowed paths, `None` when every path is allowed.
    pub fn paths(&self) -> Option<&[PathBuf]> {
        self.paths.as_deref()
    }
}

/// Java's `Path.normalize`: drops `.`, and `..` with the name before it; `..` right under the
/// root is dropped; leading `..` of a relative path stay. Purely lexical.
pub(crate) fn normalise(path: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                _ => out.push(c),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

/// A provider failure: the message Connect's `ConfigException` carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError(pub String);

/// Connect's `FileConfigProvider`: reads the Java properties file (UTF-8, as Connect's reader)
/// at `path` and returns the requested keys it has.
#[derive(Debug, Clone)]
pub struct FileConfigProvider {
    name: String,
    allowed: AllowedPaths,
}

impl FileConfigProvider {
    /// A provider called `name` limited to `allowed`.
    pub fn new(name: &str, allowed: AllowedPaths) -> FileConfigProvider {
        FileConfigProvider {
            name: name.to_string(),
            allowed,
        }
    }

    /// The values of `keys` in the properties file at `path`; an empty `path` has no values.
    /// Errors: the path lies outside `allowed.paths` (Connect logs that and returns nothing;
    /// Tributary fails, see the README), or the file cannot be read or is not UTF-8
    /// (`Could not read properties from file …`, as Connect).
    pub fn get(
        &self,
        path: &str,
        keys: &BTreeSet<&str>,
    ) -> Result<HashMap<String, String>, ProviderError> {
        if path.is_empty() {
            return Ok(HashMap::new());
        }
        let file = self
            .allowed
            .check(path)
            .ok_or_else(|| ProviderError(not_allowed(&self.name, path, &self.allowed)))?;
        // Connect's message, without the cause: whether the file is missing, unreadable or
        // malformed is for the worker's log, not for the caller (issue #42).
        let cannot = |why: String| {
            tracing::warn!(provider = %self.name, "Could not read properties from file {path}: {why}");
            ProviderError(format!("Could not read properties from file {path}"))
        };
        let bytes = std::fs::read(&file).map_err(|e| cannot(e.to_string()))?;
        let text = std::str::from_utf8(&bytes).map_err(|e| cannot(format!("not UTF-8: {e}")))?;
        let mut all = HashMap::new();
        java_properties::PropertiesIter::new_with_encoding(text.as_bytes(), encoding_rs::UTF_8)
            .read_into(|k, v| {
                all.insert(k, v);
            })
            .map_err(|e| cannot(e.to_string()))?;
        Ok(keys.iter().filter_map(|k| all.remove_entry(*k)).collect())
    }
}

/// Connect's `DirectoryConfigProvider`: the value of key `k` at path `dir` is the whole content
/// (UTF-8, nothing trimmed) of the regular file `dir/k`.
#[derive(Debug, Clone)]
pub struct DirectoryConfigProvider {
    name: String,
    allowed: AllowedPaths,
}

impl DirectoryConfigProvider {
    /// A provider called `name` limited to `allowed`.
    pub fn new(name: &str, allowed: AllowedPaths) -> DirectoryConfigProvider {
        DirectoryConfigProvider {
            name: name.to_string(),
            allowed,
        }
    }

    /// The contents of the regular files (symbolic links followed) named by `keys` in the
    /// directory `path`. An empty `path`, or one that is not a directory (logged, as Connect),
    /// has no values. Errors: the path lies outside `allowed.paths` (see
    /// [`FileConfigProvider::get`]), the directory cannot be listed or a file read.
    pub fn get(
        &self,
        path: &str,
        keys: &BTreeSet<&str>,
    ) -> Result<HashMap<String, String>, ProviderError> {
        let mut out = HashMap::new();
        if path.is_empty() {
            return Ok(out);
        }
        let dir = self
            .allowed
            .check(path)
            .ok_or_else(|| ProviderError(not_allowed(&self.name, path, &self.allowed)))?;
        if !dir.is_dir() {
            tracing::warn!(provider = %self.name, "The path {path} is not a directory");
            return Ok(out);
        }
        // Messages without the cause, which goes to the worker's log (issue #42).
        let cannot_list = |e: std::io::Error| {
            tracing::warn!(provider = %self.name, "Could not list directory {}: {e}", dir.display());
            ProviderError(format!("Could not list directory {}", dir.display()))
        };
        let listing = std::fs::read_dir(&dir).map_err(cannot_list)?;
        for entry in listing {
            let entry = entry.map_err(cannot_list)?;
            let name = entry.file_name();
            let Some(name) = name.to_str().filter(|n| keys.contains(n)) else {
                continue;
            };
            let file = entry.path();
            if !file.is_file() {
                continue;
            }
            let bytes = std::fs::read(&file).map_err(|e| {
                tracing::warn!(provider = %self.name, "Could not read file {} for property {name}: {e}", file.display());
                ProviderError(format!(
                    "Could not read file {} for property {name}",
                    file.display()
                ))
            })?;
            // Java's `new String(bytes, UTF_8)` replaces malformed input.
            out.insert(
                name.to_string(),
                String::from_utf8_lossy(&bytes).into_owned(),
            );
        }
        Ok(out)
    }
}

/// Connect's `EnvVarConfigProvider` (KIP-887): the environment as the worker started with it,
/// limited to the variables whose whole name matches `allowlist.pattern` (default `.*`).
#[derive(Debug, Clone)]
pub struct EnvVarConfigProvider {
    vars: HashMap<String, String>,
    /// Whether an `allowlist.pattern` limits the variables.
    limited: bool,
}

impl EnvVarConfigProvider {
    /// The process environment now (variables whose name or value is not Unicode are left
    /// out), filtered by `allowlist`, a regular expression that must match a whole name.
    pub fn from_env(allowlist: Option<&str>) -> Result<EnvVarConfigProvider, regex::Error> {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Self::with_vars(vars, allowlist)
    }

    /// The provider over `vars` instead of the process environment (for tests).
    pub fn with_vars(
        vars: HashMap<String, String>,
        allowlist: Option<&str>,
    ) -> Result<EnvVarConfigProvider, regex::Error> {
        let limited = allowlist.is_some();
        let vars = match allowlist {
            None => vars,
            Some(pattern) => {
                // Java's `Matcher.matches`: the whole name.
                let re = regex::Regex::new(&format!("^(?:{pattern})$"))?;
                vars.into_iter().filter(|(k, _)| re.is_match(k)).collect()
            }
        };
        Ok(EnvVarConfigProvider { vars, limited })
    }

    /// The allowed variables among `keys`. A non-empty `path` is an error, in Connect's words
    /// (`Path is not supported for EnvVarConfigProvider, invalid value '…'`).
    pub fn get(
        &self,
        path: &str,
        keys: &BTreeSet<&str>,
    ) -> Result<HashMap<String, String>, ProviderError> {
        if !path.is_empty() {
            return Err(ProviderError(format!(
                "Path is not supported for EnvVarConfigProvider, invalid value '{path}'"
            )));
        }
        Ok(keys
            .iter()
            .filter_map(|k| self.vars.get_key_value(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    }
}

fn not_allowed(name: &str, path: &str, allowed: &AllowedPaths) -> String {
    let list: Vec<String> = allowed
        .paths()
        .unwrap_or_default()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    format!(
        "The path {path} is not allowed to be accessed: it is outside config.providers.{name}.param.{ALLOWED_PATHS_PARAM} ({})",
        list.join(",")
    )
}

/// One configured provider: one of Connect's built-in classes.
#[derive(Debug, Clone)]
pub enum ConfigProvider {
    /// [`FILE_CONFIG_PROVIDER`].
    File(FileConfigProvider),
    /// [`DIRECTORY_CONFIG_PROVIDER`].
    Directory(DirectoryConfigProvider),
    /// [`ENV_VAR_CONFIG_PROVIDER`].
    EnvVar(EnvVarConfigProvider),
    /// Another class, a plugin's (a Java `ConfigProvider` from `plugin.path`, hosted).
    Plugin(PluginProvider),
}

/// A provider a plugin implements ([`PluginConfigProvider`]), with the name the worker gave it.
#[derive(Clone)]
pub struct PluginProvider {
    name: String,
    provider: Arc<dyn PluginConfigProvider>,
}

impl PluginProvider {
    /// Provider `name`, implemented by `provider`.
    pub fn new(name: &str, provider: Arc<dyn PluginConfigProvider>) -> PluginProvider {
        PluginProvider {
            name: name.to_string(),
            provider,
        }
    }
}

impl fmt::Debug for PluginProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PluginProvider")
            .field("name", &self.name)
            .field("class", &self.provider.class())
            .finish()
    }
}

impl ConfigProvider {
    /// The class name of this provider.
    pub fn class(&self) -> &str {
        match self {
            ConfigProvider::File(_) => FILE_CONFIG_PROVIDER,
            ConfigProvider::Directory(_) => DIRECTORY_CONFIG_PROVIDER,
            ConfigProvider::EnvVar(_) => ENV_VAR_CONFIG_PROVIDER,
            ConfigProvider::Plugin(p) => p.provider.class(),
        }
    }

    /// The `allowed.paths` of a file or directory provider (`None` for the environment's).
    pub fn allowed_paths(&self) -> Option<&AllowedPaths> {
        match self {
            ConfigProvider::File(p) => Some(&p.allowed),
            ConfigProvider::Directory(p) => Some(&p.allowed),
            ConfigProvider::EnvVar(_) | ConfigProvider::Plugin(_) => None,
        }
    }

    /// The values of `keys` at `path` (`ConfigProvider.get(path, keys)`); keys the provider does
    /// not have are absent. Connect's built-in providers return no TTL.
    pub fn get(
        &self,
        path: &str,
        keys: &BTreeSet<&str>,
    ) -> Result<HashMap<String, String>, ProviderError> {
        self.get_with_ttl(path, keys).map(|(data, _)| data)
    }

    /// [`Self::get`] with the TTL the provider gave the values, ms (`ConfigData.ttl()`; only a
    /// plugin's provider gives one).
    pub fn get_with_ttl(
        &self,
        path: &str,
        keys: &BTreeSet<&str>,
    ) -> Result<(HashMap<String, String>, Option<i64>), ProviderError> {
        match self {
            ConfigProvider::File(p) => p.get(path, keys).map(|d| (d, None)),
            ConfigProvider::Directory(p) => p.get(path, keys).map(|d| (d, None)),
            ConfigProvider::EnvVar(p) => p.get(path, keys).map(|d| (d, None)),
            ConfigProvider::Plugin(p) => {
                let data = p
                    .provider
                    .get(path, keys)
                    .map_err(|e| ProviderError(e.to_string()))?;
                Ok((data.data, data.ttl_ms))
            }
        }
    }
}

/// What [`ConfigProviders::resolve_with_ttls`] gives.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    /// The configs with the references replaced.
    pub configs: HashMap<String, String>,
    /// The values found, with their references (for redaction).
    pub found: super::secrets::Redactions,
    /// The TTLs the providers gave, ms, by path.
    pub ttls: BTreeMap<String, i64>,
}

/// The providers a worker declares (`config.providers`), by name; empty when it declares none.
/// Resolves references in config maps ([`ConfigProviders::transform`]).
#[derive(Debug, Clone, Default)]
pub struct ConfigProviders {
    providers: BTreeMap<String, ConfigProvider>,
}

impl ConfigProviders {
    /// Whether the worker settings `worker` declare a provider whose class is not one of
    /// Connect's built-in ones (a plugin's, which [`Self::from_worker_config_with`] creates
    /// through its factory).
    pub fn declares_plugin_classes(worker: &HashMap<String, String>) -> bool {
        worker
            .get(CONFIG_PROVIDERS_CONFIG)
            .into_iter()
            .flat_map(|names| names.split(','))
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .filter_map(|n| worker.get(&format!("{CONFIG_PROVIDERS_CONFIG}.{n}.class")))
            .any(|class| {
                ![
                    FILE_CONFIG_PROVIDER,
                    DIRECTORY_CONFIG_PROVIDER,
                    ENV_VAR_CONFIG_PROVIDER,
                ]
                .contains(&class.trim())
            })
    }

    /// The providers declared by the worker settings `worker` (`config.providers`,
    /// `config.providers.<name>.class`, `config.providers.<name>.param.*`), set up as Connect
    /// configures them. A name without a `.class` setting is skipped with a warning (Connect
    /// skips it silently). Errors name the setting: a class other than Connect's three built-in
    /// ones (no plugin factory here), an `allowed.paths` entry that is not absolute
    /// or does not exist, an `allowlist.pattern` that is not a regular expression.
    pub fn from_worker_config(
        worker: &HashMap<String, String>,
    ) -> Result<ConfigProviders, ProviderSetupError> {
        Self::from_worker_config_with(worker, None)
    }

    /// [`Self::from_worker_config`], a class other than Connect's built-in ones created by
    /// `plugins` (a Java provider from `plugin.path`, hosted) with the worker's
    /// `config.providers.<name>.*` settings. Errors name the `.class` setting: `plugins` found no
    /// such class, or could not create or configure it.
    pub fn from_worker_config_with(
        worker: &HashMap<String, String>,
        plugins: Option<&PluginConfigProviderFactory>,
    ) -> Result<ConfigProviders, ProviderSetupError> {
        let mut providers = BTreeMap::new();
        let Some(names) = worker.get(CONFIG_PROVIDERS_CONFIG) else {
            return Ok(ConfigProviders { providers });
        };
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let class_key = format!("{CONFIG_PROVIDERS_CONFIG}.{name}.class");
            let Some(class) = worker.get(&class_key) else {
                tracing::warn!(
                    "config provider '{name}' is listed in {CONFIG_PROVIDERS_CONFIG} but {class_key} is not set; references to it are left as they are"
                );
                continue;
            };
            let params = prefixed(worker, &format!("{CONFIG_PROVIDERS_CONFIG}.{name}.param."));
            let param_error = |param: &str, why: String| {
                ProviderSetupError {
                key: format!("{CONFIG_PROVIDERS_CONFIG}.{name}.param.{param}"),
                message: format!(
                    "Invalid value {} for configuration {CONFIG_PROVIDERS_CONFIG}.{name}.param.{param}: {why}",
                    params.get(param).map(String::as_str).unwrap_or("")
                ),
            }
            };
            let allowed_paths = || {
                AllowedPaths::parse(params.get(ALLOWED_PATHS_PARAM).map(String::as_str))
                    .map_err(|why| param_error(ALLOWED_PATHS_PARAM, why.to_string()))
            };
            let provider = match class.trim() {
                FILE_CONFIG_PROVIDER => {
                    ConfigProvider::File(FileConfigProvider::new(name, allowed_paths()?))
                }
                DIRECTORY_CONFIG_PROVIDER => {
                    ConfigProvider::Directory(DirectoryConfigProvider::new(name, allowed_paths()?))
                }
                ENV_VAR_CONFIG_PROVIDER => ConfigProvider::EnvVar(
                    EnvVarConfigProvider::from_env(
                        params.get(ALLOWLIST_PATTERN_PARAM).map(String::as_str),
                    )
                    .map_err(|e| param_error(ALLOWLIST_PATTERN_PARAM, e.to_string()))?,
                ),
                other => {
                    let refused = |why: String| ProviderSetupError {
                        key: class_key.clone(),
                        message: format!(
                            "Invalid value {other} for configuration {class_key}: {why}"
                        ),
                    };
                    let Some(factory) = plugins else {
                        return Err(refused(format!(
                            "a class other than Apache Kafka's built-in config providers ({FILE_CONFIG_PROVIDER}, {DIRECTORY_CONFIG_PROVIDER}, {ENV_VAR_CONFIG_PROVIDER}) is loaded from plugin.path, which is not set"
                        )));
                    };
                    let settings: HashMap<String, String> = worker
                        .iter()
                        .filter(|(k, _)| {
                            k.starts_with(&format!("{CONFIG_PROVIDERS_CONFIG}.{name}."))
                        })
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect();
                    match factory(name, other, &settings) {
                        Ok(Some(p)) => ConfigProvider::Plugin(PluginProvider::new(name, p)),
                        Ok(None) => {
                            return Err(refused(
                                "no config provider of that class on plugin.path".to_string(),
                            ))
                        }
                        Err(e) => return Err(refused(e.to_string())),
                    }
                }
            };
            providers.insert(name.to_string(), provider);
        }
        Ok(ConfigProviders { providers })
    }

    /// Providers given by name (for tests and embedders).
    pub fn new(providers: impl IntoIterator<Item = (String, ConfigProvider)>) -> ConfigProviders {
        ConfigProviders {
            providers: providers.into_iter().collect(),
        }
    }

    /// Whether no provider is configured (then [`transform`](Self::transform) changes nothing).
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }

    /// The provider called `name`.
    pub fn get(&self, name: &str) -> Option<&ConfigProvider> {
        self.providers.get(name)
    }

    /// The names of the providers that may read anything: file and directory providers without
    /// `allowed.paths`, environment providers without `allowlist.pattern`; sorted.
    pub fn unrestricted(&self) -> Vec<&str> {
        self.providers
            .iter()
            .filter(|(_, p)| match p {
                ConfigProvider::EnvVar(e) => !e.limited,
                other => other.allowed_paths().is_some_and(|a| a.paths().is_none()),
            })
            .map(|(n, _)| n.as_str())
            .collect()
    }

    /// `configs` with every reference replaced by its value (`ConfigTransformer.transform`):
    /// each provider is asked once per path for all the keys referenced there; a reference to
    /// a provider that is not configured, or to a key the provider does not have, stays as
    /// written (the latter is logged as a warning naming `context`, e.g. `connector c`); a
    /// replacement is not resolved again. Errors: a provider failed ([`ResolveError`]).
    ///
    /// For the worker file: its values are the operator's own and are not redacted (a host
    /// name resolved there would otherwise vanish from every log line); a connector's configs go
    /// through [`Self::resolve`], whose values are redacted ([`super::secrets`]).
    pub fn transform(
        &self,
        context: &str,
        configs: &HashMap<String, String>,
    ) -> Result<HashMap<String, String>, ResolveError> {
        self.resolve(context, configs).map(|(resolved, _)| resolved)
    }

    /// [`Self::transform`], also returning the values the references resolved to with the
    /// references (for redaction, [`super::secrets`]); nothing is recorded.
    pub fn resolve(
        &self,
        context: &str,
        configs: &HashMap<String, String>,
    ) -> Result<(HashMap<String, String>, super::secrets::Redactions), ResolveError> {
        self.resolve_with_ttls(context, configs)
            .map(|r| (r.configs, r.found))
    }

    /// [`Self::resolve`], also returning the TTLs the providers gave, by path
    /// (`ConfigTransformerResult.ttls()`: a non-negative TTL of a path, the last asked).
    pub fn resolve_with_ttls(
        &self,
        context: &str,
        configs: &HashMap<String, String>,
    ) -> Result<Resolved, ResolveError> {
        let mut found_values = super::secrets::Redactions::default();
        let mut ttls = BTreeMap::new();
        if self.providers.is_empty() {
            return Ok(Resolved {
                configs: configs.clone(),
                found: found_values,
                ttls,
            });
        }
        // provider -> path -> (keys, the first config key and reference asking for it)
        type Wanted<'a> = BTreeMap<&'a str, (BTreeSet<&'a str>, (&'a str, &'a str))>;
        let mut wanted: BTreeMap<&str, Wanted> = BTreeMap::new();
        let mut sorted: Vec<(&String, &String)> = configs.iter().collect();
        sorted.sort();
        for (config_key, value) in &sorted {
            for var in variables(value) {
                if !self.providers.contains_key(var.provider) {
                    continue;
                }
                wanted
                    .entry(var.provider)
                    .or_default()
                    .entry(var.path)
                    .or_insert_with(|| (BTreeSet::new(), (config_key.as_str(), var.text)))
                    .0
                    .insert(var.key);
            }
        }
        if wanted.is_empty() {
            return Ok(Resolved {
                configs: configs.clone(),
                found: found_values,
                ttls,
            });
        }
        let mut found: HashMap<(&str, &str), HashMap<String, String>> = HashMap::new();
        for (provider_name, paths) in &wanted {
            let provider = &self.providers[*provider_name];
            for (path, (keys, (config_key, reference))) in paths {
                let (data, ttl) = provider
                    .get_with_ttl(path, keys)
                    .map_err(|e| ResolveError {
                        key: config_key.to_string(),
                        reference: reference.to_string(),
                        provider: provider_name.to_string(),
                        class: provider.class().to_string(),
                        message: e.0,
                    })?;
                if let Some(ttl) = ttl.filter(|t| *t >= 0) {
                    ttls.insert(path.to_string(), ttl);
                }
                found.insert((provider_name, path), data);
            }
        }
        let mut out = HashMap::with_capacity(configs.len());
        for (config_key, value) in sorted {
            let vars = variables(value);
            if vars.is_empty() {
                out.insert(config_key.clone(), value.clone());
                continue;
            }
            let mut resolved = String::with_capacity(value.len());
            let mut at = 0;
            for var in vars {
                resolved.push_str(&value[at..var.start]);
                match found
                    .get(&(var.provider, var.path))
                    .map(|data| data.get(var.key))
                {
                    Some(Some(replacement)) => {
                        // To be kept out of answers and log lines (issue #42).
                        found_values.add(replacement, var.text);
                        resolved.push_str(replacement)
                    }
                    Some(None) => {
                        tracing::warn!(
                            "{context}: configuration {config_key}: config provider '{}' has no value for key '{}'{}; {} is left as it is",
                            var.provider,
                            var.key,
                            if var.path.is_empty() { String::new() } else { format!(" at path '{}'", var.path) },
                            var.text
                        );
                        resolved.push_str(var.text);
                    }
                    None => resolved.push_str(var.text),
                }
                at = var.end;
            }
            resolved.push_str(&value[at..]);
            out.insert(config_key.clone(), resolved);
        }
        Ok(Resolved {
            configs: out,
            found: found_values,
            ttls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(value: &str) -> Vec<(&str, &str, &str)> {
        variables(value)
            .into_iter()
            .map(|v| (v.provider, v.path, v.key))
            .collect()
    }

    fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn keys<'a>(k: &[&'a str]) -> BTreeSet<&'a str> {
        k.iter().copied().collect()
    }

    /// The references ConfigTransformer's DEFAULT_PATTERN finds, checked by hand against
    /// `\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}` with Java's lazy matching.
    #[test]
    fn references_are_parsed_as_connects_pattern_matches_them() {
        assert_eq!(
            vars("${file:/p/s.properties:k}"),
            vec![("file", "/p/s.properties", "k")]
        );
        assert_eq!(vars("${env:HOME}"), vec![("env", "", "HOME")]);
        assert_eq!(vars("${env::HOME}"), vec![("env", "", "HOME")]);
        // A path stops at its first colon; the rest belongs to the key.
        assert_eq!(
            vars("${file:C:\\d\\f:key}"),
            vec![("file", "C", "\\d\\f:key")]
        );
        assert_eq!(vars("${file:/a:b:c}"), vec![("file", "/a", "b:c")]);
        // Several in one value, with text around; a brace-less or colon-less one is no match.
        assert_eq!(
            vars("x${a:b}y${c:d:e}z${nocolon}${f:g"),
            vec![("a", "", "b"), ("c", "d", "e")]
        );
        // The match ends at the first `}`.
        assert_eq!(vars("${a:${b:c}}"), vec![("a", "${b", "c")]);
        assert_eq!(vars("${x}${p:k}"), vec![("p", "", "k")]);
        assert_eq!(vars("$${p:k}"), vec![("p", "", "k")]);
        assert_eq!(vars("${:k}"), vec![("", "", "k")]);
        assert_eq!(vars("${p:}"), vec![("p", "", "")]);
        assert_eq!(vars("${p:multi\nline:k}"), vec![("p", "multi\nline", "k")]);
        assert!(vars("plain").is_empty() && vars("${}").is_empty() && vars("{a:b}").is_empty());
        let v = variables("ab${p:k}cd");
        assert_eq!((v[0].start, v[0].end, v[0].text), (2, 8, "${p:k}"));
        assert!(has_variables("jdbc:${env:PW}") && !has_variables("${topic}"));
    }

    fn env_providers(vars: &[(&str, &str)], allowlist: Option<&str>) -> ConfigProviders {
        ConfigProviders::new([(
            "env".to_string(),
            ConfigProvider::EnvVar(EnvVarConfigProvider::with_vars(map(vars), allowlist).unwrap()),
        )])
    }

    #[test]
    fn transform_replaces_known_references_and_leaves_the_rest() {
        let p = env_providers(&[("A", "1"), ("B", "two")], None);
        let out = p
            .transform(
                "test",
                &map(&[
                    ("whole", "${env:A}"),
                    ("mixed", "x-${env:A}-${env:B}-${env:A}"),
                    ("missing", "${env:NOPE}"),
                    ("unknown", "${vault:secret:pw}"),
                    ("partly", "${env:A}${env:NOPE}"),
                    ("plain", "v"),
                    ("brace", "${env:A"),
                ]),
            )
            .unwrap();
        assert_eq!(out["whole"], "1");
        assert_eq!(out["mixed"], "x-1-two-1");
        assert_eq!(out["missing"], "${env:NOPE}");
        assert_eq!(out["unknown"], "${vault:secret:pw}");
        assert_eq!(out["partly"], "1${env:NOPE}");
        assert_eq!(out["plain"], "v");
        assert_eq!(out["brace"], "${env:A");
        assert_eq!(out.len(), 7);
        // One pass: a value that looks like a reference is not resolved again.
        let p = env_providers(&[("A", "${env:B}"), ("B", "b")], None);
        assert_eq!(
            p.transform("t", &map(&[("k", "${env:A}")])).unwrap()["k"],
            "${env:B}"
        );
        // No providers: nothing changes.
        let none = ConfigProviders::default();
        assert_eq!(
            none.transform("t", &map(&[("k", "${env:A}")])).unwrap()["k"],
            "${env:A}"
        );
    }

    #[test]
    fn env_provider_follows_the_allowlist_and_refuses_paths() {
        let p = env_providers(&[("APP_PW", "s3"), ("HOME", "/root")], Some("APP_.*"));
        let out = p
            .transform("t", &map(&[("a", "${env:APP_PW}"), ("b", "${env:HOME}")]))
            .unwrap();
        assert_eq!(out["a"], "s3");
        assert_eq!(out["b"], "${env:HOME}", "outside the allowlist: left as is");
        // The whole name must match, as Java's Matcher.matches.
        let p = env_providers(&[("XAPP_PW", "s3")], Some("APP_.*"));
        assert_eq!(
            p.transform("t", &map(&[("a", "${env:XAPP_PW}")])).unwrap()["a"],
            "${env:XAPP_PW}"
        );
        let err = env_providers(&[("A", "1")], None)
            .transform("t", &map(&[("k", "${env:/some/path:A}")]))
            .unwrap_err();
        assert_eq!(err.key, "k");
        assert_eq!(err.provider, "env");
        assert_eq!(err.reference, "${env:/some/path:A}");
        assert!(
            err.to_string().contains(
                "Path is not supported for EnvVarConfigProvider, invalid value '/some/path'"
            ) && err.to_string().contains("EnvVarConfigProvider"),
            "{err}"
        );
        assert!(EnvVarConfigProvider::with_vars(HashMap::new(), Some("(")).is_err());
    }

    #[test]
    fn file_provider_reads_java_properties_as_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("secrets.properties");
        std::fs::write(
            &f,
            "# c\nuser=alice\npass : p\\u00e4ss\nlong=a\\\n  b\nunicode=grüße\n",
        )
        .unwrap();
        let p = FileConfigProvider::new("file", AllowedPaths::any());
        let path = f.to_str().unwrap();
        let got = p
            .get(path, &keys(&["user", "pass", "long", "unicode", "none"]))
            .unwrap();
        assert_eq!(
            got,
            map(&[
                ("user", "alice"),
                ("pass", "päss"),
                ("long", "ab"),
                ("unicode", "grüße")
            ])
        );
        assert!(p.get("", &keys(&["user"])).unwrap().is_empty());
        let err = p.get("/no/such/file", &keys(&["k"])).unwrap_err().0;
        assert!(
            err.starts_with("Could not read properties from file /no/such/file"),
            "{err}"
        );
        // Why a file cannot be read goes to the log, not to the caller (issue #42): a missing
        // file and a malformed one read alike.
        std::fs::write(&f, b"k=\xff\n").unwrap();
        assert_eq!(
            p.get(path, &keys(&["k"])).unwrap_err().0,
            format!("Could not read properties from file {path}")
        );
        assert_eq!(err, "Could not read properties from file /no/such/file");
    }

    #[test]
    fn directory_provider_returns_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("password"), "secret\n").unwrap();
        std::fs::write(dir.path().join("other"), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let p = DirectoryConfigProvider::new("dir", AllowedPaths::any());
        let d = dir.path().to_str().unwrap();
        let got = p
            .get(d, &keys(&["password", "sub", "missing", "../x"]))
            .unwrap();
        assert_eq!(got, map(&[("password", "secret\n")]));
        assert!(
            p.get(&format!("{d}/password"), &keys(&["x"]))
                .unwrap()
                .is_empty(),
            "not a directory"
        );
        assert!(p.get("", &keys(&["x"])).unwrap().is_empty());
    }

    #[test]
    fn allowed_paths_refuse_what_lies_outside() {
        let root = tempfile::tempdir().unwrap();
        let allowed = root.path().join("allowed");
        let other = root.path().join("other");
        std::fs::create_dir_all(&allowed).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(allowed.join("s.properties"), "k=in\n").unwrap();
        std::fs::write(other.join("s.properties"), "k=out\n").unwrap();
        let a = AllowedPaths::parse(Some(allowed.to_str().unwrap())).unwrap();
        let inside = allowed.join("s.properties");
        assert_eq!(a.check(inside.to_str().unwrap()), Some(inside.clone()));
        assert_eq!(
            a.check(&format!("{}/./x/../s.properties", allowed.display())),
            Some(inside)
        );
        assert_eq!(a.check(other.join("s.properties").to_str().unwrap()), None);
        // `..` is resolved before the check, and a sibling with a longer name is not inside.
        assert_eq!(
            a.check(&format!("{}/../other/s.properties", allowed.display())),
            None
        );
        assert_eq!(a.check(&format!("{}-not", allowed.display())), None);
        assert_eq!(a.check("relative/s.properties"), None);

        let p = FileConfigProvider::new("file", a.clone());
        assert_eq!(
            p.get(
                allowed.join("s.properties").to_str().unwrap(),
                &keys(&["k"])
            )
            .unwrap()["k"],
            "in"
        );
        let err = p
            .get(other.join("s.properties").to_str().unwrap(), &keys(&["k"]))
            .unwrap_err()
            .0;
        assert!(
            err.contains("not allowed")
                && err.contains("config.providers.file.param.allowed.paths"),
            "{err}"
        );
        let d = DirectoryConfigProvider::new("dir", a);
        assert!(d
            .get(other.to_str().unwrap(), &keys(&["s.properties"]))
            .is_err());

        // Parsing: Java's split (trailing empties dropped), absolute and existing entries.
        let two = format!("{},{},", allowed.display(), other.display());
        assert_eq!(
            AllowedPaths::parse(Some(&two))
                .unwrap()
                .paths()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(AllowedPaths::parse(Some("")).unwrap(), AllowedPaths::any());
        assert_eq!(AllowedPaths::parse(None).unwrap(), AllowedPaths::any());
        assert_eq!(
            AllowedPaths::parse(Some("rel/dir"))
                .unwrap_err()
                .to_string(),
            "Path rel/dir is not absolute"
        );
        assert_eq!(
            AllowedPaths::parse(Some("/no/such/./dir"))
                .unwrap_err()
                .to_string(),
            "Path /no/such/dir does not exist"
        );
        assert_eq!(
            AllowedPaths::parse(Some(&format!(" {}", allowed.display())))
                .unwrap_err()
                .to_string(),
            format!("Path  {} is not absolute", allowed.display())
        );
        assert_eq!(
            normalise(Path::new("/../a/./b/../c")),
            PathBuf::from("/a/c")
        );
        assert_eq!(normalise(Path::new("../a/..")), PathBuf::from(".."));
    }

    #[test]
    fn worker_settings_declare_providers_and_errors_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let p = ConfigProviders::from_worker_config(&map(&[
            ("config.providers", "file, dir,env,nameless"),
            ("config.providers.file.class", FILE_CONFIG_PROVIDER),
            ("config.providers.file.param.allowed.paths", d),
            ("config.providers.dir.class", DIRECTORY_CONFIG_PROVIDER),
            ("config.providers.env.class", ENV_VAR_CONFIG_PROVIDER),
            (
                "config.providers.env.param.allowlist.pattern",
                "TRIBUTARY_.*",
            ),
        ]))
        .unwrap();
        assert_eq!(p.get("file").unwrap().class(), FILE_CONFIG_PROVIDER);
        assert_eq!(p.get("dir").unwrap().class(), DIRECTORY_CONFIG_PROVIDER);
        assert_eq!(p.get("env").unwrap().class(), ENV_VAR_CONFIG_PROVIDER);
        assert!(p.get("nameless").is_none(), "no class: skipped");
        assert!(ConfigProviders::from_worker_config(&map(&[]))
            .unwrap()
            .is_empty());

        let err = |pairs: &[(&str, &str)]| {
            let mut m = map(&[("config.providers", "x")]);
            m.extend(map(pairs));
            ConfigProviders::from_worker_config(&m).unwrap_err()
        };
        let e = err(&[(
            "config.providers.x.class",
            "com.example.VaultConfigProvider",
        )]);
        assert_eq!(e.key, "config.providers.x.class");
        assert!(e.message.starts_with("Invalid value com.example.VaultConfigProvider for configuration config.providers.x.class: "), "{e}");
        // Connect's aliases are no class names to AbstractConfig either.
        assert_eq!(
            err(&[("config.providers.x.class", "FileConfigProvider")]).key,
            "config.providers.x.class"
        );
        let e = err(&[
            ("config.providers.x.class", FILE_CONFIG_PROVIDER),
            ("config.providers.x.param.allowed.paths", "relative"),
        ]);
        assert_eq!(e.key, "config.providers.x.param.allowed.paths");
        assert_eq!(e.message, "Invalid value relative for configuration config.providers.x.param.allowed.paths: Path relative is not absolute");
        let e = err(&[
            ("config.providers.x.class", ENV_VAR_CONFIG_PROVIDER),
            ("config.providers.x.param.allowlist.pattern", "(["),
        ]);
        assert_eq!(e.key, "config.providers.x.param.allowlist.pattern");
    }

    #[test]
    fn a_failing_provider_names_key_reference_and_provider() {
        let dir = tempfile::tempdir().unwrap();
        let s = dir.path().join("s.properties");
        std::fs::write(&s, "user=u\npw=p\n").unwrap();
        let p = ConfigProviders::from_worker_config(&map(&[
            ("config.providers", "file"),
            ("config.providers.file.class", FILE_CONFIG_PROVIDER),
        ]))
        .unwrap();
        let ok = p
            .transform(
                "t",
                &map(&[
                    ("a", &format!("${{file:{}:user}}", s.display())),
                    (
                        "b",
                        &format!(
                            "${{file:{}:pw}}/${{file:{}:none}}",
                            s.display(),
                            s.display()
                        ),
                    ),
                ]),
            )
            .unwrap();
        assert_eq!(ok["a"], "u");
        assert_eq!(ok["b"], format!("p/${{file:{}:none}}", s.display()));
        let err = p
            .transform(
                "t",
                &map(&[
                    ("z", "${file:/no/such.properties:k}"),
                    ("b", "${file:/no/such.properties:j}"),
                ]),
            )
            .unwrap_err();
        assert_eq!(err.key, "b", "the first key in order");
        assert_eq!(err.provider, "file");
        assert_eq!(
            err.to_string(),
            "cannot resolve ${file:/no/such.properties:j} in configuration b: config provider 'file' (FileConfigProvider) failed: Could not read properties from file /no/such.properties"
        );
    }

    #[test]
    fn reverse_transform_puts_references_back() {
        let raw = map(&[
            ("file", "${file:/s:out}"),
            ("topic", "t"),
            ("other", "${env:X}"),
        ]);
        let mut tasks = vec![
            map(&[
                ("file", "/tmp/out.txt"),
                ("topic", "t"),
                ("task.class", "C"),
            ]),
            map(&[("task.class", "C")]),
        ];
        reverse_transform(&raw, &mut tasks);
        assert_eq!(
            tasks[0],
            map(&[
                ("file", "${file:/s:out}"),
                ("topic", "t"),
                ("task.class", "C")
            ])
        );
        assert_eq!(tasks[1], map(&[("task.class", "C")]));
    }

    /// A plugin's provider class (a Java one, hosted) is created by the factory with the
    /// worker's settings of that provider only, resolves references as a built-in one does,
    /// and a factory that finds no such class, or fails, refuses the `.class` setting by name.
    #[test]
    fn a_plugin_provider_class_is_created_by_the_factory() {
        use tributary_api::config_provider::ConfigData;
        struct Secrets;
        impl PluginConfigProvider for Secrets {
            fn class(&self) -> &str {
                "com.example.Secrets"
            }
            fn get(
                &self,
                path: &str,
                keys: &BTreeSet<&str>,
            ) -> tributary_api::ConnectResult<ConfigData> {
                if path == "boom" {
                    return Err(tributary_api::ConnectError::connect("vault sealed"));
                }
                Ok(ConfigData {
                    data: keys
                        .iter()
                        .filter(|k| **k != "missing")
                        .map(|k| (k.to_string(), format!("{path}/{k}")))
                        .collect(),
                    ttl_ms: None,
                })
            }
        }
        let worker = map(&[
            ("config.providers", "vault"),
            ("config.providers.vault.class", "com.example.Secrets"),
            ("config.providers.vault.param.token", "t"),
            ("config.providers.other.class", "x"),
        ]);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
        let factory: PluginConfigProviderFactory = {
            let seen = seen.clone();
            Arc::new(move |name, class, settings| {
                *seen.lock().unwrap() =
                    Some((name.to_string(), class.to_string(), settings.clone()));
                Ok(Some(Arc::new(Secrets) as Arc<dyn PluginConfigProvider>))
            })
        };
        assert!(ConfigProviders::declares_plugin_classes(&worker));
        assert!(!ConfigProviders::declares_plugin_classes(&map(&[
            ("config.providers", "file, other"),
            ("config.providers.file.class", FILE_CONFIG_PROVIDER),
            ("config.providers.vault.class", "com.example.Secrets"),
        ])));
        let providers = ConfigProviders::from_worker_config_with(&worker, Some(&factory)).unwrap();
        let (name, class, settings) = seen.lock().unwrap().clone().unwrap();
        assert_eq!(
            (name.as_str(), class.as_str()),
            ("vault", "com.example.Secrets")
        );
        assert_eq!(
            settings,
            map(&[
                ("config.providers.vault.class", "com.example.Secrets"),
                ("config.providers.vault.param.token", "t"),
            ])
        );
        assert_eq!(
            providers.get("vault").unwrap().class(),
            "com.example.Secrets"
        );
        let out = providers
            .transform(
                "connector c",
                &map(&[("a", "${vault:db:password}"), ("b", "${vault:db:missing}")]),
            )
            .unwrap();
        assert_eq!(out["a"], "db/password");
        assert_eq!(out["b"], "${vault:db:missing}");
        let e = providers
            .transform("connector c", &map(&[("a", "${vault:boom:x}")]))
            .unwrap_err();
        assert!(
            e.to_string().contains("vault sealed") && e.to_string().contains("(Secrets)"),
            "{e}"
        );

        // No such class, or no plugin.path at all: the setting is refused by name.
        let none: PluginConfigProviderFactory = Arc::new(|_, _, _| Ok(None));
        let e = ConfigProviders::from_worker_config_with(&worker, Some(&none)).unwrap_err();
        assert_eq!(e.key, "config.providers.vault.class");
        assert!(
            e.to_string()
                .contains("no config provider of that class on plugin.path"),
            "{e}"
        );
        let e = ConfigProviders::from_worker_config(&worker).unwrap_err();
        assert!(
            e.to_string().contains("plugin.path, which is not set"),
            "{e}"
        );
        let failing: PluginConfigProviderFactory =
            Arc::new(|_, _, _| Err(tributary_api::ConnectError::connect("configure threw")));
        let e = ConfigProviders::from_worker_config_with(&worker, Some(&failing)).unwrap_err();
        assert!(e.to_string().contains("configure threw"), "{e}");
    }
}
