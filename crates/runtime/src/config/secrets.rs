//! What config providers resolved on this worker, kept so that no answer and no log line shows
//! it (issue #42): a value a `${provider:path:key}` reference resolved to is replaced, wherever
//! it appears in free text, by the reference as written.
//!
//! Two reaches, so that redaction cannot be used as an oracle (a caller who sends a guess and
//! sees it come back as a reference would learn the secret):
//! - **a connector's own values** ([`Redactions`] recorded by [`record`] when its config or its
//!   tasks' configs are resolved, or by [`learn_from`] on a worker that answers for a connector
//!   it does not run) redact what is derived from that connector: its status traces (before
//!   they are written to the status topic), offsets, topics, task configs, `/metrics` samples;
//!   a validation answer is redacted with the values of its own request only;
//! - **every value** resolved on the worker redacts the log ([`RedactingWriter`]), which no
//!   REST caller reads; there the escaped forms (`\"`, `\n`, as `{:?}` and JSON write them) are
//!   redacted too.
//!
//! Connect 4.4.0 keeps resolved values out of validation answers (apache/kafka PR 23163); traces
//! and logs it leaves to the plugins. Here the worker does it for them.
//!
//! Values shorter than [`MIN_LEN`] characters, and `true`, `false` and `null`, are not
//! redacted from free text: replacing every `3` or `true` would garble traces and JSON, and
//! such values are settings, not secrets. The structured answers (validation results, the 400
//! of a create or update) never print a resolved value, whatever its length. A list value
//! (`a,b`) is redacted whole and item by item.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::RwLock;

/// The shortest resolved value redacted from free text (characters).
pub const MIN_LEN: usize = 4;

/// At most this many values are kept per reach; beyond it the oldest go.
const MAX_ENTRIES: usize = 16_384;

/// Whether `value` is worth redacting from free text.
fn redactable(value: &str) -> bool {
    value.chars().count() >= MIN_LEN && !matches!(value, "true" | "false" | "null")
}

/// Values and the references they stand for, longest value first (so that a value containing
/// another is replaced whole).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Redactions {
    pairs: Vec<(String, String)>,
}

impl Redactions {
    /// Adds that `reference` resolved to `value`, and each item of a list value. Values that are
    /// not [`redactable`] are left out.
    pub fn add(&mut self, value: &str, reference: &str) {
        self.insert(value, reference);
        if value.contains(',') {
            for item in value.split(',').map(str::trim) {
                self.insert(item, reference);
            }
        }
    }

    fn insert(&mut self, value: &str, reference: &str) {
        if !redactable(value) || value == reference || self.pairs.iter().any(|(v, _)| v == value) {
            return;
        }
        if self.pairs.len() >= MAX_ENTRIES {
            self.pairs.remove(0);
        }
        self.pairs.push((value.to_string(), reference.to_string()));
        self.pairs
            .sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
    }

    /// Adds every pair of `other`.
    pub fn extend(&mut self, other: &Redactions) {
        for (v, r) in &other.pairs {
            self.insert(v, r);
        }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `text` with every value replaced by its reference; borrowed when nothing was.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (value, reference) in &self.pairs {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), reference));
            }
        }
        out
    }

    /// Every string in `value` (object keys included) redacted in place.
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        if self.pairs.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(o) = self.redact(s) {
                    *s = o;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|i| self.redact_json(i)),
            serde_json::Value::Object(map) => {
                let old = std::mem::take(map);
                for (k, mut v) in old {
                    self.redact_json(&mut v);
                    map.insert(self.redact(&k).into_owned(), v);
                }
            }
            _ => {}
        }
    }
}

/// Each connector's values, by connector name.
static BY_CONNECTOR: RwLock<Option<HashMap<String, Redactions>>> = RwLock::new(None);
/// Every value resolved on this worker, with its escaped forms: for the log.
static ALL: RwLock<Option<Redactions>> = RwLock::new(None);

/// Records values resolved on this worker: for the log always, and as connector `connector`'s
/// own when given (its config or a task's).
pub fn record(connector: Option<&str>, resolved: &Redactions) {
    if resolved.is_empty() {
        return;
    }
    {
        let mut all = ALL.write().unwrap();
        let all = all.get_or_insert_with(Redactions::default);
        for (value, reference) in &resolved.pairs {
            all.insert(value, reference);
            // As `{:?}` and JSON escape it.
            let debug = value.escape_debug().to_string();
            all.insert(&debug, reference);
            if let Ok(json) = serde_json::to_string(value) {
                all.insert(&json[1..json.len() - 1], reference);
            }
        }
    }
    if let Some(c) = connector {
        BY_CONNECTOR
            .write()
            .unwrap()
            .get_or_insert_with(HashMap::new)
            .entry(c.to_string())
            .or_default()
            .extend(resolved);
    }
}

