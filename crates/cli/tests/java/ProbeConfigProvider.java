package io.tributary.probe;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.config.ConfigData;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.provider.ConfigProvider;

/**
 * A Java config provider for Tributary's Java plugin tests (crates/cli/tests/hosted/java_plugins.rs),
 * standing for a secrets manager's: its values are its own parameters, {@code value.<path>.<key>}
 * ({@code value.<key>} for no path), a value written {@code b64:<base64>} given decoded (a
 * secret the worker file does not hold in the clear); {@code ttl.<path>} gives that path's values a TTL (ms);
 * the path {@code boom} throws, naming the provider's {@code name} parameter. The thread's
 * context class loader must be the plugin's, as Connect calls providers.
 */
public class ProbeConfigProvider implements ConfigProvider {
    private final Map<String, String> params = new HashMap<>();

    @Override
    public void configure(Map<String, ?> configs) {
        configs.forEach((k, v) -> params.put(k, String.valueOf(v)));
        if (!params.containsKey("name")) {
            throw new ConfigException("ProbeConfigProvider needs its name parameter");
        }
    }

    @Override
    public ConfigData get(String path) {
        Map<String, String> data = new HashMap<>();
        String prefix = path == null || path.isEmpty() ? "value." : "value." + path + ".";
        params.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                data.put(k.substring(prefix.length()), decoded(v));
            }
        });
        return answer(path, data);
    }

    @Override
    public ConfigData get(String path, Set<String> keys) {
        checkLoader();
        Map<String, String> data = new HashMap<>();
        String prefix = path == null || path.isEmpty() ? "value." : "value." + path + ".";
        for (String key : keys) {
            String v = params.get(prefix + key);
            if (v != null) {
                data.put(key, decoded(v));
            }
        }
        return answer(path, data);
    }

    private static String decoded(String v) {
        if (v.startsWith("b64:")) {
            return new String(Base64.getDecoder().decode(v.substring(4)), StandardCharsets.UTF_8);
        }
        return v;
    }

    private ConfigData answer(String path, Map<String, String> data) {
        if ("boom".equals(path)) {
            throw new ConfigException("probe provider " + params.get("name") + " cannot read path boom");
        }
        String ttl = params.get("ttl." + path);
        return ttl == null ? new ConfigData(data) : new ConfigData(data, Long.parseLong(ttl));
    }

    private void checkLoader() {
        if (Thread.currentThread().getContextClassLoader() != getClass().getClassLoader()) {
            throw new IllegalStateException("called outside the plugin's class loader");
        }
    }

    @Override
    public void close() {
    }
}
