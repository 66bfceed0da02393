//! Files read again when they change, with no restart (issue #42; what KIP-1185 proposes for
//! Connect's credentials): the REST authorization policy, the basic-auth JAAS and users files,
//! the REST listener's key and trust stores, the group client's stores. A thread of its own
//! looks at the files every second (their modification time, size and inode, so that a file
//! replaced by a rename is seen too) and, when one changed, runs the owner's reload; a reload
//! that fails keeps what was loaded before, and says so in the log.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How often the files are looked at.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// What identifies one version of a file.
type Stamp = Option<(SystemTime, u64, u64)>;

fn stamp(path: &Path) -> Stamp {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let inode = 0;
    Some((m.modified().ok()?, m.len(), inode))
}

/// The versions of a set of files last seen.
#[derive(Debug, Clone)]
pub struct FileStamps {
    files: Vec<(PathBuf, Stamp)>,
}

impl FileStamps {
    /// The files as they are now.
    pub fn new(files: impl IntoIterator<Item = PathBuf>) -> FileStamps {
        FileStamps {
            files: files
                .into_iter()
                .map(|f| {
                    let s = stamp(&f);
                    (f, s)
                })
                .collect(),
        }
    }

    /// Whether any file changed (or appeared or vanished) since the last look; the new versions
    /// become the ones seen.
    pub fn changed(&mut self) -> bool {
        let mut any = false;
        for (path, seen) in &mut self.files {
            let now = stamp(path);
            if now != *seen {
                *seen = now;
                any = true;
            }
        }
        any
    }

    /// The files watched.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.files.iter().map(|(p, _)| p.as_path())
    }
}

/// Watches `files` on a thread named `name`: every [`INTERVAL`], when one changed, runs
/// `reload`; the thread ends when `reload` (or `alive`, asked before every look) says the owner
/// is gone by returning `false`. No files, no thread.
pub fn watch(
    name: &str,
    files: Vec<PathBuf>,
    mut alive: impl FnMut() -> bool + Send + 'static,
    mut reload: impl FnMut() -> bool + Send + 'static,
) {
    if files.is_empty() {
        return;
    }
    let mut stamps = FileStamps::new(files);
    let spawned = std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || loop {
            // The watcher's own thread, not an async one.
            #[allow(clippy::disallowed_methods)]
            std::thread::sleep(INTERVAL);
            if !alive() {
                return;
            }
            if stamps.changed() && !reload() {
                return;
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start {name}: {e}; its files are not read again until a restart");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_and_a_replacement_by_rename_are_changes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("users.properties");
        std::fs::write(&f, "a: 1\n").unwrap();
        let mut stamps = FileStamps::new([f.clone()]);
        assert!(!stamps.changed());
        std::fs::write(&f, "a: 12\n").unwrap();
        assert!(stamps.changed());
        assert!(!stamps.changed(), "seen once");
        // Same size, new inode: a file moved into place.
        let next = dir.path().join("next");
        std::fs::write(&next, "b: 34\n").unwrap();
        std::fs::rename(&next, &f).unwrap();
        assert!(stamps.changed());
        std::fs::remove_file(&f).unwrap();
        assert!(stamps.changed(), "a vanished file is a change");
    }
}
