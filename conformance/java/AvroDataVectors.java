/*
 * Live conformance vectors for the Connect <-> Avro mapping (Confluent's `AvroData`), with
 * Apicurio's Java converter as the reference: `io.apicurio.registry.utils.converter.avro.AvroData`
 * is derived from Confluent's (whose jars are not on Maven Central) and runs here from the jars of
 * `scripts/registry converter-plugin` (with Avro 1.12.0), on top of Apache Kafka Connect's jars
 * (`scripts/connect-java classpath`). The Rust test crates/registry/tests/avro_vectors.rs compiles this
 * file with javac into a temporary directory and runs it each time the tests run; nothing here is
 * pasted into the Rust sources.
 *
 *   java -cp "<connect jars>:<apicurio jars>:out" AvroDataVectors
 *
 * prints one JSON object per line (in ASCII: other characters as JSON escapes), one per case of
 * the corpus below:
 *
 *   case      the case's name
 *   config    the AvroData settings used ("connect.meta.data", "enhanced.avro.schema.support",
 *             "scrub.invalid.names"; absent keys are at their defaults)
 *   envelope  the Connect schema and value, as Connect's JsonConverter writes them
 *             (schemas.enable=true, replace.null.with.default=false unless "replace_nulls"
 *             is true, which only a null in a required field with a default needs): what the
 *             Rust side starts from
 *   avro      AvroData.fromConnectSchema(schema).toString()
 *   datum     hex of AvroData.fromConnectData(schema, value) written with Avro's
 *             GenericDatumWriter and a BinaryEncoder (the value of a NonRecordContainer for
 *             non-records; a null value is written as null, i.e. the union's null branch)
 *   reverse   the avro text parsed again, the datum read with a GenericDatumReader, and both
 *             given to a fresh AvroData's toConnectData (toConnectSchema for a null datum):
 *             the resulting Connect schema and value as a JsonConverter envelope
 *   errors    per step ("avro", "datum", "reverse"), `<exception class>: <message>` when it
 *             threw; the later steps are then left out
 *
 * Apicurio's AvroDataConfig has no `scrub.invalid.names`: for the cases that set it, the private
 * `scrubInvalidNames` flag of AvroData (which its code still consults) is set by reflection.
 *
 * Run with -Duser.timezone=UTC (nothing depends on it, but it keeps runs identical).
 */

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.apicurio.registry.serde.avro.NonRecordContainer;
import io.apicurio.registry.utils.converter.avro.AvroData;
import io.apicurio.registry.utils.converter.avro.AvroDataConfig;

import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;

public class AvroDataVectors {
    /** Writes pure ASCII (other characters escaped), whatever the platform charset. */
    static final ObjectMapper MAPPER = JsonMapper.builder()
        .enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();
    static final String TOPIC = "topic";

    static final Map<String, String> DEFAULT = Collections.emptyMap();
    static final Map<String, String> NO_META = Map.of("connect.meta.data", "false");
    static final Map<String, String> ENHANCED = Map.of("enhanced.avro.schema.support", "true");
    static final Map<String, String> SCRUB = Map.of("scrub.invalid.names", "true");

    static final class Case {
        final String name;
        final Map<String, String> config;
        final Schema schema;
        final Object value;

        Case(String name, Map<String, String> config, Schema schema, Object value) {
            this.name = name;
            this.config = config;
            this.schema = schema;
            this.value = value;
        }
    }

    static final List<Case> CASES = new ArrayList<>();

    static void add(String name, Schema schema, Object value) {
        add(name, DEFAULT, schema, value);
    }

