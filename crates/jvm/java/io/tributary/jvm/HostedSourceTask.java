package io.tributary.jvm;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * One source task hosted for Tributary. {@link #poll} returns the whole batch as one byte
 * array: int count, then per record its sequence number, source partition and offset
 * (schemaless JSON), topic, partition (u8 flag, int), key and value (JsonConverter envelopes),
 * timestamp (u8 flag, long) and headers (int count, then key and envelope each); then the
 * transaction boundaries the task asked for (KIP-618, only under
 * {@code transaction.boundary=connector}): int count, then per record named its index in the
 * batch and u8 1 commit, 2 abort, 3 both; then u8 for the batch (0 none, 1 commit, 2 abort,
 * 3 both).
 */
public final class HostedSourceTask {
    private final SourceTask task;
    private final JsonConverter envelope = Codec.envelopeConverter();
    private final JsonConverter plain = Codec.mapConverter();
    private final boolean tracksRecords;
    private final Map<Long, SourceRecord> inFlight = new HashMap<>();
    private long nextSeq;
    private HostedMetrics metrics;
    /** The task's TransactionContext under connector-defined boundaries; else null. */
    private TransactionRequests transactions;

    /** Removes the task's plugin metrics (Tributary calls it when it releases the task). */
    public void closeMetrics() {
        if (metrics != null) {
            metrics.close();
        }
    }

    HostedSourceTask(SourceTask task) {
        this.task = task;
        this.tracksRecords = overridesCommitRecord(task.getClass());
    }

    static boolean overridesCommitRecord(Class<?> cls) {
        try {
            return cls.getMethod("commitRecord", SourceRecord.class, RecordMetadata.class)
                .getDeclaringClass() != SourceTask.class;
        } catch (NoSuchMethodException e) {
            return true;
        }
    }

    public String version() {
        ClassLoader saved = Bridge.swap(task);
        try {
            return task.version();
        } finally {
            Bridge.restore(saved);
        }
    }

    /** Whether the task overrides commitRecord(SourceRecord, RecordMetadata). */
    public boolean wantsCommitRecord() {
        return tracksRecords;
    }

    /**
     * Initializes the task with its config, an offset reader backed by Tributary's
     * {@code reader}, and its plugin metrics' tags ({@code metricTags}, a Codec map).
     */
    public void initialize(long reader, byte[] props, byte[] metricTags, boolean connectorBoundaries) {
        Map<String, String> config = Codec.readMap(props);
        TransactionRequests transactions = connectorBoundaries ? new TransactionRequests() : null;
        this.transactions = transactions;
        HostedMetrics metrics = new HostedMetrics(metricTags);
        this.metrics = metrics;
        OffsetStorageReader offsets = new NativeOffsetReader(reader, plain);
        SourceTaskContext ctx = new SourceTaskContext() {
            @Override
            public Map<String, String> configs() {
                return config;
            }

            @Override
            public OffsetStorageReader offsetStorageReader() {
                return offsets;
            }

            @Override
            public PluginMetrics pluginMetrics() {
                return metrics.get();
            }

            @Override
            public TransactionContext transactionContext() {
                return transactions;
            }
        };
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

    /** The next batch (layout in the class comment), or null when the task returned null. */
    public byte[] poll() throws InterruptedException {
        List<SourceRecord> records;
        ClassLoader saved = Bridge.swap(task);
        try {
            records = task.poll();
        } finally {
            Bridge.restore(saved);
        }
        if (records == null) {
            return null;
        }
        Codec.Writer w = new Codec.Writer().i32(records.size());
        for (SourceRecord r : records) {
            long seq = nextSeq++;
            if (tracksRecords) {
                inFlight.put(seq, r);
            }
            w.i64(seq);
            w.bytes(r.sourcePartition() == null ? null : Codec.encode(plain, "", null, r.sourcePartition()));
            w.bytes(r.sourceOffset() == null ? null : Codec.encode(plain, "", null, r.sourceOffset()));
            w.str(r.topic());
            if (r.kafkaPartition() == null) {
                w.u8(0).i32(0);
            } else {
                w.u8(1).i32(r.kafkaPartition());
            }
            w.bytes(Codec.encode(envelope, r.topic(), r.keySchema(), r.key()));
            w.bytes(Codec.encode(envelope, r.topic(), r.valueSchema(), r.value()));
            if (r.timestamp() == null) {
                w.u8(0).i64(0);
            } else {
                w.u8(1).i64(r.timestamp());
            }
            int n = 0;
            for (Header ignored : r.headers()) {
                n++;
            }
            w.i32(n);
            for (Header h : r.headers()) {
                w.str(h.key());
                w.bytes(Codec.encode(envelope, r.topic(), h.schema(), h.value()));
            }
        }
        if (transactions == null) {
            w.i32(0).u8(0);
        } else {
            transactions.drain(records, w);
        }
        return w.toBytes();
    }

    /**
     * The TransactionContext given to a task under connector-defined boundaries: it keeps the
     * task's requests until they are reported with a batch. A request naming a record applies
     * to that record when it is in a batch the task returns (matched by equals, as Connect
     * matches); the batch's requests are reported with the batch polled after them.
     */
    static final class TransactionRequests implements TransactionContext {
        private boolean commitBatch;
        private boolean abortBatch;
        private final List<SourceRecord> commitRecords = new ArrayList<>();
        private final List<SourceRecord> abortRecords = new ArrayList<>();

        @Override
        public synchronized void commitTransaction() {
            commitBatch = true;
        }

        @Override
        public synchronized void commitTransaction(SourceRecord record) {
            commitRecords.add(Objects.requireNonNull(record, "Source record used to define transaction boundaries may not be null"));
        }

        @Override
        public synchronized void abortTransaction() {
            abortBatch = true;
        }

        @Override
        public synchronized void abortTransaction(SourceRecord record) {
            abortRecords.add(Objects.requireNonNull(record, "Source record used to define transaction boundaries may not be null"));
        }

        /** Writes the requests that apply to {@code batch} (layout in the class comment). */
        synchronized void drain(List<SourceRecord> batch, Codec.Writer w) {
            List<int[]> flagged = new ArrayList<>();
            for (int i = 0; i < batch.size(); i++) {
                SourceRecord r = batch.get(i);
                int kind = (commitRecords.remove(r) ? 1 : 0) | (abortRecords.remove(r) ? 2 : 0);
                if (kind != 0) {
                    flagged.add(new int[] {i, kind});
                }
            }
            w.i32(flagged.size());
            for (int[] f : flagged) {
                w.i32(f[0]).u8(f[1]);
            }
            w.u8((commitBatch ? 1 : 0) | (abortBatch ? 2 : 0));
            commitBatch = false;
            abortBatch = false;
        }
    }

    public void commit() throws InterruptedException {
        ClassLoader saved = Bridge.swap(task);
        try {
            task.commit();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * commitRecord for the record of sequence number {@code seq}; {@code partition} &lt; 0 when
     * the record was not written (filtered), then the metadata is null as in Connect.
     */
    public void commitRecord(long seq, String topic, int partition, long offset) throws InterruptedException {
        SourceRecord r = inFlight.remove(seq);
        if (r == null) {
            return;
        }
        RecordMetadata md = partition < 0 ? null
            : new RecordMetadata(new TopicPartition(topic, partition), offset, 0, -1L, -1, -1);
        ClassLoader saved = Bridge.swap(task);
        try {
            task.commitRecord(r, md);
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

    /** Offsets read from Tributary's offset store through {@link Natives#offsets}. */
    static final class NativeOffsetReader implements OffsetStorageReader {
        private final long handle;
        private final JsonConverter plain;

        NativeOffsetReader(long handle, JsonConverter plain) {
            this.handle = handle;
            this.plain = plain;
        }

        @Override
        public <T> Map<String, Object> offset(Map<String, T> partition) {
            return offsets(List.of(partition)).get(partition);
        }

        @Override
        public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
            List<Map<String, T>> list = new ArrayList<>(partitions);
            Codec.Writer w = new Codec.Writer().i32(list.size());
            for (Map<String, T> p : list) {
                w.bytes(Codec.encode(plain, "", null, p));
            }
            Codec.Reader r = new Codec.Reader(Natives.offsets(handle, w.toBytes()));
            int n = r.i32();
            Map<Map<String, T>, Map<String, Object>> out = new HashMap<>();
            for (int i = 0; i < n; i++) {
                Map<String, Object> offset = Codec.readJsonMap(plain, r.bytes());
                if (offset != null) {
                    out.put(list.get(i), offset);
                }
            }
            return out;
        }
    }
}
