//! Balancing a round's layout (the part of Connect's `IncrementalCooperativeAssignor` that
//! computes load-balancing revocations and places new jobs): a plan towards a layout where
//! connector totals, task totals and each connector's task counts differ by at most one
//! between members, keeping as many jobs in place as it can; and the greedy placement used
//! while a delay runs.

use super::*;

/// Load-balancing plan: revocations and placements towards a balanced layout.
#[derive(Debug, Default)]
pub(super) struct Plan {
    revoke_conns: Vec<(usize, u32)>,
    revoke_tasks: Vec<(usize, u32)>,
    place_conns: Vec<(usize, u32)>,
    place_tasks: Vec<(usize, u32)>,
}

impl Plan {
    pub(super) fn has_revocations(&self) -> bool {
        !self.revoke_conns.is_empty() || !self.revoke_tasks.is_empty()
    }
}

pub(super) fn apply_plan(loads: &mut [Load], deltas: &mut [Delta], plan: &Plan) {
    let mut rc: Vec<Vec<u32>> = vec![Vec::new(); loads.len()];
    let mut rt: Vec<Vec<u32>> = vec![Vec::new(); loads.len()];
    for &(w, c) in &plan.revoke_conns {
        rc[w].push(c);
        deltas[w].revoke_conns.push(c);
    }
    for &(w, t) in &plan.revoke_tasks {
        rt[w].push(t);
        deltas[w].revoke_tasks.push(t);
    }
    for (w, load) in loads.iter_mut().enumerate() {
        if !rc[w].is_empty() {
            rc[w].sort_unstable();
            load.conns.retain(|c| rc[w].binary_search(c).is_err());
        }
        if !rt[w].is_empty() {
            rt[w].sort_unstable();
            load.tasks.retain(|t| rt[w].binary_search(t).is_err());
        }
    }
    for &(w, c) in &plan.place_conns {
        loads[w].conns.push(c);
        deltas[w].add_conns.push(c);
    }
    for &(w, t) in &plan.place_tasks {
        loads[w].tasks.push(t);
        deltas[w].add_tasks.push(t);
    }
}

/// Adds `conns` and `tasks` (sorted dense ids, held by nobody) to the `eligible` members
/// without moving anything: each connector to the member with the fewest connectors, each task
/// to the member with the fewest tasks of that connector, then the fewest tasks (ties: lower
/// member index). On empty members this yields a layout balanced per connector and in total.
pub(super) fn place_greedy(
    cat: &Catalog<'_>,
    loads: &mut [Load],
    deltas: &mut [Delta],
    eligible: &[usize],
    conns: &[u32],
    tasks: &[u32],
) {
    if eligible.is_empty() {
        return;
    }
    for &c in conns {
        let w = *eligible
            .iter()
            .min_by_key(|&&w| (loads[w].conns.len(), w))
            .expect("non-empty");
        loads[w].conns.push(c);
        deltas[w].add_conns.push(c);
    }
    if tasks.is_empty() {
        return;
    }
    // Count, per member, the tasks of the connectors that receive tasks.
    let nw = loads.len();
    let mut slot = vec![u32::MAX; cat.connectors()];
    let mut k = 0u32;
    for &t in tasks {
        let c = cat.task_conn[t as usize] as usize;
        if slot[c] == u32::MAX {
            slot[c] = k;
            k += 1;
        }
    }
    let mut count = vec![0u32; k as usize * nw];
    for (w, load) in loads.iter().enumerate() {
        for &t in &load.tasks {
            let s = slot[cat.task_conn[t as usize] as usize];
            if s != u32::MAX {
                count[s as usize * nw + w] += 1;
            }
        }
    }
    let mut total: Vec<usize> = loads.iter().map(|l| l.tasks.len()).collect();
    for &t in tasks {
        let s = slot[cat.task_conn[t as usize] as usize] as usize;
        let row = &mut count[s * nw..(s + 1) * nw];
        let w = *eligible
            .iter()
            .min_by_key(|&&w| (row[w], total[w], w))
            .expect("non-empty");
        row[w] += 1;
        total[w] += 1;
        loads[w].tasks.push(t);
        deltas[w].add_tasks.push(t);
    }
}

