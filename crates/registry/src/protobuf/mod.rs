//! Protobuf in Confluent's wire format (`io.confluent.connect.protobuf.ProtobufConverter`): the
//! schema mapping of Confluent's `ProtobufData` ([`schema`]), the values ([`data`]) and the
//! message indexes ([`write_indexes`], [`read_indexes`]), as the [`Format`] of a
//! [`RegistryConverter`]. Schema texts are compiled by `protox`; messages are encoded and
//! decoded by `prost-reflect`.
//!
//! # Wire format
//!
//! After the magic byte and the schema id: the message indexes (Confluent's `MessageIndexes`:
//! a zig-zag varint count, then zig-zag varint indexes, the path of the message among the
//! file's messages and their nested messages; the usual `[0]` is the single byte `0`), then
//! the message's Protobuf binary.
//!
//! # Imports
//!
//! `google/protobuf/*.proto` (from `protox`), `google/type/date.proto`,
//! `google/type/timeofday.proto`, `confluent/type/decimal.proto` and `confluent/meta.proto`
//! ([`files`]) resolve without a registry. A schema using `(confluent.*)` options without
//! importing `confluent/meta.proto` (as Confluent's own texts do) is compiled as if it did.
//! Other imports (schema references to other subjects) are refused with a
//! [`ConnectError::Data`] naming the import.
//!
//! # Settings
//!
//! `ProtobufDataConfig`'s defaults are implemented; setting one of its keys to another value is
//! refused naming the key.

pub mod data;
pub mod files;
pub mod schema;

