//! The FileStream sink: [`FileStreamSinkConnector`] and [`FileStreamSinkTask`]
//! (Connect's `org.apache.kafka.connect.file.FileStreamSinkConnector` / `FileStreamSinkTask`).
//!
//! The task appends each record's value, rendered as Java's `String.valueOf` would (see
//! [`Value`]'s `Display`), plus `\n` to a file or to standard output.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};

use tracing::{info, trace};
use tributary_api::config::{ConfigDef, ConfigType, Importance, Parsed};
use tributary_api::connector::{Connector, ConnectorType};
use tributary_api::data::Value;
use tributary_api::record::SinkRecord;
use tributary_api::sink::{PartitionOffsets, SinkTask};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::{FILE_CONFIG, SINK_TASK_CLASS, VERSION};

/// Size of the write buffer, in bytes.
const WRITE_BUFFER: usize = 64 * 1024;

/// The sink connector's configuration keys: only [`FILE_CONFIG`] (the framework's `topics` /
/// `topics.regex` are defined and checked by the runtime; other keys are not rejected).
pub fn sink_config_def() -> ConfigDef {
    ConfigDef::new().define(
        FILE_CONFIG,
        ConfigType::String,
        Some(None),
        None,
        Importance::High,
        "File that records are appended to; when unset, the task writes to standard output.",
    )
}

/// The configured file; `None` (absent or empty) for standard output.
fn parse_file(props: &Props) -> ConnectResult<Option<String>> {
    let mut parsed = sink_config_def().parse(props)?;
    Ok(match parsed.remove(FILE_CONFIG) {
        Some(Parsed::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    })
}

/// Writes records to a file or standard output, one line each
/// (Connect's `org.apache.kafka.connect.file.FileStreamSinkConnector`).
///
/// Configuration: see [`sink_config_def`]. Creates `max_tasks` identical task configs, each equal
/// to the connector's config (all tasks append to the same file).
#[derive(Debug, Default)]
pub struct FileStreamSinkConnector {
    props: Props,
}

impl FileStreamSinkConnector {
    /// A connector that has not been started.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Connector for FileStreamSinkConnector {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    fn connector_type(&self) -> ConnectorType {
        ConnectorType::Sink
    }

    fn task_class(&self) -> String {
        SINK_TASK_CLASS.to_string()
    }

    /// Checks the configuration ([`ConnectError::Config`] naming the key on error).
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        let file = parse_file(props)?;
        info!(
            "Starting file sink connector writing to {}",
            file.as_deref().unwrap_or("standard output")
        );
        self.props = props.clone();
        Ok(())
    }

    /// `max_tasks` copies of the connector's config.
    fn task_configs(&mut self, max_tasks: usize) -> ConnectResult<Vec<Props>> {
        Ok(vec![self.props.clone(); max_tasks])
    }

    fn stop(&mut self) -> ConnectResult<()> {
        Ok(())
    }

    fn config(&self) -> ConfigDef {
        sink_config_def()
    }

    /// Nothing to check or do (KIP-875): the sink keeps no offsets of its own, as Connect's.
    fn alter_offsets(
        &mut self,
        _config: &Props,
        _offsets: tributary_api::connector::OffsetAlteration<'_>,
    ) -> ConnectResult<bool> {
        Ok(true)
    }
}

/// Where the task writes.
enum Output {
    /// An appended file; `regular` tells whether `sync_data` applies (not for e.g. a FIFO).
    File {
        writer: BufWriter<File>,
        regular: bool,
    },
    Stdout(BufWriter<io::Stdout>),
}

/// Appends `value` and a newline.
fn write_line<W: Write>(w: &mut W, value: &Value) -> io::Result<()> {
    match value {
        Value::String(s) => w.write_all(s.as_bytes())?,
        other => write!(w, "{other}")?,
    }
    w.write_all(b"\n")
}

fn write_records<W: Write>(w: &mut W, records: &[SinkRecord]) -> io::Result<()> {
    for record in records {
        write_line(w, &record.value)?;
    }
    Ok(())
}

