//! A client of a schema registry's Confluent-compatible REST API (Confluent's
//! `CachedSchemaRegistryClient` and `RestService`): registers and looks up schemas, reads them by
//! id, and caches every answer, so a steady stream of records makes no request.
//!
//! Requests go to the first URL of `schema.registry.url` that answers; a connection failure
//! or a 5xx, 408 or 429 answer moves on to the next URL, and after every URL was tried, waits
//! (`retries.wait.ms`, doubling up to `retries.max.wait.ms`) and tries again, `max.retries`
//! times. What still fails is a [`RegistryError::Unavailable`] (the converters report it as a
//! retriable error); a 4xx answer is a [`RegistryError::Rest`] with the registry's
//! `error_code` and `message`.
//!
//! Blocking: the converters run on task threads, never on the async runtime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value as Json};

use crate::config::{Auth, RegistryConfig};

/// What a registry request can end in.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The registry answered with an error (4xx): its `error_code` (e.g. 40403, schema not
    /// found; 409, incompatible) and `message`.
    #[error("{message}; error code: {error_code}")]
    Rest {
        /// The HTTP status.
        status: u16,
        /// The registry's `error_code` (Confluent's codes: 40401 subject not found, 40403
        /// schema not found, 409 incompatible, 42201 invalid schema, …), or the status.
        error_code: i64,
        /// The registry's message.
        message: String,
    },
    /// No URL answered (connection refused, timeouts, 5xx/408/429) after every retry.
    #[error("schema registry unavailable: {0}")]
    Unavailable(String),
    /// An answer that is not the JSON the API promises.
    #[error("unexpected schema registry answer: {0}")]
    Protocol(String),
}

impl RegistryError {
    /// Whether the registry answered that it does not have what was asked (40401, 40402,
    /// 40403, any 404).
    pub fn is_not_found(&self) -> bool {
        matches!(self, RegistryError::Rest { status: 404, .. })
    }
}

/// A schema as `GET /schemas/ids/{id}` returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct RegisteredSchema {
    /// `schemaType`: `AVRO` (the default when absent), `PROTOBUF` or `JSON`.
    pub schema_type: String,
    /// The schema text.
    pub schema: String,
    /// The texts of the schemas it references (depth first, each once), resolved through
    /// `GET /subjects/{subject}/versions/{version}`.
    pub references: Vec<String>,
}

/// A subject's version as `GET /subjects/{subject}/versions/latest` returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubjectVersion {
    /// The schema id.
    pub id: i32,
    /// The version within the subject.
    pub version: i32,
    /// The schema text.
    pub schema: String,
}

/// The client. Cheap to share (`Arc`); its caches are behind locks held only to read or insert.
pub struct RegistryClient {
    urls: Vec<String>,
    agent: ureq::Agent,
    auth_header: Option<String>,
    headers: Vec<(String, String)>,
    max_retries: u32,
    retry_wait: Duration,
    retry_max_wait: Duration,
    ids: Mutex<HashMap<(String, String), i32>>,
    schemas: Mutex<HashMap<i32, Arc<RegisteredSchema>>>,
    versions: Mutex<HashMap<(String, i32), i32>>,
    /// Index of the URL that answered last: the next request starts there.
    current: Mutex<usize>,
}

/// Caches keep at most this many entries each (Confluent's `max.schemas.per.subject` default
/// is 1000 per subject); past it they start again empty.
const CACHE_LIMIT: usize = 10_000;

