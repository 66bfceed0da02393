//! Kafka's configuration definitions (`org.apache.kafka.common.config.ConfigDef`): typed keys
//! with defaults, docs and validators, used to parse a `Map<String,String>` and to report
//! per-key errors for `PUT /connector-plugins/{plugin}/config/validate`.

use std::collections::HashMap;

use crate::error::{ConnectError, ConnectResult};
use crate::Props;

/// A key's type (`ConfigDef.Type`); [`ConfigType::name`] gives the REST spelling (`"INT"` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    Boolean,
    String,
    Int,
    Short,
    Long,
    Double,
    List,
    Class,
    Password,
}

impl ConfigType {
    /// The uppercase name Connect's REST API shows.
    pub fn name(self) -> &'static str {
        match self {
            ConfigType::Boolean => "BOOLEAN",
            ConfigType::String => "STRING",
            ConfigType::Int => "INT",
            ConfigType::Short => "SHORT",
            ConfigType::Long => "LONG",
            ConfigType::Double => "DOUBLE",
            ConfigType::List => "LIST",
            ConfigType::Class => "CLASS",
            ConfigType::Password => "PASSWORD",
        }
    }
}

/// How important a key is (`ConfigDef.Importance`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Importance {
    High,
    Medium,
    Low,
}

impl Importance {
    pub fn name(self) -> &'static str {
        match self {
            Importance::High => "HIGH",
            Importance::Medium => "MEDIUM",
            Importance::Low => "LOW",
        }
    }
}

/// A display width hint (`ConfigDef.Width`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    None,
    Short,
    Medium,
    Long,
}

impl Width {
    pub fn name(self) -> &'static str {
        match self {
            Width::None => "NONE",
            Width::Short => "SHORT",
            Width::Medium => "MEDIUM",
            Width::Long => "LONG",
        }
    }
}

/// A parsed configuration value.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Null,
    Boolean(bool),
    String(String),
    Int(i32),
    Short(i16),
    Long(i64),
    Double(f64),
    List(Vec<String>),
}

impl Parsed {
    /// Java's string form of the parsed value (lists comma-joined), `None` for null.
    pub fn to_config_string(&self) -> Option<String> {
        Some(match self {
            Parsed::Null => return None,
            Parsed::Boolean(b) => b.to_string(),
            Parsed::String(s) => s.clone(),
            Parsed::Int(v) => v.to_string(),
            Parsed::Short(v) => v.to_string(),
            Parsed::Long(v) => v.to_string(),
            Parsed::Double(v) => v.to_string(),
            Parsed::List(l) => l.join(","),
        })
    }
}

/// A custom check of a parsed value ([`Validator::Custom`]): returns the error message.
pub type CustomValidator = std::sync::Arc<dyn Fn(&Parsed) -> Result<(), String> + Send + Sync>;

/// A validator of a parsed value (`ConfigDef.Validator`); the error text is appended to
/// `Invalid value <v> for configuration <k>: `.
#[derive(Clone)]
pub enum Validator {
    /// `Range.atLeast` / `Range.between` for numbers.
    Range { min: Option<f64>, max: Option<f64> },
    /// `ValidString.in(...)`, case-sensitive.
    OneOf(Vec<String>),
    /// `CaseInsensitiveValidString.in(...)`.
    OneOfIgnoreCase(Vec<String>),
    /// `NonEmptyString`.
    NonEmptyString,
    /// Any check: returns the error message.
    Custom(CustomValidator),
    /// Any check whose error is the whole message, with no `Invalid value … for
    /// configuration …: ` before it (a Java validator that throws
    /// `new ConfigException(message)`, as Cast's `spec` does).
    CustomMessage(CustomValidator),
}

impl std::fmt::Debug for Validator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Validator::Range { min, max } => write!(f, "Range({min:?}, {max:?})"),
            Validator::OneOf(v) => write!(f, "OneOf({v:?})"),
            Validator::OneOfIgnoreCase(v) => write!(f, "OneOfIgnoreCase({v:?})"),
            Validator::NonEmptyString => f.write_str("NonEmptyString"),
            Validator::Custom(_) => f.write_str("Custom"),
            Validator::CustomMessage(_) => f.write_str("CustomMessage"),
        }
    }
}

