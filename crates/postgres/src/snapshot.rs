//! The initial snapshot, as Debezium's `PostgresSnapshotChangeEventSource` takes it: one
//! `SERIALIZABLE, READ ONLY, DEFERRABLE` transaction, its transaction id and the WAL position
//! at its start in every record, each captured table read in full (`SELECT *`, through a
//! cursor of `snapshot.fetch.size` rows) as `r` events.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};
use tributary_api::record::SourceRecord;
use tributary_api::{ConnectError, ConnectResult};

use crate::config::PostgresConfig;
use crate::envelope::{
    snapshot_offset, CapturedTable, EventBuilder, SnapshotMarker, SourcePosition,
};
use crate::types::Column;

pub(crate) fn pg_error(what: &str) -> impl Fn(tokio_postgres::Error) -> ConnectError + '_ {
    move |e| pg_failure(what, &e)
}

/// A database error as the task reports it: the server's message with its SQLSTATE (rather
/// than tokio-postgres's "db error"), retriable ([`ConnectError::Retriable`]: the task
/// restarts from its committed offset) when the connection failed or the server ended it
/// (no SQLSTATE, class `08` connection exception, `57P01`–`57P03` shutdown or unavailable),
/// as Debezium's `PostgresErrorHandler` retries.
pub fn pg_failure(what: &str, e: &tokio_postgres::Error) -> ConnectError {
    match e.as_db_error() {
        Some(d) => {
            let code = d.code().code();
            let message = format!("{what}: {code}: {}", d.message());
            if code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03") {
                ConnectError::Retriable(message)
            } else {
                ConnectError::connect(message)
            }
        }
        None => {
            // The causes too (a TLS handshake's: the certificate's error).
            let mut message = format!("{what}: {e}");
            let mut source = std::error::Error::source(e);
            while let Some(cause) = source {
                message.push_str(&format!(": {cause}"));
                source = cause.source();
            }
            ConnectError::Retriable(message)
        }
    }
}

/// Connects to the configured database, the connection driven by a task of its own.
pub async fn connect(config: &PostgresConfig) -> ConnectResult<Client> {
    let mut pg = tokio_postgres::Config::new();
    pg.host(&config.hostname)
        .port(config.port)
        .user(&config.user)
        .dbname(&config.dbname)
        .keepalives(config.tcp_keepalive)
        .application_name("Debezium Snapshot");
    if let Some(p) = &config.password {
        pg.password(&p.0);
    }
    pg.ssl_mode(config.ssl.postgres_mode());
    let what = format!(
        "connecting to {}:{}/{}",
        config.hostname, config.port, config.dbname
    );
    let client = if config.ssl.mode == crate::tls::SslMode::Disable {
        let (client, connection) = pg.connect(NoTls).await.map_err(pg_error(&what))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("PostgreSQL connection ended: {e}");
            }
        });
        client
    } else {
        let tls = tokio_postgres_rustls::MakeRustlsConnect::new(config.ssl.client_config()?);
        let (client, connection) = pg.connect(tls).await.map_err(pg_error(&what))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("PostgreSQL connection ended: {e}");
            }
        });
        client
    };
    Ok(client)
}

/// The rows of a simple query, each column as text (`None`: NULL).
async fn rows(client: &Client, sql: &str) -> ConnectResult<Vec<Vec<Option<String>>>> {
    let messages = client.simple_query(sql).await.map_err(pg_error(sql))?;
    Ok(messages
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect())
}

/// `s` as a quoted SQL identifier.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// `X/Y` (PostgreSQL's LSN text) as Debezium's number: `X << 32 | Y`.
pub fn parse_lsn(text: &str) -> ConnectResult<i64> {
    let (hi, lo) = text
        .split_once('/')
        .ok_or_else(|| ConnectError::connect(format!("not an LSN: {text}")))?;
    let part = |p: &str| {
        u64::from_str_radix(p, 16).map_err(|_| ConnectError::connect(format!("not an LSN: {text}")))
    };
    Ok(((part(hi)? << 32) | part(lo)?) as i64)
}

