//! One posting-list look-up, as every reader of postings takes it: the
//! ids posted under (index, key) after a given id, at most so many.

/// One posting-list look-up: the ids posted under (`index`, `key`) that
/// are greater than `after`, ascending, at most `cap` of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The band, the key band or the SimHash block the list is under.
    pub index: u32,
    /// The bucket key.
    pub key: u64,
    /// Only ids greater than this one (`None`: from the first).
    pub after: Option<u64>,
    /// At most this many ids.
    pub cap: usize,
}

impl Probe {
    /// The ids under (`index`, `key`), at most `cap` of them.
    pub fn all(index: u32, key: u64, cap: usize) -> Self {
        Self {
            index,
            key,
            after: None,
            cap,
        }
    }

    /// The first id at or after `id` under (`index`, `key`).
    pub fn first_from(index: u32, key: u64, id: u64) -> Self {
        Self {
            index,
            key,
            after: id.checked_sub(1),
            cap: 1,
        }
    }

    /// The lowest id the look-up may return; `None` when none can be
    /// (`after` is the largest id).
    pub fn start(&self) -> Option<u64> {
        match self.after {
            Some(u64::MAX) => None,
            Some(id) => Some(id + 1),
            None => Some(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Probe;

    #[test]
    fn a_probe_starts_after_its_id_and_never_past_the_last() {
        assert_eq!(Probe::all(0, 7, 10).start(), Some(0));
        assert_eq!(Probe::first_from(0, 7, 0).start(), Some(0));
        assert_eq!(Probe::first_from(0, 7, 5).start(), Some(5));
        let last = Probe {
            after: Some(u64::MAX),
            ..Probe::all(0, 7, 1)
        };
        assert_eq!(last.start(), None);
    }
}