impl Validator {
    fn check(&self, v: &Parsed) -> Result<(), String> {
        let num = match v {
            Parsed::Int(x) => Some(*x as f64),
            Parsed::Short(x) => Some(*x as f64),
            Parsed::Long(x) => Some(*x as f64),
            Parsed::Double(x) => Some(*x),
            _ => None,
        };
        match self {
            Validator::Range { min, max } => {
                let Some(n) = num else { return Ok(()) };
                let show = |x: f64| {
                    if x.fract() == 0.0 {
                        format!("{}", x as i64)
                    } else {
                        x.to_string()
                    }
                };
                match (min, max) {
                    (Some(lo), Some(hi)) if n < *lo || n > *hi => Err(format!(
                        "Value must be no less than {} and no greater than {}",
                        show(*lo),
                        show(*hi)
                    )),
                    (Some(lo), None) if n < *lo => {
                        Err(format!("Value must be at least {}", show(*lo)))
                    }
                    (None, Some(hi)) if n > *hi => {
                        Err(format!("Value must be no more than {}", show(*hi)))
                    }
                    _ => Ok(()),
                }
            }
            Validator::OneOf(opts) | Validator::OneOfIgnoreCase(opts) => {
                let ic = matches!(self, Validator::OneOfIgnoreCase(_));
                let s = v.to_config_string().unwrap_or_default();
                if opts.iter().any(|o| {
                    if ic {
                        o.eq_ignore_ascii_case(&s)
                    } else {
                        *o == s
                    }
                }) {
                    Ok(())
                } else {
                    Err(format!(
                        "String must be one of{}: {}",
                        if ic { " (case insensitive)" } else { "" },
                        opts.join(", ")
                    ))
                }
            }
            Validator::NonEmptyString => match v {
                Parsed::String(s) if s.is_empty() => Err("String must be non-empty".into()),
                _ => Ok(()),
            },
            Validator::Custom(f) | Validator::CustomMessage(f) => f(v),
        }
    }
}

/// One key of a [`ConfigDef`] (`ConfigDef.ConfigKey`). `default` `None` means required
/// (Java's `NO_DEFAULT_VALUE`); `Some(None)` is a default of null.
#[derive(Debug, Clone)]
pub struct ConfigKey {
    pub name: String,
    pub config_type: ConfigType,
    pub default: Option<Option<String>>,
    pub validator: Option<Validator>,
    pub importance: Importance,
    pub documentation: String,
    pub group: Option<String>,
    pub order_in_group: i32,
    pub width: Width,
    pub display_name: String,
    pub dependents: Vec<String>,
}

impl ConfigKey {
    /// Whether the key has no default and must be set.
    pub fn required(&self) -> bool {
        self.default.is_none()
    }
    /// The default as REST shows it (`default_value`): null when required or null.
    pub fn default_string(&self) -> Option<String> {
        match (&self.default, self.config_type) {
            (Some(Some(_)), ConfigType::Password) => Some("[hidden]".into()),
            (Some(Some(d)), _) => Some(d.clone()),
            _ => None,
        }
    }
}

/// The outcome of validating one key (`ConfigValue`): its value's string form, recommended
/// values, error messages and visibility.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigValue {
    pub name: String,
    pub value: Option<String>,
    pub recommended_values: Vec<String>,
    pub errors: Vec<String>,
    pub visible: bool,
}

impl ConfigValue {
    /// A value with no value, no recommendations, no errors, visible (Java's
    /// `new ConfigValue(name)`).
    pub fn new(name: impl Into<String>) -> ConfigValue {
        ConfigValue {
            name: name.into(),
            value: None,
            recommended_values: Vec::new(),
            errors: Vec::new(),
            visible: true,
        }
    }

    /// Adds `message` to the errors of `key` in `values`, appending a value for `key` (with
    /// its raw `value`) when validation produced none (what Connect connectors do after
    /// `super.validate`: `configValues.stream().filter(…).findAny().orElseGet(…)`).
    pub fn add_error(
        values: &mut Vec<ConfigValue>,
        key: &str,
        value: Option<&str>,
        message: String,
    ) {
        match values.iter_mut().find(|v| v.name == key) {
            Some(v) => v.errors.push(message),
            None => {
                let mut v = ConfigValue::new(key);
                v.value = value.map(str::to_string);
                v.errors.push(message);
                values.push(v);
            }
        }
    }
}

