//! Backing stores (Connect's `OffsetBackingStore`, `StatusBackingStore`): where source offsets
//! and connector/task statuses live. Standalone workers keep offsets in a file
//! ([`offset_file`]) and statuses in memory ([`status`]).

pub mod config_store;
pub mod config_topic;
pub mod connector_offset_store;
pub mod kafka_log;
pub mod offset;
pub mod offset_file;
pub mod offset_file_format;
pub mod offset_topic;
pub mod status;
pub mod status_topic;
pub mod topic_admin;