impl RegistryClient {
    /// A client for `config` (URLs, credentials, TLS, headers, timeouts, retries).
    pub fn new(config: &RegistryConfig) -> RegistryClient {
        let mut builder = ureq::AgentBuilder::new()
            .timeout_connect(config.connect_timeout)
            .timeout_read(config.read_timeout)
            .timeout_write(config.read_timeout);
        if let Some(tls) = &config.tls {
            builder = builder.tls_config(tls.clone());
        }
        let auth_header = match &config.auth {
            Auth::None => None,
            Auth::Basic(user_info) => Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(user_info)
            )),
            Auth::Bearer(token) => Some(format!("Bearer {token}")),
        };
        RegistryClient {
            urls: config.urls.clone(),
            agent: builder.build(),
            auth_header,
            headers: config.headers.clone(),
            max_retries: config.max_retries,
            retry_wait: config.retry_wait,
            retry_max_wait: config.retry_max_wait,
            ids: Mutex::new(HashMap::new()),
            schemas: Mutex::new(HashMap::new()),
            versions: Mutex::new(HashMap::new()),
            current: Mutex::new(0),
        }
    }

    /// The id of `schema` under `subject`, registering it when `register` (`POST
    /// /subjects/{subject}/versions`), else looking it up (`POST /subjects/{subject}`, 40401 /
    /// 40403 when absent). Cached by subject and text.
    pub fn id_for(
        &self,
        subject: &str,
        schema_type: &str,
        schema: &str,
        register: bool,
        normalize: bool,
    ) -> Result<i32, RegistryError> {
        let key = (subject.to_string(), schema.to_string());
        if let Some(id) = self.ids.lock().unwrap().get(&key) {
            return Ok(*id);
        }
        let mut body = json!({ "schema": schema });
        if schema_type != "AVRO" {
            body["schemaType"] = Json::from(schema_type);
        }
        let path = if register {
            format!(
                "/subjects/{}/versions?normalize={normalize}",
                encode(subject)
            )
        } else {
            format!(
                "/subjects/{}?normalize={normalize}&deleted=false",
                encode(subject)
            )
        };
        let answer = self.request("POST", &path, Some(&body))?;
        let id = answer
            .get("id")
            .and_then(Json::as_i64)
            .and_then(|i| i32::try_from(i).ok())
            .ok_or_else(|| RegistryError::Protocol(format!("no id in {answer}")))?;
        if let Some(v) = answer.get("version").and_then(Json::as_i64) {
            insert_bounded(&self.versions, (subject.to_string(), id), v as i32);
        }
        insert_bounded(&self.ids, key, id);
        Ok(id)
    }

    /// The schema with id `id` (`GET /schemas/ids/{id}`), references resolved. Cached by id.
    pub fn schema_by_id(&self, id: i32) -> Result<Arc<RegisteredSchema>, RegistryError> {
        if let Some(s) = self.schemas.lock().unwrap().get(&id) {
            return Ok(s.clone());
        }
        let answer = self.request("GET", &format!("/schemas/ids/{id}"), None)?;
        let schema = self.registered(&answer)?;
        let schema = Arc::new(schema);
        insert_bounded(&self.schemas, id, schema.clone());
        Ok(schema)
    }

    /// The version of schema `id` (text `schema`) under `subject` (`POST /subjects/{subject}`),
    /// as Confluent's deserializer asks it for Connect. Cached by subject and id.
    pub fn version_of(
        &self,
        subject: &str,
        id: i32,
        schema: &RegisteredSchema,
    ) -> Result<i32, RegistryError> {
        let key = (subject.to_string(), id);
        if let Some(v) = self.versions.lock().unwrap().get(&key) {
            return Ok(*v);
        }
        let mut body = json!({ "schema": schema.schema });
        if schema.schema_type != "AVRO" {
            body["schemaType"] = Json::from(schema.schema_type.as_str());
        }
        let answer = self.request(
            "POST",
            &format!("/subjects/{}?normalize=false&deleted=true", encode(subject)),
            Some(&body),
        )?;
        let version = answer
            .get("version")
            .and_then(Json::as_i64)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| RegistryError::Protocol(format!("no version in {answer}")))?;
        insert_bounded(&self.versions, key, version);
        Ok(version)
    }

    /// The latest version of `subject` (`GET /subjects/{subject}/versions/latest`); not cached
    /// here (the converter keeps it for `latest.cache.ttl.sec`).
    pub fn latest(&self, subject: &str) -> Result<SubjectVersion, RegistryError> {
        let answer = self.request(
            "GET",
            &format!("/subjects/{}/versions/latest", encode(subject)),
            None,
        )?;
        let field = |k: &str| {
            answer
                .get(k)
                .and_then(Json::as_i64)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| RegistryError::Protocol(format!("no {k} in {answer}")))
        };
        Ok(SubjectVersion {
            id: field("id")?,
            version: field("version")?,
            schema: answer
                .get("schema")
                .and_then(Json::as_str)
                .ok_or_else(|| RegistryError::Protocol(format!("no schema in {answer}")))?
                .to_string(),
        })
    }

    fn registered(&self, answer: &Json) -> Result<RegisteredSchema, RegistryError> {
        let schema = answer
            .get("schema")
            .and_then(Json::as_str)
            .ok_or_else(|| RegistryError::Protocol(format!("no schema in {answer}")))?
            .to_string();
        let schema_type = answer
            .get("schemaType")
            .and_then(Json::as_str)
            .unwrap_or("AVRO")
            .to_string();
        let mut references = Vec::new();
        let mut seen = Vec::new();
        self.resolve_references(answer, &mut references, &mut seen)?;
        Ok(RegisteredSchema {
            schema_type,
            schema,
            references,
        })
    }

    fn resolve_references(
        &self,
        answer: &Json,
        out: &mut Vec<String>,
        seen: &mut Vec<(String, i64)>,
    ) -> Result<(), RegistryError> {
        let Some(refs) = answer.get("references").and_then(Json::as_array) else {
            return Ok(());
        };
        for r in refs {
            let subject = r.get("subject").and_then(Json::as_str).ok_or_else(|| {
                RegistryError::Protocol(format!("reference without subject: {r}"))
            })?;
            let version = r.get("version").and_then(Json::as_i64).unwrap_or(-1);
            if seen.iter().any(|(s, v)| s == subject && *v == version) {
                continue;
            }
            seen.push((subject.to_string(), version));
            let v = if version < 0 {
                "latest".to_string()
            } else {
                version.to_string()
            };
            let referenced = self.request(
                "GET",
                &format!("/subjects/{}/versions/{v}", encode(subject)),
                None,
            )?;
            self.resolve_references(&referenced, out, seen)?;
            if let Some(text) = referenced.get("schema").and_then(Json::as_str) {
                out.push(text.to_string());
            }
        }
        Ok(())
    }

    /// One request with failover over the URLs and retries; the answer's JSON.
    fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&Json>,
    ) -> Result<Json, RegistryError> {
        let mut wait = self.retry_wait;
        let mut last = String::new();
        for attempt in 0..=self.max_retries {
            if attempt > 0 {
                std::thread::sleep(wait);
                wait = (wait * 2).min(self.retry_max_wait);
            }
            let start = *self.current.lock().unwrap();
            for k in 0..self.urls.len() {
                let index = (start + k) % self.urls.len();
                let url = format!("{}{path}", self.urls[index].trim_end_matches('/'));
                let mut req = self.agent.request(method, &url).set(
                    "Accept",
                    "application/vnd.schemaregistry.v1+json, application/json",
                );
                if let Some(h) = &self.auth_header {
                    req = req.set("Authorization", h);
                }
                for (k, v) in &self.headers {
                    req = req.set(k, v);
                }
                let result = match body {
                    Some(b) => req
                        .set("Content-Type", "application/vnd.schemaregistry.v1+json")
                        .send_string(&b.to_string()),
                    None => req.call(),
                };
                match result {
                    Ok(resp) => {
                        *self.current.lock().unwrap() = index;
                        let text = resp
                            .into_string()
                            .map_err(|e| RegistryError::Protocol(e.to_string()))?;
                        return serde_json::from_str(&text)
                            .map_err(|e| RegistryError::Protocol(format!("{e}: {text}")));
                    }
                    Err(ureq::Error::Status(status, resp))
                        if status < 500 && status != 408 && status != 429 =>
                    {
                        *self.current.lock().unwrap() = index;
                        let text = resp.into_string().unwrap_or_default();
                        let parsed: Option<Json> = serde_json::from_str(&text).ok();
                        let error_code = parsed
                            .as_ref()
                            .and_then(|j| j.get("error_code"))
                            .and_then(Json::as_i64)
                            .unwrap_or(i64::from(status));
                        let message = parsed
                            .as_ref()
                            .and_then(|j| j.get("message"))
                            .and_then(Json::as_str)
                            .map(str::to_string)
                            .unwrap_or(text);
                        return Err(RegistryError::Rest {
                            status,
                            error_code,
                            message,
                        });
                    }
                    Err(ureq::Error::Status(status, resp)) => {
                        last = format!(
                            "{method} {url}: HTTP {status} {}",
                            resp.into_string().unwrap_or_default()
                        );
                    }
                    Err(e) => last = format!("{method} {url}: {e}"),
                }
                tracing::debug!("schema registry request failed: {last}");
            }
        }
        Err(RegistryError::Unavailable(last))
    }
}