/// A set of configuration keys in definition order (`ConfigDef`).
#[derive(Debug, Clone, Default)]
pub struct ConfigDef {
    pub keys: Vec<ConfigKey>,
}

impl ConfigDef {
    pub fn new() -> ConfigDef {
        ConfigDef { keys: Vec::new() }
    }

    /// Defines a key (builder style). `default` `None` = required.
    #[allow(clippy::too_many_arguments)]
    pub fn define(
        mut self,
        name: &str,
        config_type: ConfigType,
        default: Option<Option<&str>>,
        validator: Option<Validator>,
        importance: Importance,
        documentation: &str,
    ) -> ConfigDef {
        let order_in_group = -1;
        self.keys.push(ConfigKey {
            name: name.to_string(),
            config_type,
            default: default.map(|d| d.map(str::to_string)),
            validator,
            importance,
            documentation: documentation.to_string(),
            group: None,
            order_in_group,
            width: Width::None,
            display_name: name.to_string(),
            dependents: Vec::new(),
        });
        self
    }

    /// Defines a key with group, order, width and display name (the full `define` overload).
    pub fn define_key(mut self, key: ConfigKey) -> ConfigDef {
        self.keys.retain(|k| k.name != key.name);
        self.keys.push(key);
        self
    }

    /// The key with the given name.
    pub fn key(&self, name: &str) -> Option<&ConfigKey> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// Appends `other`'s keys; a key defined in both keeps `self`'s definition.
    pub fn merge(mut self, other: &ConfigDef) -> ConfigDef {
        for k in &other.keys {
            if self.key(&k.name).is_none() {
                self.keys.push(k.clone());
            }
        }
        self
    }

    /// Parses one raw value of a key (`ConfigDef.parseType`). Errors name the key.
    pub fn parse_value(key: &ConfigKey, raw: Option<&str>) -> Result<Parsed, String> {
        let Some(raw) = raw else {
            return Ok(Parsed::Null);
        };
        let trimmed = raw.trim();
        let bad =
            |what: &str| format!("Invalid value {raw} for configuration {}: {what}", key.name);
        Ok(match key.config_type {
            ConfigType::Boolean => match trimmed.to_ascii_lowercase().as_str() {
                "true" => Parsed::Boolean(true),
                "false" => Parsed::Boolean(false),
                _ => return Err(bad("Expected value to be either true or false")),
            },
            ConfigType::String | ConfigType::Class => Parsed::String(trimmed.to_string()),
            ConfigType::Password => Parsed::String(raw.to_string()),
            ConfigType::Int => Parsed::Int(
                trimmed
                    .parse()
                    .map_err(|_| bad("Not a number of type INT"))?,
            ),
            ConfigType::Short => Parsed::Short(
                trimmed
                    .parse()
                    .map_err(|_| bad("Not a number of type SHORT"))?,
            ),
            ConfigType::Long => Parsed::Long(
                trimmed
                    .parse()
                    .map_err(|_| bad("Not a number of type LONG"))?,
            ),
            ConfigType::Double => Parsed::Double(
                trimmed
                    .parse()
                    .map_err(|_| bad("Not a number of type DOUBLE"))?,
            ),
            ConfigType::List => {
                if trimmed.is_empty() {
                    Parsed::List(Vec::new())
                } else {
                    Parsed::List(trimmed.split(',').map(|s| s.trim().to_string()).collect())
                }
            }
        })
    }

