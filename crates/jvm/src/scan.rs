//! Finding the Java connector, transformation and predicate plugins of `plugin.path` (Connect's `Plugins` /
//! `DelegatingClassLoader`, KIP-898's `plugin.discovery`), in a short-lived `java` process at
//! worker startup: listing plugins never starts a JVM inside the worker.

use std::process::Command;

use tributary_api::connector::ConnectorType;

use crate::transform::JavaTransformDesc;
use crate::vm::{java_home, JvmSettings};

/// A connector plugin found on `plugin.path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaConnectorDesc {
    /// The connector's class name.
    pub class: String,
    /// What its `version()` returned (Connect's `PluginDesc.version`).
    pub version: String,
    pub connector_type: ConnectorType,
    /// Where it was found (a jar or directory URL).
    pub location: String,
}

/// Runs `io.tributary.jvm.PluginScanner` over `settings.plugin_path`: its connectors. Errors:
/// no `java`, the bridge not on the class path, or Connect refusing the path (e.g.
/// `hybrid_fail` with a plugin that lacks its service manifest), with the process's output.
pub fn scan(settings: &JvmSettings) -> Result<Vec<JavaConnectorDesc>, String> {
    scan_output(settings).map(|out| parse_scan(&out))
}

/// What one scan of `plugin.path` found ([`scan_all`]).
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// The connectors.
    pub connectors: Vec<JavaConnectorDesc>,
    /// The transformations, predicates, converters and header converters.
    pub transforms: Vec<JavaTransformDesc>,
    /// Whether a `service_load` scan (ServiceLoader manifests only) found exactly the same
    /// plugins as the configured `plugin.discovery` did: every plugin has its manifest, so
    /// the in-process JVM can skip the reflective scan ([`JvmSettings::service_load_equivalent`]).
    pub service_load_equivalent: bool,
}

/// [`scan`], with the transformations and predicates found too (one scan), and whether
/// `service_load` finds the same plugins.
pub fn scan_all(settings: &JvmSettings) -> Result<Scan, String> {
    let out = scan_output(settings)?;
    Ok(Scan {
        connectors: parse_scan(&out),
        transforms: crate::transform::parse_scan(&out),
        service_load_equivalent: out.lines().any(|l| l == "service_load_equivalent"),
    })
}

/// The scanner's standard output.
fn scan_output(settings: &JvmSettings) -> Result<String, String> {
    let java = java_home()
        .map(|h| h.join("bin/java"))
        .unwrap_or_else(|_| "java".into());
    let mut cmd = Command::new(&java);
    // The worker's JVM options too, so that one the JVM refuses stops startup here rather
    // than failing the first Java connector.
    cmd.args(&settings.options);
    cmd.arg("-Xshare:auto").arg("-XX:TieredStopAtLevel=1");
    cmd.arg("-cp").arg(settings.expanded_classpath());
    cmd.arg("io.tributary.jvm.PluginScanner")
        .arg(&settings.plugin_path)
        .arg(&settings.discovery);
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run {}: {e}", java.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!(
            "scanning plugin.path failed ({}):\n{}",
            out.status,
            tail.join("\n")
        ));
    }
    Ok(stdout.into_owned())
}

/// The `connector\t<type>\t<class>\t<version>\t<location>` lines of the scanner's output
/// (other lines, e.g. plugin logging on stdout, are skipped).
pub fn parse_scan(stdout: &str) -> Vec<JavaConnectorDesc> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            if f.next()? != "connector" {
                return None;
            }
            let connector_type = match f.next()? {
                "source" => ConnectorType::Source,
                "sink" => ConnectorType::Sink,
                _ => return None,
            };
            Some(JavaConnectorDesc {
                class: f.next()?.to_string(),
                version: f.next()?.to_string(),
                connector_type,
                location: f.next().unwrap_or_default().to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scanner_lines_become_descriptions_and_noise_is_skipped() {
        let out = "12:00 INFO something\nconnector\tsink\ta.B\t1.0\tfile:/p/x/\nconnector\tsource\tc.D\tundefined\tfile:/p/y.jar\n";
        let d = parse_scan(out);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].class, "a.B");
        assert_eq!(d[0].connector_type, ConnectorType::Sink);
        assert_eq!(d[1].version, "undefined");
        assert_eq!(d[1].location, "file:/p/y.jar");
    }
}
