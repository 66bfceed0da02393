//! An in-memory group coordinator: the classic group protocol's rounds as Kafka's
//! `GroupCoordinator` runs them (a member joining or leaving starts a rebalance, the group forms
//! when every member has joined or the rebalance timeout has passed, the leader's SyncGroup
//! hands out the assignments), for tests and simulations of whole workers without a broker.
//!
//! What it models: member ids (`<client.id>-<n>`), generations, the leader kept across rounds
//! while it stays, the protocol chosen by the members' votes, members removed when they do not
//! rejoin within the rebalance timeout, and a member dropped without leaving (a crashed
//! worker) removed when its session timeout has passed. What it leaves out: the wire, static
//! membership, and heartbeats (a member learns of a rebalance at once, through
//! [`GroupMembership::rejoin_needed`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use super::membership::GroupMembership;
use super::{GroupError, HeartbeatHandle, JoinResult, RejoinReason};

/// A group coordinator in memory, shared by the [`MemoryMember`]s made from it.
pub struct MemoryGroup {
    state: Mutex<GroupState>,
    /// Woken on every change of `state`.
    changed: Notify,
    /// How long a rebalance waits for the members to rejoin (`rebalance.timeout.ms`).
    rebalance_timeout: Duration,
    /// How long a member dropped without leaving stays in the group (`session.timeout.ms`).
    session_timeout: Duration,
    /// How long the first round of an empty group waits for more members
    /// (`group.initial.rebalance.delay.ms`; each member joining meanwhile extends it, up to the
    /// rebalance timeout).
    initial_delay: Duration,
}

#[derive(Default)]
struct GroupState {
    /// The generation of the last round that formed (0 before the first).
    generation: i32,
    phase: Phase,
    /// Members in the order they first joined.
    members: Vec<Entry>,
    leader: Option<String>,
    next_id: u64,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Phase {
    #[default]
    Empty,
    /// Waiting for every member to join, until the deadline, and (the first round of an empty
    /// group) not forming before `not_before`.
    Preparing {
        deadline: Instant,
        not_before: Instant,
    },
    /// Formed; waiting for the leader's SyncGroup.
    Completing,
    /// Every member has (or can fetch) its assignment.
    Stable,
}

struct Entry {
    id: String,
    /// The protocols the member joined with in the round being prepared.
    protocols: Option<Vec<(String, Vec<u8>)>>,
    /// The answer to the member's JoinGroup once the round formed.
    joined: Option<Result<JoinResult, GroupError>>,
    /// The member's assignment in the current generation, once the leader sent it.
    assignment: Option<Vec<u8>>,
    /// The generation the member last joined.
    generation: i32,
    rejoin: Arc<watch::Sender<Option<RejoinReason>>>,
}

impl GroupState {
    fn entry(&mut self, id: &str) -> Option<&mut Entry> {
        self.members.iter_mut().find(|e| e.id == id)
    }

    /// Starts a round: every member but `except` is told to rejoin. An answer to a JoinGroup
    /// not yet taken stays (the broker sent it already); its SyncGroup will fail.
    fn start_rebalance(&mut self, except: Option<&str>, timeout: Duration) {
        let now = Instant::now();
        self.phase = Phase::Preparing {
            deadline: now + timeout,
            not_before: now,
        };
        for e in &mut self.members {
            e.assignment = None;
            if Some(e.id.as_str()) != except {
                e.protocols = None;
                e.rejoin
                    .send_replace(Some(RejoinReason::RebalanceInProgress));
            }
        }
    }

    /// Removes a member (it left, or its session or the rebalance timeout expired); the others
    /// rebalance.
    fn remove(&mut self, id: &str, reason: RejoinReason, timeout: Duration) {
        let Some(pos) = self.members.iter().position(|e| e.id == id) else {
            return;
        };
        let gone = self.members.remove(pos);
        gone.rejoin.send_replace(Some(reason));
        if self.leader.as_deref() == Some(id) {
            self.leader = None;
        }
        if self.members.is_empty() {
            self.phase = Phase::Empty;
        } else if !matches!(self.phase, Phase::Preparing { .. }) {
            self.start_rebalance(None, timeout);
        }
    }

