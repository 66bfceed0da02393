//! Connectors as code (issue #35) on a Tributary cluster: `tributary apply` run against a
//! follower of a two-worker group (its writes are forwarded to the leader), with the scenario
//! the Java test runs too (`mixed_cluster.rs`).

use crate::common;

use common::declared::apply_scenario;
use common::*;

#[test]
fn apply_makes_a_tributary_cluster_run_the_declared_connectors() {
    let Some(bootstrap) = kafka() else {
        return;
    };
    let dir = test_dir();
    let group = unique("apply");
    let leader = DistributedWorker::start(dir.path(), "w1", &bootstrap, &group, "");
    leader.wait_joined();
    let follower = DistributedWorker::start(dir.path(), "w2", &bootstrap, &group, "");
    follower.wait_joined();
    apply_scenario(&follower.url, dir.path(), &group);
}
