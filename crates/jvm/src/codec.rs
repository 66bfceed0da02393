//! The byte layout of batches crossing between Tributary and the hosted Java plugins (the
//! Java side is `Codec.java`): big-endian integers; strings and byte arrays as a 4-byte length
//! (-1 for null) and their bytes (UTF-8 for strings). Pure: no JNI here.

use std::collections::HashMap;

use tributary_api::record::TopicPartition;
use tributary_api::sink::PartitionOffsets;
use tributary_api::Props;

/// Malformed bytes from the other side (a bug in the bridge, never user input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed batch from the Java bridge: {0}")]
pub struct CodecError(pub &'static str);

/// Appends values in the bridge's layout.
#[derive(Debug, Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn new() -> Writer {
        Writer(Vec::new())
    }
    pub fn i32(&mut self, v: i32) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    /// A nullable byte array.
    pub fn bytes(&mut self, b: Option<&[u8]>) -> &mut Self {
        match b {
            None => self.i32(-1),
            Some(b) => {
                self.i32(b.len() as i32);
                self.0.extend_from_slice(b);
                self
            }
        }
    }
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(Some(s.as_bytes()))
    }
    /// A string map (Connect's `Map<String, String>` configs).
    pub fn map(&mut self, m: &Props) -> &mut Self {
        self.i32(m.len() as i32);
        for (k, v) in m {
            self.str(k).str(v);
        }
        self
    }
    /// Pairs in order, read by Java's `Codec.Reader.map` into a `LinkedHashMap`.
    pub fn pairs(&mut self, pairs: &[(String, String)]) -> &mut Self {
        self.i32(pairs.len() as i32);
        for (k, v) in pairs {
            self.str(k).str(v);
        }
        self
    }
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// Reads values in the bridge's layout.
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        if self.buf.len() < n {
            return Err(CodecError("truncated"));
        }
        let (head, tail) = self.buf.split_at(n);
        self.buf = tail;
        Ok(head)
    }
    pub fn i32(&mut self) -> Result<i32, CodecError> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    pub fn i64(&mut self) -> Result<i64, CodecError> {
        Ok(i64::from_be_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    pub fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }
    pub fn bytes(&mut self) -> Result<Option<&'a [u8]>, CodecError> {
        let n = self.i32()?;
        if n < 0 {
            return Ok(None);
        }
        self.take(n as usize).map(Some)
    }
    pub fn opt_str(&mut self) -> Result<Option<String>, CodecError> {
        match self.bytes()? {
            None => Ok(None),
            Some(b) => String::from_utf8(b.to_vec())
                .map(Some)
                .map_err(|_| CodecError("string is not UTF-8")),
        }
    }
    pub fn str(&mut self) -> Result<String, CodecError> {
        self.opt_str()?.ok_or(CodecError("unexpected null string"))
    }
    pub fn map(&mut self) -> Result<Props, CodecError> {
        let n = self.count()?;
        let mut m = HashMap::with_capacity(n);
        for _ in 0..n {
            let k = self.str()?;
            let v = self.opt_str()?.unwrap_or_default();
            m.insert(k, v);
        }
        Ok(m)
    }
    /// A non-negative element count.
    pub fn count(&mut self) -> Result<usize, CodecError> {
        usize::try_from(self.i32()?).map_err(|_| CodecError("negative count"))
    }
}

/// Topic partitions: int count, then topic and partition each.
pub fn write_partitions(partitions: &[TopicPartition]) -> Vec<u8> {
    let mut w = Writer::new();
    w.i32(partitions.len() as i32);
    for tp in partitions {
        w.str(&tp.topic).i32(tp.partition);
    }
    w.into_bytes()
}

/// Offsets by partition: int count, then topic, partition and offset each.
pub fn write_offsets(offsets: &PartitionOffsets) -> Vec<u8> {
    let mut w = Writer::new();
    w.i32(offsets.len() as i32);
    for (tp, offset) in offsets {
        w.str(&tp.topic).i32(tp.partition).i64(*offset);
    }
    w.into_bytes()
}

/// Reads what [`write_offsets`] writes.
pub fn read_offsets(b: &[u8]) -> Result<PartitionOffsets, CodecError> {
    let mut r = Reader::new(b);
    let n = r.count()?;
    let mut out = HashMap::with_capacity(n);
    for _ in 0..n {
        let topic = r.str()?;
        let partition = r.i32()?;
        out.insert(TopicPartition::new(topic, partition), r.i64()?);
    }
    Ok(out)
}

