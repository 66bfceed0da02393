//! The error of a herder request ([`HerderError`]), with the HTTP status Connect's REST layer
//! gives each kind (Connect's `NotFoundException`, `AlreadyExistsException`,
//! `BadRequestException`, `NotLeaderException`, `NotAssignedException`, …).
//!
//! It sits below [`crate::herder`] and [`crate::worker`] because both answer requests with it
//! (the worker's connector offsets requests among them), so the worker does not depend on the
//! herder. [`crate::herder`] re-exports it.

/// A herder failure with the HTTP status Connect's REST layer gives it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HerderError {
    /// 404 (`NotFoundException`).
    #[error("{0}")]
    NotFound(String),
    /// 409 (`AlreadyExistsException`, rebalance in progress).
    #[error("{0}")]
    Conflict(String),
    /// 400 (`BadRequestException`).
    #[error("{0}")]
    BadRequest(String),
    /// 500 (`ConnectException`).
    #[error("{0}")]
    Internal(String),
    /// 500: the worker's own machinery failed (a config-topic write, an offsets read or
    /// write), with the error that caused it as the source; the message is that error's.
    #[error("{0}")]
    Failed(#[from] tributary_api::ConnectError),
    /// 403 (an internal request with a wrong signature).
    #[error("{0}")]
    Forbidden(String),
    /// 503 (this worker cannot verify internal requests yet).
    #[error("{0}")]
    Unavailable(String),
    /// The request must run on the leader (`NotLeaderException`); the REST layer forwards it
    /// there, or answers 409 when the leader is unknown.
    #[error("Cannot complete request because of a conflicting operation (e.g. worker rebalance)")]
    NotLeader(Option<String>),
    /// The request must run on the worker owning the instance (`NotAssignedException`).
    #[error("Cannot complete request because of a conflicting operation (e.g. worker rebalance)")]
    NotAssigned(Option<String>),
}

impl HerderError {
    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        match self {
            HerderError::NotFound(_) => 404,
            HerderError::Conflict(_) => 409,
            HerderError::BadRequest(_) => 400,
            HerderError::Internal(_) | HerderError::Failed(_) => 500,
            HerderError::Forbidden(_) => 403,
            HerderError::Unavailable(_) => 503,
            HerderError::NotLeader(_) | HerderError::NotAssigned(_) => 409,
        }
    }

    /// Where the request should be forwarded, for [`HerderError::NotLeader`] and
    /// [`HerderError::NotAssigned`].
    pub fn forward_target(&self) -> Option<&str> {
        match self {
            HerderError::NotLeader(u) | HerderError::NotAssigned(u) => u.as_deref(),
            _ => None,
        }
    }
}

impl HerderError {
    /// Whether a request that failed with this error may succeed once the group's rebalance
    /// ends: it had to run on the leader or on an instance's owner
    /// ([`HerderError::NotLeader`], [`HerderError::NotAssigned`]), or the worker expected a
    /// rebalance ([`REBALANCE_EXPECTED`]). The REST layer waits for the rebalance and retries
    /// such requests (see [`crate::herder::Membership`]).
    pub fn waits_for_rebalance(&self) -> bool {
        match self {
            HerderError::NotLeader(_) | HerderError::NotAssigned(_) => true,
            HerderError::Conflict(m) => m == REBALANCE_EXPECTED,
            _ => false,
        }
    }
}

/// The 409 message of a request refused because this worker expects a rebalance (Connect's
/// `RebalanceNeededException`).
pub const REBALANCE_EXPECTED: &str = "Cannot complete request because a rebalance is expected";

/// Result of herder calls.
pub type HerderResult<T> = Result<T, HerderError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_of_the_workers_machinery_keeps_its_cause_and_its_message() {
        let cause = tributary_api::ConnectError::connect("the config topic refused the write");
        let e = HerderError::from(cause.clone());
        assert_eq!(e.status(), 500);
        assert_eq!(e.to_string(), cause.to_string());
        let source = std::error::Error::source(&e).expect("the cause is the source");
        assert_eq!(source.to_string(), cause.to_string());
        assert!(!e.waits_for_rebalance());
    }
}
