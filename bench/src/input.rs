//! The benchmark's input file: real log lines from loghub, repeated with a line-number prefix so
//! every line is unique, cached under the bench cache directory so later runs reuse it.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// A generated input file and what it holds.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// Where the file is.
    pub path: PathBuf,
    /// Number of lines (every line ends with `\n`).
    pub lines: u64,
    /// Size of the file in bytes, line terminators included.
    pub file_bytes: u64,
    /// Bytes of line content, terminators excluded: the total size of the record values.
    pub payload_bytes: u64,
}

/// The lines of every `*.log` file in `dir` (sorted by file name), without line terminators.
/// Lines that are empty or contain a carriage return inside them are skipped, so that every
/// line of the generated file is one record for FileStreamSource (which also splits on `\r`).
pub fn loghub_lines(dir: &Path) -> io::Result<Vec<Vec<u8>>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    files.sort();
    let mut lines = Vec::new();
    for file in files {
        let data = fs::read(&file)?;
        for line in data.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !line.is_empty() && !line.contains(&b'\r') {
                lines.push(line.to_vec());
            }
        }
    }
    if lines.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no log lines in {}/*.log", dir.display()),
        ));
    }
    Ok(lines)
}

/// Returns the cached input file of `lines` lines in `cache`, generating it from the loghub
/// files in `loghub` first if it is missing or does not look complete. Line `i` (from 1) is
/// `i` zero-padded to the width of `lines`, a space, then loghub line `(i - 1) % count`.
pub fn prepare(cache: &Path, loghub: &Path, lines: u64) -> io::Result<InputFile> {
    fs::create_dir_all(cache)?;
    let path = cache.join(format!("loghub-{lines}.txt"));
    if path.exists() {
        match inspect(&path) {
            Ok(found) if found.lines == lines => {
                eprintln!("bench: reusing {}", path.display());
                return Ok(found);
            }
            _ => eprintln!("bench: {} is incomplete; regenerating", path.display()),
        }
    }
    let source = loghub_lines(loghub)?;
    eprintln!(
        "bench: generating {} ({lines} lines from {} loghub lines)",
        path.display(),
        source.len()
    );
    let tmp = cache.join(format!("loghub-{lines}.txt.tmp-{}", std::process::id()));
    let width = lines.to_string().len();
    {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        for i in 1..=lines {
            let line = &source[((i - 1) % source.len() as u64) as usize];
            write!(out, "{i:0width$} ")?;
            out.write_all(line)?;
            out.write_all(b"\n")?;
        }
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    fs::rename(&tmp, &path)?;
    inspect(&path)
}

/// Counts the lines of an existing file; an unterminated last line makes it invalid.
fn inspect(path: &Path) -> io::Result<InputFile> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut lines, mut bytes, mut last) = (0u64, 0u64, b'\n');
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        bytes += n as u64;
        last = buf[n - 1];
    }
    if last != b'\n' {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "unterminated last line",
        ));
    }
    Ok(InputFile {
        path: path.to_path_buf(),
        lines,
        file_bytes: bytes,
        payload_bytes: bytes - lines,
    })
}
