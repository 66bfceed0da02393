//! Contexts of the admin CLI (kcctl's word): named clusters (worker URLs, basic auth, a CA
//! file) in a JSON file, `$TRIBUTARY_CONTEXTS` or `~/.tributary/contexts.json`, one of them
//! current. `tributary config set-context|use-context|get-contexts|current-context` edit it.
//!
//! The file: `{"current": "prod", "contexts": {"prod": {"urls": ["https://…"], "user":
//! "name:password", "cacert": "/path/ca.pem"}}}`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One cluster.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Context {
    /// Worker REST URLs, tried in order.
    pub urls: Vec<String>,
    /// Basic auth, `name:password`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// PEM file of the CA certificates trusted for `https://` URLs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cacert: Option<PathBuf>,
}

/// The contexts file.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Contexts {
    /// The context used when none is named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<String>,
    /// The contexts by name.
    #[serde(default)]
    pub contexts: BTreeMap<String, Context>,
}

/// The contexts file's path: `$TRIBUTARY_CONTEXTS`, else `$HOME/.tributary/contexts.json`.
pub fn path() -> PathBuf {
    if let Some(p) = std::env::var_os("TRIBUTARY_CONTEXTS").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".tributary").join("contexts.json")
}

impl Contexts {
    /// Reads the file; a missing file is no contexts. Errors name the file.
    pub fn load() -> Result<Contexts, String> {
        let p = path();
        match std::fs::read_to_string(&p) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| format!("{}: not a contexts file: {e}", p.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Contexts::default()),
            Err(e) => Err(format!("{}: cannot read: {e}", p.display())),
        }
    }

    /// Writes the file (its directory created when missing).
    pub fn save(&self) -> Result<(), String> {
        let p = path();
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&p, text + "\n").map_err(|e| format!("{}: cannot write: {e}", p.display()))
    }

    /// The context named `name`, else the current one; `None` when neither is set. Errors: a
    /// named or current context that the file lacks.
    pub fn resolve(&self, name: Option<&str>) -> Result<Option<&Context>, String> {
        let Some(wanted) = name.or(self.current.as_deref()) else {
            return Ok(None);
        };
        self.contexts.get(wanted).map(Some).ok_or_else(|| {
            format!(
                "no context named {wanted:?} in {} (tributary config get-contexts lists them)",
                path().display()
            )
        })
    }
}
