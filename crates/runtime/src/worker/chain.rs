//! A task's transformation chain (Connect's `TransformationChain` / `TransformationStage`,
//! KIP-66, KIP-585): the connector's `transforms`, in order, each applied only to the records
//! its predicate (possibly negated) accepts. Each task builds its own chain, so transformations
//! and predicates are never shared between tasks.

use tributary_api::metrics::PluginMetrics;
use tributary_api::record::{SinkRecord, SourceRecord};
use tributary_api::transforms::{
    ConnectRecord, Predicate, PredicatePlugin, Transformation, TransformationPlugin,
};
use tributary_api::{ConnectError, ConnectResult, Props};

use super::errors::{Outcome, ProcessingContext, RetryWithToleranceOperator, Stage};
use crate::config::transforms::{
    self, listed_aliases, AliasKind, NEGATE_CONFIG, PLUGIN_VERSION_SUFFIX, PREDICATES_CONFIG,
    PREDICATE_CONFIG, TRANSFORMS_CONFIG,
};
use crate::plugins::Plugins;

/// A record kind a chain runs on: how its transformations and predicates are created.
pub trait ChainRecord: ConnectRecord {
    /// A new transformation instance for this record kind.
    fn new_transformation(plugin: &TransformationPlugin) -> Box<dyn Transformation<Self>>;
    /// A new predicate instance for this record kind.
    fn new_predicate(plugin: &PredicatePlugin) -> Box<dyn Predicate<Self>>;
}

impl ChainRecord for SourceRecord {
    fn new_transformation(plugin: &TransformationPlugin) -> Box<dyn Transformation<Self>> {
        (plugin.new_source)()
    }
    fn new_predicate(plugin: &PredicatePlugin) -> Box<dyn Predicate<Self>> {
        (plugin.new_source)()
    }
}

impl ChainRecord for SinkRecord {
    fn new_transformation(plugin: &TransformationPlugin) -> Box<dyn Transformation<Self>> {
        (plugin.new_sink)()
    }
    fn new_predicate(plugin: &PredicatePlugin) -> Box<dyn Predicate<Self>> {
        (plugin.new_sink)()
    }
}

/// One transformation with its optional predicate (Connect's `TransformationStage`).
pub struct TransformationStage<R: ConnectRecord> {
    /// The alias under `transforms`.
    pub alias: String,
    /// The transformation's class name, which errors and reports name.
    pub class: &'static str,
    transformation: Box<dyn Transformation<R>>,
    predicate: Option<Box<dyn Predicate<R>>>,
    negate: bool,
}

impl<R: ConnectRecord> TransformationStage<R> {
    /// Applies the transformation when there is no predicate or when `negate` XOR the
    /// predicate's test holds; otherwise the record passes unchanged.
    pub fn apply(&mut self, record: R) -> ConnectResult<Option<R>> {
        let wanted = match &mut self.predicate {
            None => true,
            Some(p) => self.negate ^ p.try_test(&record)?,
        };
        if wanted {
            self.transformation.apply(record)
        } else {
            Ok(Some(record))
        }
    }

    fn close(&mut self) {
        self.transformation.close();
        if let Some(p) = &mut self.predicate {
            p.close();
        }
    }
}

/// A task's transformations, in `transforms` order.
pub struct TransformationChain<R: ConnectRecord> {
    stages: Vec<TransformationStage<R>>,
}

impl<R: ConnectRecord> Default for TransformationChain<R> {
    fn default() -> Self {
        TransformationChain { stages: Vec::new() }
    }
}

/// Connect's wrapping of a failure to build a stage: `ConnectException` around the cause, so
/// the trace reads `ConnectException: ConfigException: …` as Connect's does.
fn stage_error(e: &ConnectError) -> ConnectError {
    ConnectError::Connect(format!("{}: {e}", e.java_class()))
}

