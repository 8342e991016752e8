//! How a bulk load runs: [`BulkOptions`], its defaults, and
//! [`DuplicateOf`], which near-duplicate a dedup-on-write load names.

#[cfg(doc)]
use super::{BulkReport, Database, Unique};

/// Documents per bulk-load transaction unless told otherwise.
///
/// Each commit copies every B-tree page it touches, and a chunk's postings
/// land all over the bucket table, so fewer, larger commits write less:
/// on debian-desc (t = 0.5, 26 postings per document) 4,096 gave 16,700
/// docs/s, 16,384 gave 19,400–19,900 and 32,768 gave 23,900–24,800, with
/// peak RSS 139, 209 and 273 MiB (`lshdb_bench load --batch N`). Memory
/// depends on the batch, not on the number of documents loaded.
pub const DEFAULT_BATCH: usize = 32_768;

/// Text bytes per bulk-load transaction unless told otherwise.
///
/// A chunk's documents are held in memory twice over while it is written
/// (the chunk being written and the next one being prepared), so this
/// bounds a load's memory when documents are large, as [`DEFAULT_BATCH`]
/// does when they are small.
pub const DEFAULT_MAX_CHUNK_BYTES: usize = 64 << 20;

/// The default [`BulkOptions::max_held_bytes`]: 256 MiB.
pub const DEFAULT_MAX_HELD_BYTES: usize = 256 << 20;

/// Default [`BulkOptions::look_up_bytes`]: 96 MiB.
pub const DEFAULT_LOOK_UP_BYTES: usize = 96 << 20;

/// Default [`BulkOptions::load_filter_bytes`]: 256 MiB, a filter of about
/// 12 M documents of 16 bands.
pub const DEFAULT_LOAD_FILTER_BYTES: usize = 256 << 20;

/// How a bulk load runs.
///
/// ```
/// let options = lshdb::BulkOptions::default().batch(1024).max_chunk_bytes(8 << 20);
/// assert_eq!((options.batch, options.max_chunk_bytes), (1024, 8 << 20));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BulkOptions {
    /// Documents per transaction (one fsync each). Default [`DEFAULT_BATCH`].
    pub batch: usize,
    /// A transaction also ends once its documents reach this many bytes (of
    /// text, of items, or 4 per pre-hashed shingle), the document that
    /// reaches the bound included. Default [`DEFAULT_MAX_CHUNK_BYTES`].
    pub max_chunk_bytes: usize,
    /// For [`Database::insert_unique_bulk`] into a database that is thrown
    /// away after the load (its decisions are what is wanted): a
    /// transaction commits only when its accepted documents' shingles
    /// reach twice `max_chunk_bytes` (4 bytes each) or they take
    /// `max_held_bytes`, not every `batch` documents nor at the end.
    /// Default false.
    pub scratch: bool,
    /// For [`Database::insert_unique_bulk`]: the memory, in bytes, that the
    /// accepted documents not yet visible to the look-ups may take (their
    /// sets, signatures, band keys and records, about 1–2 KiB each for
    /// short texts); a transaction commits when they reach it, so that
    /// memory stays bounded whatever the load's size. Default
    /// [`DEFAULT_MAX_HELD_BYTES`].
    pub max_held_bytes: usize,
    /// For [`Database::insert_unique_bulk`]: the memory, in bytes, of the
    /// look-ups' cache of what they read from the file's runs: whole run
    /// filters and filter rows (three quarters; a look-up probes every
    /// run's filter in every band its keys may share) and posting lists.
    /// Default [`DEFAULT_LOOK_UP_BYTES`].
    pub look_up_bytes: usize,
    /// For a load into an empty database ([`Database::insert_unique_bulk`],
    /// and [`Database::insert_bulk`] into a file with clusters): the
    /// memory, in bytes, of the load's filter of what it wrote, about 21
    /// bytes per document of 16 bands, which spares the look-ups most
    /// reads of the file. A load that outgrows it drops the filter and
    /// goes on reading the file for every look-up: slower, but its memory
    /// stays bounded whatever its size. Default
    /// [`DEFAULT_LOAD_FILTER_BYTES`].
    pub load_filter_bytes: usize,
    /// For [`Database::insert_bulk`]: the rejections its report keeps in
    /// [`BulkReport::rejected`], the most recent ones, at most this many;
    /// [`BulkReport::rejected_count`] counts them all. A progress callback
    /// that reads the newest `rejected_count - seen` entries after each
    /// commit sees every rejection once while this is at least
    /// [`BulkOptions::batch`]. Default: all of them are kept, so the report
    /// grows with a stream's rejections; set it for an endless input.
    pub max_rejected: usize,
    /// For [`Database::insert_unique_bulk`]: which kept document a
    /// duplicate's [`Unique::Duplicate`] names. Default
    /// [`DuplicateOf::First`]; the decisions are the same either way.
    pub duplicate_of: DuplicateOf,
}

