//! Batches of item sets from Python (`items=` of `query_many` and the
//! `Sketcher`): a list of lists of `bytes`, which `lshdb/_inputs.py` makes
//! from str, bytes and int items. Each item stays in its Python `bytes`
//! object, read without the GIL and without a copy.

use pyo3::pybacked::PyBackedBytes;

/// Item sets as Python gave them.
pub type ItemSets = Vec<Vec<PyBackedBytes>>;

/// Each set's items as byte slices, as [`lshdb::Document::Items`] takes them.
pub fn slices(sets: &ItemSets) -> Vec<Vec<&[u8]>> {
    sets.iter()
        .map(|set| set.iter().map(|item| &item[..]).collect())
        .collect()
}
