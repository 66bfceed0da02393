//! The HTTP client one worker uses to reach another worker's REST API (request forwarding,
//! task configs sent to the leader, Connect's `RestClient`) and the URLs of that API. Shared
//! by `rest` and `herder`, so neither depends on the other for them.

/// The HTTP client for requests to other workers (forwarding, task configs to the leader): it
/// trusts the REST trust store (`listeners.https.ssl.*` or `ssl.*`) and presents the REST key
/// store to peers that ask for client certificates. Errors are `(key, message)`.
pub fn peer_http_client(
    config: &crate::config::worker::WorkerConfig,
) -> Result<reqwest::Client, (String, String)> {
    let raw: std::collections::BTreeMap<String, String> = config
        .raw_map()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let (ssl, prefix) = tributary_security::tls::rest_ssl_settings(&raw);
    let client_tls = tributary_security::tls::rest_client_config(&ssl, prefix)
        .map_err(|e| (e.key, e.message))?;
    reqwest::Client::builder()
        .use_preconfigured_tls(client_tls)
        .build()
        .map_err(|e| {
            (
                "listeners".to_string(),
                format!("cannot build the HTTPS client: {e}"),
            )
        })
}

/// Characters a connector name keeps unescaped in a `Location` path segment: RFC 3986's
/// unreserved characters and sub-delimiters, `:` and `@` (as JAX-RS `UriBuilder.path` does).
const PATH_SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b':')
    .remove(b'@');

/// The path prefix of a REST namespace (MirrorMaker's dedicated mode, KIP-710: `/<source>/<target>`
/// for a flow's herder), each segment percent-encoded; empty for no namespace.
pub fn namespace_path(segments: &[String]) -> String {
    segments
        .iter()
        .map(|s| {
            format!(
                "/{}",
                percent_encoding::utf8_percent_encode(s, JAVA_URL_ENCODED)
            )
        })
        .collect()
}

/// What Java's `URLEncoder.encode` (UTF-8) leaves as it is: letters, digits and `.-*_`; a
/// space is `+` there, which MirrorMaker's `encodePath` turns into `%20`, as encoding it here
/// does.
const JAVA_URL_ENCODED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'.')
    .remove(b'-')
    .remove(b'*')
    .remove(b'_');

/// `<advertised url>/connectors/<name>` with the name percent-encoded as one path segment
/// (UTF-8), so that following the URL finds the connector.
pub fn connector_url(base: &str, name: &str) -> String {
    format!(
        "{base}/connectors/{}",
        percent_encoding::utf8_percent_encode(name, PATH_SEGMENT)
    )
}
