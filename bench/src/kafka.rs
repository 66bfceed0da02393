//! Broker helpers: creating and deleting the benchmark's topics, reading end offsets and broker
//! settings.

use std::time::{Duration, Instant};

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, ResourceSpecifier, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::RDKafkaErrorCode;
use rdkafka::util::Timeout;
use rdkafka::ClientConfig;

/// The broker of one benchmark run.
pub struct Broker {
    bootstrap: String,
    admin: AdminClient<DefaultClientContext>,
    runtime: tokio::runtime::Runtime,
    watermarks: BaseConsumer,
}

impl Broker {
    /// Connects the admin client and the consumer used for end offsets.
    pub fn connect(bootstrap: &str) -> Result<Broker, String> {
        let mut cfg = ClientConfig::new();
        cfg.set("bootstrap.servers", bootstrap)
            .set("log_level", "3");
        let admin = cfg
            .create()
            .map_err(|e| format!("admin client for {bootstrap}: {e}"))?;
        let watermarks = cfg
            .create()
            .map_err(|e| format!("consumer for {bootstrap}: {e}"))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Broker {
            bootstrap: bootstrap.to_string(),
            admin,
            runtime,
            watermarks,
        })
    }

    /// The bootstrap address.
    pub fn bootstrap(&self) -> &str {
        &self.bootstrap
    }

    /// Creates a topic with one partition and replication factor 1 and waits until its end
    /// offset can be read. While it cannot, the topic's metadata is requested again: without that,
    /// the end-offset client was seen answering `UnknownPartition` for a new topic for over 30 s
    /// although the broker had created it within milliseconds.
    pub fn create_topic(&self, topic: &str) -> Result<(), String> {
        self.create_topic_with(topic, &[])
    }

    /// As [`Broker::create_topic`], with topic settings `configs` (e.g.
    /// `("cleanup.policy", "compact")` for a Connect config topic).
    pub fn create_topic_with(&self, topic: &str, configs: &[(&str, &str)]) -> Result<(), String> {
        self.create_topic_partitions(topic, 1, configs)
    }

    /// As [`Broker::create_topic_with`], with `partitions` partitions.
    pub fn create_topic_partitions(
        &self,
        topic: &str,
        partitions: i32,
        configs: &[(&str, &str)],
    ) -> Result<(), String> {
        let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
        let mut new = NewTopic::new(topic, partitions, TopicReplication::Fixed(1));
        for (k, v) in configs {
            new = new.set(k, v);
        }
        let results = self
            .runtime
            .block_on(self.admin.create_topics([&new], &opts))
            .map_err(|e| format!("creating topic {topic}: {e}"))?;
        for r in results {
            match r {
                Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => {}
                Err((t, e)) => return Err(format!("creating topic {t}: {e}")),
            }
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match self.try_end_offset(topic) {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() > deadline => {
                    return Err(format!("topic {topic} did not become available: {e}"))
                }
                Err(_) => {
                    // Only prompts the client to learn about the topic; the loop checks again.
                    self.watermarks
                        .fetch_metadata(Some(topic), Timeout::After(Duration::from_secs(5)))
                        .ok();
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    /// Deletes topics, reporting (not failing on) errors.
    pub fn delete_topics(&self, topics: &[&str]) {
        let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(30)));
        match self
            .runtime
            .block_on(self.admin.delete_topics(topics, &opts))
        {
            Ok(results) => {
                for r in results {
                    if let Err((t, e)) = r {
                        eprintln!("bench: deleting topic {t}: {e}");
                    }
                }
            }
            Err(e) => eprintln!("bench: deleting topics {topics:?}: {e}"),
        }
    }

    /// The end offset (high watermark) of partition 0 of `topic`.
    pub fn try_end_offset(&self, topic: &str) -> Result<i64, String> {
        self.watermarks
            .fetch_watermarks(topic, 0, Timeout::After(Duration::from_secs(5)))
            .map(|(_, high)| high)
            .map_err(|e| e.to_string())
    }

    /// The value of the broker setting `key` on the first broker of the cluster metadata, or
    /// `None` when it cannot be read.
    pub fn broker_config(&self, key: &str) -> Option<String> {
        let metadata = self
            .watermarks
            .fetch_metadata(None, Timeout::After(Duration::from_secs(5)))
            .ok()?;
        let id = metadata.brokers().first()?.id();
        let opts = AdminOptions::new().request_timeout(Some(Duration::from_secs(10)));
        let results = self
            .runtime
            .block_on(
                self.admin
                    .describe_configs([&ResourceSpecifier::Broker(id)], &opts),
            )
            .ok()?;
        let resource = results.into_iter().next()?.ok()?;
        resource.get(key).and_then(|e| e.value.clone())
    }
}