/// The type of `oid` as a [`Column`] without a name, modifier or constraints: its name, an
/// array's element, an enum's (or an enum array's element's) labels, and a domain's base type
/// and modifier. The SQL's columns, as [`TypeRow::read`] reads them.
const TYPE_COLUMNS: &str = "t.typname, CASE WHEN t.typcategory = 'A' THEN e.typname END, \
     (SELECT string_agg(l.enumlabel, ',' ORDER BY l.oid) FROM pg_catalog.pg_enum l \
      WHERE l.enumtypid = CASE WHEN t.typcategory = 'A' THEN e.oid ELSE t.oid END), \
     t.typtype, t.typbasetype, t.typtypmod";

/// A type as [`TYPE_COLUMNS`] reads it.
struct TypeRow {
    name: String,
    element: Option<String>,
    enum_values: Option<Vec<String>>,
    /// A domain's base type and modifier (`typbasetype`, `typtypmod`).
    domain: Option<(u32, i32)>,
}

impl TypeRow {
    fn read(c: &[Option<String>]) -> TypeRow {
        let text = |i: usize| c.get(i).cloned().flatten().unwrap_or_default();
        TypeRow {
            name: c[0].clone().unwrap_or_default(),
            element: c[1].clone(),
            enum_values: c[2]
                .as_deref()
                .map(|labels| labels.split(',').map(str::to_string).collect()),
            domain: (c[3].as_deref() == Some("d"))
                .then(|| (text(4).parse().unwrap_or(0), text(5).parse().unwrap_or(-1))),
        }
    }

    /// `column`'s type as this one: a domain's resolved to its base type (through domains of
    /// domains), the modifier the first one on the way that has one (the column's own first),
    /// and no default: Debezium reads a domain column as its root type with the domain's
    /// length and scale, and finds no default reader for the domain's name. Errors: the
    /// database's; a chain of domains without an end.
    async fn apply(self, client: &Client, column: &mut Column) -> ConnectResult<()> {
        let mut row = self;
        for _ in 0..32 {
            let Some((base, typmod)) = row.domain else {
                column.type_name = row.name;
                column.element = row.element;
                column.enum_values = row.enum_values;
                return Ok(());
            };
            column.default = None;
            if column.typmod == -1 {
                column.typmod = typmod;
            }
            row = type_row(client, base).await?.ok_or_else(|| {
                ConnectError::connect(format!(
                    "column {} has a domain of an unknown type (oid {base})",
                    column.name
                ))
            })?;
        }
        Err(ConnectError::connect(format!(
            "column {} has a domain of domains 32 deep",
            column.name
        )))
    }
}

/// Type `oid` as [`TYPE_COLUMNS`] reads it; `None` when there is none.
async fn type_row(client: &Client, oid: u32) -> ConnectResult<Option<TypeRow>> {
    Ok(rows(
        client,
        &format!(
            "SELECT {TYPE_COLUMNS} FROM pg_catalog.pg_type t \
             LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem WHERE t.oid = {oid}"
        ),
    )
    .await?
    .first()
    .map(|r| TypeRow::read(r)))
}

/// The columns of table `oid` in the catalog now, in table order (a domain's as its base
/// type's). Errors: the database's.
pub async fn table_columns(client: &Client, oid: &str) -> ConnectResult<Vec<Column>> {
    let found = rows(
        client,
        &format!(
            "SELECT a.attname, a.atttypmod, a.attnotnull, \
             pg_catalog.pg_get_expr(d.adbin, d.adrelid), {TYPE_COLUMNS} \
             FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_type t ON t.oid = a.atttypid \
             LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem \
             LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum \
             WHERE a.attrelid = {oid} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
        ),
    )
    .await?;
    let mut columns = Vec::with_capacity(found.len());
    for c in found {
        let mut column = Column {
            name: c[0].clone().unwrap_or_default(),
            typmod: c[1].as_deref().and_then(|m| m.parse().ok()).unwrap_or(-1),
            not_null: c[2].as_deref() == Some("t"),
            default: c[3].clone(),
            type_name: String::new(),
            element: None,
            enum_values: None,
        };
        TypeRow::read(&c[4..]).apply(client, &mut column).await?;
        columns.push(column);
    }
    Ok(columns)
}