    static void add(String name, Map<String, String> config, Schema schema, Object value) {
        CASES.add(new Case(name, config, schema, value));
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static String err(Throwable e) {
        return e.getClass().getName() + ": " + e.getMessage();
    }

    static AvroData avroData(Map<String, String> config) throws Exception {
        Map<String, Object> props = new HashMap<>();
        for (Map.Entry<String, String> e : config.entrySet()) {
            if (!e.getKey().equals("scrub.invalid.names")) props.put(e.getKey(), e.getValue());
        }
        AvroData data = new AvroData(new AvroDataConfig(props));
        if ("true".equals(config.get("scrub.invalid.names"))) {
            java.lang.reflect.Field f = AvroData.class.getDeclaredField("scrubInvalidNames");
            f.setAccessible(true);
            f.set(data, true);
        }
        return data;
    }

    /**
     * The JsonConverter envelope of a schema and value: schemas enabled, nulls replaced by
     * defaults or not, a new converter each time (its schema cache would otherwise write a schema
     * equal to one written before, but with its parameters in another order, as that one).
     */
    static String envelope(Schema schema, Object value, boolean replaceNulls) {
        JsonConverter json = new JsonConverter();
        json.configure(Map.of("schemas.enable", "true",
            "replace.null.with.default", Boolean.toString(replaceNulls)), false);
        return new String(json.fromConnectData(TOPIC, schema, value), StandardCharsets.UTF_8);
    }

    /**
     * The envelope without replacing nulls (so that a null reaches the other side as a null);
     * where JsonConverter refuses that (a null in a required field with a default), with nulls
     * replaced, as `"replace_nulls": true` then says.
     */
    static String envelope(Schema schema, Object value, ObjectNode out) {
        try {
            return envelope(schema, value, false);
        } catch (org.apache.kafka.connect.errors.DataException e) {
            out.put("replace_nulls", true);
            return envelope(schema, value, true);
        }
    }

    static void run(Case c) throws Exception {
        ObjectNode out = MAPPER.createObjectNode();
        out.put("case", c.name);
        ObjectNode config = out.putObject("config");
        for (Map.Entry<String, String> e : c.config.entrySet()) config.put(e.getKey(), e.getValue());
        out.put("envelope", envelope(c.schema, c.value, out));
        ObjectNode errors = out.putObject("errors");
        try {
            step(c, out, errors);
        } finally {
            System.out.println(MAPPER.writeValueAsString(out));
        }
    }

    static void step(Case c, ObjectNode out, ObjectNode errors) throws Exception {
        AvroData data = avroData(c.config);
        org.apache.avro.Schema avroSchema;
        String text;
        try {
            avroSchema = data.fromConnectSchema(c.schema);
            text = avroSchema.toString();
            out.put("avro", text);
        } catch (Throwable e) {
            errors.put("avro", err(e));
            return;
        }
        byte[] datum;
        try {
            Object converted = data.fromConnectData(c.schema, c.value);
            if (converted instanceof NonRecordContainer) {
                converted = ((NonRecordContainer<?>) converted).getValue();
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            BinaryEncoder encoder = EncoderFactory.get().binaryEncoder(bytes, null);
            new GenericDatumWriter<Object>(avroSchema).write(converted, encoder);
            encoder.flush();
            datum = bytes.toByteArray();
            out.put("datum", hex(datum));
        } catch (Throwable e) {
            errors.put("datum", err(e));
            return;
        }
        try {
            org.apache.avro.Schema parsed = new org.apache.avro.Schema.Parser().parse(text);
            Object read = new GenericDatumReader<Object>(parsed)
                .read(null, DecoderFactory.get().binaryDecoder(datum, null));
            AvroData reader = avroData(c.config);
            SchemaAndValue sv = read == null ? null : reader.toConnectData(parsed, read);
            Schema schema = sv == null ? reader.toConnectSchema(parsed) : sv.schema();
            out.put("reverse", envelope(schema, sv == null ? null : sv.value(), out));
        } catch (Throwable e) {
            errors.put("reverse", err(e));
        }
    }

    // ------------------------------------------------------------------ the corpus

    static <K, V> Map<K, V> map(Object... kv) {
        Map<K, V> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            @SuppressWarnings("unchecked") K k = (K) kv[i];
            @SuppressWarnings("unchecked") V v = (V) kv[i + 1];
            m.put(k, v);
        }
        return m;
    }

    static java.util.Date day(long days) {
        return new java.util.Date(days * 86400000L);
    }

    static SchemaBuilder address(boolean optional) {
        SchemaBuilder b = SchemaBuilder.struct().name("com.example.Address").doc("where").version(2)
            .field("street", Schema.STRING_SCHEMA)
            .field("zip", Schema.OPTIONAL_INT32_SCHEMA);
        return optional ? b.optional() : b;
    }

    static Struct addr(Schema s, String street, Integer zip) {
        return new Struct(s).put("street", street).put("zip", zip);
    }

    static int spread(String s) {
        int h = s.hashCode();
        return h ^ (h >>> 16);
    }

    /** `n` keys whose spread hash has the bits of `mask` clear, in a shuffled order. */
    static List<String> collidingKeys(int n, int mask, long seed) {
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < n; i++) {
            String k = "k" + i;
            if ((spread(k) & mask) == 0) keys.add(k);
        }
        Collections.shuffle(keys, new java.util.Random(seed));
        return keys;
    }

    static Map<String, Integer> colliding(int n, int mask, long seed) {
        Map<String, Integer> m = new LinkedHashMap<>();
        int i = 0;
        for (String k : collidingKeys(n, mask, seed)) m.put(k, i++);
        return m;
    }

