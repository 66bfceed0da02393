/*
 * Golden-vector generator for Tributary's built-in converters.
 *
 * How the vectors were produced: this program was compiled and run against Apache Kafka 4.1.1
 * (org.apache.kafka:connect-json:4.1.1 and connect-api:4.1.1 with their dependencies, fetched
 * with `mvn dependency:copy-dependencies` from a throwaway pom), compiled with OpenJDK 17 and
 * run on both OpenJDK 17 and Temurin 25:
 *
 *   javac -cp 'lib/*' -d out JsonConverterVectors.java
 *   java -Duser.timezone=UTC -cp 'lib/*:out' JsonConverterVectors > vectors.txt
 *
 * The goldens are the JDK 25 output. JDK 17 prints three floats differently (cases
 * float32_14, float32_16 and float64_14: its pre-JDK 19 Double/Float.toString emits extra
 * digits, e.g. 9.999999999999999E22 for 1.0E23); everything else is identical on both.
 *
 * Each output line is `<case name>\t<result>`; the result is the converter's output bytes as
 * UTF-8 text, `HEX:<hex>` for outputs that are not text, `NULL` for a null byte array, or
 * `ERR:<exception simple name>:<message>` when the converter threw. Decoding cases print the
 * bytes obtained by decoding the input and re-encoding the result with the same converter,
 * or the schema and value the decoder produced. The results are pasted as golden strings
 * into crates/plugins/tests/converter_vectors.rs; this program is not needed to run the Rust
 * tests, and no jars are committed.
 */

import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;

public class JsonConverterVectors {
    static final String TOPIC = "topic";

    static void emit(String name, byte[] out) {
        String s;
        if (out == null) s = "NULL";
        else s = new String(out, StandardCharsets.UTF_8);
        System.out.println(name + "\t" + s);
    }

    static void emitHex(String name, byte[] out) {
        if (out == null) { System.out.println(name + "\tNULL"); return; }
        StringBuilder sb = new StringBuilder("HEX:");
        for (byte b : out) sb.append(String.format("%02x", b & 0xff));
        System.out.println(name + "\t" + sb);
    }

    static void emitErr(String name, Throwable e) {
        System.out.println(name + "\tERR:" + e.getClass().getSimpleName() + ":" + e.getMessage());
    }

    interface Enc { byte[] run() throws Exception; }

    static void enc(String name, Enc f) {
        try { emit(name, f.run()); } catch (Throwable e) { emitErr(name, e); }
    }

    static JsonConverter json(boolean schemas, String decimalFormat, boolean replaceNull, boolean isKey) {
        JsonConverter c = new JsonConverter();
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("schemas.enable", Boolean.toString(schemas));
        cfg.put("decimal.format", decimalFormat);
        cfg.put("replace.null.with.default", Boolean.toString(replaceNull));
        c.configure(cfg, isKey);
        return c;
    }

    /** Decodes `input` and re-encodes the result with the same converter. */
    static void roundTrip(String name, JsonConverter c, String input) {
        try {
            SchemaAndValue sv = c.toConnectData(TOPIC, input == null ? null : input.getBytes(StandardCharsets.UTF_8));
            emit(name, c.fromConnectData(TOPIC, sv.schema(), sv.value()));
        } catch (Throwable e) {
            emitErr(name, e);
        }
    }

    /** Decodes `input` and prints the schema type and the value's class and toString. */
    static void decode(String name, JsonConverter c, String input) {
        try {
            SchemaAndValue sv = c.toConnectData(TOPIC, input == null ? null : input.getBytes(StandardCharsets.UTF_8));
            String schema = sv.schema() == null ? "null" : sv.schema().type() + (sv.schema().name() == null ? "" : "/" + sv.schema().name());
            Object v = sv.value();
            String value = v == null ? "null" : v.getClass().getSimpleName() + ":" + (v instanceof java.util.Date ? Long.toString(((java.util.Date) v).getTime()) : v.toString());
            System.out.println(name + "\t" + schema + " " + value);
        } catch (Throwable e) {
            emitErr(name, e);
        }
    }