use prost_reflect::prost::Message as _;
use prost_reflect::{DescriptorPool, DynamicMessage, MessageDescriptor};
use tributary_api::config::{ConfigDef, ConfigType};
use tributary_api::data::{Schema, SchemaRef, SchemaType, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::config::{get, int_key, KeyDoc};
use crate::converter::{Format, RegistryConverter};

/// Confluent's `io.confluent.connect.protobuf.ProtobufConverter`.
pub type ProtobufConverter = RegistryConverter<ProtobufFormat>;

/// The Protobuf [`Format`]: `ProtobufDataConfig`'s settings (their defaults).
pub struct ProtobufFormat {
    schemas_cache_size: usize,
}

/// A compiled Protobuf schema: its descriptors and the message records are written and read
/// as (the file's first message, which is the one Connect schemas map to).
#[derive(Debug, Clone)]
pub struct ProtobufSchema {
    /// The compiled file and its imports.
    pub pool: DescriptorPool,
    /// The schema's first message.
    pub root: MessageDescriptor,
    /// The name the schema's file has in the pool.
    pub file: String,
}

/// The name the compiled schema text has among its imports.
const MAIN_FILE: &str = "tributary/registry/schema.proto";

/// `ProtobufDataConfig`'s keys, with the only value Tributary implements (their defaults);
/// another value is refused naming the key.
const DATA_KEYS: &[(&str, &str, &str)] = &[
    (
        "enhanced.protobuf.schema.support",
        "false",
        "Keep package names (full names) in Connect schema names.",
    ),
    (
        "scrub.invalid.names",
        "false",
        "Replace characters Protobuf names cannot hold.",
    ),
    ("int.for.enums", "false", "Read enums as INT32."),
    (
        "optional.for.nullables",
        "false",
        "Optional Connect fields become proto3 optional fields.",
    ),
    (
        "optional.for.proto2",
        "true",
        "proto2 optional fields read as optional.",
    ),
    (
        "wrapper.for.nullables",
        "false",
        "Optional Connect fields become wrapper messages.",
    ),
    (
        "wrapper.for.raw.primitives",
        "true",
        "A top-level wrapper message reads as its primitive.",
    ),
    (
        "generate.struct.for.nulls",
        "false",
        "Absent message fields read as default structs.",
    ),
    (
        "generate.index.for.unions",
        "true",
        "Union (oneof) field names end with the oneof's index.",
    ),
    (
        "flatten.unions",
        "false",
        "Read oneof members as plain fields.",
    ),
    (
        "reference.subject.name.strategy",
        "io.confluent.kafka.serializers.subject.DefaultReferenceSubjectNameStrategy",
        "How referenced schemas are named (references are not registered by Tributary).",
    ),
    (
        "skip.known.types",
        "true",
        "Well-known imports are not registered as references.",
    ),
    (
        "specific.protobuf.key.type",
        "",
        "Not applicable to Connect.",
    ),
    (
        "specific.protobuf.value.type",
        "",
        "Not applicable to Connect.",
    ),
    ("derive.type", "false", "Not applicable to Connect."),
];

/// [`DATA_KEYS`] as the keys validation refuses other values of.
const PROTOBUF_REFUSED: [(&str, &str); DATA_KEYS.len()] = {
    let mut out = [("", ""); DATA_KEYS.len()];
    let mut i = 0;
    while i < DATA_KEYS.len() {
        out[i] = (DATA_KEYS[i].0, DATA_KEYS[i].1);
        i += 1;
    }
    out
};

/// `ProtobufDataConfig`'s keys as documented config keys.
pub const PROTOBUF_DATA_KEYS: &[KeyDoc] = &[
    (
        "enhanced.protobuf.schema.support",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
    (
        "scrub.invalid.names",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
    (
        "int.for.enums",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
    (
        "optional.for.nullables",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
    (
        "optional.for.proto2",
        ConfigType::Boolean,
        "true",
        "Only true is implemented.",
    ),
    (
        "wrapper.for.nullables",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
    (
        "wrapper.for.raw.primitives",
        ConfigType::Boolean,
        "true",
        "Only true is implemented.",
    ),
    (
        "generate.struct.for.nulls",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
    (
        "generate.index.for.unions",
        ConfigType::Boolean,
        "true",
        "Only true is implemented.",
    ),
    (
        "flatten.unions",
        ConfigType::Boolean,
        "false",
        "Only false is implemented.",
    ),
];

/// Appends Confluent's `MessageIndexes` of `indexes` to `out` (`[0]` as the single byte 0).
pub fn write_indexes(indexes: &[i32], out: &mut Vec<u8>) {
    if indexes == [0] {
        out.push(0);
        return;
    }
    write_varint(indexes.len() as i32, out);
    for i in indexes {
        write_varint(*i, out);
    }
}

fn write_varint(v: i32, out: &mut Vec<u8>) {
    let mut z = ((v << 1) ^ (v >> 31)) as u32;
    while z >= 0x80 {
        out.push((z as u8) | 0x80);
        z >>= 7;
    }
    out.push(z as u8);
}

fn read_varint(data: &[u8], pos: &mut usize) -> ConnectResult<i32> {
    let mut z: u32 = 0;
    for shift in (0..35).step_by(7) {
        let b = *data
            .get(*pos)
            .ok_or_else(|| ConnectError::data("Truncated message indexes"))?;
        *pos += 1;
        z |= u32::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok(((z >> 1) as i32) ^ -((z & 1) as i32));
        }
    }
    Err(ConnectError::data("Invalid varint in message indexes"))
}

/// Reads Confluent's `MessageIndexes` at the start of `data`: the indexes (a count of 0 is
/// `[0]`) and the rest. Errors: truncated or negative counts and indexes.
pub fn read_indexes(data: &[u8]) -> ConnectResult<(Vec<i32>, &[u8])> {
    let mut pos = 0;
    let count = read_varint(data, &mut pos)?;
    if count == 0 {
        return Ok((vec![0], &data[pos..]));
    }
    if count < 0 || count as usize > data.len() {
        return Err(ConnectError::data(format!(
            "Invalid message indexes count {count}"
        )));
    }
    let mut indexes = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let i = read_varint(data, &mut pos)?;
        if i < 0 {
            return Err(ConnectError::data(format!("Invalid message index {i}")));
        }
        indexes.push(i);
    }
    Ok((indexes, &data[pos..]))
}

/// The path of `message` among its file's messages and their nested messages.
pub fn message_indexes(message: &MessageDescriptor) -> Vec<i32> {
    let mut path = Vec::new();
    let mut current = Some(message.clone());
    while let Some(m) = current {
        let siblings: Vec<MessageDescriptor> = match m.parent_message() {
            Some(p) => p.child_messages().collect(),
            None => m.parent_file().messages().collect(),
        };
        let i = siblings
            .iter()
            .position(|s| s.full_name() == m.full_name())
            .unwrap_or(0);
        path.push(i as i32);
        current = m.parent_message();
    }
    path.reverse();
    path
}

struct Resolver {
    main: String,
}

impl protox::file::FileResolver for Resolver {
    fn open_file(&self, name: &str) -> Result<protox::file::File, protox::Error> {
        if name == MAIN_FILE {
            return protox::file::File::from_source(name, &self.main);
        }
        if let Some(text) = files::embedded(name) {
            return protox::file::File::from_source(name, text);
        }
        protox::file::GoogleFileResolver::new().open_file(name)
    }
}

/// Adds `import "confluent/meta.proto";` after the `syntax` statement when the text uses
/// `(confluent.…)` options without importing it (Confluent's texts do).
fn with_meta_import(text: &str) -> String {
    if !text.contains("(confluent.") || text.contains("\"confluent/meta.proto\"") {
        return text.to_string();
    }
    let import = "\nimport \"confluent/meta.proto\";\n";
    if let Some(start) = text.find("syntax") {
        if let Some(end) = text[start..].find(';') {
            let at = start + end + 1;
            return format!("{}{import}{}", &text[..at], &text[at..]);
        }
    }
    format!("{import}{text}")
}

impl ProtobufSchema {
    /// Compiles a schema text. Errors ([`ConnectError::Data`]): invalid text, an import that
    /// is neither well known nor embedded, a file without messages.
    pub fn parse(text: &str) -> ConnectResult<ProtobufSchema> {
        let resolver = Resolver {
            main: with_meta_import(text),
        };
        let mut compiler = protox::Compiler::with_file_resolver(resolver);
        compiler.include_imports(true);
        compiler.open_file(MAIN_FILE).map_err(|e| {
            if let Some(import) = missing_import(&e) {
                ConnectError::data(format!(
                    "Invalid Protobuf schema: import \"{import}\" cannot be resolved (schema \
                     references to other subjects are not supported by Tributary's \
                     ProtobufConverter; only google/protobuf, google/type and confluent \
                     imports are)"
                ))
            } else {
                ConnectError::data(format!("Invalid Protobuf schema: {e}"))
            }
        })?;
        let pool = compiler.descriptor_pool();
        let file = pool
            .get_file_by_name(MAIN_FILE)
            .ok_or_else(|| ConnectError::data("Invalid Protobuf schema: not compiled"))?;
        let root = file
            .messages()
            .next()
            .ok_or_else(|| ConnectError::data("Invalid Protobuf schema: no message"))?;
        Ok(ProtobufSchema {
            pool,
            root,
            file: MAIN_FILE.to_string(),
        })
    }

    /// The message at `indexes` (Confluent's message indexes) of the schema's file. Errors
    /// ([`ConnectError::Data`]): indexes that name no message.
    pub fn selected(&self, indexes: &[i32]) -> ConnectResult<MessageDescriptor> {
        self.message_at(indexes)
            .ok_or_else(|| ConnectError::data(format!("Invalid message indexes: {indexes:?}")))
    }

    /// The message at `indexes` of the schema's file.
    pub fn message_at(&self, indexes: &[i32]) -> Option<MessageDescriptor> {
        let file = self.pool.get_file_by_name(&self.file)?;
        let (first, rest) = indexes.split_first()?;
        let mut m = file.messages().nth(usize::try_from(*first).ok()?)?;
        for i in rest {
            let next = m.child_messages().nth(usize::try_from(*i).ok()?)?;
            m = next;
        }
        Some(m)
    }
}

fn missing_import(e: &protox::Error) -> Option<String> {
    let text = e.to_string();
    let start = text
        .find("import '")
        .map(|i| i + 8)
        .or_else(|| text.find("file '").map(|i| i + 6))?;
    let end = text[start..].find('\'')?;
    let name = &text[start..start + end];
    (e.is_file_not_found() || text.contains("not found")).then(|| name.to_string())
}

impl Format for ProtobufFormat {
    type Parsed = ProtobufSchema;
    /// The message indexes of the record's message in the schema's file.
    type Selector = Vec<i32>;
    const SCHEMA_TYPE: &'static str = "PROTOBUF";
    const CLASS: &'static str = crate::PROTOBUF_CONVERTER_CLASS;
    const DATA_NAME: &'static str = "Protobuf";

    fn configure(props: &Props) -> ConnectResult<Self> {
        for (key, default, _) in DATA_KEYS {
            if let Some(v) = get(props, key).filter(|v| !v.is_empty()) {
                if !v.trim().eq_ignore_ascii_case(default) {
                    return Err(ConnectError::config(format!(
                        "Invalid value {v} for configuration {key}: not implemented by Tributary's \
                         ProtobufConverter (only the default, {}, is supported)",
                        if default.is_empty() { "unset" } else { default }
                    )));
                }
            }
        }
        Ok(ProtobufFormat {
            schemas_cache_size: int_key(props, "schemas.cache.config", 1000)?.max(1) as usize,
        })
    }

    fn schema_text(&self, schema: &Schema) -> ConnectResult<String> {
        schema::from_connect_schema(schema)
    }

    fn parse(&self, text: &str, references: &[String]) -> ConnectResult<ProtobufSchema> {
        // Well-known references are resolved from the embedded files; a text importing
        // anything else fails to compile, naming the import.
        let _ = references;
        ProtobufSchema::parse(text)
    }

    /// The full name of the schema's first message (`ProtobufSchema.name()`).
    fn record_name(parsed: &ProtobufSchema) -> String {
        parsed.root.full_name().to_string()
    }

    /// Whether `reader`'s first message reads what `writer`'s writes: the same full name, and
    /// every field number both have of the same type and cardinality.
    fn can_read(writer: &ProtobufSchema, reader: &ProtobufSchema) -> bool {
        if writer.root.full_name() != reader.root.full_name() {
            return false;
        }
        reader
            .root
            .fields()
            .all(|r| match writer.root.get_field(r.number()) {
                None => true,
                Some(w) => {
                    w.is_list() == r.is_list()
                        && w.is_map() == r.is_map()
                        && format!("{:?}", w.kind()) == format!("{:?}", r.kind())
                }
            })
    }

    fn select(data: &[u8]) -> ConnectResult<(Vec<i32>, &[u8])> {
        read_indexes(data)
    }

    /// The full name of the message the indexes name.
    fn selected_name(parsed: &ProtobufSchema, indexes: &Vec<i32>) -> ConnectResult<String> {
        Ok(parsed.selected(indexes)?.full_name().to_string())
    }

    fn to_connect_schema(
        &self,
        parsed: &ProtobufSchema,
        indexes: &Vec<i32>,
        version: Option<i32>,
    ) -> ConnectResult<SchemaRef> {
        schema::to_connect_schema(&parsed.selected(indexes)?, version)
    }

    fn encode(
        &self,
        parsed: &ProtobufSchema,
        schema: &Schema,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()> {
        let message = data::to_message(&parsed.root, schema, value)?;
        write_indexes(&message_indexes(&parsed.root), out);
        message
            .encode(out)
            .map_err(|e| ConnectError::data(format!("Protobuf encoding failed: {e}")))
    }

    fn decode(
        &self,
        parsed: &ProtobufSchema,
        indexes: &Vec<i32>,
        schema: &SchemaRef,
        body: &[u8],
    ) -> ConnectResult<Value> {
        let message = parsed.selected(indexes)?;
        let decoded = DynamicMessage::decode(message, body)
            .map_err(|e| ConnectError::data(format!("Invalid Protobuf data: {e}")))?;
        if schema.schema_type != SchemaType::Struct && !schema.schema_type.is_primitive() {
            return Err(ConnectError::data("Unsupported root schema"));
        }
        data::from_message(schema, &decoded)
    }

    fn cache_size(&self) -> usize {
        self.schemas_cache_size
    }

    fn serialize_failed(topic: &str) -> String {
        format!("Failed to serialize Protobuf data from topic {topic}: ")
    }

    fn deserialize_failed(topic: &str) -> String {
        format!("Failed to deserialize data for topic {topic} to Protobuf: ")
    }

    fn config_def() -> ConfigDef {
        crate::config::config_def(PROTOBUF_DATA_KEYS, &PROTOBUF_REFUSED)
    }
}
