//! The FileStream source: [`FileStreamSourceConnector`] and [`FileStreamSourceTask`]
//! (Connect's `org.apache.kafka.connect.file.FileStreamSourceConnector` / `FileStreamSourceTask`).
//!
//! The task tails a file (`tail -f` style) or standard input, producing one record per line.
//! Lines end at `\n`, `\r\n` or a lone `\r`; the terminator is not part of the record. A line is
//! only produced once its terminator has been read: an unterminated last line, or a `\r` at the
//! end of the data read so far (which may still turn out to be the start of `\r\n`), waits for
//! more data.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tracing::{debug, info, trace, warn};
use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed, Validator};
use tributary_api::connector::{Connector, ConnectorType, ExactlyOnceSupport, OffsetAlteration};
use tributary_api::data::{Schema, SchemaRef, Value};
use tributary_api::record::{SourceMap, SourceRecord};
use tributary_api::source::{SourceTask, SourceTaskContext};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::{FILE_CONFIG, SOURCE_TASK_CLASS, VERSION};

/// Config key `topic` (STRING, required, must be non-empty, importance HIGH): the topic every
/// line is written to. In Connect 4.x this is a plain string: a value containing commas is not
/// rejected by the connector (Kafka rejects such a topic name when records are produced).
pub const TOPIC_CONFIG: &str = "topic";

/// Config key `batch.size` (INT, default [`DEFAULT_TASK_BATCH_SIZE`], importance LOW): the most
/// records one [`SourceTask::poll`] returns. As in Connect, the key has no validator; a value
/// below 1 behaves like 1.
pub const TASK_BATCH_SIZE_CONFIG: &str = "batch.size";

/// Default of [`TASK_BATCH_SIZE_CONFIG`]: 2000 records.
pub const DEFAULT_TASK_BATCH_SIZE: i32 = 2000;

/// Key of the source partition map: `{"filename": <file>}` (`null` when reading standard input).
pub const FILENAME_FIELD: &str = "filename";

/// Key of the source offset map: `{"position": <bytes>}`, the byte position in the file just
/// after the record's line terminator (`null` when reading standard input).
pub const POSITION_FIELD: &str = "position";

/// How many bytes one read asks for.
const READ_CHUNK: usize = 64 * 1024;
/// How long a poll waits for data before returning no records.
const MAX_POLL_WAIT: Duration = Duration::from_secs(1);
/// How often a waiting poll checks for data and for [`SourceTaskContext::is_stopping`].
const WAIT_SLICE: Duration = Duration::from_millis(100);
/// The most record slots a poll reserves up front (a huge `batch.size` grows the batch as
/// lines arrive instead).
const MAX_RESERVED_RECORDS: usize = 4096;
/// A buffer grown beyond this by a very long line is released once it is empty again.
const RETAINED_CAPACITY: usize = 1024 * 1024;

/// The source connector's configuration keys: [`FILE_CONFIG`], [`TOPIC_CONFIG`] and
/// [`TASK_BATCH_SIZE_CONFIG`], with Connect's types, defaults, importance and documentation.
pub fn source_config_def() -> ConfigDef {
    ConfigDef::new()
        .define(
            FILE_CONFIG,
            ConfigType::String,
            Some(None),
            None,
            Importance::High,
            "File to read lines from; when unset, the task reads standard input.",
        )
        .define(
            TOPIC_CONFIG,
            ConfigType::String,
            None,
            Some(Validator::NonEmptyString),
            Importance::High,
            "Topic that every line read is sent to.",
        )
        .define(
            TASK_BATCH_SIZE_CONFIG,
            ConfigType::Int,
            Some(Some("2000")),
            None,
            Importance::Low,
            "Upper limit on how many records a single poll of the source task returns.",
        )
}

/// The parsed source configuration.
struct SourceConfig {
    /// `None` or empty: standard input.
    file: Option<String>,
    topic: String,
    batch_size: i32,
}

impl SourceConfig {
    fn parse(props: &Props) -> ConnectResult<SourceConfig> {
        let mut parsed = source_config_def().parse(props)?;
        let file = match parsed.remove(FILE_CONFIG) {
            Some(Parsed::String(s)) => Some(s),
            _ => None,
        };
        let topic = match parsed.remove(TOPIC_CONFIG) {
            Some(Parsed::String(s)) => s,
            _ => {
                return Err(ConnectError::config(format!(
                    "Missing required configuration \"{TOPIC_CONFIG}\""
                )))
            }
        };
        let batch_size = match parsed.remove(TASK_BATCH_SIZE_CONFIG) {
            Some(Parsed::Int(n)) => n,
            _ => DEFAULT_TASK_BATCH_SIZE,
        };
        Ok(SourceConfig {
            file,
            topic,
            batch_size,
        })
    }

    /// The file to read, `None` for standard input.
    fn path(&self) -> Option<&str> {
        self.file.as_deref().filter(|f| !f.is_empty())
    }
}

/// Reads a text file or standard input into one topic, one record per line
/// (Connect's `org.apache.kafka.connect.file.FileStreamSourceConnector`).
///
/// Configuration: see [`source_config_def`]. Always creates exactly one task, whose config is
/// the connector's config (the runtime adds `task.class`), whatever `tasks.max` says.
#[derive(Debug, Default)]
pub struct FileStreamSourceConnector {
    props: Props,
}

