//! Faults: brokers stopped and restarted, cut connections, failed sends, plugins that hang.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

#[path = "../common/mod.rs"]
mod common;

mod broker_faults;
mod hung_plugins;
mod network_faults;
mod send_failures;
