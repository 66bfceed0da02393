//! The admin CLI (issue #35; kcctl is the model): `tributary get|describe|restart|pause|resume|
//! stop|delete|offsets|logger|patch` against any Connect cluster's REST API, with contexts
//! (`tributary config …`, see [`crate::contexts`]) and shell completion. Output is a human
//! table by default, `-o json` or `-o yaml` for scripts (the REST answers as they are). An
//! error answer is one line, `tributary: <status> <Connect's message>`, and exit code 1.

use std::path::PathBuf;
use std::process::ExitCode;

use reqwest::Method;
use serde_json::{json, Map, Value};

use crate::connect_client::{segment, ConnectClient, RestError};
use crate::contexts::{Context, Contexts};

/// Where the cluster is and how output is shown: the options every admin command takes.
#[derive(clap::Args, Debug, Clone)]
pub struct Target {
    /// A worker's REST URL (repeatable; default: the context's, else http://localhost:8083).
    #[arg(long = "url", global = true)]
    pub urls: Vec<String>,
    /// Basic auth as `name:password` (default: the context's).
    #[arg(long, global = true)]
    pub user: Option<String>,
    /// PEM file of CA certificates for `https://` URLs (default: the context's).
    #[arg(long, global = true)]
    pub cacert: Option<PathBuf>,
    /// The context to use (default: the current one; see `tributary config`).
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// Output format.
    #[arg(
        short = 'o',
        long = "output",
        value_enum,
        default_value = "table",
        global = true
    )]
    pub output: Output,
}

/// How results are printed.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Aligned columns for people.
    Table,
    /// The REST answers as JSON.
    Json,
    /// The REST answers as YAML.
    Yaml,
}

/// What `get` lists.
#[derive(clap::Subcommand, Debug)]
pub enum Get {
    /// Connectors with their type, state, running tasks and worker.
    Connectors,
    /// Installed plugins (connectors, converters, transformations, predicates…).
    Plugins,
    /// A connector's committed offsets (KIP-875).
    Offsets {
        /// The connector.
        connector: String,
    },
    /// The worker's loggers and levels (KIP-495).
    Loggers,
}

/// What `describe` shows.
#[derive(clap::Subcommand, Debug)]
pub enum Describe {
    /// Config, status, tasks, topics and offsets of a connector in one view.
    Connector {
        /// The connector.
        name: String,
    },
}

/// What `restart` restarts.
#[derive(clap::Subcommand, Debug)]
pub enum Restart {
    /// A connector (KIP-745: with its tasks, or only the failed instances).
    Connector {
        /// The connector.
        name: String,
        /// Restart its tasks too.
        #[arg(long)]
        include_tasks: bool,
        /// Only the instances that failed.
        #[arg(long)]
        only_failed: bool,
    },
    /// One task.
    Task {
        /// The connector.
        name: String,
        /// The task number.
        task: u32,
    },
}

/// `offsets` operations (KIP-875; the connector must be STOPPED).
#[derive(clap::Subcommand, Debug)]
pub enum Offsets {
    /// Alters offsets from a JSON file in Connect's `{"offsets": [...]}` form.
    Alter {
        /// The connector.
        connector: String,
        /// The file with the offsets.
        #[arg(long)]
        file: PathBuf,
    },
    /// Resets (deletes) all of a connector's offsets.
    Reset {
        /// The connector.
        connector: String,
    },
}

/// `logger` operations (KIP-495, KIP-976).
#[derive(clap::Subcommand, Debug)]
pub enum Logger {
    /// Sets a logger's level on this worker, or on every worker (`--scope cluster`).
    Set {
        /// The logger (namespace), e.g. `org.apache.kafka.connect`.
        logger: String,
        /// The level: ERROR, WARN, INFO, DEBUG, TRACE…
        level: String,
        /// `worker` (default) or `cluster`.
        #[arg(long)]
        scope: Option<String>,
    },
}

