package dev.tributary.bench;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;

/**
 * A task of {@link SequenceSourceConnector}: sends 0, 1, 2, … to one topic, one record per
 * poll, no faster than a given number of records a second, and carries on after a restart from
 * the number after the last one whose offset was committed.
 *
 * <p>It produces what a task of Tributary's built-in VerifiableSource produces for the same
 * settings (crates/plugins/src/testing/verifiable.rs), so a Java worker running it carries the
 * same load as a Tributary worker running that one.
 *
 * <p>Settings (all strings, as Connect passes them):
 * <ul>
 *   <li>{@code id}: this task's number (a 32-bit integer; the connector sets it);</li>
 *   <li>{@code name}: the connector's name (Connect sets it), echoed in the lines printed;</li>
 *   <li>{@code topic}: where the records go;</li>
 *   <li>{@code throughput}: records a second for this task (an integer; below zero, no limit;
 *       zero, a single record and then none);</li>
 *   <li>{@code complete.record.data}: {@code true} in any letter case for a struct value
 *       carrying the whole report rather than the bare number.</li>
 * </ul>
 *
 * <p>Every record has the source partition <code>{"id": task}</code>, the source offset
 * <code>{"seqno": n}</code>, the key {@code task} (INT32) and the value {@code n} (INT64), or
 * with {@code complete.record.data} a struct of {@code name} (STRING), {@code task} (INT32),
 * {@code topic} (STRING), {@code time_ms} (INT64) and {@code seqno} (INT64). No Kafka partition
 * and no timestamp are set.
 *
 * <p>For each record sent, a line of JSON goes to standard output,
 * <code>{"task":…,"seqno":…,"time_ms":…,"name":…,"topic":…}</code>, and once Kafka has
 * acknowledged the record, the same with <code>"committed":true</code> in front.
 */
public final class SequenceSourceTask extends SourceTask {
    /** What {@link #version()} reports, for the connector too. */
    static final String PLUGIN_VERSION = "1.0";

    /** Setting: the task's number; also the key of the source partition map. */
    static final String ID = "id";
    /** Setting: the connector's name. */
    static final String NAME = "name";
    /** Setting: the topic written to. */
    static final String TOPIC = "topic";
    /** Setting: the limit in records a second for this task. */
    static final String THROUGHPUT = "throughput";
    /** Setting: whether the value is the struct rather than the number. */
    static final String COMPLETE_RECORD_DATA = "complete.record.data";
    /** Key of the source offset map. */
    static final String SEQNO = "seqno";

    /** Longest one {@link #poll()} waits for the next record to fall due. */
    private static final long MAX_WAIT_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Schema of the value under {@code complete.record.data}. */
    private static final Schema REPORT_SCHEMA = SchemaBuilder.struct()
            .field("name", Schema.STRING_SCHEMA)
            .field("task", Schema.INT32_SCHEMA)
            .field("topic", Schema.STRING_SCHEMA)
            .field("time_ms", Schema.INT64_SCHEMA)
            .field("seqno", Schema.INT64_SCHEMA)
            .build();

    /** Counted down by {@link #stop()}, which Connect calls from a thread of its own. */
    private final CountDownLatch stopRequested = new CountDownLatch(1);

    private String connector;
    private int task;
    private String topic;
    private boolean structValue;
    private Map<String, Object> partition;
    /** The number the next record carries. */
    private long nextSeqno;
    /** Records returned since {@link #start}. */
    private long sentSinceStart;
    private Pacing pacing;
    /** How every printed line ends: the name and topic fields and the closing brace. */
    private String lineEnd;

    @Override
    public String version() {
        return PLUGIN_VERSION;
    }

    @Override
    public void start(Map<String, String> settings) {
        connector = settings.get(NAME);
        long id = integerSetting(settings, ID);
        if (id < Integer.MIN_VALUE || id > Integer.MAX_VALUE) {
            throw new ConnectException("SequenceSourceTask: 'id' is out of range: " + id);
        }
        task = (int) id;
        topic = settings.get(TOPIC);
        if (topic == null) {
            throw new ConnectException("SequenceSourceTask: the setting 'topic' is missing");
        }
        long throughput = integerSetting(settings, THROUGHPUT);
        structValue = Boolean.parseBoolean(settings.get(COMPLETE_RECORD_DATA));
        partition = Map.of(ID, task);
        nextSeqno = firstSeqno();
        sentSinceStart = 0;
        pacing = new Pacing(throughput, System.nanoTime());
        lineEnd = ",\"name\":" + jsonString(connector) + ",\"topic\":" + jsonString(topic) + "}";
    }