    /** 32 keys of one hash ("Aa" and "BB" hash alike), in a shuffled order, and a few others. */
    static Map<String, Integer> equalHashes() {
        List<String> keys = new ArrayList<>();
        for (int bits = 0; bits < 32; bits++) {
            StringBuilder sb = new StringBuilder();
            for (int b = 0; b < 5; b++) sb.append((bits >> b & 1) == 0 ? "Aa" : "BB");
            keys.add(sb.toString());
        }
        Collections.shuffle(keys, new java.util.Random(4));
        keys.add(7, "x");
        keys.add(20, "yy");
        Map<String, Integer> m = new LinkedHashMap<>();
        int i = 0;
        for (String k : keys) m.put(k, i++);
        return m;
    }

    static void primitives() {
        add("int8", Schema.INT8_SCHEMA, (byte) -12);
        add("int8_min", Schema.INT8_SCHEMA, Byte.MIN_VALUE);
        add("int16", Schema.INT16_SCHEMA, (short) 1234);
        add("int16_min", Schema.INT16_SCHEMA, Short.MIN_VALUE);
        add("int32_min", Schema.INT32_SCHEMA, Integer.MIN_VALUE);
        add("int32_zero", Schema.INT32_SCHEMA, 0);
        add("int64_max", Schema.INT64_SCHEMA, Long.MAX_VALUE);
        add("int64_minus_one", Schema.INT64_SCHEMA, -1L);
        add("float32", Schema.FLOAT32_SCHEMA, 1.5f);
        add("float32_min_subnormal", Schema.FLOAT32_SCHEMA, 1.4e-45f);
        add("float64", Schema.FLOAT64_SCHEMA, 0.1);
        // (No -0.0: JsonConverter reads numbers as BigDecimal, which has no negative zero, so
        // the envelope cannot carry one to the Rust side.)
        add("float64_max", Schema.FLOAT64_SCHEMA, Double.MAX_VALUE);
        add("boolean_true", Schema.BOOLEAN_SCHEMA, true);
        add("boolean_false", Schema.BOOLEAN_SCHEMA, false);
        add("string_unicode", Schema.STRING_SCHEMA,
            "héllo wörld 😀 中文 \u2028 \"q\" \\ / \n\t\u0001 \u00ff");
        add("string_empty", Schema.STRING_SCHEMA, "");
        add("bytes", Schema.BYTES_SCHEMA, new byte[] {0, 1, 2, (byte) 255, (byte) 128});
        add("bytes_empty", Schema.BYTES_SCHEMA, new byte[0]);
        add("optional_int32_null", Schema.OPTIONAL_INT32_SCHEMA, null);
        add("optional_int32_value", Schema.OPTIONAL_INT32_SCHEMA, 42);
        add("optional_int8_value", Schema.OPTIONAL_INT8_SCHEMA, (byte) 7);
        add("optional_int16_null", Schema.OPTIONAL_INT16_SCHEMA, null);
        add("optional_int64_value", Schema.OPTIONAL_INT64_SCHEMA, -5000000000L);
        add("optional_float32_value", Schema.OPTIONAL_FLOAT32_SCHEMA, -0.25f);
        add("optional_float64_null", Schema.OPTIONAL_FLOAT64_SCHEMA, null);
        add("optional_boolean_value", Schema.OPTIONAL_BOOLEAN_SCHEMA, false);
        add("optional_string_null", Schema.OPTIONAL_STRING_SCHEMA, null);
        add("optional_string_value", Schema.OPTIONAL_STRING_SCHEMA, "ok");
        add("optional_bytes_value", Schema.OPTIONAL_BYTES_SCHEMA, new byte[] {9});

        Schema label = SchemaBuilder.string().optional().defaultValue("dflt")
            .name("com.example.Label").version(2).doc("d \"q\"").parameter("k", "v").build();
        add("string_with_metadata_and_default", label, "x");
        add("string_with_metadata_and_default_null", label, null);
        add("int64_required_default", SchemaBuilder.int64().defaultValue(7L).build(), 9L);
        add("int32_named_versioned", SchemaBuilder.int32().name("com.example.Count").version(1)
            .doc("a count").build(), 5);
        add("int8_with_parameters", SchemaBuilder.int8().parameter("b", "2").parameter("a", "1")
            .build(), (byte) 1);
        add("string_avro_parameters", SchemaBuilder.string().parameter("avro.java.string", "String")
            .parameter("other", "x").build(), "s");
        add("float32_default", SchemaBuilder.float32().optional().defaultValue(0.1f).build(), 2.5f);
        add("float64_default_large", SchemaBuilder.float64().defaultValue(1e10).build(), 3.0);
        add("float64_default_small", SchemaBuilder.float64().defaultValue(1e-7).build(), 3.0);
        add("string_control_characters", SchemaBuilder.string().optional()
            .defaultValue("\u001f\u000b\u007f\u2028😀").doc("tab\there \u001b").build(),
            "\u0000\u001f");
        add("bytes_default", SchemaBuilder.bytes().defaultValue(new byte[] {0, (byte) 200, 65})
            .build(), new byte[] {1});
    }