/// Computes the revocations and placements that lead to a layout where connector totals, task
/// totals and every connector's task counts differ by at most one between members, keeping as
/// many held jobs in place as it can. `assign_*` are the jobs placeable now (held by nobody);
/// other unheld configured jobs (duplicates being revoked) only reserve room.
pub(super) fn balance_plan(
    cat: &Catalog<'_>,
    loads: &[Load],
    assign_conns: &[u32],
    assign_tasks: &[u32],
    preferred: &[usize],
) -> Plan {
    let nw = loads.len();
    let mut pref = vec![false; nw];
    for &w in preferred {
        pref[w] = true;
    }
    let mut plan = Plan::default();

    // Connector instances: one group balanced on totals.
    {
        let total = cat.instances;
        let (fl, ex) = (total / nw, total % nw);
        let mut order: Vec<usize> = (0..nw).collect();
        order.sort_by_key(|&w| (Reverse(loads[w].conns.len()), w));
        let mut quota = vec![fl; nw];
        for &w in order.iter().take(ex) {
            quota[w] += 1;
        }
        let mut deficit = vec![0usize; nw];
        for w in 0..nw {
            let held = loads[w].conns.len();
            if held > quota[w] {
                let mut cs = loads[w].conns.clone();
                cs.sort_unstable();
                for &c in &cs[quota[w]..] {
                    plan.revoke_conns.push((w, c));
                }
            } else {
                deficit[w] = quota[w] - held;
            }
        }
        let mut holes: Vec<(usize, usize)> = (0..nw)
            .filter(|&w| deficit[w] > 0)
            .map(|w| (w, deficit[w]))
            .collect();
        holes.sort_by_key(|&(w, _)| (!pref[w], w));
        fill_holes(&holes, assign_conns.iter().copied(), &mut plan.place_conns);
    }

    // Tasks: per connector c, q_c = n_c / W on every member plus one "extra" on r_c = n_c % W
    // members; each member's number of extras is balanced too, so totals differ by <= 1.
    let nc = cat.connectors();
    if cat.tasks() == 0 {
        return plan;
    }
    // holders[c] = (member, its sorted held tasks of c).
    let mut holders: Vec<Vec<(u32, Vec<u32>)>> = vec![Vec::new(); nc];
    let mut held_total = vec![0usize; nw];
    for (w, load) in loads.iter().enumerate() {
        let mut ts = load.tasks.clone();
        ts.sort_unstable();
        held_total[w] = ts.len();
        let mut i = 0;
        while i < ts.len() {
            let c = cat.task_conn[ts[i] as usize];
            let mut j = i + 1;
            while j < ts.len() && cat.task_conn[ts[j] as usize] == c {
                j += 1;
            }
            holders[c as usize].push((w as u32, ts[i..j].to_vec()));
            i = j;
        }
    }
    let q: Vec<usize> = (0..nc)
        .map(|c| cat.task_count(c as u32) as usize / nw)
        .collect();
    let r: Vec<usize> = (0..nc)
        .map(|c| cat.task_count(c as u32) as usize % nw)
        .collect();
    let extras: usize = r.iter().sum();
    let (f_extra, high_count) = (extras / nw, extras % nw);
    // Gain edges: members holding more than q_c of c keep one extra job if they get an extra.
    let mut gain_count = vec![0usize; nw];
    for c in 0..nc {
        if r[c] == 0 {
            continue;
        }
        for (w, ts) in &holders[c] {
            if ts.len() > q[c] {
                gain_count[*w as usize] += 1;
            }
        }
    }
    // gains[c] = members holding more than q_c of c (they keep one more job with an extra).
    let gains: Vec<Vec<u32>> = (0..nc)
        .map(|c| {
            if r[c] == 0 {
                return Vec::new();
            }
            holders[c]
                .iter()
                .filter(|(_, ts)| ts.len() > q[c])
                .map(|(w, _)| *w)
                .collect()
        })
        .collect();
    let mut ex = Extras {
        x: vec![Vec::new(); nc],
        users: vec![Vec::new(); nw],
        used: vec![0; nw],
        f_extra,
        high_left: high_count,
    };
    let mut conn_order: Vec<usize> = (0..nc).filter(|&c| r[c] > 0).collect();
    conn_order.sort_by_key(|&c| (Reverse(r[c]), c));
    // Phase 1: keep extras where they are held: greedy, members with fewer keep-candidates first.
    for &c in &conn_order {
        let mut ws = gains[c].clone();
        ws.sort_by_key(|&w| (gain_count[w as usize], w));
        for w in ws {
            if ex.x[c].len() == r[c] {
                break;
            }
            if ex.room(w as usize) {
                ex.take(c, w as usize);
            }
        }
    }
    // ... then augmenting paths over keep edges only: a maximum number of kept extras, i.e.
    // the fewest revocations.
    let gain = |c: usize, w: usize| gains[c].contains(&(w as u32));
    ex.augment_all(
        &conn_order,
        &r,
        nw,
        |c, ex, out| out.extend(gains[c].iter().copied().filter(|w| !ex.x[c].contains(w))),
        &gain,
        false,
    );
    // Phase 2: complete, largest remaining demand first, to the members with the most room.
    let mut by_demand = conn_order.clone();
    by_demand.sort_by_key(|&c| (Reverse(r[c] - ex.x[c].len()), c));
    let mut mark = vec![usize::MAX; nw];
    let mut by_room: Vec<u32> = (0..nw as u32).collect();
    for &c in &by_demand {
        if ex.x[c].len() == r[c] {
            continue;
        }
        for &w in &ex.x[c] {
            mark[w as usize] = c;
        }
        by_room.sort_by_key(|&w| (ex.used[w as usize], w));
        for &w in &by_room {
            if ex.x[c].len() == r[c] {
                break;
            }
            if mark[w as usize] != c && ex.room(w as usize) {
                ex.take(c, w as usize);
                mark[w as usize] = c;
            }
        }
    }
    // Rarely needed: augmenting paths over all edges (a complete layout always exists), first
    // only through steps that keep as many held extras as they give up, then any.
    let any_edge = |c: usize, ex: &Extras, out: &mut Vec<u32>| {
        out.extend((0..nw as u32).filter(|w| !ex.x[c].contains(w)))
    };
    ex.augment_all(&conn_order, &r, nw, any_edge, &gain, true);
    ex.augment_all(&conn_order, &r, nw, any_edge, &gain, false);
    // Last resort (should not happen): ignore the per-member extras budget.
    for &c in &conn_order {
        let mut w = 0;
        while ex.x[c].len() < r[c] && w < nw {
            if !ex.x[c].contains(&(w as u32)) {
                tracing::warn!("cooperative assignor: extras layout incomplete; relaxing totals");
                ex.x[c].push(w as u32);
            }
            w += 1;
        }
    }
    let x = ex.x;

    // Quotas -> revocations and placements.
    let mut quota = vec![0usize; nw];
    let mut held = vec![0usize; nw];
    let mut place_from = 0usize;
    for c in 0..nc {
        quota.iter_mut().for_each(|v| *v = q[c]);
        for &w in &x[c] {
            quota[w as usize] += 1;
        }
        for (w, ts) in &holders[c] {
            let w = *w as usize;
            held[w] = ts.len();
            if ts.len() > quota[w] {
                for &t in &ts[quota[w]..] {
                    plan.revoke_tasks.push((w, t));
                }
            }
        }
        // Placeable tasks of c (assign_tasks is sorted, hence grouped by connector).
        let start = place_from;
        while place_from < assign_tasks.len()
            && cat.task_conn[assign_tasks[place_from] as usize] as usize == c
        {
            place_from += 1;
        }
        let mut to_place = assign_tasks[start..place_from].iter();
        if start < place_from {
            // Holes: biggest first, then members with fewer tasks overall.
            let mut holes: Vec<(usize, usize)> = (0..nw)
                .filter(|&w| quota[w] > held[w])
                .map(|w| (w, quota[w] - held[w]))
                .collect();
            holes.sort_by_key(|&(w, n)| (!pref[w], Reverse(n), held_total[w], w));
            fill_holes(&holes, to_place.by_ref().copied(), &mut plan.place_tasks);
        }
        for (w, _) in &holders[c] {
            held[*w as usize] = 0;
        }
    }
    plan
}

