//! Authorization on the REST API (issue #36; Connect has none beyond basic auth): a policy
//! file, `tributary.rest.authorization.file`, maps principals to roles over connector name
//! patterns. The principal of a request is its basic-auth user, else the subject of its TLS
//! client certificate (`ssl.client.auth=required` listeners), else `anonymous`; a request a
//! follower forwards to the leader carries the caller's principal signed with the session key
//! (KIP-507's key), so a follower cannot be used to act as another principal.
//!
//! The file, one rule per line (`#` starts a comment):
//!
//! ```text
//! <principal> <role> [<connector pattern> ...] [hide-config]
//! ```
//!
//! - principal: a user name, a certificate subject (its full DN, `CN=app,O=acme`, or its CN
//!   alone), `*` (anyone authenticated) or `anonymous`;
//! - role: `read` (GET), `operate` (also pause, resume, restart, stop, reading offsets),
//!   `write` (also create, update, delete, altering and resetting offsets), `admin` (also the
//!   loggers and everything not about one connector); each includes the ones before it;
//! - patterns: connector names, `*` matching any run of characters; none means `*`;
//! - `hide-config`: for these connectors the rule does not show configs (`GET …/config`, the
//!   connector's info, its task configs) nor what is derived from them (issue #42): status
//!   traces are left out of its answers, offsets and topics are refused, `/metrics` leaves out
//!   their samples labelled by topic; a write rule always shows them.
//!
//! Rules add up: what a principal may do to a connector is the strongest role among the rules
//! naming it (or `*`, or `anonymous` for requests without one) and a pattern matching the
//! connector. Listing connectors shows those the principal may read. A refusal is 403 with
//! Connect's error body; every refusal and every write is logged as an audit line.

use std::path::Path;
use std::sync::Mutex;
use std::time::SystemTime;

/// What a rule allows, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    /// GET.
    Read,
    /// Also pause, resume, restart, stop, reading offsets.
    Operate,
    /// Also create, update, delete, altering and resetting offsets.
    Write,
    /// Also the loggers and the worker-wide endpoints.
    Admin,
}

impl Role {
    fn parse(s: &str) -> Option<Role> {
        match s {
            "read" => Some(Role::Read),
            "operate" => Some(Role::Operate),
            "write" => Some(Role::Write),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    /// `read`, `operate`, `write` or `admin`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Read => "read",
            Role::Operate => "operate",
            Role::Write => "write",
            Role::Admin => "admin",
        }
    }
}

/// One line of the policy.
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    principal: String,
    role: Role,
    patterns: Vec<String>,
    hide_config: bool,
}

/// A parsed policy file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    rules: Vec<Rule>,
}

/// The principal a request was made by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// No credentials and no client certificate.
    Anonymous,
    /// A basic-auth user.
    User(String),
    /// A client certificate's subject DN (`CN=app,O=acme`).
    Certificate(String),
}

impl Principal {
    /// The name audit lines and forwarded requests carry: the user, the DN, or `anonymous`.
    pub fn name(&self) -> &str {
        match self {
            Principal::Anonymous => "anonymous",
            Principal::User(u) => u,
            Principal::Certificate(dn) => dn,
        }
    }

    /// The form a forwarded request carries ([`PRINCIPAL_HEADER`]): `user:<name>`,
    /// `certificate:<dn>` or `anonymous`, the name percent-encoded, so that the kind travels
    /// with it (a user named like a DN stays a user) and any name fits a header.
    pub fn to_header(&self) -> String {
        let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        match self {
            Principal::Anonymous => "anonymous".into(),
            Principal::User(u) => format!("user:{}", enc(u)),
            Principal::Certificate(dn) => format!("certificate:{}", enc(dn)),
        }
    }