    static void logical() {
        add("decimal_scale2", Decimal.schema(2), new BigDecimal("-1234.56"));
        add("decimal_scale0_big", Decimal.schema(0),
            new BigDecimal("123456789012345678901234567890"));
        add("decimal_zero", Decimal.schema(3), new BigDecimal("0.000"));
        add("decimal_minus_one", Decimal.schema(0), new BigDecimal("-1"));
        add("decimal_byte_boundary", Decimal.schema(1), new BigDecimal("12.8"));
        add("decimal_negative_scale", Decimal.schema(-2), new BigDecimal(BigInteger.valueOf(12), -2));
        add("decimal_precision", Decimal.builder(3).parameter("connect.decimal.precision", "10")
            .build(), new BigDecimal("1234567.891"));
        add("decimal_scale_above_precision", Decimal.builder(5)
            .parameter("connect.decimal.precision", "3").build(), new BigDecimal("0.00123"));
        add("decimal_optional_null", Decimal.builder(2).optional().build(), null);
        add("decimal_optional_default", Decimal.builder(2).optional()
            .defaultValue(new BigDecimal("1.50")).build(), new BigDecimal("-0.01"));
        add("date", Date.SCHEMA, day(19000));
        add("date_before_epoch", Date.SCHEMA, day(-3));
        add("date_optional_null", Date.builder().optional().build(), null);
        add("time", Time.SCHEMA, new java.util.Date(25200123L));
        add("time_default", Time.builder().defaultValue(new java.util.Date(1000L)).build(),
            new java.util.Date(86399999L));
        add("timestamp", Timestamp.SCHEMA, new java.util.Date(1700000000123L));
        add("timestamp_before_epoch", Timestamp.SCHEMA, new java.util.Date(-1234567890123L));
        add("timestamp_optional_default", Timestamp.builder().optional()
            .defaultValue(new java.util.Date(0L)).build(), new java.util.Date(5L));
        Schema hash = SchemaBuilder.bytes().name("com.example.Hash")
            .parameter("connect.fixed.size", "4").build();
        add("fixed", hash, new byte[] {1, 2, 3, (byte) 0xff});
        Schema fixedDecimal = Decimal.builder(2).parameter("connect.decimal.precision", "10")
            .parameter("connect.fixed.size", "8").build();
        add("fixed_decimal_short", fixedDecimal, new BigDecimal("12.34"));
        add("fixed_decimal_negative_short", fixedDecimal, new BigDecimal("-0.05"));
        add("fixed_decimal_full_width", fixedDecimal,
            new BigDecimal(new BigInteger("0102030405060708", 16), 2));
    }

