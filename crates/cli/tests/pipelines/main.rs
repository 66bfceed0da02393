//! Data pipelines: the schema-registry converters, sink delivery, transformation chains,
//! standalone mode.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

use tributary_testkit as common;

mod mirror_maker;
mod registry_converters;
mod sink_delivery;
mod standalone;
mod throttle;
mod transforms;