/// The tags of a plugin's metrics (KIP-877) as the bridge's `HostedMetrics` reads them.
pub fn metric_tags(metrics: &tributary_api::metrics::PluginMetrics) -> Vec<u8> {
    let mut w = Writer::new();
    w.pairs(metrics.tags());
    w.into_bytes()
}

/// The hosted plugins' metrics as the bridge's `HostedMetrics.snapshot` writes them: count,
/// then per metric name, description, tags and the bits of its value.
pub fn read_samples(b: &[u8]) -> Result<Vec<tributary_api::metrics::Sample>, CodecError> {
    let mut r = Reader::new(b);
    let n = r.count()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let description = r.opt_str()?.unwrap_or_default();
        let count = r.count()?;
        let mut tags = Vec::with_capacity(count);
        for _ in 0..count {
            tags.push((r.str()?, r.str()?));
        }
        let value = f64::from_bits(r.i64()? as u64);
        out.push(tributary_api::metrics::Sample {
            name,
            description,
            tags,
            value,
        });
    }
    Ok(out)
}

/// The first byte of an envelope whose value is null under a required schema: Java's
/// JsonConverter cannot write that (`Conversion error: null value for field that is required`)
/// though Connect passes such values on (a MirrorMaker tombstone is `Schema.BYTES_SCHEMA` with
/// a null value), so `Codec.encode` writes this byte and then the envelope of the schema made
/// optional. No JSON text starts with it.
pub const NULL_UNDER_REQUIRED_SCHEMA: u8 = 0;

/// Connect data from an envelope the bridge wrote (`Codec.encode`): the JsonConverter
/// envelope, or [`NULL_UNDER_REQUIRED_SCHEMA`] and the envelope of a null value whose schema
/// is made required again here. Errors: an envelope the JsonConverter cannot read.
pub fn envelope_data(
    envelope: &tributary_json::JsonConverter,
    topic: &str,
    bytes: Option<&[u8]>,
) -> tributary_api::ConnectResult<tributary_api::data::SchemaAndValue> {
    use tributary_api::converter::Converter as _;
    match bytes {
        Some([NULL_UNDER_REQUIRED_SCHEMA, rest @ ..]) => {
            let mut data = envelope.to_connect_data(topic, Some(rest))?;
            if let Some(schema) = data.schema.take() {
                let mut required = (*schema).clone();
                required.optional = false;
                data.schema = Some(std::sync::Arc::new(required));
            }
            Ok(data)
        }
        other => envelope.to_connect_data(topic, other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_in_the_java_layout() {
        let mut w = Writer::new();
        w.i32(-2).i64(1 << 40).u8(7).bytes(None).str("é");
        let mut props = Props::new();
        props.insert("k".into(), "v".into());
        w.map(&props);
        let bytes = w.into_bytes();
        // DataOutputStream writes big-endian.
        assert_eq!(&bytes[..4], &[0xff, 0xff, 0xff, 0xfe]);
        let mut r = Reader::new(&bytes);
        assert_eq!(r.i32().unwrap(), -2);
        assert_eq!(r.i64().unwrap(), 1 << 40);
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.bytes().unwrap(), None);
        assert_eq!(r.str().unwrap(), "é");
        assert_eq!(r.map().unwrap(), props);
        assert_eq!(r.u8(), Err(CodecError("truncated")));
    }

    #[test]
    fn offsets_round_trip() {
        let mut o = PartitionOffsets::new();
        o.insert(TopicPartition::new("t", 3), 42);
        assert_eq!(read_offsets(&write_offsets(&o)).unwrap(), o);
    }

    #[test]
    fn a_null_under_a_required_schema_crosses_with_its_schema_required() {
        use tributary_api::data::{Schema, Value};
        let envelope = tributary_json::JsonConverter::new();
        let optional_bytes = br#"{"schema":{"type":"bytes","optional":true},"payload":null}"#;
        let plain = envelope_data(&envelope, "t", Some(optional_bytes)).unwrap();
        assert!(plain.schema.as_ref().unwrap().optional);
        let marked: Vec<u8> = std::iter::once(NULL_UNDER_REQUIRED_SCHEMA)
            .chain(optional_bytes.iter().copied())
            .collect();
        let data = envelope_data(&envelope, "t", Some(&marked)).unwrap();
        assert_eq!(data.value, Value::Null);
        assert_eq!(
            *data.schema.unwrap(),
            *Schema::bytes_schema(),
            "Schema.BYTES_SCHEMA again"
        );
    }
}
