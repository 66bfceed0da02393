package io.tributary.jvm;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.Monitorable;
import org.apache.kafka.common.metrics.PluginMetrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;

/**
 * The plugin metrics (KIP-877) of one hosted connector or task: Kafka's own
 * {@link PluginMetricsImpl} over the JVM's one {@link Metrics} registry, tagged as Connect tags
 * them ({@code connector}, and {@code task} for a task). Created when the plugin first asks for
 * it, closed (its metrics removed) when Tributary releases the instance. Tributary's
 * {@code /metrics} reads the whole registry with {@link #snapshot()} at each scrape.
 */
public final class HostedMetrics {
    /** The registry every hosted plugin's metrics live in; no reporter, nothing scheduled. */
    private static final Metrics REGISTRY = new Metrics();
    private static final String GROUP = "plugins";

    private final Map<String, String> tags;
    private PluginMetricsImpl metrics;
    private boolean closed;

    /** {@code tags}: Codec map bytes of the instance's tags, in Connect's order. */
    HostedMetrics(byte[] tags) {
        this.tags = Codec.readMap(tags);
    }

    /**
     * KIP-877 for a converter, transformation or predicate: a plugin that implements
     * {@link Monitorable} is handed its metrics, tagged {@code tags} (a Codec map: connector,
     * task, and the plugin's role as Connect tags it); returns them, to be closed with the
     * plugin, or null for a plugin that is not Monitorable.
     */
    static HostedMetrics attach(Object plugin, byte[] tags) {
        if (!(plugin instanceof Monitorable)) {
            return null;
        }
        HostedMetrics metrics = new HostedMetrics(tags);
        ClassLoader saved = Bridge.swap(plugin);
        try {
            ((Monitorable) plugin).withPluginMetrics(metrics.get());
        } finally {
            Bridge.restore(saved);
        }
        return metrics;
    }

    synchronized PluginMetrics get() {
        if (closed) {
            throw new IllegalStateException("This PluginMetrics instance is closed");
        }
        if (metrics == null) {
            metrics = new PluginMetricsImpl(REGISTRY, tags);
        }
        return metrics;
    }

    synchronized void close() {
        closed = true;
        if (metrics != null) {
            try {
                metrics.close();
            } catch (IOException e) {
                // PluginMetricsImpl.close only removes metrics; it does not fail.
            }
            metrics = null;
        }
    }

    /**
     * Every plugin metric with a numeric value: count, then per metric its name, description,
     * tags (Codec map) and value (the bits of a double). Values that are not numbers are left
     * out, as the JMX exporter leaves out attributes that are not.
     */
    public static byte[] snapshot() {
        List<KafkaMetric> found = new ArrayList<>();
        for (Map.Entry<MetricName, KafkaMetric> e : REGISTRY.metrics().entrySet()) {
            if (GROUP.equals(e.getKey().group())) {
                found.add(e.getValue());
            }
        }
        List<Object[]> numeric = new ArrayList<>();
        for (KafkaMetric m : found) {
            Object v;
            try {
                v = m.metricValue();
            } catch (RuntimeException e) {
                continue;
            }
            if (v instanceof Number) {
                numeric.add(new Object[] {m.metricName(), ((Number) v).doubleValue()});
            }
        }
        Codec.Writer w = new Codec.Writer().i32(numeric.size());
        for (Object[] m : numeric) {
            MetricName name = (MetricName) m[0];
            w.str(name.name());
            w.str(name.description());
            w.map(name.tags());
            w.i64(Double.doubleToLongBits((Double) m[1]));
        }
        return w.toBytes();
    }
}