    /// Validates `props` against every key, in definition order (`ConfigDef.validate`).
    /// A required key that is missing gets `Missing required configuration "k" which has no
    /// default value.`; type and validator failures get Connect's messages.
    pub fn validate(&self, props: &Props) -> Vec<ConfigValue> {
        self.keys
            .iter()
            .map(|key| {
                let mut cv = ConfigValue {
                    name: key.name.clone(),
                    value: None,
                    recommended_values: Vec::new(),
                    errors: Vec::new(),
                    visible: true,
                };
                let raw = props.get(&key.name).map(String::as_str);
                let raw = match (raw, &key.default) {
                    (Some(r), _) => Some(r),
                    (None, Some(d)) => d.as_deref(),
                    (None, None) => {
                        cv.errors.push(format!(
                            "Missing required configuration \"{}\" which has no default value.",
                            key.name
                        ));
                        return cv;
                    }
                };
                match Self::parse_value(key, raw) {
                    Ok(parsed) => {
                        cv.value = if key.config_type == ConfigType::Password
                            && !parsed.eq(&Parsed::Null)
                        {
                            Some("[hidden]".into())
                        } else {
                            parsed.to_config_string()
                        };
                        if let Some(v) = &key.validator {
                            if parsed != Parsed::Null {
                                if let Err(e) = v.check(&parsed) {
                                    cv.errors.push(match v {
                                        Validator::CustomMessage(_) => e,
                                        _ => format!(
                                            "Invalid value {} for configuration {}: {e}",
                                            raw.unwrap_or("null"),
                                            key.name
                                        ),
                                    });
                                }
                            }
                        }
                    }
                    // As Java's `parseForValidate`, a value that does not parse is reported
                    // as null.
                    Err(e) => cv.errors.push(e),
                }
                cv
            })
            .collect()
    }

    /// Parses `props` into typed values, failing on the first invalid or missing key
    /// ([`ConnectError::Config`] naming the key).
    pub fn parse(&self, props: &Props) -> ConnectResult<HashMap<String, Parsed>> {
        let mut out = HashMap::new();
        for cv in self.validate(props) {
            if let Some(e) = cv.errors.first() {
                return Err(ConnectError::config(e.clone()));
            }
            let key = self.key(&cv.name).expect("validated key is defined");
            let raw = props
                .get(&key.name)
                .map(String::as_str)
                .or(key.default.as_ref().and_then(|d| d.as_deref()));
            let parsed = Self::parse_value(key, raw).map_err(ConnectError::config)?;
            out.insert(cv.name, parsed);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def() -> ConfigDef {
        ConfigDef::new()
            .define(
                "topic",
                ConfigType::String,
                None,
                Some(Validator::NonEmptyString),
                Importance::High,
                "t",
            )
            .define(
                "batch.size",
                ConfigType::Int,
                Some(Some("2000")),
                Some(Validator::Range {
                    min: Some(1.0),
                    max: None,
                }),
                Importance::Low,
                "b",
            )
            .define(
                "topics",
                ConfigType::List,
                Some(Some("")),
                None,
                Importance::High,
                "l",
            )
    }

    #[test]
    fn missing_required_key_is_reported_with_connects_message() {
        let vals = def().validate(&Props::new());
        assert_eq!(
            vals[0].errors,
            vec![
                "Missing required configuration \"topic\" which has no default value.".to_string()
            ]
        );
        assert!(vals[1].errors.is_empty());
        assert_eq!(vals[1].value.as_deref(), Some("2000"));
    }

    #[test]
    fn type_and_range_errors_name_the_key() {
        let mut p = Props::new();
        p.insert("topic".into(), "t".into());
        p.insert("batch.size".into(), "abc".into());
        let vals = def().validate(&p);
        assert_eq!(
            vals[1].errors,
            vec![
                "Invalid value abc for configuration batch.size: Not a number of type INT"
                    .to_string()
            ]
        );
        assert_eq!(vals[1].value, None);
        p.insert("batch.size".into(), "0".into());
        let vals = def().validate(&p);
        assert_eq!(
            vals[1].errors,
            vec![
                "Invalid value 0 for configuration batch.size: Value must be at least 1"
                    .to_string()
            ]
        );
        let err = def().parse(&p).unwrap_err();
        assert!(err.to_string().contains("batch.size"));
    }

    #[test]
    fn lists_are_split_and_trimmed() {
        let mut p = Props::new();
        p.insert("topic".into(), "t".into());
        p.insert("topics".into(), " a, b ,c".into());
        let parsed = def().parse(&p).unwrap();
        assert_eq!(
            parsed["topics"],
            Parsed::List(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(parsed["batch.size"], Parsed::Int(2000));
    }
}