impl<R: ChainRecord> TransformationChain<R> {
    /// Builds and configures the chain of a connector config (Connect's
    /// `ConnectorConfig.transformationStages`): per alias of `transforms`, a new
    /// transformation of `transforms.<alias>.type`, configured with its
    /// `transforms.<alias>.` settings (prefix removed, `predicate` and `negate` taken out, as
    /// Connect passes them), and, when `transforms.<alias>.predicate` names one, a new
    /// predicate of `predicates.<p>.type` configured with its `predicates.<p>.` settings.
    ///
    /// Errors: invalid `transforms` / `predicates` settings ([`transforms::check`], a
    /// [`ConnectError::Config`] naming the key); a predicate alias not listed in
    /// `predicates`, or a `configure` that fails: a [`ConnectError::Connect`] worded as
    /// Connect's (e.g. `…ConfigException: Unknown configuration 'predicates.p.plugin.version'`).
    /// What was built before the failure is closed.
    pub fn build(plugins: &Plugins, props: &Props) -> ConnectResult<TransformationChain<R>> {
        Self::build_monitored(plugins, props, &PluginMetrics::default())
    }

    /// [`TransformationChain::build`] for a task whose plugin metrics handle is `metrics`: each
    /// transformation and predicate gets a child of it after `configure` (KIP-877's
    /// `Monitorable`), tagged `transformation=<alias>` / `predicate=<alias>` as Connect tags
    /// them.
    pub fn build_monitored(
        plugins: &Plugins,
        props: &Props,
        metrics: &PluginMetrics,
    ) -> ConnectResult<TransformationChain<R>> {
        if let Some(problem) = transforms::check(plugins, props) {
            return Err(ConnectError::config(problem));
        }
        let mut chain = TransformationChain::default();
        let predicates = listed_aliases(props, PREDICATES_CONFIG);
        for alias in listed_aliases(props, TRANSFORMS_CONFIG) {
            match Self::stage(plugins, props, &alias, &predicates, metrics) {
                Ok(stage) => chain.stages.push(stage),
                Err(e) => {
                    chain.close();
                    return Err(e);
                }
            }
        }
        Ok(chain)
    }

    fn stage(
        plugins: &Plugins,
        props: &Props,
        alias: &str,
        predicates: &[String],
        metrics: &PluginMetrics,
    ) -> ConnectResult<TransformationStage<R>> {
        let prefix = AliasKind::Transformation.prefix(alias);
        let type_name = props
            .get(&format!("{prefix}type"))
            .cloned()
            .unwrap_or_default();
        let plugin = plugins
            .transformation_plugin_in(
                &type_name,
                props
                    .get(&format!("{prefix}{PLUGIN_VERSION_SUFFIX}"))
                    .map(String::as_str),
            )
            .map_err(|e| stage_error(&ConnectError::config(e.to_string())))?;
        let mut settings = transforms::with_prefix(props, &prefix);
        let predicate_alias = settings.remove(PREDICATE_CONFIG);
        let negate = settings
            .remove(NEGATE_CONFIG)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let mut transformation = R::new_transformation(plugin);
        transformation
            .configure(&settings)
            .map_err(|e| stage_error(&e))?;
        transformation.with_plugin_metrics(metrics.child(&[("transformation", alias)]));
        let predicate = match predicate_alias {
            None => None,
            Some(p) => {
                let pprefix = AliasKind::Predicate.prefix(&p);
                let result = if !predicates.contains(&p) {
                    // Connect looks the predicate's keys up in the enriched config, which has
                    // none for an alias `predicates` does not list.
                    Err(stage_error(&ConnectError::config(format!(
                        "Unknown configuration '{pprefix}{PLUGIN_VERSION_SUFFIX}'"
                    ))))
                } else {
                    let ptype = props
                        .get(&format!("{pprefix}type"))
                        .cloned()
                        .unwrap_or_default();
                    plugins
                        .predicate_plugin_in(
                            &ptype,
                            props
                                .get(&format!("{pprefix}{PLUGIN_VERSION_SUFFIX}"))
                                .map(String::as_str),
                        )
                        .map_err(|e| stage_error(&ConnectError::config(e.to_string())))
                        .and_then(|pp| {
                            let mut predicate = R::new_predicate(pp);
                            predicate
                                .configure(&transforms::with_prefix(props, &pprefix))
                                .map(|()| {
                                    predicate.with_plugin_metrics(
                                        metrics.child(&[("predicate", p.as_str())]),
                                    );
                                    predicate
                                })
                                .map_err(|e| stage_error(&e))
                        })
                };
                match result {
                    Ok(p) => Some(p),
                    Err(e) => {
                        transformation.close();
                        return Err(e);
                    }
                }
            }
        };
        Ok(TransformationStage {
            alias: alias.to_string(),
            class: plugin.class,
            transformation,
            predicate,
            negate,
        })
    }
}

