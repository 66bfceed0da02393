package io.tributary.jvm;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * The byte layout in which batches cross between Tributary (Rust) and the hosted plugins:
 * big-endian, strings and byte arrays as a 4-byte length (-1 for null) and their bytes (UTF-8
 * for strings). Record keys, values and header values travel as JsonConverter envelopes
 * (schemas enabled), source partitions and offsets as schemaless JSON. The Rust side
 * (crates/jvm/src/codec.rs) reads and writes the same layout.
 */
final class Codec {
    private Codec() {
    }

    /** Keys, values and headers: {"schema":…,"payload":…}. */
    static JsonConverter envelopeConverter() {
        JsonConverter c = new JsonConverter();
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("schemas.enable", "true");
        cfg.put("converter.type", "value");
        c.configure(cfg, false);
        return c;
    }

    /** Source partitions and offsets: plain JSON, as Connect's offset store keeps them. */
    static JsonConverter mapConverter() {
        JsonConverter c = new JsonConverter();
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("schemas.enable", "false");
        cfg.put("converter.type", "value");
        c.configure(cfg, false);
        return c;
    }

    static final class Writer {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final DataOutputStream out = new DataOutputStream(bytes);

        Writer i32(int v) {
            try {
                out.writeInt(v);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return this;
        }

        Writer i64(long v) {
            try {
                out.writeLong(v);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return this;
        }

        Writer u8(int v) {
            try {
                out.writeByte(v);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return this;
        }

        Writer bytes(byte[] b) {
            try {
                if (b == null) {
                    out.writeInt(-1);
                } else {
                    out.writeInt(b.length);
                    out.write(b);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return this;
        }

        Writer str(String s) {
            return bytes(s == null ? null : s.getBytes(StandardCharsets.UTF_8));
        }

        Writer map(Map<String, String> m) {
            i32(m.size());
            for (Map.Entry<String, String> e : m.entrySet()) {
                str(e.getKey());
                str(e.getValue());
            }
            return this;
        }

        byte[] toBytes() {
            return bytes.toByteArray();
        }
    }

    static final class Reader {
        private final DataInputStream in;

        Reader(byte[] b) {
            in = new DataInputStream(new ByteArrayInputStream(b));
        }

        int i32() {
            try {
                return in.readInt();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        long i64() {
            try {
                return in.readLong();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        int u8() {
            try {
                return in.readUnsignedByte();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        byte[] bytes() {
            int n = i32();
            if (n < 0) {
                return null;
            }
            byte[] b = new byte[n];
            try {
                in.readFully(b);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return b;
        }

        String str() {
            byte[] b = bytes();
            return b == null ? null : new String(b, StandardCharsets.UTF_8);
        }

        Map<String, String> map() {
            int n = i32();
            Map<String, String> m = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                m.put(str(), str());
            }
            return m;
        }
    }

    static Map<String, String> readMap(byte[] b) {
        return new Reader(b).map();
    }

    static byte[] partitions(Collection<TopicPartition> parts) {
        Writer w = new Writer().i32(parts.size());
        for (TopicPartition tp : parts) {
            w.str(tp.topic()).i32(tp.partition());
        }
        return w.toBytes();
    }

    static List<TopicPartition> readPartitions(byte[] b) {
        Reader r = new Reader(b);
        int n = r.i32();
        List<TopicPartition> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(new TopicPartition(r.str(), r.i32()));
        }
        return out;
    }

    static byte[] offsets(Map<TopicPartition, OffsetAndMetadata> offsets) {
        Writer w = new Writer().i32(offsets.size());
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet()) {
            w.str(e.getKey().topic()).i32(e.getKey().partition()).i64(e.getValue().offset());
        }
        return w.toBytes();
    }

    static Map<TopicPartition, OffsetAndMetadata> readOffsets(byte[] b) {
        Reader r = new Reader(b);
        int n = r.i32();
        Map<TopicPartition, OffsetAndMetadata> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            TopicPartition tp = new TopicPartition(r.str(), r.i32());
            out.put(tp, new OffsetAndMetadata(r.i64()));
        }
        return out;
    }

    /** A schemaless JSON map, or null. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> readJsonMap(JsonConverter plain, byte[] json) {
        if (json == null) {
            return null;
        }
        SchemaAndValue sv = plain.toConnectData("", json);
        return (Map<String, Object>) sv.value();
    }
}
