//! How MirrorSourceConnector shares the source partitions among its tasks
//! (`MirrorSourceConnector.taskConfigs`, `MirrorSourceConfig.taskConfigForTopicPartitions`):
//! round robin over the known partitions, at most one task per partition, each task's config
//! the connector's with `task.assigned.partitions` (`topic-partition` items, comma-separated)
//! and `task.index`.

use tributary_api::Props;

/// `task.assigned.partitions`: the source partitions a task replicates.
pub const TASK_TOPIC_PARTITIONS_CONFIG: &str = "task.assigned.partitions";
/// `task.index`: the task's number.
pub const TASK_INDEX_CONFIG: &str = "task.index";

/// A partition as a task config names it: `<topic>-<partition>` (Kafka's `TopicPartition`
/// string form).
pub fn encode_topic_partition(topic: &str, partition: i32) -> String {
    format!("{topic}-{partition}")
}

/// The partition `item` names: the topic is everything before the last `-`. Errors name the
/// item.
pub fn decode_topic_partition(item: &str) -> Result<(String, i32), String> {
    let sep = item.rfind('-').ok_or_else(|| {
        format!("{TASK_TOPIC_PARTITIONS_CONFIG}: {item:?} is not <topic>-<partition>")
    })?;
    let partition = item[sep + 1..].parse::<i32>().map_err(|_| {
        format!("{TASK_TOPIC_PARTITIONS_CONFIG}: {item:?} is not <topic>-<partition>")
    })?;
    Ok((item[..sep].to_string(), partition))
}

/// The partitions of a task config (`task.assigned.partitions`, each once). Errors as Java's:
/// the key missing or empty, or an item that is not `<topic>-<partition>`.
pub fn task_partitions(task_config: &Props) -> Result<Vec<(String, i32)>, String> {
    let Some(value) = task_config.get(TASK_TOPIC_PARTITIONS_CONFIG) else {
        return Err(format!(
            "Missing required configuration \"{TASK_TOPIC_PARTITIONS_CONFIG}\" which has no default value."
        ));
    };
    let items = super::config_list(TASK_TOPIC_PARTITIONS_CONFIG, value)?;
    if items.is_empty() {
        return Err(format!(
            "Configuration '{TASK_TOPIC_PARTITIONS_CONFIG}' must not be empty. Valid values include: any non-empty value"
        ));
    }
    items.iter().map(|s| decode_topic_partition(s)).collect()
}

/// The task configs for `partitions` (in the order the connector knows them) and at most
/// `max_tasks` tasks: none when the connector is disabled (`enabled=false`, which dedicated
/// mode gives flows that are not enabled) or knows no partition; partition `i` goes to task
/// `i % tasks`. Errors: `enabled` not a boolean.
pub fn task_configs(
    connector: &Props,
    partitions: &[(String, i32)],
    max_tasks: usize,
) -> Result<Vec<Props>, String> {
    let enabled = match connector.get("enabled") {
        Some(v) => super::config_bool("enabled", v)?,
        None => true,
    };
    if !enabled || partitions.is_empty() || max_tasks == 0 {
        return Ok(Vec::new());
    }
    let tasks = max_tasks.min(partitions.len());
    let mut by_task: Vec<Vec<String>> = vec![Vec::new(); tasks];
    for (i, (topic, partition)) in partitions.iter().enumerate() {
        by_task[i % tasks].push(encode_topic_partition(topic, *partition));
    }
    Ok(by_task
        .into_iter()
        .enumerate()
        .map(|(i, items)| {
            let mut props = connector.clone();
            props.insert(TASK_TOPIC_PARTITIONS_CONFIG.to_string(), items.join(","));
            props.insert(TASK_INDEX_CONFIG.to_string(), i.to_string());
            props
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_go_round_robin_and_read_back() {
        let parts: Vec<(String, i32)> = [("a-b", 0), ("a-b", 1), ("c", 0)]
            .iter()
            .map(|(t, p)| (t.to_string(), *p))
            .collect();
        let configs = task_configs(&Props::new(), &parts, 2).unwrap();
        assert_eq!(configs.len(), 2);
        assert_eq!(configs[0][TASK_TOPIC_PARTITIONS_CONFIG], "a-b-0,c-0");
        assert_eq!(configs[1][TASK_TOPIC_PARTITIONS_CONFIG], "a-b-1");
        assert_eq!(configs[1][TASK_INDEX_CONFIG], "1");
        assert_eq!(
            task_partitions(&configs[0]).unwrap(),
            [("a-b".to_string(), 0), ("c".to_string(), 0)]
        );
        assert!(task_configs(&Props::new(), &[], 4).unwrap().is_empty());
        let disabled: Props = [("enabled".to_string(), " FALSE ".to_string())].into();
        assert!(task_configs(&disabled, &parts, 2).unwrap().is_empty());
        assert!(decode_topic_partition("nodash").is_err());
        let empty: Props = [(TASK_TOPIC_PARTITIONS_CONFIG.to_string(), " ".to_string())].into();
        assert!(task_partitions(&empty).is_err());
    }
}
