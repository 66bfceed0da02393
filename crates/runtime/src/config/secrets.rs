//! What config providers resolved on this worker, kept so that no answer and no log line shows
//! it (issue #42): every value a `${provider:path:key}` reference resolved to
//! ([`super::providers::ConfigProviders::transform`] registers it here) is replaced, wherever
//! it appears in free text (status traces, error messages, log lines, offsets, topic names),
//! by the reference as written.
//!
//! Connect 4.4.0 keeps resolved values out of validation answers (apache/kafka PR 23163); traces
//! and logs it leaves to the plugins. Here the worker does it for them: a plugin that prints
//! the file name or password it was given prints the reference instead.
//!
//! Values shorter than [`MIN_LEN`] characters, and `true`, `false` and `null`, are not
//! redacted from free text: replacing every `3` or `true` would garble traces and JSON, and
//! such values are settings, not secrets. The structured answers (validation results, the 400
//! of a create or update) never print a resolved value, whatever its length.

use std::borrow::Cow;
use std::sync::RwLock;

/// The shortest resolved value redacted from free text (characters).
pub const MIN_LEN: usize = 4;

/// At most this many values are kept; beyond it the oldest go (a worker resolving a new
/// value for every request, e.g. rotated secrets read through validation, stays bounded).
const MAX_ENTRIES: usize = 16_384;

/// The registered values, each with the reference it stands for, longest value first (so a
/// value that contains another is replaced whole).
static REGISTRY: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

/// Whether `value` is worth redacting from free text.
fn redactable(value: &str) -> bool {
    value.chars().count() >= MIN_LEN && !matches!(value, "true" | "false" | "null")
}

/// Records that `reference` (`${file:/etc/db.properties:password}`) resolved to `value` on this
/// worker. Values that are not [`redactable`] are ignored.
pub fn register(value: &str, reference: &str) {
    if !redactable(value) || value == reference {
        return;
    }
    if REGISTRY
        .read()
        .unwrap()
        .iter()
        .any(|(v, r)| v == value && r == reference)
    {
        return;
    }
    let mut registry = REGISTRY.write().unwrap();
    if registry.iter().any(|(v, _)| v == value) {
        return;
    }
    if registry.len() >= MAX_ENTRIES {
        registry.remove(0);
    }
    registry.push((value.to_string(), reference.to_string()));
    registry.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
}

/// Hashes of the connector configs [`learn_from`] resolved already.
static LEARNT: RwLock<Vec<u64>> = RwLock::new(Vec::new());

/// Resolves `config` (a connector's stored config) once, for its values to be registered: a
/// worker that answers for a connector it does not run (its status, offsets, topics) then
/// redacts what the connector's owner resolved. Failures are ignored (the owner reports them);
/// a config seen before is not resolved again.
pub fn learn_from(
    providers: &super::providers::ConfigProviders,
    connector: &str,
    config: &std::collections::HashMap<String, String>,
) {
    use std::hash::{Hash, Hasher};
    if providers.is_empty() || !config.values().any(|v| super::providers::has_variables(v)) {
        return;
    }
    let mut sorted: Vec<(&String, &String)> = config.iter().collect();
    sorted.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (connector, sorted).hash(&mut h);
    let key = h.finish();
    if LEARNT.read().unwrap().contains(&key) {
        return;
    }
    if let Err(e) = providers.transform(&format!("connector {connector}"), config) {
        tracing::debug!("cannot learn what connector {connector}'s config resolves to: {e}");
    }
    let mut learnt = LEARNT.write().unwrap();
    if learnt.len() >= MAX_ENTRIES {
        learnt.remove(0);
    }
    learnt.push(key);
}

/// `text` with every registered value replaced by its reference; borrowed when nothing was.
pub fn redact(text: &str) -> Cow<'_, str> {
    let registry = REGISTRY.read().unwrap();
    let mut out = Cow::Borrowed(text);
    for (value, reference) in registry.iter() {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), reference));
        }
    }
    out
}

/// [`redact`] over an optional owned string (a status trace).
pub fn redact_owned(text: String) -> String {
    match redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(o) => o,
    }
}

/// Every string in `value` (object keys included) redacted in place.
pub fn redact_json(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(s) => {
            if let Cow::Owned(o) = redact(s) {
                *s = o;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(redact_json),
        serde_json::Value::Object(map) => {
            let redacted_keys = map.keys().any(|k| matches!(redact(k), Cow::Owned(_)));
            if redacted_keys {
                let old = std::mem::take(map);
                for (k, mut v) in old {
                    redact_json(&mut v);
                    map.insert(redact(&k).into_owned(), v);
                }
            } else {
                map.values_mut().for_each(redact_json);
            }
        }
        _ => {}
    }
}

/// A writer that redacts what passes through it: the log output (`tracing`'s formatter writes
/// each event whole, so a value is never split between two writes).
pub struct RedactingWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => match redact(text) {
                Cow::Borrowed(_) => self.0.write_all(buf),
                Cow::Owned(o) => self.0.write_all(o.as_bytes()),
            },
            Err(_) => self.0.write_all(buf),
        }?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_values_are_replaced_by_their_reference_everywhere() {
        register("Secret-a91c", "${file:/s.properties:a}");
        register("Secret-a91c-longer", "${env:LONGER}");
        register("true", "${env:FLAG}");
        register("abc", "${env:SHORT}");
        assert_eq!(
            redact("Couldn't open '/data/Secret-a91c' nor Secret-a91c-longer: true abc"),
            "Couldn't open '/data/${file:/s.properties:a}' nor ${env:LONGER}: true abc"
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        let mut v = serde_json::json!({"filename": "/x/Secret-a91c", "n": 3, "Secret-a91c": [true, "Secret-a91c"]});
        redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"filename": "/x/${file:/s.properties:a}", "n": 3, "${file:/s.properties:a}": [true, "${file:/s.properties:a}"]})
        );
        let mut out = Vec::new();
        std::io::Write::write_all(
            &mut RedactingWriter(&mut out),
            b"INFO opening Secret-a91c\n",
        )
        .unwrap();
        assert_eq!(out, b"INFO opening ${file:/s.properties:a}\n");
    }
}
