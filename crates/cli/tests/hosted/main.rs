//! Java plugins hosted from plugin.path: connectors, transformations, converters, and the Debezium
//! pipeline.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

use tributary_testkit as common;

mod debezium_pipeline;
mod hosted_registry_converter;
mod java_plugins;
mod java_transforms;
mod mirror_native;
mod postgres_native;