/// `config` (contexts) operations.
#[derive(clap::Subcommand, Debug)]
pub enum ConfigCmd {
    /// Adds or replaces a context (and makes it current when it is the first).
    SetContext {
        /// The context's name.
        name: String,
        /// A worker's REST URL (repeatable).
        #[arg(long = "cluster", required = true)]
        urls: Vec<String>,
        /// Basic auth as `name:password`.
        #[arg(long = "username")]
        user: Option<String>,
        /// PEM file of CA certificates.
        #[arg(long = "ca-file")]
        cacert: Option<PathBuf>,
    },
    /// Makes a context the current one.
    UseContext {
        /// The context's name.
        name: String,
    },
    /// Lists the contexts (`*` marks the current one).
    GetContexts,
    /// Prints the current context's name.
    CurrentContext,
}

/// An admin command.
#[derive(Debug)]
pub enum AdminCommand {
    /// `get …`.
    Get(Get),
    /// `describe …`.
    Describe(Describe),
    /// `restart …`.
    Restart(Restart),
    /// `pause NAME`.
    Pause(String),
    /// `resume NAME`.
    Resume(String),
    /// `stop NAME`.
    Stop(String),
    /// `delete NAME`.
    Delete(String),
    /// `offsets …`.
    Offsets(Offsets),
    /// `logger …`.
    Logger(Logger),
    /// `patch NAME key=value… --remove key…` (KIP-477).
    Patch {
        /// The connector.
        name: String,
        /// `key=value` pairs to set.
        set: Vec<String>,
        /// Keys to remove.
        remove: Vec<String>,
    },
}

/// The client for `target`: explicit options first, then the named or current context, then
/// `http://localhost:8083`.
fn client(target: &Target) -> Result<ConnectClient, String> {
    let contexts = Contexts::load()?;
    let context: Context = contexts
        .resolve(target.context.as_deref())?
        .cloned()
        .unwrap_or_default();
    let urls = if !target.urls.is_empty() {
        target.urls.clone()
    } else if !context.urls.is_empty() {
        context.urls.clone()
    } else {
        vec!["http://localhost:8083".to_string()]
    };
    let user = target.user.clone().or(context.user.clone());
    let cacert = target.cacert.clone().or(context.cacert.clone());
    ConnectClient::new(&urls, user.as_deref(), cacert.as_deref())
}

/// Prints `value` as JSON or YAML (for `-o json|yaml`); false for `table`.
fn print_structured(output: Output, value: &Value) -> Result<bool, String> {
    match output {
        Output::Table => Ok(false),
        Output::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(value).map_err(|e| e.to_string())?
            );
            Ok(true)
        }
        Output::Yaml => {
            print!(
                "{}",
                serde_norway::to_string(value).map_err(|e| e.to_string())?
            );
            Ok(true)
        }
    }
}

/// Aligned columns: `header` then `rows`, two spaces apart.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if i < widths.len() {
                widths[i] = widths[i].max(c.chars().count());
            }
        }
    }
    let line = |cells: Vec<String>| {
        let mut out = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(c);
            } else {
                out.push_str(&format!("{c:<w$}  ", w = widths[i]));
            }
        }
        out.trim_end().to_string()
    };
    let mut out = vec![line(header.iter().map(|h| h.to_string()).collect())];
    out.extend(rows.iter().map(|r| line(r.clone())));
    out.join("\n")
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn rest_err(what: &str) -> impl Fn(RestError) -> String + '_ {
    move |e| format!("{what}: {e}")
}

async fn get_connectors(c: &ConnectClient, output: Output) -> Result<(), String> {
    let all = c
        .get("/connectors?expand=status&expand=info")
        .await
        .map_err(rest_err("GET /connectors"))?;
    if print_structured(output, &all)? {
        return Ok(());
    }
    let mut rows = Vec::new();
    if let Some(obj) = all.as_object() {
        for (name, v) in obj {
            let status = &v["status"];
            let tasks = status["tasks"].as_array().cloned().unwrap_or_default();
            let running = tasks.iter().filter(|t| t["state"] == "RUNNING").count();
            rows.push(vec![
                name.clone(),
                text(&status["type"]),
                text(&status["connector"]["state"]),
                format!("{running}/{}", tasks.len()),
                text(&status["connector"]["worker_id"]),
            ]);
        }
    }
    println!(
        "{}",
        table(&["NAME", "TYPE", "STATE", "TASKS", "WORKER"], &rows)
    );
    Ok(())
}