/// The oid of table `schema.table` (`pg_class.oid`), `None` when there is none. Errors: the
/// database's.
pub async fn table_oid(
    client: &Client,
    schema: &str,
    table: &str,
) -> ConnectResult<Option<String>> {
    let row = client
        .query_opt(
            "SELECT c.oid::text FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relname = $2",
            &[&schema, &table],
        )
        .await
        .map_err(pg_error("looking up a table"))?;
    Ok(row.map(|r| r.get(0)))
}

/// The columns of table `oid` in the catalog now as `decoderbufs` describes a tuple's:
/// name, type, `format_type` of type and modifier, and whether it may be NULL. Errors: the
/// database's.
pub async fn column_shapes(
    client: &Client,
    oid: &str,
) -> ConnectResult<Vec<crate::decoderbufs::ColumnShape>> {
    Ok(rows(
        client,
        &format!(
            "SELECT a.attname, a.atttypid, pg_catalog.format_type(a.atttypid, a.atttypmod), \
             a.attnotnull FROM pg_catalog.pg_attribute a \
             WHERE a.attrelid = {oid} AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum"
        ),
    )
    .await?
    .into_iter()
    .map(|c| crate::decoderbufs::ColumnShape {
        name: c[0].clone().unwrap_or_default(),
        type_oid: c[1].as_deref().and_then(|o| o.parse().ok()).unwrap_or(0),
        modifier: c[2].clone().unwrap_or_default(),
        optional: c[3].as_deref() != Some("t"),
    })
    .collect())
}

/// Type `oid` as a nullable column named `name` with modifier `typmod` and no default (a
/// column a replication stream's relation names that the catalog no longer has, or whose
/// type changed since; a domain as its base type, with the domain's modifier when `typmod`
/// is -1). Errors: the database's; an unknown type.
pub async fn column_of_type(
    client: &Client,
    name: &str,
    oid: u32,
    typmod: i32,
) -> ConnectResult<Column> {
    let row = type_row(client, oid).await?.ok_or_else(|| {
        ConnectError::connect(format!("column {name} has an unknown type (oid {oid})"))
    })?;
    let mut column = Column {
        name: name.to_string(),
        typmod,
        not_null: false,
        default: None,
        type_name: String::new(),
        element: None,
        enum_values: None,
    };
    row.apply(client, &mut column).await?;
    Ok(column)
}

/// The key of table `oid`, in key order, as Debezium's `readPrimaryKeyOrUniqueIndexNames`
/// reads it: the primary key, else the columns of the first unique index by name (as the JDBC
/// driver's `getIndexInfo` lists them); empty without either. Errors: the database's.
pub async fn primary_key(client: &Client, oid: &str) -> ConnectResult<Vec<String>> {
    let index_columns = |condition: &str| {
        format!(
            "SELECT a.attname FROM pg_catalog.pg_index i \
             JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid \
             JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) \
             WHERE i.indrelid = {oid} AND {condition} \
             ORDER BY array_position(i.indkey::int2[], a.attnum)"
        )
    };
    let column = |r: Vec<Option<String>>| r.into_iter().next().flatten();
    let key: Vec<String> = rows(client, &index_columns("i.indisprimary"))
        .await?
        .into_iter()
        .filter_map(column)
        .collect();
    if !key.is_empty() {
        return Ok(key);
    }
    let first_unique = rows(
        client,
        &format!(
            "SELECT ic.relname FROM pg_catalog.pg_index i \
             JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid \
             WHERE i.indrelid = {oid} AND i.indisunique ORDER BY ic.relname LIMIT 1"
        ),
    )
    .await?
    .into_iter()
    .next()
    .and_then(column);
    let Some(index) = first_unique else {
        return Ok(Vec::new());
    };
    Ok(rows(
        client,
        &index_columns(&format!("ic.relname = '{}'", index.replace('\'', "''"))),
    )
    .await?
    .into_iter()
    .filter_map(column)
    .collect())
}