fn insert_bounded<K: std::hash::Hash + Eq, V>(map: &Mutex<HashMap<K, V>>, k: K, v: V) {
    let mut map = map.lock().unwrap();
    if map.len() >= CACHE_LIMIT {
        map.clear();
    }
    map.insert(k, v);
}

/// A subject as a URL path segment (percent-encoded as Java's `URLEncoder` does for the
/// characters subjects hold).
fn encode(subject: &str) -> String {
    url::form_urlencoded::byte_serialize(subject.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpListener;

    use super::*;
    use crate::config::RegistryConfig;

    /// Serves one request on a local socket, answering `answer`; returns the request's text.
    fn serve_once(answer: &'static str) -> (String, std::thread::JoinHandle<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let handle = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut buf = vec![0u8; 8192];
            let n = socket.read(&mut buf).unwrap();
            let body = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
            socket.write_all(body.as_bytes()).unwrap();
            String::from_utf8_lossy(&buf[..n]).into_owned()
        });
        (url, handle)
    }

    fn client(props: &[(&str, &str)]) -> RegistryClient {
        let props = props
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        RegistryClient::new(&RegistryConfig::from_props(&props).unwrap())
    }

    #[test]
    fn credentials_and_headers_are_sent_as_confluents_client_sends_them() {
        let (url, server) = serve_once(r#"{"schema":"\"string\""}"#);
        let c = client(&[
            ("schema.registry.url", &url),
            ("basic.auth.credentials.source", "USER_INFO"),
            ("basic.auth.user.info", "fred:s3cret"),
            ("request.header.X-Tenant", "blue"),
        ]);
        let s = c.schema_by_id(7).unwrap();
        assert_eq!(s.schema, "\"string\"");
        assert_eq!(s.schema_type, "AVRO");
        let request = server.join().unwrap().to_ascii_lowercase();
        assert!(request.starts_with("get /schemas/ids/7 "), "{request}");
        // base64("fred:s3cret")
        assert!(
            request.contains("authorization: basic znjlzdpzm2nyzxq="),
            "{request}"
        );
        assert!(request.contains("x-tenant: blue"), "{request}");

        // User info in the URL (the default source), taken out of the URL.
        let (url, server) = serve_once(r#"{"schema":"\"int\""}"#);
        let with_user = url.replace("http://", "http://ann:pw@");
        client(&[("schema.registry.url", &with_user)])
            .schema_by_id(1)
            .unwrap();
        let request = server.join().unwrap().to_ascii_lowercase();
        assert!(
            request.contains("authorization: basic yw5uonb3"),
            "{request}"
        );

        let (url, server) = serve_once(r#"{"schema":"\"int\""}"#);
        client(&[
            ("schema.registry.url", &url),
            ("bearer.auth.credentials.source", "STATIC_TOKEN"),
            ("bearer.auth.token", "tok-1"),
        ])
        .schema_by_id(1)
        .unwrap();
        let request = server.join().unwrap().to_ascii_lowercase();
        assert!(request.contains("authorization: bearer tok-1"), "{request}");
    }

    #[test]
    fn a_url_that_does_not_answer_is_skipped_for_the_next() {
        let dead = TcpListener::bind("127.0.0.1:0").unwrap();
        let dead_url = format!("http://{}", dead.local_addr().unwrap());
        drop(dead);
        let (url, server) = serve_once(r#"{"schema":"\"long\""}"#);
        let c = client(&[
            ("schema.registry.url", &format!("{dead_url},{url}")),
            ("max.retries", "0"),
        ]);
        assert_eq!(c.schema_by_id(3).unwrap().schema, "\"long\"");
        server.join().unwrap();
        // Nothing answers any more: unavailable, after the retries.
        let c = client(&[
            ("schema.registry.url", &dead_url),
            ("max.retries", "1"),
            ("retries.wait.ms", "1"),
        ]);
        assert!(matches!(
            c.schema_by_id(3),
            Err(RegistryError::Unavailable(_))
        ));
    }

    #[test]
    fn tls_settings_are_read_and_a_bad_one_names_its_key() {
        let props = [
            ("schema.registry.url", "https://127.0.0.1:1"),
            (
                "schema.registry.ssl.truststore.location",
                "/nonexistent/trust.jks",
            ),
            ("schema.registry.ssl.truststore.password", "x"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let err = RegistryConfig::from_props(&props)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("schema.registry.ssl.truststore.location"),
            "{err}"
        );
        let props = [("schema.registry.url", "https://127.0.0.1:1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert!(RegistryConfig::from_props(&props).unwrap().tls.is_some());
    }
}
