//! MirrorMaker 2 natively (issue #44): the pieces of Apache's `connect-mirror` and
//! `connect-mirror-client` that every MirrorMaker connector shares, with Java's behaviour.
//! - [`policy`]: replication policies (`DefaultReplicationPolicy`,
//!   `IdentityReplicationPolicy`): remote topic names and MirrorMaker's internal topic names;
//! - [`filter`]: the default topic and group filters (`topics`, `topics.exclude`, `groups`,
//!   `groups.exclude`);
//! - [`maker_config`]: dedicated mode's `mm2.properties` (`MirrorMakerConfig`): the flows, and
//!   the worker and connector configurations of each;
//! - [`records`]: offset syncs, checkpoints and heartbeats byte for byte as Java writes them,
//!   and the source partitions and offsets the connectors commit.
//!
//! The connectors themselves (`MirrorSourceConnector`, `MirrorCheckpointConnector`,
//! `MirrorHeartbeatConnector`) are not native yet: they run as Apache's Java classes from
//! `plugin.path`.

pub mod filter;
pub mod maker_config;
pub mod policy;
pub mod records;
