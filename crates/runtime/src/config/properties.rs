//! Reading Java `.properties` files (escapes, `\` continuations, `=`/`:`/space separators,
//! `#`/`!` comments) with the `java-properties` crate, and connector config files, which may
//! also be JSON as `connect-standalone` accepts since Kafka 3.5.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::ConfigError;

/// Reads a Java properties file into a map. Errors name the file (and line, for syntax errors).
pub fn load_properties(path: &Path) -> Result<HashMap<String, String>, ConfigError> {
    let file = File::open(path)
        .map_err(|e| ConfigError(format!("{}: cannot read file: {e}", path.display())))?;
    java_properties::read(BufReader::new(file)).map_err(|e| {
        ConfigError(format!(
            "{}: malformed properties file: {e}",
            path.display()
        ))
    })
}

/// Parses properties text (used by tests and by callers that already hold the text).
pub fn parse_properties(text: &str) -> Result<HashMap<String, String>, ConfigError> {
    java_properties::read(text.as_bytes())
        .map_err(|e| ConfigError(format!("malformed properties: {e}")))
}

/// A connector definition read from a file: its name and configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ConnectorFile {
    pub name: String,
    pub config: HashMap<String, String>,
    /// `initial_state` of a JSON file in `CreateConnectorRequest` form (KIP-980), if given.
    pub initial_state: Option<String>,
}

/// Reads a connector file as `connect-standalone` does: a `.json` file holds either
/// `{"name": …, "config": {…}, "initial_state"?: …}` or a flat config map; anything else is a
/// properties file. The name comes from `name` (required). Errors name the file and key.
pub fn load_connector_file(path: &Path) -> Result<ConnectorFile, ConfigError> {
    let is_json = path
        .extension()
        .map(|e| e.eq_ignore_ascii_case("json"))
        .unwrap_or(false);
    let (config, top_name, initial_state) = if is_json {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError(format!("{}: cannot read file: {e}", path.display())))?;
        let v: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| ConfigError(format!("{}: malformed JSON: {e}", path.display())))?;
        let obj = v
            .as_object()
            .ok_or_else(|| ConfigError(format!("{}: expected a JSON object", path.display())))?;
        if let Some(cfg) = json_member(&text, "config") {
            let cfg = json_string_map(cfg)
                .map_err(|e| ConfigError(format!("{}: key 'config': {e}", path.display())))?;
            let name = obj
                .get("name")
                .and_then(|n| n.as_str())
                .map(|s| s.trim().to_string());
            let initial = obj
                .get("initial_state")
                .and_then(|s| s.as_str())
                .map(str::to_string);
            (cfg, name, initial)
        } else {
            let cfg = json_string_map(&text)
                .map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
            (cfg, None, None)
        }
    } else {
        (load_properties(path)?, None, None)
    };
    let name = top_name
        .or_else(|| config.get("name").map(|s| s.trim().to_string()))
        .filter(|n| !n.is_empty())
        .ok_or_else(|| {
            ConfigError(format!(
                "{}: missing required key 'name' (the connector name)",
                path.display()
            ))
        })?;
    let mut config = config;
    if let Some(cfg_name) = config.get("name") {
        if cfg_name.trim() != name {
            return Err(ConfigError(format!(
                "{}: key 'name': connector name configuration ({cfg_name}) doesn't match connector name ({name})",
                path.display()
            )));
        }
    }
    config.insert("name".into(), name.clone());
    Ok(ConnectorFile {
        name,
        config,
        initial_state,
    })
}

/// One JSON value as Jackson reads it into a Java `String`.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonText {
    /// A string, or a number or boolean as written in the source (`1.50` and `1e5` stay so).
    Text(String),
    /// `null`.
    Null,
    /// An object or an array, which Jackson refuses: `"Object"` or `"Array"`.
    Structured(&'static str),
}

/// The members of the JSON object whose source text is `json`, read as Jackson fills a
/// `Map<String, String>` (see [`JsonText`]); a repeated key keeps its last value. `Ok(None)`
/// when `json` is valid JSON but not an object; `Err` when it is not JSON.
pub fn json_object_texts(json: &str) -> Result<Option<Vec<(String, JsonText)>>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(json)?;
    if !value.is_object() {
        return Ok(None);
    }
    let Members(members) = serde_json::from_str(json)?;
    // A repeated key keeps its last value, at its first place.
    let mut out: Vec<(String, JsonText)> = Vec::with_capacity(members.len());
    let mut places: HashMap<String, usize> = HashMap::with_capacity(members.len());
    for (k, raw) in members {
        let v = json_text(raw.get())?;
        match places.get(&k) {
            Some(&i) => out[i].1 = v,
            None => {
                places.insert(k.clone(), out.len());
                out.push((k, v));
            }
        }
    }
    Ok(Some(out))
}

/// An object's members in source order, each with its source text.
struct Members<'a>(Vec<(String, &'a serde_json::value::RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visitor<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut m: M,
            ) -> Result<Members<'a>, M::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry()? {
                    out.push(entry);
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