/// The captured tables, in the order Debezium snapshots them
/// ([`crate::config::TableFilter::snapshot_order`]), with their schemas. Errors: a
/// column of a type this version does not map (named).
pub async fn captured_tables(
    client: &Client,
    config: &PostgresConfig,
) -> ConnectResult<Vec<CapturedTable>> {
    let tables = rows(
        client,
        "SELECT n.nspname, c.relname, c.oid FROM pg_catalog.pg_class c \
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition \
         AND n.nspname NOT IN ('pg_catalog', 'information_schema') \
         AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%' \
         ORDER BY n.nspname, c.relname",
    )
    .await?;
    let mut oids = std::collections::HashMap::new();
    let mut included = Vec::new();
    for t in tables {
        let (Some(schema), Some(table), Some(oid)) = (&t[0], &t[1], &t[2]) else {
            continue;
        };
        if config.tables.includes(schema, table) {
            oids.insert((schema.clone(), table.clone()), oid.clone());
            included.push((schema.clone(), table.clone()));
        }
    }
    let mut captured = Vec::new();
    for (schema, table) in config.tables.snapshot_order(included) {
        let oid = &oids[&(schema.clone(), table.clone())];
        let (schema, table) = (&schema, &table);
        let columns = table_columns(client, oid).await?;
        let key = primary_key(client, oid).await?;
        captured.push(CapturedTable::of(config, schema, table, columns, &key)?);
    }
    Ok(captured)
}

fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// A snapshot a new replication slot exported (`CREATE_REPLICATION_SLOT … EXPORT_SNAPSHOT`):
/// the database as of the slot's consistent point, where its stream begins.
#[derive(Debug, Clone)]
pub struct ExportedSnapshot {
    /// The name `SET TRANSACTION SNAPSHOT` takes.
    pub name: String,
    /// The slot's `consistent_point`, the snapshot's `lsn`.
    pub lsn: i64,
}

/// How a snapshot ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotEnd {
    /// Every table was read; the WAL position its records carry (`lsn`), where streaming
    /// continues.
    Completed { lsn: Option<i64> },
    /// `out` closed first: the task stopped.
    Stopped,
}

