//! Fuzzes a standalone worker's REST API with Schemathesis, driven by the worker's own
//! `GET /openapi.json`, through `scripts/fuzz-rest` (which states what it checks: documented
//! answers only, 5xx only for unreadable bodies, no hang, no crash, state intact afterwards).
//! Without Schemathesis the test says "skipped: schemathesis not installed"; under CI it fails
//! (`scripts/test` installs it).

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use common::*;

fn schemathesis_installed() -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('schemathesis') is None)",
        ])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn fuzzing_the_rest_api_finds_only_documented_answers_and_leaves_the_worker_intact() {
    let Some(bootstrap) = kafka() else { return };
    if !schemathesis_installed() {
        missing::<()>("schemathesis not installed");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/fuzz-rest");
    let mut cmd = Command::new("python3");
    cmd.arg(&script).args([
        "--bin",
        env!("CARGO_BIN_EXE_tributary"),
        "--bootstrap",
        &bootstrap,
        "--max-examples",
        "30",
        "--max-time",
        "60",
    ]);
    // A failing run prints its seed; FUZZ_REST_SEED replays it.
    if let Ok(seed) = std::env::var("FUZZ_REST_SEED") {
        cmd.args(["--seed", &seed]);
    }
    let started = Instant::now();
    let out = cmd.output().expect("running scripts/fuzz-rest");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "scripts/fuzz-rest failed ({}):\n{text}",
        out.status
    );
    let seed = text
        .lines()
        .find(|l| l.starts_with("Seed:"))
        .unwrap_or("Seed: ?");
    eprintln!(
        "scripts/fuzz-rest passed in {:.0?} ({seed})",
        started.elapsed()
    );
}
