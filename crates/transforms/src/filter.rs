//! `org.apache.kafka.connect.transforms.Filter`: drops every record. Used with a predicate
//! (`transforms.<alias>.predicate`, possibly `negate`) to drop only the records it selects.

use tributary_api::config::ConfigDef;
use tributary_api::transforms::{ConnectRecord, Transformation};
use tributary_api::{ConnectResult, Props};

/// Connect's `Filter`: every record it is applied to is dropped. It has no settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter;

impl<R: ConnectRecord> Transformation<R> for Filter {
    fn configure(&mut self, _props: &Props) -> ConnectResult<()> {
        Ok(())
    }

    fn apply(&mut self, _record: R) -> ConnectResult<Option<R>> {
        Ok(None)
    }

    fn config(&self) -> ConfigDef {
        ConfigDef::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::{null, props, sink, source};
    use tributary_api::data::Value;
    use tributary_api::record::{SinkRecord, SourceRecord};

    #[test]
    fn every_record_is_dropped() {
        let mut f = Filter;
        Transformation::<SourceRecord>::configure(&mut f, &props(&[("anything", "x")])).unwrap();
        let r = source("t", null(), (None, Value::from("v")), Some(1));
        assert_eq!(
            Transformation::<SourceRecord>::apply(&mut f, r).unwrap(),
            None
        );
        let s = sink("t", null(), null(), None);
        assert_eq!(
            Transformation::<SinkRecord>::apply(&mut f, s).unwrap(),
            None
        );
        assert!(Transformation::<SourceRecord>::config(&f).keys.is_empty());
    }
}
