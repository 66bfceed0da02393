//! The standalone worker's offset file (Connect's `FileOffsetBackingStore`): the whole map is
//! kept in memory and rewritten to `offset.storage.file.filename` on every `set`, in the
//! Java-serialized `HashMap<byte[],byte[]>` form `connect-standalone` uses, so either
//! implementation can read the other's file. Writes go to a temporary file that is renamed
//! over the old one, so a crash never leaves a half-written file.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tributary_api::{ConnectError, ConnectResult};

use super::offset::{MemoryOffsetBackingStore, OffsetBackingStore, OffsetEntry};
use super::offset_file_format;

/// Offsets in a file, cached in memory.
pub struct FileOffsetBackingStore {
    path: PathBuf,
    memory: MemoryOffsetBackingStore,
    write_lock: Mutex<()>,
}

impl FileOffsetBackingStore {
    /// Loads the file if it exists (a missing or empty file is an empty store).
    /// Errors: unreadable file or a file that is not a serialized map, naming the file.
    pub fn open(path: &Path) -> ConnectResult<FileOffsetBackingStore> {
        // The file is rewritten through a sibling temporary file: its directory must exist
        // and be writable now, not only at the first offset flush.
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        if !dir.is_dir() {
            return Err(ConnectError::connect(format!(
                "{}: directory {} does not exist",
                path.display(),
                dir.display()
            )));
        }
        let probe = path.with_extension("tmp");
        std::fs::write(&probe, b"")
            .and_then(|_| std::fs::remove_file(&probe))
            .map_err(|e| {
                ConnectError::connect(format!(
                    "{}: cannot write in {}: {e}",
                    path.display(),
                    dir.display()
                ))
            })?;
        let entries = match std::fs::read(path) {
            Ok(bytes) if bytes.is_empty() => Vec::new(),
            Ok(bytes) => offset_file_format::decode(&bytes).map_err(|e| {
                ConnectError::connect(format!("{}: cannot read offsets: {e}", path.display()))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => {
                return Err(ConnectError::connect(format!(
                    "{}: cannot read offsets: {e}",
                    path.display()
                )))
            }
        };
        Ok(FileOffsetBackingStore {
            path: path.to_path_buf(),
            memory: MemoryOffsetBackingStore::with_entries(entries),
            write_lock: Mutex::new(()),
        })
    }

    fn save(&self) -> ConnectResult<()> {
        let _guard = self.write_lock.lock().unwrap();
        let entries: Vec<OffsetEntry> = self
            .memory
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k, Some(v)))
            .collect();
        let bytes = offset_file_format::encode(&entries);
        let tmp = self.path.with_extension("tmp");
        // The file is replaced only by a complete, synced copy: a crash or a full disk midway
        // leaves the previous file as it was (and at worst a partial temporary file, which the
        // next save overwrites). The directory is synced so the rename itself survives a crash.
        let write = || -> std::io::Result<()> {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)?;
            if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::File::open(dir)?.sync_all()?;
            }
            Ok(())
        };
        write().map_err(|e| {
            if tmp.is_file() {
                // Best effort: a leftover temporary file is overwritten by the next save.
                if let Err(e) = std::fs::remove_file(&tmp) {
                    tracing::debug!(
                        path = %tmp.display(),
                        error = %e,
                        "cannot remove the temporary offsets file"
                    );
                }
            }
            ConnectError::connect(format!(
                "{}: cannot write offsets: {e}",
                self.path.display()
            ))
        })
    }
}

impl OffsetBackingStore for FileOffsetBackingStore {
    fn get(&self, keys: &[Vec<u8>]) -> ConnectResult<HashMap<Vec<u8>, Vec<u8>>> {
        self.memory.get(keys)
    }
    fn entries(&self) -> ConnectResult<Vec<(Vec<u8>, Vec<u8>)>> {
        Ok(self.memory.snapshot())
    }
    fn set(&self, entries: Vec<OffsetEntry>) -> ConnectResult<()> {
        self.memory.apply(entries);
        self.save()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("offsets");
        let store = FileOffsetBackingStore::open(&path).unwrap();
        store
            .set(vec![
                (b"k1".to_vec(), Some(b"v1".to_vec())),
                (b"k2".to_vec(), Some(b"v2".to_vec())),
            ])
            .unwrap();
        store.set(vec![(b"k2".to_vec(), None)]).unwrap();
        let again = FileOffsetBackingStore::open(&path).unwrap();
        let got = again.get(&[b"k1".to_vec(), b"k2".to_vec()]).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[b"k1".as_slice()], b"v1".to_vec());
    }

    /// A write that fails midway (here the temporary file cannot be created, as on a full
    /// disk) is an error, and the file keeps the offsets of the last good write; a partial
    /// temporary file left by a crash does not affect reading.
    #[test]
    fn a_failed_or_interrupted_write_leaves_the_last_good_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("connect.offsets");
        let store = FileOffsetBackingStore::open(&path).unwrap();
        store
            .set(vec![(b"k".to_vec(), Some(b"v1".to_vec()))])
            .unwrap();
        let tmp = path.with_extension("tmp");
        std::fs::create_dir(&tmp).unwrap();
        std::fs::write(tmp.join("occupied"), b"x").unwrap();
        let err = store
            .set(vec![(b"k".to_vec(), Some(b"v2".to_vec()))])
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot write offsets"), "{err}");
        let on_disk = offset_file_format::decode(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(on_disk, vec![(b"k".to_vec(), Some(b"v1".to_vec()))]);

        // A crash mid-write: half a temporary file beside the good one.
        std::fs::remove_dir_all(&tmp).unwrap();
        let good = std::fs::read(&path).unwrap();
        std::fs::write(&tmp, &good[..good.len() / 2]).unwrap();
        let again = FileOffsetBackingStore::open(&path).unwrap();
        assert_eq!(
            again.get(&[b"k".to_vec()]).unwrap()[b"k".as_slice()],
            b"v1".to_vec()
        );
        again
            .set(vec![(b"k".to_vec(), Some(b"v3".to_vec()))])
            .unwrap();
        let reopened = FileOffsetBackingStore::open(&path).unwrap();
        assert_eq!(
            reopened.get(&[b"k".to_vec()]).unwrap()[b"k".as_slice()],
            b"v3".to_vec()
        );
        assert!(!tmp.exists(), "the temporary file was renamed into place");
    }

    #[test]
    fn a_missing_directory_is_an_error_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let err = FileOffsetBackingStore::open(&dir.path().join("nope/offsets"))
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("nope") && err.contains("does not exist"),
            "{err}"
        );
    }

    #[test]
    fn garbage_file_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("offsets");
        std::fs::write(&path, b"not java serialization").unwrap();
        let err = FileOffsetBackingStore::open(&path)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("offsets"), "{err}");
    }
}
