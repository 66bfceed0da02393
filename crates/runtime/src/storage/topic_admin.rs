//! Creating and checking Connect's internal topics (Connect's `TopicAdmin` and the
//! initializers of the config, offsets and status stores): created when absent, compacted,
//! with the configured partitions and replication factor; an existing config topic with more
//! than one partition, or any internal topic that is not compacted, is refused.

use std::collections::HashMap;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientConfig;
use tributary_api::{ConnectError, ConnectResult};

use crate::kafka_client::{set_initial_token, WorkerClientContext};

/// What an internal topic should look like.
#[derive(Debug, Clone)]
pub struct InternalTopic {
    pub name: String,
    /// -1: the broker's default.
    pub partitions: i32,
    /// -1: the broker's default.
    pub replication_factor: i32,
    /// Extra topic configs (`config.storage.*` etc.), `cleanup.policy` excluded.
    pub configs: HashMap<String, String>,
    /// The config topic must have exactly one partition.
    pub single_partition: bool,
    /// Which worker key sets this topic, for error messages (e.g. `config.storage.topic`).
    pub setting: &'static str,
    /// Whether the worker may create the topic when it is missing
    /// (`internal.topics.automatic.creation.enable`, Connect 4.2; default true). When false, a
    /// missing topic is an error naming the topic, its setting and that key.
    pub auto_create: bool,
}

/// The worker key that lets the worker create its internal topics (Connect 4.2's
/// `DistributedConfig.INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE_CONFIG`).
pub const INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE: &str =
    "internal.topics.automatic.creation.enable";

/// An internal topic together with the admin client configuration that creates it: what a
/// store needs to create its topic again when it is deleted while the worker runs.
#[derive(Clone)]
pub struct ManagedTopic {
    pub admin: ClientConfig,
    pub topic: InternalTopic,
    /// How the log's own lookups (KIP-516 topic ids) connect: the worker's TLS and SASL.
    pub security: tributary_group::client::ConnectionSecurity,
}

/// Creates the topic when it does not exist, then checks it. Returns whether this call created
/// it (false: it was already there, e.g. another worker won the race). Errors name the topic and
/// the worker setting, as Connect's `ConfigException`s do. [`ensure_topics`] for one topic.
pub fn ensure_topic(admin_config: &ClientConfig, topic: &InternalTopic) -> ConnectResult<bool> {
    Ok(ensure_topics(admin_config, std::slice::from_ref(topic))?[0])
}

/// Creates the topics that do not exist and checks them all, through one admin client and one
/// request per step (CreateTopics, Metadata, DescribeConfigs) whatever their number: a worker
/// starting creates its three internal topics in the time of one. Returns, in the order of
/// `topics`, whether this call created each. The client is destroyed on a thread of its own:
/// librdkafka's destroy waits for its broker threads, a few hundred ms nobody needs to wait.
pub fn ensure_topics(
    admin_config: &ClientConfig,
    topics: &[InternalTopic],
) -> ConnectResult<Vec<bool>> {
    let admin: AdminClient<WorkerClientContext> = admin_config
        .create_with_context(WorkerClientContext)
        .map_err(|e| ConnectError::connect(format!("Failed to create admin client: {e}")))?;
    let result = create_and_check(&admin, admin_config, topics);
    if let Err(e) = std::thread::Builder::new()
        .name("admin-drop".into())
        .spawn(move || drop(admin))
    {
        tracing::debug!("no thread to destroy an admin client on ({e}); destroyed here");
    }
    result
}

