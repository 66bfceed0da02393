//! The tables and notes the run prints.

use super::*;

pub(crate) fn secs(d: Option<Duration>) -> String {
    d.map(|d| format!("{:.1} s", d.as_secs_f64()))
        .unwrap_or_else(|| "n/a".into())
}

/// CPU in cores (CPU seconds per second).
pub(crate) fn cores(c: Option<f64>) -> String {
    c.map(|c| format!("{c:.2} cores"))
        .unwrap_or_else(|| "n/a".into())
}

/// Milliseconds below 10 s, seconds above.
pub(crate) fn secs_ms(d: Option<Duration>) -> String {
    match d {
        Some(d) if d < Duration::from_secs(10) => format!("{:.0} ms", d.as_secs_f64() * 1e3),
        other => secs(other),
    }
}

pub(crate) fn mib(kib: Option<u64>) -> String {
    kib.map(|k| format!("{:.0} MiB", k as f64 / 1024.0))
        .unwrap_or_else(|| "n/a".into())
}

pub(crate) fn per_worker_range(v: &[usize]) -> String {
    match (v.iter().min(), v.iter().max()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => "n/a".into(),
    }
}

pub(crate) fn join_cell(o: &ClusterOutcome, f: impl Fn(&JoinOutcome) -> String) -> String {
    o.join.as_ref().map(f).unwrap_or_else(|| "n/a".into())
}

pub(crate) fn kill_cell(o: &ClusterOutcome, f: impl Fn(&KillOutcome) -> String) -> String {
    o.kill.as_ref().map(f).unwrap_or_else(|| "n/a".into())
}