    static void structs() {
        Schema address = address(false).build();
        Schema optionalAddress = address(true).build();
        Schema person = SchemaBuilder.struct().name("com.example.Person").version(3).doc("A person")
            .parameter("p1", "v1").parameter("a0", "v0")
            .field("name", Schema.STRING_SCHEMA)
            .field("age", SchemaBuilder.int32().optional().defaultValue(18).doc("years").build())
            .field("score", Schema.FLOAT64_SCHEMA)
            .field("ratio", Schema.FLOAT32_SCHEMA)
            .field("small", Schema.INT8_SCHEMA)
            .field("medium", Schema.OPTIONAL_INT16_SCHEMA)
            .field("big", Schema.INT64_SCHEMA)
            .field("active", Schema.BOOLEAN_SCHEMA)
            .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
            .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
            .field("codes", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
            .field("home", address)
            .field("work", optionalAddress)
            .field("balance", Decimal.builder(2).optional().build())
            .field("birthday", Date.builder().optional().build())
            .field("wake", Time.SCHEMA)
            .field("updated", Timestamp.builder().optional().build())
            .field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
            .build();
        Struct p = new Struct(person)
            .put("name", "Ada")
            .put("score", 97.5)
            .put("ratio", 0.75f)
            .put("small", (byte) -3)
            .put("medium", (short) 300)
            .put("big", 1L << 40)
            .put("active", true)
            .put("tags", Arrays.asList("a", "b"))
            .put("attrs", map("x", 1L, "y", -2L, "alpha", 3L, "beta", 4L, "gamma", 5L))
            .put("codes", map(1, "one", 2, null, 300, "many"))
            .put("home", addr(address, "Main St", 12345))
            .put("work", addr(optionalAddress, "Side St", null))
            .put("balance", new BigDecimal("-1234.56"))
            .put("birthday", day(19000))
            .put("wake", new java.util.Date(25200123L))
            .put("updated", new java.util.Date(1700000000123L))
            .put("raw", new byte[] {1, 2, 3});
        add("struct_person", person, p);
        Struct sparse = new Struct(person)
            .put("name", "Bob").put("score", -1.0).put("ratio", 0f).put("small", (byte) 0)
            .put("big", 0L).put("active", false).put("tags", Collections.emptyList())
            .put("codes", Collections.emptyMap()).put("home", addr(address, "", 0))
            .put("wake", new java.util.Date(0L));
        add("struct_person_nulls", person, sparse);
        add("struct_person_no_meta", NO_META, person, p);

        Schema inner = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build();
        Schema optionalInner = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).optional().build();
        Schema inner2 = SchemaBuilder.struct().field("b", Schema.STRING_SCHEMA).optional().build();
        Schema inner3 = SchemaBuilder.struct().field("c", Schema.BOOLEAN_SCHEMA).build();
        Schema unnamed = SchemaBuilder.struct()
            .field("first", inner)
            .field("second", inner2)
            .field("third", inner3)
            .field("again", inner)
            .field("maybe", optionalInner)
            .build();
        add("struct_unnamed_several", unnamed, new Struct(unnamed)
            .put("first", new Struct(inner).put("a", 1))
            .put("second", new Struct(inner2).put("b", "two"))
            .put("third", new Struct(inner3).put("c", true))
            .put("again", new Struct(inner).put("a", 4))
            .put("maybe", new Struct(optionalInner).put("a", 5)));
        add("struct_unnamed_several_nulls", unnamed, new Struct(unnamed)
            .put("first", new Struct(inner).put("a", 1))
            .put("third", new Struct(inner3).put("c", false))
            .put("again", new Struct(inner).put("a", 4)));
        add("struct_unnamed_no_meta", NO_META, unnamed, new Struct(unnamed)
            .put("first", new Struct(inner).put("a", 1))
            .put("third", new Struct(inner3).put("c", false))
            .put("again", new Struct(inner).put("a", 4)));

        Schema twice = SchemaBuilder.struct().name("com.example.Twice")
            .field("home", address)
            .field("work", address)
            .field("other", optionalAddress)
            .build();
        add("struct_same_struct_twice", twice, new Struct(twice)
            .put("home", addr(address, "a", 1)).put("work", addr(address, "b", null)));

        Schema tagged = SchemaBuilder.struct().name("com.example.Tagged").parameter("color", "red")
            .field("v", Schema.INT32_SCHEMA).build();
        Schema taggedTwice = SchemaBuilder.struct().name("com.example.TaggedTwice")
            .field("a", tagged).field("b", tagged).build();
        add("struct_same_struct_twice_with_parameters", taggedTwice, new Struct(taggedTwice)
            .put("a", new Struct(tagged).put("v", 1)).put("b", new Struct(tagged).put("v", 2)));

        Schema leaf = SchemaBuilder.struct().name("org.other.Leaf").field("v", Schema.INT32_SCHEMA).build();
        Schema plain = SchemaBuilder.struct().name("Plain").field("q", Schema.STRING_SCHEMA).build();
        Schema mid = SchemaBuilder.struct().name("com.example.Mid")
            .field("leaf", leaf).field("plain", plain).field("leaf2", leaf).build();
        Schema top = SchemaBuilder.struct().name("com.example.Top")
            .field("mid", mid)
            .field("leaves", SchemaBuilder.array(leaf).build())
            .field("plains", SchemaBuilder.map(Schema.STRING_SCHEMA, plain).build())
            .build();
        add("struct_nested_namespaces", top, new Struct(top)
            .put("mid", new Struct(mid).put("leaf", new Struct(leaf).put("v", 1))
                .put("plain", new Struct(plain).put("q", "p")).put("leaf2", new Struct(leaf).put("v", 2)))
            .put("leaves", Arrays.asList(new Struct(leaf).put("v", 3), new Struct(leaf).put("v", 4)))
            .put("plains", map("k", new Struct(plain).put("q", "r"))));

        Schema empty = SchemaBuilder.struct().name("com.example.Empty").build();
        add("struct_empty", empty, new Struct(empty));
        add("struct_optional_null", optionalAddress, null);
        add("struct_optional_value", optionalAddress, addr(optionalAddress, "x", 7));

        Schema docs = SchemaBuilder.struct().name("com.example.Documented").doc("connect doc")
            .parameter("io.confluent.connect.avro.record.doc", "record doc")
            .parameter("io.confluent.connect.avro.field.doc.a", "field a doc")
            .field("a", SchemaBuilder.int32().doc("type doc a").build())
            .field("b", SchemaBuilder.string().optional().doc("b doc").build())
            .build();
        add("struct_docs", docs, new Struct(docs).put("a", 1).put("b", "x"));

        Schema sub = SchemaBuilder.struct().name("com.example.Sub").field("q", Schema.INT32_SCHEMA).build();
        Schema defaults = SchemaBuilder.struct().name("com.example.Defaults")
            .field("i8", SchemaBuilder.int8().defaultValue((byte) -1).build())
            .field("i16", SchemaBuilder.int16().defaultValue((short) 300).build())
            .field("i32", SchemaBuilder.int32().defaultValue(-70000).build())
            .field("i64", SchemaBuilder.int64().defaultValue(1L << 40).build())
            .field("f32", SchemaBuilder.float32().defaultValue(0.1f).build())
            .field("f64", SchemaBuilder.float64().defaultValue(1e10).build())
            .field("f64b", SchemaBuilder.float64().defaultValue(-2.5).build())
            .field("bool", SchemaBuilder.bool().defaultValue(true).build())
            .field("str", SchemaBuilder.string().defaultValue("dé😀").build())
            .field("bin", SchemaBuilder.bytes().defaultValue(new byte[] {0, (byte) 200, 65}).build())
            .field("dec", Decimal.builder(2).defaultValue(new BigDecimal("3.14")).build())
            .field("day", Date.builder().defaultValue(day(3)).build())
            .field("tod", Time.builder().defaultValue(new java.util.Date(1000L)).build())
            .field("ts", Timestamp.builder().defaultValue(new java.util.Date(1234567890L)).build())
            .field("arr", SchemaBuilder.array(Schema.INT32_SCHEMA).defaultValue(Arrays.asList(1, 2)).build())
            .field("smap", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA)
                .defaultValue(map("a", 1)).build())
            .field("imap", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA)
                .defaultValue(map(1, "x")).build())
            .field("opt_str", SchemaBuilder.string().optional().defaultValue("o").build())
            .field("opt_int", SchemaBuilder.int32().optional().defaultValue(5).build())
            .field("opt_arr", SchemaBuilder.array(Schema.STRING_SCHEMA).optional()
                .defaultValue(Arrays.asList("z")).build())
            .field("opt_dec", Decimal.builder(1).optional().defaultValue(new BigDecimal("-0.5")).build())
            .field("sub", sub)
            .build();
        add("struct_defaults_of_every_type", defaults, new Struct(defaults)
            .put("i8", (byte) 1).put("i16", (short) 2).put("i32", 3).put("i64", 4L)
            .put("f32", 5.5f).put("f64", 6.5).put("f64b", 7.0).put("bool", false)
            .put("str", "s").put("bin", new byte[] {7}).put("dec", new BigDecimal("1.00"))
            .put("day", day(1)).put("tod", new java.util.Date(2L)).put("ts", new java.util.Date(3L))
            .put("arr", Arrays.asList(9)).put("smap", map("b", 2)).put("imap", map(2, "y"))
            .put("opt_str", "p").put("opt_int", 6).put("opt_arr", Arrays.asList("w"))
            .put("opt_dec", new BigDecimal("0.1")).put("sub", new Struct(sub).put("q", 1)));
        add("struct_defaults_used_for_nulls", defaults, new Struct(defaults)
            .put("sub", new Struct(sub).put("q", 1)));
        add("struct_defaults_no_meta", NO_META, defaults, new Struct(defaults)
            .put("sub", new Struct(sub).put("q", 2)));
    }

    static void containers() {
        Schema address = address(false).build();
        Schema optionalAddress = address(true).build();
        add("array_of_structs", SchemaBuilder.array(address).build(),
            Arrays.asList(addr(address, "a", 1), addr(address, "b", null)));
        add("array_of_optional_structs", SchemaBuilder.array(optionalAddress).build(),
            Arrays.asList(addr(optionalAddress, "a", 1), null));
        add("array_of_optional_values", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build(),
            Arrays.asList("a", null, "c"));
        add("array_of_arrays", SchemaBuilder.array(SchemaBuilder.array(Schema.INT8_SCHEMA).build()).build(),
            Arrays.asList(Arrays.asList((byte) 1, (byte) 2), Collections.emptyList()));
        add("array_empty", SchemaBuilder.array(Schema.INT64_SCHEMA).build(), Collections.emptyList());
        add("array_optional_null", SchemaBuilder.array(Schema.INT32_SCHEMA).optional().build(), null);
        add("array_named", SchemaBuilder.array(Schema.INT32_SCHEMA).name("com.example.Ints").version(4)
            .build(), Arrays.asList(1, -1));
        add("array_of_decimals", SchemaBuilder.array(Decimal.builder(2).optional().build()).build(),
            Arrays.asList(new BigDecimal("1.00"), null, new BigDecimal("-99.99")));

        add("map_string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT32_SCHEMA).build(),
            map("b", 1.25f, "a", -2f, "ζ", 0f));
        Map<String, Integer> many = new LinkedHashMap<>();
        for (int i = 0; i < 30; i++) many.put("key-" + (char) ('z' - i % 26) + i, i);
        add("map_string_keys_many", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), many);
        // Keys that crowd a few bins of Java's HashMap (which AvroData copies a string-keyed map
        // into before Avro writes it), so that bins become red-black trees, split and go back
        // to lists as the table grows: the order Avro writes the entries in follows all that.
        Schema stringToInt = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build();
        add("map_string_keys_colliding_bins", stringToInt, colliding(60, 7, 1));
        add("map_string_keys_colliding_bins_large", stringToInt, colliding(400, 7, 2));
        add("map_string_keys_one_bin", stringToInt, colliding(30, 63, 3));
        add("map_string_keys_equal_hashes", stringToInt, equalHashes());
        add("map_int_keys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build(),
            map(1, "one", 2, null, 300, "many", -7, "neg"));
        add("map_optional_string_keys", SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.INT32_SCHEMA)
            .build(), map("k", 1, "j", 2));
        add("map_struct_keys", SchemaBuilder.map(address, Schema.INT32_SCHEMA).build(),
            map(addr(address, "a", 1), 10, addr(address, "b", null), 20));
        add("map_named_int_keys", SchemaBuilder.map(Schema.INT64_SCHEMA, Schema.STRING_SCHEMA)
            .name("com.example.Lookup").build(), map(5L, "five"));
        add("map_named_string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA)
            .name("com.example.Dict").doc("a dict").build(), map("k", "v"));
        add("map_empty", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build(),
            Collections.emptyMap());
        add("map_of_maps", SchemaBuilder.map(Schema.STRING_SCHEMA,
            SchemaBuilder.map(Schema.INT16_SCHEMA, Schema.BOOLEAN_SCHEMA).build()).build(),
            map("outer", map((short) 1, true, (short) -2, false)));
        add("map_optional_null", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional()
            .build(), null);
        add("map_of_structs", SchemaBuilder.map(Schema.STRING_SCHEMA, optionalAddress).build(),
            map("home", addr(optionalAddress, "h", 1), "none", null));
    }

    static void unionsAndEnums() {
        Schema address = address(true).build();
        Schema union = SchemaBuilder.struct().name("io.confluent.connect.avro.Union")
            .field("int", Schema.OPTIONAL_INT32_SCHEMA)
            .field("string", Schema.OPTIONAL_STRING_SCHEMA)
            .field("Address", address)
            .build();
        add("union_string_branch", union, new Struct(union).put("string", "hello"));
        add("union_int_branch", union, new Struct(union).put("int", 3));
        add("union_record_branch", union, new Struct(union).put("Address", addr(address, "u", 9)));
        Schema optionalUnion = SchemaBuilder.struct().name("io.confluent.connect.avro.Union").optional()
            .field("int", Schema.OPTIONAL_INT32_SCHEMA)
            .field("string", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
        add("union_optional_null", optionalUnion, null);
        add("union_optional_value", optionalUnion, new Struct(optionalUnion).put("int", -1));
        Schema withUnion = SchemaBuilder.struct().name("com.example.HasUnion")
            .field("u", optionalUnion).field("n", Schema.INT32_SCHEMA).build();
        add("union_in_struct", withUnion, new Struct(withUnion)
            .put("u", new Struct(optionalUnion).put("string", "s")).put("n", 1));
        Schema single = SchemaBuilder.struct().name("io.confluent.connect.avro.Union")
            .field("string", Schema.OPTIONAL_STRING_SCHEMA).build();
        add("union_single_branch", single, new Struct(single).put("string", "only"));
        Schema branchDefault = SchemaBuilder.struct().name("io.confluent.connect.avro.Union")
            .field("int", SchemaBuilder.int32().optional().defaultValue(5).build())
            .field("string", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
        add("union_branch_with_default", branchDefault, new Struct(branchDefault).put("string", "s"));

        Schema color = SchemaBuilder.string().name("com.example.Color")
            .parameter("io.confluent.connect.avro.Enum", "com.example.Color")
            .parameter("io.confluent.connect.avro.Enum.RED", "RED")
            .parameter("io.confluent.connect.avro.Enum.GREEN", "GREEN")
            .parameter("io.confluent.connect.avro.Enum.BLUE", "BLUE")
            .parameter("io.confluent.connect.avro.enum.doc.Color", "colours")
            .parameter("io.confluent.connect.avro.enum.default.Color", "RED")
            .build();
        add("enum_enhanced", ENHANCED, color, "GREEN");
        add("enum_not_enhanced", color, "GREEN");
        Schema optionalColor = SchemaBuilder.string().name("com.example.Color").optional()
            .parameter("io.confluent.connect.avro.Enum", "com.example.Color")
            .parameter("io.confluent.connect.avro.Enum.RED", "RED")
            .parameter("io.confluent.connect.avro.Enum.GREEN", "GREEN")
            .parameter("io.confluent.connect.avro.Enum.BLUE", "BLUE")
            .build();
        Schema enhancedUnion = SchemaBuilder.struct().name("io.confluent.connect.avro.Union")
            .field("com.example.Address", address)
            .field("string", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
        Schema paint = SchemaBuilder.struct().name("com.example.Paint")
            .field("color", color)
            .field("maybe", optionalColor)
            .field("choice", enhancedUnion)
            .field("home", address)
            .build();
        add("enhanced_struct", ENHANCED, paint, new Struct(paint)
            .put("color", "BLUE")
            .put("choice", new Struct(enhancedUnion).put("com.example.Address", addr(address, "e", 1)))
            .put("home", addr(address, "h", null)));
    }

    static void namesAndConfigs() {
        Schema scrubbed = SchemaBuilder.struct().name("com.example.Rec_1")
            .field("my-field", Schema.INT32_SCHEMA)
            .field("2nd", Schema.OPTIONAL_STRING_SCHEMA)
            .field("ok_name", Schema.BOOLEAN_SCHEMA)
            .field("naïve", Schema.INT64_SCHEMA)
            .field("dot.ted", Schema.INT32_SCHEMA)
            .build();
        add("scrub_field_names", SCRUB, scrubbed, new Struct(scrubbed)
            .put("my-field", 1).put("2nd", "two").put("ok_name", true).put("naïve", 4L).put("dot.ted", 5));
        add("invalid_field_names_without_scrub", scrubbed, new Struct(scrubbed)
            .put("my-field", 1).put("ok_name", true).put("naïve", 4L).put("dot.ted", 5));
        Schema leading = SchemaBuilder.struct().name("com.example.Value-Record")
            .field("-lead", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA).build();
        add("scrub_leading_non_letter", SCRUB, leading, new Struct(leading).put("-lead", 1).put("b", 2));
        Schema namespace = SchemaBuilder.struct().name("my-topic.Value")
            .field("a", Schema.INT32_SCHEMA).build();
        add("scrub_namespace", SCRUB, namespace, new Struct(namespace).put("a", 1));
        Schema valid = SchemaBuilder.struct().name("com.example.Valid")
            .field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA).build();
        add("scrub_valid_names_unchanged", SCRUB, valid, new Struct(valid).put("a", 1));

        add("int8_no_meta", NO_META, Schema.INT8_SCHEMA, (byte) 5);
        add("decimal_no_meta", NO_META, Decimal.schema(3), new BigDecimal("1.234"));
        add("date_no_meta", NO_META, Date.SCHEMA, day(1));
        add("string_default_no_meta", NO_META, SchemaBuilder.string().optional().defaultValue("d")
            .name("com.example.S").doc("doc").version(1).build(), "v");
        add("map_int_keys_no_meta", NO_META, SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA)
            .build(), map(1, "a"));
        add("enhanced_plain_struct", ENHANCED, address(false).build(),
            addr(address(false).build(), "x", 1));
    }

    public static void main(String[] args) throws Exception {
        primitives();
        logical();
        structs();
        containers();
        unionsAndEnums();
        namesAndConfigs();
        for (Case c : CASES) run(c);
    }
}
