//! `tributary mirror-maker mm2.properties` (MirrorMaker 2's dedicated mode, issue #44) on two
//! real brokers: the test broker and a second one started with `scripts/kafka`. The file is
//! Apache's `config/connect-mirror-maker.properties` with the hosts filled in (both flows on,
//! replication factors 1) and shorter intervals; the native connectors run, no JVM.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::*;

/// Apache's example file for clusters `a` (bootstrap `a_servers`) and `b`, replicating the
/// topics matching `topics` both ways, with `extra` lines.
fn example_file(
    dir: &Path,
    name: &str,
    (a, a_servers): (&str, &str),
    (b, b_servers): (&str, &str),
    topics: &str,
    extra: &str,
) -> PathBuf {
    let text = format!(
        "# Apache Kafka's config/connect-mirror-maker.properties, hosts filled in\n\
         clusters = {a}, {b}\n\
         {a}.bootstrap.servers = {a_servers}\n\
         {b}.bootstrap.servers = {b_servers}\n\
         {a}->{b}.enabled = true\n\
         {a}->{b}.topics = {topics}\n\
         {b}->{a}.enabled = true\n\
         {b}->{a}.topics = {topics}\n\
         replication.factor=1\n\
         checkpoints.topic.replication.factor=1\n\
         heartbeats.topic.replication.factor=1\n\
         offset-syncs.topic.replication.factor=1\n\
         offset.storage.replication.factor=1\n\
         status.storage.replication.factor=1\n\
         config.storage.replication.factor=1\n\
         # Shorter than the defaults, for the test\n\
         refresh.topics.interval.seconds=1\n\
         refresh.groups.interval.seconds=1\n\
         emit.checkpoints.interval.seconds=1\n\
         sync.topic.acls.enabled=false\n\
         {a}.offset.flush.interval.ms=1000\n\
         {b}.offset.flush.interval.ms=1000\n\
         {extra}\n"
    );
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// The records of every partition of `topic` on `bootstrap` once there are `n` in all.
fn mirrored(bootstrap: &str, topic: &str, partitions: i32, n: usize) -> Vec<Vec<Rec>> {
    wait_for(
        &format!("{n} records in {topic}"),
        Duration::from_secs(120),
        || {
            let got: Vec<Vec<Rec>> = (0..partitions)
                .map(|p| read_partition_records(bootstrap, topic, p))
                .collect();
            (got.iter().map(Vec::len).sum::<usize>() >= n).then_some(got)
        },
    )
}

/// Apache's example file, run as it is: both flows get a herder, each writes its three
/// connectors' configs once it leads its group, and the flow replicates records (headers,
/// keyless records and tombstones among them) into `<source>.<topic>`, writes heartbeats
/// both ways and checkpoints a consumer group. Stopped and started again, it resumes where it
/// stopped: nothing replicated twice, nothing skipped.
#[test]
fn dedicated_mode_runs_apaches_example_file() {
    let Some(b_servers) = kafka() else { return };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let a_servers = second.bootstrap();
    let tag = unique("mm").replace('-', "_");
    let (a, b) = (format!("a{tag}"), format!("b{tag}"));
    let topic = format!("{tag}.orders");
    create_topic(&a_servers, &topic, 2);
    produce_partitions(&a_servers, &topic, 2, 100);
    let file = example_file(
        dir.path(),
        "mm2.properties",
        (&a, &a_servers),
        (&b, &b_servers),
        &format!("{tag}.*"),
        "",
    );
    let mut mm = MirrorMakerProcess::start(dir.path(), &file, &[]);
    let remote = format!("{a}.{topic}");
    let source_records = |n: usize| -> Vec<Vec<Rec>> {
        (0..2)
            .map(|p| read_partition_records(&a_servers, &topic, p))
            .inspect(|r| assert_eq!(r.len(), n))
            .collect()
    };
    assert_eq!(
        mirrored(&b_servers, &remote, 2, 200),
        source_records(100),
        "every partition's records, in order"
    );
    // Heartbeats both ways: each flow's heartbeat connector writes into its target.
    for (servers, source, target) in [(&b_servers, &a, &b), (&a_servers, &b, &a)] {
        wait_for(
            &format!("a heartbeat {source}->{target}"),
            Duration::from_secs(60),
            || {
                read_records(servers, "heartbeats")
                    .into_iter()
                    .filter_map(|r| {
                        tributary_mirror::records::Heartbeat::decode(
                            r.key.as_deref()?,
                            r.value.as_deref()?,
                        )
                        .ok()
                    })
                    .find(|h| {
                        &h.source_cluster_alias == source && &h.target_cluster_alias == target
                    })
            },
        );
    }
    // A group that consumed on A is checkpointed on B.
    let group = format!("{tag}-group");
    commit_group(&a_servers, &group, &topic, &[(0, 100, "meta"), (1, 40, "")]);
    let checkpoints = format!("{a}.checkpoints.internal");
    let checkpoint = wait_for(
        &format!("a checkpoint of {group} in {checkpoints}"),
        Duration::from_secs(120),
        || {
            read_records(&b_servers, &checkpoints)
                .into_iter()
                .filter_map(|r| {
                    tributary_mirror::records::Checkpoint::decode(
                        r.key.as_deref()?,
                        r.value.as_deref()?,
                    )
                    .ok()
                })
                .find(|c| c.group == group && c.partition == 0)
        },
    );
    assert_eq!(checkpoint.topic, remote);
    assert_eq!(
        (checkpoint.upstream_offset, checkpoint.metadata.as_str()),
        (100, "meta")
    );
    assert!(checkpoint.downstream_offset <= 100, "{checkpoint:?}");
    assert!(
        mm.output().contains("connector configured"),
        "the leader wrote the connectors' configs:\n{}",
        mm.output()
    );

    // Stopped, records produced meanwhile, started again: each once.
    assert!(mm.terminate().success(), "{}", mm.output());
    produce_partitions(&a_servers, &topic, 2, 30);
    let mm = MirrorMakerProcess::start(dir.path(), &file, &[]);
    assert_eq!(
        mirrored(&b_servers, &remote, 2, 260),
        source_records(130),
        "resumed with nothing twice and nothing skipped:\n{}",
        mm.output()
    );
    assert!(
        mm.output()
            .contains("configuration for MirrorSourceConnector is already up to date"),
        "{}",
        mm.output()
    );
}

/// A file MirrorMaker refuses stops the process at once, naming the file and the problem.
#[test]
fn a_file_without_flows_is_refused_naming_it() {
    let dir = test_dir();
    let file = dir.path().join("bad.properties");
    std::fs::write(&file, "A.bootstrap.servers = a:9092\n").unwrap();
    let mut mm = MirrorMakerProcess::start(dir.path(), &file, &[]);
    let status = wait_for("the process to exit", Duration::from_secs(30), || {
        mm.child.try_wait().unwrap()
    });
    assert!(!status.success());
    let out = mm.output();
    assert!(
        out.contains("bad.properties")
            && out.contains("Missing required configuration \"clusters\""),
        "{out}"
    );
    std::fs::write(
        &file,
        "clusters = A, B\nA.bootstrap.servers = a:9092\nB.bootstrap.servers = b:9092\nemit.heartbeats.enabled = false\n",
    )
    .unwrap();
    let mut mm = MirrorMakerProcess::start(dir.path(), &file, &["--clusters", "A"]);
    let status = wait_for("the process to exit", Duration::from_secs(30), || {
        mm.child.try_wait().unwrap()
    });
    assert!(!status.success());
    assert!(
        mm.output().contains("No source->target replication flows."),
        "{}",
        mm.output()
    );
}

/// Two processes run the same flow with KIP-710's internal REST server: the second joins the
/// flow's group and takes a share of its connectors and tasks, a follower's new task
/// configurations (a topic created on the source) reach the leader through the leader's
/// internal endpoint under the flow's namespace, and after the first process is killed
/// (SIGKILL) the second runs everything: no record is missing on the target, and the
/// duplicates (records replicated again after the crash) are counted.
#[test]
fn two_processes_share_a_flow_over_the_internal_rest() {
    let Some(b_servers) = kafka() else { return };
    let dir = test_dir();
    let Some(second) = SecondBroker::start(dir.path()) else {
        return;
    };
    let a_servers = second.bootstrap();
    let tag = unique("mm").replace('-', "_");
    let (a, b) = (format!("a{tag}"), format!("b{tag}"));
    let topic = format!("{tag}.orders");
    create_topic(&a_servers, &topic, 4);
    produce_partitions(&a_servers, &topic, 4, 50);
    let file = |name: &str, port: u16| {
        example_file(
            dir.path(),
            name,
            (&a, &a_servers),
            (&b, &b_servers),
            &format!("{tag}.*"),
            &format!(
                "dedicated.mode.enable.internal.rest = true\n\
                 listeners = http://127.0.0.1:{port}\n\
                 tasks.max = 4\n\
                 {b}.scheduled.rebalance.max.delay.ms = 3000\n"
            ),
        )
    };
    let port = faults::free_ports(2);
    let (one, two) = (
        file("one.properties", port),
        file("two.properties", port + 1),
    );
    let clusters = ["--clusters", b.as_str()];
    let mut first = MirrorMakerProcess::start(dir.path(), &one, &clusters);
    let remote = format!("{a}.{topic}");
    mirrored(&b_servers, &remote, 4, 200);
    let second_process = MirrorMakerProcess::start(dir.path(), &two, &clusters);
    // The second process gets a share: the assignment moves the source connector (the
    // first of the leader's three) and half its tasks there.
    wait_for(
        "the second process to run the source connector",
        Duration::from_secs(120),
        || {
            second_process
                .output()
                .lines()
                .any(|l| l.contains("joined the group") && l.contains("\"MirrorSourceConnector\""))
                .then_some(())
        },
    );
    // New task configurations: whichever process runs the source connector computes them,
    // and a follower hands them to the leader over the internal REST server.
    let late = format!("{tag}.late");
    create_topic(&a_servers, &late, 2);
    produce_partitions(&a_servers, &late, 2, 20);
    let late_remote = format!("{a}.{late}");
    mirrored(&b_servers, &late_remote, 2, 40);
    let forwarded = format!(
        "{}/connectors/MirrorSourceConnector/tasks",
        tributary_runtime::peer::namespace_path(&[a.clone(), b.clone()])
    );
    assert!(
        second_process
            .output()
            .lines()
            .any(|l| l.contains("task configs handed to the leader") && l.contains(&forwarded)),
        "the follower handed its task configs to the leader's internal endpoint {forwarded}:\n{}",
        second_process.output()
    );

    // The first process dies; the second takes over its work.
    first.kill();
    produce_partitions(&a_servers, &topic, 4, 25);
    let expected: Vec<Vec<Rec>> = (0..4)
        .map(|p| read_partition_records(&a_servers, &topic, p))
        .collect();
    let got = mirrored(&b_servers, &remote, 4, 300);
    let mut duplicates = 0;
    for (p, (want, have)) in expected.iter().zip(&got).enumerate() {
        // At least once: every source record, in order, possibly some twice after the crash.
        let mut next = 0;
        for r in have {
            if next < want.len() && *r == want[next] {
                next += 1;
            } else {
                duplicates += 1;
            }
        }
        assert_eq!(
            next,
            want.len(),
            "partition {p}: a record is missing on the target\n{}",
            second_process.output()
        );
    }
    eprintln!("duplicates after the crash: {duplicates}");
}
