//! The REST API: input handling, fuzzing against the OpenAPI document, the differential suite
//! against Java Connect, admin listeners, config providers, authorization and the secrets
//! crawler.
//!
//! One test binary per theme (faster to build and link than one per file); each module is
//! one file of tests.

use tributary_testkit as common;

mod admin_listeners;
mod authorization;
mod config_providers;
mod differential_rest;
mod rest_fuzz;
mod rest_input;
mod secrets_crawler;
