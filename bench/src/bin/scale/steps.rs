//! The measured steps: a cluster's creation, a worker joining, a worker killed, many connector configs.

use super::*;

/// POST `body` to `/connectors`, retrying while the worker answers 409 (a rebalance is in
/// progress), a 5xx, or not at all, for up to `timeout`.
pub(crate) fn create_with_retry(
    rest: &Rest,
    body: &Value,
    timeout: Duration,
) -> Result<u32, String> {
    let deadline = Instant::now() + timeout;
    let mut retries = 0;
    loop {
        let last = match rest.send("POST", "/connectors", Some(body)) {
            Ok((201, _)) => return Ok(retries),
            Ok((code, resp)) if code == 409 || code >= 500 => format!("{code} {resp}"),
            Ok((code, resp)) => return Err(format!("POST /connectors answered {code}: {resp}")),
            Err(e) => e,
        };
        if Instant::now() > deadline {
            return Err(format!("POST /connectors kept failing: {last}"));
        }
        retries += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
}

pub(crate) fn cluster_part(
    ctx: &Ctx<'_>,
    kind: Kind,
    workers: usize,
    connectors: usize,
) -> ClusterOutcome {
    let a = ctx.args;
    let mut out = ClusterOutcome {
        workers,
        connectors,
        tasks: a.tasks,
        ..Default::default()
    };
    let group = format!("scale-{}-{}", kind.label(), ctx.stamp);
    ctx.add_topics(internal_topics(&group));
    let topic = format!("{group}-vs");
    ctx.add_topics([topic.clone()]);
    let names: Vec<String> = (1..=workers.max(1)).map(|i| format!("w{i}")).collect();
    say(format!(
        "{}: starting {} workers in group {group}",
        kind.title(),
        names.len()
    ));
    let t0 = Instant::now();
    let mut cluster = match ctx
        .broker
        .create_topic(&topic)
        .and_then(|()| spawn_members(ctx, kind, &group, &names))
    {
        Ok(members) => Cluster {
            kind,
            group: group.clone(),
            members,
            connectors: (0..connectors)
                .map(|c| format!("{group}-c{c:03}"))
                .collect(),
            tasks: a.tasks,
            // Marked (assigned at the end of each partition) once the workers created the topic.
            watch: match StatusWatch::new(ctx.broker.bootstrap(), &format!("{group}-status")) {
                Ok(w) => w,
                Err(e) => {
                    out.failure = Some(e);
                    return out;
                }
            },
        },
        Err(e) => {
            out.failure = Some(format!("starting the workers: {e}"));
            return out;
        }
    };
    let result = cluster_steps(ctx, &mut cluster, &topic, t0, &mut out);
    if let Err(e) = result {
        say(format!("{}: {e}", kind.title()));
        out.failure = Some(e);
        if let Ok(p) = cluster.poll() {
            out.last_state = p.balance.map(|b| b.summary());
        }
    }
    say(format!(
        "{}: stopping {} workers",
        kind.title(),
        cluster.live().count()
    ));
    let t = Instant::now();
    out.stop_killed = stop_all(&mut cluster.members, Duration::from_secs(60));
    out.stop = Some(t.elapsed());
    out.logs = collect_logs(ctx, &cluster.members, kind.label());
    say(format!("{}: logs: {}", kind.title(), out.logs.cell()));
    out
}

pub(crate) fn cluster_steps(
    ctx: &Ctx<'_>,
    cl: &mut Cluster,
    topic: &str,
    t0: Instant,
    out: &mut ClusterOutcome,
) -> Result<(), String> {
    let a = ctx.args;
    let title = cl.kind.title();
    let timeout = ctx.timeout();
    let ready = wait_ready(&mut cl.members, timeout, Duration::from_millis(100))?;
    out.ready_median = median_f64(&ready.iter().map(|d| d.as_secs_f64()).collect::<Vec<_>>())
        .map(Duration::from_secs_f64);
    // Every worker on one generation.
    wait_every("the group to form", timeout, ctx.poll(), || {
        check_alive(&mut cl.members)?;
        let gens: Vec<i64> = cl.live().map(Member::generation).collect();
        Ok(gens.iter().all(|g| *g > 0 && *g == gens[0]).then_some(()))
    })?;
    out.formed = Some(t0.elapsed());
    say(format!(
        "{title}: {} workers in one group after {:.1} s; creating {} connectors x {} tasks at {} records/s per task",
        cl.members.len(),
        t0.elapsed().as_secs_f64(),
        cl.connectors.len(),
        cl.tasks,
        a.throughput
    ));
    cl.watch.mark()?;
    let lead = cl.members.iter().position(Member::is_leader).unwrap_or(0);
    let t_post = Instant::now();
    let mut retries = 0;
    for (i, c) in cl.connectors.iter().enumerate() {
        let body = json!({
            "name": c,
            "config": {
                "connector.class": source_classes(cl.kind).0,
                "tasks.max": cl.tasks.to_string(),
                "topic": topic,
                "throughput": a.throughput.to_string(),
            }
        });
        retries += create_with_retry(&cl.members[lead].rest, &body, timeout).map_err(|e| {
            format!(
                "creating connector {} of {}: {e}",
                i + 1,
                cl.connectors.len()
            )
        })?;
        if (i + 1) % 50 == 0 {
            say(format!(
                "{title}: {} connectors created ({:.1} s)",
                i + 1,
                t_post.elapsed().as_secs_f64()
            ));
        }
    }
    out.posts = Some(t_post.elapsed());
    say(format!(
        "{title}: {} POSTs took {:.1} s ({retries} retried after 409/5xx); waiting for every task RUNNING",
        cl.connectors.len(),
        t_post.elapsed().as_secs_f64()
    ));
    let mut last = String::new();
    let mut last_said = Instant::now();
    let steady = wait_every(
        "every task RUNNING and balanced",
        timeout,
        ctx.poll(),
        || {
            let p = cl.poll()?;
            if let Some(b) = &p.balance {
                if out.peak_running.is_none_or(|(n, _)| b.tasks_running > n) {
                    out.peak_running = Some((b.tasks_running, t_post.elapsed()));
                }
                if out.running.is_none() && b.all_running() {
                    out.running = Some(t_post.elapsed());
                    say(format!(
                        "{title}: every task RUNNING {:.1} s after the first POST",
                        t_post.elapsed().as_secs_f64()
                    ));
                }
                last = b.summary();
            }
            if last_said.elapsed() > Duration::from_secs(15) {
                say(format!("{title}: {last}"));
                last_said = Instant::now();
            }
            Ok(p.settled().then_some(p))
        },
    )
    .map_err(|e| format!("{e} (last: {last})"))?;
    out.balanced = Some(t_post.elapsed());
    let b = steady.balance.clone().unwrap_or_default();
    say(format!(
        "{title}: balanced {:.1} s after the first POST: {}",
        t_post.elapsed().as_secs_f64(),
        b.summary()
    ));
    out.steady = Some(b);
    std::thread::sleep(Duration::from_secs(a.settle_secs));
    out.cpu_cores = cpu_over(&cl.members, Duration::from_secs(a.cpu_secs));
    let mem = Mem::read(&cl.members);
    say(format!(
        "{title}: CPU {} while idle; RSS total {:.0} MiB, median {:.1} MiB per worker; {}",
        cores(out.cpu_cores),
        mem.total_mib(),
        mem.median_mib().unwrap_or(0.0),
        mem.list()
    ));
    out.mem = Some(mem);
    out.join = Some(join(ctx, cl)?);
    out.kill = Some(kill(ctx, cl)?);
    Ok(())
}

/// Watches the cluster after a change: every `--poll-ms` it feeds the status topic's new records
/// to `log`, calls `step` with `None`, polls every worker, notes tasks RUNNING on two workers,
/// and calls `step` with the poll and the last balance summary, until that call returns true.
/// Returns the last poll and the tasks seen RUNNING on two workers; fails after `--timeout-secs`
/// with `what` and the last balance summary. (`step` sees `None` first so that a check of its
/// own is not delayed by the poll.)
pub(crate) fn watch_until(
    ctx: &Ctx<'_>,
    cl: &mut Cluster,
    log: &mut StatusLog,
    what: &str,
    mut step: impl FnMut(&Cluster, Option<(&Poll, &str)>) -> Result<bool, String>,
) -> Result<(Poll, Vec<String>), String> {
    let deadline = Instant::now() + ctx.timeout();
    let mut last = String::new();
    let mut double = Vec::new();
    let end = loop {
        let dead = cl.dead_ids();
        log.feed(cl.watch.poll(Duration::from_millis(100)), &dead);
        step(cl, None)?;
        let p = cl.poll()?;
        double.extend(cl.double_running());
        if let Some(b) = &p.balance {
            last = b.summary();
        }
        if step(cl, Some((&p, &last)))? {
            break p;
        }
        if Instant::now() > deadline {
            return Err(format!("{what} {:?} (last: {last})", ctx.timeout()));
        }
        std::thread::sleep(ctx.poll());
    };
    log.feed(cl.watch.poll(Duration::from_millis(500)), &cl.dead_ids());
    Ok((end, double))
}

pub(crate) fn join(ctx: &Ctx<'_>, cl: &mut Cluster) -> Result<JoinOutcome, String> {
    let title = cl.kind.title();
    let before = cl.poll()?;
    if !before.settled() {
        return Err("the cluster is not balanced before the join".into());
    }
    let owners_before = before.owners();
    let connector_owners_before: BTreeMap<String, String> = before
        .view
        .as_ref()
        .map(|v| {
            v.connectors
                .iter()
                .map(|(c, (_, w))| (c.clone(), w.clone()))
                .collect()
        })
        .unwrap_or_default();
    let stops_before = cl.stop_counts();
    let mut log = StatusLog::new(before.view.as_ref().ok_or("no status view")?);
    cl.watch.mark()?;
    let name = format!("w{}", cl.members.len() + 1);
    say(format!("{title}: starting worker {name}"));
    let mut new = spawn_members(ctx, cl.kind, &cl.group, std::slice::from_ref(&name))?;
    let started = new[0].worker.started;
    cl.members.append(&mut new);
    let mut o = JoinOutcome::default();
    let watch_for = Duration::from_secs(ctx.args.after_secs);
    let what = format!("not balanced after {name} started, within");
    let (end, double) = watch_until(ctx, cl, &mut log, &what, |cl, polled| {
        let Some((p, last)) = polled else {
            let newest = cl.members.last().ok_or("no workers")?;
            if o.ready.is_none() && newest.ready() {
                o.ready = Some(started.elapsed());
                say(format!(
                    "{title}: {name} ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
            }
            return Ok(false);
        };
        if let Some(b) = &p.balance {
            if p.settled() && o.balanced.is_none() {
                o.balanced = Some(started.elapsed());
                say(format!(
                    "{title}: balanced {:.1} s after {name} started: {last}",
                    started.elapsed().as_secs_f64()
                ));
            }
            if p.settled() && b.balanced_per_connector() && o.balanced_per_connector.is_none() {
                o.balanced_per_connector = Some(started.elapsed());
            }
        }
        Ok(o.balanced
            .is_some_and(|t| started.elapsed() >= t + watch_for && p.settled()))
    })?;
    o.double = double;
    let owners_after = end.owners();
    for (t, w) in &owners_before {
        if owners_after.get(t) == Some(w) {
            o.unmoved += 1;
            if log.stopped.contains(t) {
                o.stopped_unmoved += 1;
            }
        } else {
            o.moved += 1;
        }
    }
    o.stopped = log.stopped.len();
    if let Some(v) = &end.view {
        o.connectors_moved = v
            .connectors
            .iter()
            .filter(|(c, (_, w))| connector_owners_before.get(*c) != Some(w))
            .count();
    }
    if cl.kind == Kind::Tributary {
        let stops_after = cl.stop_counts();
        let increments = |task: &str| -> u64 {
            stops_after
                .iter()
                .filter(|((_, t), _)| t == task)
                .map(|((w, t), after)| {
                    after.saturating_sub(
                        stops_before
                            .get(&(w.clone(), t.clone()))
                            .copied()
                            .unwrap_or(0),
                    )
                })
                .sum()
        };
        let (mut unmoved, mut all) = (0, 0);
        for (t, w) in &owners_before {
            let n = increments(t);
            all += n;
            if owners_after.get(t) == Some(w) {
                unmoved += n;
            }
        }
        o.counter_stops = Some((unmoved, all));
        o.generations = before.generation.zip(end.generation);
    }
    o.end = end.balance.clone().unwrap_or_default();
    o.suspects = log.suspects;
    o.status_records = log.records;
    o.double.sort();
    o.double.dedup();
    o.mem = Mem::read(&cl.members);
    say(format!(
        "{title}: join: {} tasks moved, {} stayed; tasks stopped (UNASSIGNED) {} of which {} stayed; {}",
        o.moved, o.unmoved, o.stopped, o.stopped_unmoved, o.end.summary()
    ));
    Ok(o)
}

pub(crate) fn kill(ctx: &Ctx<'_>, cl: &mut Cluster) -> Result<KillOutcome, String> {
    let title = cl.kind.title();
    let before = cl.poll()?;
    if !before.settled() {
        return Err("the cluster is not balanced before the kill".into());
    }
    let owners = before.owners();
    // A worker that does not lead, and not the newest: the middle one of the first ones.
    let leader = cl.members.iter().position(|m| m.alive && m.is_leader());
    let candidates: Vec<usize> = (0..cl.members.len().saturating_sub(1))
        .filter(|i| Some(*i) != leader && cl.members[*i].alive)
        .collect();
    let victim = *candidates
        .get(candidates.len() / 2)
        .ok_or("no worker to kill")?;
    let mut o = KillOutcome {
        victim: format!("{} ({})", cl.members[victim].name, cl.members[victim].id),
        victim_tasks: owners
            .values()
            .filter(|w| **w == cl.members[victim].id)
            .count(),
        victim_connectors: before
            .view
            .as_ref()
            .map(|v| {
                v.connectors
                    .values()
                    .filter(|(_, w)| *w == cl.members[victim].id)
                    .count()
            })
            .unwrap_or(0),
        ..Default::default()
    };
    let gen_before = cl.live().map(Member::generation).max().unwrap_or(0);
    let mut log = StatusLog::new(before.view.as_ref().ok_or("no status view")?);
    cl.watch.mark()?;
    say(format!(
        "{title}: SIGKILL of {} running {} tasks and {} connectors",
        o.victim, o.victim_tasks, o.victim_connectors
    ));
    let t0 = Instant::now();
    let m = &mut cl.members[victim];
    m.worker.child.kill().map_err(|e| format!("kill: {e}"))?;
    m.worker.child.wait().ok();
    m.alive = false;
    let (end, double) = watch_until(
        ctx,
        cl,
        &mut log,
        "tasks not RUNNING again after the kill within",
        |cl, polled| {
            let Some((p, last)) = polled else {
                return Ok(false);
            };
            if o.noticed.is_none() {
                let gens: Vec<i64> = cl.live().map(Member::generation).collect();
                if gens.iter().any(|x| *x > gen_before) {
                    o.noticed = Some(t0.elapsed());
                    say(format!(
                        "{title}: the group noticed after {:.1} s",
                        t0.elapsed().as_secs_f64()
                    ));
                }
            }
            if let Some(b) = &p.balance {
                if o.running.is_none() && b.all_running() && p.consistent {
                    o.running = Some(t0.elapsed());
                    say(format!(
                        "{title}: every task RUNNING again {:.1} s after the kill",
                        t0.elapsed().as_secs_f64()
                    ));
                }
                if o.balanced.is_none() && p.settled() {
                    o.balanced = Some(t0.elapsed());
                    say(format!(
                        "{title}: balanced {:.1} s after the kill: {last}",
                        t0.elapsed().as_secs_f64()
                    ));
                }
            }
            Ok(o.balanced
                .is_some_and(|t| t0.elapsed() >= t + Duration::from_secs(5))
                && p.settled())
        },
    )?;
    o.double = double;
    o.end = end.balance.clone().unwrap_or_default();
    o.generations = before.generation.zip(end.generation);
    o.suspects = log.suspects;
    o.double.sort();
    o.double.dedup();
    Ok(o)
}

/// What the config-topic part measured for one runtime.
#[derive(Debug, Default)]
pub(crate) struct ConfigsOutcome {
    pub(crate) configs: usize,
    pub(crate) records: usize,
    pub(crate) write: Option<Duration>,
    pub(crate) baseline_ready: Option<Duration>,
    pub(crate) baseline_rss_kib: Option<u64>,
    pub(crate) rest: Option<Duration>,
    pub(crate) ready: Option<Duration>,
    pub(crate) listed: Option<Duration>,
    pub(crate) stopped: Option<Duration>,
    pub(crate) assigned: Option<usize>,
    pub(crate) rss_ready_kib: Option<u64>,
    pub(crate) rss_settled_kib: Option<u64>,
    pub(crate) hwm_kib: Option<u64>,
    pub(crate) threads: Option<u64>,
    /// CPU of the fresh worker over the settle period (cores).
    pub(crate) cpu_cores: Option<f64>,
    /// `GET /connectors/<c>/status` (median of 3).
    pub(crate) status_one: Option<Duration>,
    /// `GET /connectors?expand=status`: its time, or why there is none.
    pub(crate) status_all: Option<Result<Duration, String>>,
    pub(crate) logs: LogSummary,
    pub(crate) failure: Option<String>,
}

/// Writes `n` connectors that ran one task and were then stopped into `topic`, as Connect
/// writes them; returns the number of records.
pub(crate) fn write_configs(
    broker: &Broker,
    kind: Kind,
    topic: &str,
    data_topic: &str,
    n: usize,
) -> Result<usize, String> {
    let (connector_class, task_class) = source_classes(kind);
    let producer: BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap())
        .set("enable.idempotence", "true")
        .set("linger.ms", "20")
        .set("log_level", "3")
        .create()
        .map_err(|e| format!("producer: {e}"))?;
    let mut count = 0;
    let mut send = |key: String, value: Vec<u8>| -> Result<(), String> {
        let mut record = BaseRecord::to(topic).key(&key).payload(&value);
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    producer.poll(Duration::from_millis(50));
                    record = r;
                }
                Err((e, _)) => return Err(format!("producing {key}: {e}")),
            }
        }
        producer.poll(Duration::ZERO);
        count += 1;
        Ok(())
    };
    for i in 0..n {
        let name = format!("cfg-{i:05}");
        let config: HashMap<String, String> = [
            ("connector.class", connector_class),
            ("name", name.as_str()),
            ("tasks.max", "1"),
            ("topic", data_topic),
            ("throughput", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut task = config.clone();
        task.insert("id".into(), "0".into());
        task.insert("task.class".into(), task_class.into());
        send(format!("connector-{name}"), records::properties(&config))?;
        send(format!("task-{name}-0"), records::properties(&task))?;
        send(format!("commit-{name}"), records::commit(1))?;
        send(format!("commit-{name}"), records::commit(0))?;
        send(
            format!("target-state-{name}"),
            records::target_state(TargetState::Stopped),
        )?;
    }
    producer
        .flush(Duration::from_secs(120))
        .map_err(|e| format!("flushing the config records: {e}"))?;
    let end = broker.try_end_offset(topic)?;
    if end != count as i64 {
        return Err(format!(
            "the config topic ends at {end}, {count} records were written"
        ));
    }
    Ok(count)
}

pub(crate) fn configs_part(ctx: &Ctx<'_>, kind: Kind) -> ConfigsOutcome {
    let a = ctx.args;
    let mut out = ConfigsOutcome {
        configs: a.configs,
        ..Default::default()
    };
    let title = kind.title();
    let mut members: Vec<Member> = Vec::new();
    let result = (|| -> Result<(), String> {
        // The baseline: the same worker on an empty config topic.
        let group = format!("scale-cfg0-{}-{}", kind.label(), ctx.stamp);
        ctx.add_topics(internal_topics(&group));
        say(format!("{title}: a worker on an empty config topic"));
        let mut m = spawn_members(ctx, kind, &group, &["empty".to_string()])?;
        let ready = wait_ready(&mut m, ctx.timeout(), Duration::from_millis(20))?;
        out.baseline_ready = ready.first().copied();
        std::thread::sleep(Duration::from_secs(a.settle_secs));
        out.baseline_rss_kib = m[0].rss_kib();
        stop_all(&mut m, Duration::from_secs(60));
        members.append(&mut m);

        let group = format!("scale-cfg-{}-{}", kind.label(), ctx.stamp);
        ctx.add_topics(internal_topics(&group));
        let config_topic = format!("{group}-configs");
        ctx.broker
            .create_topic_with(&config_topic, &[("cleanup.policy", "compact")])?;
        say(format!(
            "{title}: writing {} connector configs into {config_topic}",
            a.configs
        ));
        let t = Instant::now();
        out.records = write_configs(
            &ctx.broker,
            kind,
            &config_topic,
            &format!("{group}-vs"),
            a.configs,
        )?;
        out.write = Some(t.elapsed());
        say(format!(
            "{title}: {} records written in {:.1} s; starting a fresh worker",
            out.records,
            t.elapsed().as_secs_f64()
        ));
        let mut m = spawn_members(ctx, kind, &group, &["fresh".to_string()])?;
        let started = m[0].worker.started;
        let mut watch: Option<StatusWatch> = None;
        let mut connector_states: HashMap<String, String> = HashMap::new();
        let deadline = Instant::now() + ctx.timeout();
        let mut every = Duration::from_millis(20);
        loop {
            check_alive(&mut m)?;
            let w = &m[0];
            if out.rest.is_none() && w.rest.get("/").map(|r| r.0 == 200).unwrap_or(false) {
                out.rest = Some(started.elapsed());
            }
            if out.rest.is_some() && out.ready.is_none() && w.ready() {
                out.ready = Some(started.elapsed());
                out.rss_ready_kib = w.rss_kib();
                say(format!(
                    "{title}: ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
                every = Duration::from_millis(250);
            }
            if out.ready.is_some() && out.listed.is_none() {
                let n = w
                    .rest
                    .get("/connectors")
                    .ok()
                    .and_then(|(_, v)| v.as_array().map(Vec::len));
                if n == Some(a.configs) {
                    out.listed = Some(started.elapsed());
                }
            }
            if out.ready.is_some() && watch.is_none() {
                // The worker created its status topic before it joined.
                let w = StatusWatch::new(ctx.broker.bootstrap(), &format!("{group}-status"))?;
                w.from_beginning()?;
                watch = Some(w);
            }
            if let Some(w) = &watch {
                for r in w.poll(Duration::from_millis(50)) {
                    if let Some(c) = r.key.strip_prefix("status-connector-") {
                        connector_states.insert(c.to_string(), r.state);
                    }
                }
                let n = connector_states
                    .values()
                    .filter(|s| *s == "STOPPED")
                    .count();
                if out.listed.is_some() && n == a.configs {
                    out.stopped = Some(started.elapsed());
                    say(format!(
                        "{title}: every connector STOPPED (status topic) after {:.1} s",
                        started.elapsed().as_secs_f64()
                    ));
                    break;
                }
            }
            if Instant::now() > deadline {
                members.append(&mut m);
                return Err(format!(
                    "the fresh worker did not write STOPPED for every connector within {:?}",
                    ctx.timeout()
                ));
            }
            std::thread::sleep(every);
        }
        out.assigned = m[0]
            .info()
            .and_then(|i| i["connectors"].as_array().map(Vec::len));
        std::thread::sleep(Duration::from_secs(a.settle_secs));
        out.cpu_cores = cpu_over(&m, Duration::from_secs(a.cpu_secs));
        let pid = m[0].worker.pid();
        let mem = proc_stats::memory(pid);
        out.rss_settled_kib = mem.map(|m| m.rss_kib);
        out.hwm_kib = mem.map(|m| m.hwm_kib);
        out.threads = proc_stats::threads(pid);
        // What one status request and the status of every connector cost with this many.
        let mut one = Vec::new();
        for i in 0..3 {
            let t = Instant::now();
            let path = format!("/connectors/cfg-{:05}/status", i * (a.configs / 3));
            if let Ok((200, _)) = m[0].rest.get(&path) {
                one.push(t.elapsed().as_secs_f64());
            }
        }
        out.status_one = median_f64(&one).map(Duration::from_secs_f64);
        let t = Instant::now();
        let n = m[0]
            .rest
            .get("/connectors?expand=status")
            .ok()
            .and_then(|(code, v)| (code == 200).then(|| v.as_object().map(|o| o.len())))
            .flatten();
        out.status_all = Some(match n {
            Some(n) if n == a.configs => Ok(t.elapsed()),
            Some(n) => Err(format!("{n} connectors in the answer")),
            None => Err(format!(
                "no answer within {:.0} s",
                t.elapsed().as_secs_f64()
            )),
        });
        say(format!(
            "{title}: GET /connectors/<c>/status {}, GET /connectors?expand=status {}",
            secs_ms(out.status_one),
            match &out.status_all {
                Some(Ok(d)) => secs_ms(Some(*d)),
                Some(Err(e)) => e.clone(),
                None => "n/a".into(),
            }
        ));
        members.append(&mut m);
        Ok(())
    })();
    if let Err(e) = result {
        say(format!("{title}: {e}"));
        out.failure = Some(e);
    }
    stop_all(&mut members, Duration::from_secs(60));
    out.logs = collect_logs(ctx, &members, &format!("configs-{}", kind.label()));
    out
}