    /// Parses [`Self::to_header`] back; `None` for another form.
    pub fn from_header(value: &str) -> Option<Principal> {
        let dec = |s: &str| {
            form_urlencoded::parse(format!("x={s}").as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
        };
        if value == "anonymous" {
            return Some(Principal::Anonymous);
        }
        if let Some(u) = value.strip_prefix("user:") {
            return dec(u).map(Principal::User);
        }
        value
            .strip_prefix("certificate:")
            .and_then(dec)
            .map(Principal::Certificate)
    }

    fn matches(&self, rule_principal: &str) -> bool {
        match self {
            Principal::Anonymous => rule_principal == "anonymous",
            _ if rule_principal == "*" => true,
            Principal::User(u) => u == rule_principal,
            Principal::Certificate(dn) => {
                dn == rule_principal || common_name(dn).is_some_and(|cn| cn == rule_principal)
            }
        }
    }
}

/// The CN of a DN (`CN=app,O=acme` → `app`).
fn common_name(dn: &str) -> Option<&str> {
    dn.split(',').map(str::trim).find_map(|part| {
        part.strip_prefix("CN=")
            .or_else(|| part.strip_prefix("cn="))
    })
}

/// Whether `name` matches `pattern` (`*` any run of characters, including none).
pub fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

impl Policy {
    /// Parses a policy. Errors name the line: `line 3: unknown role "reader" (read, operate,
    /// write, admin)`.
    pub fn parse(text: &str) -> Result<Policy, String> {
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let at = |m: String| format!("line {}: {m}", i + 1);
            let [principal, role, rest @ ..] = words.as_slice() else {
                return Err(at(format!(
                    "expected `<principal> <role> [patterns] [hide-config]`, found {line:?}"
                )));
            };
            let role = Role::parse(role).ok_or_else(|| {
                at(format!(
                    "unknown role {role:?} (read, operate, write, admin)"
                ))
            })?;
            let mut patterns = Vec::new();
            let mut hide_config = false;
            for w in rest {
                if *w == "hide-config" {
                    hide_config = true;
                } else if hide_config {
                    return Err(at(format!(
                        "{w:?} after hide-config: patterns come before it"
                    )));
                } else {
                    patterns.push(w.to_string());
                }
            }
            if patterns.is_empty() {
                patterns.push("*".into());
            }
            rules.push(Rule {
                principal: principal.to_string(),
                role,
                patterns,
                hide_config,
            });
        }
        Ok(Policy { rules })
    }

    /// The strongest role `who` has over connector `connector` (`None`: for the worker-wide
    /// endpoints, any pattern), and whether that role shows its config.
    pub fn role(&self, who: &Principal, connector: Option<&str>) -> Option<(Role, bool)> {
        let mut best: Option<Role> = None;
        let mut shows_config = false;
        for r in self.rules.iter().filter(|r| who.matches(&r.principal)) {
            let applies = match connector {
                Some(c) => r.patterns.iter().any(|p| glob(p, c)),
                None => true,
            };
            if !applies {
                continue;
            }
            best = best.max(Some(r.role));
            if !r.hide_config || r.role >= Role::Write {
                shows_config = true;
            }
        }
        best.map(|b| (b, shows_config))
    }

    /// Whether `who` may do what needs `role` to `connector` (config shown when `config`).
    pub fn allows(&self, who: &Principal, need: &Need) -> bool {
        match need {
            Need::Public => true,
            Need::Any(role) => self.role(who, None).is_some_and(|(r, _)| r >= *role),
            Need::Admin => self.role(who, None).is_some_and(|(r, _)| r >= Role::Admin),
            Need::Connector { name, role, config } => self
                .role(who, Some(name))
                .is_some_and(|(r, shows)| r >= *role && (!config || shows)),
        }
    }
}

/// What a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Nothing (`GET /`, `/health`, the internal requests of workers, checked by signature).
    Public,
    /// `role` over any connector (listing connectors, plugins, the live view, metrics).
    Any(Role),
    /// `role` over connector `name`, and its config shown when `config`.
    Connector {
        /// The connector.
        name: String,
        /// The role.
        role: Role,
        /// Whether the answer shows its config.
        config: bool,
    },
    /// The admin role (loggers, worker-wide changes).
    Admin,
}

