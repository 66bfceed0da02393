//! `org.apache.kafka.connect.storage.StringConverter`: values as their string form in a Java
//! character set.
//!
//! Writing uses Java's `value.toString()` (see [`super::java_fmt::to_java_string`]); a null
//! value is a Kafka null. Reading always gives an optional STRING schema (`None` bytes give a
//! null value). Characters the charset cannot represent are written as `?` and malformed input
//! is read as U+FFFD, as Java's `String.getBytes` / `new String(bytes, charset)` do.

use tributary_api::config::{ConfigDef, ConfigKey, ConfigType, Importance, Width};
use tributary_api::converter::{Converter, HeaderConverter};
use tributary_api::data::{Schema, SchemaAndValue, SchemaRef, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::java_fmt::to_java_string;
use super::{converter_config_def, with_converter_type};

/// A Java character set the StringConverter supports, by any of its common Java names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    /// `UTF-8` (default).
    Utf8,
    /// `ISO-8859-1` (Latin-1).
    Latin1,
    /// `US-ASCII`.
    Ascii,
    /// `UTF-16`: writes big-endian with a byte-order mark; reads a byte-order mark if present,
    /// else big-endian.
    Utf16,
    /// `UTF-16BE`, no byte-order mark.
    Utf16Be,
    /// `UTF-16LE`, no byte-order mark.
    Utf16Le,
}

impl Charset {
    /// The charset of a Java charset name or alias (case-insensitive); `None` if unsupported.
    pub fn for_name(name: &str) -> Option<Charset> {
        let n = name.trim().to_ascii_uppercase().replace('_', "-");
        Some(match n.as_str() {
            "UTF-8" | "UTF8" | "UNICODE-1-1-UTF-8" => Charset::Utf8,
            "ISO-8859-1" | "ISO8859-1" | "ISO-LATIN-1" | "LATIN1" | "L1" | "8859-1"
            | "ISO8859-1:1987" | "CP819" | "IBM819" | "ISO-IR-100" | "CSISOLATIN1" | "IBM-819"
            | "819" | "ISO-8859-1:1987" => Charset::Latin1,
            "US-ASCII" | "ASCII" | "US" | "ISO646-US" | "ASCII7" | "646" | "ANSI-X3.4-1968"
            | "ANSI-X3.4-1986" | "CP367" | "IBM367" | "CSASCII" | "DEFAULT"
            | "ISO-646.IRV:1991" | "ISO-IR-6" => Charset::Ascii,
            "UTF-16" | "UTF16" | "UNICODE" | "UNICODEBIG" => Charset::Utf16,
            "UTF-16BE" | "UTF16BE" | "X-UTF-16BE" | "ISO-10646-UCS-2" | "UNICODEBIGUNMARKED" => {
                Charset::Utf16Be
            }
            "UTF-16LE" | "UTF16LE" | "X-UTF-16LE" | "UNICODELITTLEUNMARKED" => Charset::Utf16Le,
            _ => return None,
        })
    }

    /// Encodes as Java's `String.getBytes(charset)`.
    pub fn encode(self, s: &str) -> Vec<u8> {
        match self {
            Charset::Utf8 => s.as_bytes().to_vec(),
            Charset::Latin1 => s
                .chars()
                .map(|c| if (c as u32) < 0x100 { c as u8 } else { b'?' })
                .collect(),
            Charset::Ascii => s
                .chars()
                .map(|c| if c.is_ascii() { c as u8 } else { b'?' })
                .collect(),
            Charset::Utf16 | Charset::Utf16Be => {
                let mut out = if self == Charset::Utf16 {
                    vec![0xfe, 0xff]
                } else {
                    Vec::new()
                };
                s.encode_utf16()
                    .for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
                out
            }
            Charset::Utf16Le => s.encode_utf16().flat_map(|u| u.to_le_bytes()).collect(),
        }
    }

    /// Decodes as Java's `new String(bytes, charset)`.
    pub fn decode(self, bytes: &[u8]) -> String {
        match self {
            // Valid UTF-8 (the common case) is checked by the fast validator and copied once.
            Charset::Utf8 => match std::str::from_utf8(bytes) {
                Ok(s) => s.to_owned(),
                Err(_) => String::from_utf8_lossy(bytes).into_owned(),
            },
            Charset::Latin1 => bytes.iter().map(|b| *b as char).collect(),
            Charset::Ascii => bytes
                .iter()
                .map(|b| if b.is_ascii() { *b as char } else { '\u{fffd}' })
                .collect(),
            Charset::Utf16 | Charset::Utf16Be | Charset::Utf16Le => {
                let (mut big, mut body) = (self != Charset::Utf16Le, bytes);
                if self == Charset::Utf16 && bytes.len() >= 2 {
                    match (bytes[0], bytes[1]) {
                        (0xfe, 0xff) => body = &bytes[2..],
                        (0xff, 0xfe) => {
                            big = false;
                            body = &bytes[2..]
                        }
                        _ => {}
                    }
                }
                let units = body.chunks_exact(2).map(|c| {
                    if big {
                        u16::from_be_bytes([c[0], c[1]])
                    } else {
                        u16::from_le_bytes([c[0], c[1]])
                    }
                });
                let mut s: String = char::decode_utf16(units)
                    .map(|r| r.unwrap_or('\u{fffd}'))
                    .collect();
                if body.len() % 2 == 1 {
                    s.push('\u{fffd}');
                }
                s
            }
        }
    }
}

