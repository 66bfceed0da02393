package io.tributary.probe;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.transforms.Transformation;

/**
 * A Java transformation for Tributary's Java plugin tests (crates/cli/tests/hosted/java_plugins.rs)
 * whose results hold values in classes other than the ones Connect's schemas name, which a
 * Java worker passes on as they are (as Avro's Utf8 and ByteBuffer from a schema-registry
 * converter): for a record whose value is the text {@code line} it gives
 * <ul>
 * <li>key, without a schema: a map {@code {StringBuilder "line" → ByteBuffer of line's UTF-8
 * bytes, a slice of a larger array}};</li>
 * <li>value: a struct {@code probe.Loose} with {@code text} (the line), {@code raw} (BYTES:
 * the same slice), {@code parts} (ARRAY of STRING: the line, then a StringBuilder "second",
 * set after the struct was built), {@code tags} (MAP of STRING to BYTES: "k" → "v" as a
 * ByteBuffer, and a StringBuilder key "k2" → "w" as a read-only direct ByteBuffer, added after
 * the struct was built) and {@code amount} (Decimal, scale 2: 1.25);</li>
 * <li>a header {@code loose}, without a schema: a StringBuilder {@code h-<line>}.</li>
 * </ul>
 */
public class ProbeLooseValues<R extends ConnectRecord<R>> implements Transformation<R> {
    static final Schema SCHEMA = SchemaBuilder.struct().name("probe.Loose")
        .field("text", Schema.STRING_SCHEMA)
        .field("raw", Schema.BYTES_SCHEMA)
        .field("parts", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
        .field("tags", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.BYTES_SCHEMA).build())
        .field("amount", Decimal.schema(2))
        .build();

    @Override
    public void configure(Map<String, ?> configs) {
    }

    /** The UTF-8 bytes of {@code s} as a slice (position 2) of a larger array. */
    private static ByteBuffer slice(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        byte[] padded = new byte[b.length + 4];
        padded[0] = 'x';
        padded[1] = 'x';
        System.arraycopy(b, 0, padded, 2, b.length);
        padded[b.length + 2] = 'y';
        padded[b.length + 3] = 'y';
        return ByteBuffer.wrap(padded, 2, b.length);
    }

    @Override
    public R apply(R record) {
        String line = String.valueOf(record.value());
        Map<Object, Object> key = new LinkedHashMap<>();
        key.put(new StringBuilder("line"), slice(line));
        List<Object> parts = new ArrayList<>(List.of(line, "placeholder"));
        Map<Object, Object> tags = new LinkedHashMap<>();
        tags.put("k", ByteBuffer.wrap("v".getBytes(StandardCharsets.UTF_8)));
        Struct value = new Struct(SCHEMA)
            .put("text", line)
            .put("raw", slice(line))
            .put("parts", parts)
            .put("tags", tags)
            .put("amount", new BigDecimal("1.25"));
        // After Struct.put validated them, as a plugin filling its collections later may.
        parts.set(1, new StringBuilder("second"));
        ByteBuffer direct = ByteBuffer.allocateDirect(1);
        direct.put((byte) 'w').flip();
        tags.put(new StringBuilder("k2"), direct.asReadOnlyBuffer());
        ConnectHeaders headers = new ConnectHeaders();
        headers.add("loose", new StringBuilder("h-" + line), null);
        return record.newRecord(record.topic(), record.kafkaPartition(), null, key, SCHEMA, value,
            record.timestamp(), headers);
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }

    @Override
    public void close() {
    }
}
