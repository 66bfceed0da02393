package io.tributary.jvm;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Field;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * The byte layout in which batches cross between Tributary (Rust) and the hosted plugins:
 * big-endian, strings and byte arrays as a 4-byte length (-1 for null) and their bytes (UTF-8
 * for strings). Record keys, values and header values travel as JsonConverter envelopes
 * (schemas enabled), source partitions and offsets as schemaless JSON. The Rust side
 * (crates/jvm/src/codec.rs) reads and writes the same layout. Connect data a plugin produced
 * is written with {@link #encode}, which first puts it in the classes Connect's schemas name
 * (see {@link #normalize}).
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

    /**
     * {@code c.fromConnectData(topic, schema, value)} of the value {@link #normalize}d: the one
     * way the bridge turns Connect data a plugin produced (a converter's or header converter's
     * toConnectData, a source task's records, a transformation's result, a sink task's errant
     * record, source partitions and offsets) into the bytes that cross to Tributary.
     */
    static byte[] encode(JsonConverter c, String topic, Schema schema, Object value) {
        if (value == null && schema != null && !schema.isOptional() && schema.defaultValue() == null) {
            // Connect passes a null value under a required schema on (MirrorMaker's tombstones
            // are BYTES_SCHEMA with a null value), but JsonConverter refuses to write it: the
            // marker byte, then the envelope under the schema made optional; the Rust side
            // (codec::envelope_data) makes it required again.
            byte[] envelope = c.fromConnectData(topic, optionalCopy(schema), null);
            byte[] out = new byte[envelope.length + 1];
            out[0] = NULL_UNDER_REQUIRED_SCHEMA;
            System.arraycopy(envelope, 0, out, 1, envelope.length);
            return out;
        }
        return c.fromConnectData(topic, schema, normalize(schema, value));
    }

    /** The first byte of an envelope of a null value under a required schema. */
    static final byte NULL_UNDER_REQUIRED_SCHEMA = 0;

    /** {@code schema} with everything kept but made optional. */
    static Schema optionalCopy(Schema schema) {
        org.apache.kafka.connect.data.SchemaBuilder b;
        switch (schema.type()) {
            case STRUCT:
                b = org.apache.kafka.connect.data.SchemaBuilder.struct();
                for (Field f : schema.fields()) {
                    b.field(f.name(), f.schema());
                }
                break;
            case ARRAY:
                b = org.apache.kafka.connect.data.SchemaBuilder.array(schema.valueSchema());
                break;
            case MAP:
                b = org.apache.kafka.connect.data.SchemaBuilder.map(schema.keySchema(), schema.valueSchema());
                break;
            default:
                b = org.apache.kafka.connect.data.SchemaBuilder.type(schema.type());
        }
        if (schema.name() != null) {
            b.name(schema.name());
        }
        if (schema.version() != null) {
            b.version(schema.version());
        }
        if (schema.doc() != null) {
            b.doc(schema.doc());
        }
        if (schema.parameters() != null) {
            b.parameters(schema.parameters());
        }
        return b.optional().build();
    }

    /** The logical types JsonConverter converts by name, whose values are left as they are. */
    private static final Set<String> LOGICAL =
        Set.of(Decimal.LOGICAL_NAME, Date.LOGICAL_NAME, Time.LOGICAL_NAME, Timestamp.LOGICAL_NAME);

    /**
     * {@code value} in the Java classes Connect's schemas name (ConnectSchema's
     * SCHEMA_TYPE_CLASSES), as far as the plugin handed out an equivalent of another class,
     * which a Java worker passes from one plugin to the next untouched but which
     * JsonConverter, encoding the envelopes that cross, refuses (without a schema) or
     * misreads: a {@link CharSequence} other than String (Avro's Utf8, which schema-registry
     * converters return) becomes its String, and a {@link ByteBuffer} the byte[] of its
     * remaining bytes (position to limit; the buffer is not consumed). Where a schema is given
     * this follows its type (STRING, BYTES; ARRAY elements, MAP keys and values and STRUCT
     * fields by their schemas, a Struct rebuilt only when one of its fields changed); values
     * of Connect's logical types (Decimal, Date, Time, Timestamp) are left as they are.
     * Without a schema it follows the value's class (CharSequence, ByteBuffer, and the
     * elements, keys and values of collections and maps). A value with nothing to change is
     * returned as it is (the same instance, nothing copied), so is a value of another class
     * (JsonConverter then refuses it as before).
     */
    static Object normalize(Schema schema, Object value) {
        if (value == null || value instanceof String) {
            return value;
        }
        if (schema == null) {
            return normalizeSchemaless(value);
        }
        if (schema.name() != null && LOGICAL.contains(schema.name())) {
            return value;
        }
        switch (schema.type()) {
            case STRING:
                return value instanceof CharSequence ? value.toString() : value;
            case BYTES:
                return value instanceof ByteBuffer ? bytesOf((ByteBuffer) value) : value;
            case ARRAY:
                return value instanceof Collection
                    ? normalizeList(schema.valueSchema(), (Collection<?>) value) : value;
            case MAP:
                return value instanceof Map
                    ? normalizeMap(schema.keySchema(), schema.valueSchema(), (Map<?, ?>) value) : value;
            case STRUCT:
                return value instanceof Struct ? normalizeStruct((Struct) value) : value;
            default:
                return value;
        }
    }

    private static Object normalizeSchemaless(Object value) {
        if (value instanceof CharSequence) {
            return value.toString();
        }
        if (value instanceof ByteBuffer) {
            return bytesOf((ByteBuffer) value);
        }
        if (value instanceof Collection) {
            return normalizeList(null, (Collection<?>) value);
        }
        if (value instanceof Map) {
            return normalizeMap(null, null, (Map<?, ?>) value);
        }
        return value;
    }

    /** The remaining bytes of {@code b}, without moving its position; its array when that is all of it. */
    private static byte[] bytesOf(ByteBuffer b) {
        if (b.hasArray() && b.arrayOffset() == 0 && b.position() == 0 && b.remaining() == b.array().length) {
            return b.array();
        }
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    /** The collection, or a list of its elements normalised when one of them changed. */
    private static Object normalizeList(Schema elementSchema, Collection<?> in) {
        List<Object> out = null;
        int i = 0;
        for (Object e : in) {
            Object n = normalize(elementSchema, e);
            if (out == null && n != e) {
                out = new ArrayList<>(in.size());
                Iterator<?> it = in.iterator();
                for (int j = 0; j < i; j++) {
                    out.add(it.next());
                }
            }
            if (out != null) {
                out.add(n);
            }
            i++;
        }
        return out == null ? in : out;
    }

    /** The map, or a map (same order) of its keys and values normalised when one of them changed. */
    private static Object normalizeMap(Schema keySchema, Schema valueSchema, Map<?, ?> in) {
        Map<Object, Object> out = null;
        int i = 0;
        for (Map.Entry<?, ?> e : in.entrySet()) {
            Object k = normalize(keySchema, e.getKey());
            Object v = normalize(valueSchema, e.getValue());
            if (out == null && (k != e.getKey() || v != e.getValue())) {
                out = new LinkedHashMap<>();
                Iterator<? extends Map.Entry<?, ?>> it = in.entrySet().iterator();
                for (int j = 0; j < i; j++) {
                    Map.Entry<?, ?> before = it.next();
                    out.put(before.getKey(), before.getValue());
                }
            }
            if (out != null) {
                out.put(k, v);
            }
            i++;
        }
        return out == null ? in : out;
    }

    /**
     * The struct, or a new one of the same schema when one of its fields changed (fields left
     * null stay unset, so their defaults apply as before).
     */
    private static Struct normalizeStruct(Struct in) {
        List<Field> fields = in.schema().fields();
        Object[] values = null;
        for (int i = 0; i < fields.size(); i++) {
            Field f = fields.get(i);
            Object v = in.getWithoutDefault(f.name());
            Object n = normalize(f.schema(), v);
            if (values == null && n != v) {
                values = new Object[fields.size()];
                for (int j = 0; j < i; j++) {
                    values[j] = in.getWithoutDefault(fields.get(j).name());
                }
            }
            if (values != null) {
                values[i] = n;
            }
        }
        if (values == null) {
            return in;
        }
        Struct out = new Struct(in.schema());
        for (int i = 0; i < fields.size(); i++) {
            if (values[i] != null) {
                out.put(fields.get(i), values[i]);
            }
        }
        return out;
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
