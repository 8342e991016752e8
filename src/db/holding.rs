//! Which thread holds a write transaction open while the caller's code
//! runs: a [`crate::Batch`], or a dedup-on-write load while it calls its
//! input and its callback. A write through the handle on that thread would
//! wait for that transaction forever (redb allows one at a time); it gets
//! [`Error::WriteInProgress`] instead.

use crate::{Error, Result};
use parking_lot::Mutex;
use std::path::Path;
use std::thread::ThreadId;

/// The thread holding the handle's write transaction open, and what holds
/// it.
#[derive(Default)]
pub(crate) struct Holder(Mutex<Option<(ThreadId, &'static str)>>);

/// The mark of a thread holding the transaction: cleared when dropped.
pub(crate) struct Holding<'a>(&'a Holder);

impl Holder {
    /// Marks this thread as holding the write transaction, for `what`
    /// ("a batch", ...), until the mark is dropped.
    pub fn hold(&self, what: &'static str) -> Holding<'_> {
        *self.0.lock() = Some((std::thread::current().id(), what));
        Holding(self)
    }

    /// [`Error::WriteInProgress`] when this thread holds the transaction.
    pub fn check(&self, path: &Path) -> Result<()> {
        match *self.0.lock() {
            Some((thread, holder)) if thread == std::thread::current().id() => {
                Err(Error::WriteInProgress {
                    path: path.to_owned(),
                    holder,
                })
            }
            _ => Ok(()),
        }
    }
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        let mut held = self.0 .0.lock();
        if held.is_some_and(|(thread, _)| thread == std::thread::current().id()) {
            *held = None;
        }
    }
}
