//! Worked examples of the member metadata and assignment encodings (`ConnectProtocol`, `IncrementalCooperativeConnectProtocol`) (decode, compare, re-encode byte for byte), the V3
//! layout, tolerance rules and property-based round trips.

use super::*;
use proptest::prelude::*;

/// Parses a whitespace/`|`-separated hex dump; `<URL>` expands to the 15 URL bytes.
fn hex(s: &str) -> Vec<u8> {
    let s = s.replace("<URL>", "68 74 74 70 3a 2f 2f 77 31 3a 38 30 38 33 2f");
    s.split(|c: char| c.is_whitespace() || c == '|')
        .filter(|t| !t.is_empty())
        .map(|t| u8::from_str_radix(t, 16).unwrap())
        .collect()
}

const URL: &str = "http://w1:8083/";

fn c1_assignment() -> Assignment {
    Assignment {
        leader: "m1".into(),
        leader_url: URL.into(),
        config_offset: 7,
        connectors: vec!["c1".into()],
        tasks: vec![ConnectorTaskId::new("c1", 0)],
        ..Default::default()
    }
}

#[test]
fn example_a_v0_metadata() {
    let bytes = hex("00 00  00 0f <URL>  00 00 00 00 00 00 00 07");
    assert_eq!(bytes.len(), 27);
    let (v, m) = WorkerMetadata::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 0);
    assert_eq!(m, WorkerMetadata::new(URL, 7));
    assert_eq!(m.encode(ConnectProtocol::Eager).unwrap(), bytes);
}

#[test]
fn example_b_v1_and_v2_metadata_fresh_worker() {
    let v1 = hex("00 01  00 0f <URL>  00 00 00 00 00 00 00 07  ff ff ff ff");
    assert_eq!(v1.len(), 31);
    let (v, m) = WorkerMetadata::decode_versioned(&v1).unwrap();
    assert_eq!(v, 1);
    assert_eq!(m, WorkerMetadata::new(URL, 7));
    assert_eq!(m.encode(ConnectProtocol::Compatible).unwrap(), v1);

    let mut v2 = v1.clone();
    v2[1] = 2;
    let (v, m2) = WorkerMetadata::decode_versioned(&v2).unwrap();
    assert_eq!(v, 2);
    assert_eq!(m2, m);
    assert_eq!(m2.encode(ConnectProtocol::Sessioned).unwrap(), v2);
}

#[test]
fn example_c_v2_metadata_with_allocation() {
    let bytes = hex("00 02  00 0f <URL>  00 00 00 00 00 00 00 07  00 00 00 3d
         00 02  00 00  00 02 6d 31  00 0f <URL>  00 00 00 00 00 00 00 07
         00 00 00 01  00 02 63 31  00 00 00 02  ff ff ff ff  00 00 00 00
         00 00 00 00  00 00 00 00");
    assert_eq!(bytes.len(), 92);
    let (v, m) = WorkerMetadata::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 2);
    let expected = WorkerMetadata {
        allocation: Some(c1_assignment()),
        ..WorkerMetadata::new(URL, 7)
    };
    assert_eq!(m, expected);
    assert_eq!(m.encode(ConnectProtocol::Sessioned).unwrap(), bytes);
    // The allocation blob is a complete V2 assignment with its own header.
    assert_eq!(
        c1_assignment().encode(ConnectProtocol::Sessioned).unwrap(),
        bytes[31..].to_vec()
    );
}

#[test]
fn example_d_v0_assignment() {
    let bytes = hex(
        "00 00 | 00 00 | 00 02 6d 31 | 00 0f <URL> | 00 00 00 00 00 00 00 07 |
         00 00 00 01 | 00 02 63 31 | 00 00 00 02 | ff ff ff ff | 00 00 00 00",
    );
    assert_eq!(bytes.len(), 53);
    let (v, a) = Assignment::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 0);
    assert_eq!(a, c1_assignment());
    assert_eq!(a.encode(ConnectProtocol::Eager).unwrap(), bytes);
}

#[test]
fn example_e_v1_assignment_with_revocation() {
    let bytes = hex(
        "00 01 | 00 00 | 00 02 6d 31 | 00 0f <URL> | 00 00 00 00 00 00 00 07 |
         00 00 00 01 | 00 02 63 31 | 00 00 00 02 | ff ff ff ff | 00 00 00 00
         00 00 00 01 | 00 02 63 32 | 00 00 00 01 | 00 00 00 01
         00 00 00 00",
    );
    assert_eq!(bytes.len(), 73);
    let (v, a) = Assignment::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 1);
    let expected = Assignment {
        revoked_tasks: vec![ConnectorTaskId::new("c2", 1)],
        ..c1_assignment()
    };
    assert_eq!(a, expected);
    assert_eq!(a.encode(ConnectProtocol::Compatible).unwrap(), bytes);
}

