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
        if let Some(cfg) = obj.get("config") {
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
            let cfg =
                json_string_map(&v).map_err(|e| ConfigError(format!("{}: {e}", path.display())))?;
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

/// A JSON object of scalars as a string map (numbers and booleans become strings, as Jackson
/// coerces them for Connect's `Map<String,String>`); null values are dropped.
pub fn json_string_map(v: &serde_json::Value) -> Result<HashMap<String, String>, String> {
    let obj = v
        .as_object()
        .ok_or("expected a JSON object of string values")?;
    let mut out = HashMap::new();
    for (k, v) in obj {
        let s = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Bool(b) => b.to_string(),
            serde_json::Value::Null => continue,
            _ => return Err(format!("value of '{k}' must be a string")),
        };
        out.insert(k.clone(), s);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
