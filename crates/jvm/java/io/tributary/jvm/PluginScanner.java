package io.tributary.jvm;

import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.connect.runtime.isolation.PluginDesc;
import org.apache.kafka.connect.runtime.isolation.Plugins;

/**
 * Lists the connector, transformation, predicate and converter plugins of a plugin path, as Connect's own isolation classes find them
 * (plugin.path, plugin.discovery of KIP-898). Run as a separate process at worker startup, so
 * a worker never starts a JVM in-process just to list plugins. Prints one line per connector
 * found outside the class path: {@code connector<TAB>source|sink<TAB>class<TAB>version<TAB>location},
 * then one per transformation, predicate, converter and header converter:
 * {@code transformation|predicate|converter|header_converter<TAB>class<TAB>version<TAB>location}.
 * Last, when DISCOVERY is not service_load, the path is scanned again with service_load
 * (ServiceLoader manifests only, no reflective scan of every jar) and, when that finds exactly
 * the same plugins, one line {@code service_load_equivalent} tells the worker that its
 * in-process JVM may use service_load: the same plugins, found in a fraction of the time.
 * Usage: PluginScanner PLUGIN_PATH DISCOVERY
 */
public final class PluginScanner {
    private PluginScanner() {
    }

    public static void main(String[] args) {
        Map<String, String> props = new HashMap<>();
        props.put("plugin.path", args[0]);
        props.put("plugin.discovery", args[1]);
        String found = describe(new Plugins(props));
        System.out.print(found);
        if (!"service_load".equals(args[1])) {
            props.put("plugin.discovery", "service_load");
            String manifests;
            try {
                manifests = describe(new Plugins(props));
            } catch (RuntimeException e) {
                manifests = null;
            }
            if (found.equals(manifests)) {
                System.out.print("service_load_equivalent\n");
            }
        }
        System.out.flush();
    }

    /** The lines of the class comment for what {@code plugins} found outside the class path. */
    private static String describe(Plugins plugins) {
        StringBuilder out = new StringBuilder();
        for (PluginDesc<?> d : plugins.sourceConnectors()) {
            line(out, "source", d);
        }
        for (PluginDesc<?> d : plugins.sinkConnectors()) {
            line(out, "sink", d);
        }
        for (PluginDesc<?> d : plugins.transformations()) {
            other(out, "transformation", d);
        }
        for (PluginDesc<?> d : plugins.predicates()) {
            other(out, "predicate", d);
        }
        for (PluginDesc<?> d : plugins.converters()) {
            other(out, "converter", d);
        }
        for (PluginDesc<?> d : plugins.headerConverters()) {
            other(out, "header_converter", d);
        }
        return out.toString();
    }

    private static void other(StringBuilder out, String kind, PluginDesc<?> d) {
        if ("classpath".equals(d.location())) {
            return;
        }
        out.append(kind).append('\t').append(d.className()).append('\t')
            .append(d.version()).append('\t').append(d.location()).append('\n');
    }

    private static void line(StringBuilder out, String type, PluginDesc<?> d) {
        if ("classpath".equals(d.location())) {
            return;
        }
        out.append("connector\t").append(type).append('\t').append(d.className()).append('\t')
            .append(d.version()).append('\t').append(d.location()).append('\n');
    }
}
