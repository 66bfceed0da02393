//! The connector client config override policy (`connector.client.config.override.policy`,
//! KIP-458; Connect's `ConnectorClientConfigOverridePolicy` implementations `None`,
//! `Principal`, `All` and, since Connect 4.2, `Allowlist` of KIP-1188): which `producer.override.*`, `consumer.override.*` and
//! `admin.override.*` keys a connector may set. Read by the worker's config, applied where a
//! connector config enters ([`super::unsupported`]).

/// A connector client override policy (`connector.client.config.override.policy`, KIP-458):
/// which `producer.override.*`, `consumer.override.*` and `admin.override.*` keys a connector
/// may set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverridePolicy {
    /// `None`: no override.
    None,
    /// `Principal`: only `sasl.jaas.config`, `sasl.mechanism` and `security.protocol`.
    Principal,
    /// `All` (Connect's default since 3.0): any override.
    All,
    /// `Allowlist` (KIP-1188, Connect 4.2): the client keys listed in
    /// `connector.client.config.override.allowlist` (none when it is empty).
    Allowlist(Vec<String>),
}

impl OverridePolicy {
    /// Parses the policy by alias (`None`, `Principal`, `All`, `Allowlist`, with or without the
    /// `ConnectorClientConfigOverridePolicy` suffix) or Connect's class name; `allowlist` is
    /// `connector.client.config.override.allowlist`, read by `Allowlist` only. `Err` names the
    /// policies there are.
    pub fn parse(value: &str, allowlist: &[String]) -> Result<OverridePolicy, super::SettingError> {
        let simple = value.trim().rsplit('.').next().unwrap_or("");
        let alias = simple
            .strip_suffix("ConnectorClientConfigOverridePolicy")
            .unwrap_or(simple);
        match alias {
            "None" => Ok(OverridePolicy::None),
            "Principal" => Ok(OverridePolicy::Principal),
            "All" => Ok(OverridePolicy::All),
            "Allowlist" => Ok(OverridePolicy::Allowlist(allowlist.to_vec())),
            _ => Err(super::SettingError::invalid(
                "connector.client.config.override.policy",
                value,
                "Tributary implements the None, Principal, All and Allowlist policies",
            )),
        }
    }

    /// The policy's name as Connect's messages give it.
    pub fn name(&self) -> &'static str {
        match self {
            OverridePolicy::None => "None",
            OverridePolicy::Principal => "Principal",
            OverridePolicy::All => "All",
            OverridePolicy::Allowlist(_) => "Allowlist",
        }
    }

    /// Whether a connector may override client setting `key` (without its
    /// `producer.override.` / `consumer.override.` / `admin.override.` prefix).
    pub fn allows(&self, key: &str) -> bool {
        match self {
            OverridePolicy::None => false,
            OverridePolicy::Principal => {
                ["sasl.jaas.config", "sasl.mechanism", "security.protocol"].contains(&key)
            }
            OverridePolicy::All => true,
            OverridePolicy::Allowlist(keys) => keys.iter().any(|k| k == key),
        }
    }
}
