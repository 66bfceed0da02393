//! The group error handling (as Kafka's `AbstractCoordinator` does it) against a scripted in-process coordinator (no broker needed):
//! MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID, COORDINATOR_LOAD_IN_PROGRESS
//! and NOT_COORDINATOR on JoinGroup; ILLEGAL_GENERATION / REBALANCE_IN_PROGRESS on SyncGroup;
//! REBALANCE_IN_PROGRESS / UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION on Heartbeat; LeaveGroup.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tributary_group::client::{GroupConfig, GroupError, GroupMember, MemberState, RejoinReason};

#[derive(Default)]
struct Script {
    port: u16,
    /// (error code, member id to return, generation) for successive JoinGroups; once empty,
    /// joins succeed with the requested (or a fresh) member id.
    join: VecDeque<(i16, &'static str, i32)>,
    sync: VecDeque<i16>,
    heartbeat: i16,
    next_generation: i32,
    /// Member ids seen in JoinGroup requests.
    join_member_ids: Vec<String>,
    sync_generations: Vec<i32>,
    heartbeats: Vec<(i32, String)>,
    leaves: Vec<String>,
}

async fn start(script: Script) -> (String, Arc<Mutex<Script>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let state = Arc::new(Mutex::new(Script { port, ..script }));
    let s = state.clone();
    tokio::spawn(async move {
        loop {
            let (sock, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(sock, s.clone()));
        }
    });
    (format!("127.0.0.1:{port}"), state)
}

async fn serve(mut sock: TcpStream, state: Arc<Mutex<Script>>) {
    loop {
        let Ok(size) = sock.read_i32().await else {
            return;
        };
        let mut buf = vec![0u8; size as usize];
        if sock.read_exact(&mut buf).await.is_err() {
            return;
        }
        let mut buf = Bytes::from(buf);
        let key = ApiKey::try_from((&buf[..2]).get_i16()).unwrap();
        let version = (&buf[2..4]).get_i16();
        let header = RequestHeader::decode(&mut buf, key.request_header_version(version)).unwrap();
        let mut body = BytesMut::new();
        respond(key, version, &mut buf, &mut body, &state);
        let mut out = BytesMut::new();
        let mut rh = ResponseHeader::default();
        rh.correlation_id = header.correlation_id;
        rh.encode(&mut out, key.response_header_version(version))
            .unwrap();
        out.put(body);
        let mut frame = BytesMut::new();
        frame.put_i32(out.len() as i32);
        frame.put(out);
        if sock.write_all(&frame).await.is_err() {
            return;
        }
    }
}

fn respond(key: ApiKey, v: i16, req: &mut Bytes, out: &mut BytesMut, state: &Arc<Mutex<Script>>) {
    let mut s = state.lock().unwrap();
    match key {
        ApiKey::ApiVersions => {
            let mut r = ApiVersionsResponse::default();
            for (k, max) in [(18i16, 3i16), (10, 4), (11, 9), (12, 4), (13, 5), (14, 5)] {
                let mut a = ApiVersion::default();
                a.api_key = k;
                a.min_version = 0;
                a.max_version = max;
                r.api_keys.push(a);
            }
            r.encode(out, v).unwrap();
        }
        ApiKey::FindCoordinator => {
            let q = FindCoordinatorRequest::decode(req, v).unwrap();
            let mut r = FindCoordinatorResponse::default();
            let mut c = Coordinator::default();
            c.key = q.coordinator_keys[0].clone();
            c.host = StrBytes::from_static_str("127.0.0.1");
            c.port = s.port as i32;
            r.coordinators.push(c);
            r.encode(out, v).unwrap();
        }
        ApiKey::JoinGroup => {
            let q = JoinGroupRequest::decode(req, v).unwrap();
            assert_eq!(q.protocol_type.as_str(), "connect");
            assert_eq!(q.group_instance_id, None);
            s.join_member_ids.push(q.member_id.to_string());
            let mut r = JoinGroupResponse::default();
            match s.join.pop_front() {
                Some((code, id, generation)) => {
                    r.error_code = code;
                    r.member_id = StrBytes::from_static_str(id);
                    r.generation_id = generation;
                }
                None => {
                    s.next_generation += 1;
                    r.generation_id = s.next_generation;
                    r.member_id = if q.member_id.is_empty() {
                        StrBytes::from_static_str("fresh")
                    } else {
                        q.member_id.clone()
                    };
                }
            }
            if r.error_code == 0 {
                r.protocol_type = Some(StrBytes::from_static_str("connect"));
                r.protocol_name = Some(q.protocols[0].name.clone());
                r.leader = r.member_id.clone();
                let mut m = join_group_response::JoinGroupResponseMember::default();
                m.member_id = r.member_id.clone();
                m.metadata = q.protocols[0].metadata.clone();
                r.members.push(m);
            }
            r.encode(out, v).unwrap();
        }
        ApiKey::SyncGroup => {
            let q = SyncGroupRequest::decode(req, v).unwrap();
            s.sync_generations.push(q.generation_id);
            let mut r = SyncGroupResponse::default();
            r.error_code = s.sync.pop_front().unwrap_or(0);
            if r.error_code == 0 {
                r.protocol_type = q.protocol_type.clone();
                r.protocol_name = q.protocol_name.clone();
                r.assignment = q
                    .assignments
                    .first()
                    .map(|a| a.assignment.clone())
                    .unwrap_or_default();
            }
            r.encode(out, v).unwrap();
        }
        ApiKey::Heartbeat => {
            let q = HeartbeatRequest::decode(req, v).unwrap();
            s.heartbeats
                .push((q.generation_id, q.member_id.to_string()));
            let mut r = HeartbeatResponse::default();
            r.error_code = s.heartbeat;
            r.encode(out, v).unwrap();
        }
        ApiKey::LeaveGroup => {
            let q = LeaveGroupRequest::decode(req, v).unwrap();
            s.leaves
                .extend(q.members.iter().map(|m| m.member_id.to_string()));
            let mut r = LeaveGroupResponse::default();
            let mut m = leave_group_response::MemberResponse::default();
            m.member_id = q.members[0].member_id.clone();
            r.members.push(m);
            r.encode(out, v).unwrap();
        }
        other => panic!("unexpected API {other:?}"),
    }
}

fn config() -> GroupConfig {
    GroupConfig {
        heartbeat_interval: Duration::from_millis(50),
        retry_backoff: Duration::from_millis(5),
        retry_backoff_max: Duration::from_millis(20),
        ..GroupConfig::new("g", "connect-test")
    }
}

fn protocols() -> Vec<(String, Vec<u8>)> {
    vec![
        ("sessioned".into(), vec![0, 2]),
        ("default".into(), vec![0, 0]),
    ]
}

async fn wait_reason(m: &GroupMember) -> RejoinReason {
    let mut rx = m.rejoin_needed();
    let r = tokio::time::timeout(Duration::from_secs(5), rx.wait_for(|r| r.is_some()))
        .await
        .expect("rejoin signal")
        .unwrap()
        .clone();
    r.unwrap()
}

#[tokio::test]
async fn join_error_handling() {
    let (addr, state) = start(Script {
        join: VecDeque::from([
            (79, "m-1", -1), // MEMBER_ID_REQUIRED
            (27, "", -1),    // REBALANCE_IN_PROGRESS: retry with m-1
            (25, "", -1),    // UNKNOWN_MEMBER_ID: reset to ""
            (14, "", -1),    // COORDINATOR_LOAD_IN_PROGRESS: backoff, retry
            (16, "", -1),    // NOT_COORDINATOR: rediscover, retry
            (79, "m-2", -1), // MEMBER_ID_REQUIRED again
        ]),
        next_generation: 4,
        ..Default::default()
    })
    .await;
    let mut m = GroupMember::connect(&addr, config()).await.unwrap();
    let j = m.join(protocols()).await.unwrap();
    assert_eq!(j.join_requests, 7);
    assert_eq!(j.member_id, "m-2");
    assert_eq!(j.generation, 5);
    assert_eq!(j.protocol_name, "sessioned");
    assert!(j.is_leader());
    assert_eq!(
        state.lock().unwrap().join_member_ids,
        ["", "m-1", "m-1", "", "", "", "m-2"]
    );
    assert_eq!(m.state(), MemberState::CompletingRebalance);

    // Fatal error.
    state.lock().unwrap().join.push_back((23, "", -1));
    match m.join(protocols()).await {
        Err(GroupError::Broker { code: 23, .. }) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(m.state(), MemberState::Unjoined);
}

#[tokio::test]
async fn sync_and_heartbeat_error_handling() {
    let (addr, state) = start(Script {
        sync: VecDeque::from([22, 27]),
        ..Default::default()
    })
    .await;
    let mut m = GroupMember::connect(&addr, config()).await.unwrap();
    let j = m.join(protocols()).await.unwrap();
    assert_eq!((j.member_id.as_str(), j.generation), ("fresh", 1));

    // SyncGroup ILLEGAL_GENERATION: generation reset, member id kept.
    match m.sync(vec![("fresh".into(), vec![1])]).await {
        Err(GroupError::RejoinNeeded(RejoinReason::IllegalGeneration)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!((m.generation(), m.member_id().as_str()), (-1, "fresh"));
    assert!(matches!(m.sync(vec![]).await, Err(GroupError::NotJoined)));

    // SyncGroup REBALANCE_IN_PROGRESS: both kept.
    let j = m.join(protocols()).await.unwrap();
    assert_eq!(j.generation, 2);
    match m.sync(vec![]).await {
        Err(GroupError::RejoinNeeded(RejoinReason::RebalanceInProgress)) => {}
        other => panic!("{other:?}"),
    }
    assert_eq!((m.generation(), m.member_id().as_str()), (2, "fresh"));

    // Success; heartbeats flow with the current generation.
    let j = m.join(protocols()).await.unwrap();
    assert_eq!(
        m.sync(vec![(j.member_id.clone(), vec![7, 7])])
            .await
            .unwrap(),
        vec![7, 7]
    );
    assert_eq!(m.state(), MemberState::Stable);
    // Waits for a heartbeat of the current generation (the condition, not a fixed time).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !state
        .lock()
        .unwrap()
        .heartbeats
        .contains(&(3, "fresh".to_string()))
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no heartbeat of generation 3 within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(m.rejoin_needed().borrow().is_none());

    // Heartbeat REBALANCE_IN_PROGRESS while stable → rejoin signal, ids kept.
    state.lock().unwrap().heartbeat = 27;
    assert_eq!(wait_reason(&m).await, RejoinReason::RebalanceInProgress);
    assert_eq!(m.generation(), 3);
    state.lock().unwrap().heartbeat = 0;

    // join clears the signal; heartbeat ILLEGAL_GENERATION resets the generation.
    let j = m.join(protocols()).await.unwrap();
    assert!(m.rejoin_needed().borrow().is_none());
    m.sync(vec![(j.member_id.clone(), vec![1])]).await.unwrap();
    state.lock().unwrap().heartbeat = 22;
    assert_eq!(wait_reason(&m).await, RejoinReason::IllegalGeneration);
    assert_eq!((m.generation(), m.member_id().as_str()), (-1, "fresh"));
    assert_eq!(m.state(), MemberState::Unjoined);
    state.lock().unwrap().heartbeat = 0;

    // Heartbeat UNKNOWN_MEMBER_ID resets the member id too.
    let j = m.join(protocols()).await.unwrap();
    m.sync(vec![(j.member_id.clone(), vec![1])]).await.unwrap();
    state.lock().unwrap().heartbeat = 25;
    assert_eq!(wait_reason(&m).await, RejoinReason::UnknownMemberId);
    assert_eq!((m.generation(), m.member_id().as_str()), (-1, ""));
    state.lock().unwrap().heartbeat = 0;

    // Leave sends the member id and resets.
    let j = m.join(protocols()).await.unwrap();
    m.sync(vec![(j.member_id.clone(), vec![1])]).await.unwrap();
    m.leave("bye").await.unwrap();
    assert_eq!(state.lock().unwrap().leaves, ["fresh"]);
    assert_eq!((m.generation(), m.member_id().as_str()), (-1, ""));
    // A second leave has nothing to send.
    m.leave("again").await.unwrap();
    assert_eq!(state.lock().unwrap().leaves.len(), 1);
}

#[tokio::test]
async fn requested_rejoin_and_connect_failure() {
    let (addr, _state) = start(Script::default()).await;
    let m = GroupMember::connect(&addr, config()).await.unwrap();
    m.request_rejoin("config changed");
    assert_eq!(
        wait_reason(&m).await,
        RejoinReason::Requested("config changed".into())
    );

    let bad = GroupConfig {
        request_timeout: Duration::from_millis(300),
        ..config()
    };
    // Nothing listens on port 1.
    assert!(GroupMember::connect("127.0.0.1:1", bad.clone())
        .await
        .is_err());
    assert!(matches!(
        GroupMember::connect(" , ", bad).await,
        Err(GroupError::InvalidConfig(_))
    ));
}
