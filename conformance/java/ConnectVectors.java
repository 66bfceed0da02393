/*
 * Live conformance vectors: Apache Kafka Connect's own encoders and decoders, run from the
 * jars that `scripts/connect-java fetch` downloads. The Rust test
 * crates/runtime/tests/conformance_vectors.rs compiles this file with javac into a temporary
 * directory and runs it each time the tests run; nothing here is pasted into the Rust sources.
 *
 *   java -cp "$(scripts/connect-java classpath):out" ConnectVectors encode
 *       prints one line per sample input: `<kind>\t<case>\t<hex of the bytes Java produces>`
 *   java -cp ... ConnectVectors decode  < lines
 *       reads `<kind>\t<case>\t<hex>` lines (bytes produced by Tributary), decodes each with
 *       Java's decoder, encodes the result again and prints
 *       `<kind>\t<case>\t<hex of the re-encoding>\t<what Java decoded>`, or
 *       `<kind>\t<case>\tERR:<exception>: <message>` when Java could not decode the input.
 *
 * Kinds:
 *   meta-v0, meta-v1, meta-v2      group member metadata (ConnectProtocol /
 *                                  IncrementalCooperativeConnectProtocol, compatible/sessioned)
 *   assign-v0, assign-v1, assign-v2  SyncGroup assignments of the same protocols
 *   json-on, json-off              JsonConverter with schemas.enable true / false
 *   json-num-on, json-num-off      the same with decimal.format=NUMERIC
 *   config                         config-topic record values, written through the internal
 *                                  converter (JsonConverter, schemas off) with the schemas
 *                                  KafkaConfigBackingStore publishes
 *   status                         status-topic record values (the store's private schema,
 *                                  read by reflection)
 *
 * Run with -Duser.timezone=UTC (the logical types do not depend on it, but toString does).
 */

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.connect.data.Date;
import org.apache.kafka.connect.data.Decimal;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Time;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.distributed.ConnectProtocol;
import org.apache.kafka.connect.runtime.distributed.ExtendedAssignment;
import org.apache.kafka.connect.runtime.distributed.ExtendedWorkerState;
import org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeConnectProtocol;
import org.apache.kafka.connect.storage.KafkaConfigBackingStore;
import org.apache.kafka.connect.storage.KafkaStatusBackingStore;
import org.apache.kafka.connect.util.ConnectorTaskId;

public class ConnectVectors {
    static final String TOPIC = "topic";
    static final String URL = "http://127.0.0.1:8083/";
    static final String LEADER = "connect-1-5b7e0c1a-3f1d-4c2e-9a57-0d9c1e6b2a44";

    // ---------------------------------------------------------------- output helpers

    static String hex(byte[] b) {
        if (b == null) return "NULL";
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    static byte[] unhex(String s) {
        if (s.equals("NULL")) return null;
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++)
            out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return out;
    }

