//! `ReplaceField`: keeps, drops and renames the fields of a struct or map.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::Arc;

use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::data::{Schema, SchemaBuilder, SchemaRef, Struct, Value};
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::java_compat::{java_split, string_key};
use crate::util::{
    copy_schema_basics, field_value, invalid_config, java_list, map_put, require_map,
    require_struct, PartMarker, Settings,
};

const EXCLUDE: &str = "exclude";
const INCLUDE: &str = "include";
const RENAMES: &str = "renames";
const REPLACE_NULL_WITH_DEFAULT: &str = "replace.null.with.default";

const PURPOSE: &str = "field replacement";

/// The first `renames` item that is not an `old:new` pair, split on `:` as Java's
/// `String.split` does (trailing empty parts dropped).
fn bad_rename(items: &[String]) -> Option<&String> {
    items.iter().find(|item| java_split(item, ':').len() != 2)
}

/// Reads `renames` the way Connect does: a later pair for the same old name wins.
fn parse_renames(items: &[String]) -> ConnectResult<Vec<(String, String)>> {
    if let Some(item) = bad_rename(items) {
        return Err(invalid_config(
            RENAMES,
            &java_list(items),
            &format!("Invalid rename mapping: {item}"),
        ));
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for item in items {
        let parts = java_split(item, ':');
        out.retain(|(f, _)| f != parts[0]);
        out.push((parts[0].to_string(), parts[1].to_string()));
    }
    Ok(out)
}

/// The settings of `ReplaceField` (Connect's `CONFIG_DEF`, same keys, types and defaults).
pub fn config_def() -> ConfigDef {
    let renames_check = Validator::Custom(Arc::new(|v: &Parsed| match v {
        Parsed::List(items) => match bad_rename(items) {
            Some(item) => Err(format!("Invalid rename mapping: {item}")),
            None => Ok(()),
        },
        _ => Ok(()),
    }));
    ConfigDef::new()
        .define(
            EXCLUDE,
            ConfigType::List,
            Some(Some("")),
            None,
            Importance::Medium,
            "Fields to drop; wins over include.",
        )
        .define(
            INCLUDE,
            ConfigType::List,
            Some(Some("")),
            None,
            Importance::Medium,
            "Fields to keep; when set, every other field is dropped.",
        )
        .define(
            RENAMES,
            ConfigType::List,
            Some(Some("")),
            Some(renames_check),
            Importance::Medium,
            "Renames as old:new pairs, e.g. <code>foo:bar,abc:xyz</code>.",
        )
        .define(
            REPLACE_NULL_WITH_DEFAULT,
            ConfigType::Boolean,
            Some(Some("true")),
            None,
            Importance::Medium,
            "When a kept field is null and its schema has a default, whether to copy the default (true) or keep null (false).",
        )
}

/// Filters and renames the fields of a struct (schema) or map (schemaless) key or value.
///
/// Follows `org.apache.kafka.connect.transforms.ReplaceField$Key` / `$Value`. Settings:
/// `exclude` (fields to drop, winning over `include`), `include` (when not empty, the only
/// fields kept), `renames` (`old:new` pairs) and `replace.null.with.default` (default true:
/// kept null fields take their schema's default). The struct keeps its schema's name, version,
/// doc and parameters, and the field order. As in Connect 4.x, the old `whitelist` /
/// `blacklist` keys are not read (they were removed in 4.0). A null key or value (tombstone)
/// passes unchanged.
pub struct ReplaceField<P: PartMarker> {
    exclude: HashSet<String>,
    include: HashSet<String>,
    renames: HashMap<String, String>,
    reverse_renames: HashMap<String, String>,
    replace_null_with_default: bool,
    part: PhantomData<P>,
}

impl<P: PartMarker> Default for ReplaceField<P> {
    fn default() -> Self {
        ReplaceField {
            exclude: HashSet::new(),
            include: HashSet::new(),
            renames: HashMap::new(),
            reverse_renames: HashMap::new(),
            replace_null_with_default: true,
            part: PhantomData,
        }
    }
}

impl<P: PartMarker> ReplaceField<P> {
    fn keeps(&self, name: &str) -> bool {
        !self.exclude.contains(name) && (self.include.is_empty() || self.include.contains(name))
    }

    fn renamed<'a>(&'a self, name: &'a str) -> &'a str {
        self.renames.get(name).map_or(name, String::as_str)
    }

    fn original<'a>(&'a self, name: &'a str) -> &'a str {
        self.reverse_renames.get(name).map_or(name, String::as_str)
    }

    fn updated_schema(&self, schema: &Schema) -> ConnectResult<SchemaRef> {
        let mut builder = copy_schema_basics(schema, SchemaBuilder::struct_());
        for field in &schema.fields {
            if self.keeps(&field.name) {
                builder = builder.field(self.renamed(&field.name), field.schema.clone())?;
            }
        }
        Ok(builder.build())
    }

    fn apply_with_schema(&self, value: &Struct) -> ConnectResult<(SchemaRef, Value)> {
        let schema = self.updated_schema(value.schema())?;
        let mut updated = Struct::new(schema.clone())?;
        for field in &schema.fields {
            // As in Connect, a kept field takes the value of the field renamed to its name.
            let source = self.original(&field.name);
            let source_field = value
                .schema()
                .field(source)
                .ok_or_else(|| ConnectError::data(format!("{source} is not a valid field name")))?;
            let v = field_value(value, source_field, self.replace_null_with_default);
            updated = updated.put(&field.name, v)?;
        }
        Ok((schema, Value::Struct(updated)))
    }

    fn apply_schemaless(&self, entries: &[(Value, Value)]) -> ConnectResult<Value> {
        let mut updated: Vec<(Value, Value)> = Vec::with_capacity(entries.len());
        for (k, v) in entries {
            let name = string_key(k)?;
            if self.keeps(name) {
                map_put(&mut updated, self.renamed(name), v.clone());
            }
        }
        Ok(Value::Map(updated))
    }
}

impl<P: PartMarker, R: ConnectRecord> Transformation<R> for ReplaceField<P> {
    fn configure(&mut self, props: &Props) -> ConnectResult<()> {
        let settings = Settings::parse_with(&config_def(), props, |key, v| match (key, v) {
            (RENAMES, Parsed::List(items)) => parse_renames(items).map(|_| ()),
            _ => Ok(()),
        })?;
        self.exclude = settings.list(EXCLUDE).iter().cloned().collect();
        self.include = settings.list(INCLUDE).iter().cloned().collect();
        let renames = parse_renames(settings.list(RENAMES))?;
        self.reverse_renames = renames
            .iter()
            .map(|(from, to)| (to.clone(), from.clone()))
            .collect();
        self.renames = renames.into_iter().collect();
        self.replace_null_with_default = settings.boolean(REPLACE_NULL_WITH_DEFAULT);
        Ok(())
    }

    fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let value = P::PART.value(&record);
        if value.is_null() {
            return Ok(Some(record));
        }
        let (schema, v) = if P::PART.schema(&record).is_none() {
            let entries = require_map(value, PURPOSE)?;
            (None, self.apply_schemaless(entries)?)
        } else {
            let (schema, v) = self.apply_with_schema(require_struct(value, PURPOSE)?)?;
            (Some(schema), v)
        };
        Ok(Some(P::PART.replace(record, schema, v)))
    }

    fn config(&self) -> ConfigDef {
        config_def()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::*;
    use crate::util::{KeyPart, ValuePart};

    fn schema() -> SchemaRef {
        SchemaBuilder::struct_()
            .name("n")
            .version(2)
            .doc("d")
            .field("dont", Schema::string_schema())
            .unwrap()
            .field("abc", Schema::int32_schema())
            .unwrap()
            .field("foo", Schema::boolean_schema())
            .unwrap()
            .field("etc", Schema::string_schema())
            .unwrap()
            .build()
    }

    fn value() -> Struct {
        Struct::new(schema())
            .unwrap()
            .put("dont", "whatever")
            .unwrap()
            .put("abc", 42)
            .unwrap()
            .put("foo", true)
            .unwrap()
            .put("etc", "etc")
            .unwrap()
    }

    #[test]
    fn structs_keep_included_fields_renamed_in_order() {
        let mut t: ReplaceField<ValuePart> =
            configured(&[("include", "foo,abc"), ("renames", "abc:xyz,foo:bar")]);
        let rec = source_value(Some(schema()), Value::Struct(value()));
        let out = apply(&mut t, rec).unwrap();
        let s = out.value_schema.clone().unwrap();
        assert_eq!(s.name.as_deref(), Some("n"));
        assert_eq!(s.version, Some(2));
        assert_eq!(s.doc.as_deref(), Some("d"));
        let names: Vec<_> = s.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["xyz", "bar"]);
        assert_eq!(s.fields[0].schema, Schema::int32_schema());
        let v = as_struct(&out.value);
        assert_eq!(v.get("xyz"), Some(&Value::Int32(42)));
        assert_eq!(v.get("bar"), Some(&Value::Boolean(true)));
    }

    #[test]
    fn exclude_wins_over_include() {
        let mut t: ReplaceField<ValuePart> =
            configured(&[("include", "abc,foo"), ("exclude", "foo")]);
        let rec = source_value(Some(schema()), Value::Struct(value()));
        let out = apply(&mut t, rec).unwrap();
        let names: Vec<_> = out
            .value_schema
            .as_ref()
            .unwrap()
            .fields
            .iter()
            .map(|f| f.name.clone())
            .collect();
        assert_eq!(names, ["abc"]);
    }

    #[test]
    fn maps_drop_and_rename_entries() {
        let mut t: ReplaceField<ValuePart> =
            configured(&[("exclude", "dont"), ("renames", "abc:xyz,foo:bar")]);
        let rec = source_value(
            None,
            map(&[
                ("dont", Value::from("whatever")),
                ("abc", Value::Int32(42)),
                ("foo", Value::Boolean(true)),
                ("etc", Value::from("etc")),
            ]),
        );
        let out = apply(&mut t, rec).unwrap();
        assert_eq!(
            out.value,
            map(&[
                ("xyz", Value::Int32(42)),
                ("bar", Value::Boolean(true)),
                ("etc", Value::from("etc")),
            ])
        );
        assert_eq!(out.value_schema, None);
    }

    #[test]
    fn tombstones_pass_unchanged() {
        let mut t: ReplaceField<ValuePart> = configured(&[("include", "abc")]);
        let rec = source_value(Some(schema()), Value::Null);
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);
        let rec = source_value(None, Value::Null);
        assert_eq!(apply(&mut t, rec.clone()).unwrap(), rec);
    }

    #[test]
    fn replace_null_with_default_on_key_and_value() {
        let schema = SchemaBuilder::struct_()
            .field(
                "abc",
                SchemaBuilder::int32()
                    .optional()
                    .default_value(Value::Int32(42))
                    .unwrap()
                    .build(),
            )
            .unwrap()
            .build();
        let v = Value::Struct(Struct::new(schema.clone()).unwrap());
        for (setting, want) in [("true", Value::Int32(42)), ("false", Value::Null)] {
            let p = [
                ("include", "abc"),
                ("renames", "abc:optional_with_default"),
                ("replace.null.with.default", setting),
            ];
            let mut t: ReplaceField<ValuePart> = configured(&p);
            let out = apply(&mut t, source_value(Some(schema.clone()), v.clone())).unwrap();
            assert_eq!(as_struct(&out.value).get_by_index(0), &want);
            let mut t: ReplaceField<KeyPart> = configured(&p);
            let out = apply(&mut t, source_key(Some(schema.clone()), v.clone())).unwrap();
            assert_eq!(
                out.key_schema.as_ref().unwrap().fields[0].name,
                "optional_with_default"
            );
            assert_eq!(as_struct(&out.key).get_by_index(0), &want);
            assert_eq!(out.value, Value::Null);
        }
    }

    #[test]
    fn removed_whitelist_and_blacklist_keys_are_ignored() {
        let mut t: ReplaceField<ValuePart> =
            configured(&[("whitelist", "abc"), ("blacklist", "foo")]);
        let entries = map(&[("abc", Value::Int32(1)), ("foo", Value::Int32(2))]);
        let out = apply(&mut t, source_value(None, entries.clone())).unwrap();
        assert_eq!(out.value, entries);
    }

    #[test]
    fn errors() {
        assert_eq!(
            config_error::<ReplaceField<ValuePart>>(&[("renames", "a:b, c")]),
            "Invalid value [a:b, c] for configuration renames: Invalid rename mapping: c"
        );
        assert_eq!(
            config_error::<ReplaceField<ValuePart>>(&[("renames", "a:b:c")]),
            "Invalid value [a:b:c] for configuration renames: Invalid rename mapping: a:b:c"
        );
        // Java's split drops trailing empty parts, so this is a valid pair.
        let _: ReplaceField<ValuePart> = configured(&[("renames", "a:b:")]);
        let mut t: ReplaceField<ValuePart> = configured(&[("include", "abc")]);
        assert_eq!(
            apply(
                &mut t,
                source_value(Some(Schema::string_schema()), Value::from("x"))
            )
            .unwrap_err()
            .to_string(),
            "Only Struct objects supported for [field replacement], found: java.lang.String"
        );
        assert_eq!(
            apply(&mut t, source_value(None, Value::from("x")))
                .unwrap_err()
                .to_string(),
            "Only Map objects supported in absence of schema for [field replacement], found: java.lang.String"
        );
        // Renaming onto a kept field gives two fields of one name.
        let mut t: ReplaceField<ValuePart> = configured(&[("renames", "abc:foo")]);
        let rec = source_value(Some(schema()), Value::Struct(value()));
        assert!(matches!(apply(&mut t, rec), Err(ConnectError::Data(_))));
        let def = Transformation::<SourceRecord>::config(&t);
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            ["exclude", "include", "renames", "replace.null.with.default"]
        );
    }
}
