//! The cluster administration calls MirrorMaker's source connector makes through Java's
//! `Admin` that librdkafka's admin client lacks (issue #44): `describeAcls` and `createAcls`
//! of topic ACLs (DescribeAcls, CreateAcls) and `incrementalAlterConfigs` of topics
//! (IncrementalAlterConfigs, KIP-339). Each call goes to the first bootstrap broker that
//! answers (a KRaft broker forwards these to the controller), with the connection's TLS and
//! SASL.

use std::time::Duration;

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    ApiKey, CreateAclsRequest, DescribeAclsRequest, IncrementalAlterConfigsRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::connection::{parse_bootstrap, Connection, ConnectionSecurity};
use super::{error_name, GroupError};

/// Kafka's `ResourceType.TOPIC` (ACLs and configs alike).
pub const RESOURCE_TOPIC: i8 = 2;
/// `PatternType.ANY`, `LITERAL` and `PREFIXED`.
pub mod pattern {
    /// Any pattern (filters only).
    pub const ANY: i8 = 1;
    /// The exact resource name.
    pub const LITERAL: i8 = 3;
    /// Every resource whose name starts with it.
    pub const PREFIXED: i8 = 4;
}
/// `AclOperation` codes.
pub mod operation {
    /// Any operation (filters only).
    pub const ANY: i8 = 1;
    /// Every operation.
    pub const ALL: i8 = 2;
    /// Read.
    pub const READ: i8 = 3;
    /// Write.
    pub const WRITE: i8 = 4;
}
/// `AclPermissionType` codes.
pub mod permission {
    /// Any permission (filters only).
    pub const ANY: i8 = 1;
    /// Deny.
    pub const DENY: i8 = 2;
    /// Allow.
    pub const ALLOW: i8 = 3;
}
/// `SECURITY_DISABLED`: the cluster has no authorizer.
pub const SECURITY_DISABLED: i16 = 54;

/// A topic ACL: who (`principal` from `host`) may or may not (`permission`) do `operation` on
/// the topics `pattern_type` and `topic` name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TopicAcl {
    /// The topic name (or prefix, with [`pattern::PREFIXED`]).
    pub topic: String,
    /// A [`pattern`] code.
    pub pattern_type: i8,
    /// `User:alice`.
    pub principal: String,
    /// `*` or an address.
    pub host: String,
    /// An [`operation`] code.
    pub operation: i8,
    /// A [`permission`] code.
    pub permission: i8,
}

/// One change of a topic setting: set it, or delete it (back to the cluster's default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigChange {
    /// `AlterConfigOp.OpType.SET`.
    Set(String, String),
    /// `AlterConfigOp.OpType.DELETE`.
    Delete(String),
}

/// Where the calls go and how.
#[derive(Debug, Clone)]
pub struct AdminTarget {
    /// `bootstrap.servers`.
    pub bootstrap: String,
    /// `client.id` of the connections.
    pub client_id: String,
    /// Each call's timeout.
    pub timeout: Duration,
    /// TLS and SASL.
    pub security: ConnectionSecurity,
}

fn broker_error(api: &'static str, code: i16) -> GroupError {
    GroupError::Broker {
        api,
        code,
        name: error_name(code),
    }
}

