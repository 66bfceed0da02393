//! Whether one Avro schema can read data written with another (the Avro specification's schema
//! resolution rules), for `latest.compatibility.strict` and `id.compatibility.strict`.

use super::schema::{AvroNamedKind, AvroSchema, AvroType};

/// Whether data written with `writer` can be read with `reader`: the same primitive type or an
/// Avro promotion (int → long, float, double; long → float, double; float → double; string ↔
/// bytes), records with the same name whose every reader field is in the writer (readable) or
/// has a default, enums with the same name whose reader knows every writer symbol (or has a
/// default), fixed types of the same name and size, arrays and maps of readable items, and
/// unions branch by branch.
pub fn can_read(writer: &AvroSchema, reader: &AvroSchema) -> bool {
    Resolver {
        writer,
        reader,
        assumed: Vec::new(),
    }
    .check(&writer.root, &reader.root)
}

struct Resolver<'a> {
    writer: &'a AvroSchema,
    reader: &'a AvroSchema,
    /// Pairs of named types being checked: assumed readable while they are (recursion).
    assumed: Vec<(usize, usize)>,
}

fn short(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

impl Resolver<'_> {
    fn check(&mut self, w: &AvroType, r: &AvroType) -> bool {
        match (w, r) {
            (AvroType::Union(wb), _) => wb.iter().all(|b| self.check(b, r)),
            (_, AvroType::Union(rb)) => rb.iter().any(|b| self.check(w, b)),
            (AvroType::Primitive { ty: wt, .. }, AvroType::Primitive { ty: rt, .. }) => {
                wt == rt
                    || matches!(
                        (wt.as_str(), rt.as_str()),
                        ("int", "long" | "float" | "double")
                            | ("long", "float" | "double")
                            | ("float", "double")
                            | ("string", "bytes")
                            | ("bytes", "string")
                    )
            }
            (AvroType::Array { items: wi, .. }, AvroType::Array { items: ri, .. }) => {
                self.check(wi, ri)
            }
            (AvroType::Map { values: wv, .. }, AvroType::Map { values: rv, .. }) => {
                self.check(wv, rv)
            }
            (AvroType::Ref(wi), AvroType::Ref(ri)) => {
                if self.assumed.contains(&(*wi, *ri)) {
                    return true;
                }
                let (wn, rn) = (self.writer.named(*wi), self.reader.named(*ri));
                if short(&wn.full_name) != short(&rn.full_name) {
                    return false;
                }
                self.assumed.push((*wi, *ri));
                let ok = match (&wn.kind, &rn.kind) {
                    (AvroNamedKind::Record(wf), AvroNamedKind::Record(rf)) => {
                        rf.iter()
                            .all(|f| match wf.iter().find(|x| x.name == f.name) {
                                Some(x) => self.check(&x.ty, &f.ty),
                                None => f.default.is_some(),
                            })
                    }
                    (
                        AvroNamedKind::Enum { symbols: ws, .. },
                        AvroNamedKind::Enum {
                            symbols: rs,
                            default,
                        },
                    ) => default.is_some() || ws.iter().all(|s| rs.contains(s)),
                    (AvroNamedKind::Fixed(a), AvroNamedKind::Fixed(b)) => a == b,
                    _ => false,
                };
                self.assumed.pop();
                ok
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> AvroSchema {
        AvroSchema::parse(text, &[]).unwrap()
    }

    #[test]
    fn resolution_rules() {
        let v1 = s(r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}"#);
        let v2 = s(
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"long"},{"name":"b","type":"string","default":"x"}]}"#,
        );
        let v3 = s(
            r#"{"type":"record","name":"R","fields":[{"name":"a","type":"int"},{"name":"b","type":"string"}]}"#,
        );
        assert!(can_read(&v1, &v2), "promotion and a defaulted new field");
        assert!(!can_read(&v2, &v1), "long cannot be read as int");
        assert!(!can_read(&v1, &v3), "a new field without default");
        assert!(can_read(&s(r#""string""#), &s(r#"["null","string"]"#)));
        assert!(!can_read(&s(r#"["null","string"]"#), &s(r#""string""#)));
        let other = s(r#"{"type":"record","name":"S","fields":[{"name":"a","type":"int"}]}"#);
        assert!(!can_read(&v1, &other), "names differ");
    }
}
