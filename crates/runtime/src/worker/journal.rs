//! A shared, ordered record of what happened, for the task loops' unit tests: the in-memory
//! clients and the tests' tasks write to one journal, so a test reads the order of calls
//! across them (Connect's tests verify the same with mocks' call order).

use std::sync::{Arc, Mutex};

/// Events `E` in the order they were pushed; clones share the record.
#[derive(Debug)]
pub struct Journal<E>(Arc<Mutex<Vec<E>>>);

impl<E> Clone for Journal<E> {
    fn clone(&self) -> Self {
        Journal(self.0.clone())
    }
}

impl<E> Default for Journal<E> {
    fn default() -> Self {
        Journal(Arc::default())
    }
}

impl<E: Clone> Journal<E> {
    /// Records `e`.
    pub fn push(&self, e: E) {
        self.0.lock().unwrap().push(e);
    }
    /// Everything recorded so far, in order.
    pub fn events(&self) -> Vec<E> {
        self.0.lock().unwrap().clone()
    }
}