impl Default for BulkOptions {
    fn default() -> Self {
        Self {
            batch: DEFAULT_BATCH,
            max_chunk_bytes: DEFAULT_MAX_CHUNK_BYTES,
            scratch: false,
            max_held_bytes: DEFAULT_MAX_HELD_BYTES,
            look_up_bytes: DEFAULT_LOOK_UP_BYTES,
            load_filter_bytes: DEFAULT_LOAD_FILTER_BYTES,
            max_rejected: usize::MAX,
            duplicate_of: DuplicateOf::First,
        }
    }
}

impl BulkOptions {
    /// Sets [`BulkOptions::batch`].
    pub fn batch(mut self, batch: usize) -> Self {
        self.batch = batch;
        self
    }

    /// Sets [`BulkOptions::max_chunk_bytes`].
    pub fn max_chunk_bytes(mut self, bytes: usize) -> Self {
        self.max_chunk_bytes = bytes;
        self
    }

    /// Sets [`BulkOptions::scratch`].
    pub fn scratch(mut self, scratch: bool) -> Self {
        self.scratch = scratch;
        self
    }

    /// Sets [`BulkOptions::max_held_bytes`].
    pub fn max_held_bytes(mut self, bytes: usize) -> Self {
        self.max_held_bytes = bytes;
        self
    }

    /// Sets [`BulkOptions::look_up_bytes`].
    pub fn look_up_bytes(mut self, bytes: usize) -> Self {
        self.look_up_bytes = bytes;
        self
    }

    /// Sets [`BulkOptions::load_filter_bytes`].
    pub fn load_filter_bytes(mut self, bytes: usize) -> Self {
        self.load_filter_bytes = bytes;
        self
    }

    /// Sets [`BulkOptions::max_rejected`].
    pub fn max_rejected(mut self, rejections: usize) -> Self {
        self.max_rejected = rejections;
        self
    }

    /// Sets [`BulkOptions::duplicate_of`].
    pub fn duplicate_of(mut self, which: DuplicateOf) -> Self {
        self.duplicate_of = which;
        self
    }

    /// For [`Database::insert_unique_bulk`]: about `bytes` of memory in
    /// all, of which a quarter holds accepted documents
    /// ([`BulkOptions::max_held_bytes`]), an eighth caches the look-ups
    /// ([`BulkOptions::look_up_bytes`]) and at most a quarter is the
    /// load's filter of what it wrote
    /// ([`BulkOptions::load_filter_bytes`]); the rest is left to the
    /// database's caches and the caller.
    ///
    /// ```
    /// let options = lshdb::BulkOptions::default().memory(1 << 30);
    /// assert_eq!(options.max_held_bytes, 1 << 28);
    /// assert_eq!(options.look_up_bytes, 1 << 27);
    /// assert_eq!(options.load_filter_bytes, 1 << 28);
    /// ```
    pub fn memory(self, bytes: usize) -> Self {
        self.max_held_bytes(bytes / 4)
            .look_up_bytes(bytes / 8)
            .load_filter_bytes(bytes / 4)
    }
}

/// Which kept document [`Database::insert_unique_bulk`] names for a
/// duplicate. A document is a duplicate when some kept document is at the
/// threshold or above, whichever is asked for: the documents kept and
/// dropped are the same; only the one a duplicate names (and its
/// similarity) can differ.
///
/// ```
/// use lshdb::{BulkOptions, DuplicateOf};
/// assert_eq!(BulkOptions::default().duplicate_of, DuplicateOf::First);
/// let best = BulkOptions::default().duplicate_of(DuplicateOf::Best);
/// assert_eq!(best.duplicate_of, DuplicateOf::Best);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DuplicateOf {
    /// The first near-duplicate found among the stored documents (band by
    /// band, in id order within a band), which ends the document's
    /// look-up; when none is found there, the most similar of those accepted
    /// since the load's last commit (held in memory, where checking them
    /// all is cheap), as `Best` names it. Which one that is can change with
    /// [`BulkOptions::batch`] and the memory bounds. The fastest: a
    /// duplicate costs a few verifications, however many near-duplicates
    /// it has.
    #[default]
    First,
    /// The most similar kept document (ties: the lowest id, stored before
    /// held), as [`Database::insert_unique`] names it; past 256
    /// candidates, the first verified, most shared bands first. Verifies
    /// every candidate of a duplicate too.
    Best,
}

impl DuplicateOf {
    /// The choice's name, as the surfaces spell it: `first`, `best`.
    pub fn name(self) -> &'static str {
        match self {
            DuplicateOf::First => "first",
            DuplicateOf::Best => "best",
        }
    }

    /// The choice named `name` (see [`DuplicateOf::name`]).
    ///
    /// ```
    /// use lshdb::DuplicateOf;
    /// assert_eq!(DuplicateOf::from_name("best"), Some(DuplicateOf::Best));
    /// assert_eq!(DuplicateOf::from_name("most"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::First, Self::Best]
            .into_iter()
            .find(|d| d.name() == name)
    }
}
