//! MirrorMaker 2's default topic and group filters (`DefaultTopicFilter`,
//! `DefaultGroupFilter` of Apache's connect-mirror): lists of Java regular expressions, a name
//! replicated when it matches the whole of an included one and of no excluded one.

use tributary_api::Props;
use tributary_transforms::java_regex::JavaRegex;

/// `topics`: topics (regular expressions) to replicate.
pub const TOPICS_CONFIG: &str = "topics";
/// Its default: every topic.
pub const TOPICS_DEFAULT: &str = ".*";
/// `topics.exclude`: topics (regular expressions) never replicated.
pub const TOPICS_EXCLUDE_CONFIG: &str = "topics.exclude";
/// Its default (Connect 4.x): MirrorMaker's internal topics (`mm2….internal`), replicas, and
/// Kafka's own (`__…`).
pub const TOPICS_EXCLUDE_DEFAULT: &str = r"mm2.*\.internal, .*\.replica, __.*";
/// `groups`: consumer groups (regular expressions) whose offsets are checkpointed.
pub const GROUPS_CONFIG: &str = "groups";
/// Its default: every group.
pub const GROUPS_DEFAULT: &str = ".*";
/// `groups.exclude`: consumer groups (regular expressions) never checkpointed.
pub const GROUPS_EXCLUDE_CONFIG: &str = "groups.exclude";
/// Its default: console consumers, Connect's sink connectors' groups, Kafka's own.
pub const GROUPS_EXCLUDE_DEFAULT: &str = "console-consumer-.*, connect-.*, __.*";

/// An include and an exclude list, each compiled into one alternation; an empty list matches
/// nothing (a blank `topics=` replicates no topic).
#[derive(Debug, Clone)]
pub struct NameFilter {
    include: Option<JavaRegex>,
    exclude: Option<JavaRegex>,
}

impl NameFilter {
    /// The topic filter of `props` (`topics`, `topics.exclude`, with their defaults).
    pub fn topics(props: &Props) -> Result<NameFilter, String> {
        NameFilter::new(
            props,
            (TOPICS_CONFIG, TOPICS_DEFAULT),
            (TOPICS_EXCLUDE_CONFIG, TOPICS_EXCLUDE_DEFAULT),
        )
    }

    /// The group filter of `props` (`groups`, `groups.exclude`, with their defaults).
    pub fn groups(props: &Props) -> Result<NameFilter, String> {
        NameFilter::new(
            props,
            (GROUPS_CONFIG, GROUPS_DEFAULT),
            (GROUPS_EXCLUDE_CONFIG, GROUPS_EXCLUDE_DEFAULT),
        )
    }

    fn new(
        props: &Props,
        include: (&str, &str),
        exclude: (&str, &str),
    ) -> Result<NameFilter, String> {
        // Both lists are read (and refused) before either is compiled, as Java reads its
        // config before compiling the patterns.
        fn read<'a>(
            props: &Props,
            (key, default): (&'a str, &str),
        ) -> Result<(&'a str, String, Vec<String>), String> {
            let value = props.get(key).map(String::as_str).unwrap_or(default);
            super::config_list(key, value).map(|items| (key, value.to_string(), items))
        }
        let (include, exclude) = (read(props, include)?, read(props, exclude)?);
        let compile = |(key, value, items): (&str, String, Vec<String>)| {
            compile_list(&items).map_err(|e| {
                format!("Invalid value {value} for configuration {key}: not a regular expression list ({e})")
            })
        };
        Ok(NameFilter {
            include: compile(include)?,
            exclude: compile(exclude)?,
        })
    }

    /// Whether `name` is replicated: it matches an included expression and no excluded one
    /// (`shouldReplicateTopic` / `shouldReplicateGroup`).
    pub fn accepts(&self, name: &str) -> bool {
        let matches = |re: &Option<JavaRegex>| re.as_ref().is_some_and(|re| re.matches(name));
        matches(&self.include) && !matches(&self.exclude)
    }
}

