//! `io.confluent.connect.avro.AvroConverter`: Connect data as Avro in Confluent's wire format,
//! schemas kept in a schema registry.
//!
//! # Wire format
//!
//! A key or value is the magic byte `0`, the schema's registry id as a 4-byte big-endian
//! integer, then the Avro binary datum ([`super::data`]). A null is a Kafka null.
//!
//! # Writing (`fromConnectData`)
//!
//! The record's Connect schema becomes an Avro schema ([`super::schema::from_connect_schema`]),
//! registered under the subject the strategy names (`auto.register.schemas=true`, the default)
//! or looked up there (`false`: a schema not in the subject is an error). With
//! `use.latest.version=true` the subject's latest schema is written instead (checked, with
//! `latest.compatibility.strict`, to read what the record's own schema writes), with
//! `use.schema.id` the given id's. Both conversions and every registry answer are cached: a
//! steady stream of records with one schema makes no registry request.
//!
//! # Reading (`toConnectData`)
//!
//! The id's schema is fetched once (`GET /schemas/ids/{id}`, references resolved), its version
//! in the subject looked up once (as Confluent's deserializer does for Connect), and converted
//! to a Connect schema ([`super::schema::to_connect_schema`]) carrying that version unless the
//! Avro schema says `connect.version`.
//!
//! # Errors
//!
//! Data that does not fit its schema, a record without the magic byte, an unknown schema id, a
//! schema the registry refuses (409, incompatible) or a subject without the schema:
//! [`ConnectError::Data`] (Java's `DataException`), which `errors.tolerance` and the dead
//! letter queue handle. A registry that does not answer (after the client's retries):
//! [`ConnectError::Retriable`] (Java's `NetworkException`), retried by the runtime within
//! `errors.retry.timeout`; with the default of 0 the task fails, and nothing is skipped or
//! committed past the record. Not supported: schemaless data (Confluent writes it with its
//! `Anything` schema), refused with a [`ConnectError::Data`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tributary_api::config::ConfigDef;
use tributary_api::converter::Converter;
use tributary_api::data::{SchemaAndValue, SchemaRef, Value};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::compat::can_read;
use super::data;
use super::schema::{from_connect_schema, to_connect_schema, AvroSchema, AvroType};
use crate::client::{RegistryClient, RegistryError};
use crate::config::{RegistryConfig, SerdeConfig};
use crate::wire;

/// The converter; see the module docs.
#[derive(Default)]
pub struct AvroConverter {
    state: Option<Configured>,
}

struct Configured {
    is_key: bool,
    client: Arc<RegistryClient>,
    serde: SerdeConfig,
    /// Connect schemas written recently, most recent first.
    writers: Mutex<Vec<(SchemaRef, Arc<WriteSchema>)>>,
    /// Schemas read, by id, then by topic (the version is the subject's, and the subject may
    /// depend on the topic).
    readers: Mutex<HashMap<i32, ReadersOfId>>,
    /// Latest versions (`use.latest.version`) by subject, with when they were fetched.
    latest: Mutex<HashMap<String, (Instant, Arc<Target>)>>,
}

/// What writing one Connect schema needs: its Avro schema (text and parsed), the name the
/// subject strategies use, and the id it was given per topic.
struct WriteSchema {
    text: String,
    avro: AvroSchema,
    record_name: String,
    ids: Mutex<HashMap<String, Arc<Target>>>,
}

/// The schema a record is written with: its id and parsed Avro schema.
struct Target {
    id: i32,
    avro: Option<AvroSchema>,
}

/// The schemas read for one id, by topic.
type ReadersOfId = Vec<(String, Arc<ReadSchema>)>;

struct ReadSchema {
    avro: AvroSchema,
    connect: SchemaRef,
}

impl AvroConverter {
    /// An unconfigured converter.
    pub fn new() -> AvroConverter {
        AvroConverter::default()
    }

    fn state(&self) -> ConnectResult<&Configured> {
        self.state
            .as_ref()
            .ok_or_else(|| ConnectError::connect("AvroConverter used before configure"))
    }
}