/// Takes the snapshot, sending its records in batches of at most `max.batch.size` to `out` (which
/// bounds how far the snapshot runs ahead of the producer): in `exported` when given
/// (`REPEATABLE READ`, its `lsn` the slot's consistent point, as Debezium does for a slot it
/// just created), else in a `SERIALIZABLE, READ ONLY, DEFERRABLE` transaction at the current
/// WAL position. Errors: the database's (with the query).
pub async fn run(
    config: &PostgresConfig,
    events: &EventBuilder,
    out: &mpsc::Sender<ConnectResult<Vec<SourceRecord>>>,
    exported: Option<&ExportedSnapshot>,
) -> ConnectResult<SnapshotEnd> {
    let client = connect(config).await?;
    // The text forms the value conversions read, whatever the server's defaults.
    client
        .batch_execute(
            "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET bytea_output = 'hex'; \
             SET extra_float_digits = 1; SET IntervalStyle = 'postgres'",
        )
        .await
        .map_err(pg_error("setting the session"))?;
    let begin = match exported {
        Some(e) => format!(
            "BEGIN ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT '{}'",
            e.name.replace('\'', "''")
        ),
        None => "BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY DEFERRABLE".to_string(),
    };
    client
        .batch_execute(&begin)
        .await
        .map_err(pg_error("beginning the snapshot transaction"))?;
    let position = rows(
        &client,
        "SELECT (CASE pg_is_in_recovery() WHEN 't' THEN '0'::xid8 ELSE pg_current_xact_id() END), \
         (CASE pg_is_in_recovery() WHEN 't' THEN pg_last_wal_receive_lsn() ELSE pg_current_wal_lsn() END)",
    )
    .await?;
    let tx_id = position[0][0]
        .as_deref()
        .and_then(|t| t.parse::<i64>().ok())
        .filter(|t| *t > 0);
    let lsn = match exported {
        Some(e) => Some(e.lsn),
        None => position[0][1].as_deref().map(parse_lsn).transpose()?,
    };
    let tables = captured_tables(&client, config).await?;
    tracing::info!(
        tables = tables.len(),
        "Snapshot of {} begins (txId {tx_id:?}, lsn {lsn:?})",
        config.dbname
    );
    // The snapshot's last row is only known once every table was read (a table after it may
    // be empty): each row waits here until the next one, and the last becomes `last`.
    let mut pending: Option<(usize, Vec<Option<String>>, SourcePosition)> = None;
    let build = |(index, row, pos): (usize, Vec<Option<String>>, SourcePosition)| {
        let table: &CapturedTable = &tables[index];
        let texts: Vec<Option<&str>> = row.iter().map(Option::as_deref).collect();
        let after = table.row(&texts)?;
        let last = pos.snapshot == Some(SnapshotMarker::Last);
        let offset = snapshot_offset(&pos, last);
        events.event(table, "r", None, Some(after), &pos, offset)
    };
    for (index, table) in tables.iter().enumerate() {
        // Debezium stamps a table's records with the time its read began.
        let mut pos = SourcePosition {
            ts_us: now_us(),
            tx_id,
            lsn,
            last_commit_lsn: None,
            snapshot: None,
        };
        let select = format!(
            "SELECT * FROM {}.{}",
            quote_ident(&table.schema),
            quote_ident(&table.table)
        );
        client
            .batch_execute(&format!(
                "DECLARE snapshot_rows NO SCROLL CURSOR FOR {select}"
            ))
            .await
            .map_err(pg_error(&select))?;
        let fetch = format!("FETCH FORWARD {} FROM snapshot_rows", config.fetch_size);
        // One row held back, to know whether the one before it is the table's last.
        let mut held: Option<Vec<Option<String>>> = None;
        let mut first_in_table = true;
        loop {
            let batch = rows(&client, &fetch).await?;
            let end = batch.is_empty();
            let mut records = Vec::with_capacity(batch.len().min(config.max_batch_size));
            let mut queue: Vec<Vec<Option<String>>> = held.take().into_iter().collect();
            queue.extend(batch);
            if !end {
                held = queue.pop();
            }
            let n = queue.len();
            for (i, row) in queue.into_iter().enumerate() {
                // Handed over in batches of Debezium's max.batch.size: the rows fetched at
                // once (snapshot.fetch.size) are not all held as records at once.
                if records.len() == config.max_batch_size {
                    let full =
                        std::mem::replace(&mut records, Vec::with_capacity(config.max_batch_size));
                    if out.send(Ok(full)).await.is_err() {
                        return Ok(SnapshotEnd::Stopped);
                    }
                }
                let last_in_table = end && i + 1 == n;
                pos.snapshot = Some(SnapshotMarker::resolve(
                    index == 0 && first_in_table,
                    false,
                    first_in_table,
                    last_in_table,
                ));
                first_in_table = false;
                if let Some(previous) = pending.replace((index, row, pos.clone())) {
                    records.push(build(previous)?);
                }
            }
            if !records.is_empty() && out.send(Ok(records)).await.is_err() {
                return Ok(SnapshotEnd::Stopped);
            }
            if end {
                break;
            }
        }
        client
            .batch_execute("CLOSE snapshot_rows")
            .await
            .map_err(pg_error("closing the snapshot cursor"))?;
    }
    if let Some((index, row, mut pos)) = pending.take() {
        pos.snapshot = Some(SnapshotMarker::Last);
        let last = build((index, row, pos))?;
        if out.send(Ok(vec![last])).await.is_err() {
            return Ok(SnapshotEnd::Stopped);
        }
    }
    client
        .batch_execute("COMMIT")
        .await
        .map_err(pg_error("ending the snapshot transaction"))?;
    tracing::info!("Snapshot of {} completed", config.dbname);
    Ok(SnapshotEnd::Completed { lsn })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsns_read_as_debezium_reads_them() {
        assert_eq!(parse_lsn("0/1B36F7E8").unwrap(), 0x1B36_F7E8);
        assert_eq!(parse_lsn("1/0").unwrap(), 1 << 32);
        assert!(parse_lsn("x").is_err());
    }
}
