/*
 * RemoteClusterUtilsProbe: what Apache Kafka's MirrorMaker client (connect-mirror-client, from
 * Maven Central) reads from a cluster's checkpoints, for crates/cli/tests/hosted/mirror_native.rs,
 * which checks that Java's tools read the checkpoints Tributary's native
 * MirrorCheckpointConnector writes.
 *
 * Usage: RemoteClusterUtilsProbe <bootstrap> <remoteClusterAlias> <group>
 * Prints, one per line:
 *   checkpointTopic <topic>                           (RemoteClusterUtils.checkpointTopics)
 *   translated <topic> <partition> <offset> <metadata> (RemoteClusterUtils.translateOffsets),
 * sorted, and exits 0; an exception is printed and exits 1.
 */

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

public class RemoteClusterUtilsProbe {
    public static void main(String[] args) throws Exception {
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        List<String> lines = new ArrayList<>();
        try {
            for (String topic : RemoteClusterUtils.checkpointTopics(props)) {
                lines.add("checkpointTopic " + topic);
            }
            Map<TopicPartition, OffsetAndMetadata> translated =
                RemoteClusterUtils.translateOffsets(props, args[1], args[2], Duration.ofSeconds(30));
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : translated.entrySet()) {
                lines.add("translated " + e.getKey().topic() + " " + e.getKey().partition() + " "
                    + e.getValue().offset() + " " + e.getValue().metadata());
            }
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
        Collections.sort(lines);
        for (String line : lines) {
            System.out.println(line);
        }
    }
}
