//! Where a stream resumes, as Debezium's `PostgresStreamingChangeEventSource` and
//! `WalPositionLocator` decide it from the committed offset ([`Resume`], [`ResumeFilter`]), and
//! what a starting task does under `snapshot.mode` ([`plan`]).

use tributary_api::record::SourceMap;
use tributary_api::{ConnectError, ConnectResult};

use crate::config::PostgresConfig;
use crate::snapshot;
use crate::transaction::TransactionContext;

/// Where streaming begins, read from the committed offset as Debezium's
/// `PostgresStreamingChangeEventSource` reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resume {
    /// The LSN `START_REPLICATION` asks for (`lsn_proc`, else `lsn`; 0: the slot's confirmed
    /// position). The server never goes back before the slot's `confirmed_flush_lsn`.
    pub start_lsn: u64,
    /// The offset's `lsn_commit` (else its `lsn_proc`): transactions that committed before it
    /// were written in full and are skipped; the first events carry it as their `lsn_commit`.
    pub last_commit_lsn: Option<i64>,
    /// The offset's `lsn_proc`: the changes of the first transaction streamed at or before it
    /// were written already (the offset was committed mid-transaction) and are skipped.
    pub last_event_lsn: Option<i64>,
    /// The offset's `txId` with `last_event_lsn`: the transaction those written changes
    /// belong to (another one first is replayed whole, as `WalPositionLocator` replays it).
    pub tx_id: Option<i64>,
    /// The transaction metadata's counters the offset stored (`provide.transaction.metadata`):
    /// the stored transaction, resumed, goes on counting from them.
    pub transaction: TransactionContext,
}

impl Resume {
    /// The resume point of a committed offset: a streaming offset's (`lsn_proc`), a snapshot's
    /// (`lsn`: stream from where the snapshot stood, nothing to skip), or none. An offset
    /// Debezium wrote at a transaction's boundary or for a logical decoding message
    /// (`messageType` BEGIN, COMMIT or MESSAGE: heartbeats, transaction metadata) holds no
    /// change: only the transactions committed before it are skipped, as `WalPositionLocator`
    /// replays the next one from its start.
    pub fn from_offset(offset: Option<&SourceMap>) -> Resume {
        let long = |k: &str| {
            offset
                .and_then(|o| o.get(k))
                .and_then(serde_json::Value::as_i64)
        };
        let message_type = offset
            .and_then(|o| o.get("messageType"))
            .and_then(serde_json::Value::as_str);
        let change = !matches!(message_type, Some("BEGIN" | "COMMIT" | "MESSAGE"));
        match (long("lsn_proc"), long("lsn")) {
            (Some(proc), _) => Resume {
                start_lsn: proc as u64,
                last_commit_lsn: long("lsn_commit").or(Some(proc)),
                last_event_lsn: change.then_some(proc),
                tx_id: long("txId").filter(|_| change),
                transaction: TransactionContext::from_offset(offset),
            },
            (None, Some(lsn)) => Resume {
                start_lsn: lsn as u64,
                ..Resume::default()
            },
            (None, None) => Resume::default(),
        }
    }
}

/// What [`crate::streaming::run`] does before streaming.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Stream from `Resume` (`no_data`, or a snapshot completed before).
    Stream(Resume),
    /// Snapshot, then stream from where the snapshot stood (`initial` without a completed
    /// snapshot in the offsets).
    SnapshotThenStream,
}

/// What a stream resumed from a committed offset skips, as Debezium's `WalPositionLocator`
/// does: transactions that committed before the offset's `lsn_commit` (written in full), and
/// in the first transaction after it the changes up to the offset's `lsn_proc` (written
/// before the restart, the offset committed mid-transaction). Positions are LSNs as `i64`.
#[derive(Debug, Clone, Default)]
pub struct ResumeFilter {
    commits_before: Option<i64>,
    changes_up_to: Option<i64>,
    /// The stored offset's transaction (`txId`): only its changes up to `changes_up_to` were
    /// written; another transaction is replayed whole.
    stored_tx: Option<i64>,
    skipping_tx: bool,
    /// The transaction being read is the stored one.
    in_stored_tx: bool,
}

