//! The publication and the replication slot in the database's catalogue: created or brought
//! to the captured tables as `publication.autocreate.mode` asks, the server's version and the
//! captured tables checked, the slot looked up, read and dropped (`slot.drop.on.stop`).

use tributary_api::{ConnectError, ConnectResult};

use crate::config::{PostgresConfig, PublicationAutocreate};
use crate::snapshot::{self, quote_ident};

/// The publication's `WITH (publish = …)` operations when `skipped.operations` is set and skips
/// some (Debezium's `buildPublishOptionValue`): the server then leaves the skipped operations
/// (and transactions of nothing else) out of the stream.
pub(crate) fn publish_option(config: &PostgresConfig) -> Option<String> {
    if !config.skipped_operations_set || config.skipped_operations.is_empty() {
        return None;
    }
    let ops: Vec<&str> = [
        ('c', "insert"),
        ('u', "update"),
        ('d', "delete"),
        ('t', "truncate"),
    ]
    .into_iter()
    .filter(|(op, _)| !config.skips(*op))
    .map(|(_, name)| name)
    .collect();
    Some(ops.join(","))
}

/// The captured tables as a publication's table list (`"schema"."table", …`). Errors: none
/// captured (Debezium's message), the database's.
async fn publication_tables(
    client: &tokio_postgres::Client,
    config: &PostgresConfig,
) -> ConnectResult<Vec<(String, String)>> {
    let tables: Vec<(String, String)> = snapshot::captured_tables(client, config)
        .await?
        .into_iter()
        .map(|t| (t.schema, t.table))
        .collect();
    if tables.is_empty() {
        return Err(ConnectError::connect(format!(
            "No table filters found for filtered publication {}",
            config.publication_name
        )));
    }
    Ok(tables)
}