async fn get_plugins(c: &ConnectClient, output: Output) -> Result<(), String> {
    let all = c
        .get("/connector-plugins?connectorsOnly=false")
        .await
        .map_err(rest_err("GET /connector-plugins"))?;
    if print_structured(output, &all)? {
        return Ok(());
    }
    let rows: Vec<Vec<String>> = all
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| vec![text(&p["type"]), text(&p["class"]), text(&p["version"])])
                .collect()
        })
        .unwrap_or_default();
    println!("{}", table(&["TYPE", "CLASS", "VERSION"], &rows));
    Ok(())
}

async fn get_offsets(c: &ConnectClient, name: &str, output: Output) -> Result<(), String> {
    let offsets = c
        .get(&format!("/connectors/{}/offsets", segment(name)))
        .await
        .map_err(rest_err(&format!("GET /connectors/{name}/offsets")))?;
    if print_structured(output, &offsets)? {
        return Ok(());
    }
    println!("{}", offsets_table(&offsets));
    Ok(())
}

fn offsets_table(offsets: &Value) -> String {
    let rows: Vec<Vec<String>> = offsets["offsets"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|o| vec![o["partition"].to_string(), o["offset"].to_string()])
                .collect()
        })
        .unwrap_or_default();
    table(&["PARTITION", "OFFSET"], &rows)
}

async fn get_loggers(c: &ConnectClient, output: Output) -> Result<(), String> {
    let all = c
        .get("/admin/loggers")
        .await
        .map_err(rest_err("GET /admin/loggers"))?;
    if print_structured(output, &all)? {
        return Ok(());
    }
    let rows: Vec<Vec<String>> = all
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| vec![k.clone(), text(&v["level"]), text(&v["last_modified"])])
                .collect()
        })
        .unwrap_or_default();
    println!("{}", table(&["LOGGER", "LEVEL", "LAST MODIFIED"], &rows));
    Ok(())
}