impl ResumeFilter {
    /// The filter of `resume` (nothing skipped without a stored change position).
    pub fn new(resume: &Resume) -> ResumeFilter {
        ResumeFilter {
            commits_before: resume.last_commit_lsn,
            changes_up_to: resume.last_event_lsn,
            stored_tx: resume.tx_id,
            skipping_tx: false,
            in_stored_tx: false,
        }
    }

    /// A transaction `xid` begins whose commit record starts at `final_lsn` (`pgoutput`'s
    /// Begin gives it): skipped when that is before the stored offset's `lsn_commit` (a
    /// commit's end).
    pub fn begin(&mut self, final_lsn: i64, xid: i64) {
        self.begin_ending_at(final_lsn + 1, xid);
    }

    /// A transaction `xid` begins whose commit record ends at `end_lsn` (`decoderbufs`, which
    /// gives a commit's end, not its start): skipped when it ends at or before the stored
    /// offset's `lsn_commit` (that commit's own end).
    pub fn begin_ending_at(&mut self, end_lsn: i64, xid: i64) {
        self.skipping_tx = self.commits_before.is_some_and(|c| end_lsn <= c);
        self.in_stored_tx = self.stored_tx.is_none_or(|t| t == xid);
    }

    /// Whether a transaction's commit position decides whether it is skipped: a resumed
    /// stream that has not yet read a transaction it had not written in full.
    pub fn awaits_commits(&self) -> bool {
        self.commits_before.is_some()
    }

    /// Whether the change at `lsn` was written before (and is skipped).
    pub fn skip_change(&mut self, lsn: i64) -> bool {
        if self.skipping_tx || (self.in_stored_tx && self.changes_up_to.is_some_and(|l| lsn <= l)) {
            return true;
        }
        self.changes_up_to = None;
        false
    }

    /// Whether a message at `lsn` outside any transaction was written before (it lies at or
    /// before the stored offset's `lsn_commit`).
    pub fn written_before(&self, lsn: i64) -> bool {
        self.commits_before.is_some_and(|c| lsn <= c)
    }

    /// Whether the transaction being read is skipped whole (it committed before the stored
    /// offset).
    pub fn skipping(&self) -> bool {
        self.skipping_tx
    }

    /// The transaction ended: after the first one not written in full, nothing is skipped.
    pub fn commit(&mut self) {
        if !std::mem::take(&mut self.skipping_tx) {
            self.commits_before = None;
            self.changes_up_to = None;
        }
    }
}

/// What a task starting under `config.snapshot_mode` with the committed `offset` does
/// (`None`: `initial_only`, which never streams), as Debezium's snapshotters and
/// `BaseSourceTask.validateSchemaHistory` decide: a snapshot interrupted before is taken again
/// (an error under `no_data`, which never snapshots); a stored position the slot no longer
/// holds (the slot is gone, or its `restart_lsn` is past the offset's `lsn_proc`) is an error,
/// or under `when_needed` a new snapshot. Errors: those, and the database's.
pub async fn plan(
    config: &PostgresConfig,
    offset: Option<&SourceMap>,
) -> ConnectResult<Option<Plan>> {
    use crate::config::SnapshotMode as Mode;
    let mode = config.snapshot_mode;
    if mode == Mode::InitialOnly {
        return Ok(None);
    }
    let Some(offset) = offset else {
        tracing::info!("Connector started with no previous offset");
        return Ok(Some(match mode {
            Mode::NoData => Plan::Stream(Resume::default()),
            _ => Plan::SnapshotThenStream,
        }));
    };
    if !crate::envelope::snapshot_done(offset) {
        if mode == Mode::NoData {
            return Err(ConnectError::connect(
                "The connector previously stopped while taking a snapshot, but now the connector is configured to never allow snapshots. Reconfigure the connector to use snapshots initially or when needed.",
            ));
        }
        tracing::info!(
            ?offset,
            "The previous snapshot did not complete; taking it again"
        );
        return Ok(Some(Plan::SnapshotThenStream));
    }
    let resume = Resume::from_offset(Some(offset));
    if !log_position_available(config, &resume).await? {
        tracing::warn!("Last recorded offset is no longer available on the server.");
        if mode == Mode::WhenNeeded {
            tracing::info!("The last recorded offset is no longer available but we are in when_needed snapshot mode. Attempting to snapshot data to fill the gap.");
            return Ok(Some(Plan::SnapshotThenStream));
        }
        return Err(ConnectError::connect(format!(
            "The connector is trying to read change stream starting at {offset:?}, but this is no longer available on the server. Reconfigure the connector to use a snapshot mode when needed."
        )));
    }
    if mode == Mode::Always {
        return Ok(Some(Plan::SnapshotThenStream));
    }
    tracing::info!(
        ?offset,
        "A previous offset indicating a completed snapshot has been found; streaming"
    );
    Ok(Some(Plan::Stream(resume)))
}

