//! A small blocking client for a worker's REST API (JSON in, JSON out).

use std::time::Duration;

use serde_json::Value;

/// A worker's REST API at a base URL such as `http://127.0.0.1:8083`.
pub struct Rest {
    base: String,
    client: reqwest::blocking::Client,
}

impl Rest {
    /// A client for the worker at `base` whose requests time out after `timeout`.
    pub fn new(base: &str, timeout: Duration) -> Result<Rest, String> {
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        Ok(Rest {
            base: base.trim_end_matches('/').to_string(),
            client,
        })
    }

    /// The base URL.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Sends `method path` with an optional JSON body; returns the status code and the body
    /// parsed as JSON (`Null` when it is empty or not JSON). Connection errors are errors.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(u16, Value), String> {
        let method: reqwest::Method = method
            .parse()
            .map_err(|e| format!("HTTP method {method}: {e}"))?;
        let url = format!("{}{path}", self.base);
        let mut req = self.client.request(method.clone(), &url);
        if let Some(b) = body {
            req = req
                .header("Content-Type", "application/json")
                .body(b.to_string());
        }
        let resp = req.send().map_err(|e| format!("{method} {url}: {e}"))?;
        let status = resp.status().as_u16();
        let text = resp.text().map_err(|e| format!("{method} {url}: {e}"))?;
        Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
    }

    /// `GET path`.
    pub fn get(&self, path: &str) -> Result<(u16, Value), String> {
        self.send("GET", path, None)
    }
}