/// The name a subject strategy uses for an Avro schema: a named type's full name, else the
/// type's name (`AvroSchema.name()`).
fn record_name(avro: &AvroSchema) -> String {
    match &avro.root {
        AvroType::Ref(i) => avro.named(*i).full_name.clone(),
        AvroType::Primitive { ty, .. } => ty.clone(),
        AvroType::Array { .. } => "array".into(),
        AvroType::Map { .. } => "map".into(),
        AvroType::Union(_) => "union".into(),
    }
}

fn serialize_error(topic: &str, e: RegistryError) -> ConnectError {
    match e {
        RegistryError::Unavailable(m) => ConnectError::Retriable(format!(
            "Network connection error while serializing Avro data for topic {topic}: {m}"
        )),
        other => ConnectError::data(format!(
            "Failed to serialize Avro data from topic {topic}: {other}"
        )),
    }
}

fn deserialize_error(topic: &str, e: impl std::fmt::Display, retriable: bool) -> ConnectError {
    if retriable {
        ConnectError::Retriable(format!(
            "Network connection error while deserializing data for topic {topic}: {e}"
        ))
    } else {
        ConnectError::data(format!(
            "Failed to deserialize data for topic {topic} to Avro: {e}"
        ))
    }
}

impl Configured {
    fn write_schema(&self, schema: &SchemaRef) -> ConnectResult<Arc<WriteSchema>> {
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
        let text = from_connect_schema(&self.serde.avro, schema)?;
        let avro = AvroSchema::parse(&text, &[])?;
        let write = Arc::new(WriteSchema {
            record_name: record_name(&avro),
            text,
            avro,
            ids: Mutex::new(HashMap::new()),
        });
        let mut writers = self.writers.lock().unwrap();
        writers.insert(0, (schema.clone(), write.clone()));
        writers.truncate(self.serde.avro.schemas_cache_size);
        Ok(write)
    }

    /// The id (and, when not the record's own, the schema) a record of `topic` is written with.
    fn target(&self, topic: &str, write: &WriteSchema) -> ConnectResult<Arc<Target>> {
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
                .map_err(|e| serialize_error(topic, e))?;
            let avro = AvroSchema::parse(&registered.schema, &registered.references)?;
            if self.serde.id_compatibility_strict && !can_read(&write.avro, &avro) {
                return Err(ConnectError::data(format!(
                    "Failed to serialize Avro data from topic {topic}: Schema with id {id} is not \
                     compatible with the record's schema {}",
                    write.text
                )));
            }
            Arc::new(Target {
                id,
                avro: Some(avro),
            })
        } else if self.serde.use_latest_version {
            return self.latest(topic, &subject, write);
        } else {
            let id = self
                .client
                .id_for(
                    &subject,
                    "AVRO",
                    &write.text,
                    self.serde.auto_register,
                    self.serde.normalize,
                )
                .map_err(|e| serialize_error(topic, e))?;
            Arc::new(Target { id, avro: None })
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
        write: &WriteSchema,
    ) -> ConnectResult<Arc<Target>> {
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
            .map_err(|e| serialize_error(topic, e))?;
        let avro = AvroSchema::parse(&latest.schema, &[])?;
        if self.serde.latest_compatibility_strict && !can_read(&write.avro, &avro) {
            return Err(ConnectError::data(format!(
                "Failed to serialize Avro data from topic {topic}: Latest schema of subject \
                 {subject} (version {}) is not backward compatible with the record's schema {}",
                latest.version, write.text
            )));
        }
        let target = Arc::new(Target {
            id: latest.id,
            avro: Some(avro),
        });
        self.latest
            .lock()
            .unwrap()
            .insert(subject.to_string(), (Instant::now(), target.clone()));
        Ok(target)
    }

