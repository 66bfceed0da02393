//! HTTP basic authentication as Connect's `BasicAuthSecurityRestExtension` does it
//! (`rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension`):
//! the JAAS file named by `-Djava.security.auth.login.config=…` in `KAFKA_OPTS` holds a
//! `KafkaConnect` context with `PropertyFileLoginModule required file="…";`, and that
//! properties file maps user names to passwords.
//!
//! As in Connect's `JaasBasicAuthFilter`: requests without valid credentials get 401 with the
//! body `User cannot access the resource.`; the internal requests between workers
//! (`POST /connectors/{c}/tasks`, `PUT /connectors/{c}/fence`) pass without credentials, since
//! the session key (KIP-507) signs them.

use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use base64::Engine;

/// Connect's class name for the extension.
pub const BASIC_AUTH_EXTENSION: &str =
    "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension";
const LOGIN_MODULE: &str = "PropertyFileLoginModule";
const CONTEXT: &str = "KafkaConnect";

/// The users allowed in, from the credentials file; read again when the JAAS file or a
/// credentials file changes (issue #42), a file that no longer loads keeping the previous
/// users in force.
#[derive(Clone)]
pub struct BasicAuth {
    users: Arc<RwLock<Arc<HashMap<String, String>>>>,
}

impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BasicAuth({} users)", self.users.read().unwrap().len())
    }
}

/// The JAAS file of `-Djava.security.auth.login.config=PATH` in a `KAFKA_OPTS`-style string.
pub fn jaas_path_from_opts(opts: &str) -> Option<String> {
    opts.split_whitespace()
        .find_map(|o| o.strip_prefix("-Djava.security.auth.login.config="))
        .map(|p| p.trim_matches('"').to_string())
}

/// Why the JAAS file of the basic-auth extension cannot be used (each names the file).
#[derive(Debug, thiserror::Error)]
pub enum JaasError {
    /// The JAAS file cannot be read.
    #[error("cannot read the JAAS file {path}: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The JAAS file is not in JAAS syntax.
    #[error("{path}: {message}")]
    Malformed { path: String, message: String },
    /// No `KafkaConnect` login context.
    #[error("{path}: no {CONTEXT} login context")]
    NoContext { path: String },
    /// A login module other than `PropertyFileLoginModule` (Java code).
    #[error(
        "{path}: login module {class} is Java code Tributary cannot run (it has {LOGIN_MODULE})"
    )]
    LoginModule { path: String, class: String },
    /// `PropertyFileLoginModule` without its `file` option.
    #[error("{path}: {LOGIN_MODULE} needs the option file")]
    NoFileOption { path: String },
    /// The credentials file cannot be read or parsed.
    #[error("credentials file {file}: {message}")]
    Credentials { file: String, message: String },
}

impl BasicAuth {
    /// Reads the JAAS file and the credentials file it names. Errors say which file and what
    /// is wrong ([`JaasError`]): a missing `KafkaConnect` context, a login module other than
    /// `PropertyFileLoginModule`, a missing `file` option, an unreadable file.
    pub fn from_jaas_file(path: &Path) -> Result<BasicAuth, JaasError> {
        let (users, files) = Self::load(path)?;
        let auth = BasicAuth::with_users(users);
        auth.watch(path.to_path_buf(), files);
        Ok(auth)
    }

    fn with_users(users: HashMap<String, String>) -> BasicAuth {
        BasicAuth {
            users: Arc::new(RwLock::new(Arc::new(users))),
        }
    }

    /// Reads the JAAS file at `path` again whenever it or a credentials file it names changes.
    fn watch(&self, path: PathBuf, credentials: Vec<PathBuf>) {
        let weak = Arc::downgrade(&self.users);
        let alive = weak.clone();
        let mut files = vec![path.clone()];
        files.extend(credentials.iter().cloned());
        crate::config::file_watch::watch(
            "basic-auth-files",
            files,
            move || alive.strong_count() > 0,
            move || {
                let Some(users) = weak.upgrade() else {
                    return false;
                };
                match Self::load(&path) {
                    Ok((loaded, now)) => {
                        tracing::info!(
                            file = %path.display(),
                            users = loaded.len(),
                            "basic-auth credentials reloaded"
                        );
                        *users.write().unwrap() = Arc::new(loaded);
                        if now != credentials {
                            // The JAAS file names other credentials files: watch those.
                            BasicAuth { users }.watch(path.clone(), now);
                            return false;
                        }
                    }
                    Err(e) => {
                        tracing::error!("{e}; the previous basic-auth credentials stay in force")
                    }
                }
                true
            },
        );
    }

