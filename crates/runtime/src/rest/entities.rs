//! JSON bodies of Connect's REST API (`org.apache.kafka.connect.runtime.rest.entities`) that
//! only the REST layer uses, with Connect's field names and order. The bodies the herder
//! answers with (`ConnectorInfo`, `ConnectorStateInfo`, `ConfigInfos`, …) are in
//! [`crate::herder::info`].

use serde::{Deserialize, Serialize};

/// `GET /`: `{"version","commit","kafka_cluster_id"}` (`ServerInfo`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerInfo {
    pub version: String,
    pub commit: String,
    pub kafka_cluster_id: Option<String>,
}

/// `PluginInfo`: `{"class","type","version"?}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PluginInfo {
    pub class: String,
    #[serde(rename = "type")]
    pub plugin_type: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub version: Option<String>,
}

/// `ErrorMessage`: `{"error_code","message"}`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ErrorMessage {
    pub error_code: u16,
    pub message: String,
}
