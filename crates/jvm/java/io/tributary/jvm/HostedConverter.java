package io.tributary.jvm;

import java.util.Map;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.HeaderConverter;

/**
 * One Java converter (Connect's Converter) or header converter (HeaderConverter) of the plugin
 * path, hosted for a Tributary task (see crates/jvm/src/converter.rs for the Rust side). Connect
 * data crosses as a JsonConverter envelope (schemas enabled), converted bytes as they are;
 * a null envelope or null bytes stand for a Kafka null.
 */
public final class HostedConverter {
    private final Object plugin;
    private HostedMetrics metrics;
    private final Converter converter;
    private final HeaderConverter headerConverter;
    private final JsonConverter envelope = Codec.envelopeConverter();

    private HostedConverter(Object plugin) {
        this.plugin = plugin;
        this.converter = plugin instanceof Converter ? (Converter) plugin : null;
        this.headerConverter = plugin instanceof HeaderConverter ? (HeaderConverter) plugin : null;
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

    /** A new, unconfigured converter of class {@code className}. */
    public static HostedConverter newConverter(String className, String version) throws ClassNotFoundException {
        Object plugin = create(className, version);
        if (!(plugin instanceof Converter)) {
            throw new ClassCastException(className + " is not a Converter");
        }
        return new HostedConverter(plugin);
    }

    /** A new, unconfigured header converter of class {@code className}. */
    public static HostedConverter newHeaderConverter(String className, String version) throws ClassNotFoundException {
        Object plugin = create(className, version);
        if (!(plugin instanceof HeaderConverter)) {
            throw new ClassCastException(className + " is not a HeaderConverter");
        }
        return new HostedConverter(plugin);
    }

    /** Converter.configure(props, isKey), or HeaderConverter.configure(props). */
    public void configure(byte[] props, boolean isKey) {
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(plugin);
        try {
            if (converter != null) {
                converter.configure(config, isKey);
            } else {
                headerConverter.configure(config);
            }
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * Converter.fromConnectData(topic, headers, schema, value) of the data in {@code data} (an
     * envelope) with the record's headers ({@code headers}: int count, then key and bytes
     * each). Returns the converted bytes, then the headers as the converter left them, in the
     * same layout.
     */
    public byte[] fromConnectData(String topic, byte[] headers, byte[] data) {
        SchemaAndValue in = envelope.toConnectData(topic, data);
        RecordHeaders kafkaHeaders = readHeaders(headers);
        byte[] out;
        ClassLoader saved = Bridge.swap(plugin);
        try {
            out = converter.fromConnectData(topic, kafkaHeaders, in.schema(), in.value());
        } finally {
            Bridge.restore(saved);
        }
        Codec.Writer w = new Codec.Writer().bytes(out);
        Header[] all = kafkaHeaders.toArray();
        w.i32(all.length);
        for (Header h : all) {
            w.str(h.key()).bytes(h.value());
        }
        return w.toBytes();
    }

    /**
     * Converter.toConnectData(topic, headers, bytes) with the consumed record's headers (layout
     * as for fromConnectData), as an envelope.
     */
    public byte[] toConnectData(String topic, byte[] headers, byte[] bytes) {
        SchemaAndValue out;
        RecordHeaders kafkaHeaders = readHeaders(headers);
        ClassLoader saved = Bridge.swap(plugin);
        try {
            out = converter.toConnectData(topic, kafkaHeaders, bytes);
        } finally {
            Bridge.restore(saved);
        }
        return Codec.encode(envelope, topic, out.schema(), out.value());
    }

    private static RecordHeaders readHeaders(byte[] headers) {
        RecordHeaders out = new RecordHeaders();
        Codec.Reader r = new Codec.Reader(headers);
        int n = r.i32();
        for (int i = 0; i < n; i++) {
            out.add(r.str(), r.bytes());
        }
        return out;
    }

    /** HeaderConverter.fromConnectHeader(topic, key, schema, value) of an envelope. */
    public byte[] fromConnectHeader(String topic, String key, byte[] data) {
        SchemaAndValue in = envelope.toConnectData(topic, data);
        ClassLoader saved = Bridge.swap(plugin);
        try {
            return headerConverter.fromConnectHeader(topic, key, in.schema(), in.value());
        } finally {
            Bridge.restore(saved);
        }
    }

    /** HeaderConverter.toConnectHeader(topic, key, bytes), as an envelope. */
    public byte[] toConnectHeader(String topic, String key, byte[] bytes) {
        SchemaAndValue out;
        ClassLoader saved = Bridge.swap(plugin);
        try {
            out = headerConverter.toConnectHeader(topic, key, bytes);
        } finally {
            Bridge.restore(saved);
        }
        return Codec.encode(envelope, topic, out.schema(), out.value());
    }

    public void close() throws Exception {
        try {
            if (plugin instanceof AutoCloseable) {
                ((AutoCloseable) plugin).close();
            }
        } finally {
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
}