/// The first bootstrap broker that answers. Errors: authentication and TLS at once, else the
/// last connection error.
async fn any_broker(target: &AdminTarget) -> Result<Connection, GroupError> {
    let mut last = GroupError::NoBootstrap;
    for addr in parse_bootstrap(&target.bootstrap) {
        match Connection::connect(&addr, &target.client_id, target.timeout, &target.security).await
        {
            Ok(c) => return Ok(c),
            Err(e @ (GroupError::Authentication { .. } | GroupError::Tls { .. })) => return Err(e),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// Every ACL of every topic (`describeAcls` with a filter on topics, any pattern, anyone,
/// anything), sorted. Errors: [`SECURITY_DISABLED`] without an authorizer, other broker errors.
pub async fn describe_topic_acls(target: &AdminTarget) -> Result<Vec<TopicAcl>, GroupError> {
    let mut conn = any_broker(target).await?;
    let version = conn.version(ApiKey::DescribeAcls)?;
    let mut req = DescribeAclsRequest::default();
    req.resource_type_filter = RESOURCE_TOPIC;
    req.resource_name_filter = None;
    req.pattern_type_filter = pattern::ANY;
    req.principal_filter = None;
    req.host_filter = None;
    req.operation = operation::ANY;
    req.permission_type = permission::ANY;
    let resp = conn.send(&req, version, target.timeout).await?;
    if resp.error_code != 0 {
        return Err(broker_error("DescribeAcls", resp.error_code));
    }
    let mut out: Vec<TopicAcl> = resp
        .resources
        .into_iter()
        .filter(|r| r.resource_type == RESOURCE_TOPIC)
        .flat_map(|r| {
            let (topic, pattern_type) = (r.resource_name.to_string(), r.pattern_type);
            r.acls.into_iter().map(move |a| TopicAcl {
                topic: topic.clone(),
                pattern_type,
                principal: a.principal.to_string(),
                host: a.host.to_string(),
                operation: a.operation,
                permission: a.permission_type,
            })
        })
        .collect();
    out.sort();
    Ok(out)
}

/// Creates `acls` (`createAcls`; an existing one is not an error). Each ACL's outcome, in
/// order. Errors: the request as a whole (no broker, a refused connection).
pub async fn create_topic_acls(
    target: &AdminTarget,
    acls: &[TopicAcl],
) -> Result<Vec<Result<(), GroupError>>, GroupError> {
    if acls.is_empty() {
        return Ok(Vec::new());
    }
    let mut conn = any_broker(target).await?;
    let version = conn.version(ApiKey::CreateAcls)?;
    let mut req = CreateAclsRequest::default();
    req.creations = acls
        .iter()
        .map(|a| {
            let mut c = AclCreation::default();
            c.resource_type = RESOURCE_TOPIC;
            c.resource_name = StrBytes::from_string(a.topic.clone());
            c.resource_pattern_type = a.pattern_type;
            c.principal = StrBytes::from_string(a.principal.clone());
            c.host = StrBytes::from_string(a.host.clone());
            c.operation = a.operation;
            c.permission_type = a.permission;
            c
        })
        .collect();
    let resp = conn.send(&req, version, target.timeout).await?;
    Ok(resp
        .results
        .into_iter()
        .map(|r| match r.error_code {
            0 => Ok(()),
            code => Err(broker_error("CreateAcls", code)),
        })
        .collect())
}

/// Applies `changes` to each topic's settings (`incrementalAlterConfigs`). Each topic's
/// outcome, by name. Errors: the request as a whole (no broker, a broker without the API:
/// `UNSUPPORTED_VERSION`).
pub async fn alter_topic_configs(
    target: &AdminTarget,
    changes: &[(String, Vec<ConfigChange>)],
) -> Result<Vec<(String, Result<(), GroupError>)>, GroupError> {
    if changes.is_empty() {
        return Ok(Vec::new());
    }
    let mut conn = any_broker(target).await?;
    let version = conn.version(ApiKey::IncrementalAlterConfigs)?;
    let mut req = IncrementalAlterConfigsRequest::default();
    req.validate_only = false;
    req.resources = changes
        .iter()
        .map(|(topic, ops)| {
            let mut r = AlterConfigsResource::default();
            r.resource_type = RESOURCE_TOPIC;
            r.resource_name = StrBytes::from_string(topic.clone());
            r.configs = ops
                .iter()
                .map(|op| {
                    let mut c = AlterableConfig::default();
                    match op {
                        ConfigChange::Set(name, value) => {
                            c.name = StrBytes::from_string(name.clone());
                            c.config_operation = 0;
                            c.value = Some(StrBytes::from_string(value.clone()));
                        }
                        ConfigChange::Delete(name) => {
                            c.name = StrBytes::from_string(name.clone());
                            c.config_operation = 1;
                            c.value = None;
                        }
                    }
                    c
                })
                .collect();
            r
        })
        .collect();
    let resp = conn.send(&req, version, target.timeout).await?;
    Ok(resp
        .responses
        .into_iter()
        .map(|r| {
            let outcome = match r.error_code {
                0 => Ok(()),
                code => Err(broker_error("IncrementalAlterConfigs", code)),
            };
            (r.resource_name.to_string(), outcome)
        })
        .collect())
}