/// Appends each record's value as a line to a file or standard output (Connect's
/// `org.apache.kafka.connect.file.FileStreamSinkTask`).
///
/// The file (config `file`) is opened on start in append mode and created if absent; without
/// `file` the task writes to standard output. Values are rendered like Java's
/// `String.valueOf(value)` (`null` for a null value) and followed by `\n`. Each `put` writes its
/// batch out through a buffer (one write per batch); [`SinkTask::flush`] (and so each offset
/// commit) also syncs the file's data to disk. Errors ([`ConnectError::Connect`], naming the file): the file cannot be opened or
/// created, or writing to it fails.
pub struct FileStreamSinkTask {
    /// The configured file; `None` for stdout.
    file: Option<String>,
    output: Option<Output>,
}

impl Default for FileStreamSinkTask {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FileStreamSinkTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileStreamSinkTask")
            .field("file", &self.file)
            .field("open", &self.output.is_some())
            .finish()
    }
}

impl FileStreamSinkTask {
    /// A task that has not been started.
    pub fn new() -> Self {
        FileStreamSinkTask {
            file: None,
            output: None,
        }
    }

    fn log_name(&self) -> &str {
        self.file.as_deref().unwrap_or("stdout")
    }

    fn io_error(&self, what: &str, e: io::Error) -> ConnectError {
        ConnectError::connect(format!(
            "Error while {what} {} for FileStreamSinkTask: {e}",
            self.log_name()
        ))
    }

    /// Writes buffered data out; for a file also syncs its data to disk.
    fn flush_output(&mut self) -> ConnectResult<()> {
        let result = match &mut self.output {
            None => Ok(()),
            Some(Output::Stdout(w)) => w.flush(),
            Some(Output::File { writer, regular }) => writer.flush().and_then(|()| {
                if *regular {
                    writer.get_ref().sync_data()
                } else {
                    Ok(())
                }
            }),
        };
        result.map_err(|e| self.io_error("flushing", e))
    }
}

impl SinkTask for FileStreamSinkTask {
    fn version(&self) -> String {
        VERSION.to_string()
    }

