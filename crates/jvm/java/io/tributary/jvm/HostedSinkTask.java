package io.tributary.jvm;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.errors.IllegalWorkerStateException;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.ErrantRecordReporter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.sink.SinkTaskContext;

/**
 * One sink task hosted for Tributary. {@link #put} takes a whole batch as one byte array:
 * int count, then per record topic, partition, offset, timestamp (u8 flag, long), timestamp
 * type (u8: 0 none, 1 create, 2 log append), key and value (JsonConverter envelopes), headers
 * (int count, then key and envelope each), original topic, partition and offset (KIP-793).
 */
public final class HostedSinkTask {
    private final SinkTask task;
    private HostedMetrics metrics;
    private final JsonConverter envelope = Codec.envelopeConverter();
    private final Set<TopicPartition> assignment = new HashSet<>();

    HostedSinkTask(SinkTask task) {
        this.task = task;
    }

    public String version() {
        ClassLoader saved = Bridge.swap(task);
        try {
            return task.version();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * Initializes the task with its config; {@code reporter} names Tributary's errant record
     * reporter for the task (0: the connector has none, errantRecordReporter() is null) and
     * {@code requests} the task's context in Tributary, where offset rewinds, pauses,
     * timeouts and commit requests go.
     */
    /**
     * Initializes the task with its config, Tributary's errant record reporter and request
     * handles, and its plugin metrics' tags ({@code metricTags}, a Codec map).
     */
    public void initialize(long reporter, long requests, byte[] props, byte[] metricTags) {
        Map<String, String> config = Codec.readMap(props);
        metrics = new HostedMetrics(metricTags);
        SinkTaskContext ctx = new Context(config, reporter, requests);
        ClassLoader saved = Bridge.swap(task);
        try {
            task.initialize(ctx);
        } finally {
            Bridge.restore(saved);
        }
    }

    public void start(byte[] props) {
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(task);
        try {
            task.start(config);
        } finally {
            Bridge.restore(saved);
        }
    }

    public void open(byte[] partitions) {
        List<TopicPartition> parts = Codec.readPartitions(partitions);
        assignment.addAll(parts);
        ClassLoader saved = Bridge.swap(task);
        try {
            task.open(parts);
        } finally {
            Bridge.restore(saved);
        }
    }

    public void close(byte[] partitions) {
        List<TopicPartition> parts = Codec.readPartitions(partitions);
        ClassLoader saved = Bridge.swap(task);
        try {
            task.close(parts);
        } finally {
            Bridge.restore(saved);
            assignment.removeAll(parts);
        }
    }

    public void put(byte[] batch) {
        Codec.Reader r = new Codec.Reader(batch);
        int n = r.i32();
        List<SinkRecord> records = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            records.add(readRecord(r));
        }
        ClassLoader saved = Bridge.swap(task);
        try {
            task.put(records);
        } finally {
            Bridge.restore(saved);
        }
    }

    /** One record of a put batch (layout in the class comment). */
    private SinkRecord readRecord(Codec.Reader r) {
        String topic = r.str();
        int partition = r.i32();
        long offset = r.i64();
        boolean hasTs = r.u8() == 1;
        long ts = r.i64();
        int tsType = r.u8();
        SchemaAndValue key = envelope.toConnectData(topic, r.bytes());
        SchemaAndValue value = envelope.toConnectData(topic, r.bytes());
        int nh = r.i32();
        ConnectHeaders headers = new ConnectHeaders();
        for (int h = 0; h < nh; h++) {
            String hk = r.str();
            SchemaAndValue hv = envelope.toConnectData(topic, r.bytes());
            headers.add(hk, hv);
        }
        String originalTopic = r.str();
        int originalPartition = r.i32();
        long originalOffset = r.i64();
        TimestampType type = tsType == 1 ? TimestampType.CREATE_TIME
            : tsType == 2 ? TimestampType.LOG_APPEND_TIME : TimestampType.NO_TIMESTAMP_TYPE;
        return new SinkRecord(topic, partition, key.schema(), key.value(), value.schema(),
            value.value(), offset, hasTs ? ts : null, type, headers, originalTopic,
            originalPartition, originalOffset);
    }

    /** One record in the layout of a put batch, for Tributary's errant record reporter. */
    private byte[] writeRecord(SinkRecord r) {
        Codec.Writer w = new Codec.Writer();
        w.str(r.topic()).i32(r.kafkaPartition() == null ? 0 : r.kafkaPartition()).i64(r.kafkaOffset());
        if (r.timestamp() == null) {
            w.u8(0).i64(0);
        } else {
            w.u8(1).i64(r.timestamp());
        }
        TimestampType type = r.timestampType();
        w.u8(type == TimestampType.CREATE_TIME ? 1 : type == TimestampType.LOG_APPEND_TIME ? 2 : 0);
        w.bytes(Codec.encode(envelope, r.topic(), r.keySchema(), r.key()));
        w.bytes(Codec.encode(envelope, r.topic(), r.valueSchema(), r.value()));
        int n = 0;
        for (Header ignored : r.headers()) {
            n++;
        }
        w.i32(n);
        for (Header h : r.headers()) {
            w.str(h.key());
            w.bytes(Codec.encode(envelope, r.topic(), h.schema(), h.value()));
        }
        w.str(r.originalTopic());
        w.i32(r.originalKafkaPartition() == null ? 0 : r.originalKafkaPartition());
        w.i64(r.originalKafkaOffset());
        return w.toBytes();
    }

    public void flush(byte[] offsets) {
        Map<TopicPartition, OffsetAndMetadata> current = Codec.readOffsets(offsets);
        ClassLoader saved = Bridge.swap(task);
        try {
            task.flush(current);
        } finally {
            Bridge.restore(saved);
        }
    }

    /** SinkTask.preCommit: the offsets safe to commit, in the layout of the argument. */
    public byte[] preCommit(byte[] offsets) {
        Map<TopicPartition, OffsetAndMetadata> current = Codec.readOffsets(offsets);
        ClassLoader saved = Bridge.swap(task);
        try {
            Map<TopicPartition, OffsetAndMetadata> result = task.preCommit(current);
            return Codec.offsets(result == null ? Map.of() : result);
        } finally {
            Bridge.restore(saved);
        }
    }

    public void stop() {
        ClassLoader saved = Bridge.swap(task);
        try {
            task.stop();
        } finally {
            Bridge.restore(saved);
        }
    }

    /** Removes the task's plugin metrics (Tributary calls it when it releases the task). */
    public void closeMetrics() {
        if (metrics != null) {
            metrics.close();
        }
    }

    /**
     * The task's SinkTaskContext. errantRecordReporter() reports to Tributary's reporter of
     * the task (KIP-610: dead letter queue and error log), or is null when the connector sets
     * neither, as in Connect. offset, timeout, pause, resume and requestCommit go to the
     * task's context in Tributary (Natives.sinkContext), which carries them out between
     * calls into the task as Connect's WorkerSinkTask does; pausing or resuming a partition
     * not assigned to the task throws IllegalWorkerStateException, as in Connect. Its
     * pluginMetrics() is Kafka's PluginMetricsImpl tagged with the connector and task (KIP-877),
     * shown on Tributary's /metrics.
     */
    private final class Context implements SinkTaskContext {
        private final Map<String, String> config;
        private final ErrantRecordReporter reporter;
        private final long requests;

        Context(Map<String, String> config, long reporter, long requests) {
            this.config = config;
            this.requests = requests;
            this.reporter = reporter == 0 ? null : (record, error) -> {
                // Synchronous, as Connect's reporter is when the tolerance is exceeded: the
                // native call throws then. The returned future is complete once the report
                // is queued; Tributary commits the record's offset only after its dead letter
                // queue record is written.
                Natives.reportErrant(reporter, writeRecord(record), error.getClass().getName(),
                    String.valueOf(error.getMessage()), Bridge.trace(error));
                return CompletableFuture.completedFuture(null);
            };
        }

        @Override
        public ErrantRecordReporter errantRecordReporter() {
            return reporter;
        }

        @Override
        public Map<String, String> configs() {
            return config;
        }

        @Override
        public void offset(Map<TopicPartition, Long> offsets) {
            Map<TopicPartition, OffsetAndMetadata> rewinds = new HashMap<>();
            for (Map.Entry<TopicPartition, Long> e : offsets.entrySet()) {
                if (e.getValue() != null) {
                    rewinds.put(e.getKey(), new OffsetAndMetadata(e.getValue()));
                }
            }
            Natives.sinkContext(requests, OFFSETS, Codec.offsets(rewinds));
        }

        @Override
        public void offset(TopicPartition tp, long offset) {
            offset(Map.of(tp, offset));
        }

        @Override
        public void timeout(long timeoutMs) {
            Natives.sinkContext(requests, TIMEOUT, new Codec.Writer().i64(timeoutMs).toBytes());
        }

        @Override
        public Set<TopicPartition> assignment() {
            return new HashSet<>(assignment);
        }

        @Override
        public void pause(TopicPartition... partitions) {
            checkAssigned(partitions, "pause");
            Natives.sinkContext(requests, PAUSE, Codec.partitions(Arrays.asList(partitions)));
        }

        @Override
        public void resume(TopicPartition... partitions) {
            checkAssigned(partitions, "resume");
            Natives.sinkContext(requests, RESUME, Codec.partitions(Arrays.asList(partitions)));
        }

        private void checkAssigned(TopicPartition[] partitions, String what) {
            for (TopicPartition tp : partitions) {
                if (!assignment.contains(tp)) {
                    throw new IllegalWorkerStateException("SinkTasks may not " + what
                        + " partitions that are not currently assigned to them.");
                }
            }
        }

        @Override
        public void requestCommit() {
            Natives.sinkContext(requests, REQUEST_COMMIT, null);
        }

        @Override
        public PluginMetrics pluginMetrics() {
            return metrics.get();
        }
    }

    /** Operations of Natives.sinkContext: their argument's layout in Codec. */
    static final int OFFSETS = 0; // offsets (partition, next offset)
    static final int TIMEOUT = 1; // i64 ms
    static final int PAUSE = 2; // partitions
    static final int RESUME = 3; // partitions
    static final int REQUEST_COMMIT = 4; // none

    static UnsupportedOperationException unsupported(String what) {
        return new UnsupportedOperationException(
            "SinkTaskContext." + what + " is not yet supported for Java sink tasks hosted by Tributary");
    }
}