#[test]
fn example_f_v2_assignment_with_delay() {
    let bytes = hex(
        "00 02 | 00 00 | 00 02 6d 31 | 00 0f <URL> | 00 00 00 00 00 00 00 07 |
         00 00 00 00 | 00 00 00 00 | 00 04 93 e0",
    );
    assert_eq!(bytes.len(), 45);
    let (v, a) = Assignment::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 2);
    let expected = Assignment {
        leader: "m1".into(),
        leader_url: URL.into(),
        config_offset: 7,
        delay: 300_000,
        ..Default::default()
    };
    assert_eq!(a, expected);
    assert_eq!(a.encode(ConnectProtocol::Sessioned).unwrap(), bytes);
}

#[test]
fn example_g_v0_config_mismatch() {
    let bytes =
        hex("00 00 | 00 01 | 00 02 6d 31 | 00 0f <URL> | 00 00 00 00 00 00 00 09 | 00 00 00 00");
    assert_eq!(bytes.len(), 37);
    let (v, a) = Assignment::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 0);
    assert_eq!(a, Assignment::config_mismatch("m1", URL, 9));
    assert!(a.failed());
    assert_eq!(a.encode(ConnectProtocol::Eager).unwrap(), bytes);
}

#[test]
fn v0_assignment_reads_with_cooperative_defaults_and_v1_ignored_by_v0_layout() {
    // (d) is a V0 blob: revoked empty, delay 0 via missing trailing fields.
    let d = c1_assignment().encode(ConnectProtocol::Eager).unwrap();
    let a = Assignment::decode(&d).unwrap();
    assert!(a.revoked_tasks.is_empty() && a.delay == 0);
    // Missing assignment array entirely (buffer ends after config-offset).
    let short = hex("00 01 | 00 00 | 00 02 6d 31 | 00 0f <URL> | 00 00 00 00 00 00 00 07");
    let a = Assignment::decode(&short).unwrap();
    assert!(a.connectors.is_empty() && a.tasks.is_empty());
    // Null arrays read as empty.
    let nulls = hex("00 02 | 00 00 | 00 02 6d 31 | 00 0f <URL> | 00 00 00 00 00 00 00 07 | ff ff ff ff | ff ff ff ff | 00 00 00 05");
    let a = Assignment::decode(&nulls).unwrap();
    assert_eq!(a.delay, 5);
    assert!(a.connectors.is_empty() && a.revoked_connectors.is_empty());
}

#[test]
fn truncation_inside_a_field_is_an_error() {
    let e = c1_assignment().encode(ConnectProtocol::Compatible).unwrap();
    for cut in [0, 1, 3, 10, e.len() - 1, e.len() - 5] {
        assert!(Assignment::decode(&e[..cut]).is_err(), "cut at {cut}");
    }
    // Cutting exactly before a defaulted trailing field is fine.
    assert!(Assignment::decode(&e[..e.len() - 4]).is_ok());
    // Empty blob (what the broker fills in for a forgotten member) is refused.
    assert!(Assignment::decode(&[]).is_err());
    // Negative version.
    assert_eq!(
        Assignment::decode(&hex("ff ff 00 00")).unwrap_err(),
        ProtocolError::UnsupportedVersion(-1)
    );
}

#[test]
fn extra_trailing_bytes_and_future_versions_are_tolerated() {
    let mut e = c1_assignment().encode(ConnectProtocol::Sessioned).unwrap();
    e.extend_from_slice(&[1, 2, 3]);
    e[1] = 9; // a future version parses with the V1 layout
    let (v, a) = Assignment::decode_versioned(&e).unwrap();
    assert_eq!((v, a), (9, c1_assignment()));

    let mut m = WorkerMetadata::new(URL, 7)
        .encode(ConnectProtocol::Compatible)
        .unwrap();
    m.extend_from_slice(&[0xde, 0xad]);
    assert_eq!(
        WorkerMetadata::decode(&m).unwrap(),
        WorkerMetadata::new(URL, 7)
    );
}