impl<R: ConnectRecord> TransformationChain<R> {
    /// Whether there is no transformation.
    pub fn is_empty(&self) -> bool {
        self.stages.is_empty()
    }

    /// The stages, in order.
    pub fn stages(&self) -> &[TransformationStage<R>] {
        &self.stages
    }

    /// Runs `record` through every stage (Connect's `TransformationChain.apply`), each under
    /// `operator` as stage [`Stage::Transformation`] with the transformation's class: a
    /// retriable failure is retried, another is tolerated or not. A stage returning `None`
    /// drops the record: the later stages do not run and the result is `Done(None)`. A
    /// tolerated failure gives [`Outcome::Skipped`] with the error in `ctx`.
    pub fn apply(
        &mut self,
        operator: &RetryWithToleranceOperator,
        ctx: &mut ProcessingContext,
        record: R,
    ) -> ConnectResult<Outcome<Option<R>>> {
        let retries = operator.retries();
        let mut current = record;
        for stage in &mut self.stages {
            let mut slot = Some(current);
            let outcome = operator.execute(ctx, Stage::Transformation, stage.class, || {
                // A retry needs the record again: keep a copy only when retries are on.
                let r = if retries { slot.clone() } else { slot.take() };
                match r {
                    Some(r) => stage.apply(r),
                    None => Err(ConnectError::connect("record already consumed")),
                }
            })?;
            match outcome {
                Outcome::Done(Some(next)) => current = next,
                Outcome::Done(None) => return Ok(Outcome::Done(None)),
                Outcome::Skipped => return Ok(Outcome::Skipped),
                Outcome::Stopping => return Ok(Outcome::Stopping),
            }
        }
        Ok(Outcome::Done(Some(current)))
    }

