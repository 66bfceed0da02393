//! Field paths into structs and maps (KIP-821): the `field.syntax.version` setting and the
//! single-field path of Connect's `org.apache.kafka.connect.transforms.field` package.
//!
//! With `V1` (the default) a path is one field name at the top level, whatever it contains.
//! With `V2` a path walks nested structs or maps: names are separated by dots, a name holding
//! dots is wrapped in backticks (`` `a.b`.c ``), and a backtick before a dot inside such a
//! name is escaped with a backslash.

use tributary_api::config::{ConfigDef, ConfigType, Importance, Validator};
use tributary_api::data::{Field, Schema, SchemaType, Struct, Value};
use tributary_api::{ConnectError, ConnectResult};

use crate::util::{field_value, map_get, require_map_or_null, require_struct_or_null};

/// The setting choosing the path syntax.
pub const FIELD_SYNTAX_VERSION: &str = "field.syntax.version";

/// How field paths are read (Connect's `FieldSyntaxVersion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldSyntaxVersion {
    /// The path is a single top-level field name.
    #[default]
    V1,
    /// Dotted paths into nested structs and maps, with backtick-quoted names.
    V2,
}

impl FieldSyntaxVersion {
    /// Adds the `field.syntax.version` key (STRING, default `V1`, `V1` or `V2` in any case) to
    /// a transformation's settings, as Connect appends it.
    pub fn append_config_to(def: ConfigDef) -> ConfigDef {
        def.define(
            FIELD_SYNTAX_VERSION,
            ConfigType::String,
            Some(Some("V1")),
            Some(Validator::OneOfIgnoreCase(vec!["V1".into(), "V2".into()])),
            Importance::High,
            "Syntax of field paths. V1: a path names one field at the top level of the struct or \
             map. V2: a path may reach nested fields, with the names separated by dots; a name \
             that contains dots is wrapped in backticks, e.g. \"`foo.bar`.baz\" is field baz \
             inside field \"foo.bar\".",
        )
    }

    /// The version named by a (validated) setting value, in any case.
    pub fn parse(s: &str) -> ConnectResult<FieldSyntaxVersion> {
        match s.to_ascii_uppercase().as_str() {
            "V1" => Ok(FieldSyntaxVersion::V1),
            "V2" => Ok(FieldSyntaxVersion::V2),
            _ => Err(ConnectError::config(format!(
                "Invalid value {s} for configuration {FIELD_SYNTAX_VERSION}: Unrecognized field syntax version"
            ))),
        }
    }
}

/// A path to one field, as a list of names from the top level down (Connect's
/// `SingleFieldPath`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleFieldPath {
    steps: Vec<String>,
}

impl SingleFieldPath {
    /// Reads `path` with the given syntax. A `V2` path with an unclosed backtick fails with
    /// Connect's configuration error.
    pub fn new(path: &str, version: FieldSyntaxVersion) -> ConnectResult<SingleFieldPath> {
        let steps = match version {
            FieldSyntaxVersion::V1 => vec![path.to_string()],
            FieldSyntaxVersion::V2 => parse_v2(path)?,
        };
        Ok(SingleFieldPath { steps })
    }

    /// The names along the path.
    pub fn steps(&self) -> &[String] {
        &self.steps
    }

    /// The names before the last, and the last; Connect fails on an empty path when used.
    fn split(&self) -> ConnectResult<(&[String], &str)> {
        match self.steps.split_last() {
            Some((last, parents)) => Ok((parents, last)),
            None => Err(ConnectError::data("fromIndex(0) > toIndex(-1)")),
        }
    }

