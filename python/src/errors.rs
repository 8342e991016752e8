//! lshdb's errors as Python exceptions, and the one way every entry point
//! runs Rust code: without the GIL, with panics caught.
//!
//! The exception classes are plain Python (`lshdb/_errors.py`), because
//! several inherit from two bases (`InvalidInput(LshdbError, ValueError)`),
//! which a class made in Rust cannot. They are looked up by name when an
//! error is raised; errors are rare, so the look-up costs nothing that
//! matters.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyType;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why a call failed, before it becomes a Python exception.
#[derive(Debug)]
pub enum Fail {
    /// An error of the library.
    Db(lshdb::Error),
    /// The handle was closed.
    Closed,
    /// Bad input found by the bindings themselves (raised as `InvalidInput`).
    Input(String),
    /// A panic caught on a background thread.
    Panic(String),
}

impl From<lshdb::Error> for Fail {
    fn from(err: lshdb::Error) -> Self {
        Fail::Db(err)
    }
}

/// The library's message followed by its source chain, so that an I/O or
/// storage-engine error says what the operating system said.
pub fn message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// [`message`] with Python's own hint where the library leaves the how-to
/// to each surface: waiting for a writer is `Database.open`'s `wait=`.
fn python_message(err: &lshdb::Error) -> String {
    let text = message(err);
    match err {
        lshdb::Error::AlreadyOpen { waited: None, .. } => {
            format!("{text} with `Database.open(path, wait=SECONDS)`")
        }
        lshdb::Error::NoTimeIndex => format!(
            "{text}: `db.rebuild(timestamps=True)`, or `Database.create(path, timestamps=True)`"
        ),
        _ => text,
    }
}

/// The Python class for an lshdb error.
fn class_name(err: &lshdb::Error) -> &'static str {
    use lshdb::Error as E;
    match err {
        E::InvalidParameter { .. }
        | E::EmptyDocument { .. }
        | E::InvalidKey { .. }
        | E::DocumentTooLarge { .. } => "InvalidInput",
        E::NotFound(_) => "NotFound",
        E::FileExists { .. } => "FileExists",
        E::NotADatabase { .. } => "NotADatabase",
        E::FormatVersion { .. } => "FormatVersionError",
        E::ConfigMismatch { .. } => "ConfigMismatch",
        E::AlreadyOpen { .. } => "AlreadyOpen",
        E::ReadOnly { .. } => "ReadOnlyError",
        E::NeedsRepair { .. } => "NeedsRepair",
        E::Corrupted(_) => "Corrupted",
        E::IndexDisabled(_) | E::NoTimeIndex => "IndexDisabled",
        E::Poisoned(_) => "Poisoned",
        E::Io { .. } | E::Storage(_) => "StorageError",
        E::WrongProcess { .. } => "DatabaseClosed",
        _ => "LshdbError",
    }
}

/// Raises `name` from `lshdb._errors` with `text`; falls back to
/// `RuntimeError` only if that module cannot be imported at all.
pub fn raise(py: Python<'_>, name: &str, text: String) -> PyErr {
    let class = py
        .import("lshdb._errors")
        .and_then(|m| m.getattr(name))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match class {
        Ok(class) => PyErr::from_type(class, (text,)),
        Err(_) => PyRuntimeError::new_err(text),
    }
}

impl Fail {
    /// The Python exception for this failure.
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        match self {
            Fail::Db(err) => raise(py, class_name(&err), python_message(&err)),
            Fail::Closed => raise(
                py,
                "DatabaseClosed",
                "the database is closed; open it again to use it".to_owned(),
            ),
            Fail::Input(text) => raise(py, "InvalidInput", text),
            Fail::Panic(text) => raise(py, "InternalError", text),
        }
    }
}

/// The text of a caught panic.
pub fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("internal error in lshdb (please report it): {what}")
}

/// Runs `f` with the GIL released and panics caught: every entry point
/// that does real work goes through here (or [`guard`]), so no panic
/// reaches Python as `PanicException` — it becomes `lshdb.InternalError`.
pub fn run<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Result<T, Fail> + Send,
{
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(fail)) => Err(fail.into_py(py)),
        Err(payload) => Err(raise(py, "InternalError", panic_text(payload))),
    }
}

/// As [`run`], keeping the GIL: for work that touches Python objects.
pub fn guard<T>(py: Python<'_>, f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(raise(py, "InternalError", panic_text(payload))),
    }
}
