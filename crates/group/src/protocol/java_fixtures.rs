//! Bytes produced by the real Java 4.1.1 serializers (`ConnectProtocol`,
//! `IncrementalCooperativeConnectProtocol.metadataRequest/serializeAssignment`, run from the
//! `connect-runtime-4.1.1` jar by a small throwaway generator). Each must decode to the expected
//! values and re-encode byte for byte.

use super::*;

const URL: &str = "http://worker-1.example:8083/";
const LEADER: &str = "connect-worker-1.example:8083-0f3c";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

const META_SESSIONED: &str = "0002001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f000000000000002a0000008b000200000022636f6e6e6563742d776f726b65722d312e6578616d706c653a383038332d30663363001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f000000000000002a00000002000b6f72646572732d73696e6b00000003ffffffff0000000000000003000970672d736f7572636500000001000000010000000000000000";
const META_COMPATIBLE: &str = "0001001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f000000000000002a0000008b000100000022636f6e6e6563742d776f726b65722d312e6578616d706c653a383038332d30663363001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f000000000000002a00000002000b6f72646572732d73696e6b00000003ffffffff0000000000000003000970672d736f7572636500000001000000010000000000000000";
const META_DEFAULT: &str =
    "0000001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f000000000000002a";
const ASSIGNMENT_V1: &str = "000100000022636f6e6e6563742d776f726b65722d312e6578616d706c653a383038332d30663363001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f000000000000002b00000001000970672d736f7572636500000003ffffffff000000000000000200000001000b6f72646572732d73696e6b00000002ffffffff0000000300003039";
const ASSIGNMENT_V2_MISMATCH: &str = "0002000100014c001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f0000000000000063000000000000000000000000";
const ASSIGNMENT_V0: &str = "0000000000014c001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332f00000000000000070000000200016100000002ffffffff0000000000016200000001ffffffff";
const META_EAGER_FRESH: &str =
    "0000001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332fffffffffffffffff";
const META_COMPATIBLE_FRESH: &str =
    "0001001d687474703a2f2f776f726b65722d312e6578616d706c653a383038332fffffffffffffffffffffffff";

fn held() -> Assignment {
    Assignment {
        leader: LEADER.into(),
        leader_url: URL.into(),
        config_offset: 42,
        connectors: vec!["orders-sink".into()],
        tasks: vec![
            ConnectorTaskId::new("orders-sink", 0),
            ConnectorTaskId::new("orders-sink", 3),
            ConnectorTaskId::new("pg-source", 1),
        ],
        ..Default::default()
    }
}

#[test]
fn java_sessioned_worker_protocol_list() {
    let m = WorkerMetadata {
        allocation: Some(held()),
        ..WorkerMetadata::new(URL, 42)
    };
    let ours = ConnectProtocol::Sessioned.join_protocols(&m).unwrap();
    let java = [
        ("sessioned", META_SESSIONED),
        ("compatible", META_COMPATIBLE),
        ("default", META_DEFAULT),
    ];
    assert_eq!(ours.len(), java.len());
    for ((name, bytes), (jname, jhex)) in ours.iter().zip(java) {
        assert_eq!(name, jname);
        assert_eq!(*bytes, unhex(jhex), "entry {name}");
        let back = WorkerMetadata::decode(&unhex(jhex)).unwrap();
        if *name == "default" {
            assert_eq!(back, WorkerMetadata::new(URL, 42));
        } else {
            assert_eq!(back, m);
        }
    }
}

#[test]
fn java_fresh_worker_metadata() {
    let m = WorkerMetadata::new(URL, -1);
    assert_eq!(
        m.encode(ConnectProtocol::Eager).unwrap(),
        unhex(META_EAGER_FRESH)
    );
    assert_eq!(
        m.encode(ConnectProtocol::Compatible).unwrap(),
        unhex(META_COMPATIBLE_FRESH)
    );
    assert_eq!(
        WorkerMetadata::decode(&unhex(META_COMPATIBLE_FRESH)).unwrap(),
        m
    );
}

#[test]
fn java_v1_delta_assignment() {
    let bytes = unhex(ASSIGNMENT_V1);
    let (v, a) = Assignment::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 1);
    let expected = Assignment {
        leader: LEADER.into(),
        leader_url: URL.into(),
        config_offset: 43,
        connectors: vec!["pg-source".into()],
        tasks: vec![
            ConnectorTaskId::new("pg-source", 0),
            ConnectorTaskId::new("pg-source", 2),
        ],
        revoked_connectors: vec!["orders-sink".into()],
        revoked_tasks: vec![ConnectorTaskId::new("orders-sink", 3)],
        delay: 12345,
        ..Default::default()
    };
    assert_eq!(a, expected);
    assert_eq!(a.encode(ConnectProtocol::Compatible).unwrap(), bytes);
}

#[test]
fn java_v2_config_mismatch_and_v0_assignment() {
    let bytes = unhex(ASSIGNMENT_V2_MISMATCH);
    let a = Assignment::decode(&bytes).unwrap();
    assert_eq!(a, Assignment::config_mismatch("L", URL, 99));
    assert_eq!(a.encode(ConnectProtocol::Sessioned).unwrap(), bytes);

    let bytes = unhex(ASSIGNMENT_V0);
    let (v, a) = Assignment::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 0);
    assert_eq!(a.connectors, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(a.tasks, vec![ConnectorTaskId::new("a", 0)]);
    assert_eq!(a.encode(ConnectProtocol::Eager).unwrap(), bytes);
}
