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

    /** ConnectorContext.raiseError(Exception): the trace as Java prints it. */
    static native void raiseError(long context, String trace);
}
