//! A client of Connect's REST API for the CLI's commands (`tributary apply`): one or more
//! worker URLs tried in order, basic auth, HTTPS with a CA file. It speaks only the REST API,
//! so it works against Tributary and Java Connect alike.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

/// How long one request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// Where and how to reach a Connect cluster.
pub struct ConnectClient {
    urls: Vec<String>,
    http: reqwest::Client,
    /// `user:password` for basic auth (from `--user`, or a URL's user info).
    auth: Option<(String, String)>,
}

/// An answer that was not a success: the status and Connect's `message` (or the body).
#[derive(Debug, Clone)]
pub struct RestError {
    /// The HTTP status (0 when no worker answered).
    pub status: u16,
    /// Connect's `{"error_code","message"}` message, or the body, or the transport error.
    pub message: String,
}

impl std::fmt::Display for RestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.status == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "{} {}", self.status, self.message)
        }
    }
}

impl ConnectClient {
    /// A client of the workers at `urls` (tried in order; a transport failure moves on to the
    /// next, an HTTP answer does not). `user` is `name:password`; a URL's own user info
    /// (`http://name:password@host:8083`) is used when `user` is not given. `ca_file` is a PEM
    /// file of CA certificates trusted for `https://` URLs. Errors: no URL, an unreadable CA
    /// file, a `user` without `:`.
    pub fn new(
        urls: &[String],
        user: Option<&str>,
        ca_file: Option<&Path>,
    ) -> Result<ConnectClient, String> {
        if urls.is_empty() {
            return Err("no worker URL given".into());
        }
        let mut auth = match user {
            Some(u) => Some(
                u.split_once(':')
                    .map(|(n, p)| (n.to_string(), p.to_string()))
                    .ok_or_else(|| format!("--user {u:?}: expected name:password"))?,
            ),
            None => None,
        };
        let mut clean = Vec::new();
        for raw in urls {
            let mut url =
                reqwest::Url::parse(raw.trim()).map_err(|e| format!("worker URL {raw:?}: {e}"))?;
            if !url.username().is_empty() && auth.is_none() {
                let name = percent_decode(url.username());
                let password = percent_decode(url.password().unwrap_or(""));
                auth = Some((name, password));
            }
            // Neither the user info nor a trailing slash is part of the paths asked for.
            if url.set_username("").is_err() || url.set_password(None).is_err() {
                return Err(format!(
                    "worker URL {raw:?}: not an http(s) URL with a host"
                ));
            }
            clean.push(url.as_str().trim_end_matches('/').to_string());
        }
        let mut builder = reqwest::Client::builder().timeout(REQUEST_TIMEOUT);
        let mut roots = 0;
        if let Some(ca) = ca_file {
            let pem = std::fs::read(ca)
                .map_err(|e| format!("{}: cannot read the CA file: {e}", ca.display()))?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("{}: not a PEM certificate file: {e}", ca.display()))?;
            for c in certs {
                builder = builder.add_root_certificate(c);
                roots += 1;
            }
            if roots == 0 {
                return Err(format!("{}: no certificate in the CA file", ca.display()));
            }
        }
        let http = builder
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(ConnectClient {
            urls: clean,
            http,
            auth,
        })
    }

    /// `method path` with an optional JSON body; the parsed JSON answer (`Value::Null` for an
    /// empty body). Errors: every URL failed to answer, or the answer was not a 2xx.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, RestError> {
        let mut last = String::new();
        for base in &self.urls {
            let mut req = self.http.request(method.clone(), format!("{base}{path}"));
            if let Some((n, p)) = &self.auth {
                req = req.basic_auth(n, Some(p));
            }
            if let Some(b) = body {
                req = req.json(b);
            }
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    last = format!("{base}: {e}");
                    continue;
                }
            };
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            let json: Value = if text.trim().is_empty() {
                Value::Null
            } else {
                serde_json::from_str(&text).unwrap_or(Value::String(text.clone()))
            };
            if (200..300).contains(&status) {
                return Ok(json);
            }
            let message = json
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or(text);
            return Err(RestError { status, message });
        }
        Err(RestError {
            status: 0,
            message: format!("no worker answered: {last}"),
        })
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Result<Value, RestError> {
        self.call(reqwest::Method::GET, path, None).await
    }
}

/// A URL path segment for a connector name (Connect's names may hold any character).
pub fn segment(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// Decodes `%XX` escapes of a URL's user info.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_path_segments() {
        assert_eq!(segment("my-conn_1.x"), "my-conn_1.x");
        assert_eq!(segment("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn user_info_of_a_url_is_the_basic_auth() {
        let c = ConnectClient::new(
            &["http://ad%40min:p%3Ass@127.0.0.1:8083/".into()],
            None,
            None,
        )
        .unwrap();
        assert_eq!(c.auth, Some(("ad@min".into(), "p:ss".into())));
        assert_eq!(c.urls, ["http://127.0.0.1:8083"]);
        let c = ConnectClient::new(
            &["http://x:y@127.0.0.1:8083".into()],
            Some("me:secret"),
            None,
        )
        .unwrap();
        assert_eq!(c.auth, Some(("me".into(), "secret".into())));
        assert!(ConnectClient::new(&["http://h:1".into()], Some("nocolon"), None).is_err());
        assert!(ConnectClient::new(&[], None, None).is_err());
    }
}