    /// The field at this path in a struct schema, `None` when some name is missing. Walking
    /// into a schema that is not a struct fails as Connect's `Schema.field` does.
    pub fn field_from<'a>(&self, schema: &'a Schema) -> ConnectResult<Option<&'a Field>> {
        let (parents, last) = self.split()?;
        let mut current = schema;
        for name in parents {
            match struct_field(current, name)? {
                Some(f) => current = &f.schema,
                None => return Ok(None),
            }
        }
        struct_field(current, last)
    }

    /// The value at this path in a struct: null when a name is missing or a struct on the way
    /// is null. The last field's default replaces null when `with_default`; structs on the way
    /// always fall back to their defaults.
    pub fn value_from_struct(&self, s: &Struct, with_default: bool) -> ConnectResult<Value> {
        let (parents, last) = self.split()?;
        let mut current = s.clone();
        for name in parents {
            let Some(field) = current.schema().field(name) else {
                return Ok(Value::Null);
            };
            let sub = field_value(&current, field, true);
            match require_struct_or_null(&sub, "nested field access")? {
                Some(next) => current = next.clone(),
                None => return Ok(Value::Null),
            }
        }
        Ok(match current.schema().field(last) {
            Some(field) => field_value(&current, field, with_default),
            None => Value::Null,
        })
    }

    /// The value at this path in a schemaless map: null when a key is missing or a map on the
    /// way is null; a non-map on the way fails with Connect's `Requirements` message.
    pub fn value_from_map(&self, entries: &[(Value, Value)]) -> ConnectResult<Value> {
        let (parents, last) = self.split()?;
        let mut current = entries;
        for name in parents {
            let sub = map_get(current, name).unwrap_or(&Value::Null);
            match require_map_or_null(sub, "nested field access")? {
                Some(next) => current = next,
                None => return Ok(Value::Null),
            }
        }
        Ok(map_get(current, last).cloned().unwrap_or(Value::Null))
    }
}

/// `Schema.field(name)`, which fails on a schema that is not a struct.
fn struct_field<'a>(schema: &'a Schema, name: &str) -> ConnectResult<Option<&'a Field>> {
    if schema.schema_type != SchemaType::Struct {
        return Err(ConnectError::data(
            "Cannot look up fields on non-struct type",
        ));
    }
    Ok(schema.field(name))
}

