//! Subject name strategies (Confluent's `io.confluent.kafka.serializers.subject.*`): the
//! registry subject a record's schema is registered and looked up under.

/// `key.subject.name.strategy` / `value.subject.name.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubjectNameStrategy {
    /// `TopicNameStrategy` (the default): `<topic>-key` / `<topic>-value`.
    Topic,
    /// `RecordNameStrategy`: the record's full name.
    Record,
    /// `TopicRecordNameStrategy`: `<topic>-<record full name>`.
    TopicRecord,
}

impl SubjectNameStrategy {
    /// The strategy of a class name (full, or the simple name).
    pub fn from_class(class: &str) -> Option<SubjectNameStrategy> {
        let simple = class
            .strip_prefix("io.confluent.kafka.serializers.subject.")
            .unwrap_or(class);
        match simple {
            "TopicNameStrategy" => Some(SubjectNameStrategy::Topic),
            "RecordNameStrategy" => Some(SubjectNameStrategy::Record),
            "TopicRecordNameStrategy" => Some(SubjectNameStrategy::TopicRecord),
            _ => None,
        }
    }

    /// The subject for a record of `topic` whose schema's full name is `record_name` (for
    /// Avro: a record's full name, or a primitive's type name).
    pub fn subject(self, topic: &str, is_key: bool, record_name: &str) -> String {
        match self {
            SubjectNameStrategy::Topic => {
                format!("{topic}-{}", if is_key { "key" } else { "value" })
            }
            SubjectNameStrategy::Record => record_name.to_string(),
            SubjectNameStrategy::TopicRecord => format!("{topic}-{record_name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_name_subjects_as_confluents_do() {
        let t = SubjectNameStrategy::from_class(
            "io.confluent.kafka.serializers.subject.TopicNameStrategy",
        )
        .unwrap();
        assert_eq!(t.subject("orders", false, "x.Order"), "orders-value");
        assert_eq!(t.subject("orders", true, "x.Order"), "orders-key");
        let r = SubjectNameStrategy::from_class("RecordNameStrategy").unwrap();
        assert_eq!(r.subject("orders", false, "x.Order"), "x.Order");
        let tr = SubjectNameStrategy::from_class(
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
        )
        .unwrap();
        assert_eq!(tr.subject("orders", true, "x.Order"), "orders-x.Order");
        assert_eq!(SubjectNameStrategy::from_class("com.example.Mine"), None);
    }
}