    static Schema personSchema() {
        Schema address = SchemaBuilder.struct().name("com.example.Address").optional()
            .field("street", Schema.STRING_SCHEMA)
            .field("zip", Schema.OPTIONAL_INT32_SCHEMA)
            .build();
        return SchemaBuilder.struct().name("com.example.Person").version(3).doc("A person")
            .parameter("p1", "v1").parameter("a0", "v0")
            .field("name", Schema.STRING_SCHEMA)
            .field("age", SchemaBuilder.int32().optional().defaultValue(18).doc("years").build())
            .field("score", Schema.FLOAT64_SCHEMA)
            .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
            .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
            .field("codes", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
            .field("address", address)
            .field("balance", Decimal.builder(2).optional().build())
            .field("birthday", Date.builder().optional().build())
            .field("wake", Time.SCHEMA)
            .field("updated", Timestamp.builder().optional().build())
            .field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
            .build();
    }

    static Struct person(Schema s) {
        Schema address = s.field("address").schema();
        Map<String, Long> attrs = new LinkedHashMap<>();
        attrs.put("x", 1L);
        attrs.put("y", -2L);
        Map<Integer, String> codes = new LinkedHashMap<>();
        codes.put(1, "one");
        codes.put(2, null);
        return new Struct(s)
            .put("name", "Ada")
            .put("score", 97.5)
            .put("tags", Arrays.asList("a", "b"))
            .put("attrs", attrs)
            .put("codes", codes)
            .put("address", new Struct(address).put("street", "Main St").put("zip", 12345))
            .put("balance", new BigDecimal("-1234.56"))
            .put("birthday", new java.util.Date(19000L * 86400000L))
            .put("wake", new java.util.Date(25200123L))
            .put("updated", new java.util.Date(1700000000123L))
            .put("raw", new byte[] {1, 2, 3});
    }

    public static void main(String[] args) throws Exception {
        JsonConverter on = json(true, "BASE64", true, false);
        JsonConverter off = json(false, "BASE64", true, false);
        JsonConverter num = json(true, "NUMERIC", true, false);
        JsonConverter numOff = json(false, "NUMERIC", true, false);
        JsonConverter noReplace = json(true, "BASE64", false, false);
        JsonConverter noReplaceOff = json(false, "BASE64", false, false);
        JsonConverter key = json(true, "BASE64", true, true);

        // ---- primitives, schemas enabled ----
        enc("int8", () -> on.fromConnectData(TOPIC, Schema.INT8_SCHEMA, (byte) -12));
        enc("int16", () -> on.fromConnectData(TOPIC, Schema.INT16_SCHEMA, (short) 1234));
        enc("int32", () -> on.fromConnectData(TOPIC, Schema.INT32_SCHEMA, Integer.MIN_VALUE));
        enc("int64", () -> on.fromConnectData(TOPIC, Schema.INT64_SCHEMA, Long.MAX_VALUE));
        enc("boolean", () -> on.fromConnectData(TOPIC, Schema.BOOLEAN_SCHEMA, true));
        enc("string", () -> on.fromConnectData(TOPIC, Schema.STRING_SCHEMA, "he said \"hi\"\\ / \n\t\r\b\f\u0001\u001f\u007f é 😀 \u2028"));
        enc("bytes", () -> on.fromConnectData(TOPIC, Schema.BYTES_SCHEMA, new byte[] {0, 1, 2, (byte) 255, (byte) 128}));
        enc("bytes_empty", () -> on.fromConnectData(TOPIC, Schema.BYTES_SCHEMA, new byte[0]));
        enc("key_string", () -> key.fromConnectData(TOPIC, Schema.STRING_SCHEMA, "k"));
        float[] floats = {1.5f, 0.1f, 3.4028235e38f, 1.4e-45f, 1e-5f, 1e-3f, 1e7f, 9999999f, 123456.7f, -0.0f, 100f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, 1.17549435E-38f, 16777216f, 3.0e10f};
        for (int i = 0; i < floats.length; i++) {
            final float f = floats[i];
            enc("float32_" + i, () -> on.fromConnectData(TOPIC, Schema.FLOAT32_SCHEMA, f));
        }
        double[] doubles = {0.1, 1e21, 1e-7, 100.0, -0.0, 1.0 / 3, 123456789.125, 1e7, 9999999.999, 0.001, 0.000999, 4.9e-324, Double.MAX_VALUE, 2e-3, 1e23, 5e-324, Double.NaN, Double.POSITIVE_INFINITY, 2.2250738585072014E-308, 12345678912345678.0};
        for (int i = 0; i < doubles.length; i++) {
            final double d = doubles[i];
            enc("float64_" + i, () -> on.fromConnectData(TOPIC, Schema.FLOAT64_SCHEMA, d));
        }

        // ---- optional / null / defaults ----
        enc("optional_null", () -> on.fromConnectData(TOPIC, Schema.OPTIONAL_INT32_SCHEMA, null));
        enc("optional_null_off", () -> off.fromConnectData(TOPIC, Schema.OPTIONAL_INT32_SCHEMA, null));
        enc("required_null", () -> on.fromConnectData(TOPIC, Schema.INT32_SCHEMA, null));
        enc("schemaless_null", () -> on.fromConnectData(TOPIC, null, null));
        enc("schemaless_null_off", () -> off.fromConnectData(TOPIC, null, null));
        Schema withDefault = SchemaBuilder.string().optional().defaultValue("dflt").name("n").version(2).doc("d \"q\"").parameter("k", "v").build();
        enc("default_null_replaced", () -> on.fromConnectData(TOPIC, withDefault, null));
        enc("default_null_not_replaced", () -> noReplace.fromConnectData(TOPIC, withDefault, null));
        enc("default_value_set", () -> on.fromConnectData(TOPIC, withDefault, "x"));
        Schema reqDefault = SchemaBuilder.int64().defaultValue(7L).build();
        enc("required_default_null", () -> on.fromConnectData(TOPIC, reqDefault, null));
        enc("required_default_null_not_replaced", () -> noReplace.fromConnectData(TOPIC, reqDefault, null));
        enc("wrong_type", () -> on.fromConnectData(TOPIC, Schema.INT32_SCHEMA, "nope"));
        enc("wrong_type_bytes", () -> on.fromConnectData(TOPIC, Schema.BYTES_SCHEMA, "nope"));

        // ---- complex types ----
        Schema arr = SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build();
        enc("array_optional_elems", () -> on.fromConnectData(TOPIC, arr, Arrays.asList("a", null, "c")));
        Schema arrOfArr = SchemaBuilder.array(SchemaBuilder.array(Schema.INT8_SCHEMA).build()).build();
        enc("array_of_array", () -> on.fromConnectData(TOPIC, arrOfArr, Arrays.asList(Arrays.asList((byte) 1, (byte) 2), Collections.emptyList())));
        Schema strMap = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.FLOAT32_SCHEMA).build();
        Map<String, Float> sm = new LinkedHashMap<>();
        sm.put("b", 1.25f);
        sm.put("a", -2f);
        enc("map_string_keys", () -> on.fromConnectData(TOPIC, strMap, sm));
        Schema boolMap = SchemaBuilder.map(Schema.BOOLEAN_SCHEMA, SchemaBuilder.array(Schema.INT16_SCHEMA).build()).build();
        Map<Boolean, List<Short>> bm = new LinkedHashMap<>();
        bm.put(true, Arrays.asList((short) 1));
        bm.put(false, Collections.emptyList());
        enc("map_bool_keys", () -> on.fromConnectData(TOPIC, boolMap, bm));
        Schema emptyStruct = SchemaBuilder.struct().build();
        enc("struct_empty", () -> on.fromConnectData(TOPIC, emptyStruct, new Struct(emptyStruct)));
        Schema ps = personSchema();
        Struct p = person(ps);
        enc("struct_person", () -> on.fromConnectData(TOPIC, ps, p));
        enc("struct_person_off", () -> off.fromConnectData(TOPIC, ps, p));
        enc("struct_person_numeric", () -> num.fromConnectData(TOPIC, ps, p));
        enc("struct_person_no_replace", () -> noReplace.fromConnectData(TOPIC, ps, p));
        enc("struct_person_no_replace_off", () -> noReplaceOff.fromConnectData(TOPIC, ps, p));
        Schema other = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build();
        enc("struct_mismatch", () -> on.fromConnectData(TOPIC, other, p));
        Schema innerBase = SchemaBuilder.struct().optional()
            .field("a", Schema.INT32_SCHEMA)
            .field("b", Schema.OPTIONAL_STRING_SCHEMA)
            .build();
        Schema outer = SchemaBuilder.struct()
            .field("inner", innerBase)
            .field("list", SchemaBuilder.array(Schema.INT32_SCHEMA).optional().defaultValue(Arrays.asList(1, 2)).build())
            .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.BOOLEAN_SCHEMA).optional().defaultValue(Collections.singletonMap("t", true)).build())
            .field("when", Date.builder().optional().defaultValue(new java.util.Date(86400000L)).build())
            .build();
        enc("complex_defaults", () -> on.fromConnectData(TOPIC, outer, new Struct(outer)));
        enc("complex_defaults_no_replace", () -> noReplace.fromConnectData(TOPIC, outer, new Struct(outer)));

        // ---- logical types ----
        Schema dec2 = Decimal.schema(2);
        enc("decimal_base64", () -> on.fromConnectData(TOPIC, dec2, new BigDecimal("12345.67")));
        enc("decimal_base64_neg", () -> on.fromConnectData(TOPIC, dec2, new BigDecimal("-0.01")));
        enc("decimal_base64_zero", () -> on.fromConnectData(TOPIC, dec2, new BigDecimal("0.00")));
        enc("decimal_numeric", () -> num.fromConnectData(TOPIC, dec2, new BigDecimal("12345.60")));
        enc("decimal_numeric_off", () -> numOff.fromConnectData(TOPIC, dec2, new BigDecimal("-0.05")));
        Schema dec8 = Decimal.schema(8);
        enc("decimal_numeric_small", () -> numOff.fromConnectData(TOPIC, dec8, new BigDecimal("0.00000001")));
        Schema decNeg = Decimal.schema(-2);
        enc("decimal_numeric_negscale", () -> numOff.fromConnectData(TOPIC, decNeg, new BigDecimal(BigInteger.valueOf(5), -2)));
        enc("decimal_base64_negscale", () -> on.fromConnectData(TOPIC, decNeg, new BigDecimal(BigInteger.valueOf(5), -2)));
        enc("decimal_scale_mismatch", () -> on.fromConnectData(TOPIC, dec2, new BigDecimal("1.5")));
        Schema bigDec = Decimal.builder(0).optional().defaultValue(new BigDecimal("123456789012345678901234567890")).build();
        enc("decimal_default_base64", () -> on.fromConnectData(TOPIC, bigDec, null));
        enc("decimal_default_numeric", () -> num.fromConnectData(TOPIC, bigDec, null));
        enc("date", () -> on.fromConnectData(TOPIC, Date.SCHEMA, new java.util.Date(-1L * 86400000L)));
        enc("time", () -> on.fromConnectData(TOPIC, Time.SCHEMA, new java.util.Date(3723004L)));
        enc("timestamp", () -> on.fromConnectData(TOPIC, Timestamp.SCHEMA, new java.util.Date(-1L)));
        enc("timestamp_off", () -> off.fromConnectData(TOPIC, Timestamp.SCHEMA, new java.util.Date(1700000000123L)));
        Schema tsDefault = Timestamp.builder().optional().defaultValue(new java.util.Date(0L)).build();
        enc("timestamp_default", () -> on.fromConnectData(TOPIC, tsDefault, null));

        // ---- schemaless ----
        Map<String, Object> slm = new LinkedHashMap<>();
        slm.put("s", "x");
        slm.put("i", 1);
        slm.put("l", 2L);
        slm.put("b", (byte) 3);
        slm.put("f", 1.5f);
        slm.put("d", 2.5);
        slm.put("t", false);
        slm.put("n", null);
        slm.put("bytes", new byte[] {104, 105});
        slm.put("list", Arrays.asList(1, "two", null));
        enc("schemaless_map_off", () -> off.fromConnectData(TOPIC, null, slm));
        enc("schemaless_map_on", () -> on.fromConnectData(TOPIC, null, slm));
        Map<Object, Object> mixed = new LinkedHashMap<>();
        mixed.put("a", 1);
        mixed.put(2, "b");
        enc("schemaless_map_mixed_keys", () -> off.fromConnectData(TOPIC, null, mixed));
        enc("schemaless_string", () -> off.fromConnectData(TOPIC, null, "plain"));
        enc("schemaless_int", () -> off.fromConnectData(TOPIC, null, 42));
        enc("schemaless_struct", () -> off.fromConnectData(TOPIC, null, new Struct(other).put("a", 1)));
        enc("schemaless_decimal", () -> off.fromConnectData(TOPIC, null, new BigDecimal("1.5")));
        enc("schemaless_date", () -> off.fromConnectData(TOPIC, null, new java.util.Date(0L)));

        // ---- decoding: decode then re-encode with the same converter ----
        roundTrip("rt_person", on, new String(on.fromConnectData(TOPIC, ps, p), StandardCharsets.UTF_8));
        roundTrip("rt_person_numeric", num, new String(num.fromConnectData(TOPIC, ps, p), StandardCharsets.UTF_8));
        roundTrip("rt_schemaless_nested", off, "{\"a\":[1,2.5,\"x\",true,null,{\"b\":[]}]}");
        roundTrip("rt_leading_zeros", off, "007");
        roundTrip("rt_big_int", off, "12345678901234567890");
        roundTrip("rt_big_float", off, "1e400");
        roundTrip("rt_float_precise", off, "0.1000000000000000055511151231257827");
        roundTrip("rt_exp", off, "1E2");
        roundTrip("rt_trailing", off, "1 2");
        roundTrip("rt_trailing_garbage", off, "{\"a\":1} xyz");
        roundTrip("rt_whitespace", off, " \n\"s\"\t ");
        roundTrip("rt_unicode_escapes", off, "\"\\u00e9\\ud83d\\ude00\\/\\n\"");
        roundTrip("rt_envelope_null_schema", on, "{\"schema\":null,\"payload\":{\"k\":[1]}}");
        roundTrip("rt_envelope_reversed", on, "{\"payload\":5,\"schema\":{\"type\":\"int16\"}}");
        roundTrip("rt_int8_truncate", on, "{\"schema\":{\"type\":\"int8\"},\"payload\":300}");
        roundTrip("rt_int32_from_float", on, "{\"schema\":{\"type\":\"int32\"},\"payload\":12.9}");
        roundTrip("rt_int32_from_string", on, "{\"schema\":{\"type\":\"int32\"},\"payload\":\"12\"}");
        roundTrip("rt_int64_from_big", on, "{\"schema\":{\"type\":\"int64\"},\"payload\":18446744073709551617}");
        roundTrip("rt_float32", on, "{\"schema\":{\"type\":\"float\"},\"payload\":0.1}");
        roundTrip("rt_float64_int", on, "{\"schema\":{\"type\":\"double\"},\"payload\":3}");
        roundTrip("rt_boolean_from_int", on, "{\"schema\":{\"type\":\"boolean\",\"optional\":true},\"payload\":1}");
        roundTrip("rt_string_from_int", on, "{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":1}");
        roundTrip("rt_bytes", on, "{\"schema\":{\"type\":\"bytes\"},\"payload\":\"AAEC/w==\"}");
        roundTrip("rt_bytes_from_int", on, "{\"schema\":{\"type\":\"bytes\",\"optional\":true},\"payload\":1}");
        roundTrip("rt_bytes_bad_base64", on, "{\"schema\":{\"type\":\"bytes\"},\"payload\":\"!!\"}");
        roundTrip("rt_array_from_object", on, "{\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"int32\"}},\"payload\":{\"a\":1}}");
        roundTrip("rt_map_int_keys", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"string\"}},\"payload\":[[1,\"a\"]]}");
        roundTrip("rt_optional_flag_string", on, "{\"schema\":{\"type\":\"int32\",\"optional\":\"true\"},\"payload\":1}");
        roundTrip("rt_version_float", on, "{\"schema\":{\"type\":\"int32\",\"version\":2.5,\"name\":5,\"doc\":\"d\"},\"payload\":1}");
        roundTrip("rt_default_null_optional", on, "{\"schema\":{\"type\":\"int32\",\"optional\":true,\"default\":null},\"payload\":null}");
        roundTrip("rt_default_replaces_null", on, "{\"schema\":{\"type\":\"int32\",\"optional\":true,\"default\":9},\"payload\":null}");
        roundTrip("rt_default_no_replace", noReplace, "{\"schema\":{\"type\":\"int32\",\"optional\":true,\"default\":9},\"payload\":null}");
        roundTrip("rt_struct_missing_field_default", on, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"optional\":true,\"default\":4,\"field\":\"a\"},{\"type\":\"string\",\"optional\":true,\"field\":\"b\"}]},\"payload\":{\"c\":1}}");
        roundTrip("rt_decimal_numeric_in", on, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}},\"payload\":1.50}");
        roundTrip("rt_decimal_numeric_in_num", num, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}},\"payload\":12.34}");
        roundTrip("rt_decimal_int_in_num", num, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"0\"}},\"payload\":12}");
        roundTrip("rt_decimal_base64_in", num, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"3\"}},\"payload\":\"MDk=\"}");
        roundTrip("rt_date", on, "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1},\"payload\":19000}");
        roundTrip("rt_timestamp", on, "{\"schema\":{\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\"},\"payload\":1700000000123}");
        roundTrip("rt_map_string_keys", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}},\"payload\":{\"only\":1}}");

        // ---- decoding: errors ----
        roundTrip("err_not_envelope", on, "{\"a\":1}");
        roundTrip("err_envelope_extra", on, "{\"schema\":null,\"payload\":1,\"x\":2}");
        roundTrip("err_array_top", on, "[1]");
        roundTrip("err_invalid_json", on, "{");
        roundTrip("err_invalid_json_off", off, "{\"a\":}");
        roundTrip("err_empty_on", on, "");
        roundTrip("err_empty_off", off, "");
        roundTrip("err_no_type", on, "{\"schema\":{},\"payload\":1}");
        roundTrip("err_type_not_text", on, "{\"schema\":{\"type\":1},\"payload\":1}");
        roundTrip("err_unknown_type", on, "{\"schema\":{\"type\":\"float128\"},\"payload\":1}");
        roundTrip("err_array_no_items", on, "{\"schema\":{\"type\":\"array\"},\"payload\":[]}");
        roundTrip("err_map_no_keys", on, "{\"schema\":{\"type\":\"map\",\"values\":{\"type\":\"int32\"}},\"payload\":{}}");
        roundTrip("err_map_no_values", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"int32\"}},\"payload\":{}}");
        roundTrip("err_struct_no_fields", on, "{\"schema\":{\"type\":\"struct\"},\"payload\":{}}");
        roundTrip("err_struct_field_no_name", on, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\"}]},\"payload\":{}}");
        roundTrip("err_params_not_string", on, "{\"schema\":{\"type\":\"int32\",\"parameters\":{\"a\":1}},\"payload\":1}");
        roundTrip("err_required_null", on, "{\"schema\":{\"type\":\"int32\"},\"payload\":null}");
        roundTrip("err_required_default_null", on, "{\"schema\":{\"type\":\"string\",\"default\":null},\"payload\":\"x\"}");
        roundTrip("err_struct_not_object", on, "{\"schema\":{\"type\":\"struct\",\"fields\":[]},\"payload\":[]}");
        roundTrip("err_struct_missing_required", on, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"field\":\"a\"}]},\"payload\":{}}");
        roundTrip("err_map_string_not_object", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"string\"},\"values\":{\"type\":\"int32\"}},\"payload\":[]}");
        roundTrip("err_map_not_array", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"int32\"}},\"payload\":{}}");
        roundTrip("err_map_entry_not_array", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"int32\"}},\"payload\":[1]}");
        roundTrip("err_map_entry_len", on, "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"int32\"}},\"payload\":[[1,2,3]]}");
        roundTrip("err_decimal_bad_type", on, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}},\"payload\":true}");
        roundTrip("err_decimal_bad_base64", on, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}},\"payload\":\"!!\"}");
        roundTrip("err_date_not_int", on, "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\"},\"payload\":\"x\"}");
        roundTrip("err_time_not_int", on, "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Time\"},\"payload\":1.5}");
        roundTrip("err_time_range", on, "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Time\"},\"payload\":-1}");
        roundTrip("err_timestamp_not_integral", on, "{\"schema\":{\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\"},\"payload\":1.5}");
        decode("dec_tombstone", on, null);
        decode("dec_schemaless_int", off, "5");
        decode("dec_schemaless_float", off, "5.0");
        decode("dec_schemaless_null", off, "null");
        decode("dec_decimal_scale", on, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"parameters\":{\"scale\":\"2\"}},\"payload\":1.5}");

        // ---- StringConverter ----
        StringConverter sc = new StringConverter();
        sc.configure(Collections.emptyMap(), false);
        enc("string_conv_string", () -> sc.fromConnectData(TOPIC, Schema.STRING_SCHEMA, "héllo"));
        enc("string_conv_null", () -> sc.fromConnectData(TOPIC, Schema.OPTIONAL_STRING_SCHEMA, null));
        enc("string_conv_int", () -> sc.fromConnectData(TOPIC, Schema.INT32_SCHEMA, 42));
        enc("string_conv_float", () -> sc.fromConnectData(TOPIC, Schema.FLOAT32_SCHEMA, 1e10f));
        enc("string_conv_double", () -> sc.fromConnectData(TOPIC, Schema.FLOAT64_SCHEMA, 1e-4));
        enc("string_conv_decimal", () -> sc.fromConnectData(TOPIC, dec8, new BigDecimal("0.00000001")));
        enc("string_conv_list", () -> sc.fromConnectData(TOPIC, null, Arrays.asList(1, "a", null, 2.5)));
        enc("string_conv_struct", () -> sc.fromConnectData(TOPIC, other, new Struct(other).put("a", 7)));
        StringConverter sc16 = new StringConverter();
        sc16.configure(Collections.singletonMap("converter.encoding", "UTF-16"), false);
        try { emitHex("string_conv_utf16", sc16.fromConnectData(TOPIC, Schema.STRING_SCHEMA, "hé")); } catch (Throwable e) { emitErr("string_conv_utf16", e); }
        StringConverter scl = new StringConverter();
        scl.configure(Collections.singletonMap("converter.encoding", "ISO-8859-1"), false);
        try { emitHex("string_conv_latin1", scl.fromConnectData(TOPIC, Schema.STRING_SCHEMA, "hé€")); } catch (Throwable e) { emitErr("string_conv_latin1", e); }

        // ---- ByteArrayConverter ----
        ByteArrayConverter bac = new ByteArrayConverter();
        bac.configure(Collections.emptyMap(), false);
        enc("bytearray_ok", () -> bac.fromConnectData(TOPIC, Schema.BYTES_SCHEMA, "ab".getBytes(StandardCharsets.UTF_8)));
        enc("bytearray_schema", () -> bac.fromConnectData(TOPIC, Schema.STRING_SCHEMA, "ab"));
        enc("bytearray_value", () -> bac.fromConnectData(TOPIC, null, "ab"));
        enc("bytearray_decimal", () -> bac.fromConnectData(TOPIC, dec2, new BigDecimal("1.00")));

        // ---- SimpleHeaderConverter ----
        SimpleHeaderConverter hc = new SimpleHeaderConverter();
        hc.configure(Collections.emptyMap());
        enc("header_string", () -> hc.fromConnectHeader(TOPIC, "h", Schema.STRING_SCHEMA, "a \"b\""));
        enc("header_int", () -> hc.fromConnectHeader(TOPIC, "h", Schema.INT32_SCHEMA, 5));
        enc("header_float", () -> hc.fromConnectHeader(TOPIC, "h", Schema.FLOAT64_SCHEMA, 1e7));
        enc("header_bool", () -> hc.fromConnectHeader(TOPIC, "h", Schema.BOOLEAN_SCHEMA, true));
        enc("header_bytes", () -> hc.fromConnectHeader(TOPIC, "h", Schema.BYTES_SCHEMA, new byte[] {1, 2, 3}));
        enc("header_list", () -> hc.fromConnectHeader(TOPIC, "h", null, Arrays.asList("a\\b", 1, null, new byte[] {1})));
        Map<String, Object> hm = new LinkedHashMap<>();
        hm.put("k", "v");
        hm.put("n", 1.5f);
        enc("header_map", () -> hc.fromConnectHeader(TOPIC, "h", null, hm));
        enc("header_struct", () -> hc.fromConnectHeader(TOPIC, "h", ps, p));
        enc("header_decimal", () -> hc.fromConnectHeader(TOPIC, "h", dec8, new BigDecimal("0.00000001")));
        enc("header_date", () -> hc.fromConnectHeader(TOPIC, "h", Date.SCHEMA, new java.util.Date(19000L * 86400000L)));
        enc("header_time", () -> hc.fromConnectHeader(TOPIC, "h", Time.SCHEMA, new java.util.Date(3723004L)));
        enc("header_timestamp", () -> hc.fromConnectHeader(TOPIC, "h", Timestamp.SCHEMA, new java.util.Date(1700000000123L)));
        String[] headerInputs = {"", "true", "false", "null", "12", "-129", "40000", "3000000000", "12345678901234567890", "1.5", "0.1", "1e400", "2023-11-14", "10:20:30.123Z", "2023-11-14T22:13:20.123Z", "hello", " 7 ", "true}", "abc,def", "+5"};
        for (int i = 0; i < headerInputs.length; i++) {
            String in = headerInputs[i];
            try {
                SchemaAndValue sv = hc.toConnectHeader(TOPIC, "h", in.getBytes(StandardCharsets.UTF_8));
                String schema = sv == null || sv.schema() == null ? "null" : sv.schema().type() + (sv.schema().name() == null ? "" : "/" + sv.schema().name());
                Object v = sv == null ? null : sv.value();
                String value = v == null ? "null" : v.getClass().getSimpleName() + ":" + (v instanceof java.util.Date ? Long.toString(((java.util.Date) v).getTime()) : v.toString());
                System.out.println("header_parse_" + i + "\t" + schema + " " + value);
            } catch (Throwable e) {
                emitErr("header_parse_" + i, e);
            }
        }
    }
}