/// Places `jobs` into `holes` (member, free slots) round-robin, one per hole and pass.
pub(super) fn fill_holes(
    holes: &[(usize, usize)],
    mut jobs: impl Iterator<Item = u32>,
    out: &mut Vec<(usize, u32)>,
) {
    let mut left: Vec<usize> = holes.iter().map(|h| h.1).collect();
    loop {
        let mut any = false;
        for (i, &(w, _)) in holes.iter().enumerate() {
            if left[i] == 0 {
                continue;
            }
            let Some(j) = jobs.next() else {
                return;
            };
            out.push((w, j));
            left[i] -= 1;
            any = true;
        }
        if !any {
            return;
        }
    }
}

/// Which members get an extra task of which connector (one per member and connector), with
/// each member's number of extras within `f_extra` (+1 for `high_left` members).
pub(super) struct Extras {
    pub(super) x: Vec<Vec<u32>>,
    pub(super) users: Vec<Vec<u32>>,
    pub(super) used: Vec<usize>,
    pub(super) f_extra: usize,
    pub(super) high_left: usize,
}

impl Extras {
    pub(super) fn room(&self, w: usize) -> bool {
        self.used[w] < self.f_extra || (self.used[w] == self.f_extra && self.high_left > 0)
    }

    pub(super) fn take(&mut self, c: usize, w: usize) {
        if self.used[w] == self.f_extra {
            self.high_left -= 1;
        }
        self.used[w] += 1;
        self.x[c].push(w as u32);
        self.users[w].push(c as u32);
    }

