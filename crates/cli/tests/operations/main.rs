//! Operating a worker: metrics with Prometheus, the live view in Chromium, logs, the secured
//! broker.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

use tributary_testkit as common;

mod browser;
mod container_image;
mod logs;
mod metrics;
mod plugin_metrics;
mod release_archive;
mod rotation;
mod secured;
mod ui;