    /// Forms the round being prepared once every member joined, or, past the deadline, with
    /// those that did (the others are removed).
    fn try_complete(&mut self, timeout: Duration) {
        let Phase::Preparing {
            deadline,
            not_before,
        } = self.phase
        else {
            return;
        };
        let now = Instant::now();
        if now < not_before && now < deadline {
            return;
        }
        if now >= deadline {
            let late: Vec<String> = self
                .members
                .iter()
                .filter(|e| e.protocols.is_none())
                .map(|e| e.id.clone())
                .collect();
            for id in late {
                tracing::debug!(member = %id, "member did not rejoin within the rebalance timeout");
                self.remove(&id, RejoinReason::UnknownMemberId, timeout);
            }
        }
        if self.members.is_empty() || self.members.iter().any(|e| e.protocols.is_none()) {
            return;
        }
        self.generation += 1;
        if self.leader.is_none() {
            self.leader = Some(self.members[0].id.clone());
        }
        let leader = self.leader.clone().unwrap_or_default();
        let chosen = self.choose_protocol(&leader);
        let members: Vec<(String, Vec<u8>)> = match &chosen {
            Some(name) => self
                .members
                .iter()
                .map(|e| (e.id.clone(), metadata_for(e, name)))
                .collect(),
            None => Vec::new(),
        };
        let generation = self.generation;
        for e in &mut self.members {
            e.generation = generation;
            e.assignment = None;
            e.protocols = None;
            e.joined = Some(match &chosen {
                Some(name) => Ok(JoinResult {
                    generation,
                    member_id: e.id.clone(),
                    leader_id: leader.clone(),
                    protocol_name: name.clone(),
                    members: if e.id == leader {
                        members.clone()
                    } else {
                        Vec::new()
                    },
                    join_requests: 1,
                }),
                None => Err(GroupError::Broker {
                    api: "JoinGroup",
                    code: 23,
                    name: "INCONSISTENT_GROUP_PROTOCOL".into(),
                }),
            });
        }
        self.phase = Phase::Completing;
    }

    /// The protocol every member supports with the most first choices among those (Kafka's
    /// `selectProtocol`), ties going to the leader's order; `None` when no protocol is common.
    fn choose_protocol(&self, leader: &str) -> Option<String> {
        let supports = |e: &Entry, name: &str| {
            e.protocols
                .as_ref()
                .is_some_and(|ps| ps.iter().any(|(n, _)| n == name))
        };
        let order: Vec<String> = self
            .members
            .iter()
            .find(|e| e.id == leader)
            .or(self.members.first())
            .and_then(|e| e.protocols.as_ref())
            .map(|ps| ps.iter().map(|(n, _)| n.clone()).collect())
            .unwrap_or_default();
        let candidates: Vec<&String> = order
            .iter()
            .filter(|name| self.members.iter().all(|e| supports(e, name)))
            .collect();
        let votes = |name: &str| {
            self.members
                .iter()
                .filter(|e| {
                    e.protocols
                        .as_ref()
                        .and_then(|ps| ps.iter().map(|(n, _)| n).find(|n| candidates.contains(n)))
                        == Some(&name.to_string())
                })
                .count()
        };
        // The first candidate among those with the most votes: max_by_key keeps the last.
        candidates
            .iter()
            .rev()
            .max_by_key(|name| votes(name))
            .map(|name| (*name).clone())
    }
}

fn metadata_for(e: &Entry, name: &str) -> Vec<u8> {
    e.protocols
        .as_ref()
        .and_then(|ps| ps.iter().find(|(n, _)| n == name))
        .map(|(_, m)| m.clone())
        .unwrap_or_default()
}

impl MemoryGroup {
    /// An empty group whose rounds wait `rebalance_timeout` for members to rejoin, and whose
    /// members dropped without leaving are removed after `session_timeout`.
    /// Its first round forms as soon as the first member joined (an initial rebalance delay of
    /// 0, as Connect's test clusters set it); see [`with_initial_delay`](Self::with_initial_delay).
    pub fn new(rebalance_timeout: Duration, session_timeout: Duration) -> Arc<MemoryGroup> {
        Self::with_initial_delay(rebalance_timeout, session_timeout, Duration::ZERO)
    }