    /// The users of the JAAS file at `path` and the credentials files it names.
    fn load(path: &Path) -> Result<(HashMap<String, String>, Vec<PathBuf>), JaasError> {
        let at = || path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| JaasError::Unreadable {
            path: at(),
            source: e,
        })?;
        let contexts =
            tributary_security::jaas::parse_file(&text).map_err(|e| JaasError::Malformed {
                path: at(),
                message: e.to_string(),
            })?;
        let modules = contexts
            .get(CONTEXT)
            .ok_or_else(|| JaasError::NoContext { path: at() })?;
        let mut users = HashMap::new();
        let mut files = Vec::new();
        for m in modules {
            if m.simple_name() != LOGIN_MODULE {
                return Err(JaasError::LoginModule {
                    path: at(),
                    class: m.class.clone(),
                });
            }
            let file = m
                .options
                .get("file")
                .ok_or_else(|| JaasError::NoFileOption { path: at() })?;
            let props =
                crate::config::properties::load_properties(Path::new(file)).map_err(|e| {
                    JaasError::Credentials {
                        file: file.clone(),
                        message: e.to_string(),
                    }
                })?;
            users.extend(props);
            files.push(PathBuf::from(file));
        }
        Ok((users, files))
    }

    /// Whether an `Authorization` header value holds valid credentials.
    pub fn accepts(&self, header: Option<&str>) -> bool {
        let Some(header) = header else {
            return false;
        };
        let Some((scheme, value)) = header.split_once(' ') else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case("basic") {
            return false;
        }
        let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(value.trim()) else {
            return false;
        };
        let Ok(decoded) = String::from_utf8(decoded) else {
            return false;
        };
        let Some((user, password)) = decoded.split_once(':') else {
            return false;
        };
        let users = self.users.read().unwrap().clone();
        users.get(user).is_some_and(|p| p == password)
    }
}

/// The user name of a `Basic` `Authorization` header value (not checked here).
pub fn basic_user(header: &str) -> Option<String> {
    let (scheme, value) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(value.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    decoded.split_once(':').map(|(u, _)| u.to_string())
}

/// Whether a request is one of the internal requests Connect's filter lets through.
pub(crate) fn internal_request(method: &Method, path: &str) -> bool {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        ["connectors", c, "tasks"] => method == Method::POST && !c.is_empty(),
        ["connectors", c, "fence"] => method == Method::PUT && !c.is_empty(),
        _ => false,
    }
}

/// The middleware: 401 unless the request is internal or carries valid credentials.
pub async fn require(State(auth): State<BasicAuth>, req: Request, next: Next) -> Response {
    if internal_request(req.method(), req.uri().path()) {
        return next.run(req).await;
    }
    let header = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok());
    if auth.accepts(header) {
        next.run(req).await
    } else {
        tracing::debug!(path = %req.uri().path(), "request failed authentication");
        (StatusCode::UNAUTHORIZED, "User cannot access the resource.").into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth() -> BasicAuth {
        let mut users = HashMap::new();
        users.insert("admin".to_string(), "s3cr:et".to_string());
        BasicAuth::with_users(users)
    }

    fn basic(user_pass: &str) -> String {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(user_pass)
        )
    }

    #[test]
    fn credentials_are_checked_as_connect_does() {
        let a = auth();
        assert!(a.accepts(Some(&basic("admin:s3cr:et"))));
        assert!(a.accepts(Some(&basic("admin:s3cr:et").replace("Basic", "basic"))));
        assert!(!a.accepts(Some(&basic("admin:wrong"))));
        assert!(!a.accepts(Some(&basic("nobody:s3cr:et"))));
        assert!(!a.accepts(Some("Bearer abc")));
        assert!(!a.accepts(Some("Basic !!!")));
        assert!(!a.accepts(None));
    }

    #[test]
    fn only_the_internal_requests_are_exempt() {
        assert!(internal_request(&Method::POST, "/connectors/a/tasks"));
        assert!(internal_request(&Method::POST, "/connectors/a/tasks/"));
        assert!(internal_request(&Method::PUT, "/connectors/a/fence"));
        assert!(!internal_request(&Method::GET, "/connectors/a/tasks"));
        assert!(!internal_request(&Method::POST, "/connectors"));
        assert!(!internal_request(&Method::PUT, "/connectors/a/config"));
    }

    #[test]
    fn the_jaas_file_names_the_credentials() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("users.properties");
        std::fs::write(&creds, "alice=pw1\nbob: pw2\n").unwrap();
        let jaas = dir.path().join("connect.jaas");
        std::fs::write(
            &jaas,
            format!(
                "KafkaConnect {{\n org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n file=\"{}\";\n}};\n",
                creds.display()
            ),
        )
        .unwrap();
        let a = BasicAuth::from_jaas_file(&jaas).unwrap();
        assert!(a.accepts(Some(&basic("bob:pw2"))));
        assert_eq!(
            jaas_path_from_opts("-Xmx1g -Djava.security.auth.login.config=/etc/c.jaas"),
            Some("/etc/c.jaas".to_string())
        );
        std::fs::write(&jaas, "Other { a.B required; };").unwrap();
        assert!(BasicAuth::from_jaas_file(&jaas)
            .unwrap_err()
            .to_string()
            .contains("no KafkaConnect login context"));
    }
}
