//! Distributed clusters on the real broker: the group protocols and assignments, restarts,
//! internal topics, rolling deploys, task health, the offsets API and exactly-once source.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

use tributary_testkit as common;

mod auto_restart;
mod connector_offsets_topic;
mod cooperative;
mod declared_connectors;
mod distributed;
mod exactly_once;
mod internal_topics;
mod many_connectors;
mod offsets_api;
mod restart;
mod rolling;
mod static_assignments;
mod task_health;
mod tasks_max;
