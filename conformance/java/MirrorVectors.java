/*
 * MirrorVectors: answers from Apache Kafka's MirrorMaker 2 classes (connect-mirror and
 * connect-mirror-client, from Maven Central) for crates/mirror/tests/mirror_vectors.rs, which
 * compares them with Tributary's native implementation (crates/mirror).
 *
 * Reads JSON cases from stdin, one per line, and prints one JSON result per line:
 *   {"kind":"policy","props":{...},"alias":"A","topic":"t"}
 *     -> every ReplicationPolicy method for that topic and alias, the policy built from
 *        replication.policy.class (default DefaultReplicationPolicy) and configured with props;
 *   {"kind":"filter","which":"topics"|"groups","props":{...},"name":"n"}
 *     -> {"accepts":true|false} from DefaultTopicFilter / DefaultGroupFilter, or {"error":...};
 *   {"kind":"offsetSync"|"checkpoint"|"heartbeat", ...fields}
 *     -> the record's key and value as hex, and its source partition as JSON where the
 *        connector commits one;
 *   {"kind":"sourcePartition","topic":"t","partition":0,"cluster":"A"}
 *     -> MirrorSourceTask's source partition and offset as JSON;
 *   {"kind":"mm2","props":{...}}
 *     -> MirrorMakerConfig of an mm2.properties: its flows (sorted "A->B"), each cluster's
 *        clusterProps, each flow's workerConfig and its three connectors' connectorBaseConfig,
 *        or {"error":message};
 *   {"kind":"names"}
 *     -> the settings MirrorClientConfig defines and those the three connectors define;
 *   {"kind":"offsetSyncs","maxLag":n,"steps":[["record",topic,partition,up,down]|["promote"]]}
 *     -> OffsetSyncWriter's pending and delayed syncs after each step;
 *   {"kind":"taskConfigs","props":{...},"partitions":[[topic,partition],...],"maxTasks":n}
 *     -> MirrorSourceConnector's task configs for those known partitions;
 *   {"kind":"offsetSyncStore","mustReadToEnd":b,"initial":[[t,p,up,down],...],"after":[...],
 *    "queries":[[t,p,up],...]}
 *     -> OffsetSyncStore fed the initial syncs during start and the others after: each
 *        query's translateDownstream (null when empty) and its partition's 64 kept syncs;
 *   {"kind":"checkpoints","props":{...},"source":"A","target":"B","topics":{...}|absent,
 *    "syncs":[[t,p,up,down],...],"rounds":[[group,[[t,p,offset,metadata],...]],...]}
 *     -> MirrorCheckpointTask.checkpointsForGroup for each round (the checkpoint store
 *        updated after each, as the task does), sorted by topic and partition.
 *
 * It lives in org.apache.kafka.connect.mirror to call the package-private serializers.
 */
package org.apache.kafka.connect.mirror;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.common.TopicPartition;

public class MirrorVectors {
    private static final ObjectMapper JSON = new ObjectMapper();

