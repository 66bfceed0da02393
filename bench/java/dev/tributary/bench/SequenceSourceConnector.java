package dev.tributary.bench;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.source.SourceConnector;

/**
 * The load of Tributary's scale benchmark for Java Connect workers: every task writes a
 * numbered sequence into one topic at a fixed rate (see {@link SequenceSourceTask}).
 *
 * <p>It gives a Java worker the same records, source partitions and source offsets as
 * Tributary's built-in VerifiableSource gives a Tributary worker, so both runtimes carry the
 * same load. The connector itself does nothing but hand out task settings: each task gets the
 * connector's settings as they are, plus {@code id} = its position 0, 1, … in the list. It
 * declares no settings; the tasks check theirs when they start.
 */
public final class SequenceSourceConnector extends SourceConnector {
    /** The settings given to {@link #start}, copied into every task's settings. */
    private Map<String, String> shared = Map.of();

    @Override
    public String version() {
        return SequenceSourceTask.PLUGIN_VERSION;
    }

    @Override
    public void start(Map<String, String> settings) {
        shared = Map.copyOf(settings);
    }

    @Override
    public Class<? extends Task> taskClass() {
        return SequenceSourceTask.class;
    }

    /** Always {@code maxTasks} task settings, numbered from 0. */
    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        List<Map<String, String>> perTask = new ArrayList<>(maxTasks);
        for (int number = 0; number < maxTasks; number++) {
            Map<String, String> settings = new HashMap<>(shared);
            settings.put(SequenceSourceTask.ID, String.valueOf(number));
            perTask.add(settings);
        }
        return perTask;
    }

    @Override
    public void stop() {
        // Nothing was started.
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef();
    }
}
