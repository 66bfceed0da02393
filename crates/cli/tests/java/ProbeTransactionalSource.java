package io.tributary.probe;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.Task;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.TransactionContext;

/**
 * A Java source connector for Tributary's Java plugin tests (crates/cli/tests/hosted/java_plugins.rs)
 * that defines its own transactions (KIP-618): its one task emits seqnos 0, 1, 2, … (value the
 * seqno's text, source partition {"task": 0}, offset {"seqno": n}, resuming after the stored
 * one) to {@code topic} and ends a transaction at every Fibonacci seqno (1, 2, 3, 5, 8, …),
 * committing when it is odd and aborting when it is even: by naming the record for the 1st,
 * 3rd, 5th… boundary, by asking for the batch (which ends at the boundary) for the others.
 * It can define its boundaries only when {@code define.transactions=fibonacci}.
 */
public class ProbeTransactionalSource extends SourceConnector {
    private Map<String, String> props;

    @Override
    public String version() {
        return "probe-tx-1";
    }

    @Override
    public void start(Map<String, String> props) {
        this.props = props;
    }

    @Override
    public Class<? extends Task> taskClass() {
        return TxTask.class;
    }

    @Override
    public List<Map<String, String>> taskConfigs(int maxTasks) {
        return List.of(props);
    }

    @Override
    public void stop() {
    }

    @Override
    public ConfigDef config() {
        return new ConfigDef()
            .define("topic", ConfigDef.Type.STRING, ConfigDef.Importance.HIGH, "Topic to write to.")
            .define("define.transactions", ConfigDef.Type.STRING, "", ConfigDef.Importance.LOW,
                "fibonacci: the task ends its own transactions.");
    }

    @Override
    public ExactlyOnceSupport exactlyOnceSupport(Map<String, String> config) {
        return ExactlyOnceSupport.SUPPORTED;
    }

    @Override
    public ConnectorTransactionBoundaries canDefineTransactionBoundaries(Map<String, String> config) {
        return "fibonacci".equals(config.get("define.transactions"))
            ? ConnectorTransactionBoundaries.SUPPORTED
            : ConnectorTransactionBoundaries.UNSUPPORTED;
    }

    /** The task. */
    public static class TxTask extends SourceTask {
        private static final Map<String, Object> PARTITION = Map.of("task", 0);
        private String topic;
        private long next;
        private int boundaries;

        @Override
        public String version() {
            return "probe-tx-1";
        }

        @Override
        public void start(Map<String, String> props) {
            topic = props.get("topic");
            Map<String, Object> offset = context.offsetStorageReader().offset(PARTITION);
            next = offset == null ? 0 : ((Number) offset.get("seqno")).longValue() + 1;
            // The count of boundaries before `next`, so the alternation goes on after a restart.
            for (long f : fibonacci(next)) {
                if (f < next) {
                    boundaries++;
                }
            }
        }

        private static List<Long> fibonacci(long upTo) {
            List<Long> out = new ArrayList<>();
            long a = 1, b = 2;
            out.add(1L);
            while (b <= upTo + 1) {
                out.add(b);
                long c = a + b;
                a = b;
                b = c;
            }
            return out;
        }

        private static boolean isFibonacci(long n) {
            return n >= 1 && fibonacci(n).contains(n);
        }

        @Override
        public List<SourceRecord> poll() throws InterruptedException {
            Thread.sleep(5);
            TransactionContext tx = context.transactionContext();
            if (tx == null) {
                throw new IllegalStateException("no TransactionContext under transaction.boundary=connector");
            }
            List<SourceRecord> batch = new ArrayList<>();
            while (batch.size() < 10) {
                long s = next++;
                SourceRecord r = new SourceRecord(PARTITION, Map.of("seqno", s), topic, 0, null, null,
                    Schema.STRING_SCHEMA, Long.toString(s));
                batch.add(r);
                if (isFibonacci(s)) {
                    boolean byRecord = boundaries++ % 2 == 0;
                    boolean commit = s % 2 == 1;
                    if (byRecord && commit) {
                        tx.commitTransaction(r);
                    } else if (byRecord) {
                        tx.abortTransaction(r);
                    } else if (commit) {
                        tx.commitTransaction();
                    } else {
                        tx.abortTransaction();
                    }
                    break;
                }
            }
            return batch;
        }

        @Override
        public void stop() {
        }
    }
}
