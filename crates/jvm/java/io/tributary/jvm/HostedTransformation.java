package io.tributary.jvm;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * One Java transformation (Connect's Transformation, KIP-66) or predicate (Predicate, KIP-585)
 * of the plugin path, hosted for a Tributary task's chain. Each call carries one whole record
 * as bytes (see crates/jvm/src/transform.rs for the Rust side):
 * <ul>
 * <li>in: kind (u8: 0 source, 1 sink); for a source record its source partition and offset
 * (schemaless JSON), for a sink record its Kafka offset, timestamp type (u8: 0 none, 1
 * create, 2 log append) and original topic, partition and offset; then topic, partition (u8
 * flag, int), key and value (JsonConverter envelopes), timestamp (u8 flag, long), headers
 * (int count, then key and envelope each);</li>
 * <li>out ({@link #apply}): null when the transformation dropped the record, else topic,
 * partition (u8 flag, int), key, value, timestamp (u8 flag, long) and headers as above.</li>
 * </ul>
 */
public final class HostedTransformation {
    @SuppressWarnings("rawtypes")
    private final Transformation transformation;
    @SuppressWarnings("rawtypes")
    private final Predicate predicate;
    private final Object plugin;
    private HostedMetrics metrics;
    private final JsonConverter envelope = Codec.envelopeConverter();
    private final JsonConverter plain = Codec.mapConverter();

    /** Each class's ConfigDef, asked once (for validation and GET .../config). */
    private static final Map<String, ConfigDef> DEFS = new HashMap<>();

    @SuppressWarnings("rawtypes")
    private HostedTransformation(Object plugin) {
        this.plugin = plugin;
        this.transformation = plugin instanceof Transformation ? (Transformation) plugin : null;
        this.predicate = plugin instanceof Predicate ? (Predicate) plugin : null;
    }

    private static Object create(String className) throws ClassNotFoundException {
        return create(className, null);
    }

    /** An instance of {@code className} in {@code version} (KIP-891; null or empty: the newest). */
    private static Object create(String className, String version) throws ClassNotFoundException {
        Object plugin = Bridge.plugins().newPlugin(className, Bridge.exactly(version));
        if (plugin == null) {
            throw new ClassNotFoundException(className);
        }
        return plugin;
    }

    /** A new, unconfigured transformation of class {@code className}. */
    public static HostedTransformation newTransformation(String className, String version) throws ClassNotFoundException {
        Object plugin = create(className, version);
        if (!(plugin instanceof Transformation)) {
            throw new ClassCastException(className + " is not a Transformation");
        }
        return new HostedTransformation(plugin);
    }

    /** A new, unconfigured predicate of class {@code className}. */
    public static HostedTransformation newPredicate(String className, String version) throws ClassNotFoundException {
        Object plugin = create(className, version);
        if (!(plugin instanceof Predicate)) {
            throw new ClassCastException(className + " is not a Predicate");
        }
        return new HostedTransformation(plugin);
    }

    public void configure(byte[] props) {
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(plugin);
        try {
            if (transformation != null) {
                transformation.configure(config);
            } else {
                predicate.configure(config);
            }
        } finally {
            Bridge.restore(saved);
        }
    }

    /** The record transformed (layout in the class comment), or null when it was dropped. */
    @SuppressWarnings("unchecked")
    public byte[] apply(byte[] in) {
        ConnectRecord<?> record = read(in);
        ConnectRecord<?> out;
        ClassLoader saved = Bridge.swap(plugin);
        try {
            out = transformation.apply(record);
        } finally {
            Bridge.restore(saved);
        }
        return out == null ? null : write(out);
    }

    /** Whether the predicate matches the record. */
    @SuppressWarnings("unchecked")
    public boolean test(byte[] in) {
        ConnectRecord<?> record = read(in);
        ClassLoader saved = Bridge.swap(plugin);
        try {
            return predicate.test(record);
        } finally {
            Bridge.restore(saved);
        }
    }

    public void close() {
        ClassLoader saved = Bridge.swap(plugin);
        try {
            if (transformation != null) {
                transformation.close();
            } else {
                predicate.close();
            }
        } finally {
            Bridge.restore(saved);
            if (metrics != null) {
                metrics.close();
            }
        }
    }

    /**
     * KIP-877: hands the plugin its metrics if it implements Monitorable
     * ({@link HostedMetrics#attach}).
     */
    public void withPluginMetrics(byte[] tags) {
        metrics = HostedMetrics.attach(plugin, tags);
    }

    private ConnectRecord<?> read(byte[] in) {
        Codec.Reader r = new Codec.Reader(in);
        int kind = r.u8();
        if (kind == 0) {
            Map<String, Object> partition = Codec.readJsonMap(plain, r.bytes());
            Map<String, Object> offset = Codec.readJsonMap(plain, r.bytes());
            String topic = r.str();
            Integer kafkaPartition = r.u8() == 1 ? Integer.valueOf(r.i32()) : skipInt(r);
            SchemaAndValue key = envelope.toConnectData(topic, r.bytes());
            SchemaAndValue value = envelope.toConnectData(topic, r.bytes());
            Long timestamp = r.u8() == 1 ? Long.valueOf(r.i64()) : skipLong(r);
            ConnectHeaders headers = readHeaders(r, topic);
            return new SourceRecord(partition, offset, topic, kafkaPartition, key.schema(), key.value(),
                value.schema(), value.value(), timestamp, headers);
        }
        long kafkaOffset = r.i64();
        int tsType = r.u8();
        String originalTopic = r.str();
        int originalPartition = r.i32();
        long originalOffset = r.i64();
        String topic = r.str();
        Integer kafkaPartition = r.u8() == 1 ? Integer.valueOf(r.i32()) : skipInt(r);
        SchemaAndValue key = envelope.toConnectData(topic, r.bytes());
        SchemaAndValue value = envelope.toConnectData(topic, r.bytes());
        Long timestamp = r.u8() == 1 ? Long.valueOf(r.i64()) : skipLong(r);
        ConnectHeaders headers = readHeaders(r, topic);
        TimestampType type = tsType == 1 ? TimestampType.CREATE_TIME
            : tsType == 2 ? TimestampType.LOG_APPEND_TIME : TimestampType.NO_TIMESTAMP_TYPE;
        return new SinkRecord(topic, kafkaPartition == null ? 0 : kafkaPartition, key.schema(), key.value(),
            value.schema(), value.value(), kafkaOffset, timestamp, type, headers, originalTopic,
            originalPartition, originalOffset);
    }

    private static Integer skipInt(Codec.Reader r) {
        r.i32();
        return null;
    }

    private static Long skipLong(Codec.Reader r) {
        r.i64();
        return null;
    }

    private ConnectHeaders readHeaders(Codec.Reader r, String topic) {
        int n = r.i32();
        ConnectHeaders headers = new ConnectHeaders();
        for (int i = 0; i < n; i++) {
            String k = r.str();
            SchemaAndValue v = envelope.toConnectData(topic, r.bytes());
            headers.add(k, v);
        }
        return headers;
    }

    private byte[] write(ConnectRecord<?> r) {
        Codec.Writer w = new Codec.Writer();
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
        return w.toBytes();
    }

    private static synchronized ConfigDef def(String className) throws ClassNotFoundException {
        ConfigDef def = DEFS.get(className);
        if (def == null) {
            Object plugin = create(className);
            ClassLoader saved = Bridge.swap(plugin);
            try {
                if (plugin instanceof Transformation) {
                    def = ((Transformation<?>) plugin).config();
                } else if (plugin instanceof Predicate) {
                    def = ((Predicate<?>) plugin).config();
                }
            } finally {
                Bridge.restore(saved);
            }
            if (def == null) {
                def = new ConfigDef();
            }
            DEFS.put(className, def);
        }
        return def;
    }

    /**
     * The class's ConfigDef (its config()), in definition order: int count, then per key its
     * name, type, default (u8 flag, then ConfigDef.convertToString of it), importance,
     * documentation and whether it has a validator (u8).
     */
    public static byte[] configDef(String className) throws ClassNotFoundException {
        Map<String, ConfigDef.ConfigKey> keys = def(className).configKeys();
        Codec.Writer w = new Codec.Writer().i32(keys.size());
        for (ConfigDef.ConfigKey k : keys.values()) {
            w.str(k.name).str(k.type.name());
            if (k.hasDefault()) {
                w.u8(1).str(ConfigDef.convertToString(k.defaultValue, k.type));
            } else {
                w.u8(0).str(null);
            }
            w.str(k.importance == null ? "LOW" : k.importance.name()).str(k.documentation);
            w.u8(k.validator == null ? 0 : 1);
        }
        return w.toBytes();
    }

    /**
     * Runs the validator of key {@code name} of the class's ConfigDef on {@code value}
     * (parsed as ConfigDef parses it): null when valid, else the ConfigException's message.
     */
    public static String checkValue(String className, String name, String value) throws ClassNotFoundException {
        ConfigDef def = def(className);
        ConfigDef.ConfigKey key = def.configKeys().get(name);
        if (key == null || key.validator == null) {
            return null;
        }
        ClassLoader saved = Bridge.swap(key.validator);
        try {
            Object parsed = ConfigDef.parseType(name, value, key.type);
            key.validator.ensureValid(name, parsed);
            return null;
        } catch (ConfigException e) {
            return e.getMessage();
        } finally {
            Bridge.restore(saved);
        }
    }
}