pub(crate) fn cluster_table(args: &Args, results: &[(Kind, ClusterOutcome)]) -> Table {
    let mut header = vec!["scale run".to_string()];
    header.extend(results.iter().map(|(k, o)| {
        format!(
            "{} ({} workers{})",
            k.title(),
            o.workers,
            if *k == Kind::Java {
                format!(", -Xmx{} each", args.java_heap)
            } else {
                String::new()
            }
        )
    }));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    let row = |t: &mut Table, label: &str, f: &dyn Fn(&ClusterOutcome) -> String| {
        t.row(label, results.iter().map(|(_, o)| f(o)).collect());
    };
    row(&mut t, "load", &|o| {
        format!(
            "{} connectors × {} tasks = {} tasks at {} rec/s each",
            o.connectors,
            o.tasks,
            o.connectors * o.tasks,
            args.throughput
        )
    });
    row(&mut t, "spawn → all workers ready in one group", &|o| {
        secs(o.formed)
    });
    row(&mut t, "POSTs of every connector took", &|o| secs(o.posts));
    row(&mut t, "first POST → every task RUNNING", &|o| {
        secs(o.running)
    });
    row(&mut t, "first POST → balanced", &|o| secs(o.balanced));
    row(
        &mut t,
        "most tasks RUNNING at once before that (when)",
        &|o| {
            o.peak_running
                .map(|(n, d)| format!("{n} ({})", secs(Some(d))))
                .unwrap_or_else(|| "n/a".into())
        },
    );
    row(&mut t, "RSS per worker, median (min–max)", &|o| {
        o.mem
            .as_ref()
            .map(|m| {
                let (lo, hi) = m.range_mib();
                format!("{:.1} MiB ({lo:.0}–{hi:.0})", m.median_mib().unwrap_or(0.0))
            })
            .unwrap_or_else(|| "n/a".into())
    });
    row(&mut t, "RSS, all workers", &|o| {
        o.mem
            .as_ref()
            .map(|m| format!("{:.0} MiB", m.total_mib()))
            .unwrap_or_else(|| "n/a".into())
    });
    row(
        &mut t,
        &format!(
            "CPU of all workers at that load (the {} s from {} s after balanced)",
            args.cpu_secs, args.settle_secs
        ),
        &|o| cores(o.cpu_cores),
    );
    row(&mut t, "threads per worker, median", &|o| {
        o.mem
            .as_ref()
            .and_then(Mem::median_threads)
            .map(|n| format!("{n:.0}"))
            .unwrap_or_else(|| "n/a".into())
    });
    row(&mut t, "join: start of 1 more worker → ready", &|o| {
        join_cell(o, |j| secs(j.ready))
    });
    row(
        &mut t,
        "join: start → balanced in total (tasks and connectors per worker max−min ≤ 1, all RUNNING)",
        &|o| join_cell(o, |j| secs(j.balanced)),
    );
    row(
        &mut t,
        "join: start → balanced per connector (each connector's tasks max−min ≤ 1 over workers)",
        &|o| {
            join_cell(o, |j| {
                j.balanced_per_connector
                    .map(|d| secs(Some(d)))
                    .unwrap_or_else(|| format!("not within +{} s", args.after_secs))
            })
        },
    );
    row(&mut t, "join: tasks / connectors per worker after", &|o| {
        join_cell(o, |j| {
            format!(
                "{} / {}",
                per_worker_range(&j.end.tasks_per_worker),
                per_worker_range(&j.end.connectors_per_worker)
            )
        })
    });
    row(
        &mut t,
        "join: most tasks of one connector on one worker",
        &|o| join_cell(o, |j| j.end.max_one_connector.to_string()),
    );
    row(&mut t, "join: tasks moved", &|o| {
        join_cell(o, |j| format!("{} of {}", j.moved, j.moved + j.unmoved))
    });
    row(
        &mut t,
        "join: tasks stopped that did not move (status topic UNASSIGNED)",
        &|o| join_cell(o, |j| format!("{} of {}", j.stopped_unmoved, j.unmoved)),
    );
    row(
        &mut t,
        "join: task stops that did not move (task counters)",
        &|o| {
            join_cell(o, |j| {
                j.counter_stops
                    .map(|(u, all)| format!("{u} (of {all} stops)"))
                    .unwrap_or_else(|| "n/a".into())
            })
        },
    );
    row(&mut t, "RSS, all workers after the join", &|o| {
        join_cell(o, |j| format!("{:.0} MiB", j.mem.total_mib()))
    });
    row(&mut t, "kill: SIGKILL of a worker holding", &|o| {
        kill_cell(o, |k| {
            format!(
                "{} tasks, {} connectors",
                k.victim_tasks, k.victim_connectors
            )
        })
    });
    row(&mut t, "kill → group noticed (new generation)", &|o| {
        kill_cell(o, |k| secs(k.noticed))
    });
    row(
        &mut t,
        "kill → every task RUNNING on a live worker",
        &|o| kill_cell(o, |k| secs(k.running)),
    );
    row(&mut t, "kill → balanced", &|o| {
        kill_cell(o, |k| secs(k.balanced))
    });
    row(
        &mut t,
        "tasks seen RUNNING on two workers (join and kill)",
        &|o| {
            let (Some(j), Some(k)) = (&o.join, &o.kill) else {
                return "n/a".into();
            };
            let counters = j.double.len() + k.double.len();
            let status = j.suspects.len() + k.suspects.len();
            if o.join.as_ref().is_some_and(|j| j.counter_stops.is_some()) {
                format!("{counters} (counters), {status} (status topic)")
            } else {
                format!("{status} (status topic)")
            }
        },
    );
    row(&mut t, "SIGTERM to every worker → all exited", &|o| {
        if o.stop_killed > 0 {
            format!("{} ({} SIGKILLed after 60 s)", secs(o.stop), o.stop_killed)
        } else {
            secs(o.stop)
        }
    });
    row(&mut t, "worker logs", &|o| o.logs.cell());
    row(&mut t, "outcome", &|o| {
        o.failure
            .as_ref()
            .map(|f| format!("FAILED: {}", f.lines().next().unwrap_or_default()))
            .unwrap_or_else(|| "completed".into())
    });
    t
}

