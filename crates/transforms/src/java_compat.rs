//! Java behaviours the transformations reproduce: `String.split`, the casts Connect's code
//! relies on, and the number parsing and formatting of `java.lang` / `java.math`.

use tributary_api::data::Value;
use tributary_api::{ConnectError, ConnectResult};

/// Java's `s.split(sep)` for a single literal separator character: the parts between
/// separators, with trailing empty parts removed (an empty input gives one empty part).
pub(crate) fn java_split(s: &str, sep: char) -> Vec<&str> {
    if s.is_empty() {
        return vec![""];
    }
    let mut parts: Vec<&str> = s.split(sep).collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    parts
}

/// The key of a schemaless map entry as the `String` Connect's code casts it to; another key
/// type fails as Java's cast does.
pub(crate) fn string_key(key: &Value) -> ConnectResult<&str> {
    match key {
        Value::String(s) => Ok(s),
        other => Err(ConnectError::data(format!(
            "class {} cannot be cast to class java.lang.String",
            other.kind_name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_drops_trailing_empty_parts_like_java() {
        assert_eq!(java_split("a:b", ':'), ["a", "b"]);
        assert_eq!(java_split("a:b:", ':'), ["a", "b"]);
        assert_eq!(java_split(":b", ':'), ["", "b"]);
        assert_eq!(java_split("a::", ':'), ["a"]);
        assert!(java_split("::", ':').is_empty());
        assert_eq!(java_split("", ':'), [""]);
        assert_eq!(java_split("abc", ':'), ["abc"]);
    }

    #[test]
    fn only_string_keys_name_fields() {
        assert_eq!(string_key(&Value::from("a")), Ok("a"));
        assert_eq!(
            string_key(&Value::Int32(1)).unwrap_err().to_string(),
            "class java.lang.Integer cannot be cast to class java.lang.String"
        );
    }
}