    private static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder();
        for (byte x : b) sb.append(String.format("%02x", x & 0xff));
        return sb.toString();
    }

    private static String hex(ByteBuffer buf) {
        byte[] b = new byte[buf.remaining()];
        buf.get(b);
        return hex(b);
    }

    private static Map<String, String> props(JsonNode node) {
        Map<String, String> out = new HashMap<>();
        if (node != null) {
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                out.put(e.getKey(), e.getValue().asText());
            }
        }
        return out;
    }

    private static ObjectNode policy(JsonNode c) throws Exception {
        Map<String, String> props = props(c.get("props"));
        String cls = props.getOrDefault("replication.policy.class",
            DefaultReplicationPolicy.class.getName());
        ReplicationPolicy p = (ReplicationPolicy) Class.forName(cls).getDeclaredConstructor().newInstance();
        if (p instanceof org.apache.kafka.common.Configurable) {
            ((org.apache.kafka.common.Configurable) p).configure(props);
        }
        String topic = c.get("topic").asText();
        String alias = c.get("alias").asText();
        ObjectNode r = JSON.createObjectNode();
        r.put("remote", p.formatRemoteTopic(alias, topic));
        r.put("source", p.topicSource(topic));
        r.put("upstream", p.upstreamTopic(topic));
        r.put("original", p.originalTopic(topic));
        r.put("heartbeats", p.heartbeatsTopic());
        r.put("offsetSyncs", p.offsetSyncsTopic(alias));
        r.put("checkpoints", p.checkpointsTopic(alias));
        r.put("isHeartbeats", p.isHeartbeatsTopic(topic));
        r.put("isCheckpoints", p.isCheckpointsTopic(topic));
        r.put("isMM2Internal", p.isMM2InternalTopic(topic));
        r.put("isInternal", p.isInternalTopic(topic));
        return r;
    }

    private static ObjectNode filter(JsonNode c) {
        ObjectNode r = JSON.createObjectNode();
        Map<String, String> props = props(c.get("props"));
        String name = c.get("name").asText();
        try {
            if (c.get("which").asText().equals("topics")) {
                DefaultTopicFilter f = new DefaultTopicFilter();
                f.configure(props);
                r.put("accepts", f.shouldReplicateTopic(name));
            } else {
                DefaultGroupFilter f = new DefaultGroupFilter();
                f.configure(props);
                r.put("accepts", f.shouldReplicateGroup(name));
            }
        } catch (org.apache.kafka.common.config.ConfigException e) {
            r.put("error", e.getClass().getName());
            r.put("message", e.getMessage());
        } catch (RuntimeException e) {
            r.put("error", e.getClass().getName());
        }
        return r;
    }

    private static ObjectNode record(JsonNode c) throws Exception {
        ObjectNode r = JSON.createObjectNode();
        switch (c.get("kind").asText()) {
            case "offsetSync": {
                OffsetSync s = new OffsetSync(
                    new TopicPartition(c.get("topic").asText(), c.get("partition").asInt()),
                    c.get("upstream").asLong(), c.get("downstream").asLong());
                r.put("key", hex(s.serializeKey()));
                r.put("value", hex(s.serializeValue()));
                break;
            }
            case "checkpoint": {
                Checkpoint s = new Checkpoint(c.get("group").asText(),
                    new TopicPartition(c.get("topic").asText(), c.get("partition").asInt()),
                    c.get("upstream").asLong(), c.get("downstream").asLong(),
                    c.get("metadata").asText());
                r.put("key", hex(s.recordKey()));
                r.put("value", hex(s.recordValue()));
                r.put("partition", JSON.writeValueAsString(s.connectPartition()));
                break;
            }
            case "heartbeat": {
                Heartbeat s = new Heartbeat(c.get("source").asText(), c.get("target").asText(),
                    c.get("timestamp").asLong());
                r.put("key", hex(s.recordKey()));
                r.put("value", hex(s.recordValue()));
                r.put("partition", JSON.writeValueAsString(s.connectPartition()));
                break;
            }
            case "sourcePartition": {
                TopicPartition tp = new TopicPartition(c.get("topic").asText(), c.get("partition").asInt());
                r.put("partition", JSON.writeValueAsString(MirrorUtils.wrapPartition(tp, c.get("cluster").asText())));
                r.put("offset", JSON.writeValueAsString(MirrorUtils.wrapOffset(c.get("offset").asLong())));
                break;
            }
            default:
                throw new IllegalArgumentException("unknown kind " + c.get("kind"));
        }
        return r;
    }

    private static ObjectNode sorted(Map<String, String> m) {
        ObjectNode o = JSON.createObjectNode();
        for (Map.Entry<String, String> e : new TreeMap<>(m).entrySet()) o.put(e.getKey(), e.getValue());
        return o;
    }

    private static ObjectNode mm2(JsonNode c) {
        ObjectNode r = JSON.createObjectNode();
        MirrorMakerConfig config;
        try {
            config = new MirrorMakerConfig(props(c.get("props")));
        } catch (RuntimeException e) {
            r.put("error", e.getMessage());
            return r;
        }
        List<String> pairs = new ArrayList<>();
        ObjectNode workers = r.putObject("workers");
        ObjectNode connectors = r.putObject("connectors");
        for (SourceAndTarget st : config.clusterPairs()) {
            pairs.add(st.toString());
            workers.set(st.toString(), sorted(config.workerConfig(st)));
            ObjectNode cs = connectors.putObject(st.toString());
            cs.set("Source", sorted(config.connectorBaseConfig(st, MirrorSourceConnector.class)));
            cs.set("Checkpoint", sorted(config.connectorBaseConfig(st, MirrorCheckpointConnector.class)));
            cs.set("Heartbeat", sorted(config.connectorBaseConfig(st, MirrorHeartbeatConnector.class)));
        }
        Collections.sort(pairs);
        r.set("pairs", JSON.valueToTree(pairs));
        ObjectNode clusters = r.putObject("clusterProps");
        for (String cluster : new TreeSet<>(config.clusters())) clusters.set(cluster, sorted(config.clusterProps(cluster)));
        return r;
    }

    private static ObjectNode names() {
        ObjectNode r = JSON.createObjectNode();
        r.set("client", JSON.valueToTree(new TreeSet<>(MirrorClientConfig.CLIENT_CONFIG_DEF.names())));
        Set<String> all = new TreeSet<>(MirrorSourceConfig.CONNECTOR_CONFIG_DEF.names());
        all.addAll(MirrorCheckpointConfig.CONNECTOR_CONFIG_DEF.names());
        all.addAll(MirrorHeartbeatConfig.CONNECTOR_CONFIG_DEF.names());
        r.set("connectors", JSON.valueToTree(all));
        return r;
    }

    private static com.fasterxml.jackson.databind.node.ArrayNode syncs(Map<TopicPartition, OffsetSync> m) {
        com.fasterxml.jackson.databind.node.ArrayNode a = JSON.createArrayNode();
        for (OffsetSync s : m.values()) {
            a.add(JSON.createArrayNode().add(s.topicPartition().topic()).add(s.topicPartition().partition())
                .add(s.upstreamOffset()).add(s.downstreamOffset()));
        }
        return a;
    }

    private static ObjectNode taskConfigs(JsonNode c) {
        List<TopicPartition> parts = new ArrayList<>();
        for (JsonNode p : c.get("partitions")) parts.add(new TopicPartition(p.get(0).asText(), p.get(1).asInt()));
        MirrorSourceConnector connector = new MirrorSourceConnector(parts, new MirrorSourceConfig(props(c.get("props"))));
        ObjectNode r = JSON.createObjectNode();
        com.fasterxml.jackson.databind.node.ArrayNode tasks = r.putArray("tasks");
        for (Map<String, String> t : connector.taskConfigs(c.get("maxTasks").asInt())) tasks.add(sorted(t));
        return r;
    }

    private static ObjectNode offsetSyncs(JsonNode c) {
        OffsetSyncWriter w = new OffsetSyncWriter(null, "unused",
            new java.util.concurrent.Semaphore(10), c.get("maxLag").asLong());
        ObjectNode r = JSON.createObjectNode();
        com.fasterxml.jackson.databind.node.ArrayNode states = r.putArray("states");
        for (JsonNode step : c.get("steps")) {
            if (step.get(0).asText().equals("promote")) {
                w.promoteDelayedOffsetSyncs();
            } else {
                w.maybeQueueOffsetSyncs(new TopicPartition(step.get(1).asText(), step.get(2).asInt()),
                    step.get(3).asLong(), step.get(4).asLong());
            }
            ObjectNode st = states.addObject();
            st.set("pending", syncs(w.getPendingOffsetSyncs()));
            st.set("delayed", syncs(w.getDelayedOffsetSyncs()));
        }
        return r;
    }

    private static org.apache.kafka.clients.consumer.ConsumerRecord<byte[], byte[]> syncRecord(JsonNode s) {
        OffsetSync o = new OffsetSync(new TopicPartition(s.get(0).asText(), s.get(1).asInt()),
            s.get(2).asLong(), s.get(3).asLong());
        return new org.apache.kafka.clients.consumer.ConsumerRecord<>(
            "mm2-offset-syncs.B.internal", 0, 0L, bytes(o.serializeKey()), bytes(o.serializeValue()));
    }

    private static byte[] bytes(ByteBuffer buf) {
        byte[] b = new byte[buf.remaining()];
        buf.duplicate().get(b);
        return b;
    }

    private static ObjectNode offsetSyncStore(JsonNode c) {
        OffsetSyncStore store = new OffsetSyncStore() {
            @Override
            void backingStoreStart() {
                for (JsonNode s : c.get("initial")) {
                    handleRecord(syncRecord(s));
                }
            }
        };
        store.start(c.get("mustReadToEnd").asBoolean());
        for (JsonNode s : c.get("after")) {
            store.handleRecord(syncRecord(s));
        }
        ObjectNode r = JSON.createObjectNode();
        com.fasterxml.jackson.databind.node.ArrayNode translations = r.putArray("translations");
        com.fasterxml.jackson.databind.node.ArrayNode slots = r.putArray("slots");
        for (JsonNode q : c.get("queries")) {
            TopicPartition tp = new TopicPartition(q.get(0).asText(), q.get(1).asInt());
            java.util.OptionalLong t = store.translateDownstream("g", tp, q.get(2).asLong());
            if (t.isPresent()) {
                translations.add(t.getAsLong());
            } else {
                translations.addNull();
            }
            com.fasterxml.jackson.databind.node.ArrayNode kept = slots.addArray();
            try {
                for (int i = 0; i < OffsetSyncStore.SYNCS_PER_PARTITION; i++) {
                    OffsetSync s = store.syncFor(tp, i);
                    kept.addArray().add(s.upstreamOffset()).add(s.downstreamOffset());
                }
            } catch (IllegalArgumentException e) {
                // No syncs for the partition: an empty list.
            }
        }
        return r;
    }

    private static ObjectNode checkpoints(JsonNode c) throws Exception {
        OffsetSyncStore store = new OffsetSyncStore() {
            @Override
            void backingStoreStart() {
                for (JsonNode s : c.get("syncs")) {
                    handleRecord(syncRecord(s));
                }
            }
        };
        store.start(true);
        Map<String, String> props = props(c.get("props"));
        String cls = props.getOrDefault("replication.policy.class",
            DefaultReplicationPolicy.class.getName());
        ReplicationPolicy policy = (ReplicationPolicy) Class.forName(cls).getDeclaredConstructor().newInstance();
        if (policy instanceof org.apache.kafka.common.Configurable) {
            ((org.apache.kafka.common.Configurable) policy).configure(props);
        }
        CheckpointStore checkpointStore = new CheckpointStore(new HashMap<>());
        MirrorCheckpointTask task = new MirrorCheckpointTask(c.get("source").asText(),
            c.get("target").asText(), policy, store, new java.util.HashSet<>(), new HashMap<>(),
            checkpointStore);
        if (c.has("topics")) {
            DefaultTopicFilter filter = new DefaultTopicFilter();
            filter.configure(props(c.get("topics")));
            java.lang.reflect.Field f = MirrorCheckpointTask.class.getDeclaredField("topicFilter");
            f.setAccessible(true);
            f.set(task, filter);
        }
        ObjectNode r = JSON.createObjectNode();
        com.fasterxml.jackson.databind.node.ArrayNode rounds = r.putArray("rounds");
        for (JsonNode round : c.get("rounds")) {
            String group = round.get(0).asText();
            Map<TopicPartition, org.apache.kafka.clients.consumer.OffsetAndMetadata> offsets = new HashMap<>();
            for (JsonNode o : round.get(1)) {
                offsets.put(new TopicPartition(o.get(0).asText(), o.get(1).asInt()),
                    new org.apache.kafka.clients.consumer.OffsetAndMetadata(o.get(2).asLong(), o.get(3).asText()));
            }
            Map<TopicPartition, Checkpoint> emitted = task.checkpointsForGroup(offsets, group);
            checkpointStore.update(group, emitted);
            TreeMap<String, Checkpoint> sorted = new TreeMap<>();
            for (Checkpoint cp : emitted.values()) {
                sorted.put(cp.topicPartition().topic() + "\u0000" + String.format("%011d", cp.topicPartition().partition()), cp);
            }
            com.fasterxml.jackson.databind.node.ArrayNode out = rounds.addArray();
            for (Checkpoint cp : sorted.values()) {
                out.addArray().add(cp.topicPartition().topic()).add(cp.topicPartition().partition())
                    .add(cp.upstreamOffset()).add(cp.downstreamOffset()).add(cp.metadata());
            }
        }
        return r;
    }

    public static void main(String[] args) throws Exception {
        // Anything Apache's classes log to standard output (MirrorMakerConfig sets up plugin
        // loading) goes to standard error; standard output carries only the answers.
        java.io.PrintStream answers = System.out;
        System.setOut(System.err);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        StringBuilder out = new StringBuilder();
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode c = JSON.readTree(line);
            String kind = c.get("kind").asText();
            ObjectNode r = kind.equals("policy") ? policy(c)
                : kind.equals("filter") ? filter(c)
                : kind.equals("mm2") ? mm2(c)
                : kind.equals("names") ? names()
                : kind.equals("offsetSyncs") ? offsetSyncs(c)
                : kind.equals("taskConfigs") ? taskConfigs(c)
                : kind.equals("offsetSyncStore") ? offsetSyncStore(c)
                : kind.equals("checkpoints") ? checkpoints(c)
                : record(c);
            out.append(JSON.writeValueAsString(r)).append('\n');
        }
        answers.print(out);
        answers.flush();
    }
}
