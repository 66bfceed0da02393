//! Integration tests against a real Kafka broker (Apache Kafka 4.1 in CI / dev).
//!
//! Gated on `KAFKA_BOOTSTRAP` (e.g. `127.0.0.1:9092`, through `tributary_testkit::kafka`):
//! without it every test prints a note and passes, except under CI, where it fails. Each test
//! uses a fresh group id.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tributary_group::assignor::{perform_assignment, ConfigSnapshot, EagerAssignor, RoundInput};
use tributary_group::client::{
    GroupConfig, GroupError, GroupMember, JoinResult, MemberState, RejoinReason,
};
use tributary_group::{Assignment, ConnectProtocol, WorkerMetadata};

const WAIT: Duration = Duration::from_secs(60);

fn bootstrap() -> Option<String> {
    tributary_testkit::kafka()
}

fn unique_group(prefix: &str) -> String {
    tributary_testkit::unique(&format!("tributary-test-{prefix}"))
}

fn config(group: &str, client: &str) -> GroupConfig {
    GroupConfig {
        session_timeout: Duration::from_secs(10),
        rebalance_timeout: Duration::from_secs(15),
        heartbeat_interval: Duration::from_millis(300),
        request_timeout: Duration::from_secs(30),
        ..GroupConfig::new(group, client)
    }
}

/// The config snapshot every test leader assigns from.
fn snapshot() -> ConfigSnapshot {
    ConfigSnapshot {
        offset: 5,
        connectors: BTreeMap::from([("c1".to_string(), 2), ("c2".to_string(), 1)]),
    }
}

