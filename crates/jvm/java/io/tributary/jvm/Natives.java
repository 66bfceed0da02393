package io.tributary.jvm;

/**
 * Calls from hosted plugins into Tributary: implemented in Rust (crates/jvm/src/natives.rs) and
 * registered with RegisterNatives when the JVM starts. Each handle names an object the Rust
 * side keeps in a registry (an offset reader, a connector context).
 */
final class Natives {
    private Natives() {
    }

    /**
     * The committed offsets of source partitions: takes schemaless JSON partitions
     * (int count, then bytes each), returns for each the JSON offset or null (same layout).
     */
    static native byte[] offsets(long reader, byte[] partitions);

    /** ConnectorContext.requestTaskReconfiguration(). */
    static native void requestTaskReconfiguration(long context);

    /**
     * ErrantRecordReporter.report(record, error) of a sink task: the record in the layout of a
     * put batch, the error's class, message and trace. Throws a ConnectException when
     * Tributary's reporter refuses (the tolerance is exceeded).
     */
    static native void reportErrant(long reporter, byte[] record, String errorClass, String message, String trace);

    /**
     * A sink task's SinkTaskContext request: {@code op} is one of HostedSinkTask's OFFSETS,
     * TIMEOUT, PAUSE, RESUME, REQUEST_COMMIT, {@code arg} its argument in the layout given
     * there (null for none). Throws a ConnectException when Tributary refuses it.
     */
    static native void sinkContext(long requests, int op, byte[] arg);

    /**
     * A log event of a hosted plugin: log4j2's int level (ERROR 200, WARN 300, INFO 400, DEBUG
     * 500, TRACE 600), logger name, message, and the trace of its exception or null.
     */
    static native void log(int level, String logger, String message, String trace);

    /** ConnectorContext.raiseError(Exception): the trace as Java prints it. */
    static native void raiseError(long context, String trace);
}