/// Splits a `V2` path into names.
fn parse_v2(path: &str) -> ConnectResult<Vec<String>> {
    let chars: Vec<char> = path.chars().collect();
    let len = chars.len();
    let text = |from: usize, to: usize| chars[from..to].iter().collect::<String>();
    let find = |c: char, from: usize| (from..len).find(|&i| chars[i] == c);
    let unclosed = |at: usize| {
        // Connect counts positions in UTF-16 units.
        let position: usize = chars[..at].iter().map(|c| c.len_utf16()).sum();
        ConnectError::config(format!(
            "Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at position {position} to escape it"
        ))
    };
    let mut steps = Vec::new();
    let mut i = 0;
    while i < len {
        if chars[i] != '`' {
            // A plain name runs to the next dot.
            match find('.', i) {
                Some(dot) => {
                    steps.push(text(i, dot));
                    i = dot + 1;
                }
                None => {
                    steps.push(text(i, len));
                    i = len;
                }
            }
            continue;
        }
        // A quoted name ends at a backtick that ends the path or precedes a dot, unless a
        // backslash escapes it.
        let opening = i;
        let mut name = String::new();
        let mut start = i + 1;
        let mut from = i + 1;
        loop {
            let Some(tick) = find('`', from) else {
                return Err(unclosed(opening));
            };
            let escaped = chars[tick - 1] == '\\';
            if tick + 1 >= len {
                if escaped {
                    return Err(unclosed(opening));
                }
                name.push_str(&text(start, tick));
                steps.push(std::mem::take(&mut name));
                i = tick + 1;
                break;
            }
            if chars[tick + 1] != '.' {
                from = tick + 1;
                continue;
            }
            if escaped {
                name.push_str(&text(start, tick - 1));
                name.push('`');
                start = tick + 1;
                from = tick + 1;
                continue;
            }
            name.push_str(&text(start, tick));
            steps.push(std::mem::take(&mut name));
            i = tick + 2;
            break;
        }
    }
    if path.ends_with('.') {
        steps.push(String::new());
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::data::SchemaBuilder;

    fn v2(path: &str) -> Vec<String> {
        SingleFieldPath::new(path, FieldSyntaxVersion::V2)
            .unwrap()
            .steps
    }

    #[test]
    fn v1_paths_are_one_name() {
        for p in ["foo.bar.baz", "foo`bar`", "foo.`bar.baz`"] {
            let path = SingleFieldPath::new(p, FieldSyntaxVersion::V1).unwrap();
            assert_eq!(path.steps(), [p]);
        }
    }

    #[test]
    fn v2_paths_split_on_dots_outside_backticks() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("..", &["", "", ""]),
            ("foo..", &["foo", "", ""]),
            (".bar.", &["", "bar", ""]),
            ("..baz", &["", "", "baz"]),
            ("foobarbaz", &["foobarbaz"]),
            ("foo.bar.baz", &["foo", "bar", "baz"]),
            ("foo`bar`baz", &["foo`bar`baz"]),
            ("`foo.bar.baz`", &["foo.bar.baz"]),
            ("foo.`bar.baz`", &["foo", "bar.baz"]),
            ("`foo.bar`.baz", &["foo.bar", "baz"]),
            ("foo.`bar`.baz", &["foo", "bar", "baz"]),
            ("foo.``bar.baz`", &["foo", "`bar.baz"]),
            ("foo.`bar.baz``", &["foo", "bar.baz`"]),
            ("foo.`ba`r.baz`", &["foo", "ba`r.baz"]),
            ("foo.ba`r.baz", &["foo", "ba`r", "baz"]),
            ("foo.``bar``.baz", &["foo", "`bar`", "baz"]),
            ("``foo.bar.baz``", &["`foo.bar.baz`"]),
            ("foo.`bar\\`.baz`", &["foo", "bar`.baz"]),
            ("foo.`bar.`baz`", &["foo", "bar.`baz"]),
            ("foo.`bar\\`.`baz`", &["foo", "bar`.`baz"]),
            ("foo.`bar\\\\`.\\`baz`", &["foo", "bar\\`.\\`baz"]),
        ];
        for (path, want) in cases {
            assert_eq!(v2(path), *want, "{path}");
        }
    }

    #[test]
    fn v2_paths_with_an_open_backtick_fail() {
        for (path, at) in [
            ("`foo.bar.baz", 0),
            ("foo.`bar.baz", 4),
            ("foo.bar.`baz", 8),
            ("foo.bar.`baz\\`", 8),
        ] {
            let err = SingleFieldPath::new(path, FieldSyntaxVersion::V2).unwrap_err();
            assert_eq!(
                err,
                ConnectError::config(format!(
                    "Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick at position {at} to escape it"
                ))
            );
        }
    }

    #[test]
    fn nested_lookups() {
        let inner = SchemaBuilder::struct_()
            .field("foo", Schema::int32_schema())
            .unwrap()
            .build();
        let outer = SchemaBuilder::struct_()
            .field("magic", inner.clone())
            .unwrap()
            .field("n", Schema::int32_schema())
            .unwrap()
            .build();
        let path = SingleFieldPath::new("magic.foo", FieldSyntaxVersion::V2).unwrap();
        assert_eq!(
            path.field_from(&outer).unwrap().unwrap().schema,
            Schema::int32_schema()
        );
        let missing = SingleFieldPath::new("magic.bar", FieldSyntaxVersion::V2).unwrap();
        assert_eq!(missing.field_from(&outer).unwrap(), None);
        let through_int = SingleFieldPath::new("n.x", FieldSyntaxVersion::V2).unwrap();
        assert_eq!(
            through_int.field_from(&outer).unwrap_err().to_string(),
            "Cannot look up fields on non-struct type"
        );
        let s = Struct::new(outer)
            .unwrap()
            .put(
                "magic",
                Value::Struct(Struct::new(inner).unwrap().put("foo", 42).unwrap()),
            )
            .unwrap()
            .put("n", 1)
            .unwrap();
        assert_eq!(path.value_from_struct(&s, true).unwrap(), Value::Int32(42));
        assert_eq!(missing.value_from_struct(&s, true).unwrap(), Value::Null);
        let m = vec![(
            Value::from("magic"),
            Value::Map(vec![(Value::from("foo"), Value::Int32(42))]),
        )];
        assert_eq!(path.value_from_map(&m).unwrap(), Value::Int32(42));
        assert_eq!(missing.value_from_map(&m).unwrap(), Value::Null);
        let empty = SingleFieldPath::new("", FieldSyntaxVersion::V2).unwrap();
        assert!(empty.value_from_map(&m).is_err());
    }
}
