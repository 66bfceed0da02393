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
//!   connector's info, its task configs); a write rule always does.
//!
//! Rules add up: what a principal may do to a connector is the strongest role among the rules
//! naming it (or `*`, or `anonymous` for requests without one) and a pattern matching the
//! connector. Listing connectors shows those the principal may read. A refusal is 403 with
//! Connect's error body; every refusal and every write is logged as an audit line.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

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
        ("GET", ["connectors", c, "offsets"]) => on(c, Role::Operate, false),
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

fn percent_decode(s: &str) -> String {
    form_urlencoded::parse(format!("x={s}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| s.to_string())
}

/// `tributary.rest.authorization.file`, read again when it changes (looked at every second by
/// a thread of its own, and by a request when a second passed); a file that no longer parses
/// leaves the last good policy in force, logged.
pub struct PolicyFile {
    path: PathBuf,
    state: Mutex<(Policy, Option<SystemTime>, Instant)>,
}

impl PolicyFile {
    /// Reads the file and starts watching it (until the returned file is dropped). Errors name
    /// the file and line.
    pub fn load(path: &Path) -> Result<std::sync::Arc<PolicyFile>, String> {
        let (policy, modified) = read(path)?;
        let file = std::sync::Arc::new(PolicyFile {
            path: path.to_path_buf(),
            state: Mutex::new((policy, modified, Instant::now())),
        });
        let weak = std::sync::Arc::downgrade(&file);
        let watcher = std::thread::Builder::new()
            .name("authorization-policy".into())
            .spawn(move || loop {
                // The watcher's own thread, not an async one.
                #[allow(clippy::disallowed_methods)]
                std::thread::sleep(Duration::from_secs(1));
                match weak.upgrade() {
                    Some(f) => drop(f.current()),
                    None => return,
                }
            });
        if let Err(e) = watcher {
            tracing::warn!(
                "cannot watch {}: {e}; it is read again on requests",
                path.display()
            );
        }
        Ok(file)
    }

    /// The policy in force.
    pub fn current(&self) -> Policy {
        let mut s = self.state.lock().unwrap();
        if s.2.elapsed() >= Duration::from_millis(900) {
            s.2 = Instant::now();
            let modified = std::fs::metadata(&self.path)
                .and_then(|m| m.modified())
                .ok();
            if modified != s.1 {
                match read(&self.path) {
                    Ok((p, m)) => {
                        tracing::info!(file = %self.path.display(), "authorization policy reloaded");
                        s.0 = p;
                        s.1 = m;
                    }
                    Err(e) => {
                        tracing::error!("{e}; the previous authorization policy stays in force");
                        s.1 = modified;
                    }
                }
            }
        }
        s.0.clone()
    }
}

fn read(path: &Path) -> Result<(Policy, Option<SystemTime>), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("tributary.rest.authorization.file {}: {e}", path.display()))?;
    let policy = Policy::parse(&text)
        .map_err(|e| format!("tributary.rest.authorization.file {}: {e}", path.display()))?;
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
    Ok((policy, modified))
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
        assert!(p.allows(&user("ops"), &n("GET", "/connectors/payments-in/offsets")));
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
/// Its HMAC-SHA256 under the session key (KIP-507), over `principal \n method \n path`.
pub const PRINCIPAL_SIGNATURE_HEADER: &str = "X-Tributary-Principal-Signature";

/// The subject DN of a TLS client certificate, as the HTTPS listener puts it in a request's
/// extensions (`ssl.client.auth=required`).
#[derive(Debug, Clone)]
pub struct ClientCertificate(pub String);

/// The principal found for a request, left in its extensions for forwarding.
#[derive(Debug, Clone)]
pub struct RequestPrincipal(pub Principal);

/// The signature of a forwarded request's principal.
pub fn sign_principal(key: &[u8], principal: &str, method: &str, path: &str) -> String {
    crate::herder::session::sign(key, format!("{principal}\n{method}\n{path}").as_bytes())
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

/// Who made `req`: a principal a worker forwarded with a valid signature, else the basic-auth
/// user (only when basic auth checked it), else the client certificate's subject, else
/// anonymous.
fn principal_of(state: &super::RestState, req: &axum::extract::Request) -> Principal {
    let headers = req.headers();
    let forwarded = headers
        .get(PRINCIPAL_HEADER)
        .and_then(|v| v.to_str().ok())
        .zip(
            headers
                .get(PRINCIPAL_SIGNATURE_HEADER)
                .and_then(|v| v.to_str().ok()),
        );
    if let Some((name, signature)) = forwarded {
        let valid = state.herder.session_key().is_some_and(|key| {
            sign_principal(&key, name, req.method().as_str(), req.uri().path()) == signature
        });
        if let (true, Some(p)) = (valid, Principal::from_header(name)) {
            return p;
        }
        tracing::warn!(
            principal = name,
            "a forwarded principal with a bad signature is ignored"
        );
    }
    if state.basic_auth.is_some() {
        if let Some(user) = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(super::auth::basic_user)
        {
            return Principal::User(user);
        }
    }
    if let Some(ClientCertificate(dn)) = req.extensions().get::<ClientCertificate>() {
        return Principal::Certificate(dn.clone());
    }
    Principal::Anonymous
}

/// The middleware: 403 (Connect's error body) unless the policy allows the request; listing
/// connectors shows only those the principal may read; writes and refusals are audited.
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
    let principal = principal_of(&state, &req);
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    // A create names its connector in the body.
    let (req, created) = if method == "POST" && path.trim_end_matches('/') == "/connectors" {
        let (parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(body, super::forward::MAX_BODY)
            .await
            .unwrap_or_default();
        let name = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| v["name"].as_str().map(str::to_string));
        (
            axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes)),
            name,
        )
    } else {
        (req, None)
    };
    let needed = need(&method, &path, created.as_deref());
    if !policy.allows(&principal, &needed) {
        tracing::warn!(
            target: "tributary::audit",
            principal = principal.name(),
            method,
            path,
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
    let mut req = req;
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
            result = resp.status().as_u16(),
            "write"
        );
    }
    if listing && resp.status().is_success() {
        return filter_listing(&policy, &principal, resp).await;
    }
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
/// leaves out the configs it may not see.
async fn filter_listing(
    policy: &Policy,
    principal: &Principal,
    resp: axum::response::Response,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let (parts, body) = resp.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return super::error::RestError::new(500, "cannot read the connector list").into_response();
    };
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return axum::response::Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    let role = |c: &str| policy.role(principal, Some(c));
    let filtered = match value {
        serde_json::Value::Array(names) => serde_json::Value::Array(
            names
                .into_iter()
                .filter(|n| n.as_str().is_some_and(|c| role(c).is_some()))
                .collect(),
        ),
        serde_json::Value::Object(map) => serde_json::Value::Object(
            map.into_iter()
                .filter_map(|(c, mut v)| {
                    let (_, shows_config) = role(&c)?;
                    if !shows_config {
                        if let Some(info) = v.get_mut("info").and_then(|i| i.as_object_mut()) {
                            info.remove("config");
                            info.remove("tasks");
                        }
                    }
                    Some((c, v))
                })
                .collect(),
        ),
        other => other,
    };
    let body = serde_json::to_vec(&filtered).unwrap_or_default();
    let mut resp = axum::response::Response::from_parts(parts, axum::body::Body::from(body));
    resp.headers_mut()
        .remove(axum::http::header::CONTENT_LENGTH);
    resp
}
