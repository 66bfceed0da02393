package io.tributary.jvm;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.config.ConfigData;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.provider.ConfigProvider;
import org.apache.kafka.connect.runtime.isolation.LoaderSwap;
import org.apache.kafka.connect.runtime.isolation.Plugins;

/**
 * A config provider class of the plugin path (KIP-297's {@link ConfigProvider}), created and
 * configured as a Java worker creates the providers its file declares
 * ({@code Plugins.newConfigProvider}: the class named by {@code config.providers.<name>.class},
 * loaded by its plugin's loader, configured with the {@code config.providers.<name>.param.*}
 * settings), then asked for values on Tributary's behalf. Every call runs with the provider's
 * class loader as the thread's context loader, as Connect calls it.
 */
public final class HostedConfigProvider {
    private final ConfigProvider provider;

    private HostedConfigProvider(ConfigProvider provider) {
        this.provider = provider;
    }

    /**
     * The provider {@code name} the worker settings {@code settings} (a Codec map holding its
     * {@code config.providers.<name>.*} keys) declare.
     */
    public static HostedConfigProvider create(String name, byte[] settings) {
        Map<String, String> props = Codec.readMap(settings);
        AbstractConfig config = new AbstractConfig(new ConfigDef(), props, false);
        ConfigProvider provider = Bridge.plugins()
                .newConfigProvider(config, "config.providers." + name, Plugins.ClassLoaderUsage.PLUGINS);
        if (provider == null) {
            throw new IllegalArgumentException("config.providers." + name + ".class is not set");
        }
        return new HostedConfigProvider(provider);
    }

    /**
     * {@code ConfigProvider.get(path, keys)} ({@code keys}: a Codec list of strings, as a map's
     * keys with empty values): the data as a Codec map, then the TTL in ms (-1: none).
     */
    public byte[] get(String path, byte[] keys) {
        Set<String> wanted = new LinkedHashSet<>(Codec.readMap(keys).keySet());
        try (LoaderSwap swap = Bridge.plugins().withClassLoader(provider.getClass().getClassLoader())) {
            ConfigData data = wanted.isEmpty() ? provider.get(path) : provider.get(path, wanted);
            // A key whose value is null is one the provider does not have (ConfigTransformer
            // leaves its reference as it is).
            Map<String, String> values = new LinkedHashMap<>();
            data.data().forEach((k, v) -> {
                if (k != null && v != null) {
                    values.put(k, v);
                }
            });
            Long ttl = data.ttl();
            return new Codec.Writer().map(values).i64(ttl == null ? -1L : ttl).toBytes();
        }
    }

    /** {@code ConfigProvider.close()}. */
    public void close() throws Exception {
        try (LoaderSwap swap = Bridge.plugins().withClassLoader(provider.getClass().getClassLoader())) {
            provider.close();
        }
    }
}
