//! The `transforms.*` and `predicates.*` settings of a connector, as Connect's
//! `ConnectorConfig.enrich` reads them (KIP-66, KIP-585, KIP-891's `plugin.version`).
//!
//! `transforms` lists transformation aliases (order kept) and `predicates` predicate aliases.
//! For each alias Connect adds to the connector's config definition, in group
//! `Transforms: <alias>` (`Predicates: <alias>`):
//!
//! - `transforms.<alias>.type` (CLASS, required): the class name or alias of the plugin;
//! - `transforms.<alias>.plugin.version` (STRING, default the plugin's version);
//! - for transformations, `transforms.<alias>.predicate` (STRING) and
//!   `transforms.<alias>.negate` (BOOLEAN, default false);
//! - the plugin's own keys (its `config()`), prefixed with `transforms.<alias>.`.
//!
//! [`enrich`] computes those keys and validates them against a config, with Connect's
//! messages, orders and groups, for `…/config/validate` and create/update; [`check`] gives the
//! first error, with which a connector or task whose config arrived without validation fails.

use std::collections::HashMap;

use tributary_api::config::{ConfigDef, ConfigKey, ConfigType, ConfigValue, Importance, Width};
use tributary_api::Props;

use crate::plugins::{ClassLookup, PluginKind, Plugins};

/// The key listing transformation aliases.
pub const TRANSFORMS_CONFIG: &str = "transforms";
/// The key listing predicate aliases.
pub const PREDICATES_CONFIG: &str = "predicates";
/// A transformation's key naming its predicate's alias (Connect's
/// `TransformationStage.PREDICATE_CONFIG`).
pub const PREDICATE_CONFIG: &str = "predicate";
/// A transformation's key negating its predicate.
pub const NEGATE_CONFIG: &str = "negate";
/// The suffix of a plugin's version key (KIP-891, Connect's `PLUGIN_VERSION_SUFFIX`).
pub const PLUGIN_VERSION_SUFFIX: &str = "plugin.version";

/// Transformations or predicates: what differs between the two alias lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasKind {
    /// `transforms`.
    Transformation,
    /// `predicates`.
    Predicate,
}

impl AliasKind {
    /// The key listing the aliases (`transforms`, `predicates`).
    pub fn list_key(self) -> &'static str {
        match self {
            AliasKind::Transformation => TRANSFORMS_CONFIG,
            AliasKind::Predicate => PREDICATES_CONFIG,
        }
    }

    fn group(self) -> &'static str {
        match self {
            AliasKind::Transformation => "Transforms",
            AliasKind::Predicate => "Predicates",
        }
    }

    fn plugin_kind(self) -> PluginKind {
        match self {
            AliasKind::Transformation => PluginKind::Transformation,
            AliasKind::Predicate => PluginKind::Predicate,
        }
    }

    fn lower(self) -> &'static str {
        match self {
            AliasKind::Transformation => "transformation",
            AliasKind::Predicate => "predicate",
        }
    }

    /// `transforms.<alias>.` / `predicates.<alias>.`.
    pub fn prefix(self, alias: &str) -> String {
        format!("{}.{alias}.", self.list_key())
    }
}

/// The aliases `key` lists, as `ConfigDef` parses a LIST: trimmed, split on commas, each item
/// trimmed; an empty or missing value lists none.
pub fn listed_aliases(props: &Props, key: &str) -> Vec<String> {
    let raw = props.get(key).map(|v| v.trim()).unwrap_or("");
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split(',').map(|s| s.trim().to_string()).collect()
}

/// The aliases once each, in the order they first appear (Connect's `LinkedHashSet`).
fn unique(aliases: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in aliases {
        if !out.contains(a) {
            out.push(a.clone());
        }
    }
    out
}

/// The definitions and validated values `transforms` and `predicates` add to a connector's
/// config (Connect's enriched `ConfigDef` and its `validateAll` answer for those keys).
#[derive(Debug, Clone, Default)]
pub struct Enrichment {
    /// The added keys, in Connect's order: per transformation alias its `type`,
    /// `plugin.version` and embedded keys, then the same per predicate alias.
    pub def: ConfigDef,
    /// One value per key of `def`, same order.
    pub values: Vec<ConfigValue>,
    /// Errors on the framework keys `transforms` / `predicates` themselves (duplicate aliases),
    /// as `(key, message)`.
    pub framework_errors: Vec<(String, String)>,
}

