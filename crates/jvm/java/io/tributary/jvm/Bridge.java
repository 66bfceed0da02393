package io.tributary.jvm;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;

import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.runtime.isolation.Plugins;
import org.apache.kafka.connect.runtime.isolation.VersionedPluginLoadingException;
import org.apache.maven.artifact.versioning.InvalidVersionSpecificationException;
import org.apache.maven.artifact.versioning.VersionRange;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.source.SourceTask;

/**
 * The entry point Tributary calls over JNI: one Connect {@link Plugins} (Connect's own
 * isolation: a class loader per plugin, the Connect API shared) for the worker's plugin.path,
 * and factories for hosted connectors and tasks.
 */
public final class Bridge {
    private static Plugins plugins;

    private Bridge() {
    }

    /**
     * Routes the plugins' logging to Tributary's log at {@code logLevel} (see TributaryAppender)
     * and scans the plugin path, once; later calls do nothing.
     */
    public static synchronized void init(String pluginPath, String discovery, String logLevel) {
        if (plugins != null) {
            return;
        }
        TributaryAppender.install(logLevel);
        Map<String, String> props = new HashMap<>();
        props.put("plugin.path", pluginPath);
        props.put("plugin.discovery", discovery);
        // A thread attached over JNI may have no context class loader; scanning needs one.
        Thread current = Thread.currentThread();
        ClassLoader saved = current.getContextClassLoader();
        current.setContextClassLoader(Bridge.class.getClassLoader());
        try {
            plugins = new Plugins(props);
        } finally {
            current.setContextClassLoader(saved);
        }
    }

    /** Sets a logger's level in the JVM (see TributaryAppender.setLevel). */
    public static void setLoggerLevel(String logger, String level) {
        TributaryAppender.setLevel(logger, level);
    }

    static synchronized Plugins plugins() {
        // A thread attached over JNI starts without a context class loader; plugins (and
        // their logging) expect one, as on any Java thread.
        Thread current = Thread.currentThread();
        if (current.getContextClassLoader() == null) {
            current.setContextClassLoader(Bridge.class.getClassLoader());
        }
        if (plugins == null) {
            throw new IllegalStateException("Bridge.init was not called");
        }
        return plugins;
    }

    /**
     * The exact version range of a plugin version the scanner reported (KIP-891: several
     * versions of one class may be on the plugin path); null, meaning the newest, for a plugin
     * without a version.
     */
    static VersionRange exactly(String version) {
        if (version == null || version.isEmpty() || "undefined".equals(version)) {
            return null;
        }
        try {
            return VersionRange.createFromVersionSpec("[" + version + "]");
        } catch (InvalidVersionSpecificationException e) {
            return null;
        }
    }

    /** A new instance of a connector class of the plugin path, in the given version. */
    public static HostedConnector newConnector(String className, String version)
            throws VersionedPluginLoadingException {
        Connector connector = plugins().newConnector(className, exactly(version));
        return new HostedConnector(connector);
    }

    private static Task newTask(String connectorClass, String taskClass, String version)
            throws ClassNotFoundException, VersionedPluginLoadingException {
        ClassLoader loader = plugins().connectorClass(connectorClass, exactly(version)).getClassLoader();
        @SuppressWarnings("unchecked")
        Class<? extends Task> cls = (Class<? extends Task>) Class.forName(taskClass, true, loader);
        ClassLoader saved = Thread.currentThread().getContextClassLoader();
        Thread.currentThread().setContextClassLoader(loader);
        try {
            return plugins().newTask(cls);
        } finally {
            Thread.currentThread().setContextClassLoader(saved);
        }
    }

    /**
     * A source task of class {@code taskClass}, loaded by the loader of {@code connectorClass}
     * in {@code version}.
     */
    public static HostedSourceTask newSourceTask(String connectorClass, String taskClass, String version)
            throws ClassNotFoundException, VersionedPluginLoadingException {
        Task task = newTask(connectorClass, taskClass, version);
        if (!(task instanceof SourceTask)) {
            throw new ClassCastException(taskClass + " is not a SourceTask");
        }
        return new HostedSourceTask((SourceTask) task);
    }

    /**
     * A sink task of class {@code taskClass}, loaded by the loader of {@code connectorClass} in
     * {@code version}.
     */
    public static HostedSinkTask newSinkTask(String connectorClass, String taskClass, String version)
            throws ClassNotFoundException, VersionedPluginLoadingException {
        Task task = newTask(connectorClass, taskClass, version);
        if (!(task instanceof SinkTask)) {
            throw new ClassCastException(taskClass + " is not a SinkTask");
        }
        return new HostedSinkTask((SinkTask) task);
    }

    /**
     * Whether the source task class overrides commitRecord(SourceRecord, RecordMetadata) (the
     * runtime then keeps every record in flight for it), asked before the task is created.
     */
    public static boolean overridesCommitRecord(String connectorClass, String taskClass, String version)
            throws ClassNotFoundException, VersionedPluginLoadingException {
        ClassLoader loader = plugins().connectorClass(connectorClass, exactly(version)).getClassLoader();
        Class<?> cls = Class.forName(taskClass, false, loader);
        return HostedSourceTask.overridesCommitRecord(cls);
    }

    /** The stack trace as Throwable.printStackTrace writes it (what Connect puts in a status). */
    /** The hosted plugins' metrics (KIP-877), as {@link HostedMetrics#snapshot()} lays them out. */
    public static byte[] pluginMetrics() {
        return HostedMetrics.snapshot();
    }

    public static String trace(Throwable t) {
        StringWriter s = new StringWriter();
        t.printStackTrace(new PrintWriter(s));
        return s.toString();
    }

    /** Whether the runtime may retry the call (Connect's RetriableException). */
    public static boolean isRetriable(Throwable t) {
        return t instanceof RetriableException;
    }

    /** Runs with the plugin's class loader as the thread's context loader, as Connect does. */
    static ClassLoader swap(Object plugin) {
        ClassLoader saved = Thread.currentThread().getContextClassLoader();
        if (saved == null) {
            saved = Bridge.class.getClassLoader();
        }
        Thread.currentThread().setContextClassLoader(plugin.getClass().getClassLoader());
        return saved;
    }

    static void restore(ClassLoader saved) {
        Thread.currentThread().setContextClassLoader(saved);
    }
}
