//! Test input made by the tests themselves, so a clone of the repository alone runs every test:
//! log-like text generated deterministically, and small fixtures for the line-ending cases real
//! files have. The loghub sample set (research use only, never shipped) adds coverage when it
//! lies in `../shared/data/loghub`, and is skipped, saying so, when it does not.

use std::path::PathBuf;

pub use crate::text::synthetic_log;

/// Files with the line endings and contents real logs have: `(name, bytes)`. Several end
/// without a terminator (a file still being written), and one ends with a lone `\r`.
pub fn line_ending_fixtures() -> Vec<(String, Vec<u8>)> {
    let log = synthetic_log(500, 7);
    let text = String::from_utf8(log.clone()).unwrap();
    let body: Vec<&str> = text.lines().collect();
    let join = |sep: &str| body.join(sep);
    let mut mixed = String::new();
    for (i, l) in body.iter().enumerate() {
        mixed.push_str(l);
        mixed.push_str(["\n", "\r\n", "\r"][i % 3]);
    }
    let utf8: String = (0..300)
        .map(|i| format!("{i:04} naïve café — 日本語のログ 🚀 Ωμέγα žluťoučký kůň\n"))
        .collect();
    let long: String = (0..6)
        .map(|i| format!("{i} {}\n", "x".repeat(20_000 * (i + 1))))
        .collect();
    vec![
        ("lf.log".into(), log),
        ("crlf-unterminated.log".into(), join("\r\n").into_bytes()),
        (
            "cr-only.log".into(),
            format!("{}\r", join("\r")).into_bytes(),
        ),
        (
            "mixed-unterminated.log".into(),
            mixed.trim_end().as_bytes().to_vec(),
        ),
        ("utf8.log".into(), utf8.into_bytes()),
        ("long-lines.log".into(), long.into_bytes()),
        (
            "empty-lines.log".into(),
            b"\n\nfirst\n\n\r\n\rlast".to_vec(),
        ),
    ]
}

/// The loghub `.log` files, when `../shared/data/loghub` (or `TRIBUTARY_SHARED`) has them;
/// otherwise none, with a note that this extra coverage is skipped.
pub fn loghub_files() -> Vec<PathBuf> {
    let dir = super::shared_dir().join("data/loghub");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "log"));
    files.sort();
    if files.is_empty() {
        eprintln!(
            "skipped: the loghub sample set is not in {} (extra coverage only)",
            dir.display()
        );
    }
    files
}
