//! The throwaway PostgreSQL of `scripts/postgres` for tests: psql calls, a database per test
//! dropped with its replication slot, and the config of Debezium's PostgreSQL source for it.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use crate::missing;

const PG_SOURCE: &str = "io.debezium.connector.postgresql.PostgresConnector";

/// The throwaway PostgreSQL cluster of `scripts/postgres` (`PG_HOST`, `PG_PORT`, `PG_USER`,
/// `PG_PASSWORD` in the environment).
#[derive(Clone)]
pub struct Pg {
    /// `PG_HOST` (default 127.0.0.1).
    pub host: String,
    /// `PG_PORT`.
    pub port: String,
    /// `PG_USER` (default postgres).
    pub user: String,
    /// `PG_PASSWORD` (default postgres).
    pub password: String,
}

impl Pg {
    pub fn from_env() -> Option<Pg> {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        let Some(port) = var("PG_PORT") else {
            return missing(
                "PG_PORT is not set (scripts/test starts PostgreSQL with scripts/postgres and sets it)",
            );
        };
        Some(Pg {
            host: var("PG_HOST").unwrap_or_else(|| "127.0.0.1".into()),
            port,
            user: var("PG_USER").unwrap_or_else(|| "postgres".into()),
            password: var("PG_PASSWORD").unwrap_or_else(|| "postgres".into()),
        })
    }

    /// Runs `sql` in `db` with psql (unaligned, tuples only, stopping at the first error).
    pub fn psql(&self, db: &str, sql: &str) -> std::io::Result<std::process::Output> {
        Command::new("psql")
            .args([
                "-h",
                &self.host,
                "-p",
                &self.port,
                "-U",
                &self.user,
                "-d",
                db,
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                sql,
            ])
            .env("PGPASSWORD", &self.password)
            .output()
    }

    /// Runs `sql` in `db`; its output. Panics with psql's error.
    pub fn sql(&self, db: &str, sql: &str) -> String {
        let out = self.psql(db, sql).expect("running psql");
        assert!(
            out.status.success(),
            "psql failed on {sql:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// A new empty database named `name`; dropped, with the replication slot the source
    /// connector made for it (`slot_<name>`), when the returned guard is (slots outlive their
    /// task, and a cluster has few: `max_replication_slots`).
    #[must_use = "the database and its slot are dropped with the guard"]
    pub fn create_db(&self, name: &str) -> TestDb {
        self.sql("postgres", &format!("CREATE DATABASE {name}"));
        TestDb {
            pg: self.clone(),
            name: name.to_string(),
        }
    }

    /// Runs `sql` in `db`; its output when it succeeded (for clean-up, which must not panic).
    pub fn try_sql(&self, db: &str, sql: &str) -> Option<String> {
        self.psql(db, sql)
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    }
}

/// A test's database; see [`Pg::create_db`]. Declared before the workers of a test, it is
/// dropped after them, once the slot is no longer in use.
pub struct TestDb {
    pg: Pg,
    /// The database's name.
    pub name: String,
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let slot = format!("slot_{}", self.name);
        let drop_slot = format!(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots \
             WHERE slot_name = '{slot}' AND NOT active"
        );
        let left = format!("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '{slot}'");
        // A stopped worker's walsender lets go of the slot within moments.
        let deadline = std::time::Instant::now() + Duration::from_secs(15);
        while std::time::Instant::now() < deadline {
            // A failed drop (the slot still active) is tried again; the count says when done.
            let _dropped = self.pg.try_sql("postgres", &drop_slot);
            if self.pg.try_sql("postgres", &left).as_deref() == Some("0") {
                break;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let drop_db = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if self.pg.try_sql("postgres", &drop_db).is_none() {
            eprintln!("could not drop test database {}", self.name);
        }
    }
}

impl Pg {
    /// The Debezium PostgreSQL source connector's config for table `public.customers` of
    /// `db`, its topics prefixed `prefix`.
    pub fn source_config(&self, db: &str, prefix: &str) -> BTreeMap<String, String> {
        [
            ("connector.class", PG_SOURCE),
            ("tasks.max", "1"),
            ("database.hostname", &self.host),
            ("database.port", &self.port),
            ("database.user", &self.user),
            ("database.password", &self.password),
            ("database.dbname", db),
            ("topic.prefix", prefix),
            ("plugin.name", "pgoutput"),
            // Slot and publication named after the database: tests never share them.
            ("slot.name", &format!("slot_{db}")),
            ("publication.name", &format!("pub_{db}")),
            ("publication.autocreate.mode", "filtered"),
            ("table.include.list", "public.customers"),
            ("snapshot.mode", "initial"),
            // The slot outlives the task: a restarted task resumes from it.
            ("slot.drop.on.stop", "false"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }
}

/// A PostgreSQL cluster of the test's own (`scripts/postgres` on a free port), for faults
/// that strike the whole server (a restart) without touching the tests that share the
/// cluster of `PG_PORT`. Deleted (`scripts/postgres reset`) when dropped.
pub struct OwnCluster {
    /// Its superuser's connection.
    pub pg: Pg,
}

impl OwnCluster {
    fn script(&self, command: &str) -> std::process::Output {
        Command::new(crate::repo_root().join("scripts/postgres"))
            .arg(command)
            .env("PG_PORT", &self.pg.port)
            .output()
            .expect("running scripts/postgres")
    }

    /// Runs `scripts/postgres command`; panics with its error output when it fails.
    fn must(&self, command: &str) {
        let out = self.script(command);
        assert!(
            out.status.success(),
            "scripts/postgres {command} on {}: {}",
            self.pg.port,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts a new cluster on a free port, like the shared one's (`PG_USER` and
    /// `PG_PASSWORD` of `shared`). Panics when it does not start.
    pub fn start(shared: &Pg) -> OwnCluster {
        let cluster = OwnCluster {
            pg: Pg {
                port: crate::faults::free_port().to_string(),
                ..shared.clone()
            },
        };
        cluster.must("start");
        cluster
    }

    /// Stops the server at once, as a crash stops it (`scripts/postgres crash`: immediate
    /// shutdown, every session cut; crash recovery at the next start).
    pub fn crash(&self) {
        self.must("crash");
    }

    /// Stops the server as an administrator restarting it does (fast shutdown: sessions
    /// ended, a shutdown checkpoint written once every walsender's client confirmed all it
    /// was sent). Panics when it is still running after `scripts/postgres stop` (60 s).
    pub fn stop(&self) {
        self.script("stop");
        let status = self.script("status");
        assert!(
            !status.status.success(),
            "the server on {} did not stop: {}",
            self.pg.port,
            String::from_utf8_lossy(&status.stdout)
        );
    }

    /// Starts the stopped server again; returns once it answers.
    pub fn start_again(&self) {
        self.must("start");
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        let out = self.script("reset");
        if !out.status.success() {
            eprintln!(
                "could not delete the cluster on {}: {}",
                self.pg.port,
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
