//! Faults: brokers stopped and restarted, cut connections, failed sends, plugins that hang.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

use tributary_testkit as common;

mod broker_faults;
mod hung_plugins;
mod mirror_faults;
mod network_faults;
mod send_failures;
mod shared_producer;
