//! Apache Kafka Connect (Java) worker processes for the benchmarks that run it side by side with
//! Tributary: the JVM command line `connect-distributed.sh` would use, with Connect's jars from
//! Maven Central (fetched by `scripts/connect-java`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::worker::Worker;

/// How the Java worker is started: the `java` binary, its options and classpath.
pub struct JavaCmd {
    /// The `java` binary (`$JAVA_HOME/bin/java`, else `java` from `PATH`).
    pub java: PathBuf,
    /// `-Xms…` and `-Xmx…`.
    pub heap: Vec<String>,
    /// `kafka-run-class.sh`'s default performance and JMX options, and the log4j2 file.
    pub jvm: Vec<String>,
    /// Connect's jars.
    pub classpath: String,
}

/// The benchmarks' Java source connector (`bench/java/dev/tributary/bench`): per task, the
/// records, source partitions and offsets of Tributary's VerifiableSource (config keys `topic`,
/// `throughput`, `tasks.max`, `complete.record.data`; key the task number, value the sequence
/// number; partition `{"id": task}`, offset `{"seqno": n}`), at `throughput` records/s per
/// task, resuming after the committed offset.
pub const BENCH_SOURCE_CONNECTOR: &str = "dev.tributary.bench.SequenceSourceConnector";
/// Its task class, as Connect writes it into task configs.
pub const BENCH_SOURCE_TASK: &str = "dev.tributary.bench.SequenceSourceTask";

/// `kafka-run-class.sh`'s `KAFKA_JVM_PERFORMANCE_OPTS` and `KAFKA_JMX_OPTS` defaults.
pub const KAFKA_JVM_OPTS: &[&str] = &[
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15",
    "-Djava.awt.headless=true",
    "-Dcom.sun.management.jmxremote",
    "-Dcom.sun.management.jmxremote.authenticate=false",
    "-Dcom.sun.management.jmxremote.ssl=false",
];

/// The Java worker's log4j2 configuration: warnings, plus the herder's and REST server's
/// INFO lines (the level `scripts/connect-java` uses), on stderr.
pub const JAVA_LOG4J2: &str = "status = warn
appender.console.type = Console
appender.console.name = STDERR
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.console.ref = STDERR
logger.connect.name = org.apache.kafka.connect.runtime.distributed.DistributedHerder
logger.connect.level = INFO
logger.rest.name = org.apache.kafka.connect.runtime.rest.RestServer
logger.rest.level = INFO
";

/// Bytes of a JVM memory size such as `256M`, `2G` or `512m`.
pub fn jvm_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1 << shift)
}

/// A free TCP port on 127.0.0.1 (free when asked; a Java worker's REST listener takes it).
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

impl JavaCmd {
    /// Fetches Connect's jars through `script` and builds the command line with heap
    /// `-Xmx<heap>` (and Connect's `-Xms256M`, or `heap` when smaller) and the log4j2
    /// configuration file `log4j` (write [`JAVA_LOG4J2`] there).
    pub fn new(script: &Path, heap: &str, log4j: &Path) -> Result<JavaCmd, String> {
        let out = Command::new(script)
            .arg("classpath")
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("{}: {e}", script.display()))?;
        if !out.status.success() {
            return Err(format!(
                "{} classpath failed (needs java and mvn)",
                script.display()
            ));
        }
        let classpath = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_string();
        let max = jvm_size(heap).ok_or_else(|| format!("--java-heap {heap}: not a JVM size"))?;
        let initial = if max < 256 << 20 { heap } else { "256M" };
        let java = std::env::var_os("JAVA_HOME")
            .map(|h| PathBuf::from(h).join("bin/java"))
            .unwrap_or_else(|| PathBuf::from("java"));
        let mut jvm: Vec<String> = KAFKA_JVM_OPTS.iter().map(|s| s.to_string()).collect();
        jvm.push(format!("-Dlog4j2.configurationFile={}", log4j.display()));
        Ok(JavaCmd {
            java,
            heap: vec![format!("-Xms{initial}"), format!("-Xmx{heap}")],
            jvm,
            classpath,
        })
    }

    /// [`JavaCmd::new`] as the benchmarks use it: `script` defaults to this workspace's
    /// `scripts/connect-java`, and [`JAVA_LOG4J2`] is written to `log4j2.properties` in `dir`.
    pub fn for_benchmark(script: Option<&Path>, heap: &str, dir: &Path) -> Result<JavaCmd, String> {
        let default_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/connect-java");
        let log4j = dir.join("log4j2.properties");
        std::fs::write(&log4j, JAVA_LOG4J2).map_err(|e| format!("{}: {e}", log4j.display()))?;
        JavaCmd::new(script.unwrap_or(&default_script), heap, &log4j)
    }

    /// Compiles the benchmarks' own Java plugins (`bench/java`: [`BENCH_SOURCE_CONNECTOR`],
    /// which gives Java workers the load Tributary's built-in VerifiableSource gives Tributary
    /// workers) with `javac` into `out`, with a ServiceLoader manifest, and adds `out` to the
    /// classpath.
    pub fn add_bench_plugins(&mut self, out: &Path) -> Result<(), String> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("java");
        let mut sources = Vec::new();
        let mut dirs = vec![src.clone()];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).map_err(|e| format!("{}: {e}", d.display()))? {
                let p = e.map_err(|e| e.to_string())?.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "java") {
                    sources.push(p);
                }
            }
        }
        let javac = std::env::var_os("JAVA_HOME")
            .map(|h| PathBuf::from(h).join("bin/javac"))
            .unwrap_or_else(|| PathBuf::from("javac"));
        let status = Command::new(&javac)
            .arg("-nowarn")
            .arg("-cp")
            .arg(&self.classpath)
            .arg("-d")
            .arg(out)
            .args(&sources)
            .status()
            .map_err(|e| format!("{}: {e}", javac.display()))?;
        if !status.success() {
            return Err(format!("javac of {} failed", src.display()));
        }
        let services = out.join("META-INF/services");
        std::fs::create_dir_all(&services).map_err(|e| e.to_string())?;
        std::fs::write(
            services.join("org.apache.kafka.connect.source.SourceConnector"),
            format!("{BENCH_SOURCE_CONNECTOR}\n"),
        )
        .map_err(|e| e.to_string())?;
        self.classpath = format!("{}:{}", self.classpath, out.display());
        Ok(())
    }

    /// Writes `worker.properties` (from `props`) into `dir` and starts
    /// `ConnectDistributed worker.properties` there, its log (stderr) in `worker.log`. Standard
    /// output goes to the log too, or nowhere with `quiet` (where connectors such as
    /// VerifiableSource print a line per record).
    pub fn spawn(
        &self,
        dir: &Path,
        props: &[(String, String)],
        quiet: bool,
    ) -> Result<Worker, String> {
        let mut cmd = Command::new(&self.java);
        cmd.args(&self.heap)
            .args(&self.jvm)
            .arg("-cp")
            .arg(&self.classpath)
            .arg("org.apache.kafka.connect.cli.ConnectDistributed")
            .arg("worker.properties");
        Worker::start(cmd, dir, props, "worker.log", quiet)
            .map_err(|e| format!("{}: {e}", self.java.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jvm_sizes() {
        assert_eq!(jvm_size("256M"), Some(256 << 20));
        assert_eq!(jvm_size("2G"), Some(2 << 30));
        assert_eq!(jvm_size("512m"), Some(512 << 20));
        assert_eq!(jvm_size("1024"), Some(1024));
        assert_eq!(jvm_size("2X"), None);
        assert_eq!(jvm_size(""), None);
    }
}
