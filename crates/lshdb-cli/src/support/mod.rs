//! The CLI's support layer: what several commands share, passed a
//! [`context::Context`] rather than reading globals. Command modules
//! (`add`, `admin`, `dedup`, `docs`, `expire`, `inspect`, `pairs`, `query` with its
//! containment renderer `containment`, `scan`, `tune`) import this layer
//! and the other shared modules (`args`, `input`, `output`, `records`,
//! `walk`, `interrupt`), never each other.

pub mod context;
pub mod groups;
pub mod hashes;
pub mod jsonl;
pub mod load;
pub mod outfile;
pub mod sorter;
#[cfg(test)]
pub mod testing;
pub mod when;