/// What `method path` needs; `created` is the name of the connector a `POST /connectors`
/// creates (from its body).
pub fn need(method: &str, path: &str, created: Option<&str>) -> Need {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let on = |name: &str, role: Role, config: bool| Need::Connector {
        name: percent_decode(name),
        role,
        config,
    };
    match (method, parts.as_slice()) {
        (_, [""]) | (_, ["health"]) => Need::Public,
        // Workers' own requests, checked by their KIP-507 signature.
        ("POST", ["connectors", _, "tasks"]) | ("PUT", ["connectors", _, "fence"]) => Need::Public,
        ("GET", ["connectors"]) => Need::Any(Role::Read),
        ("POST", ["connectors"]) => match created {
            Some(name) => on(name, Role::Write, false),
            None => Need::Any(Role::Write),
        },
        ("GET", ["connectors", c]) => on(c, Role::Read, true),
        ("DELETE", ["connectors", c]) => on(c, Role::Write, false),
        ("GET", ["connectors", c, "config"]) => on(c, Role::Read, true),
        ("PUT" | "PATCH", ["connectors", c, "config"]) => on(c, Role::Write, false),
        ("GET", ["connectors", c, "tasks"]) => on(c, Role::Read, true),
        // Offsets and the topics a connector used are derived from its config (a file name, a
        // table, a topic): hide-config hides them too (issue #42).
        ("GET", ["connectors", c, "offsets"]) => on(c, Role::Operate, true),
        ("GET", ["connectors", c, "topics"]) => on(c, Role::Read, true),
        ("PATCH" | "DELETE", ["connectors", c, "offsets"]) => on(c, Role::Write, false),
        ("PUT", ["connectors", c, "topics", "reset"]) => on(c, Role::Write, false),
        ("PUT", ["connectors", c, "pause" | "resume" | "stop"]) => on(c, Role::Operate, false),
        ("POST", ["connectors", c, "restart"]) => on(c, Role::Operate, false),
        ("POST", ["connectors", c, "tasks", _, "restart"]) => on(c, Role::Operate, false),
        ("GET", ["connectors", c, ..]) => on(c, Role::Read, false),
        (_, ["connectors", ..]) => Need::Admin,
        ("GET", ["connector-plugins", ..]) => Need::Any(Role::Read),
        ("PUT", ["connector-plugins", _, "config", "validate"]) => Need::Any(Role::Read),
        (_, ["admin", ..]) => Need::Admin,
        ("GET", _) => Need::Any(Role::Read),
        _ => Need::Admin,
    }
}

/// A path segment decoded as axum's `Path` extractor decodes it for the handler (percent
/// escapes only: `+` stays `+`), so that the policy checks the connector the handler acts on.
fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// `tributary.rest.authorization.file`, read again when it changes (looked at every second by
/// a thread of its own, [`crate::config::file_watch`]); a file that no longer parses leaves the
/// last good policy in force, logged.
pub struct PolicyFile {
    policy: std::sync::RwLock<Policy>,
}

impl PolicyFile {
    /// Reads the file and starts watching it (until the returned file is dropped). Errors name
    /// the file and line.
    pub fn load(path: &Path) -> Result<std::sync::Arc<PolicyFile>, String> {
        let file = std::sync::Arc::new(PolicyFile {
            policy: std::sync::RwLock::new(read(path)?),
        });
        let weak = std::sync::Arc::downgrade(&file);
        let alive = weak.clone();
        let path = path.to_path_buf();
        crate::config::file_watch::watch(
            "authorization-policy",
            vec![path.clone()],
            move || alive.strong_count() > 0,
            move || {
                let Some(file) = weak.upgrade() else {
                    return false;
                };
                match read(&path) {
                    Ok(p) => {
                        tracing::info!(file = %path.display(), "authorization policy reloaded");
                        *file.policy.write().unwrap() = p;
                    }
                    Err(e) => {
                        tracing::error!("{e}; the previous authorization policy stays in force")
                    }
                }
                true
            },
        );
        Ok(file)
    }

    /// The policy in force.
    pub fn current(&self) -> Policy {
        self.policy.read().unwrap().clone()
    }
}