/// `config.properties.exclude`: the topic settings the source connector never copies to the
/// target (`DefaultConfigPropertyFilter`).
pub const CONFIG_PROPERTIES_EXCLUDE_CONFIG: &str = "config.properties.exclude";
/// Its default (Connect 4.3's list, whose dots are regular expression wildcards, as in Java).
pub const CONFIG_PROPERTIES_EXCLUDE_DEFAULT: &str = "follower.replication.throttled.replicas, leader.replication.throttled.replicas, message.timestamp.difference.max.ms, log.message.timestamp.before.max.ms, log.message.timestamp.after.max.ms, message.timestamp.type, unclean.leader.election.enable, min.insync.replicas";
/// `use.defaults.from`: whose defaults a remote topic gets for settings the source topic has
/// at their default (`target`, the default, leaves them out; `source` copies them).
pub const USE_DEFAULTS_FROM_CONFIG: &str = "use.defaults.from";

/// Which topic settings are copied to the remote topic (`DefaultConfigPropertyFilter`).
#[derive(Debug, Clone)]
pub struct ConfigPropertyFilter {
    exclude: Option<JavaRegex>,
    defaults_from_source: bool,
}

impl ConfigPropertyFilter {
    /// The filter of a connector's settings. Errors: a list item that is not a regular
    /// expression, named with the key.
    pub fn new(props: &Props) -> Result<ConfigPropertyFilter, String> {
        let key = CONFIG_PROPERTIES_EXCLUDE_CONFIG;
        let value = props
            .get(key)
            .map(String::as_str)
            .unwrap_or(CONFIG_PROPERTIES_EXCLUDE_DEFAULT);
        let items = super::config_list(key, value)?;
        let exclude = compile_list(&items).map_err(|e| {
            format!("Invalid value {value} for configuration {key}: not a regular expression list ({e})")
        })?;
        let defaults_from_source = props
            .get(USE_DEFAULTS_FROM_CONFIG)
            .is_some_and(|v| v.trim() == "source");
        Ok(ConfigPropertyFilter {
            exclude,
            defaults_from_source,
        })
    }

    /// Whether `property` is copied (`shouldReplicateConfigProperty`): it matches no excluded
    /// expression.
    pub fn copies(&self, property: &str) -> bool {
        !self.exclude.as_ref().is_some_and(|re| re.matches(property))
    }

    /// Whether a setting at the source's default is copied too
    /// (`shouldReplicateSourceDefault`: `use.defaults.from=source`).
    pub fn copies_source_defaults(&self) -> bool {
        self.defaults_from_source
    }
}

/// `items` joined into one alternation; `None` for an empty list (which matches nothing).
fn compile_list(items: &[String]) -> Result<Option<JavaRegex>, String> {
    if items.is_empty() {
        return Ok(None);
    }
    JavaRegex::new(&items.join("|")).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Props {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults_skip_internal_topics_and_connect_groups() {
        let topics = NameFilter::topics(&Props::new()).unwrap();
        assert!(topics.accepts("orders"));
        for t in [
            "mm2-offset-syncs.B.internal",
            "a.replica",
            "__consumer_offsets",
        ] {
            assert!(!topics.accepts(t), "{t}");
        }
        // Connect 4.x replicates other `.internal` topics (3.x's default excluded them).
        assert!(topics.accepts("connect-configs.internal"));
        let groups = NameFilter::groups(&Props::new()).unwrap();
        assert!(groups.accepts("billing"));
        for g in ["connect-sink", "console-consumer-1", "__x"] {
            assert!(!groups.accepts(g), "{g}");
        }
    }

    #[test]
    fn lists_are_whole_matches_and_blank_matches_nothing() {
        let f = NameFilter::topics(&props(&[("topics", " orders , pay.* ")])).unwrap();
        assert!(f.accepts("orders") && f.accepts("payments"));
        assert!(!f.accepts("orders2") && !f.accepts("xpay"));
        let none = NameFilter::topics(&props(&[("topics", "  ")])).unwrap();
        assert!(!none.accepts("orders"));
        let e = NameFilter::topics(&props(&[("topics.exclude", "(")])).unwrap_err();
        assert!(e.contains("topics.exclude"), "{e}");
        let e = NameFilter::topics(&props(&[("topics", "orders,")])).unwrap_err();
        assert_eq!(e, "Configuration 'topics' values must not be empty.");
    }
}