impl Enrichment {
    /// The first error, in definition order (framework keys first): what Connect's
    /// `AbstractConfig` throws when it parses such a config.
    pub fn first_error(&self) -> Option<String> {
        self.framework_errors
            .first()
            .map(|(_, m)| m.clone())
            .or_else(|| self.values.iter().find_map(|v| v.errors.first().cloned()))
    }
}

/// Java's `List.toString()`: `[a, b]`.
fn java_list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// Sorts keys as Connect's `ConfigDef.sortedConfigs` does before embedding them: by group
/// (keys without one first, then groups in the order they were first defined), order in group,
/// required before optional, importance (high first), name.
fn sorted_keys(def: &ConfigDef) -> Vec<ConfigKey> {
    let mut groups: Vec<&str> = Vec::new();
    for k in &def.keys {
        if let Some(g) = k.group.as_deref() {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    let group_ord = |k: &ConfigKey| match k.group.as_deref() {
        None => -1,
        Some(g) => groups.iter().position(|x| *x == g).unwrap_or(0) as i64,
    };
    let importance = |i: Importance| match i {
        Importance::High => 0,
        Importance::Medium => 1,
        Importance::Low => 2,
    };
    let mut keys = def.keys.clone();
    keys.sort_by(|a, b| {
        group_ord(a)
            .cmp(&group_ord(b))
            .then(a.order_in_group.cmp(&b.order_in_group))
            .then(b.required().cmp(&a.required()))
            .then(importance(a.importance).cmp(&importance(b.importance)))
            .then(a.name.cmp(&b.name))
    });
    keys
}

/// The keys every transformation has implicitly (Connect's `initialConfigDef` of
/// transformations): `predicate` and `negate`.
fn implicit_transformation_keys() -> ConfigDef {
    ConfigDef::new()
        .define(
            PREDICATE_CONFIG,
            ConfigType::String,
            Some(None),
            None,
            Importance::Medium,
            "Alias (listed in `predicates`) of the predicate deciding which records this transformation applies to.",
        )
        .define(
            NEGATE_CONFIG,
            ConfigType::Boolean,
            Some(Some("false")),
            None,
            Importance::Medium,
            "Apply the transformation to the records the predicate does not match.",
        )
}

/// The plugin's own config definition, for a class resolved to a plugin of `kind`.
fn plugin_config_def(plugins: &Plugins, kind: AliasKind, class: &str) -> Option<ConfigDef> {
    match kind {
        AliasKind::Transformation => plugins
            .transformation_plugin(class)
            .ok()
            .map(|p| (p.new_source)().config()),
        AliasKind::Predicate => plugins
            .predicate_plugin(class)
            .ok()
            .map(|p| (p.new_source)().config()),
    }
}

fn plugin_version(plugins: &Plugins, kind: AliasKind, class: &str) -> Option<&'static str> {
    match kind {
        AliasKind::Transformation => plugins.transformation_plugin(class).ok().map(|p| p.version),
        AliasKind::Predicate => plugins.predicate_plugin(class).ok().map(|p| p.version),
    }
}

/// Adds one alias's keys and values (Connect's `EnrichablePlugin.enrich` for one alias).
fn enrich_alias(
    plugins: &Plugins,
    props: &Props,
    kind: AliasKind,
    alias: &str,
    listed: &dyn Fn(&str) -> bool,
    out: &mut Enrichment,
) {
    let prefix = kind.prefix(alias);
    let group = format!("{}: {alias}", kind.group());
    let type_key = format!("{prefix}type");
    let version_key = format!("{prefix}{PLUGIN_VERSION_SUFFIX}");
    let raw_type = props.get(&type_key);
    // What `type` names, trimmed as ConfigDef parses a CLASS.
    let lookup = raw_type.map(|raw| plugins.classify(raw, kind.plugin_kind()));
    let resolved = match &lookup {
        Some(ClassLookup::Plugin(c)) => Some(*c),
        _ => None,
    };
    // Connect looks the plugin up by the setting as written for the version default and the
    // embedded keys, so a value with surrounding blanks resolves but embeds nothing.
    let exact = resolved.filter(|_| raw_type.is_some_and(|r| r.trim() == r));

    // transforms.<alias>.type
    let mut type_value = ConfigValue::new(&type_key);
    let recommended: Vec<String> = match kind {
        AliasKind::Transformation => plugins
            .transformations()
            .into_iter()
            .map(|p| p.class)
            .filter(|c| listed(c))
            .map(str::to_string)
            .collect(),
        AliasKind::Predicate => plugins
            .predicates()
            .into_iter()
            .map(|p| p.class)
            .filter(|c| listed(c))
            .map(str::to_string)
            .collect(),
    };
    type_value.recommended_values = recommended;
    let negate_problem = (kind == AliasKind::Transformation
        && props.contains_key(&format!("{prefix}{NEGATE_CONFIG}"))
        && !props.contains_key(&format!("{prefix}{PREDICATE_CONFIG}")))
    .then(|| {
        format!(
            "Config '{prefix}{NEGATE_CONFIG}' was provided but there is no config '{prefix}{PREDICATE_CONFIG}' defining a predicate to be negated."
        )
    });
    let iface = kind.plugin_kind().interface_name();
    match (raw_type, lookup) {
        (None, _) | (_, None) => {
            type_value.errors.push(format!(
                "Missing required configuration \"{type_key}\" which has no default value."
            ));
            type_value.errors.extend(negate_problem);
        }
        (Some(raw), Some(ClassLookup::Unknown)) => {
            type_value.errors.push(format!(
                "Invalid value {raw} for configuration {type_key}: Class {raw} could not be found."
            ));
            type_value.errors.extend(negate_problem);
        }
        (Some(_), Some(ClassLookup::Plugin(class))) => {
            type_value.value = Some(class.to_string());
            type_value.errors.extend(negate_problem);
        }
        (Some(_), Some(ClassLookup::OtherKind(class))) => {
            type_value.value = Some(class.to_string());
            type_value.errors.push(negate_problem.unwrap_or_else(|| {
                format!("Class class {class} does not implement the {iface} interface")
            }));
        }
        (Some(raw), Some(ClassLookup::Abstract(nested))) => {
            type_value.value = Some(plugins.resolve_class_name(raw).to_string());
            type_value.errors.push(negate_problem.unwrap_or_else(|| {
                format!(
                    "This class is abstract and cannot be created. Did you mean {}?",
                    nested.join(", ")
                )
            }));
        }
    }
    let type_kind_name = match kind {
        AliasKind::Transformation => "Transformation",
        AliasKind::Predicate => "Predicate",
    };
    out.def.keys.push(ConfigKey {
        name: type_key.clone(),
        config_type: ConfigType::Class,
        default: None,
        validator: None,
        importance: Importance::High,
        documentation: format!("The {} class (or alias) of '{alias}'.", kind.lower()),
        group: Some(group.clone()),
        order_in_group: 0,
        width: Width::Long,
        display_name: format!("{type_kind_name} type for {alias}"),
        dependents: Vec::new(),
    });
    out.values.push(type_value);

    // transforms.<alias>.plugin.version (KIP-891)
    let default_version = exact.and_then(|c| plugin_version(plugins, kind, c));
    let mut version_value = ConfigValue::new(&version_key);
    version_value.value = props
        .get(&version_key)
        .map(|v| v.trim().to_string())
        .or(default_version.map(str::to_string));
    if let Some(class) = resolved.filter(|c| plugin_version(plugins, kind, c).is_some()) {
        // Every installed version is recommended; a requirement none meets is refused in
        // Connect's words (one version: it does not match; several: none does, naming them).
        let plugin_kind = match kind {
            AliasKind::Transformation => crate::plugins::PluginKind::Transformation,
            AliasKind::Predicate => crate::plugins::PluginKind::Predicate,
        };
        version_value.recommended_values = plugins
            .versions(plugin_kind, class)
            .iter()
            .map(|v| v.to_string())
            .collect();
        if let Some(setting) = props.get(&version_key) {
            let chosen = match kind {
                AliasKind::Transformation => plugins
                    .transformation_plugin_in(class, Some(setting))
                    .map(|_| ()),
                AliasKind::Predicate => plugins
                    .predicate_plugin_in(class, Some(setting))
                    .map(|_| ()),
            };
            if let Err(e) = chosen {
                version_value.errors.push(e.to_string());
            }
        }
    }
    out.def.keys.push(ConfigKey {
        name: version_key,
        config_type: ConfigType::String,
        default: Some(default_version.map(str::to_string)),
        validator: None,
        importance: Importance::High,
        documentation: format!("The {} plugin version '{alias}' uses.", kind.lower()),
        group: Some(group.clone()),
        order_in_group: 1,
        width: Width::Long,
        display_name: format!("{type_kind_name} version for {alias}"),
        dependents: Vec::new(),
    });
    out.values.push(version_value);

    // The plugin's own keys (and, for transformations, `predicate` and `negate`), embedded.
    let Some(class) = exact else {
        return;
    };
    let Some(plugin_def) = plugin_config_def(plugins, kind, class) else {
        return;
    };
    let mut child = match kind {
        AliasKind::Transformation => implicit_transformation_keys(),
        AliasKind::Predicate => ConfigDef::new(),
    };
    for key in plugin_def.keys {
        if kind == AliasKind::Transformation
            && (key.name == PREDICATE_CONFIG || key.name == NEGATE_CONFIG)
        {
            tracing::warn!(
                "Transformer config {} is masked by implicit config of that name",
                key.name
            );
            continue;
        }
        child.keys.retain(|k| k.name != key.name);
        child.keys.push(key);
    }
    let mut embedded = ConfigDef::new();
    for (i, key) in sorted_keys(&child).into_iter().enumerate() {
        embedded.keys.push(ConfigKey {
            name: format!("{prefix}{}", key.name),
            group: Some(match &key.group {
                Some(g) => format!("{group}: {g}"),
                None => group.clone(),
            }),
            order_in_group: 2 + i as i32,
            dependents: key
                .dependents
                .iter()
                .map(|d| format!("{prefix}{d}"))
                .collect(),
            ..key
        });
    }
    let mut values = embedded.validate(props);
    // Connect's embedded validators see the key without its prefix, so their messages name
    // the plugin's own key; parse and missing-value errors name the prefixed key.
    for (key, value) in embedded.keys.iter().zip(values.iter_mut()) {
        let raw = props.get(&key.name).map(String::as_str);
        if raw.is_some() && ConfigDef::parse_value(key, raw).is_ok() {
            let unprefixed = &key.name[prefix.len()..];
            for e in &mut value.errors {
                *e = e.replacen(
                    &format!(" for configuration {}: ", key.name),
                    &format!(" for configuration {unprefixed}: "),
                    1,
                );
            }
        }
    }
    out.def.keys.extend(embedded.keys);
    out.values.extend(values);
}

/// The keys and values `transforms` and `predicates` add to a connector config (Connect's
/// `ConnectorConfig.enrich` with `requireFullConfig=false`, then `validateAll` on those keys).
/// `listed` says which plugin classes are recommended as `type` values (Connect recommends
/// every transformation or predicate it found; Tributary leaves out its test-only ones).
pub fn enrich(plugins: &Plugins, props: &Props, listed: &dyn Fn(&str) -> bool) -> Enrichment {
    let mut out = Enrichment::default();
    for kind in [AliasKind::Transformation, AliasKind::Predicate] {
        let aliases = listed_aliases(props, kind.list_key());
        let once = unique(&aliases);
        if once.len() < aliases.len() {
            out.framework_errors.push((
                kind.list_key().to_string(),
                format!(
                    "Invalid value {} for configuration {}: Duplicate alias provided.",
                    java_list(&aliases),
                    kind.list_key()
                ),
            ));
        }
        for alias in &once {
            enrich_alias(plugins, props, kind, alias, listed, &mut out);
        }
    }
    out
}

/// The first problem with a config's `transforms` / `predicates` settings, `None` when they
/// are valid: what a connector or task whose config was not validated (a standalone file, the
/// config topic written by another worker) fails with, as Connect's `ConnectorConfig` throws it.
pub fn check(plugins: &Plugins, props: &Props) -> Option<String> {
    enrich(plugins, props, &|_| true).first_error()
}

/// The settings of the plugin under `prefix` (`transforms.<alias>.`), prefix removed (Connect's
/// `originalsWithPrefix`).
pub fn with_prefix(props: &Props, prefix: &str) -> HashMap<String, String> {
    crate::config::worker::prefixed(props, prefix)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::config::Validator;
    use tributary_api::transforms::{
        ConnectRecord, Predicate, PredicatePlugin, Transformation, TransformationPlugin,
    };
    use tributary_api::ConnectResult;

    /// A transformation with Connect RegexRouter's keys.
    #[derive(Default)]
    struct Router;
    impl<R: ConnectRecord> Transformation<R> for Router {
        fn configure(&mut self, _: &Props) -> ConnectResult<()> {
            Ok(())
        }
        fn apply(&mut self, r: R) -> ConnectResult<Option<R>> {
            Ok(Some(r))
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new()
                .define(
                    "regex",
                    ConfigType::String,
                    None,
                    Some(Validator::NonEmptyString),
                    Importance::High,
                    "Regular expression to use for matching.",
                )
                .define(
                    "replacement",
                    ConfigType::String,
                    None,
                    None,
                    Importance::High,
                    "Replacement string.",
                )
                .define(
                    "count",
                    ConfigType::Int,
                    Some(Some("1")),
                    None,
                    Importance::Low,
                    "A number.",
                )
        }
    }
    #[derive(Default)]
    struct Matches;
    impl<R: ConnectRecord> Predicate<R> for Matches {
        fn configure(&mut self, _: &Props) -> ConnectResult<()> {
            Ok(())
        }
        fn test(&mut self, _: &R) -> bool {
            true
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new().define(
                "pattern",
                ConfigType::String,
                None,
                None,
                Importance::Medium,
                "A pattern.",
            )
        }
    }

    fn plugins() -> Plugins {
        let mut set = tributary_plugins::builtin();
        set.transformations = vec![
            TransformationPlugin::of::<Router>("t.RegexRouter", "4.1.1"),
            TransformationPlugin::of::<Router>("t.InsertField$Key", "4.1.1"),
            TransformationPlugin::of::<Router>("t.InsertField$Value", "4.1.1"),
        ];
        set.predicates = vec![PredicatePlugin::of::<Matches>(
            "t.p.TopicNameMatches",
            "4.1.1",
        )];
        Plugins::new(set)
    }

    use crate::config::props;

    fn row(e: &Enrichment, name: &str) -> (Option<String>, Vec<String>, i32, Option<String>) {
        let i = e
            .def
            .keys
            .iter()
            .position(|k| k.name == name)
            .unwrap_or_else(|| panic!("no key {name}"));
        let k = &e.def.keys[i];
        let v = &e.values[i];
        (
            v.value.clone(),
            v.errors.clone(),
            k.order_in_group,
            k.group.clone(),
        )
    }

    #[test]
    fn keys_come_in_connects_order_and_groups() {
        let e = enrich(
            &plugins(),
            &props(&[
                ("transforms", "a"),
                ("transforms.a.type", "RegexRouter"),
                ("transforms.a.regex", "x"),
                ("transforms.a.predicate", "p"),
                ("predicates", "p"),
                ("predicates.p.type", "TopicNameMatches"),
            ]),
            &|_| true,
        );
        let names: Vec<&str> = e.def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "transforms.a.type",
                "transforms.a.plugin.version",
                "transforms.a.regex",
                "transforms.a.replacement",
                "transforms.a.negate",
                "transforms.a.predicate",
                "transforms.a.count",
                "predicates.p.type",
                "predicates.p.plugin.version",
                "predicates.p.pattern",
            ]
        );
        assert_eq!(
            row(&e, "transforms.a.type"),
            (
                Some("t.RegexRouter".into()),
                vec![],
                0,
                Some("Transforms: a".into())
            )
        );
        assert_eq!(
            row(&e, "transforms.a.plugin.version").0.as_deref(),
            Some("4.1.1")
        );
        assert_eq!(row(&e, "transforms.a.regex").2, 2);
        assert_eq!(
            row(&e, "transforms.a.replacement").1,
            vec!["Missing required configuration \"transforms.a.replacement\" which has no default value."]
        );
        assert_eq!(row(&e, "transforms.a.predicate").0.as_deref(), Some("p"));
        assert_eq!(
            row(&e, "predicates.p.pattern").3.as_deref(),
            Some("Predicates: p")
        );
        let display: Vec<&str> = e.def.keys[..2]
            .iter()
            .map(|k| k.display_name.as_str())
            .collect();
        assert_eq!(
            display,
            ["Transformation type for a", "Transformation version for a"]
        );
        assert_eq!(e.values[0].recommended_values.len(), 3);
        assert_eq!(
            e.first_error().as_deref(),
            Some("Missing required configuration \"transforms.a.replacement\" which has no default value.")
        );
    }

    #[test]
    fn type_problems_are_worded_as_connect_words_them() {
        let e = enrich(
            &plugins(),
            &props(&[
                ("transforms", "a, b,c,d ,e"),
                ("transforms.a.type", "com.example.Nope"),
                ("transforms.c.type", "t.InsertField"),
                ("transforms.d.type", "FileStreamSink"),
                ("transforms.e.type", "RegexRouter"),
                ("transforms.e.negate", "true"),
            ]),
            &|_| true,
        );
        assert_eq!(
            row(&e, "transforms.a.type").1,
            vec!["Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found."]
        );
        assert_eq!(
            row(&e, "transforms.b.type").1,
            vec![
                "Missing required configuration \"transforms.b.type\" which has no default value."
            ]
        );
        assert_eq!(
            row(&e, "transforms.c.type"),
            (
                Some("t.InsertField".into()),
                vec!["This class is abstract and cannot be created. Did you mean t.InsertField$Key, t.InsertField$Value?".to_string()],
                0,
                Some("Transforms: c".into())
            )
        );
        assert_eq!(
            row(&e, "transforms.d.type").1,
            vec!["Class class org.apache.kafka.connect.file.FileStreamSinkConnector does not implement the Transformation interface"]
        );
        assert_eq!(
            row(&e, "transforms.e.type").1,
            vec!["Config 'transforms.e.negate' was provided but there is no config 'transforms.e.predicate' defining a predicate to be negated."]
        );
        // Without a usable class, nothing is embedded and there is no default version.
        assert!(e.def.key("transforms.a.regex").is_none());
        assert_eq!(row(&e, "transforms.c.plugin.version").0, None);
    }

    #[test]
    fn duplicates_and_embedded_messages() {
        let e = enrich(
            &plugins(),
            &props(&[
                ("transforms", "a,a"),
                ("transforms.a.type", "t.RegexRouter"),
                ("transforms.a.regex", ""),
                ("transforms.a.replacement", "y"),
                ("transforms.a.count", "many"),
                ("transforms.a.negate", "maybe"),
                ("transforms.a.predicate", "p"),
                ("transforms.a.plugin.version", "1.0"),
            ]),
            &|_| true,
        );
        assert_eq!(
            e.framework_errors,
            vec![(
                "transforms".to_string(),
                "Invalid value [a, a] for configuration transforms: Duplicate alias provided."
                    .to_string()
            )]
        );
        // A validator's message names the plugin's own key; a parse error the prefixed one.
        assert_eq!(
            row(&e, "transforms.a.regex").1,
            vec!["Invalid value  for configuration regex: String must be non-empty"]
        );
        assert_eq!(
            row(&e, "transforms.a.count").1,
            vec![
                "Invalid value many for configuration transforms.a.count: Not a number of type INT"
            ]
        );
        assert_eq!(
            row(&e, "transforms.a.negate").1,
            vec!["Invalid value maybe for configuration transforms.a.negate: Expected value to be either true or false"]
        );
        assert_eq!(
            row(&e, "transforms.a.plugin.version").1,
            vec!["Plugin t.RegexRouter has version 4.1.1 which does not match the required version range [1.0]"]
        );
        // Blanks around the class resolve it but embed nothing, as in Connect.
        let e = enrich(
            &plugins(),
            &props(&[("transforms", "a"), ("transforms.a.type", " RegexRouter ")]),
            &|_| true,
        );
        assert_eq!(row(&e, "transforms.a.type").1, Vec::<String>::new());
        assert_eq!(e.def.keys.len(), 2);
        assert_eq!(row(&e, "transforms.a.plugin.version").0, None);
        assert_eq!(e.first_error(), None);
    }
}
