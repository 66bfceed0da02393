// Runs Kafka Connect's own transformations and predicates (connect-transforms) over the
// corpus in conformance/transforms/, for crates/plugins/tests/transform_vectors.rs to compare
// with Tributary's.
//
// Input (stdin): one JSON object per line, a case:
//   {"name": "...", "type": "<Java class>", "config": {...},
//    "records": [<record>, ...]}
// where a record is
//   {"sink": true|false, "topic": "t", "partition": 0|null, "offset": 7, "timestamp": 1|null,
//    "key": <JsonConverter envelope or null>, "value": <envelope or null>,
//    "headers": [["name", <envelope>], ...]}
// and an envelope is what JsonConverter (schemas.enable=true) writes: {"schema":…,"payload":…}.
//
// Output (stdout): one JSON object per record of each case, in order:
//   {"case": "...", "index": i, "result": R}
// where R is {"record": <record as above>}, {"dropped": true}, {"test": true|false} for a
// predicate, or {"error": {"class": "<simple class name>", "message": "..."}}; a case whose
// configure fails gives one line with index -1 and the error.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;
import org.apache.kafka.common.record.TimestampType;

public class TransformVectors {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final JsonConverter CONVERTER = new JsonConverter();

    public static void main(String[] args) throws Exception {
        Map<String, Object> converterConfig = new HashMap<>();
        converterConfig.put("schemas.enable", "true");
        converterConfig.put("replace.null.with.default", "false");
        CONVERTER.configure(converterConfig, false);
        BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            runCase(MAPPER.readTree(line));
        }
        System.out.flush();
    }

    private static void runCase(JsonNode c) throws Exception {
        String name = c.get("name").asText();
        Object plugin = Class.forName(c.get("type").asText()).getDeclaredConstructor().newInstance();
        Map<String, String> config = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = c.get("config").fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            config.put(e.getKey(), e.getValue().asText());
        }
        try {
            if (plugin instanceof Transformation) {
                ((Transformation<?>) plugin).configure(config);
            } else {
                ((Predicate<?>) plugin).configure(config);
            }
        } catch (Exception e) {
            emit(name, -1, error(e));
            return;
        }
        ArrayNode records = (ArrayNode) c.get("records");
        for (int i = 0; i < records.size(); i++) {
            ObjectNode result;
            try {
                ConnectRecord<?> record = readRecord(records.get(i));
                result = apply(plugin, record);
            } catch (Exception e) {
                result = error(e);
            }
            emit(name, i, result);
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ObjectNode apply(Object plugin, ConnectRecord record) throws Exception {
        ObjectNode result = MAPPER.createObjectNode();
        if (plugin instanceof Predicate) {
            result.put("test", ((Predicate) plugin).test(record));
            return result;
        }
        ConnectRecord out = ((Transformation) plugin).apply(record);
        if (out == null) {
            result.put("dropped", true);
        } else {
            result.set("record", writeRecord(out));
        }
        return result;
    }

    private static ObjectNode error(Exception e) {
        ObjectNode err = MAPPER.createObjectNode();
        err.put("class", e.getClass().getSimpleName());
        err.put("message", String.valueOf(e.getMessage()));
        ObjectNode result = MAPPER.createObjectNode();
        result.set("error", err);
        return result;
    }

    private static void emit(String name, int index, ObjectNode result) throws Exception {
        ObjectNode line = MAPPER.createObjectNode();
        line.put("case", name);
        line.put("index", index);
        line.set("result", result);
        System.out.println(MAPPER.writeValueAsString(line));
    }

    private static SchemaAndValue decode(String topic, JsonNode envelope) throws Exception {
        if (envelope == null || envelope.isNull()) {
            return SchemaAndValue.NULL;
        }
        return CONVERTER.toConnectData(topic, MAPPER.writeValueAsBytes(envelope));
    }

    private static JsonNode encode(String topic, org.apache.kafka.connect.data.Schema schema, Object value)
            throws Exception {
        byte[] bytes = CONVERTER.fromConnectData(topic, schema, value);
        return bytes == null ? MAPPER.nullNode() : MAPPER.readTree(bytes);
    }

    private static ConnectRecord<?> readRecord(JsonNode r) throws Exception {
        String topic = r.get("topic").asText();
        JsonNode p = r.get("partition");
        Integer partition = p == null || p.isNull() ? null : p.asInt();
        JsonNode ts = r.get("timestamp");
        Long timestamp = ts == null || ts.isNull() ? null : ts.asLong();
        SchemaAndValue key = decode(topic, r.get("key"));
        SchemaAndValue value = decode(topic, r.get("value"));
        ConnectHeaders headers = new ConnectHeaders();
        JsonNode hs = r.get("headers");
        if (hs != null) {
            for (JsonNode h : hs) {
                SchemaAndValue hv = decode(topic, h.get(1));
                headers.add(h.get(0).asText(), hv.value(), hv.schema());
            }
        }
        if (r.path("sink").asBoolean(false)) {
            long offset = r.path("offset").asLong(0);
            return new SinkRecord(topic, partition == null ? 0 : partition, key.schema(), key.value(),
                    value.schema(), value.value(), offset, timestamp,
                    timestamp == null ? TimestampType.NO_TIMESTAMP_TYPE : TimestampType.CREATE_TIME,
                    headers);
        }
        return new SourceRecord(Map.of("source", "vectors"), Map.of("position", 1), topic, partition,
                key.schema(), key.value(), value.schema(), value.value(), timestamp, headers);
    }

    private static ObjectNode writeRecord(ConnectRecord<?> record) throws Exception {
        ObjectNode r = MAPPER.createObjectNode();
        r.put("sink", record instanceof SinkRecord);
        r.put("topic", record.topic());
        if (record.kafkaPartition() == null) {
            r.putNull("partition");
        } else {
            r.put("partition", record.kafkaPartition());
        }
        if (record instanceof SinkRecord) {
            r.put("offset", ((SinkRecord) record).kafkaOffset());
        }
        if (record.timestamp() == null) {
            r.putNull("timestamp");
        } else {
            r.put("timestamp", record.timestamp());
        }
        r.set("key", encode(record.topic(), record.keySchema(), record.key()));
        r.set("value", encode(record.topic(), record.valueSchema(), record.value()));
        ArrayNode headers = r.putArray("headers");
        for (Header h : record.headers()) {
            ArrayNode pair = headers.addArray();
            pair.add(h.key());
            pair.add(encode(record.topic(), h.schema(), h.value()));
        }
        return r;
    }
}
