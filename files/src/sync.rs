//! The one lock helper of the workspace: a `Mutex` whose holder panicked is still used.
//!
//! gatekit's shared state is plain records (a list of owned folders, an event log, counters of
//! cores); a panic while one is held leaves it as consistent as any other moment, and a tool
//! that must still clean up (kill its children, restore files, write its partial report) cannot
//! afford every later `lock()` failing. So every lock in the tools is taken through [`lock`].

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `m`, taking the value as it is when a holder panicked.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_whose_holder_panicked_is_still_taken_with_its_value() {
        let m = std::sync::Arc::new(Mutex::new(vec![1]));
        let held = m.clone();
        let _ = std::thread::spawn(move || {
            let mut v = held.lock().unwrap();
            v.push(2);
            panic!("the holder dies");
        })
        .join();
        assert!(m.is_poisoned());
        assert_eq!(*lock(&m), vec![1, 2]);
    }
}