fn table_list(tables: &[(String, String)]) -> String {
    tables
        .iter()
        .map(|(s, t)| format!("{}.{}", quote_ident(s), quote_ident(t)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Creates the publication when missing, or brings a `filtered` one up to the captured
/// tables, as Debezium's `PostgresReplicationConnection.initPublication` does per
/// `publication.autocreate.mode` (`all_tables`, `filtered`, `no_tables`, `disabled`), with
/// `WITH (publish = …)` from `skipped.operations`. Errors: the database's; a missing
/// publication under `disabled`; an existing all-tables publication under `filtered`.
pub(crate) async fn prepare_publication(
    client: &tokio_postgres::Client,
    config: &PostgresConfig,
) -> ConnectResult<()> {
    let all_tables: Option<bool> = client
        .query_opt(
            "SELECT puballtables FROM pg_catalog.pg_publication WHERE pubname = $1",
            &[&config.publication_name],
        )
        .await
        .map_err(snapshot::pg_error("looking for the publication"))?
        .map(|row| row.get(0));
    let name = quote_ident(&config.publication_name);
    let with = publish_option(config)
        .map(|ops| format!(" WITH (publish = '{ops}')"))
        .unwrap_or_default();
    let sql = match (all_tables, config.publication_autocreate) {
        (None, PublicationAutocreate::Disabled) => {
            return Err(ConnectError::connect(
                "Publication autocreation is disabled, please create one and restart the connector.",
            ))
        }
        (None, PublicationAutocreate::AllTables) => {
            format!("CREATE PUBLICATION {name} FOR ALL TABLES{with}")
        }
        (None, PublicationAutocreate::NoTables) => format!("CREATE PUBLICATION {name}{with}"),
        (None, PublicationAutocreate::Filtered) => {
            let tables = publication_tables(client, config).await?;
            format!("CREATE PUBLICATION {name} FOR TABLE {}{with}", table_list(&tables))
        }
        (Some(true), PublicationAutocreate::Filtered) => {
            return Err(ConnectError::connect(format!(
                "A logical publication for all tables named '{}' for plugin 'pgoutput' and database '{}' is already active on the server and can not be altered. If you need to exclude some tables or include only specific subset, please recreate the publication with necessary configuration or let plugin recreate it by dropping existing publication. Otherwise please change the 'publication.autocreate.mode' property to 'all_tables'.",
                config.publication_name, config.dbname
            )))
        }
        (Some(false), PublicationAutocreate::Filtered) => {
            let mut tables = publication_tables(client, config).await?;
            let mut published: Vec<(String, String)> = client
                .query(
                    "SELECT schemaname, tablename FROM pg_catalog.pg_publication_tables WHERE pubname = $1",
                    &[&config.publication_name],
                )
                .await
                .map_err(snapshot::pg_error("reading the publication's tables"))?
                .into_iter()
                .map(|row| (row.get(0), row.get(1)))
                .collect();
            tables.sort();
            published.sort();
            if tables == published {
                return Ok(());
            }
            format!("ALTER PUBLICATION {name} SET TABLE {}{}", table_list(&tables), {
                publish_option(config)
                    .map(|ops| format!("; ALTER PUBLICATION {name} SET (publish = '{ops}')"))
                    .unwrap_or_default()
            })
        }
        (Some(_), _) => return Ok(()),
    };
    tracing::info!("Creating or updating publication with statement '{sql}'");
    client
        .batch_execute(&sql)
        .await
        .map_err(snapshot::pg_error("creating the publication"))
}

/// Errors before PostgreSQL 14: the replication client asks `pgoutput` for logical decoding
/// messages (`messages 'true'`), an option older servers refuse. With
/// `provide.transaction.metadata` and `pgoutput`, errors before PostgreSQL 15: PostgreSQL 14's `pgoutput`
/// sends a transaction's Begin message at the transaction's first WAL record, a position
/// the replication client does not pass on (the BEGIN record's `lsn`); from 15 on it sends
/// it with the first change, at that change's position. Errors: those (with the server's
/// version), the database's.
pub(crate) async fn refuse_older_than_14(
    client: &tokio_postgres::Client,
    config: &PostgresConfig,
) -> ConnectResult<()> {
    let row = client
        .query_one("SELECT current_setting('server_version_num')::int", &[])
        .await
        .map_err(snapshot::pg_error("reading the server's version"))?;
    let version: i32 = row.get(0);
    if version < 140_000 {
        return Err(ConnectError::connect(format!(
            "PostgreSQL {}.{}: Tributary's native PostgresConnector streams from PostgreSQL 14 or later; {}",
            version / 10_000,
            version % 10_000,
            crate::config::USE_HOSTED
        )));
    }
    // pgoutput before 15 sends BEGIN at a position the replication client does not pass on;
    // decoderbufs' BEGIN has one of its own.
    if version < 150_000
        && config.provide_transaction_metadata
        && config.plugin == crate::config::LogicalDecoder::PgOutput
    {
        return Err(ConnectError::connect(format!(
            "provide.transaction.metadata=true: Tributary's native PostgresConnector provides transaction metadata from PostgreSQL 15 on (this server is {}.{}); {}",
            version / 10_000,
            version % 10_000,
            crate::config::USE_HOSTED
        )));
    }
    Ok(())
}

/// Errors on a captured partitioned table: its changes come from its partitions' relations,
/// which this version does not map back to it (`publish_via_partition_root`), and a change is
/// never dropped. Errors: that (named), the database's.
pub(crate) async fn refuse_partitioned(
    client: &tokio_postgres::Client,
    config: &PostgresConfig,
) -> ConnectResult<()> {
    let rows = client
        .query(
            "SELECT n.nspname, c.relname FROM pg_catalog.pg_class c \
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'p'",
            &[],
        )
        .await
        .map_err(snapshot::pg_error("listing partitioned tables"))?;
    for row in rows {
        let (schema, table): (String, String) = (row.get(0), row.get(1));
        if config.tables.includes(&schema, &table) {
            return Err(ConnectError::connect(format!(
                "{schema}.{table} is a partitioned table, which Tributary's native PostgresConnector does not stream yet; {}",
                crate::config::USE_HOSTED
            )));
        }
    }
    Ok(())
}

/// Whether the slot exists in this database. Errors: the database's; a slot of another
/// plugin than `plugin.name`'s.
pub(crate) async fn slot_exists(
    client: &tokio_postgres::Client,
    config: &PostgresConfig,
) -> ConnectResult<bool> {
    let slot = client
        .query_opt(
            "SELECT plugin FROM pg_catalog.pg_replication_slots \
             WHERE slot_name = $1 AND database = current_database()",
            &[&config.slot_name],
        )
        .await
        .map_err(snapshot::pg_error("looking for the replication slot"))?;
    let Some(row) = slot else { return Ok(false) };
    let plugin: String = row.get(0);
    if plugin != config.plugin.name() {
        return Err(ConnectError::connect(format!(
            "replication slot '{}' uses plugin {plugin}, not {} (plugin.name)",
            config.slot_name,
            config.plugin.name()
        )));
    }
    Ok(true)
}

/// The slot's confirmed position (`confirmed_flush_lsn`), where a stream started without a
/// position begins. Errors: the database's.
pub(crate) async fn slot_confirmed_lsn(
    client: &tokio_postgres::Client,
    config: &PostgresConfig,
) -> ConnectResult<Option<i64>> {
    let row = client
        .query_opt(
            "SELECT (confirmed_flush_lsn - '0/0'::pg_lsn)::bigint FROM pg_catalog.pg_replication_slots \
             WHERE slot_name = $1 AND database = current_database()",
            &[&config.slot_name],
        )
        .await
        .map_err(snapshot::pg_error("reading the replication slot's position"))?;
    Ok(row.and_then(|r| r.get::<_, Option<i64>>(0)))
}

/// Drops the slot (`slot.drop.on.stop`), waiting up to 10 s for the server to let go of it
/// after the replication connection closed. Failures are logged, not returned: the task is
/// stopping.
pub async fn drop_slot(config: &PostgresConfig) {
    let client = match snapshot::connect(config).await {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(slot = %config.slot_name, "could not drop the replication slot: {e}");
            return;
        }
    };
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let dropped = client
            .query(
                "SELECT pg_catalog.pg_drop_replication_slot(slot_name) FROM pg_catalog.pg_replication_slots \
                 WHERE slot_name = $1 AND database = current_database() AND NOT active",
                &[&config.slot_name],
            )
            .await;
        let left = client
            .query_opt(
                "SELECT 1 FROM pg_catalog.pg_replication_slots WHERE slot_name = $1 AND database = current_database()",
                &[&config.slot_name],
            )
            .await;
        match (dropped, left) {
            (_, Ok(None)) => {
                tracing::info!(slot = %config.slot_name, "Dropped the replication slot (slot.drop.on.stop)");
                return;
            }
            _ if tokio::time::Instant::now() >= deadline => {
                tracing::warn!(slot = %config.slot_name, "could not drop the replication slot: still in use");
                return;
            }
            _ => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
}