async fn describe_connector(c: &ConnectClient, name: &str, output: Output) -> Result<(), String> {
    let n = segment(name);
    let what = |p: &str| format!("GET /connectors/{name}{p}");
    let config = c
        .get(&format!("/connectors/{n}/config"))
        .await
        .map_err(rest_err(&what("/config")))?;
    let status = c
        .get(&format!("/connectors/{n}/status"))
        .await
        .map_err(rest_err(&what("/status")))?;
    // Topics (KIP-558) and offsets (KIP-875) may be disabled or refused: shown as absent.
    let topics = c.get(&format!("/connectors/{n}/topics")).await.ok();
    let offsets = c.get(&format!("/connectors/{n}/offsets")).await.ok();
    let topic_list: Vec<Value> = topics
        .as_ref()
        .and_then(|t| t[name]["topics"].as_array().cloned())
        .unwrap_or_default();
    let all = json!({
        "name": name,
        "type": status["type"],
        "config": config,
        "status": status,
        "topics": topic_list,
        "offsets": offsets.as_ref().map(|o| o["offsets"].clone()).unwrap_or(Value::Null),
    });
    if print_structured(output, &all)? {
        return Ok(());
    }
    println!("Name:    {name}");
    println!("Type:    {}", text(&status["type"]));
    println!(
        "State:   {} (worker {})",
        text(&status["connector"]["state"]),
        text(&status["connector"]["worker_id"])
    );
    if let Some(trace) = status["connector"]["trace"].as_str() {
        println!("Trace:   {}", trace.lines().next().unwrap_or_default());
    }
    println!("Config:");
    let mut keys: Vec<(&String, &Value)> = config
        .as_object()
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    keys.sort_by(|a, b| a.0.cmp(b.0));
    let rows: Vec<Vec<String>> = keys
        .into_iter()
        .map(|(k, v)| vec![format!("  {k}"), text(v)])
        .collect();
    println!("{}", table(&["  KEY", "VALUE"], &rows));
    println!("Tasks:");
    let rows: Vec<Vec<String>> = status["tasks"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    vec![
                        format!("  {}", t["id"]),
                        text(&t["state"]),
                        text(&t["worker_id"]),
                        t["trace"]
                            .as_str()
                            .and_then(|s| s.lines().next())
                            .unwrap_or_default()
                            .to_string(),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    println!("{}", table(&["  ID", "STATE", "WORKER", "TRACE"], &rows));
    println!(
        "Topics:  {}",
        topic_list.iter().map(text).collect::<Vec<_>>().join(", ")
    );
    match &offsets {
        Some(o) => {
            println!("Offsets:");
            println!("{}", offsets_table(o));
        }
        None => println!("Offsets: (not available)"),
    }
    Ok(())
}

/// Runs `method path` and prints Connect's `message` of the answer, else `done` (or, with
/// `-o json|yaml`, the answer).
async fn act(
    c: &ConnectClient,
    output: Output,
    method: Method,
    path: &str,
    body: Option<&Value>,
    done: String,
) -> Result<(), String> {
    let answer = c
        .call(method.clone(), path, body)
        .await
        .map_err(rest_err(&format!("{method} {path}")))?;
    if !print_structured(output, &answer)? {
        println!("{}", text_of_message(&answer, &done));
    }
    Ok(())
}

/// `key=value` pairs and removed keys as a KIP-477 PATCH body.
pub fn patch_body(set: &[String], remove: &[String]) -> Result<Value, String> {
    let mut m = Map::new();
    for kv in set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("{kv:?}: expected key=value"))?;
        m.insert(k.trim().to_string(), Value::String(v.to_string()));
    }
    for k in remove {
        m.insert(k.trim().to_string(), Value::Null);
    }
    if m.is_empty() {
        return Err("nothing to patch: give key=value pairs or --remove keys".into());
    }
    Ok(Value::Object(m))
}