impl FileStreamSourceConnector {
    /// A connector that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Connector for FileStreamSourceConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Source
    }

    fn task_class(&self) -> String {
        SOURCE_TASK_CLASS.to_string()
    }

    /// Checks the configuration; errors are [`ConnectError::Config`] naming the key
    /// (e.g. a missing `topic`).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let config = SourceConfig::parse(props)?;
        info!(
            "Starting file source connector reading from {}",
            config.path().unwrap_or("standard input")
        );
        self.props = props.clone();
        Ok(())
    }

    /// One task config (a file is read by one task), equal to the connector's config.
    fn task_configs(&mut self, _max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok(vec![self.props.clone()])
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }

    fn config(&self) -> ConfigDef {
        source_config_def()
    }

    /// Supported when reading a file (its byte positions are the offsets, so records and
    /// offsets commit together), unsupported for standard input, which has no offsets (as
    /// Connect's connector answers).
    fn exactly_once_support(&self, config: &Props) -> Option<ExactlyOnceSupport> {
        let file = config.get(FILE_CONFIG).map(|f| f.trim()).unwrap_or("");
        Some(if file.is_empty() {
            ExactlyOnceSupport::Unsupported
        } else {
            ExactlyOnceSupport::Supported
        })
    }

    /// Checks offsets a user writes (KIP-875), as Connect's connector does: the file must be
    /// configured (standard input has no offsets); each offset is `null` or holds a
    /// non-negative integer `position`, and its partition holds `filename`. Whether the
    /// position fits the file is the task's business when it starts. Errors are
    /// [`ConnectError::Connect`] with Connect's messages.
    fn alter_offsets(
        &mut self,
        config: &Props,
        offsets: OffsetAlteration<'_>,
    ) -> ConnectResult<bool> {
        let parsed = SourceConfig::parse(config)?;
        if parsed.path().is_none() {
            return Err(ConnectError::connect(format!(
                "Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. This is because stdin is used for input and offsets are not tracked."
            )));
        }
        let OffsetAlteration::Source(offsets) = offsets else {
            return Ok(true);
        };
        for (partition, offset) in offsets {
            // Tombstones are allowed for anything, so that garbage can be cleaned up.
            let Some(offset) = offset else { continue };
            let Some(position) = offset.get(POSITION_FIELD) else {
                return Err(ConnectError::connect(format!(
                    "Offset objects should either be null or contain the key '{POSITION_FIELD}'"
                )));
            };
            let Some(position) = position.as_i64() else {
                return Err(ConnectError::connect(format!(
                    "The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )));
            };
            if position < 0 {
                return Err(ConnectError::connect(format!(
                    "The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )));
            }
            if !partition.contains_key(FILENAME_FIELD) {
                return Err(ConnectError::connect(format!(
                    "Partition objects should contain the key '{FILENAME_FIELD}'"
                )));
            }
        }
        Ok(true)
    }
}

/// Bytes read but not yet handed out as lines, with the line splitting.
///
/// `buf[start..]` is unconsumed; no terminator occurs in `buf[start..scan]`, so the next
/// search starts at `scan` (a pending `\r` at the very end stays at `scan`).
#[derive(Debug, Default)]
struct LineBuffer {
    buf: Vec<u8>,
    start: usize,
    scan: usize,
}

impl LineBuffer {
    /// Drops the consumed prefix, keeping the unconsumed bytes at the front.
    fn compact(&mut self) {
        if self.start == 0 {
            return;
        }
        if self.start == self.buf.len() {
            self.buf.clear();
            if self.buf.capacity() > RETAINED_CAPACITY {
                self.buf = Vec::new();
            }
        } else {
            self.buf.drain(..self.start);
        }
        self.scan -= self.start;
        self.start = 0;
    }

    /// Reads at most `max` bytes with a single `read` call; 0 means no data available now.
    fn fill_from(&mut self, reader: &mut impl Read, max: usize) -> io::Result<usize> {
        self.compact();
        let len = self.buf.len();
        self.buf.resize(len + max, 0);
        let result = loop {
            match reader.read(&mut self.buf[len..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(0),
                other => break other,
            }
        };
        self.buf.truncate(len + *result.as_ref().unwrap_or(&0));
        result
    }

    /// Appends bytes obtained elsewhere.
    fn extend(&mut self, data: &[u8]) {
        self.compact();
        self.buf.extend_from_slice(data);
    }

    /// Whether unconsumed bytes remain (possibly complete lines): worth reserving room for
    /// records.
    fn has_data(&self) -> bool {
        self.start < self.buf.len()
    }

    /// The next complete line (without its terminator) and the number of bytes it consumed
    /// (including the terminator); `None` until a whole line is available.
    fn next_line(&mut self) -> Option<(&[u8], usize)> {
        let Some(rel) = self.buf[self.scan..]
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
        else {
            self.scan = self.buf.len();
            return None;
        };
        let at = self.scan + rel;
        let end = if self.buf[at] == b'\n' {
            at + 1
        } else {
            match self.buf.get(at + 1) {
                // A `\r` ending the data read so far: wait to see whether `\n` follows.
                None => {
                    self.scan = at;
                    return None;
                }
                Some(b'\n') => at + 2,
                Some(_) => at + 1,
            }
        };
        let line_start = self.start;
        self.start = end;
        self.scan = end;
        Some((&self.buf[line_start..at], end - line_start))
    }
}

/// Bytes read from standard input, or the read error.
type StdinChunk = Result<Vec<u8>, String>;

/// Standard input, read by one process-wide thread (reads from stdin block, and a restarted
/// task must not compete with a reader left behind by its predecessor).
fn stdin_chunks() -> &'static Mutex<Receiver<StdinChunk>> {
    static STDIN: OnceLock<Mutex<Receiver<StdinChunk>>> = OnceLock::new();
    STDIN.get_or_init(|| {
        let (tx, rx) = mpsc::sync_channel(16);
        let spawned = std::thread::Builder::new()
            .name("filestream-stdin".into())
            .spawn(move || {
                let mut stdin = io::stdin().lock();
                loop {
                    let mut chunk = vec![0u8; READ_CHUNK];
                    match stdin.read(&mut chunk) {
                        Ok(0) => break,
                        Ok(n) => {
                            chunk.truncate(n);
                            if tx.send(Ok(chunk)).is_err() {
                                break;
                            }
                        }
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => {
                            // Ends the reader either way; a gone receiver means the task stopped.
                            tx.send(Err(e.to_string())).ok();
                            break;
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            warn!("Couldn't start the standard input reader thread: {e}");
        }
        Mutex::new(rx)
    })
}

/// Where the task reads from.
#[derive(Debug)]
enum Input {
    /// A file that has not been opened yet (possibly because it does not exist yet).
    Unopened,
    File(File),
    Stdin,
    /// After [`SourceTask::stop`].
    Closed,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Reads lines from a file or standard input (Connect's
/// `org.apache.kafka.connect.file.FileStreamSourceTask`).
///
/// Each record: the configured topic, no key, value schema a required STRING schema
/// (`Schema.STRING_SCHEMA`), value the line (UTF-8, invalid sequences replaced by U+FFFD),
/// timestamp the time it was read (ms). Source partition `{"filename": <file>}`, source offset
/// `{"position": <byte position just after the line's terminator>}`; on start the task resumes
/// from the committed position. For standard input the position is `null` (not tracked) and the
/// filename is the configured value (`null` when `file` is absent), as in Connect.
///
/// [`SourceTask::poll`] returns at most `batch.size` records; with no complete line available it
/// waits up to about a second (checking [`SourceTaskContext::is_stopping`]) and returns none. A
/// file that does not exist yet is waited for. Errors ([`ConnectError::Connect`], naming the file):
/// the file cannot be opened or read (e.g. it is a directory or access is denied), or its
/// committed position is not a non-negative integer.
pub struct FileStreamSourceTask {
    context: Option<SourceTaskContext>,
    /// The configured file (`None`/empty: stdin), as it appears in the source partition.
    file: Option<String>,
    /// The source partition, shared by every record (cloning the `Arc` is cheap).
    partition: Arc<SourceMap>,
    topic: String,
    batch_size: usize,
    value_schema: SchemaRef,
    input: Input,
    lines: LineBuffer,
    /// Byte position of the first unconsumed byte of `lines`; `None` for stdin or not yet open.
    position: Option<u64>,
    warned_missing: bool,
    read_chunk: usize,
    max_wait: Duration,
}

impl Default for FileStreamSourceTask {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FileStreamSourceTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStreamSourceTask")
            .field("file", &self.file)
            .field("topic", &self.topic)
            .field("batch_size", &self.batch_size)
            .field("input", &self.input)
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl FileStreamSourceTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        FileStreamSourceTask {
            context: None,
            file: None,
            partition: Arc::new(SourceMap::new()),
            topic: String::new(),
            batch_size: DEFAULT_TASK_BATCH_SIZE as usize,
            value_schema: Schema::string_schema(),
            input: Input::Closed,
            lines: LineBuffer::default(),
            position: None,
            warned_missing: false,
            read_chunk: READ_CHUNK,
            max_wait: MAX_POLL_WAIT,
        }
    }

    fn path(&self) -> Option<&str> {
        self.file.as_deref().filter(|f| !f.is_empty())
    }

    fn log_name(&self) -> &str {
        self.path().unwrap_or("stdin")
    }

    fn is_stopping(&self) -> bool {
        self.context.as_ref().is_some_and(|c| c.is_stopping())
    }

    /// The committed position for this task's file, 0 if none.
    fn committed_position(&self, path: &str) -> ConnectResult<u64> {
        let Some(context) = &self.context else {
            return Ok(0);
        };
        let Some(offset) = context.offset_reader.offset(&self.partition)? else {
            return Ok(0);
        };
        match offset.get(POSITION_FIELD) {
            None | Some(serde_json::Value::Null) => Ok(0),
            Some(v) => match v.as_i64() {
                Some(p) if p >= 0 => Ok(p as u64),
                Some(p) => Err(ConnectError::connect(format!(
                    "Offset position {p} for file {path} must not be negative"
                ))),
                None => Err(ConnectError::connect(format!(
                    "Offset position is the incorrect type for file {path}: {v}"
                ))),
            },
        }
    }

    /// Opens the file if not done yet, seeking to the committed position. `false` when the
    /// file does not exist (yet).
    fn open_input(&mut self) -> ConnectResult<bool> {
        if !matches!(self.input, Input::Unopened) {
            return Ok(true);
        }
        let Some(path) = self.path().map(str::to_string) else {
            self.input = Input::Stdin;
            return Ok(true);
        };
        let open_error = |e: &dyn std::fmt::Display| {
            ConnectError::connect(format!(
                "Error while trying to open file {path} for FileStreamSourceTask: {e}"
            ))
        };
        let mut file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if !self.warned_missing {
                    warn!("Couldn't find file {path} for FileStreamSourceTask, sleeping to wait for it to be created");
                    self.warned_missing = true;
                } else {
                    trace!("File {path} still does not exist");
                }
                return Ok(false);
            }
            Err(e) => return Err(open_error(&e)),
        };
        let metadata = file.metadata().map_err(|e| open_error(&e))?;
        if metadata.is_dir() {
            return Err(open_error(&"Is a directory"));
        }
        let position = self.committed_position(&path)?;
        if position > 0 {
            debug!("Found previous offset, seeking to position {position} of {path}");
            if metadata.is_file() && position > metadata.len() {
                warn!(
                    "Committed position {position} is beyond the end of {path} ({} bytes); waiting for the file to grow",
                    metadata.len()
                );
            }
            file.seek(SeekFrom::Start(position)).map_err(|e| {
                ConnectError::connect(format!(
                    "Error while trying to seek to offset {position} in file {path}: {e}"
                ))
            })?;
        }
        self.position = Some(position);
        self.input = Input::File(file);
        self.warned_missing = false;
        debug!("Opened {path} for reading");
        Ok(true)
    }

    /// Reads what is available into the line buffer; 0 when nothing new was available.
    fn fill(&mut self) -> ConnectResult<usize> {
        match &mut self.input {
            Input::File(file) => self.lines.fill_from(file, self.read_chunk).map_err(|e| {
                ConnectError::connect(format!(
                    "Error while reading file {} for FileStreamSourceTask: {e}",
                    self.file.as_deref().unwrap_or_default()
                ))
            }),
            Input::Stdin => {
                let rx = stdin_chunks().lock().unwrap_or_else(|p| p.into_inner());
                let mut total = 0;
                while total < self.read_chunk {
                    match rx.try_recv() {
                        Ok(Ok(chunk)) => {
                            total += chunk.len();
                            self.lines.extend(&chunk);
                        }
                        Ok(Err(e)) => {
                            return Err(ConnectError::connect(format!(
                                "Error while reading stdin: {e}"
                            )))
                        }
                        Err(_) => break,
                    }
                }
                Ok(total)
            }
            Input::Unopened | Input::Closed => Ok(0),
        }
    }

    /// Moves complete lines from the buffer into `out`, up to the batch size; `timestamp` is
    /// the read time given to every record.
    fn take_lines(&mut self, out: &mut Vec<SourceRecord>, timestamp: i64) {
        while out.len() < self.batch_size {
            let Some((line, consumed)) = self.lines.next_line() else {
                break;
            };
            // Valid UTF-8 (the usual case) is checked by the faster validator and copied once.
            let value = match std::str::from_utf8(line) {
                Ok(text) => text.to_owned(),
                Err(_) => String::from_utf8_lossy(line).into_owned(),
            };
            let position = match &mut self.position {
                Some(p) => {
                    *p += consumed as u64;
                    serde_json::Value::from(*p)
                }
                None => serde_json::Value::Null,
            };
            let mut offset = SourceMap::with_capacity(1);
            offset.insert(POSITION_FIELD.to_string(), position);
            let mut record = SourceRecord::new(
                Arc::clone(&self.partition),
                offset,
                self.topic.clone(),
                Some(self.value_schema.clone()),
                Value::String(value),
            );
            record.timestamp = Some(timestamp);
            out.push(record);
        }
    }

    /// Lines available now, at most a batch.
    fn read_records(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        let mut records = Vec::new();
        // One timestamp per poll: the lines of one batch are read within the same moment.
        let timestamp = now_ms();
        loop {
            if records.capacity() == 0 && self.lines.has_data() {
                records.reserve_exact(self.batch_size.min(MAX_RESERVED_RECORDS));
            }
            self.take_lines(&mut records, timestamp);
            if records.len() >= self.batch_size || self.fill()? == 0 {
                break;
            }
        }
        if !records.is_empty() {
            trace!("Read {} lines from {}", records.len(), self.log_name());
        }
        Ok(records)
    }

    /// Waits a little for new data unless the task is stopping or `deadline` passed (a stop
    /// request ends the wait at once); `false` to give up.
    fn wait(&self, deadline: Instant) -> bool {
        if self.is_stopping() {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        let slice = (deadline - now).min(WAIT_SLICE);
        match &self.context {
            Some(c) => !c.wait_for_stop(slice),
            None => {
                std::thread::sleep(slice);
                true
            }
        }
    }
}

impl SourceTask for FileStreamSourceTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn initialize(&mut self, context: SourceTaskContext) {
        self.context = Some(context);
    }

    /// Parses the configuration ([`ConnectError::Config`] naming the key on error). The file
    /// itself is opened by the first [`SourceTask::poll`].
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let config = SourceConfig::parse(props)?;
        let stdin = config.path().is_none();
        let filename = match &config.file {
            Some(f) => serde_json::Value::String(f.clone()),
            None => serde_json::Value::Null,
        };
        let mut partition = SourceMap::new();
        partition.insert(FILENAME_FIELD.to_string(), filename);
        self.partition = Arc::new(partition);
        self.file = config.file;
        self.topic = config.topic;
        self.batch_size = config.batch_size.max(1) as usize;
        self.lines = LineBuffer::default();
        self.position = None;
        self.warned_missing = false;
        self.input = if stdin { Input::Stdin } else { Input::Unopened };
        Ok(())
    }

    fn poll(&mut self) -> ConnectResult<Vec<SourceRecord>> {
        let deadline = Instant::now() + self.max_wait;
        loop {
            if matches!(self.input, Input::Closed) {
                return Ok(Vec::new());
            }
            if self.open_input()? {
                let records = self.read_records()?;
                if !records.is_empty() {
                    return Ok(records);
                }
            }
            if !self.wait(deadline) {
                return Ok(Vec::new());
            }
        }
    }

    fn stop(&mut self) -> ConnectResult<()> {
        trace!("Stopping FileStreamSourceTask for {}", self.log_name());
        self.input = Input::Closed;
        self.lines = LineBuffer::default();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::io::Write;
    use std::path::Path;

    use std::sync::Arc;
    use tributary_api::data::SchemaType;
    use tributary_api::source::OffsetStorageReader;

    /// Committed offsets in memory, keyed by the partition's JSON.
    #[derive(Default)]
    struct MemOffsets(Mutex<HashMap<String, SourceMap>>);

    impl MemOffsets {
        fn with(partition_file: &str, offset: serde_json::Value) -> Arc<MemOffsets> {
            let store = MemOffsets::default();
            let mut o = SourceMap::new();
            o.insert(POSITION_FIELD.into(), offset);
            store.0.lock().unwrap().insert(
                serde_json::json!({ "filename": partition_file }).to_string(),
                o,
            );
            Arc::new(store)
        }
    }

    impl OffsetStorageReader for MemOffsets {
        fn offset(&self, partition: &SourceMap) -> ConnectResult<Option<SourceMap>> {
            let key = serde_json::Value::Object(partition.clone()).to_string();
            Ok(self.0.lock().unwrap().get(&key).cloned())
        }
    }

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A started task reading `path`; `stopping` is set so polls never wait.
    fn task(
        path: &Path,
        batch: Option<usize>,
        offsets: Arc<MemOffsets>,
    ) -> (FileStreamSourceTask, tributary_api::source::StopSignal) {
        let stopping = {
            let s = tributary_api::source::StopSignal::new();
            s.set(true);
            s
        };
        let mut p = props(&[("file", path.to_str().unwrap()), ("topic", "lines")]);
        if let Some(b) = batch {
            p.insert("batch.size".into(), b.to_string());
        }
        let mut t = FileStreamSourceTask::new();
        t.initialize(SourceTaskContext {
            config: p.clone(),
            offset_reader: offsets,
            stopping: stopping.clone(),
            transaction_context: None,
            plugin_metrics: Default::default(),
        });
        t.start(&p).unwrap();
        (t, stopping)
    }

    fn lines_and_offsets(records: &[SourceRecord]) -> Vec<(String, u64)> {
        records
            .iter()
            .map(|r| {
                (
                    r.value.as_str().unwrap().to_string(),
                    r.source_offset[POSITION_FIELD].as_u64().unwrap(),
                )
            })
            .collect()
    }

    /// Polls until a poll returns nothing.
    fn drain(t: &mut FileStreamSourceTask) -> Vec<SourceRecord> {
        let mut all = Vec::new();
        loop {
            let batch = t.poll().unwrap();
            if batch.is_empty() {
                return all;
            }
            all.extend(batch);
        }
    }

    fn append(path: &Path, data: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(data).unwrap();
    }

    /// Terminated lines of `data` and the offset after each, computed independently of
    /// [`LineBuffer`]: normalise `\r\n` and lone `\r` to `\n`, keeping a pending final `\r`.
    fn reference(data: &[u8]) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        let mut line = Vec::new();
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            let term = match b {
                b'\n' => 1,
                b'\r' if i + 1 == data.len() => break,
                b'\r' if data[i + 1] == b'\n' => 2,
                b'\r' => 1,
                _ => 0,
            };
            if term == 0 {
                line.push(b);
                i += 1;
            } else {
                i += term;
                out.push((String::from_utf8_lossy(&line).into_owned(), i as u64));
                line.clear();
            }
        }
        out
    }

    #[test]
    fn splits_on_lf_crlf_and_lone_cr() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"a\nb\r\nc\rd\r\n\r\ne\r\rf\n").unwrap();
        let (mut t, _) = task(&path, None, Arc::default());
        let got = lines_and_offsets(&t.poll().unwrap());
        let want: Vec<(String, u64)> = [
            ("a", 2),
            ("b", 5),
            ("c", 7),
            ("d", 10),
            ("", 12),
            ("e", 14),
            ("", 15),
            ("f", 17),
        ]
        .iter()
        .map(|(l, o)| (l.to_string(), *o))
        .collect();
        assert_eq!(got, want);
        assert!(got
            .iter()
            .all(|(l, _)| !l.contains('\r') && !l.contains('\n')));
        assert!(t.poll().unwrap().is_empty());
    }

    #[test]
    fn terminators_split_across_read_boundaries() {
        let data = b"a\nb\r\nc\rd\r\n\r\ne\r\rf\n\r\r\n\n\rlonger line here\r\nx";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, data).unwrap();
        for chunk in 1..=9 {
            let (mut t, _) = task(&path, None, Arc::default());
            t.read_chunk = chunk;
            assert_eq!(
                lines_and_offsets(&drain(&mut t)),
                reference(data),
                "read chunk {chunk}"
            );
        }
    }

    #[test]
    fn pseudo_random_content_matches_reference_for_any_chunk_size() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let alphabet = [b'a', b'b', b'\r', b'\n', b' ', 0xc3, 0xa9];
        let data: Vec<u8> = (0..5000)
            .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, &data).unwrap();
        for chunk in [1, 2, 3, 7, 64, 4096, READ_CHUNK] {
            for batch in [1, 3, 2000] {
                let (mut t, _) = task(&path, Some(batch), Arc::default());
                t.read_chunk = chunk;
                let records = drain(&mut t);
                assert_eq!(
                    lines_and_offsets(&records),
                    reference(&data),
                    "chunk {chunk} batch {batch}"
                );
            }
        }
    }

    #[test]
    fn trailing_cr_waits_for_the_next_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"x\r").unwrap();
        let (mut t, _) = task(&path, None, Arc::default());
        assert!(
            t.poll().unwrap().is_empty(),
            "a final \\r may be the start of \\r\\n"
        );
        append(&path, b"\n");
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("x".to_string(), 3)]
        );

        std::fs::write(&path, b"y\r").unwrap();
        let (mut t, _) = task(&path, None, Arc::default());
        assert!(t.poll().unwrap().is_empty());
        append(&path, b"z\n");
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("y".to_string(), 2), ("z".to_string(), 4)]
        );
    }

    #[test]
    fn unterminated_last_line_waits_until_terminated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"one\ntw").unwrap();
        let (mut t, _) = task(&path, None, Arc::default());
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("one".to_string(), 4)]
        );
        assert!(t.poll().unwrap().is_empty());
        append(&path, b"o");
        assert!(t.poll().unwrap().is_empty());
        append(&path, b"\nthree\n");
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("two".to_string(), 8), ("three".to_string(), 14)]
        );
    }

    #[test]
    fn records_carry_topic_schema_partition_and_timestamp() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, "héllo\nok\u{1F600}\n").unwrap();
        let (mut t, _) = task(&path, None, Arc::default());
        let before = now_ms();
        let records = t.poll().unwrap();
        let after = now_ms();
        assert_eq!(
            lines_and_offsets(&records),
            vec![("héllo".to_string(), 7), ("ok\u{1F600}".to_string(), 14)]
        );
        let r = &records[0];
        assert_eq!(r.topic, "lines");
        assert_eq!(r.key, Value::Null);
        assert!(r.key_schema.is_none());
        assert_eq!(r.kafka_partition, None);
        let schema = r.value_schema.as_ref().unwrap();
        assert_eq!(schema.schema_type, SchemaType::String);
        assert!(!schema.optional);
        assert_eq!(**schema, *Schema::string_schema());
        assert_eq!(
            *r.source_partition,
            serde_json::json!({ "filename": path.to_str().unwrap() })
                .as_object()
                .unwrap()
                .clone()
        );
        let ts = r.timestamp.unwrap();
        assert!(before <= ts && ts <= after);
        assert!(r.headers.is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"ok\xff\xfebad\n\xe2\x82\n").unwrap();
        let (mut t, _) = task(&path, None, Arc::default());
        let got = lines_and_offsets(&t.poll().unwrap());
        assert_eq!(
            got,
            vec![
                ("ok\u{FFFD}\u{FFFD}bad".to_string(), 8),
                ("\u{FFFD}".to_string(), 11)
            ]
        );
    }

    #[test]
    fn resumes_from_the_committed_position() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        let name = path.to_str().unwrap();
        std::fs::write(&path, b"l1\nl2\r\nl3\n").unwrap();
        let (mut t, _) = task(&path, None, MemOffsets::with(name, serde_json::json!(3)));
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("l2".to_string(), 7), ("l3".to_string(), 10)]
        );

        // An offset for another file is not used; a null position means the start.
        let (mut t, _) = task(
            &path,
            None,
            MemOffsets::with("/elsewhere", serde_json::json!(3)),
        );
        assert_eq!(t.poll().unwrap().len(), 3);
        let (mut t, _) = task(&path, None, MemOffsets::with(name, serde_json::Value::Null));
        assert_eq!(t.poll().unwrap().len(), 3);

        // Restart round trip: the last record's offset resumes exactly after it.
        let (mut t, _) = task(&path, None, Arc::default());
        let first = t.poll().unwrap();
        let last = first.last().unwrap().source_offset[POSITION_FIELD].clone();
        t.stop().unwrap();
        append(&path, b"l4\rl5\n");
        let (mut t, _) = task(&path, None, MemOffsets::with(name, last));
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("l4".to_string(), 13), ("l5".to_string(), 16)]
        );
    }

    #[test]
    fn bad_committed_position_fails_the_task() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        let name = path.to_str().unwrap();
        std::fs::write(&path, b"l1\n").unwrap();
        for bad in [
            serde_json::json!("3"),
            serde_json::json!(1.5),
            serde_json::json!(-1),
        ] {
            let (mut t, _) = task(&path, None, MemOffsets::with(name, bad.clone()));
            let err = t.poll().unwrap_err();
            assert!(matches!(err, ConnectError::Connect(_)));
            assert!(err.to_string().contains("Offset position"), "{bad}: {err}");
            assert!(err.to_string().contains(name), "{err}");
        }
    }

    #[test]
    fn polls_return_at_most_batch_size_records() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"1\n2\n3\n4\n5\n").unwrap();
        let (mut t, _) = task(&path, Some(2), Arc::default());
        let sizes: Vec<usize> = (0..4).map(|_| t.poll().unwrap().len()).collect();
        assert_eq!(sizes, vec![2, 2, 1, 0]);

        // batch.size below 1 behaves like 1, as in Connect.
        let (mut t, _) = task(&path, Some(0), Arc::default());
        assert_eq!(t.poll().unwrap().len(), 1);
        assert_eq!(
            SourceConfig::parse(&props(&[("topic", "t")]))
                .unwrap()
                .batch_size,
            DEFAULT_TASK_BATCH_SIZE
        );
    }

    #[test]
    fn missing_file_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("later.txt");
        let (mut t, stopping) = task(&path, None, Arc::default());
        assert!(t.poll().unwrap().is_empty());
        std::fs::write(&path, b"hello\n").unwrap();
        assert_eq!(
            lines_and_offsets(&t.poll().unwrap()),
            vec![("hello".to_string(), 6)]
        );

        // A poll that is waiting for the file picks it up as soon as it appears.
        let path2 = dir.path().join("later2.txt");
        let (mut t, _) = task(&path2, None, Arc::default());
        stopping.set(false);
        t.context.as_mut().unwrap().stopping = stopping;
        // A long wait, so that returning early can only come from noticing the file (and a
        // loaded machine cannot make the test fail).
        t.max_wait = Duration::from_secs(30);
        let writer = {
            let path2 = path2.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(250));
                std::fs::write(&path2, b"now\n").unwrap();
            })
        };
        let started = Instant::now();
        let records = t.poll().unwrap();
        writer.join().unwrap();
        assert_eq!(lines_and_offsets(&records), vec![("now".to_string(), 4)]);
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the poll waited out its wait instead of noticing the file: {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn idle_poll_waits_about_a_second_and_stops_promptly() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, b"").unwrap();
        let (mut t, stopping) = task(&path, None, Arc::default());
        stopping.set(false);
        let started = Instant::now();
        assert!(t.poll().unwrap().is_empty());
        let waited = started.elapsed();
        // At least the wait (the upper bound is loose: a loaded machine may be slow to wake).
        assert!(
            waited >= MAX_POLL_WAIT.saturating_sub(Duration::from_millis(100))
                && waited < MAX_POLL_WAIT * 10,
            "{waited:?}"
        );

        // Stopping ends a waiting poll well before its wait is over.
        t.max_wait = Duration::from_secs(30);
        let stopper = {
            let stopping = stopping.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                stopping.set(true);
            })
        };
        let started = Instant::now();
        assert!(t.poll().unwrap().is_empty());
        stopper.join().unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "the poll waited out its wait instead of stopping: {:?}",
            started.elapsed()
        );
    }

    #[test]
    fn unreadable_path_fails_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, _) = task(dir.path(), None, Arc::default());
        let err = t.poll().unwrap_err();
        assert!(matches!(err, ConnectError::Connect(_)));
        assert!(
            err.to_string().contains(dir.path().to_str().unwrap()),
            "{err}"
        );

        // A path through a regular file.
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x\n").unwrap();
        let through = file.join("child");
        let (mut t, _) = task(&through, None, Arc::default());
        let err = t.poll().unwrap_err();
        assert!(err.to_string().contains(through.to_str().unwrap()), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn permission_denied_fails_naming_the_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.txt");
        std::fs::write(&path, b"x\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
        // Root ignores a file's permission bits (this machine and CI run as root); a write-only
        // sysctl file refuses reading even to root, so the test runs there instead.
        let path = if File::open(&path).is_ok() {
            std::path::PathBuf::from("/proc/sys/vm/drop_caches")
        } else {
            path
        };
        assert_eq!(
            File::open(&path).map_err(|e| e.kind()).err(),
            Some(std::io::ErrorKind::PermissionDenied),
            "{} must refuse reading",
            path.display()
        );
        let (mut t, _) = task(&path, None, Arc::default());
        let err = t.poll().unwrap_err();
        assert!(err.to_string().contains(path.to_str().unwrap()), "{err}");
    }

    #[test]
    fn stdin_mode_has_null_partition_and_needs_no_file() {
        let mut t = FileStreamSourceTask::new();
        t.start(&props(&[("topic", "t"), ("file", "")])).unwrap();
        assert!(matches!(t.input, Input::Stdin));
        assert_eq!(t.partition[FILENAME_FIELD], serde_json::json!(""));
        let mut t = FileStreamSourceTask::new();
        t.start(&props(&[("topic", "t")])).unwrap();
        assert!(matches!(t.input, Input::Stdin));
        assert_eq!(t.partition[FILENAME_FIELD], serde_json::Value::Null);
        assert_eq!(t.position, None);
        t.stop().unwrap();
        assert!(t.poll().unwrap().is_empty());
    }

    #[test]
    fn connector_config_and_task_configs() {
        let mut c = FileStreamSourceConnector::new();
        let p = props(&[
            ("file", "/tmp/x"),
            ("topic", "t"),
            ("batch.size", "10"),
            ("name", "src"),
        ]);
        c.start(&p).unwrap();
        assert_eq!(c.task_configs(5).unwrap(), vec![p.clone()]);
        assert_eq!(c.task_configs(1).unwrap().len(), 1);
        assert_eq!(c.task_class(), SOURCE_TASK_CLASS);
        c.stop().unwrap();

        let def = c.config();
        let names: Vec<_> = def.keys.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, vec!["file", "topic", "batch.size"]);
        assert_eq!(
            def.key("batch.size").unwrap().default_string().as_deref(),
            Some("2000")
        );
        assert!(def.key("topic").unwrap().required());
        assert!(!def.key("file").unwrap().required());
        assert_eq!(def.key("file").unwrap().default_string(), None);
    }

    #[test]
    fn config_validation_errors() {
        let c = FileStreamSourceConnector::new();
        let errors = |p: &Props| -> Vec<(String, Vec<String>)> {
            c.validate(p)
                .into_iter()
                .filter(|v| !v.errors.is_empty())
                .map(|v| (v.name, v.errors))
                .collect()
        };

        let missing = props(&[("file", "/tmp/x")]);
        assert_eq!(
            errors(&missing),
            vec![(
                "topic".to_string(),
                vec![
                    "Missing required configuration \"topic\" which has no default value."
                        .to_string()
                ]
            )]
        );
        let err = FileStreamSourceConnector::new()
            .start(&missing)
            .unwrap_err();
        assert!(matches!(err, ConnectError::Config(_)));
        assert!(err.to_string().contains("topic"));
        assert!(FileStreamSourceTask::new().start(&missing).is_err());

        assert_eq!(
            errors(&props(&[("topic", "")])),
            vec![(
                "topic".to_string(),
                vec![
                    "Invalid value  for configuration topic: String must be non-empty".to_string()
                ]
            )]
        );
        assert_eq!(
            errors(&props(&[("topic", "t"), ("batch.size", "many")])),
            vec![(
                "batch.size".to_string(),
                vec![
                    "Invalid value many for configuration batch.size: Not a number of type INT"
                        .to_string()
                ]
            )]
        );

        // Connect 4.x defines `topic` as a plain STRING: commas are not rejected by the connector.
        let commas = props(&[("topic", "a,b")]);
        assert!(errors(&commas).is_empty());
        FileStreamSourceConnector::new().start(&commas).unwrap();
        assert!(errors(&props(&[("topic", "t"), ("file", "")])).is_empty());
    }

    /// Splits like `str::lines` but on `\r\n`, `\r` and `\n`.
    fn split_all_terminators(text: &str) -> Vec<String> {
        let normalised = text.replace("\r\n", "\n").replace('\r', "\n");
        let mut lines: Vec<String> = normalised.split('\n').map(str::to_string).collect();
        if normalised.ends_with('\n') {
            lines.pop();
        }
        lines
    }

    #[test]
    fn reads_the_apache_loghub_sample() {
        let source = tributary_testkit::shared_dir().join("data/loghub/Apache_2k.log");
        let Ok(data) = std::fs::read(&source) else {
            eprintln!(
                "skipped: {} not found (the loghub set is extra coverage only)",
                source.display()
            );
            return;
        };
        let text = String::from_utf8(data.clone()).unwrap();
        let expected = split_all_terminators(&text);
        assert_eq!(expected.len(), 2000);

        // The file itself: its last line has no terminator, so it is still pending.
        let (mut t, _) = task(&source, None, Arc::default());
        let records = drain(&mut t);
        let values: Vec<&str> = records.iter().map(|r| r.value.as_str().unwrap()).collect();
        let complete = if text.ends_with(['\r', '\n']) {
            2000
        } else {
            1999
        };
        assert_eq!(
            values,
            expected[..complete]
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        );
        if complete == 1999 {
            let last = records.last().unwrap().source_offset[POSITION_FIELD]
                .as_u64()
                .unwrap();
            assert_eq!(last as usize, data.len() - expected[1999].len());
        }

        let dir = tempfile::tempdir().unwrap();
        // Terminated copies: the original endings, lone `\r` and `\n`.
        let variants = [
            format!("{text}\n"),
            text.replace("\r\n", "\r") + "\r\n",
            text.replace("\r\n", "\n").replace('\r', "\n") + "\n",
        ];
        for (i, variant) in variants.iter().enumerate() {
            let path = dir.path().join(format!("apache{i}.log"));
            std::fs::write(&path, variant).unwrap();
            let (mut t, _) = task(&path, None, Arc::default());
            let records = drain(&mut t);
            assert_eq!(records.len(), 2000, "variant {i}");
            for (r, want) in records.iter().zip(&expected) {
                assert_eq!(r.value.as_str().unwrap(), want, "variant {i}");
            }
            assert_eq!(
                lines_and_offsets(&records),
                reference(variant.as_bytes()),
                "variant {i}"
            );
            assert_eq!(
                records.last().unwrap().source_offset[POSITION_FIELD],
                serde_json::json!(variant.len())
            );
        }

        // Lone `\r` endings with a final `\r`: the last line waits for the next byte.
        let path = dir.path().join("apache-cr.log");
        std::fs::write(&path, text.replace("\r\n", "\r") + "\r").unwrap();
        let (mut t, _) = task(&path, Some(500), Arc::default());
        let records = drain(&mut t);
        assert_eq!(records.len(), 1999);
        append(&path, b"tail\n");
        let values: Vec<String> = drain(&mut t)
            .iter()
            .map(|r| r.value.as_str().unwrap().to_string())
            .collect();
        assert_eq!(values, vec![expected[1999].clone(), "tail".to_string()]);
    }
}
