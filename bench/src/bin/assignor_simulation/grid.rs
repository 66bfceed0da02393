//! `--grid`: the cost of one join round (and its follow-up) as a function of workers x tasks,
//! as Markdown tables and an SVG plot drawn by hand (no plotting crate is needed for lines,
//! axes and a legend).

use super::*;

/// A value of a grid point shown in one table.
type GridValue = fn(&GridPoint) -> f64;

/// One grid point: mean ms of the join round and of its follow-up round.
struct GridPoint {
    workers: usize,
    tasks: usize,
    join_ms: f64,
    follow_up_ms: f64,
    fresh_ms: f64,
}

pub(super) fn grid(args: &Args) -> Result<(), String> {
    let iterations = args.grid_iterations.max(1);
    let mut points = Vec::new();
    let started = Instant::now();
    for &tasks in &args.grid_tasks {
        for &workers in &args.grid_workers {
            let connectors = (tasks / args.tasks as usize).max(1);
            let total = connectors * args.tasks as usize;
            let base = Sim::start(
                workers,
                connectors,
                args.tasks,
                args.delay_ms,
                args.max_rounds,
            )?;
            let fresh_ms = base.stats.assignor_ms.first().copied().unwrap_or(0.0);
            let mut sim = base.scenario(Departure::Java);
            sim.join(workers as u32);
            let join_ms = time_round(&sim, iterations)?;
            sim.round()?;
            let follow_up_ms = time_round(&sim, iterations)?;
            say(format!(
                "{workers} workers x {} tasks: fresh {fresh_ms:.1} ms, join round {join_ms:.2} ms, follow-up {follow_up_ms:.2} ms ({:.0} s wall so far)",
                thousands(total),
                started.elapsed().as_secs_f64()
            ));
            points.push(GridPoint {
                workers,
                tasks: total,
                join_ms,
                follow_up_ms,
                fresh_ms,
            });
        }
    }

    println!(
        "Incremental cooperative assignor, one worker joining a balanced group: the leader's assignor step, mean of {iterations} runs, ms ({} tasks per connector).\n",
        args.tasks
    );
    let mut tasks_axis: Vec<usize> = points.iter().map(|p| p.tasks).collect();
    tasks_axis.sort_unstable();
    tasks_axis.dedup();
    let header: Vec<String> = std::iter::once("workers".to_string())
        .chain(
            tasks_axis
                .iter()
                .map(|t| format!("{} tasks", thousands(*t))),
        )
        .collect();
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let tables: [(&str, GridValue); 3] = [
        ("join round (revoking)", |p| p.join_ms),
        ("follow-up round (assigning)", |p| p.follow_up_ms),
        ("fresh assignment (every job new, one run)", |p| p.fresh_ms),
    ];
    for (title, value) in tables {
        println!("{title}:\n");
        let mut table = Table::new(&header_refs);
        for &w in &args.grid_workers {
            let cells = tasks_axis
                .iter()
                .map(|&t| {
                    points
                        .iter()
                        .find(|p| p.workers == w && p.tasks == t)
                        .map_or("-".to_string(), |p| format!("{:.2}", value(p)))
                })
                .collect();
            table.row(w.to_string(), cells);
        }
        println!("{}", table.markdown());
    }

    let svg = plot(&points, &args.grid_workers, iterations, args.tasks);
    if let Some(dir) = args.plot.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(&args.plot, svg).map_err(|e| format!("{}: {e}", args.plot.display()))?;
    say(format!(
        "plot written to {} ({:.0} s wall)",
        args.plot.display(),
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// Mean ms of the leader's assignor step for the round `sim` would run next, over `iterations`
/// runs on copies of its state (nothing is committed).
fn time_round(sim: &Sim, iterations: usize) -> Result<f64, String> {
    let mut total = 0.0;
    for _ in 0..iterations {
        let mut s = sim.clone();
        total += s.round()?.assignor_ms;
    }
    Ok(total / iterations as f64)
}

/// A hand-written SVG line chart of the join round's cost: x = tasks, y = ms, one line per
/// worker count.
fn plot(points: &[GridPoint], workers: &[usize], iterations: usize, per_connector: u32) -> String {
    const W: f64 = 820.0;
    const H: f64 = 520.0;
    const LEFT: f64 = 80.0;
    const RIGHT: f64 = 170.0;
    const TOP: f64 = 60.0;
    const BOTTOM: f64 = 70.0;
    const COLORS: [&str; 8] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    ];
    let x_max_raw = points.iter().map(|p| p.tasks).max().unwrap_or(1) as f64;
    let y_max_raw = points.iter().map(|p| p.join_ms).fold(0.0, f64::max);
    let (x_step, x_max) = nice_axis(x_max_raw);
    let (y_step, y_max) = nice_axis(y_max_raw.max(1e-3));
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x = |v: f64| LEFT + v / x_max * pw;
    let y = |v: f64| TOP + ph - v / y_max * ph;

    let mut s = String::new();
    // Writing to a String cannot fail (the unwraps below).
    writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    ).unwrap();
    writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#).unwrap();
    writeln!(
        s,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="15" font-weight="bold">Incremental cooperative assignor: one worker joining, ms per round</text>"#,
        W / 2.0
    ).unwrap();
    writeln!(
        s,
        r##"<text x="{}" y="42" text-anchor="middle" fill="#555">leader's assignor step of the join (revoking) round, mean of {iterations} runs; {per_connector} tasks per connector</text>"##,
        W / 2.0
    ).unwrap();
    // Grid lines and ticks.
    let mut v = 0.0;
    while v <= y_max + y_step / 2.0 {
        let yy = y(v);
        writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#e0e0e0"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 8.0,
            yy + 4.0,
            trim_number(v)
        ).unwrap();
        v += y_step;
    }
    let mut v = 0.0;
    while v <= x_max + x_step / 2.0 {
        let xx = x(v);
        writeln!(
            s,
            r##"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{:.1}" stroke="#e0e0e0"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 18.0,
            thousands(v as usize)
        ).unwrap();
        v += x_step;
    }
    writeln!(
        s,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
    )
    .unwrap();
    writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">tasks in the group (connectors × {per_connector} tasks)</text>"#,
        LEFT + pw / 2.0,
        H - 22.0
    ).unwrap();
    writeln!(
        s,
        r#"<text x="20" y="{:.1}" text-anchor="middle" transform="rotate(-90 20 {:.1})">ms per join round</text>"#,
        TOP + ph / 2.0,
        TOP + ph / 2.0
    ).unwrap();
    // One line per worker count, with a legend entry.
    for (i, &w) in workers.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut line: Vec<&GridPoint> = points.iter().filter(|p| p.workers == w).collect();
        line.sort_by_key(|p| p.tasks);
        let coords: Vec<String> = line
            .iter()
            .map(|p| format!("{:.1},{:.1}", x(p.tasks as f64), y(p.join_ms)))
            .collect();
        writeln!(
            s,
            r#"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"#,
            coords.join(" ")
        )
        .unwrap();
        for p in &line {
            writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{w} workers, {} tasks: {:.2} ms</title></circle>"#,
                x(p.tasks as f64),
                y(p.join_ms),
                thousands(p.tasks),
                p.join_ms
            ).unwrap();
        }
        let ly = TOP + 10.0 + i as f64 * 22.0;
        let lx = LEFT + pw + 20.0;
        writeln!(
            s,
            r#"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2"/><circle cx="{:.1}" cy="{ly:.1}" r="3.5" fill="{color}"/><text x="{:.1}" y="{:.1}">{w} workers</text>"#,
            lx + 28.0,
            lx + 14.0,
            lx + 36.0,
            ly + 4.0
        ).unwrap();
    }
    writeln!(s, "</svg>").unwrap();
    s
}

/// A tick step of 1, 2 or 5 times a power of ten giving about 6 ticks up to at least `max`,
/// and the axis end (a multiple of the step).
fn nice_axis(max: f64) -> (f64, f64) {
    let raw = max / 6.0;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let step = mag
        * if norm <= 1.0 {
            1.0
        } else if norm <= 2.0 {
            2.0
        } else if norm <= 5.0 {
            5.0
        } else {
            10.0
        };
    (step, (max / step).ceil().max(1.0) * step)
}

/// A tick label: no trailing zeros.
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