#[test]
fn eager_metadata_reads_as_no_allocation() {
    let m = hex("00 00  00 0f <URL>  00 00 00 00 00 00 00 07");
    assert_eq!(WorkerMetadata::decode(&m).unwrap().allocation, None);
    // Allocation length that overruns the buffer is an error.
    let bad = hex("00 02  00 0f <URL>  00 00 00 00 00 00 00 07  00 00 00 10  00 02");
    assert!(WorkerMetadata::decode(&bad).is_err());
}

#[test]
fn v3_static_metadata_layout() {
    let m = WorkerMetadata {
        static_connectors: Some(vec!["c1".into()]),
        static_tasks: Some(vec![
            ConnectorTaskId::new("c2", 0),
            ConnectorTaskId::new("c2", 3),
        ]),
        ..WorkerMetadata::new(URL, 7)
    };
    let bytes = m.encode(ConnectProtocol::Static).unwrap();
    let expected = hex("00 03  00 0f <URL>  00 00 00 00 00 00 00 07  ff ff ff ff
         00 00 00 01  00 02 63 31
         00 00 00 01  00 02 63 32  00 00 00 02  00 00 00 00  00 00 00 03");
    assert_eq!(bytes, expected);
    let (v, back) = WorkerMetadata::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 3);
    assert_eq!(back, m);
    assert!(back.is_static());

    // Unset vs set-to-empty.
    let wildcard = WorkerMetadata::new(URL, 7);
    let wb = wildcard.encode(ConnectProtocol::Static).unwrap();
    assert_eq!(&wb[wb.len() - 8..], &hex("ff ff ff ff ff ff ff ff")[..]);
    assert!(!WorkerMetadata::decode(&wb).unwrap().is_static());
    let spare = WorkerMetadata {
        static_connectors: Some(vec![]),
        ..WorkerMetadata::new(URL, 7)
    };
    let sb = spare.encode(ConnectProtocol::Static).unwrap();
    assert_eq!(WorkerMetadata::decode(&sb).unwrap(), spare);

    // Missing trailing claim fields read as unset; V2 bytes with a V3 header are a wildcard.
    let mut v2 = wildcard.encode(ConnectProtocol::Sessioned).unwrap();
    v2[1] = 3;
    assert_eq!(WorkerMetadata::decode(&v2).unwrap(), wildcard);

    // Claims are dropped in lower-version entries; V2 readers ignore the V3 tail.
    let as_v2 = m.encode(ConnectProtocol::Sessioned).unwrap();
    assert_eq!(
        WorkerMetadata::decode(&as_v2).unwrap(),
        WorkerMetadata::new(URL, 7)
    );
    let mut v3_as_v2 = bytes.clone();
    v3_as_v2[1] = 2;
    assert_eq!(
        WorkerMetadata::decode(&v3_as_v2).unwrap(),
        WorkerMetadata::new(URL, 7)
    );

    // Negative task numbers in claims are refused.
    let bad = hex(
        "00 03  00 0f <URL>  00 00 00 00 00 00 00 07  ff ff ff ff  ff ff ff ff
                   00 00 00 01  00 02 63 32  00 00 00 01  ff ff ff ff",
    );
    assert!(matches!(
        WorkerMetadata::decode(&bad),
        Err(ProtocolError::InvalidTaskNumber { .. })
    ));
}