    /// [`new`](Self::new) with `group.initial.rebalance.delay.ms` = `initial_delay` (the
    /// broker's default is 3 s).
    pub fn with_initial_delay(
        rebalance_timeout: Duration,
        session_timeout: Duration,
        initial_delay: Duration,
    ) -> Arc<MemoryGroup> {
        Arc::new(MemoryGroup {
            state: Mutex::default(),
            changed: Notify::new(),
            rebalance_timeout,
            session_timeout,
            initial_delay,
        })
    }

    /// A new member (not joined yet) whose ids start with `client_id`.
    pub fn member(self: &Arc<Self>, client_id: impl Into<String>) -> MemoryMember {
        MemoryMember {
            group: self.clone(),
            client_id: client_id.into(),
            member_id: String::new(),
            generation: -1,
            rejoin: Arc::new(watch::Sender::new(None)),
        }
    }

    /// The ids of the members, in the order they first joined.
    pub fn members(&self) -> Vec<String> {
        let st = self.state.lock().unwrap();
        st.members.iter().map(|e| e.id.clone()).collect()
    }

    /// The generation of the last round that formed.
    pub fn generation(&self) -> i32 {
        self.state.lock().unwrap().generation
    }

    /// Applies `f` to the state under its lock, then wakes every waiting member.
    fn update<T>(&self, f: impl FnOnce(&mut GroupState) -> T) -> T {
        let out = f(&mut self.state.lock().unwrap());
        self.changed.notify_waiters();
        out
    }

    /// Waits until `check` gives an answer, checking on every change and at the deadline of
    /// the round being prepared (where members that did not rejoin are removed).
    async fn wait_for<T>(&self, mut check: impl FnMut(&mut GroupState) -> Option<T>) -> T {
        loop {
            let mut notified = std::pin::pin!(self.changed.notified());
            notified.as_mut().enable();
            let deadline = {
                let mut st = self.state.lock().unwrap();
                if let Some(out) = check(&mut st) {
                    return out;
                }
                match st.phase {
                    Phase::Preparing {
                        deadline,
                        not_before,
                    } if not_before > Instant::now() => Some(not_before.min(deadline)),
                    Phase::Preparing { deadline, .. } => Some(deadline),
                    _ => None,
                }
            };
            match deadline {
                Some(d) => {
                    if tokio::time::timeout_at(d, notified).await.is_err() {
                        self.update(|st| st.try_complete(self.rebalance_timeout));
                    }
                }
                None => notified.await,
            }
        }
    }