    /// Closes every transformation and predicate (when the task stops).
    pub fn close(&mut self) {
        for stage in &mut self.stages {
            stage.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use tributary_api::config::{ConfigDef, ConfigType, Importance};
    use tributary_api::data::Value;

    use crate::config::errors::{ErrorHandlingConfig, ToleranceType};
    use crate::worker::errors::RetryClock;

    thread_local! {
        // Per test thread: tests run in parallel.
        static CLOSED: AtomicUsize = const { AtomicUsize::new(0) };
        static CONFIGURED: Mutex<Vec<Props>> = const { Mutex::new(Vec::new()) };
    }

    /// Appends `suffix` to string values; fails on values containing `fail`; drops `drop`.
    #[derive(Default)]
    struct Append {
        suffix: String,
        retriable_left: usize,
    }
    impl<R: ConnectRecord> Transformation<R> for Append {
        fn configure(&mut self, props: &Props) -> ConnectResult<()> {
            CONFIGURED.with(|c| c.lock().unwrap().push(props.clone()));
            if props.contains_key("explode") {
                return Err(ConnectError::config("explode is set"));
            }
            self.suffix = props.get("suffix").cloned().unwrap_or_default();
            self.retriable_left = props
                .get("retriable")
                .map(|v| v.parse().unwrap())
                .unwrap_or(0);
            Ok(())
        }
        fn apply(&mut self, r: R) -> ConnectResult<Option<R>> {
            let Value::String(s) = r.value() else {
                return Ok(Some(r));
            };
            if s.contains("drop") {
                return Ok(None);
            }
            if s.contains("fail") {
                return Err(ConnectError::data(format!("cannot take {s}")));
            }
            if self.retriable_left > 0 {
                self.retriable_left -= 1;
                return Err(ConnectError::Retriable("not yet".into()));
            }
            let v = Value::String(format!("{s}{}", self.suffix));
            Ok(Some(r.new_record(
                r.topic().to_string(),
                r.kafka_partition(),
                r.key_schema().cloned(),
                r.key().clone(),
                r.value_schema().cloned(),
                v,
                r.timestamp(),
                r.headers().clone(),
            )))
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new().define(
                "suffix",
                ConfigType::String,
                Some(Some("")),
                None,
                Importance::High,
                "Appended.",
            )
        }
        fn close(&mut self) {
            CLOSED.with(|c| c.fetch_add(1, Ordering::Relaxed));
        }
    }

    /// Matches string values starting with `prefix`.
    #[derive(Default)]
    struct StartsWith(String);
    impl<R: ConnectRecord> Predicate<R> for StartsWith {
        fn configure(&mut self, props: &Props) -> ConnectResult<()> {
            self.0 = props.get("prefix").cloned().unwrap_or_default();
            Ok(())
        }
        fn test(&mut self, r: &R) -> bool {
            matches!(r.value(), Value::String(s) if s.starts_with(&self.0))
        }
        /// Fails on the value `boom`, as a hosted Java predicate whose `test` throws.
        fn try_test(&mut self, r: &R) -> ConnectResult<bool> {
            match r.value() {
                Value::String(s) if s == "boom" => Err(ConnectError::data("cannot test boom")),
                _ => Ok(self.test(r)),
            }
        }
        fn config(&self) -> ConfigDef {
            ConfigDef::new().define(
                "prefix",
                ConfigType::String,
                None,
                None,
                Importance::High,
                "Prefix.",
            )
        }
    }

    fn plugins() -> Plugins {
        let mut set = tributary_plugins::builtin();
        set.transformations = vec![TransformationPlugin::of::<Append>("t.Append", "1")];
        set.predicates = vec![PredicatePlugin::of::<StartsWith>("t.StartsWith", "1")];
        Plugins::new(set)
    }

    use crate::config::props;

    struct NoWait;
    impl RetryClock for NoWait {
        fn now_ms(&self) -> i64 {
            0
        }
        fn wait(&self, _: i64) -> bool {
            false
        }
    }

    fn operator(tolerance: ToleranceType, timeout: i64) -> RetryWithToleranceOperator {
        RetryWithToleranceOperator::new(
            &ErrorHandlingConfig {
                tolerance,
                retry_timeout_ms: timeout,
                ..ErrorHandlingConfig::default()
            },
            Arc::new(NoWait),
        )
    }

    fn record(v: &str) -> SourceRecord {
        SourceRecord::new(
            serde_json::Map::new(),
            serde_json::Map::new(),
            "t",
            None,
            Value::String(v.into()),
        )
    }

    fn run(
        chain: &mut TransformationChain<SourceRecord>,
        op: &RetryWithToleranceOperator,
        v: &str,
    ) -> ConnectResult<Outcome<Option<String>>> {
        let mut ctx = ProcessingContext::default();
        Ok(match chain.apply(op, &mut ctx, record(v))? {
            Outcome::Done(r) => Outcome::Done(r.map(|r| match r.value {
                Value::String(s) => s,
                _ => unreachable!(),
            })),
            Outcome::Skipped => Outcome::Skipped,
            Outcome::Stopping => Outcome::Stopping,
        })
    }

    #[test]
    fn stages_run_in_order_and_predicates_select_records() {
        let p = props(&[
            ("transforms", "first, second"),
            ("transforms.first.type", "Append"),
            ("transforms.first.suffix", "-1"),
            ("transforms.second.type", "t.Append"),
            ("transforms.second.suffix", "-2"),
            ("transforms.second.predicate", "isA"),
            ("transforms.second.negate", "true"),
            ("predicates", "isA"),
            ("predicates.isA.type", "StartsWith"),
            ("predicates.isA.prefix", "a"),
        ]);
        CONFIGURED.with(|c| c.lock().unwrap().clear());
        let mut chain = TransformationChain::<SourceRecord>::build(&plugins(), &p).unwrap();
        let configured = CONFIGURED.with(|c| c.lock().unwrap().clone());
        // Each transformation sees its own settings, prefix removed, without predicate and
        // negate, with its type.
        assert_eq!(
            configured[1],
            props(&[("type", "t.Append"), ("suffix", "-2")])
        );
        let op = operator(ToleranceType::None, 0);
        assert_eq!(
            run(&mut chain, &op, "a").unwrap(),
            Outcome::Done(Some("a-1".into()))
        );
        assert_eq!(
            run(&mut chain, &op, "b").unwrap(),
            Outcome::Done(Some("b-1-2".into()))
        );
        // A dropped record stops the chain.
        assert_eq!(run(&mut chain, &op, "drop").unwrap(), Outcome::Done(None));
        let before = CLOSED.with(|c| c.load(Ordering::Relaxed));
        chain.close();
        assert_eq!(CLOSED.with(|c| c.load(Ordering::Relaxed)) - before, 2);
    }

    #[test]
    fn a_failing_predicate_is_a_failure_of_its_stage() {
        let p = props(&[
            ("transforms", "a"),
            ("transforms.a.type", "Append"),
            ("transforms.a.suffix", "-1"),
            ("transforms.a.predicate", "isA"),
            ("predicates", "isA"),
            ("predicates.isA.type", "StartsWith"),
            ("predicates.isA.prefix", "a"),
        ]);
        let mut chain = TransformationChain::<SourceRecord>::build(&plugins(), &p).unwrap();
        let op = operator(ToleranceType::All, 0);
        assert_eq!(
            run(&mut chain, &op, "ab").unwrap(),
            Outcome::Done(Some("ab-1".into()))
        );
        assert_eq!(run(&mut chain, &op, "boom").unwrap(), Outcome::Skipped);
        let op = operator(ToleranceType::None, 0);
        let e = run(&mut chain, &op, "boom").unwrap_err().to_string();
        assert!(
            e.contains("with class 't.Append'") && e.contains("DataException: cannot test boom"),
            "{e}"
        );
    }

    #[test]
    fn failures_are_tolerated_retried_or_fatal() {
        let p = props(&[
            ("transforms", "a"),
            ("transforms.a.type", "Append"),
            ("transforms.a.retriable", "2"),
        ]);
        let mut chain = TransformationChain::<SourceRecord>::build(&plugins(), &p).unwrap();
        let op = operator(ToleranceType::All, -1);
        assert_eq!(
            run(&mut chain, &op, "x").unwrap(),
            Outcome::Done(Some("x".into()))
        );
        assert_eq!(run(&mut chain, &op, "fail").unwrap(), Outcome::Skipped);
        let op = operator(ToleranceType::None, 0);
        let e = run(&mut chain, &op, "fail").unwrap_err().to_string();
        assert!(
            e.contains("executing stage 'TRANSFORMATION' with class 't.Append'")
                && e.contains("DataException: cannot take fail"),
            "{e}"
        );
    }

    #[test]
    fn build_failures_are_worded_as_connect_words_them() {
        let err = |pairs: &[(&str, &str)]| {
            TransformationChain::<SinkRecord>::build(&plugins(), &props(pairs))
                .err()
                .map(|e| (e.java_class(), e.to_string()))
        };
        assert_eq!(
            err(&[
                ("transforms", "a"),
                ("transforms.a.type", "Append"),
                ("transforms.a.predicate", "nope"),
            ]),
            Some((
                "org.apache.kafka.connect.errors.ConnectException",
                "org.apache.kafka.common.config.ConfigException: Unknown configuration 'predicates.nope.plugin.version'".into()
            ))
        );
        assert_eq!(
            err(&[
                ("transforms", "a"),
                ("transforms.a.type", "Append"),
                ("transforms.a.explode", "1"),
            ]),
            Some((
                "org.apache.kafka.connect.errors.ConnectException",
                "org.apache.kafka.common.config.ConfigException: explode is set".into()
            ))
        );
        assert_eq!(
            err(&[("transforms", "a")]),
            Some((
                "org.apache.kafka.common.config.ConfigException",
                "Missing required configuration \"transforms.a.type\" which has no default value."
                    .into()
            ))
        );
        assert_eq!(err(&[("transforms", "")]), None);
    }
}