#[test]
fn v3_static_claims_null_empty_and_missing_fields() {
    let prefix = "00 03  00 0f <URL>  00 00 00 00 00 00 00 07  ff ff ff ff";
    // Both set to empty: two zero counts.
    let both_empty = WorkerMetadata {
        static_connectors: Some(vec![]),
        static_tasks: Some(vec![]),
        ..WorkerMetadata::new(URL, 7)
    };
    let bytes = both_empty.encode(ConnectProtocol::Static).unwrap();
    assert_eq!(bytes, hex(&format!("{prefix}  00 00 00 00  00 00 00 00")));
    let back = WorkerMetadata::decode(&bytes).unwrap();
    assert_eq!(back, both_empty);
    assert!(back.is_static());

    // Null connectors, empty tasks: still a static worker.
    let tasks_empty = WorkerMetadata {
        static_tasks: Some(vec![]),
        ..WorkerMetadata::new(URL, 7)
    };
    let bytes = tasks_empty.encode(ConnectProtocol::Static).unwrap();
    assert_eq!(bytes, hex(&format!("{prefix}  ff ff ff ff  00 00 00 00")));
    assert_eq!(WorkerMetadata::decode(&bytes).unwrap(), tasks_empty);

    // Only `static_tasks` missing: connectors as sent, tasks read as unset.
    let only_conns = hex(&format!("{prefix}  00 00 00 01  00 02 63 31"));
    let back = WorkerMetadata::decode(&only_conns).unwrap();
    assert_eq!(back.static_connectors, Some(vec!["c1".to_string()]));
    assert_eq!(back.static_tasks, None);
    assert!(back.is_static());

    // Only `static_connectors` present and empty, tasks missing: set-to-empty static worker.
    let empty_conns = hex(&format!("{prefix}  00 00 00 00"));
    let back = WorkerMetadata::decode(&empty_conns).unwrap();
    assert_eq!(back.static_connectors, Some(vec![]));
    assert!(back.is_static());

    // Allocation missing too: a wildcard with no allocation.
    let bare = hex("00 03  00 0f <URL>  00 00 00 00 00 00 00 07");
    assert_eq!(
        WorkerMetadata::decode(&bare).unwrap(),
        WorkerMetadata::new(URL, 7)
    );

    // Extra trailing bytes after the claims are ignored.
    let mut extra = both_empty.encode(ConnectProtocol::Static).unwrap();
    extra.extend_from_slice(&[0xde, 0xad, 0xbe, 0xef, 0x00]);
    assert_eq!(WorkerMetadata::decode(&extra).unwrap(), both_empty);

    // A claims count that overruns the buffer is an error, not a silent unset.
    let overrun = hex(&format!("{prefix}  00 00 00 02  00 02 63 31"));
    assert!(WorkerMetadata::decode(&overrun).is_err());

    // With an allocation in front of the claims.
    let full = WorkerMetadata {
        allocation: Some(c1_assignment()),
        static_connectors: None,
        static_tasks: Some(vec![ConnectorTaskId::new("my-conn", 4)]),
        ..WorkerMetadata::new(URL, 7)
    };
    let bytes = full.encode(ConnectProtocol::Static).unwrap();
    let (v, back) = WorkerMetadata::decode_versioned(&bytes).unwrap();
    assert_eq!(v, 3);
    assert_eq!(back, full);
    assert_eq!(
        back.allocation
            .unwrap()
            .encode(ConnectProtocol::Static)
            .unwrap()[..2],
        [0, 3]
    );
}

#[test]
fn join_protocols_encode_each_entry_at_its_version() {
    let m = WorkerMetadata {
        allocation: Some(c1_assignment()),
        static_tasks: Some(vec![]),
        ..WorkerMetadata::new(URL, 7)
    };
    let list = ConnectProtocol::Static.join_protocols(&m).unwrap();
    let names: Vec<_> = list.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["static", "sessioned", "compatible", "default"]);
    for ((_, bytes), version) in list.iter().zip([3i16, 2, 1, 0]) {
        let (v, back) = WorkerMetadata::decode_versioned(bytes).unwrap();
        assert_eq!(v, version);
        if version >= 1 {
            // inner allocation header equals the outer one
            assert_eq!(i16::from_be_bytes([bytes[31], bytes[32]]), version);
            assert_eq!(back.allocation, Some(c1_assignment()));
        } else {
            assert_eq!(back.allocation, None);
        }
        assert_eq!(back.static_tasks.is_some(), version == 3);
    }
}

#[test]
fn string_limit() {
    let m = WorkerMetadata::new("x".repeat(40_000), 0);
    assert!(matches!(
        m.encode(ConnectProtocol::Eager),
        Err(ProtocolError::StringTooLong { .. })
    ));
    assert!(WorkerMetadata::new("x".repeat(32_767), 0)
        .encode(ConnectProtocol::Eager)
        .is_ok());
}

// ---------------------------------------------------------------------------------------------
// Property tests

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9._-]{1,12}|\\PC{0,6}"
}

fn task_set() -> impl Strategy<Value = Vec<ConnectorTaskId>> {
    proptest::collection::btree_set((name(), 0u32..1000), 0..8).prop_map(|s| {
        s.into_iter()
            .map(|(c, t)| ConnectorTaskId::new(c, t))
            .collect()
    })
}

fn connector_set() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::btree_set(name(), 0..6).prop_map(|s| s.into_iter().collect())
}