    /// Removes `member_id` when its session has expired (it was dropped without leaving).
    fn expire(&self, member_id: &str) {
        tracing::debug!(member = %member_id, "session of an in-memory group member expired");
        self.update(|st| {
            st.remove(member_id, RejoinReason::SessionLost, self.rebalance_timeout);
            st.try_complete(self.rebalance_timeout);
        });
    }
}

/// A member of a [`MemoryGroup`], implementing [`GroupMembership`] as
/// [`GroupMember`](super::GroupMember) does over the wire.
pub struct MemoryMember {
    group: Arc<MemoryGroup>,
    client_id: String,
    /// Empty until the first join, and again after leaving.
    member_id: String,
    generation: i32,
    rejoin: Arc<watch::Sender<Option<RejoinReason>>>,
}

impl MemoryMember {
    /// This member's id (empty before it joined).
    pub fn member_id(&self) -> &str {
        &self.member_id
    }
}

#[async_trait::async_trait]
impl GroupMembership for MemoryMember {
    async fn join(&mut self, protocols: Vec<(String, Vec<u8>)>) -> Result<JoinResult, GroupError> {
        self.rejoin.send_replace(None);
        let group = self.group.clone();
        let timeout = group.rebalance_timeout;
        let id = group.update(|st| {
            let known = !self.member_id.is_empty() && st.entry(&self.member_id).is_some();
            if !known {
                st.next_id += 1;
                self.member_id = format!("{}-{}", self.client_id, st.next_id);
                st.members.push(Entry {
                    id: self.member_id.clone(),
                    protocols: None,
                    joined: None,
                    assignment: None,
                    generation: -1,
                    rejoin: self.rejoin.clone(),
                });
            }
            let now = Instant::now();
            match st.phase {
                Phase::Empty => {
                    st.start_rebalance(Some(&self.member_id), timeout);
                    st.phase = Phase::Preparing {
                        deadline: now + timeout,
                        not_before: now + group.initial_delay,
                    };
                }
                // A member joining the delayed first round extends it.
                Phase::Preparing {
                    deadline,
                    not_before,
                } if not_before > now => {
                    st.phase = Phase::Preparing {
                        deadline,
                        not_before: (now + group.initial_delay).min(deadline),
                    };
                }
                Phase::Preparing { .. } => {}
                Phase::Completing | Phase::Stable => {
                    st.start_rebalance(Some(&self.member_id), timeout)
                }
            }
            if let Some(e) = st.entry(&self.member_id) {
                e.protocols = Some(protocols);
                e.joined = None;
            }
            st.try_complete(timeout);
            self.member_id.clone()
        });
        let joined = group
            .wait_for(|st| match st.entry(&id) {
                None => Some(Err(GroupError::RejoinNeeded(RejoinReason::UnknownMemberId))),
                Some(e) => e.joined.take(),
            })
            .await;
        match &joined {
            Ok(j) => self.generation = j.generation,
            Err(GroupError::RejoinNeeded(RejoinReason::UnknownMemberId)) => {
                self.member_id.clear();
                self.generation = -1;
            }
            Err(_) => {}
        }
        // A rebalance started by another member while this one waited was already answered
        // by this join.
        self.rejoin.send_replace(None);
        joined
    }

    async fn sync(&mut self, assignments: Vec<(String, Vec<u8>)>) -> Result<Vec<u8>, GroupError> {
        let (id, generation) = (self.member_id.clone(), self.generation);
        let group = self.group.clone();
        let rejoin = |reason| Err(GroupError::RejoinNeeded(reason));
        let first = group.update(|st| {
            let (leader, phase, current) = (st.leader.clone(), st.phase, st.generation);
            let Some(_) = st.entry(&id) else {
                return Some(rejoin(RejoinReason::UnknownMemberId));
            };
            if matches!(phase, Phase::Preparing { .. }) {
                return Some(rejoin(RejoinReason::RebalanceInProgress));
            }
            if generation != current {
                return Some(rejoin(RejoinReason::IllegalGeneration));
            }
            if leader.as_deref() == Some(id.as_str()) && phase == Phase::Completing {
                for e in &mut st.members {
                    let a = assignments.iter().find(|(m, _)| *m == e.id);
                    e.assignment = Some(a.map(|(_, a)| a.clone()).unwrap_or_default());
                }
                st.phase = Phase::Stable;
            }
            None
        });
        if let Some(out) = first {
            if matches!(
                out,
                Err(GroupError::RejoinNeeded(RejoinReason::UnknownMemberId))
            ) {
                self.member_id.clear();
                self.generation = -1;
            }
            return out;
        }
        group
            .wait_for(|st| {
                let moved_on = st.generation != generation;
                let preparing = matches!(st.phase, Phase::Preparing { .. });
                match st.entry(&id) {
                    None => Some(rejoin(RejoinReason::UnknownMemberId)),
                    Some(_) if moved_on || preparing => {
                        Some(rejoin(RejoinReason::RebalanceInProgress))
                    }
                    Some(e) => e.assignment.clone().map(Ok),
                }
            })
            .await
    }