fn create_and_check(
    admin: &AdminClient<WorkerClientContext>,
    admin_config: &ClientConfig,
    topics: &[InternalTopic],
) -> ConnectResult<Vec<bool>> {
    // Admin clients are never polled for token refreshes: this one lives for one call.
    set_initial_token(admin.inner(), admin_config)
        .map_err(|e| ConnectError::connect(format!("Admin client: {e}")))?;
    let opts = AdminOptions::new().operation_timeout(Some(std::time::Duration::from_secs(30)));
    // Topics the worker may not create must exist already (Connect's
    // `KafkaTopicBasedBackingStore` with `internal.topics.automatic.creation.enable=false`).
    // Looked up in the metadata of all topics, which never creates one (a metadata request
    // naming a topic could, on a broker with `auto.create.topics.enable`).
    let must_exist: Vec<&InternalTopic> = topics.iter().filter(|t| !t.auto_create).collect();
    if !must_exist.is_empty() {
        let md = admin
            .inner()
            .fetch_metadata(None, std::time::Duration::from_secs(30))
            .map_err(|e| {
                ConnectError::connect(format!(
                    "Failed to list the topics to find {}: {e}",
                    must_exist[0].name
                ))
            })?;
        for topic in must_exist {
            if !md.topics().iter().any(|t| t.name() == topic.name) {
                return Err(ConnectError::connect(format!(
                    "Topic '{}' specified via the '{}' property is missing. The config '{INTERNAL_TOPICS_AUTOMATIC_CREATION_ENABLE}' is set to 'false', so automatic creation of internal topics is disabled. Either enable automatic creation or create the topics manually.",
                    topic.name, topic.setting
                )));
            }
        }
    }
    let new_topics: Vec<NewTopic<'_>> = topics
        .iter()
        .filter(|topic| topic.auto_create)
        .map(|topic| {
            let replication = TopicReplication::Fixed(topic.replication_factor);
            let mut new_topic = NewTopic::new(&topic.name, topic.partitions, replication)
                .set("cleanup.policy", "compact");
            for (k, v) in &topic.configs {
                new_topic = new_topic.set(k, v);
            }
            new_topic
        })
        .collect();
    let names = topics
        .iter()
        .map(|t| t.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let results = if new_topics.is_empty() {
        Vec::new()
    } else {
        futures::executor::block_on(admin.create_topics(&new_topics, &opts))
            .map_err(|e| ConnectError::connect(format!("Failed to create topic {names}: {e}")))?
    };
    let setting_of = |name: &str| {
        topics
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.setting)
            .unwrap_or_default()
    };
    let mut created = vec![false; topics.len()];
    for r in results {
        match r {
            Ok(name) => {
                if let Some(i) = topics.iter().position(|t| t.name == name) {
                    created[i] = true;
                }
                tracing::info!(topic = name, "created internal topic")
            }
            Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
            Err((name, code))
                if matches!(
                    code,
                    RDKafkaErrorCode::TopicAuthorizationFailed
                        | RDKafkaErrorCode::ClusterAuthorizationFailed
                ) =>
            {
                // As Connect's TopicAdmin says: which resource, which operation.
                return Err(ConnectError::connect(format!(
                    "Not authorized to create topic {name} ({}): {code}. The worker's principal \
                     needs CREATE on topic {name} (or on the cluster), and DESCRIBE, READ and \
                     WRITE on it, as Connect's internal topics do.",
                    setting_of(&name)
                )));
            }
            Err((name, code)) => {
                return Err(ConnectError::connect(format!(
                    "Failed to create topic {name} ({}): {code}",
                    setting_of(&name)
                )));
            }
        }
    }
    // Check the partition counts (of the topics that must have one) and the cleanup policies
    // of what is there now.
    for topic in topics.iter().filter(|t| t.single_partition) {
        let md = admin
            .inner()
            .fetch_metadata(Some(&topic.name), std::time::Duration::from_secs(30))
            .map_err(|e| {
                ConnectError::connect(format!("Failed to describe topic {}: {e}", topic.name))
            })?;
        let partitions = md
            .topics()
            .iter()
            .find(|t| t.name() == topic.name)
            .map(|t| t.partitions().len())
            .unwrap_or(0);
        if partitions > 1 {
            return Err(ConnectError::config(format!(
                "Topic '{}' supplied via the '{}' property is required to have a single partition in order to guarantee consistency of connector configurations, but found {partitions} partitions.",
                topic.name, topic.setting
            )));
        }
    }
    let resources: Vec<ResourceSpecifier<'_>> = topics
        .iter()
        .map(|t| ResourceSpecifier::Topic(&t.name))
        .collect();
    let described = futures::executor::block_on(admin.describe_configs(&resources, &opts));
    match described {
        Ok(resources) => {
            for r in resources.into_iter().flatten() {
                let name = match &r.specifier {
                    rdkafka::admin::OwnedResourceSpecifier::Topic(name) => name.clone(),
                    _ => continue,
                };
                let Some(topic) = topics.iter().find(|t| t.name == name) else {
                    continue;
                };
                let policy = r
                    .entries
                    .iter()
                    .find(|e| e.name == "cleanup.policy")
                    .and_then(|e| e.value.clone())
                    .unwrap_or_default();
                let policies: Vec<&str> = policy
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .collect();
                if policies.is_empty() {
                    // A topic created a moment ago may not show its configs yet.
                    tracing::warn!(
                        topic = topic.name,
                        "the topic's cleanup.policy is not known yet; skipping the check"
                    );
                } else if policies != ["compact"] {
                    return Err(ConnectError::config(format!(
                        "Topic '{}' supplied via the '{}' property is required to have 'cleanup.policy=compact' to guarantee consistency and durability of internal data, but found the topic currently has 'cleanup.policy={policy}'. Continuing would likely result in eventually losing data and problems restarting this Connect cluster in the future. Change the '{}' property in the Connect worker configurations to use a topic with 'cleanup.policy=compact'.",
                        topic.name, topic.setting, topic.setting
                    )));
                }
            }
        }
        Err(e) => tracing::warn!(
            topics = names,
            "could not describe topic configs; skipping the cleanup policy check: {e}"
        ),
    }
    Ok(created)
}