/// Kafka Connect's `StringConverter` (`org.apache.kafka.connect.storage.StringConverter`),
/// also usable as a header converter.
///
/// Settings: `converter.encoding` (default `UTF-8`); `key.serializer.encoding` /
/// `value.serializer.encoding` (writing) and `key.deserializer.encoding` /
/// `value.deserializer.encoding` (reading) override it, as in Kafka's `StringSerializer`.
/// An unknown charset fails `configure` with `Unsupported encoding <name>`.
#[derive(Debug, Clone)]
pub struct StringConverter {
    write_charset: Charset,
    read_charset: Charset,
}

impl Default for StringConverter {
    fn default() -> Self {
        StringConverter {
            write_charset: Charset::Utf8,
            read_charset: Charset::Utf8,
        }
    }
}

impl StringConverter {
    /// A UTF-8 converter, usable without `configure`.
    pub fn new() -> StringConverter {
        StringConverter::default()
    }

    /// The configuration keys (`StringConverterConfig.configDef()`): `converter.type` and
    /// `converter.encoding`.
    pub fn config_def() -> ConfigDef {
        converter_config_def().define_key(ConfigKey {
            name: "converter.encoding".into(),
            config_type: ConfigType::String,
            default: Some(Some("UTF-8".into())),
            validator: None,
            importance: Importance::High,
            documentation:
                "Character set, by its Java name, used to turn strings into bytes and bytes back into strings."
                    .into(),
            group: None,
            order_in_group: -1,
            width: Width::Medium,
            display_name: "Encoding".into(),
            dependents: Vec::new(),
        })
    }

    fn apply(&mut self, props: &Props) -> ConnectResult<()> {
        let parsed = Self::config_def().parse(props)?;
        let encoding = parsed
            .get("converter.encoding")
            .and_then(|p| p.to_config_string())
            .unwrap_or("UTF-8".into());
        let is_key = props.get("converter.type").map(String::as_str) == Some("key");
        let prefix = if is_key { "key" } else { "value" };
        let charset = |name: &str| {
            Charset::for_name(name)
                .ok_or_else(|| ConnectError::config(format!("Unsupported encoding {name}")))
        };
        let write = props
            .get(&format!("{prefix}.serializer.encoding"))
            .cloned()
            .unwrap_or(encoding.clone());
        let read = props
            .get(&format!("{prefix}.deserializer.encoding"))
            .cloned()
            .unwrap_or(encoding);
        self.write_charset = charset(&write)?;
        self.read_charset = charset(&read)?;
        Ok(())
    }

    fn write(&self, value: &Value) -> Option<Vec<u8>> {
        match value {
            Value::Null => None,
            v => Some(self.write_charset.encode(&to_java_string(v))),
        }
    }

    fn read(&self, bytes: Option<&[u8]>) -> SchemaAndValue {
        SchemaAndValue {
            schema: Some(Schema::optional_string_schema()),
            value: bytes.map_or(Value::Null, |b| Value::String(self.read_charset.decode(b))),
        }
    }
}

impl Converter for StringConverter {
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()> {
        self.apply(&with_converter_type(
            configs,
            if is_key { "key" } else { "value" },
        ))
    }

    /// The value's Java string form in the configured charset; null gives `None`.
    fn from_connect_data(
        &self,
        _topic: &str,
        _schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        Ok(self.write(value))
    }

    /// As [`Converter::from_connect_data`]; a string written as UTF-8 hands over its buffer.
    fn from_connect_data_owned(
        &self,
        _topic: &str,
        _schema: Option<&SchemaRef>,
        value: Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        match value {
            Value::String(s) if self.write_charset == Charset::Utf8 => Ok(Some(s.into_bytes())),
            other => Ok(self.write(&other)),
        }
    }

    /// Always an optional STRING schema; `None` bytes give a null value.
    fn to_connect_data(&self, _topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        Ok(self.read(value))
    }

    fn config(&self) -> ConfigDef {
        Self::config_def()
    }
}

/// The same conversions for header values; `converter.type` defaults to `header`.
impl HeaderConverter for StringConverter {
    /// Pure computation: never blocks.
    fn may_block(&self) -> bool {
        false
    }

    fn configure(&mut self, configs: &Props) -> ConnectResult<()> {
        let mut props = configs.clone();
        props
            .entry("converter.type".into())
            .or_insert_with(|| "header".into());
        self.apply(&props)
    }

    fn from_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        _schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        Ok(self.write(value))
    }

    fn to_connect_header(
        &self,
        _topic: &str,
        _header_key: &str,
        value: Option<&[u8]>,
    ) -> ConnectResult<SchemaAndValue> {
        Ok(self.read(value))
    }
}