/// One JSON value (its source text, valid JSON) read as Jackson reads a `String`.
pub fn json_text(raw: &str) -> Result<JsonText, serde_json::Error> {
    let raw = raw.trim();
    Ok(match raw.as_bytes().first() {
        Some(b'"') => JsonText::Text(serde_json::from_str(raw)?),
        Some(b'{') => JsonText::Structured("Object"),
        Some(b'[') => JsonText::Structured("Array"),
        Some(b'n') => JsonText::Null,
        _ => JsonText::Text(raw.to_string()),
    })
}

/// The source text of member `key` of the JSON object `json`, if it has one.
pub fn json_member<'a>(json: &'a str, key: &str) -> Option<&'a str> {
    let members: HashMap<String, &serde_json::value::RawValue> = serde_json::from_str(json).ok()?;
    members.get(key).map(|raw| raw.get())
}

/// Why a JSON text is not a map of strings ([`json_string_map`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StringMapError {
    /// Not JSON, or not an object.
    #[error("expected a JSON object of string values")]
    NotAnObject,
    /// A member's value is an object or an array.
    #[error("value of '{0}' must be a string")]
    Structured(String),
}

/// A JSON object of scalars (source text `json`) as a string map, as Jackson coerces one for
/// Connect's `Map<String,String>`: numbers and booleans become their text as written; null
/// values are dropped.
pub fn json_string_map(json: &str) -> Result<HashMap<String, String>, StringMapError> {
    let members = json_object_texts(json)
        .ok()
        .flatten()
        .ok_or(StringMapError::NotAnObject)?;
    let mut out = HashMap::new();
    for (k, v) in members {
        match v {
            JsonText::Text(s) => {
                out.insert(k, s);
            }
            JsonText::Null => {}
            JsonText::Structured(_) => return Err(StringMapError::Structured(k)),
        }
    }
    Ok(out)
}

/// Every entry of `map` under `prefix`, with the prefix removed.
pub fn prefixed(map: &HashMap<String, String>, prefix: &str) -> HashMap<String, String> {
    map.iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|s| (s.to_string(), v.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_members_read_as_jackson_reads_a_string_map() {
        let json = r#"{"s":"a\"b","i":10,"f":1.50,"e":1e5,"big":100000000000000000000000,
                       "b":true,"n":null,"o":{"x":1},"a":[1],"s":"last"}"#;
        let members = json_object_texts(json).unwrap().unwrap();
        let text = |s: &str| JsonText::Text(s.to_string());
        assert_eq!(
            members,
            vec![
                ("s".to_string(), text("last")),
                ("i".to_string(), text("10")),
                ("f".to_string(), text("1.50")),
                ("e".to_string(), text("1e5")),
                ("big".to_string(), text("100000000000000000000000")),
                ("b".to_string(), text("true")),
                ("n".to_string(), JsonText::Null),
                ("o".to_string(), JsonText::Structured("Object")),
                ("a".to_string(), JsonText::Structured("Array")),
            ]
        );
        assert_eq!(json_object_texts("[1]").unwrap(), None);
        assert_eq!(json_object_texts("\"x\"").unwrap(), None);
        assert!(json_object_texts("{").is_err());
        assert_eq!(
            json_member(r#"{"config": {"k": 1.0} }"#, "config"),
            Some(r#"{"k": 1.0}"#)
        );
        assert_eq!(
            json_string_map(r#"{"k":1.0,"gone":null}"#).unwrap(),
            HashMap::from([("k".to_string(), "1.0".to_string())])
        );
    }

    #[test]
    fn java_properties_syntax_is_understood() {
        let text = "# comment\n! also comment\nkey1=value1\nkey2 : value2\nkey3 value3\nlong=a\\\n    b\\\n  c\nesc=tab\\there\\u0041\nempty=\n  spaced.key  =  v  \n";
        let p = parse_properties(text).unwrap();
        assert_eq!(p["key1"], "value1");
        assert_eq!(p["key2"], "value2");
        assert_eq!(p["key3"], "value3");
        assert_eq!(p["long"], "abc");
        assert_eq!(p["esc"], "tab\there A".replace(' ', ""));
        assert_eq!(p["empty"], "");
        assert_eq!(p["spaced.key"], "v  ");
        assert_eq!(p.len(), 7);
    }

    #[test]
    fn connector_files_in_both_json_shapes_and_properties() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.json");
        std::fs::write(
            &a,
            r#"{"name":"a","config":{"connector.class":"FileStreamSource","tasks.max":1}}"#,
        )
        .unwrap();
        let f = load_connector_file(&a).unwrap();
        assert_eq!(f.name, "a");
        assert_eq!(f.config["tasks.max"], "1");
        assert_eq!(f.config["name"], "a");
        let b = dir.path().join("b.json");
        std::fs::write(&b, r#"{"name":"b","connector.class":"FileStreamSink"}"#).unwrap();
        assert_eq!(load_connector_file(&b).unwrap().name, "b");
        let c = dir.path().join("c.properties");
        std::fs::write(&c, "connector.class=FileStreamSink\n").unwrap();
        let err = load_connector_file(&c).unwrap_err().to_string();
        assert!(
            err.contains("c.properties") && err.contains("'name'"),
            "{err}"
        );
        let d = dir.path().join("d.json");
        std::fs::write(&d, "{not json").unwrap();
        let err = load_connector_file(&d).unwrap_err().to_string();
        assert!(
            err.contains("d.json") && err.contains("malformed JSON"),
            "{err}"
        );
    }
}
