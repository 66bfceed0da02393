//! The schema-registry converters' common part (Confluent's `AvroConverter`,
//! `JsonSchemaConverter`): Confluent's wire format, subjects, registration, lookups and caches,
//! around a [`Format`] that maps Connect schemas and values to one schema language.
//!
//! # Wire format
//!
//! A key or value is the magic byte `0`, the schema's registry id as a 4-byte big-endian
//! integer, then the serialized data. A null is a Kafka null.
//!
//! # Writing (`fromConnectData`)
//!
//! The record's Connect schema becomes a schema of the format
//! ([`Format::schema_text`]), registered under the subject the strategy names
//! (`auto.register.schemas=true`, the default) or looked up there (`false`: a schema not in the
//! subject is an error). With `use.latest.version=true` the subject's latest schema is written
//! instead (checked, with `latest.compatibility.strict`, to read what the record's own schema
//! writes), with `use.schema.id` the given id's. Both conversions and every registry answer are
//! cached: a steady stream of records with one schema makes no registry request.
//!
//! # Reading (`toConnectData`)
//!
//! The id's schema is fetched once (`GET /schemas/ids/{id}`, references resolved), its version
//! in the subject looked up once (as Confluent's deserializers do for Connect), and converted to
//! a Connect schema ([`Format::to_connect_schema`]) carrying that version unless the schema says
//! `connect.version`.
//!
//! # Errors
//!
//! Data that does not fit its schema, a record without the magic byte, an unknown schema id, a
//! schema of another format, a schema the registry refuses (409, incompatible) or a subject
//! without the schema: [`ConnectError::Data`] (Java's `DataException`), which
//! `errors.tolerance` and the dead letter queue handle. A registry that does not answer (after
//! the client's retries): [`ConnectError::Unavailable`] (Java's `NetworkException`), retried by
//! the runtime within `errors.retry.timeout` and then failing the task even with
//! `errors.tolerance=all` (Connect would skip the record): nothing is skipped or committed past
//! the record. Not supported: schemaless data (Confluent's Avro
//! converter writes it with its `Anything` schema), refused with a [`ConnectError::Data`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tributary_api::config::ConfigDef;
use tributary_api::converter::Converter;
use tributary_api::data::{Schema, SchemaAndValue, SchemaRef, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use crate::client::{RegistryClient, RegistryError};
use crate::config::{RegistryConfig, SerdeConfig};
use crate::wire;

/// A schema language of the registry (Avro, JSON Schema): how Connect schemas and values map
/// to it. Implementations hold their own settings, read in [`Format::configure`].
pub trait Format: Send + Sync + Sized + 'static {
    /// A parsed schema, ready to write and read data with.
    type Parsed: Send + Sync + 'static;
    /// What part of a schema a record's data is, read from the data (Protobuf's message
    /// indexes); `()` for formats whose data is always the whole schema's.
    type Selector: Clone + PartialEq + Send + Sync + 'static;
    /// The registry's `schemaType`: `AVRO`, `JSON`, `PROTOBUF`.
    const SCHEMA_TYPE: &'static str;
    /// The converter's Java class, for messages.
    const CLASS: &'static str;
    /// The data's name in network failures (`Avro`, `Json`).
    const DATA_NAME: &'static str;
    /// Reads the format's settings (e.g. `AvroDataConfig`'s). Errors name the key.
    fn configure(props: &Props) -> ConnectResult<Self>;
    /// The schema text of a Connect schema.
    fn schema_text(&self, schema: &Schema) -> ConnectResult<String>;
    /// Parses a schema text with the texts of the schemas it references.
    fn parse(&self, text: &str, references: &[String]) -> ConnectResult<Self::Parsed>;
    /// The name the subject strategies use (`ParsedSchema.name()`).
    fn record_name(parsed: &Self::Parsed) -> String;
    /// Whether `reader` reads what `writer` writes (the `*.compatibility.strict` checks).
    fn can_read(writer: &Self::Parsed, reader: &Self::Parsed) -> bool;
    /// Reads the selector at the start of a record's data (after the schema id): the selector
    /// and the rest of the data.
    fn select(data: &[u8]) -> ConnectResult<(Self::Selector, &[u8])>;
    /// The name the subject strategies use for the part of `parsed` that `selector` names.
    fn selected_name(parsed: &Self::Parsed, selector: &Self::Selector) -> ConnectResult<String>;
    /// The Connect schema of the part of a parsed schema that `selector` names; `version` is
    /// the registry's.
    fn to_connect_schema(
        &self,
        parsed: &Self::Parsed,
        selector: &Self::Selector,
        version: Option<i32>,
    ) -> ConnectResult<SchemaRef>;
    /// Appends `value` of Connect schema `schema` as data of `parsed` to `out`.
    fn encode(
        &self,
        parsed: &Self::Parsed,
        schema: &Schema,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> ConnectResult<()>;
    /// Reads data (after the selector) of the part of `parsed` that `selector` names, as a
    /// value of its Connect schema `schema`.
    fn decode(
        &self,
        parsed: &Self::Parsed,
        selector: &Self::Selector,
        schema: &SchemaRef,
        data: &[u8],
    ) -> ConnectResult<Value>;
    /// How many schemas each cache keeps (`schemas.cache.config`).
    fn cache_size(&self) -> usize;
    /// The start of a serialization failure's message (Confluent's wording, with the topic).
    fn serialize_failed(topic: &str) -> String;
    /// The start of a deserialization failure's message.
    fn deserialize_failed(topic: &str) -> String;
    /// The converter's keys (the common ones and the format's).
    fn config_def() -> ConfigDef;
    /// Whether a null of a required schema without a default is an error (Avro) rather than
    /// a Kafka null (JSON Schema).
    const NULL_NEEDS_OPTIONAL: bool = true;
}

/// A schema-registry converter of format `F`; see the module docs.
pub struct RegistryConverter<F: Format> {
    state: Option<Configured<F>>,
}

impl<F: Format> Default for RegistryConverter<F> {
    fn default() -> Self {
        RegistryConverter { state: None }
    }
}

struct Configured<F: Format> {
    is_key: bool,
    client: Arc<RegistryClient>,
    serde: SerdeConfig,
    format: F,
    /// Connect schemas written recently, most recent first.
    writers: Mutex<Vec<(SchemaRef, Arc<WriteSchema<F>>)>>,
    /// Schemas read, by id, then by topic (the version is the subject's, and the subject may
    /// depend on the topic).
    readers: Mutex<HashMap<i32, ReadersOfId<F>>>,
    /// Latest versions (`use.latest.version`) by subject, with when they were fetched.
    latest: Mutex<HashMap<String, LatestOf<F>>>,
}

/// What writing one Connect schema needs: its schema (text and parsed), the name the subject
/// strategies use, and the id it was given per topic.
struct WriteSchema<F: Format> {
    text: String,
    parsed: F::Parsed,
    record_name: String,
    ids: Mutex<HashMap<String, Arc<Target<F>>>>,
}

/// The schema a record is written with: its id and, when not the record's own, its parsed
/// schema.
struct Target<F: Format> {
    id: i32,
    parsed: Option<F::Parsed>,
}

/// A subject's latest version, with when it was fetched.
type LatestOf<F> = (Instant, Arc<Target<F>>);

/// The schemas read for one id, by topic and selector.
type ReadersOfId<F> = Vec<(String, <F as Format>::Selector, Arc<ReadSchema<F>>)>;

struct ReadSchema<F: Format> {
    parsed: F::Parsed,
    connect: SchemaRef,
}

impl<F: Format> RegistryConverter<F> {
    /// An unconfigured converter.
    pub fn new() -> Self {
        Self::default()
    }

    fn state(&self) -> ConnectResult<&Configured<F>> {
        self.state
            .as_ref()
            .ok_or_else(|| ConnectError::connect(format!("{} used before configure", F::CLASS)))
    }
}

fn serialize_error<F: Format>(topic: &str, e: RegistryError) -> ConnectError {
    match e {
        RegistryError::Unavailable(m) => ConnectError::Unavailable(format!(
            "Network connection error while serializing {} data for topic {topic}: {m}",
            F::DATA_NAME
        )),
        other => ConnectError::data(format!("{}{other}", F::serialize_failed(topic))),
    }
}

fn deserialize_error<F: Format>(
    topic: &str,
    e: impl std::fmt::Display,
    retriable: bool,
) -> ConnectError {
    if retriable {
        ConnectError::Unavailable(format!(
            "Network connection error while deserializing data for topic {topic}: {e}"
        ))
    } else {
        ConnectError::data(format!("{}{e}", F::deserialize_failed(topic)))
    }
}

impl<F: Format> Configured<F> {
    fn write_schema(&self, schema: &SchemaRef) -> ConnectResult<Arc<WriteSchema<F>>> {
        {
            let mut writers = self.writers.lock().unwrap();
            let found = writers
                .iter()
                .position(|(s, _)| Arc::ptr_eq(s, schema))
                .or_else(|| writers.iter().position(|(s, _)| s == schema));
            if let Some(i) = found {
                if i > 0 {
                    let entry = writers.remove(i);
                    writers.insert(0, entry);
                }
                return Ok(writers[0].1.clone());
            }
        }
        let text = self.format.schema_text(schema)?;
        let parsed = self.format.parse(&text, &[])?;
        let write = Arc::new(WriteSchema {
            record_name: F::record_name(&parsed),
            text,
            parsed,
            ids: Mutex::new(HashMap::new()),
        });
        let mut writers = self.writers.lock().unwrap();
        writers.insert(0, (schema.clone(), write.clone()));
        writers.truncate(self.format.cache_size());
        Ok(write)
    }

    /// The id (and, when not the record's own, the schema) a record of `topic` is written with.
    fn target(&self, topic: &str, write: &WriteSchema<F>) -> ConnectResult<Arc<Target<F>>> {
        if let Some(t) = write.ids.lock().unwrap().get(topic) {
            return Ok(t.clone());
        }
        let subject = self
            .serde
            .subject_strategy
            .subject(topic, self.is_key, &write.record_name);
        let target = if let Some(id) = self.serde.use_schema_id {
            let registered = self
                .client
                .schema_by_id(id)
                .map_err(|e| serialize_error::<F>(topic, e))?;
            let parsed = self
                .format
                .parse(&registered.schema, &registered.references)?;
            if self.serde.id_compatibility_strict && !F::can_read(&write.parsed, &parsed) {
                return Err(ConnectError::data(format!(
                    "{}Schema with id {id} is not compatible with the record's schema {}",
                    F::serialize_failed(topic),
                    write.text
                )));
            }
            Arc::new(Target {
                id,
                parsed: Some(parsed),
            })
        } else if self.serde.use_latest_version {
            return self.latest(topic, &subject, write);
        } else {
            let id = self
                .client
                .id_for(
                    &subject,
                    F::SCHEMA_TYPE,
                    &write.text,
                    self.serde.auto_register,
                    self.serde.normalize,
                )
                .map_err(|e| serialize_error::<F>(topic, e))?;
            Arc::new(Target { id, parsed: None })
        };
        write
            .ids
            .lock()
            .unwrap()
            .insert(topic.to_string(), target.clone());
        Ok(target)
    }

    fn latest(
        &self,
        topic: &str,
        subject: &str,
        write: &WriteSchema<F>,
    ) -> ConnectResult<Arc<Target<F>>> {
        if let Some((at, t)) = self.latest.lock().unwrap().get(subject) {
            if self
                .serde
                .latest_cache_ttl
                .is_none_or(|ttl| at.elapsed() < ttl)
            {
                return Ok(t.clone());
            }
        }
        let latest = self
            .client
            .latest(subject)
            .map_err(|e| serialize_error::<F>(topic, e))?;
        let parsed = self.format.parse(&latest.schema, &[])?;
        if self.serde.latest_compatibility_strict && !F::can_read(&write.parsed, &parsed) {
            return Err(ConnectError::data(format!(
                "{}Latest schema of subject {subject} (version {}) is not backward compatible \
                 with the record's schema {}",
                F::serialize_failed(topic),
                latest.version,
                write.text
            )));
        }
        let target = Arc::new(Target {
            id: latest.id,
            parsed: Some(parsed),
        });
        self.latest
            .lock()
            .unwrap()
            .insert(subject.to_string(), (Instant::now(), target.clone()));
        Ok(target)
    }

    fn read_schema(
        &self,
        topic: &str,
        id: i32,
        selector: &F::Selector,
    ) -> ConnectResult<Arc<ReadSchema<F>>> {
        if let Some(list) = self.readers.lock().unwrap().get(&id) {
            if let Some((_, _, r)) = list.iter().find(|(t, s, _)| t == topic && s == selector) {
                return Ok(r.clone());
            }
        }
        let kind = if self.is_key { "key" } else { "value" };
        let registered = self.client.schema_by_id(id).map_err(|e| {
            let retriable = matches!(e, RegistryError::Unavailable(_));
            deserialize_error::<F>(
                topic,
                format!(
                    "Error retrieving {} {kind} schema for id {id}: {e}",
                    F::DATA_NAME
                ),
                retriable,
            )
        })?;
        if registered.schema_type != F::SCHEMA_TYPE {
            return Err(deserialize_error::<F>(
                topic,
                format!(
                    "Schema with id {id} is a {} schema, not {}",
                    registered.schema_type,
                    F::SCHEMA_TYPE
                ),
                false,
            ));
        }
        let parsed = self
            .format
            .parse(&registered.schema, &registered.references)
            .map_err(|e| deserialize_error::<F>(topic, e, false))?;
        let name = F::selected_name(&parsed, selector)
            .map_err(|e| deserialize_error::<F>(topic, e, false))?;
        let subject = self
            .serde
            .subject_strategy
            .subject(topic, self.is_key, &name);
        let version = self
            .client
            .version_of(&subject, id, &registered)
            .map_err(|e| {
                let retriable = matches!(e, RegistryError::Unavailable(_));
                deserialize_error::<F>(
                    topic,
                    format!(
                        "Error retrieving {} {kind} schema version for id {id}: {e}",
                        F::DATA_NAME
                    ),
                    retriable,
                )
            })?;
        let connect = self
            .format
            .to_connect_schema(&parsed, selector, Some(version))
            .map_err(|e| deserialize_error::<F>(topic, e, false))?;
        let read = Arc::new(ReadSchema { parsed, connect });
        let mut readers = self.readers.lock().unwrap();
        if readers.len() >= self.format.cache_size() {
            readers.clear();
        }
        readers
            .entry(id)
            .or_default()
            .push((topic.to_string(), selector.clone(), read.clone()));
        Ok(read)
    }
}

impl<F: Format> Converter for RegistryConverter<F> {
    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()> {
        let client = RegistryConfig::from_props(configs)?;
        let serde = SerdeConfig::from_props(configs, is_key)?;
        let format = F::configure(configs)?;
        self.state = Some(Configured {
            is_key,
            client: Arc::new(RegistryClient::new(&client)),
            serde,
            format,
            writers: Mutex::new(Vec::new()),
            readers: Mutex::new(HashMap::new()),
            latest: Mutex::new(HashMap::new()),
        });
        Ok(())
    }

    fn from_connect_data(
        &self,
        topic: &str,
        schema: Option<&SchemaRef>,
        value: &Value,
    ) -> ConnectResult<Option<Vec<u8>>> {
        let state = self.state()?;
        let Some(schema) = schema else {
            if value.is_null() {
                return Ok(None);
            }
            return Err(ConnectError::data(format!(
                "{}schemaless data (a {} value without a schema) is not supported by \
                 Tributary's {}",
                F::serialize_failed(topic),
                value.kind_name(),
                F::CLASS
            )));
        };
        if value.is_null() {
            if F::NULL_NEEDS_OPTIONAL && !schema.optional && schema.default_value.is_none() {
                return Err(ConnectError::data(format!(
                    "{}Found null value for non-optional schema",
                    F::serialize_failed(topic)
                )));
            }
            return Ok(None);
        }
        let write = state.write_schema(schema)?;
        let target = state.target(topic, &write)?;
        let parsed = target.parsed.as_ref().unwrap_or(&write.parsed);
        let mut out = wire::header(target.id);
        state
            .format
            .encode(parsed, schema, value, &mut out)
            .map_err(|e| ConnectError::data(format!("{}{e}", F::serialize_failed(topic))))?;
        Ok(Some(out))
    }

    fn to_connect_data(&self, topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        let state = self.state()?;
        let Some(bytes) = value else {
            return Ok(SchemaAndValue::null());
        };
        let (id, data) = wire::split(bytes).map_err(|e| deserialize_error::<F>(topic, e, false))?;
        let (selector, data) =
            F::select(data).map_err(|e| deserialize_error::<F>(topic, e, false))?;
        let read = state.read_schema(topic, id, &selector)?;
        let value = state
            .format
            .decode(&read.parsed, &selector, &read.connect, data)
            .map_err(|e| deserialize_error::<F>(topic, e, false))?;
        Ok(SchemaAndValue {
            schema: Some(read.connect.clone()),
            value,
        })
    }

    fn config(&self) -> ConfigDef {
        F::config_def()
    }
}