fn all_jobs() -> BTreeSet<String> {
    ["c1", "c2", "c1-0", "c1-1", "c2-0"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// What a test worker reports after each completed rebalance.
#[derive(Debug, Clone)]
struct Event {
    name: String,
    generation: i32,
    member_id: String,
    leader_id: String,
    protocol: String,
    is_leader: bool,
    /// Members seen by the leader (0 for followers).
    members: usize,
    assignment: Assignment,
    /// Why the previous round ended (None for the first round).
    rejoin_reason: Option<RejoinReason>,
}

enum Cmd {
    Leave,
    Stop,
}

/// A minimal Connect-like worker loop: join+sync, decode the assignment, report it, wait for a
/// rejoin signal, repeat. The leader runs the eager assignor and encodes at the selected
/// protocol's version.
fn spawn_worker(
    bootstrap: String,
    group: String,
    name: &str,
    setting: ConnectProtocol,
    events: mpsc::UnboundedSender<Event>,
) -> (oneshot::Sender<Cmd>, JoinHandle<GroupMember>) {
    let name = name.to_string();
    let (cmd_tx, mut cmd_rx) = oneshot::channel::<Cmd>();
    let handle = tokio::spawn(async move {
        let mut member =
            GroupMember::connect(&bootstrap, config(&group, &format!("connect-{name}")))
                .await
                .expect("connect");
        let url = format!("http://{name}:8083/");
        let mut reason = None;
        loop {
            let meta = WorkerMetadata::new(url.clone(), 5);
            let (joined, bytes): (JoinResult, Vec<u8>) = tokio::select! {
                r = member.join_and_sync(
                    || setting.join_protocols(&meta).unwrap(),
                    leader_assign,
                ) => r.expect("join_and_sync"),
                cmd = &mut cmd_rx => {
                    if let Ok(Cmd::Leave) = cmd { member.leave("test leave").await.expect("leave"); }
                    return member;
                }
            };
            assert_eq!(member.state(), MemberState::Stable);
            let (version, assignment) =
                Assignment::decode_versioned(&bytes).expect("decode assignment");
            let protocol = ConnectProtocol::from_wire_name(&joined.protocol_name).unwrap();
            assert_eq!(
                version,
                protocol.version(),
                "assignment version matches selected protocol"
            );
            events
                .send(Event {
                    name: name.clone(),
                    generation: joined.generation,
                    member_id: joined.member_id.clone(),
                    leader_id: joined.leader_id.clone(),
                    protocol: joined.protocol_name.clone(),
                    is_leader: joined.is_leader(),
                    members: joined.members.len(),
                    assignment,
                    rejoin_reason: reason.take(),
                })
                .ok();
            let mut rejoin = member.rejoin_needed();
            tokio::select! {
                r = async { rejoin.wait_for(|r| r.is_some()).await.ok().and_then(|r| r.clone()) } => {
                    reason = r;
                }
                cmd = &mut cmd_rx => {
                    if let Ok(Cmd::Leave) = cmd { member.leave("test leave").await.expect("leave"); }
                    return member;
                }
            }
        }
    });
    (cmd_tx, handle)
}

fn leader_assign(jr: &JoinResult) -> Result<Vec<(String, Vec<u8>)>, GroupError> {
    let protocol = ConnectProtocol::from_wire_name(&jr.protocol_name).unwrap();
    let members: Vec<(String, WorkerMetadata)> = jr
        .members
        .iter()
        .map(|(id, bytes)| {
            (
                id.clone(),
                WorkerMetadata::decode(bytes).expect("member metadata decodes"),
            )
        })
        .collect();
    let input = RoundInput {
        leader_id: &jr.member_id,
        members: &members,
        leader_snapshot: snapshot(),
        last_completed_generation: -1,
        generation: jr.generation,
        now_ms: 0,
    };
    let out = perform_assignment(&mut EagerAssignor, input, || unreachable!());
    assert_eq!(out.len(), jr.members.len(), "one assignment per member");
    Ok(out
        .into_iter()
        .map(|(id, a)| (id, a.encode(protocol).unwrap()))
        .collect())
}

/// Collects events until, for some generation, all `names` have reported it; returns those
/// events keyed by worker name.
async fn settle(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    names: &[&str],
) -> (BTreeMap<String, Event>, Vec<Event>) {
    let mut by_gen: BTreeMap<i32, BTreeMap<String, Event>> = BTreeMap::new();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let ev = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .unwrap_or_else(|_| {
                panic!("group did not settle on {names:?}; events so far: {seen:#?}")
            })
            .expect("event channel open");
        seen.push(ev.clone());
        let round = by_gen.entry(ev.generation).or_default();
        round.insert(ev.name.clone(), ev.clone());
        if names.iter().all(|n| round.contains_key(*n)) && round.len() == names.len() {
            let leader_members = round.values().find(|e| e.is_leader).map(|e| e.members);
            if leader_members == Some(names.len()) {
                return (round.clone(), seen);
            }
        }
    }
}

fn check_round(round: &BTreeMap<String, Event>) {
    let leaders: Vec<_> = round.values().filter(|e| e.is_leader).collect();
    assert_eq!(leaders.len(), 1, "exactly one leader: {round:#?}");
    let leader = leaders[0];
    let mut jobs = Vec::new();
    for e in round.values() {
        assert_eq!(e.leader_id, leader.member_id);
        assert_eq!(e.assignment.leader, leader.member_id);
        assert_eq!(
            e.assignment.leader_url,
            format!("http://{}:8083/", leader.name)
        );
        assert_eq!(e.assignment.config_offset, 5);
        assert!(!e.assignment.failed());
        jobs.extend(e.assignment.connectors.iter().cloned());
        jobs.extend(e.assignment.tasks.iter().map(|t| t.to_string()));
    }
    let set: BTreeSet<String> = jobs.iter().cloned().collect();
    assert_eq!(set.len(), jobs.len(), "no job assigned twice");
    assert_eq!(set, all_jobs(), "every job assigned");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_join_and_sync() {
    let Some(bootstrap) = bootstrap() else { return };
    let group = unique_group("two");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (c1, h1) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w1",
        ConnectProtocol::Sessioned,
        tx.clone(),
    );
    let (c2, h2) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w2",
        ConnectProtocol::Sessioned,
        tx.clone(),
    );
    let (round, _) = settle(&mut rx, &["w1", "w2"]).await;
    check_round(&round);
    for e in round.values() {
        assert_eq!(e.protocol, "sessioned");
        assert!(
            e.member_id.starts_with(&format!("connect-{}-", e.name)),
            "{}",
            e.member_id
        );
    }
    c1.send(Cmd::Leave).ok();
    c2.send(Cmd::Leave).ok();
    h1.await.unwrap();
    h2.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn third_member_triggers_heartbeat_rebalance_and_leave_rebalances() {
    let Some(bootstrap) = bootstrap() else { return };
    let group = unique_group("three");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (c1, h1) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w1",
        ConnectProtocol::Sessioned,
        tx.clone(),
    );
    let (c2, h2) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w2",
        ConnectProtocol::Sessioned,
        tx.clone(),
    );
    let (round2, _) = settle(&mut rx, &["w1", "w2"]).await;
    check_round(&round2);
    let gen2 = round2["w1"].generation;

    // A third member joins: the two stable members learn about it from Heartbeat
    // REBALANCE_IN_PROGRESS.
    let (c3, h3) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w3",
        ConnectProtocol::Sessioned,
        tx.clone(),
    );
    let (round3, seen) = settle(&mut rx, &["w1", "w2", "w3"]).await;
    check_round(&round3);
    assert!(round3["w1"].generation > gen2);
    for name in ["w1", "w2"] {
        let first_after = seen
            .iter()
            .find(|e| e.name == name && e.generation > gen2)
            .expect("a later round");
        assert_eq!(
            first_after.rejoin_reason,
            Some(RejoinReason::RebalanceInProgress),
            "{name} rejoined because of the heartbeat"
        );
    }
    // Three members share five jobs: no one gets more than two.
    for e in round3.values() {
        assert!(e.assignment.connectors.len() + e.assignment.tasks.len() <= 2);
    }

    // The leader (or any member) leaves: the others rebalance down to two members.
    let leaver = round3.values().find(|e| e.is_leader).unwrap().name.clone();
    let (stay, handles): (Vec<&str>, _) = {
        let mut cmds = BTreeMap::from([("w1", c1), ("w2", c2), ("w3", c3)]);
        cmds.remove(leaver.as_str()).unwrap().send(Cmd::Leave).ok();
        let stay: Vec<&str> = ["w1", "w2", "w3"]
            .into_iter()
            .filter(|n| *n != leaver)
            .collect();
        (stay, cmds)
    };
    let (round4, _) = settle(&mut rx, &stay).await;
    check_round(&round4);
    assert!(round4
        .values()
        .all(|e| e.generation > round3["w1"].generation));
    for e in round4.values() {
        assert_eq!(e.rejoin_reason, Some(RejoinReason::RebalanceInProgress));
        assert_ne!(e.member_id, round3[&leaver].member_id);
    }
    for (_, c) in handles {
        c.send(Cmd::Leave).ok();
    }
    for h in [h1, h2, h3] {
        h.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_id_required_round_trip_and_leave_resets_id() {
    let Some(bootstrap) = bootstrap() else { return };
    let group = unique_group("mid");
    let mut m = GroupMember::connect(&bootstrap, config(&group, "connect-solo"))
        .await
        .unwrap();
    assert!(matches!(m.sync(vec![]).await, Err(GroupError::NotJoined)));
    let protocols = ConnectProtocol::Sessioned
        .join_protocols(&WorkerMetadata::new("http://solo:8083/", -1))
        .unwrap();
    let j = tokio::time::timeout(WAIT, m.join(protocols.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        j.join_requests, 2,
        "first join: MEMBER_ID_REQUIRED then the real join"
    );
    assert!(j.member_id.starts_with("connect-solo-"));
    assert!(j.is_leader());
    assert_eq!(j.members.len(), 1);
    assert_eq!(j.protocol_name, "sessioned");
    let meta = WorkerMetadata::decode(&j.members[0].1).unwrap();
    assert_eq!(meta.url, "http://solo:8083/");
    assert_eq!(meta.config_offset, -1);
    // Leader must send an assignment for every member.
    let a = Assignment {
        leader: j.member_id.clone(),
        leader_url: "http://solo:8083/".into(),
        config_offset: -1,
        ..Default::default()
    };
    let bytes = m
        .sync(vec![(
            j.member_id.clone(),
            a.encode(ConnectProtocol::Sessioned).unwrap(),
        )])
        .await
        .unwrap();
    assert_eq!(Assignment::decode(&bytes).unwrap(), a);
    assert_eq!(m.generation(), j.generation);

    // Rejoining with a known member id takes a single request and keeps the id.
    let j2 = tokio::time::timeout(WAIT, m.join(protocols.clone()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(j2.join_requests, 1);
    assert_eq!(j2.member_id, j.member_id);
    assert!(j2.generation > j.generation);
    m.sync(vec![(
        j2.member_id.clone(),
        a.encode(ConnectProtocol::Sessioned).unwrap(),
    )])
    .await
    .unwrap();

    // Leave resets the id; the next join gets a new one through MEMBER_ID_REQUIRED again.
    m.leave("test").await.unwrap();
    assert_eq!(m.member_id(), "");
    assert_eq!(m.generation(), -1);
    assert_eq!(m.state(), MemberState::Unjoined);
    let j3 = tokio::time::timeout(WAIT, m.join(protocols))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(j3.join_requests, 2);
    assert_ne!(j3.member_id, j.member_id);
    m.close("done").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_protocol_settings_select_the_common_protocol() {
    let Some(bootstrap) = bootstrap() else { return };
    let group = unique_group("mixed");
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (c1, h1) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w1",
        ConnectProtocol::Static,
        tx.clone(),
    );
    let (c2, h2) = spawn_worker(
        bootstrap.clone(),
        group.clone(),
        "w2",
        ConnectProtocol::Eager,
        tx.clone(),
    );
    let (round, _) = settle(&mut rx, &["w1", "w2"]).await;
    check_round(&round);
    assert!(
        round.values().all(|e| e.protocol == "default"),
        "{round:#?}"
    );
    c1.send(Cmd::Stop).ok();
    c2.send(Cmd::Stop).ok();
    let mut m1 = h1.await.unwrap();
    let mut m2 = h2.await.unwrap();
    m1.leave("done").await.unwrap();
    m2.leave("done").await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inconsistent_protocol_is_fatal() {
    let Some(bootstrap) = bootstrap() else { return };
    let group = unique_group("inconsistent");
    let mut a = GroupMember::connect(&bootstrap, config(&group, "connect-a"))
        .await
        .unwrap();
    let ja = a
        .join(vec![(
            "sessioned".into(),
            WorkerMetadata::new("http://a/", 0)
                .encode(ConnectProtocol::Sessioned)
                .unwrap(),
        )])
        .await
        .unwrap();
    let mut b = GroupMember::connect(&bootstrap, config(&group, "connect-b"))
        .await
        .unwrap();
    let err = tokio::time::timeout(WAIT, b.join(vec![("something-else".into(), vec![0, 0])]))
        .await
        .unwrap()
        .unwrap_err();
    match err {
        GroupError::Broker {
            api: "JoinGroup",
            code: 23,
            ..
        } => {}
        other => panic!("expected INCONSISTENT_GROUP_PROTOCOL, got {other:?}"),
    }
    assert_eq!(b.state(), MemberState::Unjoined);
    // `a` only completes its round before closing; whether the broker still accepts that
    // sync is not what this test checks.
    a.sync(vec![(
        ja.member_id.clone(),
        Assignment::default()
            .encode(ConnectProtocol::Sessioned)
            .unwrap(),
    )])
    .await
    .ok();
    a.close("done").await;
    b.close("done").await;
}