    /// Opens the output. Errors: [`ConnectError::Config`] for a bad config,
    /// [`ConnectError::Connect`] `Couldn't find or create file '<file>' for FileStreamSinkTask`.
    fn start(&mut self, props: &Props) -> ConnectResult<()> {
        self.file = parse_file(props)?;
        self.output = Some(match &self.file {
            None => Output::Stdout(BufWriter::with_capacity(WRITE_BUFFER, io::stdout())),
            Some(path) => {
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| {
                        ConnectError::connect(format!(
                            "Couldn't find or create file '{path}' for FileStreamSinkTask: {e}"
                        ))
                    })?;
                let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
                Output::File {
                    writer: BufWriter::with_capacity(WRITE_BUFFER, file),
                    regular,
                }
            }
        });
        Ok(())
    }

    /// Buffers one line per record (standard output is written out at the end of each call).
    fn put(&mut self, records: &[SinkRecord]) -> ConnectResult<()> {
        if records.is_empty() {
            return Ok(());
        }
        trace!("Writing {} lines to {}", records.len(), self.log_name());
        let result = match &mut self.output {
            None => return Err(ConnectError::connect("FileStreamSinkTask is not started")),
            // Each batch reaches the file when `put` returns (one write for up to a batch of
            // records, where Connect's PrintStream writes each record), so lines never wait in
            // the buffer for the next offset commit; `flush` adds the sync to disk.
            Some(Output::File { writer, .. }) => {
                write_records(writer, records).and_then(|()| writer.flush())
            }
            Some(Output::Stdout(w)) => write_records(w, records).and_then(|()| w.flush()),
        };
        result.map_err(|e| self.io_error("writing to", e))
    }

    /// Writes out everything buffered and syncs the file's data to disk.
    fn flush(&mut self, _offsets: &PartitionOffsets) -> ConnectResult<()> {
        trace!("Flushing output stream for {}", self.log_name());
        self.flush_output()
    }

    /// Flushes and closes the file (standard output stays open).
    fn stop(&mut self) -> ConnectResult<()> {
        let result = self.flush_output();
        self.output = None;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_api::data::{Schema, SchemaBuilder, Struct};
    use tributary_api::record::{Headers, TimestampType};

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn record(value: Value) -> SinkRecord {
        SinkRecord::new(
            "t",
            0,
            None,
            Value::Null,
            None,
            value,
            0,
            None,
            TimestampType::CreateTime,
            Headers::new(),
        )
    }

    #[test]
    fn appends_lines_and_flush_persists_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "existing\n").unwrap();
        let p = props(&[("file", path.to_str().unwrap()), ("topics", "a,b")]);

        let mut t = FileStreamSinkTask::new();
        t.start(&p).unwrap();
        let schema = SchemaBuilder::struct_()
            .field("a", Schema::int32_schema())
            .unwrap()
            .field("b", Schema::string_schema())
            .unwrap()
            .build();
        let s = Struct::new(schema)
            .unwrap()
            .put("a", 1)
            .unwrap()
            .put("b", "x")
            .unwrap();
        t.put(&[
            record(Value::from("line one")),
            record(Value::Int32(42)),
            record(Value::Null),
            record(Value::Struct(s)),
            record(Value::Array(vec![Value::Int64(1), Value::Int64(2)])),
        ])
        .unwrap();
        t.put(&[]).unwrap();
        t.flush(&PartitionOffsets::new()).unwrap();
        let want = "existing\nline one\n42\nnull\nStruct{a=1,b=x}\n[1, 2]\n";
        assert_eq!(std::fs::read_to_string(&path).unwrap(), want);

        t.put(&[record(Value::from("after flush"))]).unwrap();
        t.stop().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{want}after flush\n")
        );

        // A new task appends rather than truncating.
        let mut t = FileStreamSinkTask::new();
        t.start(&p).unwrap();
        t.put(&[record(Value::from("again"))]).unwrap();
        t.pre_commit(&PartitionOffsets::new()).unwrap();
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .ends_with("after flush\nagain\n"));
        t.stop().unwrap();
        assert!(t.put(&[record(Value::from("x"))]).is_err());
    }

    #[test]
    fn creates_a_missing_file_and_reports_unopenable_ones() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.txt");
        let mut t = FileStreamSinkTask::new();
        t.start(&props(&[("file", path.to_str().unwrap())]))
            .unwrap();
        assert!(path.exists());
        t.stop().unwrap();

        let dir_name = dir.path().to_str().unwrap();
        let err = FileStreamSinkTask::new()
            .start(&props(&[("file", dir_name)]))
            .unwrap_err();
        assert!(matches!(err, ConnectError::Connect(_)));
        assert!(
            err.to_string().starts_with(&format!(
                "Couldn't find or create file '{dir_name}' for FileStreamSinkTask"
            )),
            "{err}"
        );
    }

    #[test]
    fn many_records_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let mut t = FileStreamSinkTask::new();
        t.start(&props(&[("file", path.to_str().unwrap())]))
            .unwrap();
        let n = 50_000;
        t.put(
            &(0..n)
                .map(|i| record(Value::String(format!("record number {i}"))))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        t.flush(&PartitionOffsets::new()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), n);
        assert_eq!(lines[n - 1], format!("record number {}", n - 1));
        t.stop().unwrap();
    }

    #[test]
    fn stdout_mode_starts_without_a_file() {
        let mut t = FileStreamSinkTask::new();
        t.start(&props(&[("file", "")])).unwrap();
        assert!(matches!(t.output, Some(Output::Stdout(_))));
        t.put(&[]).unwrap();
        t.stop().unwrap();
    }

    #[test]
    fn connector_config_and_task_configs() {
        let mut c = FileStreamSinkConnector::new();
        let p = props(&[("file", "/tmp/out"), ("topics", "a"), ("name", "sink")]);
        c.start(&p).unwrap();
        assert_eq!(
            c.task_configs(3).unwrap(),
            vec![p.clone(), p.clone(), p.clone()]
        );
        assert_eq!(c.task_class(), SINK_TASK_CLASS);
        let names: Vec<_> = c.config().keys.iter().map(|k| k.name.clone()).collect();
        assert_eq!(names, vec!["file"]);
        for extra in [("topics", "a,b"), ("topics.regex", "a.*")] {
            let values = c.validate(&props(&[extra]));
            assert!(values.iter().all(|v| v.errors.is_empty()), "{values:?}");
        }
        assert_eq!(c.validate(&Props::new())[0].value, None);
        FileStreamSinkConnector::new().start(&Props::new()).unwrap();
    }
}
