//! The native half of the `lshdb` Python package (`lshdb._lshdb`); the
//! Python half (`python/lshdb/`) gives it its Pythonic face. All PyO3
//! code of the project lives in this crate: the `lshdb` crate knows
//! nothing of Python.

mod batch;
mod config;
mod convert;
mod database;
mod errors;
mod items;
mod sketcher;
mod stream;
mod texts;

use pyo3::prelude::*;

/// The allocator of the extension's Rust code (Python's objects keep
/// Python's): bulk loads make and free millions of small buffers, many
/// on another thread than the one that made them, where glibc's malloc
/// is slow. A unit struct: no state of lshdb's own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Panics inside the panic barrier, so the tests can see that a Rust
/// panic reaches Python as `lshdb.InternalError` (not part of the API).
#[pyfunction]
fn _panic_for_tests(py: Python<'_>) -> PyResult<()> {
    errors::run(py, || -> Result<(), errors::Fail> {
        panic!("deliberate panic for the tests")
    })
}

/// lshdb's native module: see the `lshdb` package.
#[pymodule]
fn _lshdb(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<database::Database>()?;
    m.add_class::<stream::Stream>()?;
    m.add_class::<database::QueryPlace>()?;
    m.add_class::<sketcher::Sketcher>()?;
    m.add_function(wrap_pyfunction!(sketcher::jaccard_sets, m)?)?;
    m.add_function(wrap_pyfunction!(batch::sketch_batch, m)?)?;
    m.add_function(wrap_pyfunction!(batch::jaccard_pairs, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add("FORMAT_VERSION", lshdb::FORMAT_VERSION)?;
    m.add("MAX_KEY_BYTES", lshdb::MAX_KEY_BYTES)?;
    m.add("MAX_DOCUMENT_BYTES", lshdb::MAX_DOCUMENT_BYTES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
