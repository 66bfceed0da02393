package io.tributary.probe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A Java sink connector for Tributary's Java plugin tests (crates/cli/tests/hosted/java_plugins.rs):
 * appends each record's value to {@code file}, one line each (bytes as UTF-8), except values starting with
 * "bad", which it hands to the context's errant record reporter (KIP-610) with a
 * DataException; without a reporter it fails.
 *
 * It also exercises its SinkTaskContext, noting what it does in {@code events.file}:
 * <ul>
 * <li>{@code rewind.to}: in open, every partition is rewound to this offset
 *     (context.offset);</li>
 * <li>a value starting with "retry" makes the first put that sees it set
 *     context.timeout(200) and throw a RetriableException before writing anything
 *     ("retry thrown"); the redelivered batch is written;</li>
 * <li>a value "commit" calls context.requestCommit() after its batch is written;</li>
 * <li>a value "pause" pauses every assigned partition after its batch is written ("paused");
 *     each later put while paused notes "put while paused: n records", and once
 *     {@code resume.file} exists the task resumes its partitions ("resumed").</li>
 * </ul>
 */
public class ProbeSinkConnector extends SinkConnector {
    private Map<String, String> props;

    @Override
    public String version() {
        return "probe-1";
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ProbeSinkTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(props);
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef()
            .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Output file.")
            .define("rewind.to", ConfigDef.Type.LONG, null, ConfigDef.Importance.LOW,
                "Offset every partition is rewound to when opened.")
            .define("events.file", ConfigDef.Type.STRING, null, ConfigDef.Importance.LOW,
                "Where the task notes what it asked of its context.")
            .define("resume.file", ConfigDef.Type.STRING, null, ConfigDef.Importance.LOW,
                "A paused task resumes once this file exists.");
    }

    public static class ProbeSinkTask extends SinkTask {
        private Path file;
        private ErrantRecordReporter reporter;
        private Long rewindTo;
        private Path events;
        private Path resumeFile;
        private boolean paused;
        private final Set<String> retried = new HashSet<>();

        @Override
        public String version() {
            return "probe-1";
        }

        @Override
        public void start(Map<String, String> props) {
            file = Path.of(props.get("file"));
            reporter = context.errantRecordReporter();
            rewindTo = props.get("rewind.to") == null ? null : Long.valueOf(props.get("rewind.to"));
            events = props.get("events.file") == null ? null : Path.of(props.get("events.file"));
            resumeFile = props.get("resume.file") == null ? null : Path.of(props.get("resume.file"));
        }

        @Override
        public void open(Collection<TopicPartition> partitions) {
            if (rewindTo != null) {
                for (TopicPartition tp : partitions) {
                    context.offset(tp, rewindTo);
                }
                note("rewound " + partitions.size() + " partitions to " + rewindTo);
            }
        }

        private void note(String event) {
            if (events != null) {
                append(events, event + "\n");
            }
        }

        private static void append(Path path, String text) {
            try {
                Files.write(path, text.getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void put(Collection<SinkRecord> records) {
            if (paused) {
                note("put while paused: " + records.size() + " records");
                if (resumeFile != null && Files.exists(resumeFile)) {
                    paused = false;
                    context.resume(context.assignment().toArray(new TopicPartition[0]));
                    note("resumed");
                }
            }
            for (SinkRecord r : records) {
                String value = String.valueOf(r.value());
                if (value.startsWith("retry") && retried.add(value)) {
                    context.timeout(200);
                    note("retry thrown");
                    throw new RetriableException("probe retries " + value);
                }
            }
            boolean pause = false;
            boolean commit = false;
            StringBuilder out = new StringBuilder();
            for (SinkRecord r : records) {
                pause |= "pause".equals(String.valueOf(r.value()));
                commit |= "commit".equals(String.valueOf(r.value()));
                String value = r.value() instanceof byte[]
                    ? new String((byte[]) r.value(), StandardCharsets.UTF_8)
                    : String.valueOf(r.value());
                if (value.startsWith("bad")) {
                    if (reporter == null) {
                        throw new ConnectException("no errant record reporter for " + value);
                    }
                    reporter.report(r, new DataException("probe refuses " + value));
                } else {
                    out.append(value).append('\n');
                }
            }
            append(file, out.toString());
            if (commit) {
                context.requestCommit();
                note("commit requested");
            }
            if (pause) {
                paused = true;
                context.pause(context.assignment().toArray(new TopicPartition[0]));
                note("paused");
            }
        }

        @Override
        public void stop() {
        }
    }
}
