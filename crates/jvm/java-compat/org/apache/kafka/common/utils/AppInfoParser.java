package org.apache.kafka.common.utils;

import org.apache.kafka.common.metrics.Metrics;

/**
 * Compatibility for plugins built against Kafka 4.1 or older, added to Tributary's bridge only
 * when the Kafka clients it runs on lack this class (4.2 moved it to
 * {@code org.apache.kafka.common.utils.internals}). Apache's connect-file 4.1.1, the last one
 * published, calls {@link #getVersion()} from its connectors' {@code version()}; without this
 * class those plugins fail with {@code NoClassDefFoundError} on a 4.4 runtime. Every method
 * hands over to the clients' own implementation.
 */
public final class AppInfoParser {
    private AppInfoParser() {
    }

    /** The Kafka clients' version, as the 4.1 method gave it. */
    public static String getVersion() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getVersion();
    }

    /** The Kafka clients' commit id, as the 4.1 method gave it. */
    public static String getCommitId() {
        return org.apache.kafka.common.utils.internals.AppInfoParser.getCommitId();
    }

    /** Registers the app-info MBean and metrics of a client, as the 4.1 method did. */
    public static void registerAppInfo(String prefix, String id, Metrics metrics, long nowMs) {
        org.apache.kafka.common.utils.internals.AppInfoParser.registerAppInfo(prefix, id, metrics, nowMs);
    }

    /** Removes what {@link #registerAppInfo} registered. */
    public static void unregisterAppInfo(String prefix, String id, Metrics metrics) {
        org.apache.kafka.common.utils.internals.AppInfoParser.unregisterAppInfo(prefix, id, metrics);
    }
}
