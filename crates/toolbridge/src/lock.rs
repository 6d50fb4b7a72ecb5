//! Locking a [`Mutex`] whose holder panicked: the data is taken as it was
//! left. Every lock in toolbridge guards state that stays consistent between
//! statements (a map, a counter, a queue), so a panic elsewhere must not turn
//! every later lock into a second panic.

use std::sync::{Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// [`Mutex::lock`] that recovers from poisoning (see the module).
pub trait LockUnpoisoned<T: ?Sized> {
    /// The guard, whether or not a holder panicked.
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T>;
}

impl<T: ?Sized> LockUnpoisoned<T> for Mutex<T> {
    fn lock_unpoisoned(&self) -> MutexGuard<'_, T> {
        self.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// [`RwLock::read`] and [`RwLock::write`] that recover from poisoning.
pub trait RwLockUnpoisoned<T: ?Sized> {
    /// The read guard, whether or not a writer panicked.
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T>;
    /// The write guard, whether or not a writer panicked.
    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T>;
}

impl<T: ?Sized> RwLockUnpoisoned<T> for RwLock<T> {
    fn read_unpoisoned(&self) -> RwLockReadGuard<'_, T> {
        self.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_unpoisoned(&self) -> RwLockWriteGuard<'_, T> {
        self.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_gives_the_data_as_left() {
        let lock = std::sync::Arc::new(Mutex::new(1));
        let held = lock.clone();
        let _ = std::thread::spawn(move || {
            let mut value = held.lock().unwrap();
            *value = 2;
            panic!("poison it");
        })
        .join();
        assert!(lock.is_poisoned());
        assert_eq!(*lock.lock_unpoisoned(), 2);
    }
}