/// Whether the slot still holds the stored position (`PostgresConnection.validateLogPosition`):
/// it exists, and its `restart_lsn` is not past the offset's `lsn_proc` (true without one;
/// false for an invalidated slot, which has no `restart_lsn`).
async fn log_position_available(config: &PostgresConfig, resume: &Resume) -> ConnectResult<bool> {
    let client = snapshot::connect(config).await?;
    let row = client
        .query_opt(
            "SELECT (restart_lsn - '0/0'::pg_lsn)::text FROM pg_catalog.pg_replication_slots \
             WHERE slot_name = $1 AND database = current_database() AND plugin = $2",
            &[&config.slot_name, &config.plugin.name()],
        )
        .await
        .map_err(snapshot::pg_error("reading the replication slot"))?;
    let Some(row) = row else {
        return Ok(false);
    };
    let restart: Option<String> = row.get(0);
    let restart = restart.and_then(|r| r.parse::<i64>().ok());
    tracing::info!("Slot '{}' has restart LSN {restart:?}", config.slot_name);
    // The stored `lsn_proc`, whatever message it was written for (a heartbeat's too): a
    // resume point exists exactly when the offset has one.
    let stored = resume
        .last_commit_lsn
        .is_some()
        .then_some(resume.start_lsn as i64);
    Ok(match (stored, restart) {
        (None, _) => true,
        (Some(stored), Some(restart)) => restart <= stored,
        // An invalidated slot (no restart LSN) holds nothing.
        (Some(_), None) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offset(pairs: &[(&str, i64)]) -> SourceMap {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), (*v).into()))
            .collect()
    }

    #[test]
    fn resume_points_are_read_as_debezium_reads_them() {
        assert_eq!(Resume::from_offset(None), Resume::default());
        let snapshot = offset(&[("lsn", 500), ("txId", 7)]);
        assert_eq!(
            Resume::from_offset(Some(&snapshot)),
            Resume {
                start_lsn: 500,
                last_commit_lsn: None,
                last_event_lsn: None,
                tx_id: None,
                transaction: TransactionContext::default(),
            }
        );
        let streaming = offset(&[("lsn_proc", 900), ("lsn", 900), ("lsn_commit", 800)]);
        assert_eq!(
            Resume::from_offset(Some(&streaming)),
            Resume {
                start_lsn: 900,
                last_commit_lsn: Some(800),
                last_event_lsn: Some(900),
                tx_id: None,
                transaction: TransactionContext::default(),
            }
        );
        // Without lsn_commit, the processed position stands for it (Debezium's fallback).
        let first_tx = offset(&[("lsn_proc", 900), ("lsn", 900)]);
        assert_eq!(
            Resume::from_offset(Some(&first_tx)).last_commit_lsn,
            Some(900)
        );
    }

    #[test]
    fn a_resumed_stream_skips_what_was_written_and_nothing_else() {
        // Stored: a transaction ended at 800; a change at 900 of the next one was written.
        let mut f = ResumeFilter::new(&Resume::from_offset(Some(&offset(&[
            ("lsn_proc", 900),
            ("lsn", 900),
            ("lsn_commit", 800),
        ]))));
        // A transaction resent whose commit (at 780) precedes the stored one: all skipped.
        f.begin(780, 1);
        assert!(f.skip_change(700) && f.skip_change(790));
        f.commit();
        // The interrupted transaction: up to 900 skipped, after it written.
        f.begin(1000, 1);
        assert!(f.skip_change(850));
        assert!(f.skip_change(900));
        assert!(!f.skip_change(950));
        assert!(!f.skip_change(960));
        f.commit();
        // Then nothing is skipped, even a change at an LSN below the stored one (a transaction
        // that began earlier and committed later).
        f.begin(1200, 1);
        assert!(!f.skip_change(600));
        f.commit();
    }

    fn config(mode: &str) -> PostgresConfig {
        let props: tributary_api::Props = [
            ("database.hostname", "db.invalid"),
            ("database.user", "u"),
            ("database.dbname", "inventory"),
            ("topic.prefix", "dbserver1"),
            ("plugin.name", "pgoutput"),
            ("snapshot.mode", mode),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        PostgresConfig::parse(&props).unwrap()
    }

    /// `plan` on the paths that need no database (a stored position to check needs one).
    fn plan_of(mode: &str, offset: Option<&SourceMap>) -> ConnectResult<Option<Plan>> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(plan(&config(mode), offset))
    }

    #[test]
    fn each_snapshot_mode_plans_as_debeziums_snapshotter() {
        assert_eq!(plan_of("initial_only", None).unwrap(), None);
        for mode in ["initial", "always", "when_needed"] {
            assert_eq!(
                plan_of(mode, None).unwrap(),
                Some(Plan::SnapshotThenStream),
                "{mode}"
            );
        }
        for mode in ["no_data", "never"] {
            assert_eq!(
                plan_of(mode, None).unwrap(),
                Some(Plan::Stream(Resume::default())),
                "{mode}"
            );
        }
        // A snapshot interrupted: taken again, unless snapshots are never allowed.
        let mut interrupted = offset(&[("lsn", 500), ("txId", 7)]);
        interrupted.insert("snapshot".into(), "INITIAL".into());
        interrupted.insert("last_snapshot_record".into(), false.into());
        for mode in ["initial", "always", "when_needed"] {
            assert_eq!(
                plan_of(mode, Some(&interrupted)).unwrap(),
                Some(Plan::SnapshotThenStream),
                "{mode}"
            );
        }
        let refused = plan_of("no_data", Some(&interrupted)).unwrap_err();
        assert!(
            refused.to_string().contains("never allow snapshots"),
            "{refused}"
        );
    }

    #[test]
    fn an_offset_at_a_transaction_boundary_replays_the_next_transaction_whole() {
        // Debezium's heartbeat or transaction-metadata offset: lsn_proc = lsn_commit = the
        // end of the transaction it follows.
        let mut stored = offset(&[("lsn_proc", 900), ("lsn", 900), ("lsn_commit", 900)]);
        stored.insert("messageType".into(), "COMMIT".into());
        let resume = Resume::from_offset(Some(&stored));
        assert_eq!(
            (resume.last_commit_lsn, resume.last_event_lsn),
            (Some(900), None)
        );
        let mut f = ResumeFilter::new(&resume);
        // The transaction it follows, resent: skipped.
        f.begin(880, 1);
        assert!(f.skip_change(850));
        f.commit();
        // The next one began before it committed: written whole.
        f.begin(1000, 1);
        assert!(!f.skip_change(870));
        assert!(!f.skip_change(950));
        f.commit();
    }

    #[test]
    fn only_the_stored_transaction_has_changes_skipped() {
        // Stored: change 900 of transaction 42 written, the last commit at 800.
        let mut stored = offset(&[
            ("lsn_proc", 900),
            ("lsn", 900),
            ("lsn_commit", 800),
            ("txId", 42),
        ]);
        stored.insert("messageType".into(), "INSERT".into());
        let mut f = ResumeFilter::new(&Resume::from_offset(Some(&stored)));
        // Another transaction comes first (the slot confirmed past 42's start): its changes
        // below 900 were never written, none is skipped.
        f.begin(1000, 41);
        assert!(!f.skip_change(850));
        f.commit();
        // The stored transaction, after it, is replayed whole (at-least-once).
        f.begin(1100, 42);
        assert!(!f.skip_change(880));
        f.commit();
        // When the stored transaction comes first, its written changes are skipped.
        let mut f = ResumeFilter::new(&Resume::from_offset(Some(&stored)));
        f.begin(1000, 42);
        assert!(f.skip_change(900));
        assert!(!f.skip_change(950));
    }

    #[test]
    fn a_stream_without_a_stored_change_skips_nothing() {
        for resume in [
            Resume::default(),
            Resume::from_offset(Some(&offset(&[("lsn", 500)]))),
        ] {
            let mut f = ResumeFilter::new(&resume);
            f.begin(10, 1);
            assert!(!f.skip_change(5));
            f.commit();
        }
    }
}
