package io.tributary.probe;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.slf4j.LoggerFactory;

/**
 * A Java source connector for Tributary's Java plugin tests (crates/cli/tests/hosted/java_plugins.rs):
 * emits {@code records} keyed records with headers, resumes from its stored offset, logs every
 * commitRecord call (value and Kafka offset) to {@code ack.file}, and throws from poll once it
 * reaches {@code fail.at} (when set). With {@code connector.offsets.file}, the connector's start
 * appends the offset its context's OffsetStorageReader gives for the tasks' partition
 * ({@code next=<n>}, or {@code next=none}). A task logs "probe task starting at record n"
 * (SLF4J, INFO) when it starts. With {@code tasks.generated}, the connector returns that many
 * task configs whatever {@code maxTasks} is (a connector that ignores tasks.max, KIP-1004).
 */
public class ProbeSourceConnector extends SourceConnector {
    private Map<String, String> props;

    @Override
    public String version() {
        return "probe-1";
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
        String file = props.get("connector.offsets.file");
        if (file != null) {
            Map<String, Object> offset = context().offsetStorageReader().offset(ProbeSourceTask.PARTITION);
            String line = "next=" + (offset == null ? "none" : offset.get("next")) + "\n";
            try {
                Files.writeString(Path.of(file), line, StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Override
    public Class<? extends Task> taskClass() {
        return ProbeSourceTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        String generated = props.get("tasks.generated");
        return java.util.Collections.nCopies(generated == null ? 1 : Integer.parseInt(generated), props);
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef()
            .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Topic to write to.")
            .define("records", ConfigDef.Type.INT, 10, ConfigDef.Importance.HIGH, "Records to emit.")
            .define("ack.file", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "commitRecord log.")
            .define("fail.at", ConfigDef.Type.INT, -1, ConfigDef.Importance.LOW, "Record at which poll throws.")
            .define("connector.offsets.file", ConfigDef.Type.STRING, null, ConfigDef.Importance.LOW,
                "Where start notes the offset its context's reader gives.");
    }

    public static class ProbeSourceTask extends SourceTask {
        static final Map<String, String> PARTITION = Map.of("probe", "p");
        private String topic;
        private int records;
        private int failAt;
        private Path ack;
        private long next;

        @Override
        public String version() {
            return "probe-1";
        }

        @Override
        public void start(Map<String, String> props) {
            topic = props.get("topic");
            records = Integer.parseInt(props.getOrDefault("records", "10"));
            failAt = Integer.parseInt(props.getOrDefault("fail.at", "-1"));
            ack = Path.of(props.get("ack.file"));
            Map<String, Object> offset = context.offsetStorageReader().offset(PARTITION);
            next = offset == null ? 0 : (Long) offset.get("next");
            LoggerFactory.getLogger(ProbeSourceTask.class).info("probe task starting at record {}", next);
            LoggerFactory.getLogger(ProbeSourceTask.class).debug("probe task debug line at record {}", next);
        }

        @Override
        public List<SourceRecord> poll() throws InterruptedException {
            if (failAt >= 0 && next >= failAt) {
                throw new ConnectException("probe failure at record " + next);
            }
            if (next >= records) {
                Thread.sleep(100);
                return null;
            }
            List<SourceRecord> out = new ArrayList<>();
            for (int i = 0; i < 7 && next < records; i++, next++) {
                SourceRecord r = new SourceRecord(PARTITION, Map.of("next", next + 1), topic, null,
                    Schema.STRING_SCHEMA, "k" + next, Schema.STRING_SCHEMA, "v" + next);
                r.headers().addString("probe", "h" + next);
                out.add(r);
            }
            return out;
        }

        @Override
        public void commitRecord(SourceRecord record, RecordMetadata metadata) {
            String line = record.value() + " " + (metadata == null ? -1 : metadata.offset()) + "\n";
            try {
                Files.writeString(ack, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void stop() {
        }
    }
}