    fn read_schema(&self, topic: &str, id: i32) -> ConnectResult<Arc<ReadSchema>> {
        if let Some(list) = self.readers.lock().unwrap().get(&id) {
            if let Some((_, r)) = list.iter().find(|(t, _)| t == topic) {
                return Ok(r.clone());
            }
        }
        let fail = |e: RegistryError| {
            let retriable = matches!(e, RegistryError::Unavailable(_));
            let kind = if self.is_key { "key" } else { "value" };
            let msg = match &e {
                RegistryError::Rest { .. } if e.is_not_found() => {
                    format!("Error retrieving Avro {kind} schema for id {id}: {e}")
                }
                _ => format!("Error retrieving Avro {kind} schema for id {id}: {e}"),
            };
            deserialize_error(topic, msg, retriable)
        };
        let registered = self.client.schema_by_id(id).map_err(fail)?;
        if registered.schema_type != "AVRO" {
            return Err(deserialize_error(
                topic,
                format!(
                    "Schema with id {id} is a {} schema, not Avro",
                    registered.schema_type
                ),
                false,
            ));
        }
        let avro = AvroSchema::parse(&registered.schema, &registered.references)
            .map_err(|e| deserialize_error(topic, e, false))?;
        let subject = self
            .serde
            .subject_strategy
            .subject(topic, self.is_key, &record_name(&avro));
        let version = self
            .client
            .version_of(&subject, id, &registered)
            .map_err(|e| {
                let retriable = matches!(e, RegistryError::Unavailable(_));
                let kind = if self.is_key { "key" } else { "value" };
                deserialize_error(
                    topic,
                    format!("Error retrieving Avro {kind} schema version for id {id}: {e}"),
                    retriable,
                )
            })?;
        let connect = to_connect_schema(&self.serde.avro, &avro, Some(version))
            .map_err(|e| deserialize_error(topic, e, false))?;
        let read = Arc::new(ReadSchema { avro, connect });
        let mut readers = self.readers.lock().unwrap();
        if readers.len() >= self.serde.avro.schemas_cache_size {
            readers.clear();
        }
        readers
            .entry(id)
            .or_default()
            .push((topic.to_string(), read.clone()));
        Ok(read)
    }
}

impl Converter for AvroConverter {
    fn configure(&mut self, configs: &Props, is_key: bool) -> ConnectResult<()> {
        let client = RegistryConfig::from_props(configs)?;
        let serde = SerdeConfig::from_props(configs, is_key)?;
        self.state = Some(Configured {
            is_key,
            client: Arc::new(RegistryClient::new(&client)),
            serde,
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
                "Failed to serialize Avro data from topic {topic}: schemaless data (a {} value \
                 without a schema) is not supported by Tributary's AvroConverter",
                value.kind_name()
            )));
        };
        if value.is_null() {
            if !schema.optional && schema.default_value.is_none() {
                return Err(ConnectError::data(format!(
                    "Failed to serialize Avro data from topic {topic}: Found null value for non-optional schema"
                )));
            }
            return Ok(None);
        }
        let write = state.write_schema(schema)?;
        let target = state.target(topic, &write)?;
        let avro = target.avro.as_ref().unwrap_or(&write.avro);
        let mut out = wire::header(target.id);
        data::encode(avro, schema, value, &mut out).map_err(|e| {
            ConnectError::data(format!(
                "Failed to serialize Avro data from topic {topic}: {e}"
            ))
        })?;
        Ok(Some(out))
    }

    fn to_connect_data(&self, topic: &str, value: Option<&[u8]>) -> ConnectResult<SchemaAndValue> {
        let state = self.state()?;
        let Some(bytes) = value else {
            return Ok(SchemaAndValue::null());
        };
        let (id, datum) = wire::split(bytes).map_err(|e| deserialize_error(topic, e, false))?;
        let read = state.read_schema(topic, id)?;
        let value = data::decode(&read.avro, &read.connect, datum)
            .map_err(|e| deserialize_error(topic, e, false))?;
        Ok(SchemaAndValue {
            schema: Some(read.connect.clone()),
            value,
        })
    }

    fn config(&self) -> ConfigDef {
        crate::config::config_def()
    }
}