prop_compose! {
    fn assignment()(
        error in prop_oneof![Just(NO_ERROR), Just(CONFIG_MISMATCH), any::<i16>()],
        leader in name(),
        leader_url in "\\PC{0,30}",
        config_offset in any::<i64>(),
        connectors in connector_set(),
        tasks in task_set(),
        revoked_connectors in connector_set(),
        revoked_tasks in task_set(),
        delay in any::<i32>(),
        static_claims in proptest::collection::vec(
            ("\\PC{0,20}", connector_set(), task_set()).prop_map(|(worker, connectors, tasks)| {
                StaticClaims { worker, connectors, tasks }
            }),
            0..3,
        ),
    ) -> Assignment {
        Assignment { error, leader, leader_url, config_offset, connectors, tasks, revoked_connectors, revoked_tasks, delay, static_claims }
    }
}

fn normalized(mut a: Assignment) -> Assignment {
    a.connectors.sort();
    a.tasks.sort();
    a.revoked_connectors.sort();
    a.revoked_tasks.sort();
    for c in &mut a.static_claims {
        c.tasks.sort();
    }
    a
}

/// What a reader of `protocol` gets back: the static claims travel in V3 only.
fn as_sent(mut a: Assignment, protocol: ConnectProtocol) -> Assignment {
    if protocol != ConnectProtocol::Static {
        a.static_claims.clear();
    }
    a
}

fn cooperative() -> impl Strategy<Value = ConnectProtocol> {
    prop_oneof![
        Just(ConnectProtocol::Compatible),
        Just(ConnectProtocol::Sessioned),
        Just(ConnectProtocol::Static)
    ]
}

proptest! {
    #[test]
    fn assignment_round_trip(a in assignment(), p in cooperative()) {
        let bytes = a.encode(p).unwrap();
        let (v, back) = Assignment::decode_versioned(&bytes).unwrap();
        prop_assert_eq!(v, p.version());
        prop_assert_eq!(normalized(back.clone()), normalized(as_sent(a, p)));
        // Encoding is canonical: re-encoding the decoded value gives the same bytes.
        prop_assert_eq!(back.encode(p).unwrap(), bytes);
    }

    #[test]
    fn v0_assignment_round_trip_drops_cooperative_fields(a in assignment()) {
        let bytes = a.encode(ConnectProtocol::Eager).unwrap();
        let back = Assignment::decode(&bytes).unwrap();
        let expected = Assignment { revoked_connectors: vec![], revoked_tasks: vec![], delay: 0, static_claims: vec![], ..a };
        prop_assert_eq!(normalized(back.clone()), normalized(expected));
        prop_assert_eq!(back.encode(ConnectProtocol::Eager).unwrap(), bytes);
    }

    #[test]
    fn metadata_round_trip(
        url in "\\PC{0,40}",
        config_offset in any::<i64>(),
        allocation in proptest::option::of(assignment()),
        static_connectors in proptest::option::of(connector_set()),
        static_tasks in proptest::option::of(task_set()),
        p in prop_oneof![Just(ConnectProtocol::Eager), cooperative()],
    ) {
        let m = WorkerMetadata { url, config_offset, allocation, static_connectors, static_tasks };
        let bytes = m.encode(p).unwrap();
        let (v, back) = WorkerMetadata::decode_versioned(&bytes).unwrap();
        prop_assert_eq!(v, p.version());
        prop_assert_eq!(&back.url, &m.url);
        prop_assert_eq!(back.config_offset, m.config_offset);
        let want_alloc = if p == ConnectProtocol::Eager { None } else { m.allocation.clone().map(|a| normalized(as_sent(a, p))) };
        prop_assert_eq!(back.allocation.clone().map(normalized), want_alloc);
        if p == ConnectProtocol::Static {
            prop_assert_eq!(&back.static_connectors, &m.static_connectors);
            prop_assert_eq!(back.static_tasks.clone().map(|mut t| { t.sort(); t }), m.static_tasks.clone());
        } else {
            prop_assert!(!back.is_static());
        }
        prop_assert_eq!(back.encode(p).unwrap(), bytes);
    }

    #[test]
    fn decoders_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        // Any outcome but a panic passes: errors are expected for most inputs.
        Assignment::decode(&bytes).ok();
        WorkerMetadata::decode(&bytes).ok();
    }

    #[test]
    fn truncated_prefixes_never_panic(a in assignment(), cut in 0usize..400) {
        let bytes = a.encode(ConnectProtocol::Sessioned).unwrap();
        let cut = cut.min(bytes.len());
        Assignment::decode(&bytes[..cut]).ok(); // any outcome but a panic passes
    }
}
