//! A source task's topic creation (KIP-158; Connect's `AbstractWorkerSourceTask.maybeCreateTopic`
//! with `TopicAdmin.createOrFindTopics`): before the first record to a topic is sent, the
//! topic is looked up (Metadata, never auto-creating it) and, when absent, created with the
//! settings of the first topic creation group that takes it ([`TopicCreation::group_for`]).
//! A topic found or created is remembered and never checked again by this task.

use std::collections::HashSet;
use std::time::Duration;

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::ClientConfig;
use tributary_api::{ConnectError, ConnectResult};

use crate::config::topic_creation::{TopicCreation, TopicCreationGroup};
use crate::kafka_client::{set_initial_token, WorkerClientContext};

/// How long a lookup or a creation may take.
const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Creates a source task's topics as its connector's rules say.
pub struct TopicCreator {
    rules: TopicCreation,
    /// The connector's admin client settings (`admin.*`, `admin.override.*`).
    admin_config: ClientConfig,
    /// Topics found or created (Connect's `topicCache`).
    known: HashSet<String>,
}

/// A new topic as Java's `NewTopic.toString` shows it in Connect's messages.
fn describe(topic: &str, group: &TopicCreationGroup) -> String {
    let configs: Vec<String> = group
        .configs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "(name={topic}, numPartitions={}, replicationFactor={}, replicasAssignments=null, configs={{{}}})",
        if group.partitions == -1 { "default".to_string() } else { group.partitions.to_string() },
        if group.replication_factor == -1 { "default".to_string() } else { group.replication_factor.to_string() },
        configs.join(", ")
    )
}

impl TopicCreator {
    /// A creator with the connector's rules and admin client settings.
    pub fn new(rules: TopicCreation, admin_config: ClientConfig) -> TopicCreator {
        TopicCreator {
            rules,
            admin_config,
            known: HashSet::new(),
        }
    }

    /// Makes sure `topic` exists before a record is sent to it. Errors fail the task, with
    /// Connect's message when the topic could not be created.
    pub fn ensure(&mut self, topic: &str) -> ConnectResult<()> {
        if self.known.contains(topic) {
            return Ok(());
        }
        tracing::info!("The task will send records to topic '{topic}' for the first time. Checking whether topic exists");
        if self.exists(topic)? {
            tracing::info!("Topic '{topic}' already exists.");
            self.known.insert(topic.to_string());
            return Ok(());
        }
        let group = self.rules.group_for(topic).clone();
        let shown = describe(topic, &group);
        tracing::info!("Creating topic '{topic}'");
        let admin: AdminClient<WorkerClientContext> = self
            .admin_config
            .create_with_context(WorkerClientContext)
            .map_err(|e| ConnectError::connect(format!("Failed to create admin client: {e}")))?;
        set_initial_token(admin.inner(), &self.admin_config)
            .map_err(|e| ConnectError::connect(format!("Admin client: {e}")))?;
        let mut new_topic = NewTopic::new(
            topic,
            group.partitions,
            TopicReplication::Fixed(i32::from(group.replication_factor)),
        );
        for (k, v) in &group.configs {
            new_topic = new_topic.set(k, v);
        }
        let opts = AdminOptions::new().operation_timeout(Some(ADMIN_TIMEOUT));
        let results = futures::executor::block_on(admin.create_topics([&new_topic], &opts))
            .map_err(|e| {
                ConnectError::connect(format!(
                    "Error while attempting to create/find topic(s) '{topic}': {e}"
                ))
            })?;
        for r in results {
            match r {
                Ok(_) => tracing::info!(
                    "Created topic '{shown}' using creation group {}",
                    group.name
                ),
                Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {
                    tracing::info!("Found existing topic '{shown}'")
                }
                Err((_, code))
                    if matches!(
                        code,
                        RDKafkaErrorCode::TopicAuthorizationFailed
                            | RDKafkaErrorCode::ClusterAuthorizationFailed
                    ) =>
                {
                    tracing::warn!("Request to create new topic '{topic}' failed: {code}");
                    return Err(ConnectError::connect(format!(
                        "Task failed to create new topic {shown}. Ensure that the task is authorized to create topics or that the topic exists and restart the task"
                    )));
                }
                Err((_, code)) => {
                    return Err(ConnectError::connect(format!(
                        "Error while attempting to create/find topic(s) '{topic}': {code}"
                    )))
                }
            }
        }
        self.known.insert(topic.to_string());
        Ok(())
    }

    /// Whether the broker knows `topic` (a Metadata request that may not create it).
    fn exists(&self, topic: &str) -> ConnectResult<bool> {
        let mut config = self.admin_config.clone();
        config.set("allow.auto.create.topics", "false");
        let consumer: BaseConsumer<WorkerClientContext> = config
            .create_with_context(WorkerClientContext)
            .map_err(|e| ConnectError::connect(format!("Failed to create client: {e}")))?;
        set_initial_token(consumer.client(), &config)
            .map_err(|e| ConnectError::connect(format!("Kafka client: {e}")))?;
        let md = consumer
            .fetch_metadata(Some(topic), ADMIN_TIMEOUT)
            .map_err(|e| ConnectError::connect(format!("Failed to describe topic {topic}: {e}")))?;
        Ok(md
            .topics()
            .iter()
            .any(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty()))
    }
}