pub(crate) fn configs_table(args: &Args, results: &[(Kind, ConfigsOutcome)]) -> Table {
    let mut header = vec![format!(
        "config topic of {} connectors (STOPPED)",
        args.configs
    )];
    header.extend(results.iter().map(|(k, _)| k.title().to_string()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = Table::new(&header);
    let row = |t: &mut Table, label: &str, f: &dyn Fn(&ConfigsOutcome) -> String| {
        t.row(label, results.iter().map(|(_, o)| f(o)).collect());
    };
    row(&mut t, "empty config topic: start → ready", &|o| {
        secs(o.baseline_ready)
    });
    row(&mut t, "empty config topic: RSS", &|o| {
        mib(o.baseline_rss_kib)
    });
    row(&mut t, "start → REST answers GET /", &|o| secs(o.rest));
    row(
        &mut t,
        "start → ready (REST, /health, joined the group)",
        &|o| secs(o.ready),
    );
    row(&mut t, "start → GET /connectors lists all", &|o| {
        secs(o.listed)
    });
    row(
        &mut t,
        "start → every connector STOPPED (status topic)",
        &|o| secs(o.stopped),
    );
    row(&mut t, "RSS at ready", &|o| mib(o.rss_ready_kib));
    row(
        &mut t,
        &format!(
            "RSS {} s after every connector STOPPED",
            args.settle_secs + args.cpu_secs
        ),
        &|o| mib(o.rss_settled_kib),
    );
    row(&mut t, "peak RSS (VmHWM)", &|o| mib(o.hwm_kib));
    row(&mut t, "threads", &|o| {
        o.threads
            .map(|n| n.to_string())
            .unwrap_or_else(|| "n/a".into())
    });
    row(
        &mut t,
        &format!(
            "CPU (the {} s from {} s after every connector STOPPED)",
            args.cpu_secs, args.settle_secs
        ),
        &|o| cores(o.cpu_cores),
    );
    row(&mut t, "GET /connectors/<c>/status (median of 3)", &|o| {
        secs_ms(o.status_one)
    });
    row(
        &mut t,
        &format!(
            "GET /connectors?expand=status ({} connectors)",
            args.configs
        ),
        &|o| match &o.status_all {
            Some(Ok(d)) => secs_ms(Some(*d)),
            Some(Err(e)) => e.clone(),
            None => "n/a".into(),
        },
    );
    row(&mut t, "worker logs", &|o| o.logs.cell());
    row(&mut t, "outcome", &|o| {
        o.failure
            .as_ref()
            .map(|f| format!("FAILED: {}", f.lines().next().unwrap_or_default()))
            .unwrap_or_else(|| "completed".into())
    });
    t
}

pub(crate) fn notes(
    ctx: &Ctx<'_>,
    clusters: &[(Kind, ClusterOutcome)],
    configs: &[(Kind, ConfigsOutcome)],
    took: Duration,
) -> Vec<String> {
    let a = ctx.args;
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    let mut n = vec![format!(
        "One run (not a median), {:.1} min in all, on this machine ({cores} cores, shared; broker {} on the same host). Every worker: connect.protocol=sessioned, scheduled.rebalance.max.delay.ms={}, session.timeout.ms={}, heartbeat.interval.ms={}, offset.flush.interval.ms={OFFSET_FLUSH_MS}, internal topics with replication factor 1 (offsets 5 partitions, status 3), String converters. Tributary: release build. Java: Connect 4.1.1 jars from Maven Central, JVM started as connect-distributed.sh does ({} {}).",
        took.as_secs_f64() / 60.0,
        ctx.broker.bootstrap(),
        a.max_delay_ms,
        a.session_timeout_ms,
        a.heartbeat_interval_ms,
        ctx.java.as_ref().map(|j| j.heap.join(" ")).unwrap_or_else(|| format!("-Xms256M -Xmx{}", a.java_heap)),
        tributary_bench::java::KAFKA_JVM_OPTS.join(" "),
    )];
    if ctx.java.is_some() {
        n.push(format!("The load: Tributary runs its built-in VerifiableSource ({VERIFIABLE_SOURCE}). Java Connect does not ship one on Maven Central, so the Java workers run the benchmark's own {BENCH_SOURCE_CONNECTOR} (bench/java, compiled with javac by the benchmark), which sends the same records: one a poll, at most `throughput` records/s per task counted from the task's start, key = task number (INT32), value = sequence number (INT64), source partition {{\"id\": task}}, offset {{\"seqno\": n}}, resuming after the committed offset, and a JSON line on stdout per record sent and acknowledged. Both runtimes' stdout is discarded."));
    }
    n.push(format!(
        "Scale run: VerifiableSource connectors ({VERIFIABLE_SOURCE}; Java: {BENCH_SOURCE_CONNECTOR}) all writing into one 1-partition topic, created one after the other through one worker's REST API (a 409 during a rebalance is retried every 500 ms). The state is polled every {} ms: GET /connectors?expand=status on one worker, and for Tributary GET /tributary/worker and /tributary/task-counters on every worker. CPU = the user and system time (/proc/<pid>/stat) the worker processes used in the {} s that start {} s after the cluster is balanced, nothing polled meanwhile; RSS = VmRSS of each worker process (the JVM for Java) right after that.",
        a.poll_ms.max(50),
        a.cpu_secs,
        a.settle_secs
    ));
    n.push(format!(
        "Balanced in total: every connector and task RUNNING (status API) on a live worker, task counts per worker max−min ≤ 1 and connector counts max−min ≤ 1; for Tributary also every worker on one generation and each task RUNNING on the worker /tributary/worker assigns it to. Per connector: additionally each connector's task counts over the workers max−min ≤ 1 (Tributary's assignor aims for it; Java's assignor does not). After the join the cluster is watched {} s more; moved = status owner changed; stopped = the task has an UNASSIGNED record in the status topic from the join to the end of the watch.",
        a.after_secs
    ));
    n.push("Kill: SIGKILL of a worker that does not lead the group (a new leader would re-assign at once, without the delay); timed from the signal. Expected: about session.timeout.ms (the group notices) plus scheduled.rebalance.max.delay.ms (the lost tasks wait for the worker to return). Two workers at once: Tributary's task counters (an instance started and not stopped on two workers in the same poll, confirmed by a second poll in reverse order) and, for both runtimes, the status topic (a task going RUNNING on one worker while its last record says RUNNING on another live worker).".into());
    for (k, o) in clusters {
        let t = k.title();
        if let Some(m) = &o.mem {
            n.push(format!("{t}: RSS and threads per worker: {}.", m.list()));
        }
        if let Some(j) = &o.join {
            n.push(format!(
                "{t}: join: tasks per worker after {:?} (the new worker last); connectors per worker {:?}; {} connectors moved; {} tasks had an UNASSIGNED record; {} status records read{}.",
                j.end.tasks_per_worker,
                j.end.connectors_per_worker,
                j.connectors_moved,
                j.stopped,
                j.status_records,
                j.generations
                    .map(|(a, b)| format!("; generation {a} → {b}"))
                    .unwrap_or_default()
            ));
            n.push(format!("{t}: after the join: {}.", j.mem.list()));
        }
        if let Some(k) = &o.kill {
            n.push(format!(
                "{t}: kill: victim {}; afterwards {}{}.",
                k.victim,
                k.end.summary(),
                k.generations
                    .map(|(a, b)| format!("; generation {a} → {b}"))
                    .unwrap_or_default()
            ));
        }
        for (label, list) in [
            ("join, counters", o.join.as_ref().map(|j| &j.double)),
            ("join, status topic", o.join.as_ref().map(|j| &j.suspects)),
            ("kill, counters", o.kill.as_ref().map(|k| &k.double)),
            ("kill, status topic", o.kill.as_ref().map(|k| &k.suspects)),
        ] {
            if let Some(l) = list.filter(|l| !l.is_empty()) {
                n.push(format!(
                    "{t}: RUNNING on two workers ({label}): {}{}",
                    l.iter().take(10).cloned().collect::<Vec<_>>().join("; "),
                    if l.len() > 10 { " …" } else { "" }
                ));
            }
        }
        if let Some(f) = &o.failure {
            n.push(format!(
                "{t}: the run stopped: {f}{}",
                o.last_state
                    .as_ref()
                    .map(|s| format!(" (state then: {s})"))
                    .unwrap_or_default()
            ));
        }
        let top = o.logs.top(6);
        if !top.is_empty() {
            n.push(format!(
                "{t}: most frequent ERROR/WARN log lines (digits replaced by #): {}",
                top.join(" | ")
            ));
        }
    }
    if let Some((_, c)) = configs.first() {
        n.push(format!(
            "Config topic: {} connectors written directly into a fresh compacted config topic, {} records (as Connect writes a VerifiableSource connector, for Java {BENCH_SOURCE_CONNECTOR}, that ran one task and was then stopped: connector-, task-…-0, commit {{\"tasks\":1}}, commit {{\"tasks\":0}}, target-state STOPPED; 5 config keys a connector). Then one fresh worker of that group starts alone: it leads and is assigned every connector (STOPPED: none runs, and no task). Ready = GET /health and GET /connectors answer 200 (Tributary: and /tributary/worker reports a generation); every connector STOPPED = the group's status topic, read from its start, holds a STOPPED record of each. The request timings are taken after the RSS reading, one request at a time (time out after {} s). The baseline worker is the same on an empty config topic.",
            c.configs, c.records, REST_TIMEOUT.as_secs()
        ));
    }
    for (k, o) in configs {
        let t = k.title();
        if let Some(x) = o.assigned {
            n.push(format!(
                "{t}: /tributary/worker shows {x} connectors assigned to the fresh worker."
            ));
        }
        if let Some(w) = o.write {
            n.push(format!(
                "{t}: writing the config records took {:.1} s.",
                w.as_secs_f64()
            ));
        }
        if let Some(f) = &o.failure {
            n.push(format!("{t}: config-topic run stopped: {f}"));
        }
        let top = o.logs.top(6);
        if !top.is_empty() {
            n.push(format!(
                "{t}: config-topic run, most frequent ERROR/WARN log lines: {}",
                top.join(" | ")
            ));
        }
    }
    n
}
