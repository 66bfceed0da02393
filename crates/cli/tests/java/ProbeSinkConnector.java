package io.tributary.probe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.errors.DataException;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;

/**
 * A Java sink connector for Tributary's Java plugin tests (crates/cli/tests/java_plugins.rs):
 * appends each record's value to {@code file}, one line each, except values starting with
 * "bad", which it hands to the context's errant record reporter (KIP-610) with a
 * DataException; without a reporter it fails.
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
            .define("file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Output file.");
    }

    public static class ProbeSinkTask extends SinkTask {
        private Path file;
        private ErrantRecordReporter reporter;

        @Override
        public String version() {
            return "probe-1";
        }

        @Override
        public void start(Map<String, String> props) {
            file = Path.of(props.get("file"));
            reporter = context.errantRecordReporter();
        }

        @Override
        public void put(Collection<SinkRecord> records) {
            StringBuilder out = new StringBuilder();
            for (SinkRecord r : records) {
                String value = String.valueOf(r.value());
                if (value.startsWith("bad")) {
                    if (reporter == null) {
                        throw new ConnectException("no errant record reporter for " + value);
                    }
                    reporter.report(r, new DataException("probe refuses " + value));
                } else {
                    out.append(value).append('\n');
                }
            }
            try {
                Files.write(file, out.toString().getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
        }
    }
}