/// Connector `connector`'s own values (empty when none were recorded).
pub fn of_connector(connector: &str) -> Redactions {
    BY_CONNECTOR
        .read()
        .unwrap()
        .as_ref()
        .and_then(|m| m.get(connector).cloned())
        .unwrap_or_default()
}

/// [`Redactions::redact`] with connector `connector`'s values, owned.
pub fn redact_for(connector: &str, text: String) -> String {
    match of_connector(connector).redact(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(o) => o,
    }
}

/// Hashes of the connector configs [`learn_from`] resolved already.
static LEARNT: RwLock<Vec<u64>> = RwLock::new(Vec::new());

/// Resolves `config` (connector `connector`'s stored config) once, for its values to be
/// recorded as the connector's: a worker that answers for a connector it does not run (its
/// status, offsets, topics) then redacts what the connector's owner resolved. Failures are
/// logged at DEBUG (the owner reports them); a config seen before is not resolved again.
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
    match providers.resolve(&format!("connector {connector}"), config) {
        Ok((_, found)) => record(Some(connector), &found),
        Err(e) => {
            tracing::debug!("cannot learn what connector {connector}'s config resolves to: {e}")
        }
    }
    let mut learnt = LEARNT.write().unwrap();
    if learnt.len() >= MAX_ENTRIES {
        learnt.remove(0);
    }
    learnt.push(key);
}

/// `text` with every value resolved on this worker replaced: for the log only (answers use a
/// connector's own values, [`of_connector`]).
fn redact_log(text: &str) -> Cow<'_, str> {
    match ALL.read().unwrap().as_ref() {
        Some(all) => Cow::Owned(all.redact(text).into_owned()),
        None => Cow::Borrowed(text),
    }
}

/// A writer that redacts what passes through it: the log output (`tracing`'s formatter writes
/// each event whole, so a value is never split between two writes).
pub struct RedactingWriter<W>(pub W);

impl<W: std::io::Write> std::io::Write for RedactingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self.0.write_all(redact_log(text).as_bytes()),
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
    fn values_are_replaced_by_their_reference_whole_and_item_by_item() {
        let mut r = Redactions::default();
        r.add("Secret-a91c", "${file:/s.properties:a}");
        r.add("Secret-a91c-longer", "${env:LONGER}");
        r.add("true", "${env:FLAG}");
        r.add("abc", "${env:SHORT}");
        r.add("Part-one,Part-two", "${env:LIST}");
        assert_eq!(
            r.redact("Couldn't open '/data/Secret-a91c' nor Secret-a91c-longer: true abc"),
            "Couldn't open '/data/${file:/s.properties:a}' nor ${env:LONGER}: true abc"
        );
        assert_eq!(
            r.redact("transforms.Part-two.type"),
            "transforms.${env:LIST}.type"
        );
        assert!(matches!(r.redact("nothing here"), Cow::Borrowed(_)));
        let mut v = serde_json::json!({"filename": "/x/Secret-a91c", "n": 3, "Secret-a91c": [true, "Secret-a91c"]});
        r.redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"filename": "/x/${file:/s.properties:a}", "n": 3, "${file:/s.properties:a}": [true, "${file:/s.properties:a}"]})
        );
    }

    #[test]
    fn a_connectors_values_redact_its_answers_and_every_value_the_log() {
        let mut mine = Redactions::default();
        mine.add("Mine-\"quoted\"\n2", "${file:/m:k}");
        record(Some("secrets-test-a"), &mine);
        // Another connector's answers are not redacted with a's values: a caller cannot learn
        // a's secret by sending it in b's name.
        assert_eq!(
            redact_for("secrets-test-b", "Mine-\"quoted\"\n2".into()),
            "Mine-\"quoted\"\n2"
        );
        assert_eq!(
            redact_for("secrets-test-a", "x Mine-\"quoted\"\n2".into()),
            "x ${file:/m:k}"
        );
        // The log, also as `{:?}` and JSON escape it.
        let mut out = Vec::new();
        let line = format!(
            "raw Mine-\"quoted\"\n2 debug {:?} json {}\n",
            "Mine-\"quoted\"\n2",
            serde_json::to_string("Mine-\"quoted\"\n2").unwrap()
        );
        std::io::Write::write_all(&mut RedactingWriter(&mut out), line.as_bytes()).unwrap();
        let logged = String::from_utf8(out).unwrap();
        assert!(!logged.contains("Mine-"), "{logged}");
    }
}
