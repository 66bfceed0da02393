//! Conformance vectors run live against Connect's own Java classes.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

#[path = "../common/mod.rs"]
mod common;

mod avro_vectors;
mod conformance_vectors;
mod transform_vectors;