fn read(path: &Path) -> Result<Policy, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("tributary.rest.authorization.file {}: {e}", path.display()))?;
    Policy::parse(&text)
        .map_err(|e| format!("tributary.rest.authorization.file {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: &str = "\
# admins
alice admin
ops operate payments-* billing-* hide-config
ci read *
dev write dev-*
CN=deployer,O=acme write deploy-*
anonymous read public-*
";

    fn user(u: &str) -> Principal {
        Principal::User(u.into())
    }

    #[test]
    fn roles_add_up_over_patterns_and_hide_config_hides_configs() {
        let p = Policy::parse(POLICY).unwrap();
        let n = |m: &str, path: &str| need(m, path, None);
        assert!(p.allows(&user("alice"), &n("PUT", "/admin/loggers/root")));
        assert!(!p.allows(&user("ops"), &n("PUT", "/admin/loggers/root")));
        assert!(p.allows(&user("ops"), &n("PUT", "/connectors/payments-in/pause")));
        assert!(p.allows(&user("ops"), &n("GET", "/connectors/payments-in/status")));
        // Offsets and topics are derived from the config: hidden with it (issue #42).
        assert!(!p.allows(&user("ops"), &n("GET", "/connectors/payments-in/offsets")));
        assert!(!p.allows(&user("ops"), &n("GET", "/connectors/payments-in/topics")));
        assert!(!p.allows(&user("ci"), &n("GET", "/connectors/payments-in/offsets")));
        assert!(p.allows(&user("alice"), &n("GET", "/connectors/payments-in/topics")));
        assert!(!p.allows(&user("ops"), &n("GET", "/connectors/payments-in/config")));
        assert!(!p.allows(&user("ops"), &n("GET", "/connectors/payments-in")));
        assert!(!p.allows(&user("ops"), &n("DELETE", "/connectors/payments-in")));
        assert!(!p.allows(&user("ops"), &n("PUT", "/connectors/orders/pause")));
        // ci reads everything, configs included, and changes nothing.
        assert!(p.allows(&user("ci"), &n("GET", "/connectors/payments-in/config")));
        assert!(!p.allows(&user("ci"), &n("POST", "/connectors/x/restart")));
        // Creating needs write over the new connector's name.
        assert!(p.allows(&user("dev"), &need("POST", "/connectors", Some("dev-1"))));
        assert!(!p.allows(&user("dev"), &need("POST", "/connectors", Some("prod-1"))));
        // A certificate by its DN or its CN.
        let cert = Principal::Certificate("CN=deployer,O=acme".into());
        assert!(p.allows(&cert, &n("PUT", "/connectors/deploy-a/config")));
        assert!(!p.allows(&cert, &n("PUT", "/connectors/other/config")));
        // Anonymous requests, and a principal the file does not name.
        assert!(p.allows(
            &Principal::Anonymous,
            &n("GET", "/connectors/public-x/status")
        ));
        assert!(!p.allows(&Principal::Anonymous, &n("GET", "/connectors/x/status")));
        assert!(!p.allows(&user("mallory"), &n("GET", "/connectors")));
        assert!(p.allows(&user("mallory"), &n("GET", "/")));
        // Workers' internal requests are checked by signature, not here.
        assert!(p.allows(&user("mallory"), &n("POST", "/connectors/x/tasks")));
    }

    #[test]
    fn a_forwarded_principal_keeps_its_kind() {
        // A basic-auth user named like a DN must not become that certificate's CN on the
        // worker the request is forwarded to.
        let policy = Policy::parse("admin admin\n").unwrap();
        for p in [
            Principal::User("O=evil,CN=admin".into()),
            Principal::User("zoë: 100%".into()),
            Principal::Certificate("CN=app,O=acme".into()),
            Principal::Anonymous,
        ] {
            let header = p.to_header();
            assert!(header.is_ascii(), "{header}");
            assert_eq!(Principal::from_header(&header), Some(p));
        }
        let evil =
            Principal::from_header(&Principal::User("O=evil,CN=admin".into()).to_header()).unwrap();
        assert_eq!(policy.role(&evil, None), None);
        let cert = Principal::Certificate("O=acme,CN=admin".into());
        assert!(policy.role(&cert, None).is_some());
        assert_eq!(Principal::from_header("CN=admin"), None);
        assert_eq!(Principal::from_header("admin"), None);
    }

    #[test]
    fn the_policy_reads_a_path_as_the_handler_does() {
        // axum's Path decodes percent escapes only: `+` stays `+` (before, the policy read it
        // as a space and checked another connector than the handler acted on).
        let named = |path: &str| match need("PUT", path, None) {
            Need::Connector { name, .. } => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(named("/connectors/a+b/config"), "a+b");
        assert_eq!(named("/connectors/a%20b/config"), "a b");
        assert_eq!(named("/connectors/a%2Bb/config"), "a+b");
        assert_eq!(named("/connectors/a%2Fb/config"), "a/b");
        // A create is checked against the name the handler reads: a number's or a boolean's
        // text, as Jackson reads it (before, the policy saw no name and let any writer in).
        for (body, name) in [
            (r#"{"name": 12345, "config": {}}"#, "12345"),
            (r#"{"name": true, "config": {}}"#, "true"),
            (r#"{"name": " a-1 ", "config": {}}"#, "a-1"),
        ] {
            assert_eq!(
                crate::rest::connectors::created_name(body.as_bytes()).unwrap(),
                name
            );
        }
        let p = Policy::parse("alice write a-*\n").unwrap();
        assert!(!p.allows(&user("alice"), &need("POST", "/connectors", Some("12345"))));
    }

    #[test]
    fn a_forwarded_principal_is_accepted_once_for_its_own_request_in_time() {
        let key = crate::config_records::SessionKey {
            key: b"0123456789abcdef0123456789abcdef".to_vec(),
            algorithm: "HmacSHA256".into(),
            creation_timestamp: 1_000_000,
        };
        let now = 1_000_000 + 60_000;
        let stamp = format!("{now}.00000000000000aa");
        let signed = (
            "user:alice",
            "PUT",
            "/connectors/a-1/config?forward=true",
            &b"{}"[..],
        );
        let sig = sign_principal(&key.key, signed.0, signed.1, signed.2, signed.3, &stamp);
        // Another body, query, method or principal under the same signature: refused.
        for other in [
            (
                "user:alice",
                "PUT",
                "/connectors/a-1/config?forward=true",
                &b"{\"x\":1}"[..],
            ),
            (
                "user:alice",
                "PUT",
                "/connectors/a-1/config?forward=false",
                &b"{}"[..],
            ),
            (
                "user:alice",
                "DELETE",
                "/connectors/a-1/config?forward=true",
                &b"{}"[..],
            ),
            (
                "user:admin",
                "PUT",
                "/connectors/a-1/config?forward=true",
                &b"{}"[..],
            ),
        ] {
            assert_eq!(
                check_forwarded(Some(&key), other, &stamp, &sig, now),
                Err(Forwarded::BadSignature)
            );
        }
        assert_eq!(
            check_forwarded(None, signed, &stamp, &sig, now),
            Err(Forwarded::BadSignature)
        );
        // Out of the window, either way.
        assert_eq!(
            check_forwarded(Some(&key), signed, &stamp, &sig, now + STAMP_WINDOW_MS + 1),
            Err(Forwarded::Stale)
        );
        assert_eq!(
            check_forwarded(Some(&key), signed, &stamp, &sig, now - STAMP_WINDOW_MS - 1),
            Err(Forwarded::Stale)
        );
        // Accepted once; the same request again is a replay.
        assert_eq!(
            check_forwarded(Some(&key), signed, &stamp, &sig, now),
            Ok(())
        );
        assert_eq!(
            check_forwarded(Some(&key), signed, &stamp, &sig, now + 1),
            Err(Forwarded::Replayed)
        );
        // Signed before the key existed.
        let early = format!("{}.01", key.creation_timestamp - STAMP_WINDOW_MS - 10);
        let sig = sign_principal(&key.key, signed.0, signed.1, signed.2, signed.3, &early);
        assert_eq!(
            check_forwarded(Some(&key), signed, &early, &sig, key.creation_timestamp - 5),
            Err(Forwarded::Stale)
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = Policy::parse("alice admin\nbob reader x-*\n").unwrap_err();
        assert_eq!(
            e,
            "line 2: unknown role \"reader\" (read, operate, write, admin)"
        );
        let e = Policy::parse("\n\nlonely\n").unwrap_err();
        assert!(e.starts_with("line 3: expected"), "{e}");
        let e = Policy::parse("a read hide-config x-*").unwrap_err();
        assert!(e.starts_with("line 1: \"x-*\" after hide-config"), "{e}");
    }

    #[test]
    fn globs() {
        assert!(glob("*", ""));
        assert!(glob("pay*", "payments"));
        assert!(glob("*-in", "payments-in"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxc"));
        assert!(!glob("pay", "payments"));
    }
}

/// The worker setting naming the policy file.
pub const FILE_SETTING: &str = "tributary.rest.authorization.file";
/// The header a forwarding worker names the caller's principal in ([`Principal::to_header`]).
pub const PRINCIPAL_HEADER: &str = "X-Tributary-Principal";
/// Its HMAC-SHA256 under the session key (KIP-507), over the principal, the method, the path
/// and query, a SHA-256 digest of the body and the stamp ([`sign_principal`]).
pub const PRINCIPAL_SIGNATURE_HEADER: &str = "X-Tributary-Principal-Signature";
/// When the forwarded request was signed and a nonce: `<ms since the epoch>.<16 hex digits>`.
/// A stamp is accepted once, within [`STAMP_WINDOW_MS`] of the receiver's clock and not before
/// the session key was created.
pub const PRINCIPAL_STAMP_HEADER: &str = "X-Tributary-Principal-Stamp";
/// How far a forwarded request's stamp may lie from the receiver's clock (ms): the window in
/// which its signature is remembered, so that a captured request cannot be replayed.
pub const STAMP_WINDOW_MS: i64 = 5 * 60 * 1000;

/// The subject DN of a TLS client certificate, as the HTTPS listener puts it in a request's
/// extensions (`ssl.client.auth=required`).
#[derive(Debug, Clone)]
pub struct ClientCertificate(pub String);

/// The principal found for a request, left in its extensions for forwarding.
#[derive(Debug, Clone)]
pub struct RequestPrincipal(pub Principal);

/// The signature of a forwarded request's principal: HMAC-SHA256 under the session key over
/// `principal \n method \n path_and_query \n sha256(body) in hex \n stamp`, so that neither
/// another request nor another body can be passed off under it.
pub fn sign_principal(
    key: &[u8],
    principal: &str,
    method: &str,
    path_and_query: &str,
    body: &[u8],
    stamp: &str,
) -> String {
    use sha2::Digest;
    let digest = hex_lower(&sha2::Sha256::digest(body));
    crate::herder::session::sign(
        key,
        format!("{principal}\n{method}\n{path_and_query}\n{digest}\n{stamp}").as_bytes(),
    )
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A new stamp for a forwarded request ([`PRINCIPAL_STAMP_HEADER`]).
pub fn new_stamp() -> String {
    format!("{}.{:016x}", now_ms(), rand::random::<u64>())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Signatures of forwarded requests accepted in the last [`STAMP_WINDOW_MS`] (and a bit), with
/// their stamps' times: a second request under one of them is a replay.
static SEEN_SIGNATURES: Mutex<Vec<(String, i64)>> = Mutex::new(Vec::new());

/// Why a forwarded principal was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forwarded {
    /// No session key, a bad signature or a malformed stamp.
    BadSignature,
    /// The stamp lies outside the window or before the session key.
    Stale,
    /// The signature was accepted before.
    Replayed,
}

/// Checks a forwarded request's signature and stamp, remembering it when accepted.
fn check_forwarded(
    key: Option<&crate::config_records::SessionKey>,
    signed: (&str, &str, &str, &[u8]),
    stamp: &str,
    signature: &str,
    now: i64,
) -> Result<(), Forwarded> {
    let (principal, method, path_and_query, body) = signed;
    let key = key.ok_or(Forwarded::BadSignature)?;
    let at: i64 = stamp
        .split_once('.')
        .and_then(|(ms, _)| ms.parse().ok())
        .ok_or(Forwarded::BadSignature)?;
    let expected = sign_principal(&key.key, principal, method, path_and_query, body, stamp);
    if !constant_time_eq(expected.as_bytes(), signature.as_bytes()) {
        return Err(Forwarded::BadSignature);
    }
    if (now - at).abs() > STAMP_WINDOW_MS || at < key.creation_timestamp - STAMP_WINDOW_MS {
        return Err(Forwarded::Stale);
    }
    let mut seen = SEEN_SIGNATURES.lock().unwrap();
    seen.retain(|(_, t)| now - t <= 2 * STAMP_WINDOW_MS);
    if seen.iter().any(|(s, _)| s == signature) {
        return Err(Forwarded::Replayed);
    }
    seen.push((signature.to_string(), at));
    Ok(())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Whether config provider references in a config the caller sent may be resolved (issue
/// #42): always without a policy; under one, only for a principal with the write role over
/// the connector the config names (`name`), or the admin role when it names none. `Err` says
/// who lacks what, for the validation errors of the references left unresolved.
pub fn may_resolve(
    state: &super::RestState,
    principal: Option<&Principal>,
    connector: Option<&str>,
) -> Result<(), String> {
    let Some(file) = state.authorization.as_ref() else {
        return Ok(());
    };
    let policy = file.current();
    let who = principal.cloned().unwrap_or(Principal::Anonymous);
    let need = match connector.map(str::trim).filter(|c| !c.is_empty()) {
        Some(name) => Need::Connector {
            name: name.to_string(),
            role: Role::Write,
            config: false,
        },
        None => Need::Admin,
    };
    if policy.allows(&who, &need) {
        return Ok(());
    }
    Err(format!(
        "config provider references are resolved only for a principal with the write role over the connector (or the admin role); {} {}",
        who.name(),
        match need {
            Need::Connector { name, .. } => format!("may not write connector {name}"),
            _ => "is not an admin and the config names no connector".into(),
        }
    ))
}

/// Which connectors the caller of a request may see (issue #36), for the answers that name
/// connectors of the whole worker or cluster (the live view's endpoints): every connector
/// without a policy or for an admin, else those the caller has a role over. An extractor:
/// a handler takes it as an argument.
#[derive(Debug, Clone)]
pub struct Visible {
    /// The policy and the caller; `None` when every connector is visible.
    limited: Option<(Policy, Principal)>,
}

impl Visible {
    /// Every connector visible.
    pub fn all() -> Visible {
        Visible { limited: None }
    }

    /// Whether every connector is visible.
    pub fn is_all(&self) -> bool {
        self.limited.is_none()
    }

    /// Whether connector `name` is visible.
    pub fn connector(&self, name: &str) -> bool {
        match &self.limited {
            None => true,
            Some((policy, who)) => policy.role(who, Some(name)).is_some(),
        }
    }

    /// Whether connector `name`'s config, and what is derived from it (topics, traces), is
    /// visible: not under a `hide-config` rule alone.
    pub fn shows_config(&self, name: &str) -> bool {
        match &self.limited {
            None => true,
            Some((policy, who)) => policy.role(who, Some(name)).is_some_and(|(_, s)| s),
        }
    }

    /// Whether a job is visible: a connector's name, or a task as `<connector>-<n>`.
    pub fn job(&self, job: &str) -> bool {
        self.connector(job)
            || job
                .rsplit_once('-')
                .is_some_and(|(c, n)| n.parse::<u32>().is_ok() && self.connector(c))
    }
}

impl axum::extract::FromRequestParts<super::RestState> for Visible {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &super::RestState,
    ) -> Result<Visible, Self::Rejection> {
        let Some(file) = state.authorization.as_ref() else {
            return Ok(Visible::all());
        };
        let policy = file.current();
        let who = parts
            .extensions
            .get::<RequestPrincipal>()
            .map(|p| p.0.clone())
            .unwrap_or(Principal::Anonymous);
        if policy.allows(&who, &Need::Admin) {
            return Ok(Visible::all());
        }
        Ok(Visible {
            limited: Some((policy, who)),
        })
    }
}

/// Who made a request: a principal a worker forwarded with a valid, fresh and unused
/// signature over this very request ([`sign_principal`]), else the basic-auth user (only when
/// basic auth checked it), else the client certificate's subject, else anonymous.
fn principal_of(
    state: &super::RestState,
    parts: &axum::http::request::Parts,
    body: &[u8],
) -> Principal {
    let headers = &parts.headers;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(name) = header(PRINCIPAL_HEADER) {
        let path_and_query = parts
            .uri
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/");
        let checked = match (
            header(PRINCIPAL_SIGNATURE_HEADER),
            header(PRINCIPAL_STAMP_HEADER),
        ) {
            (Some(signature), Some(stamp)) => check_forwarded(
                state.herder.session_key().as_ref(),
                (name, parts.method.as_str(), path_and_query, body),
                stamp,
                signature,
                now_ms(),
            ),
            _ => Err(Forwarded::BadSignature),
        };
        match (checked, Principal::from_header(name)) {
            (Ok(()), Some(p)) => return p,
            (why, _) => tracing::warn!(
                target: "tributary::audit",
                principal = name,
                path = path_and_query,
                "a forwarded principal is ignored: {}",
                match why {
                    Err(Forwarded::Stale) => "its stamp is outside the accepted window",
                    Err(Forwarded::Replayed) => "its signature was used before (a replay)",
                    _ => "its signature does not match the request",
                }
            ),
        }
    }
    // Basic auth checks the credentials of every request but the workers' internal ones
    // (signed with the session key instead): on those the header names nobody.
    if state.basic_auth.is_some() && !super::auth::internal_request(&parts.method, parts.uri.path())
    {
        if let Some(user) = header("authorization").and_then(super::auth::basic_user) {
            return Principal::User(user);
        }
    }
    if let Some(ClientCertificate(dn)) = parts.extensions.get::<ClientCertificate>() {
        return Principal::Certificate(dn.clone());
    }
    Principal::Anonymous
}

/// The middleware: 403 (Connect's error body) unless the policy allows the request; listing
/// connectors shows only those the principal may read; what a principal may not see of a
/// connector's config (status traces) is left out of its answers; writes and refusals are
/// audited, naming the connector. The request is read once, here, the way the handlers read
/// it (the path segment as axum decodes it, a created connector's name by
/// [`super::connectors::created_name`]).
pub async fn authorize(
    axum::extract::State(state): axum::extract::State<super::RestState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let Some(file) = state.authorization.clone() else {
        return next.run(req).await;
    };
    let policy = file.current();
    let (parts, body) = req.into_parts();
    let bytes = match super::forward::read_body(body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    let principal = principal_of(&state, &parts, &bytes);
    let method = parts.method.as_str().to_string();
    let path = parts.uri.path().to_string();
    // A create names its connector in the body.
    let created = (method == "POST" && path.trim_end_matches('/') == "/connectors")
        .then(|| super::connectors::created_name(&bytes).ok())
        .flatten();
    let needed = need(&method, &path, created.as_deref());
    let connector = match &needed {
        Need::Connector { name, .. } => name.as_str(),
        _ => "",
    };
    if !policy.allows(&principal, &needed) {
        tracing::warn!(
            target: "tributary::audit",
            principal = principal.name(),
            method,
            path,
            connector,
            result = 403,
            "refused"
        );
        let message = format!(
            "{} may not {method} {path} ({})",
            principal.name(),
            describe(&needed)
        );
        return super::error::RestError::new(403, message).into_response();
    }
    let mut req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
    req.extensions_mut()
        .insert(RequestPrincipal(principal.clone()));
    let listing = method == "GET" && path.trim_end_matches('/') == "/connectors";
    let resp = next.run(req).await;
    if method != "GET" {
        tracing::info!(
            target: "tributary::audit",
            principal = principal.name(),
            method,
            path,
            connector,
            result = resp.status().as_u16(),
            "write"
        );
    }
    if listing && resp.status().is_success() {
        return filter_listing(&policy, &principal, resp).await;
    }
    let config_hidden = !connector.is_empty()
        && policy
            .role(&principal, Some(connector))
            .is_some_and(|(_, shows)| !shows);
    if config_hidden {
        return map_json(resp, strip_traces).await;
    }
    resp
}

/// Status traces (and the last failure's trace of automatic restarts) removed from an answer,
/// for a principal that may not see the connector's config: a trace is the plugin's words about
/// what it was given (a file name, a URL with a password).
fn strip_traces(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.remove("trace");
            map.remove("last_failure_trace");
            map.values_mut().for_each(strip_traces);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_traces),
        _ => {}
    }
}

/// A JSON answer changed by `f` (other answers as they are).
async fn map_json(
    resp: axum::response::Response,
    f: impl FnOnce(&mut serde_json::Value),
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return super::error::RestError::new(500, "cannot read the answer").into_response();
    };
    let Ok(mut value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return axum::response::Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    f(&mut value);
    let body = serde_json::to_vec(&value).unwrap_or_default();
    let mut resp = axum::response::Response::from_parts(parts, axum::body::Body::from(body));
    resp.headers_mut()
        .remove(axum::http::header::CONTENT_LENGTH);
    resp
}

/// What a refused request needed, for the 403 message.
fn describe(need: &Need) -> String {
    match need {
        Need::Public => "nothing".into(),
        Need::Any(r) => format!("needs the {} role", r.as_str()),
        Need::Admin => "needs the admin role".into(),
        Need::Connector {
            name,
            role,
            config: true,
        } => format!(
            "needs the {} role over connector {name}, with its config",
            role.as_str()
        ),
        Need::Connector { name, role, .. } => {
            format!("needs the {} role over connector {name}", role.as_str())
        }
    }
}

/// `GET /connectors` (and its expansions) keeps the connectors the principal may read, and
/// leaves out the configs (and status traces) it may not see.
async fn filter_listing(
    policy: &Policy,
    principal: &Principal,
    resp: axum::response::Response,
) -> axum::response::Response {
    let role = |c: &str| policy.role(principal, Some(c));
    map_json(resp, |value| match value {
        serde_json::Value::Array(names) => {
            names.retain(|n| n.as_str().is_some_and(|c| role(c).is_some()));
        }
        serde_json::Value::Object(map) => {
            map.retain(|c, _| role(c).is_some());
            for (c, v) in map.iter_mut() {
                if role(c).is_some_and(|(_, shows_config)| !shows_config) {
                    if let Some(info) = v.get_mut("info").and_then(|i| i.as_object_mut()) {
                        info.remove("config");
                        info.remove("tasks");
                    }
                    strip_traces(v);
                }
            }
        }
        _ => {}
    })
    .await
}
