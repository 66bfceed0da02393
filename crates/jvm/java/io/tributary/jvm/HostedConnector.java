package io.tributary.jvm;

import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.ConnectorContext;
import org.apache.kafka.connect.sink.SinkConnectorContext;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceConnectorContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/** One connector instance hosted for Tributary; maps and results cross as Codec bytes. */
public final class HostedConnector {
    private final Connector connector;
    private HostedMetrics metrics;

    HostedConnector(Connector connector) {
        this.connector = connector;
    }

    /** Removes the connector's plugin metrics (Tributary calls it when it releases the instance). */
    public void closeMetrics() {
        if (metrics != null) {
            metrics.close();
        }
    }

    public String version() {
        ClassLoader saved = Bridge.swap(connector);
        try {
            return connector.version();
        } finally {
            Bridge.restore(saved);
        }
    }

    public String taskClass() {
        ClassLoader saved = Bridge.swap(connector);
        try {
            return connector.taskClass().getName();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * Hands the connector a context whose calls reach Tributary's context {@code handle}; a
     * source connector's offsetStorageReader() reads through Tributary's reader {@code reader};
     * its pluginMetrics() is Kafka's PluginMetricsImpl tagged {@code metricTags} (KIP-877).
     */
    public void initialize(long handle, long reader, byte[] metricTags) {
        metrics = new HostedMetrics(metricTags);
        ConnectorContext ctx;
        if (connector instanceof SourceConnector) {
            ctx = new SourceContext(handle, reader, metrics);
        } else {
            ctx = new SinkContext(handle, metrics);
        }
        ClassLoader saved = Bridge.swap(connector);
        try {
            connector.initialize(ctx);
        } finally {
            Bridge.restore(saved);
        }
    }

    public void start(byte[] props) {
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(connector);
        try {
            connector.start(config);
        } finally {
            Bridge.restore(saved);
        }
    }

    /** int count, then each task config as a Codec map. */
    public byte[] taskConfigs(int maxTasks) {
        ClassLoader saved = Bridge.swap(connector);
        try {
            List<Map<String, String>> configs = connector.taskConfigs(maxTasks);
            Codec.Writer w = new Codec.Writer().i32(configs.size());
            for (Map<String, String> c : configs) {
                w.map(c);
            }
            return w.toBytes();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * SourceConnector.exactlyOnceSupport(config) (KIP-618): "SUPPORTED", "UNSUPPORTED", or
     * null when the connector does not say (or is not a source connector).
     */
    public String exactlyOnceSupport(byte[] props) {
        if (!(connector instanceof SourceConnector)) {
            return null;
        }
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(connector);
        try {
            ExactlyOnceSupport support = ((SourceConnector) connector).exactlyOnceSupport(config);
            return support == null ? null : support.name();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * SourceConnector.canDefineTransactionBoundaries(config) (KIP-618): "SUPPORTED" or
     * "UNSUPPORTED" (also for a sink connector, or an answer of null).
     */
    public String canDefineTransactionBoundaries(byte[] props) {
        if (!(connector instanceof SourceConnector)) {
            return "UNSUPPORTED";
        }
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(connector);
        try {
            ConnectorTransactionBoundaries b =
                ((SourceConnector) connector).canDefineTransactionBoundaries(config);
            return b == null ? "UNSUPPORTED" : b.name();
        } finally {
            Bridge.restore(saved);
        }
    }

    public void stop() {
        ClassLoader saved = Bridge.swap(connector);
        try {
            connector.stop();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * The connector's ConfigDef: int count, then per key name, type, whether it has a default
     * (u8), the default as ConfigDef.convertToString gives it, importance, documentation.
     */
    public byte[] config() {
        ClassLoader saved = Bridge.swap(connector);
        try {
            ConfigDef def = connector.config();
            Map<String, ConfigDef.ConfigKey> keys = def == null ? Map.of() : def.configKeys();
            Codec.Writer w = new Codec.Writer().i32(keys.size());
            for (ConfigDef.ConfigKey k : keys.values()) {
                w.str(k.name).str(k.type.name());
                if (k.hasDefault()) {
                    w.u8(1).str(ConfigDef.convertToString(k.defaultValue, k.type));
                } else {
                    w.u8(0).str(null);
                }
                w.str(k.importance == null ? "LOW" : k.importance.name()).str(k.documentation);
            }
            return w.toBytes();
        } finally {
            Bridge.restore(saved);
        }
    }

    /**
     * Connector.validate: int count, then per value name, value (as a string), recommended
     * values, error messages (int count then strings each) and visible (u8).
     */
    public byte[] validate(byte[] props) {
        Map<String, String> config = Codec.readMap(props);
        ClassLoader saved = Bridge.swap(connector);
        try {
            ConfigDef def = connector.config();
            Map<String, ConfigDef.ConfigKey> keys = def == null ? Map.of() : def.configKeys();
            Config result = connector.validate(config);
            List<ConfigValue> values = result.configValues();
            Codec.Writer w = new Codec.Writer().i32(values.size());
            for (ConfigValue v : values) {
                ConfigDef.ConfigKey key = keys.get(v.name());
                ConfigDef.Type type = key == null ? null : key.type;
                w.str(v.name()).str(asString(v.value(), type));
                w.i32(v.recommendedValues().size());
                for (Object r : v.recommendedValues()) {
                    w.str(asString(r, type));
                }
                w.i32(v.errorMessages().size());
                for (String e : v.errorMessages()) {
                    w.str(e);
                }
                w.u8(v.visible() ? 1 : 0);
            }
            return w.toBytes();
        } finally {
            Bridge.restore(saved);
        }
    }

    private static String asString(Object value, ConfigDef.Type type) {
        if (value == null) {
            return null;
        }
        if (type != null) {
            return ConfigDef.convertToString(value, type);
        }
        return value.toString();
    }

    private static class Context implements ConnectorContext {
        final long handle;
        final HostedMetrics metrics;

        Context(long handle, HostedMetrics metrics) {
            this.handle = handle;
            this.metrics = metrics;
        }

        @Override
        public void requestTaskReconfiguration() {
            Natives.requestTaskReconfiguration(handle);
        }

        @Override
        public void raiseError(Exception e) {
            Natives.raiseError(handle, Bridge.trace(e));
        }

        @Override
        public PluginMetrics pluginMetrics() {
            return metrics.get();
        }
    }

    private static final class SinkContext extends Context implements SinkConnectorContext {
        SinkContext(long handle, HostedMetrics metrics) {
            super(handle, metrics);
        }
    }

    private static final class SourceContext extends Context implements SourceConnectorContext {
        private final OffsetStorageReader reader;

        SourceContext(long handle, long reader, HostedMetrics metrics) {
            super(handle, metrics);
            this.reader = new HostedSourceTask.NativeOffsetReader(reader, Codec.mapConverter());
        }

        /** The committed offsets of the connector's tasks, from Tributary's offset store. */
        @Override
        public OffsetStorageReader offsetStorageReader() {
            return reader;
        }
    }
}