/// Runs one admin command.
pub async fn run(target: Target, cmd: AdminCommand) -> Result<ExitCode, String> {
    let c = client(&target)?;
    let out = target.output;
    match cmd {
        AdminCommand::Get(Get::Connectors) => get_connectors(&c, out).await?,
        AdminCommand::Get(Get::Plugins) => get_plugins(&c, out).await?,
        AdminCommand::Get(Get::Offsets { connector }) => get_offsets(&c, &connector, out).await?,
        AdminCommand::Get(Get::Loggers) => get_loggers(&c, out).await?,
        AdminCommand::Describe(Describe::Connector { name }) => {
            describe_connector(&c, &name, out).await?
        }
        AdminCommand::Restart(Restart::Connector {
            name,
            include_tasks,
            only_failed,
        }) => {
            let path = format!(
                "/connectors/{}/restart?includeTasks={include_tasks}&onlyFailed={only_failed}",
                segment(&name)
            );
            act(
                &c,
                out,
                Method::POST,
                &path,
                None,
                format!("restart of {name} requested"),
            )
            .await?
        }
        AdminCommand::Restart(Restart::Task { name, task }) => {
            let path = format!("/connectors/{}/tasks/{task}/restart", segment(&name));
            act(
                &c,
                out,
                Method::POST,
                &path,
                None,
                format!("task {name}-{task} restarted"),
            )
            .await?
        }
        AdminCommand::Pause(name) => {
            let path = format!("/connectors/{}/pause", segment(&name));
            act(&c, out, Method::PUT, &path, None, format!("{name} paused")).await?
        }
        AdminCommand::Resume(name) => {
            let path = format!("/connectors/{}/resume", segment(&name));
            act(&c, out, Method::PUT, &path, None, format!("{name} resumed")).await?
        }
        AdminCommand::Stop(name) => {
            let path = format!("/connectors/{}/stop", segment(&name));
            act(&c, out, Method::PUT, &path, None, format!("{name} stopped")).await?
        }
        AdminCommand::Delete(name) => {
            let path = format!("/connectors/{}", segment(&name));
            act(
                &c,
                out,
                Method::DELETE,
                &path,
                None,
                format!("{name} deleted"),
            )
            .await?
        }
        AdminCommand::Offsets(Offsets::Alter { connector, file }) => {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
            let body: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
            let path = format!("/connectors/{}/offsets", segment(&connector));
            let done = format!("offsets of {connector} altered");
            act(&c, out, Method::PATCH, &path, Some(&body), done).await?
        }
        AdminCommand::Offsets(Offsets::Reset { connector }) => {
            let path = format!("/connectors/{}/offsets", segment(&connector));
            let done = format!("offsets of {connector} reset");
            act(&c, out, Method::DELETE, &path, None, done).await?
        }
        AdminCommand::Logger(Logger::Set {
            logger,
            level,
            scope,
        }) => {
            let mut path = format!("/admin/loggers/{}", segment(&logger));
            if let Some(s) = &scope {
                path.push_str(&format!("?scope={}", segment(s)));
            }
            act(
                &c,
                out,
                Method::PUT,
                &path,
                Some(&json!({ "level": level })),
                format!("{logger} set to {level}"),
            )
            .await?
        }
        AdminCommand::Patch { name, set, remove } => {
            let body = patch_body(&set, &remove)?;
            let path = format!("/connectors/{}/config", segment(&name));
            act(
                &c,
                out,
                Method::PATCH,
                &path,
                Some(&body),
                format!("{name} patched"),
            )
            .await?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Connect's `{"message": …}` of an offsets answer, else `fallback`.
fn text_of_message(answer: &Value, fallback: &str) -> String {
    answer["message"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| fallback.to_string())
}

/// Runs a `tributary config` (contexts) command.
pub fn run_config(cmd: ConfigCmd) -> Result<ExitCode, String> {
    let mut all = Contexts::load()?;
    match cmd {
        ConfigCmd::SetContext {
            name,
            urls,
            user,
            cacert,
        } => {
            all.contexts
                .insert(name.clone(), Context { urls, user, cacert });
            if all.current.is_none() {
                all.current = Some(name.clone());
            }
            all.save()?;
            println!("context {name} saved");
        }
        ConfigCmd::UseContext { name } => {
            if !all.contexts.contains_key(&name) {
                return Err(format!("no context named {name:?}"));
            }
            all.current = Some(name.clone());
            all.save()?;
            println!("current context: {name}");
        }
        ConfigCmd::GetContexts => {
            let rows: Vec<Vec<String>> = all
                .contexts
                .iter()
                .map(|(n, c)| {
                    let mark = if all.current.as_deref() == Some(n) {
                        "*"
                    } else {
                        ""
                    };
                    vec![mark.to_string(), n.clone(), c.urls.join(",")]
                })
                .collect();
            println!("{}", table(&["CURRENT", "NAME", "URLS"], &rows));
        }
        ConfigCmd::CurrentContext => match &all.current {
            Some(c) => println!("{c}"),
            None => return Err("no current context".into()),
        },
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_their_columns() {
        let t = table(
            &["NAME", "STATE"],
            &[
                vec!["a-long-name".into(), "RUNNING".into()],
                vec!["b".into(), "PAUSED".into()],
            ],
        );
        assert_eq!(
            t,
            "NAME         STATE\na-long-name  RUNNING\nb            PAUSED"
        );
    }

    #[test]
    fn patch_bodies_set_and_remove_keys() {
        let b = patch_body(&["tasks.max=3".into(), "a=b=c".into()], &["topic".into()]).unwrap();
        assert_eq!(b, json!({"tasks.max": "3", "a": "b=c", "topic": null}));
        assert!(patch_body(&["novalue".into()], &[]).is_err());
        assert!(patch_body(&[], &[]).is_err());
    }
}