    /// Augments every connector still short of extras until no path is left. `edges(c, ex,
    /// out)` lists the members `c` may move to; with `strict`, a connector may only leave a
    /// member where it is held above its floor (`gain`) if the step into that member also
    /// landed on such a member, so no path loses a kept job.
    pub(super) fn augment_all(
        &mut self,
        order: &[usize],
        r: &[usize],
        nw: usize,
        edges: impl Fn(usize, &Extras, &mut Vec<u32>),
        gain: &impl Fn(usize, usize) -> bool,
        strict: bool,
    ) {
        if order.iter().all(|&c| self.x[c].len() >= r[c]) {
            return;
        }
        let mut dead = vec![false; 2 * nw];
        loop {
            let mut progress = false;
            for &c in order {
                while self.x[c].len() < r[c] && self.augment(c, nw, &edges, gain, strict, &mut dead)
                {
                    progress = true;
                    dead.iter_mut().for_each(|d| *d = false);
                }
            }
            if !progress {
                return;
            }
        }
    }

    /// BFS for an augmenting path giving `c0` one more extra: `c0` takes member `w1`, whose
    /// user `c1` moves to `w2`, ..., until a member with room. States are (member, whether the
    /// step into it landed on a kept job). States found not to reach any room are marked
    /// `dead` (valid until the next successful augmentation).
    pub(super) fn augment(
        &mut self,
        c0: usize,
        nw: usize,
        edges: &impl Fn(usize, &Extras, &mut Vec<u32>),
        gain: &impl Fn(usize, usize) -> bool,
        strict: bool,
        dead: &mut [bool],
    ) -> bool {
        let mut parent: Vec<Option<(usize, Option<usize>)>> = vec![None; 2 * nw];
        let mut visited = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        let mut buf = Vec::new();
        let state = |c: usize, w: usize| 2 * w + usize::from(!strict || gain(c, w));
        let mut end = None;
        edges(c0, self, &mut buf);
        for &w in &buf {
            let s = state(c0, w as usize);
            if !dead[s] && parent[s].is_none() {
                parent[s] = Some((c0, None));
                visited.push(s);
                if self.room(w as usize) {
                    end = Some(s);
                    break;
                }
                queue.push_back(s);
            }
        }
        'bfs: while end.is_none() {
            let Some(s) = queue.pop_front() else {
                break;
            };
            let (w, landed_on_gain) = (s / 2, s % 2 == 1);
            for i in 0..self.users[w].len() {
                let c = self.users[w][i] as usize;
                if strict && !landed_on_gain && gain(c, w) {
                    continue;
                }
                buf.clear();
                edges(c, self, &mut buf);
                for &w2 in &buf {
                    let s2 = state(c, w2 as usize);
                    if !dead[s2] && parent[s2].is_none() {
                        parent[s2] = Some((c, Some(s)));
                        visited.push(s2);
                        if self.room(w2 as usize) {
                            end = Some(s2);
                            break 'bfs;
                        }
                        queue.push_back(s2);
                    }
                }
            }
        }
        let Some(mut s) = end else {
            for s in visited {
                dead[s] = true;
            }
            return false;
        };
        let w_end = s / 2;
        if self.used[w_end] == self.f_extra {
            self.high_left -= 1;
        }
        self.used[w_end] += 1;
        loop {
            let w = s / 2;
            let (c, from) = parent[s].expect("on path");
            self.x[c].push(w as u32);
            self.users[w].push(c as u32);
            match from {
                None => break,
                Some(ps) => {
                    // c gives up the previous member, which the previous connector takes.
                    let prev = ps / 2;
                    self.x[c].retain(|&v| v as usize != prev);
                    self.users[prev].retain(|&v| v as usize != c);
                    s = ps;
                }
            }
        }
        true
    }
}