    async fn leave(&mut self, _reason: &str) -> Result<(), GroupError> {
        let id = std::mem::take(&mut self.member_id);
        self.generation = -1;
        if !id.is_empty() {
            let group = self.group.clone();
            group.update(|st| {
                st.remove(&id, RejoinReason::UnknownMemberId, group.rebalance_timeout);
                st.try_complete(group.rebalance_timeout);
            });
        }
        // The member's own signal is not for it once it left.
        self.rejoin.send_replace(None);
        Ok(())
    }

    fn rejoin_needed(&self) -> watch::Receiver<Option<RejoinReason>> {
        self.rejoin.subscribe()
    }

    fn heartbeat_handle(&self) -> HeartbeatHandle {
        HeartbeatHandle::inert()
    }
}

/// Dropped without leaving: the member stays until its session expires, as a crashed worker
/// does (needs a tokio runtime; without one it is removed at once).
impl Drop for MemoryMember {
    fn drop(&mut self) {
        if self.member_id.is_empty() {
            return;
        }
        let (group, id) = (self.group.clone(), std::mem::take(&mut self.member_id));
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    tokio::time::sleep(group.session_timeout).await;
                    group.expire(&id);
                });
            }
            Err(_) => group.expire(&id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REBALANCE: Duration = Duration::from_secs(5);
    const SESSION: Duration = Duration::from_secs(3);
    const INITIAL: Duration = Duration::from_millis(100);

    fn group() -> Arc<MemoryGroup> {
        MemoryGroup::with_initial_delay(REBALANCE, SESSION, INITIAL)
    }

    fn protocols(names: &[&str], tag: u8) -> Vec<(String, Vec<u8>)> {
        names.iter().map(|n| (n.to_string(), vec![tag])).collect()
    }

    /// Joins and syncs `members` concurrently; the leader assigns each member its own id's
    /// bytes. Returns each member's (join result, assignment).
    async fn round(members: &mut [MemoryMember]) -> Vec<(JoinResult, Vec<u8>)> {
        let taken: Vec<MemoryMember> = members
            .iter_mut()
            .map(|m| {
                let group = m.group.clone();
                std::mem::replace(m, group.member("placeholder"))
            })
            .collect();
        let handles: Vec<_> = taken
            .into_iter()
            .enumerate()
            .map(|(i, mut m)| {
                tokio::spawn(async move {
                    // Until a round completes: one that formed before every member joined is
                    // followed by another, as on a broker.
                    loop {
                        let j = m
                            .join(protocols(&["sessioned", "compatible"], i as u8))
                            .await?;
                        let out = if j.is_leader() {
                            j.members
                                .iter()
                                .map(|(id, _)| (id.clone(), id.as_bytes().to_vec()))
                                .collect()
                        } else {
                            Vec::new()
                        };
                        match m.sync(out).await {
                            Ok(a) => return Ok::<_, GroupError>((m, j, a)),
                            Err(GroupError::RejoinNeeded(_)) => continue,
                            Err(e) => return Err(e),
                        }
                    }
                })
            })
            .collect();
        let mut out = Vec::new();
        for (slot, h) in members.iter_mut().zip(handles) {
            let (m, j, a) = h.await.unwrap().unwrap();
            *slot = m;
            out.push((j, a));
        }
        out
    }

    #[tokio::test(start_paused = true)]
    async fn members_form_a_generation_with_one_leader_and_their_assignments() {
        let group = group();
        let mut members = vec![group.member("w1"), group.member("w2"), group.member("w3")];
        let out = round(&mut members).await;
        let leaders: Vec<_> = out.iter().filter(|(j, _)| j.is_leader()).collect();
        assert_eq!(leaders.len(), 1);
        assert_eq!(
            leaders[0].0.members.len(),
            3,
            "the leader sees every member"
        );
        for (j, a) in &out {
            assert_eq!(j.generation, 1);
            assert_eq!(j.protocol_name, "sessioned");
            assert_eq!(
                a,
                j.member_id.as_bytes(),
                "each member gets its own assignment"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_member_makes_the_others_rejoin_and_the_leader_stays() {
        let group = group();
        let mut members = vec![group.member("w1"), group.member("w2")];
        let first = round(&mut members).await;
        let leader = first
            .iter()
            .find(|(j, _)| j.is_leader())
            .unwrap()
            .0
            .member_id
            .clone();
        let signals: Vec<_> = members.iter().map(|m| m.rejoin_needed()).collect();
        members.push(group.member("w3"));
        let second = round(&mut members).await;
        assert!(
            signals.iter().all(|s| s.borrow().is_none()),
            "cleared by the rejoin"
        );
        let generation = second[0].0.generation;
        assert!(generation > first[0].0.generation);
        assert!(second.iter().all(|(j, _)| j.generation == generation));
        assert_eq!(second.iter().filter(|(j, _)| j.is_leader()).count(), 1);
        assert_eq!(
            second
                .iter()
                .find(|(j, _)| j.is_leader())
                .unwrap()
                .0
                .member_id,
            leader
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_member_that_does_not_rejoin_is_removed_after_the_rebalance_timeout() {
        let group = group();
        let mut members = vec![group.member("w1"), group.member("w2")];
        round(&mut members).await;
        let mut silent = members.pop().unwrap();
        let started = Instant::now();
        let rejoin = silent.rejoin_needed();
        let out = round(&mut members[..1]).await;
        assert!(started.elapsed() >= REBALANCE);
        assert_eq!(out[0].0.members.len(), 1);
        assert_eq!(group.members().len(), 1);
        assert_eq!(*rejoin.borrow(), Some(RejoinReason::UnknownMemberId));
        // Its next join starts over with a new id.
        let j = silent.join(protocols(&["sessioned"], 9)).await;
        assert!(j.is_err() || j.as_ref().unwrap().member_id != out[0].0.member_id);
        silent.leave("done").await.unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_member_leaves_when_its_session_expires_and_a_leaver_at_once() {
        let group = group();
        let mut members = vec![group.member("w1"), group.member("w2"), group.member("w3")];
        round(&mut members).await;
        let mut leaver = members.pop().unwrap();
        let signal = members[0].rejoin_needed();
        leaver.leave("stopping").await.unwrap();
        assert_eq!(group.members().len(), 2);
        assert_eq!(*signal.borrow(), Some(RejoinReason::RebalanceInProgress));
        round(&mut members).await;
        let crashed = members.pop().unwrap();
        drop(crashed);
        assert_eq!(
            group.members().len(),
            2,
            "still in the group within its session"
        );
        tokio::time::sleep(SESSION + Duration::from_millis(1)).await;
        assert_eq!(group.members().len(), 1);
        assert_eq!(*signal.borrow(), Some(RejoinReason::RebalanceInProgress));
    }

    #[tokio::test(start_paused = true)]
    async fn a_sync_after_the_group_moved_on_asks_for_a_rejoin() {
        let group = group();
        let mut a = group.member("w1");
        let j = a.join(protocols(&["sessioned"], 1)).await.unwrap();
        assert!(j.is_leader());
        let mut b = group.member("w2");
        let b_join = tokio::spawn(async move {
            let r = b.join(protocols(&["sessioned"], 2)).await;
            (b, r)
        });
        tokio::task::yield_now().await;
        let err = a
            .sync(vec![(j.member_id.clone(), vec![])])
            .await
            .unwrap_err();
        assert!(matches!(err, GroupError::RejoinNeeded(_)), "{err}");
        a.join(protocols(&["sessioned"], 1)).await.unwrap();
        let (_b, r) = b_join.await.unwrap();
        assert_eq!(r.unwrap().generation, 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_protocol_is_the_common_one_most_members_prefer() {
        let group = group();
        let mut old = group.member("old");
        let mut new = group.member("new");
        let (a, b) = tokio::join!(
            old.join(protocols(&["default"], 1)),
            new.join(protocols(&["sessioned", "compatible", "default"], 2))
        );
        assert_eq!(a.unwrap().protocol_name, "default");
        assert_eq!(b.unwrap().protocol_name, "default");
    }
}