    /** The setting {@code key} as a whole number, or a ConnectException naming it. */
    private static long integerSetting(Map<String, String> settings, String key) {
        String text = settings.get(key);
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new ConnectException(
                    "SequenceSourceTask: '" + key + "' must be an integer, got " + text);
        }
    }

    /** One past the committed offset of this task's partition, or 0 when there is none. */
    private long firstSeqno() {
        Map<String, Object> committed = context.offsetStorageReader().offset(partition);
        if (committed == null) {
            return 0;
        }
        if (committed.get(SEQNO) instanceof Number last) {
            return last.longValue() + 1;
        }
        throw new ConnectException("SequenceSourceTask " + task
                + ": the committed offset " + committed + " holds no numeric 'seqno'");
    }

    /**
     * The next record once it is due; {@code null} when a stop was requested or the record is
     * not due within {@link #MAX_WAIT_NANOS} (Connect then polls again).
     */
    @Override
    public List<SourceRecord> poll() throws InterruptedException {
        long wait = pacing.nanosUntil(sentSinceStart, System.nanoTime());
        if (wait > 0) {
            long slice = Math.min(wait, MAX_WAIT_NANOS);
            boolean stopped = stopRequested.await(slice, TimeUnit.NANOSECONDS);
            if (stopped || slice < wait) {
                return null;
            }
        }
        if (stopRequested.getCount() == 0) {
            return null;
        }
        long seqno = nextSeqno;
        long sentAtMs = System.currentTimeMillis();
        Schema valueSchema = Schema.INT64_SCHEMA;
        Object value = seqno;
        if (structValue) {
            valueSchema = REPORT_SCHEMA;
            value = new Struct(REPORT_SCHEMA)
                    .put("name", connector)
                    .put("task", task)
                    .put("topic", topic)
                    .put("time_ms", sentAtMs)
                    .put("seqno", seqno);
        }
        SourceRecord record = new SourceRecord(partition, Map.of(SEQNO, seqno), topic, null,
                Schema.INT32_SCHEMA, task, valueSchema, value);
        System.out.println(line(false, seqno, sentAtMs));
        nextSeqno++;
        sentSinceStart++;
        return List.of(record);
    }

    /** Prints the acknowledged record's line, marked committed. */
    @Override
    public void commitRecord(SourceRecord record, RecordMetadata metadata) {
        Object seqno = record.sourceOffset().get(SEQNO);
        long n = seqno instanceof Number number ? number.longValue() : -1;
        System.out.println(line(true, n, System.currentTimeMillis()));
    }

    @Override
    public void stop() {
        stopRequested.countDown();
    }

    private String line(boolean committed, long seqno, long timeMs) {
        StringBuilder out = new StringBuilder(112).append('{');
        if (committed) {
            out.append("\"committed\":true,");
        }
        return out.append("\"task\":").append(task)
                .append(",\"seqno\":").append(seqno)
                .append(",\"time_ms\":").append(timeMs)
                .append(lineEnd)
                .toString();
    }

    /** {@code s} as a JSON string literal, or {@code null}. */
    static String jsonString(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    /**
     * When each record may go out so that the task averages at most {@code perSecond} records a
     * second from its start: the k-th record since the start (k = 0, 1, …) is due k / perSecond
     * seconds after it. A task that fell behind sends the overdue records without waiting until
     * it is back on schedule. Below zero there is no limit; zero lets only the first record go.
     */
    static final class Pacing {
        private final long perSecond;
        private final long originNanos;

        Pacing(long perSecond, long originNanos) {
            this.perSecond = perSecond;
            this.originNanos = originNanos;
        }

        /** Nanoseconds from {@code nowNanos} until record {@code k} is due (0 or less: now). */
        long nanosUntil(long k, long nowNanos) {
            if (perSecond < 0 || k == 0) {
                return 0;
            }
            if (perSecond == 0) {
                return Long.MAX_VALUE;
            }
            long dueAfterOrigin = (long) (k * (1e9 / perSecond));
            return (originNanos - nowNanos) + dueAfterOrigin;
        }
    }
}