    static byte[] bytes(ByteBuffer b) {
        if (b == null) return null;
        ByteBuffer d = b.duplicate();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    static void line(String kind, String name, String rest) {
        System.out.println(kind + "\t" + name + "\t" + rest);
    }

    // ---------------------------------------------------------------- group protocol

    static ConnectorTaskId t(String c, int n) { return new ConnectorTaskId(c, n); }

    static ExtendedAssignment held(short version) {
        return new ExtendedAssignment(version, ConnectProtocol.Assignment.NO_ERROR, LEADER, URL, 42L,
                Arrays.asList("orders-sink"),
                Arrays.asList(t("orders-sink", 0), t("orders-sink", 2), t("files-source", 0)),
                Collections.emptyList(), Collections.emptyList(), 0);
    }

    static ExtendedAssignment revoking(short version) {
        return new ExtendedAssignment(version, ConnectProtocol.Assignment.NO_ERROR, LEADER, URL, 43L,
                Arrays.asList("files-source"),
                Arrays.asList(t("files-source", 1), t("orders-sink", 1)),
                Arrays.asList("orders-sink"),
                Arrays.asList(t("orders-sink", 0), t("files-source", 0)),
                300000);
    }

    static ExtendedAssignment mismatch(short version) {
        return new ExtendedAssignment(version, ConnectProtocol.Assignment.CONFIG_MISMATCH, LEADER, URL, 99L,
                Collections.emptyList(), Collections.emptyList(),
                Collections.emptyList(), Collections.emptyList(), 0);
    }

    static void encodeProtocol() {
        line("meta-v0", "worker", hex(bytes(ConnectProtocol.serializeMetadata(
                new ConnectProtocol.WorkerState(URL, 42L)))));
        line("meta-v0", "fresh", hex(bytes(ConnectProtocol.serializeMetadata(
                new ConnectProtocol.WorkerState(URL, -1L)))));
        for (short v = 1; v <= 2; v++) {
            boolean sessioned = v == 2;
            String kind = "meta-v" + v;
            line(kind, "fresh", hex(bytes(IncrementalCooperativeConnectProtocol.serializeMetadata(
                    new ExtendedWorkerState(URL, -1L, null), sessioned))));
            line(kind, "held", hex(bytes(IncrementalCooperativeConnectProtocol.serializeMetadata(
                    new ExtendedWorkerState(URL, 42L, held(v)), sessioned))));
        }
        line("assign-v0", "basic", hex(bytes(ConnectProtocol.serializeAssignment(
                new ConnectProtocol.Assignment(ConnectProtocol.Assignment.NO_ERROR, LEADER, URL, 7L,
                        Arrays.asList("a", "b"), Arrays.asList(t("a", 0), t("b", 1), t("c", 2)))))));
        line("assign-v0", "mismatch", hex(bytes(ConnectProtocol.serializeAssignment(
                new ConnectProtocol.Assignment(ConnectProtocol.Assignment.CONFIG_MISMATCH, LEADER, URL, 99L,
                        Collections.emptyList(), Collections.emptyList())))));
        for (short v = 1; v <= 2; v++) {
            boolean sessioned = v == 2;
            String kind = "assign-v" + v;
            line(kind, "held", hex(bytes(IncrementalCooperativeConnectProtocol.serializeAssignment(held(v), sessioned))));
            line(kind, "revoking", hex(bytes(IncrementalCooperativeConnectProtocol.serializeAssignment(revoking(v), sessioned))));
            line(kind, "mismatch", hex(bytes(IncrementalCooperativeConnectProtocol.serializeAssignment(mismatch(v), sessioned))));
        }
    }

    static String describe(ConnectProtocol.Assignment a) {
        if (a == null) return "null";
        StringBuilder sb = new StringBuilder();
        sb.append("error=").append(a.error()).append(" leader=").append(a.leader())
          .append(" leaderUrl=").append(a.leaderUrl()).append(" offset=").append(a.offset())
          .append(" connectors=").append(a.connectors()).append(" tasks=").append(a.tasks());
        if (a instanceof ExtendedAssignment) {
            ExtendedAssignment e = (ExtendedAssignment) a;
            sb.append(" revokedConnectors=").append(e.revokedConnectors())
              .append(" revokedTasks=").append(e.revokedTasks()).append(" delay=").append(e.delay());
        }
        return sb.toString();
    }

    static void decodeProtocol(String kind, String name, byte[] in) {
        short version = ByteBuffer.wrap(in).getShort();
        String out;
        String desc;
        switch (kind) {
            case "meta-v0": {
                ConnectProtocol.WorkerState s = ConnectProtocol.deserializeMetadata(ByteBuffer.wrap(in));
                out = hex(bytes(ConnectProtocol.serializeMetadata(s)));
                desc = "version=" + version + " url=" + s.url() + " offset=" + s.offset();
                break;
            }
            case "meta-v1":
            case "meta-v2": {
                ExtendedWorkerState s = IncrementalCooperativeConnectProtocol.deserializeMetadata(ByteBuffer.wrap(in));
                out = hex(bytes(IncrementalCooperativeConnectProtocol.serializeMetadata(s, version >= 2)));
                desc = "version=" + version + " url=" + s.url() + " offset=" + s.offset()
                        + " allocation=[" + describe(s.assignment()) + "]";
                break;
            }
            case "assign-v0": {
                ConnectProtocol.Assignment a = ConnectProtocol.deserializeAssignment(ByteBuffer.wrap(in));
                out = hex(bytes(ConnectProtocol.serializeAssignment(a)));
                desc = "version=" + version + " " + describe(a);
                break;
            }
            default: {
                ExtendedAssignment a = IncrementalCooperativeConnectProtocol.deserializeAssignment(ByteBuffer.wrap(in));
                out = hex(bytes(IncrementalCooperativeConnectProtocol.serializeAssignment(a, version >= 2)));
                desc = "version=" + version + " " + describe(a);
            }
        }
        line(kind, name, out + "\t" + desc);
    }

    // ---------------------------------------------------------------- JsonConverter

    static JsonConverter json(boolean schemas, String decimalFormat) {
        JsonConverter c = new JsonConverter();
        Map<String, Object> cfg = new HashMap<>();
        cfg.put("schemas.enable", Boolean.toString(schemas));
        cfg.put("decimal.format", decimalFormat);
        c.configure(cfg, false);
        return c;
    }

    static final Map<String, JsonConverter> CONVERTERS = new LinkedHashMap<>();
    static {
        CONVERTERS.put("json-on", json(true, "BASE64"));
        CONVERTERS.put("json-off", json(false, "BASE64"));
        CONVERTERS.put("json-num-on", json(true, "NUMERIC"));
        CONVERTERS.put("json-num-off", json(false, "NUMERIC"));
    }

    static final long DAY = 86_400_000L;

    static Schema addressSchema() {
        return SchemaBuilder.struct().name("com.example.Address").optional()
                .field("street", Schema.STRING_SCHEMA)
                .field("zip", Schema.OPTIONAL_INT32_SCHEMA)
                .build();
    }

    static Schema personSchema() {
        return SchemaBuilder.struct().name("com.example.Person").version(3).doc("A person")
                .parameter("p1", "v1").parameter("a0", "v0")
                .field("name", Schema.STRING_SCHEMA)
                .field("age", SchemaBuilder.int32().optional().defaultValue(18).doc("years").build())
                .field("score", Schema.FLOAT64_SCHEMA)
                .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).build())
                .field("attrs", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).optional().build())
                .field("codes", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
                .field("address", addressSchema())
                .field("balance", Decimal.builder(2).optional().build())
                .field("birthday", Date.builder().optional().build())
                .field("wake", Time.SCHEMA)
                .field("updated", Timestamp.builder().optional().build())
                .field("raw", Schema.OPTIONAL_BYTES_SCHEMA)
                .build();
    }

    static Struct person() {
        Schema s = personSchema();
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
                .put("address", new Struct(s.field("address").schema()).put("street", "Main St").put("zip", 12345))
                .put("balance", new BigDecimal("-1234.56"))
                .put("birthday", new java.util.Date(19000L * DAY))
                .put("wake", new java.util.Date(25200123L))
                .put("updated", new java.util.Date(1700000000123L))
                .put("raw", new byte[] {1, 2, 3});
    }

    /** The sample inputs: name, schema (may be null), value. */
    static List<Object[]> jsonCases() {
        List<Object[]> c = new ArrayList<>();
        c.add(new Object[] {"int8", Schema.INT8_SCHEMA, (byte) -12});
        c.add(new Object[] {"int16", Schema.INT16_SCHEMA, (short) -1234});
        c.add(new Object[] {"int32", Schema.INT32_SCHEMA, 123456789});
        c.add(new Object[] {"int64", Schema.INT64_SCHEMA, -9007199254740993L});
        c.add(new Object[] {"float32", Schema.FLOAT32_SCHEMA, 3.25f});
        c.add(new Object[] {"float64", Schema.FLOAT64_SCHEMA, -0.1});
        c.add(new Object[] {"float64_big", Schema.FLOAT64_SCHEMA, 1.5e300});
        c.add(new Object[] {"boolean", Schema.BOOLEAN_SCHEMA, true});
        c.add(new Object[] {"string", Schema.STRING_SCHEMA, "h\u00e9llo \"q\" \\ \n\t\u0001 \u2713 \ud83d\ude00"});
        c.add(new Object[] {"bytes", Schema.BYTES_SCHEMA, new byte[] {0, 1, 2, (byte) 255}});
        c.add(new Object[] {"optional_null", Schema.OPTIONAL_STRING_SCHEMA, null});
        c.add(new Object[] {"default_used", SchemaBuilder.int32().optional().defaultValue(42).build(), null});
        c.add(new Object[] {"named_int", SchemaBuilder.int64().name("com.example.Id").version(2)
                .doc("an id").parameter("k", "v").build(), 5L});
        c.add(new Object[] {"array", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), Arrays.asList(1, 2, 3)});
        c.add(new Object[] {"array_empty", SchemaBuilder.array(Schema.STRING_SCHEMA).build(), Collections.emptyList()});
        Map<String, Long> sm = new LinkedHashMap<>();
        sm.put("a", 1L);
        sm.put("b", 2L);
        c.add(new Object[] {"map_string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(), sm});
        Map<Integer, String> im = new LinkedHashMap<>();
        im.put(1, "x");
        im.put(2, "y");
        c.add(new Object[] {"map_int_keys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(), im});
        c.add(new Object[] {"struct", personSchema(), person()});
        c.add(new Object[] {"decimal", Decimal.schema(2), new BigDecimal("-1234.56")});
        c.add(new Object[] {"decimal_zero", Decimal.schema(3), new BigDecimal("0.000")});
        c.add(new Object[] {"decimal_big", Decimal.schema(0), new BigDecimal("123456789012345678901234567890")});
        c.add(new Object[] {"date", Date.SCHEMA, new java.util.Date(19000L * DAY)});
        c.add(new Object[] {"date_negative", Date.SCHEMA, new java.util.Date(-3L * DAY)});
        c.add(new Object[] {"time", Time.SCHEMA, new java.util.Date(25200123L)});
        c.add(new Object[] {"timestamp", Timestamp.SCHEMA, new java.util.Date(1700000000123L)});
        c.add(new Object[] {"timestamp_negative", Timestamp.SCHEMA, new java.util.Date(-1L)});
        Map<String, Object> schemaless = new LinkedHashMap<>();
        schemaless.put("a", 1L);
        schemaless.put("b", Arrays.asList(true, "x", 2.5));
        schemaless.put("c", null);
        schemaless.put("d", "text");
        c.add(new Object[] {"schemaless_map", null, schemaless});
        c.add(new Object[] {"schemaless_string", null, "plain"});
        return c;
    }

    static void encodeJson() {
        for (Map.Entry<String, JsonConverter> conv : CONVERTERS.entrySet()) {
            for (Object[] c : jsonCases()) {
                String name = (String) c[0];
                try {
                    line(conv.getKey(), name, hex(conv.getValue().fromConnectData(TOPIC, (Schema) c[1], c[2])));
                } catch (Exception e) {
                    line(conv.getKey(), name, "ERR:" + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        }
    }

    static void decodeJson(String kind, String name, byte[] in) {
        JsonConverter c = CONVERTERS.get(kind);
        SchemaAndValue sv = c.toConnectData(TOPIC, in);
        byte[] out = c.fromConnectData(TOPIC, sv.schema(), sv.value());
        String schema = sv.schema() == null ? "null" : sv.schema().type() + (sv.schema().name() != null ? "/" + sv.schema().name() : "");
        line(kind, name, hex(out) + "\t" + schema);
    }

    // ---------------------------------------------------------------- config topic

    static final JsonConverter INTERNAL = json(false, "BASE64");

    static byte[] write(Schema schema, Struct value) {
        return INTERNAL.fromConnectData(TOPIC, schema, value);
    }

    static byte[] properties(Map<String, String> props) {
        // The herder hands the store whatever map it holds; a sorted map keeps the vector stable.
        return write(KafkaConfigBackingStore.CONNECTOR_CONFIGURATION_V0,
                new Struct(KafkaConfigBackingStore.CONNECTOR_CONFIGURATION_V0).put("properties", new TreeMap<>(props)));
    }

    static byte[] commit(int tasks) {
        return write(KafkaConfigBackingStore.CONNECTOR_TASKS_COMMIT_V0,
                new Struct(KafkaConfigBackingStore.CONNECTOR_TASKS_COMMIT_V0).put("tasks", tasks));
    }

    static byte[] targetState(String state) {
        Struct s = new Struct(KafkaConfigBackingStore.TARGET_STATE_V1);
        // Workers before KIP-875 know no STOPPED: they read "state", which says PAUSED.
        s.put("state", state.equals("STOPPED") ? "PAUSED" : state);
        s.put("state.v2", state);
        return write(KafkaConfigBackingStore.TARGET_STATE_V1, s);
    }

    static byte[] restart(boolean includeTasks, boolean onlyFailed) {
        Struct s = new Struct(KafkaConfigBackingStore.RESTART_REQUEST_V0);
        s.put(KafkaConfigBackingStore.INCLUDE_TASKS_FIELD_NAME, includeTasks);
        s.put(KafkaConfigBackingStore.ONLY_FAILED_FIELD_NAME, onlyFailed);
        return write(KafkaConfigBackingStore.RESTART_REQUEST_V0, s);
    }

    static byte[] sessionKey(byte[] key, String algorithm, long created) {
        Struct s = new Struct(KafkaConfigBackingStore.SESSION_KEY_V0);
        javax.crypto.SecretKey k = new javax.crypto.spec.SecretKeySpec(key, algorithm);
        s.put("key", Base64.getEncoder().encodeToString(k.getEncoded()));
        s.put("algorithm", k.getAlgorithm());
        s.put("creation-timestamp", created);
        return write(KafkaConfigBackingStore.SESSION_KEY_V0, s);
    }

    static byte[] loggerLevel(String level) {
        return write(KafkaConfigBackingStore.LOGGER_LEVEL_V0,
                new Struct(KafkaConfigBackingStore.LOGGER_LEVEL_V0).put("level", level));
    }

    static Map<String, String> connectorProps() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("name", "files-source");
        m.put("connector.class", "FileStreamSource");
        m.put("tasks.max", "1");
        m.put("file", "/tmp/in \u00e9.txt");
        m.put("topic", "lines");
        m.put("empty", "");
        return m;
    }

    static Map<String, String> taskProps() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("task.class", "org.apache.kafka.connect.file.FileStreamSourceTask");
        m.put("file", "/tmp/in \u00e9.txt");
        m.put("topic", "lines");
        m.put("batch.size", "2000");
        return m;
    }

    static final byte[] SESSION_KEY = new byte[] {
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, (byte) 0x88, (byte) 0x99, (byte) 0xaa, (byte) 0xbb,
        (byte) 0xcc, (byte) 0xdd, (byte) 0xee, (byte) 0xff, 0x01, 0x23, 0x45, 0x67, (byte) 0x89, (byte) 0xab,
        (byte) 0xcd, (byte) 0xef, 0x10, 0x32, 0x54, 0x76, (byte) 0x98, (byte) 0xba, (byte) 0xdc, (byte) 0xfe};

    static void encodeConfig() {
        line("config", "connector", hex(properties(connectorProps())));
        line("config", "task", hex(properties(taskProps())));
        line("config", "commit", hex(commit(3)));
        line("config", "target-started", hex(targetState("STARTED")));
        line("config", "target-paused", hex(targetState("PAUSED")));
        line("config", "target-stopped", hex(targetState("STOPPED")));
        line("config", "restart-plain", hex(restart(false, false)));
        line("config", "restart-failed-tasks", hex(restart(true, true)));
        line("config", "session-key", hex(sessionKey(SESSION_KEY, "HmacSHA256", 1700000000123L)));
        line("config", "logger-level", hex(loggerLevel("DEBUG")));
    }

    @SuppressWarnings("unchecked")
    static void decodeConfig(String label, byte[] in) {
        // The case name says which record this is; a "side:" prefix only labels the line.
        String name = label.substring(label.indexOf(':') + 1);
        SchemaAndValue sv = INTERNAL.toConnectData(TOPIC, in);
        Map<String, Object> v = (Map<String, Object>) sv.value();
        byte[] out;
        String desc;
        if (name.startsWith("connector") || name.startsWith("task")) {
            Map<String, String> props = (Map<String, String>) v.get("properties");
            out = properties(props);
            desc = "properties=" + new TreeMap<>(props);
        } else if (name.startsWith("commit")) {
            int tasks = ((Long) v.get("tasks")).intValue();
            out = commit(tasks);
            desc = "tasks=" + tasks;
        } else if (name.startsWith("target")) {
            // As the store reads it: "state.v2" when present, else "state".
            Object st = v.containsKey("state.v2") ? v.get("state.v2") : v.get("state");
            String state = org.apache.kafka.connect.runtime.TargetState.valueOf((String) st).name();
            out = targetState(state);
            desc = "state=" + state;
        } else if (name.startsWith("restart")) {
            boolean it = (Boolean) v.get(KafkaConfigBackingStore.INCLUDE_TASKS_FIELD_NAME);
            boolean of = (Boolean) v.get(KafkaConfigBackingStore.ONLY_FAILED_FIELD_NAME);
            out = restart(it, of);
            desc = "includeTasks=" + it + " onlyFailed=" + of;
        } else if (name.startsWith("session-key")) {
            byte[] key = Base64.getDecoder().decode((String) v.get("key"));
            String algorithm = (String) v.get("algorithm");
            long created = (Long) v.get("creation-timestamp");
            out = sessionKey(key, algorithm, created);
            desc = "key=" + hex(key) + " algorithm=" + algorithm + " created=" + created;
        } else if (name.startsWith("logger-level")) {
            String level = (String) v.get("level");
            out = loggerLevel(level);
            desc = "level=" + level;
        } else {
            throw new IllegalArgumentException("unknown config case " + name);
        }
        line("config", label, hex(out) + "\t" + desc);
    }

    // ---------------------------------------------------------------- status topic

    static Schema statusSchema() throws Exception {
        Field f = KafkaStatusBackingStore.class.getDeclaredField("STATUS_SCHEMA_V0");
        f.setAccessible(true);
        return (Schema) f.get(null);
    }

    static byte[] status(String state, String trace, String worker, int generation, String version) throws Exception {
        Schema schema = statusSchema();
        Struct s = new Struct(schema);
        s.put("state", state);
        if (trace != null) s.put("trace", trace);
        s.put("worker_id", worker);
        s.put("generation", generation);
        s.put("version", version);
        return INTERNAL.fromConnectData(TOPIC, schema, s);
    }

    static void encodeStatus() throws Exception {
        line("status", "running", hex(status("RUNNING", null, "127.0.0.1:8083", 5, "4.1.1")));
        line("status", "failed", hex(status("FAILED", "org.apache.kafka.connect.errors.ConnectException: boom\n\tat x.y(Z.java:1)\n",
                "127.0.0.1:8084", 7, "4.1.1")));
        line("status", "unassigned-no-version", hex(status("UNASSIGNED", null, "127.0.0.1:8083", 2, null)));
    }

    @SuppressWarnings("unchecked")
    static void decodeStatus(String name, byte[] in) throws Exception {
        SchemaAndValue sv = INTERNAL.toConnectData(TOPIC, in);
        Map<String, Object> v = (Map<String, Object>) sv.value();
        // As the store reads a status: generation as a long, trace and version optional.
        String state = (String) v.get("state");
        String trace = (String) v.get("trace");
        String worker = (String) v.get("worker_id");
        int generation = ((Long) v.get("generation")).intValue();
        String version = (String) v.get("version");
        byte[] out = status(state, trace, worker, generation, version);
        line("status", name, hex(out) + "\tstate=" + state + " worker=" + worker + " generation=" + generation
                + " version=" + version + " trace=" + (trace == null ? "null" : "present"));
    }

    // ---------------------------------------------------------------- main

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "encode";
        if (mode.equals("encode")) {
            encodeProtocol();
            encodeJson();
            encodeConfig();
            encodeStatus();
        } else if (mode.equals("decode")) {
            BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String l;
            while ((l = r.readLine()) != null) {
                if (l.isEmpty()) continue;
                String[] p = l.split("\t", 3);
                String kind = p[0], name = p[1];
                try {
                    byte[] in = unhex(p[2]);
                    if (kind.startsWith("meta-") || kind.startsWith("assign-")) decodeProtocol(kind, name, in);
                    else if (kind.startsWith("json-")) decodeJson(kind, name, in);
                    else if (kind.equals("config")) decodeConfig(name, in);
                    else if (kind.equals("status")) decodeStatus(name, in);
                    else throw new IllegalArgumentException("unknown kind " + kind);
                } catch (Exception e) {
                    line(kind, name, "ERR:" + e.getClass().getSimpleName() + ": " + e.getMessage());
                }
            }
        } else {
            System.err.println("usage: ConnectVectors encode | decode < lines");
            System.exit(2);
        }
        System.out.flush();
    }
}
