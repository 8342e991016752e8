//! Batches of texts from Python: a list of `str`, or an Arrow string
//! array's buffers (offsets and UTF-8 bytes), which `lshdb/_inputs.py`
//! makes from pyarrow arrays and Arrow-backed pandas columns without
//! creating one Python object per text.

use crate::errors::Fail;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

/// Texts copied out of Python, so that the work on them runs without the
/// GIL.
pub enum TextBatch {
    /// One Rust string per Python string.
    Strings(Vec<String>),
    /// Arrow layout: text `i` is `data[offsets[i]..offsets[i + 1]]`.
    Arrow { offsets: Vec<i64>, data: Vec<u8> },
}

impl<'py> FromPyObject<'_, 'py> for TextBatch {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok((offsets, data)) =
            obj.extract::<(PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, u8>)>()
        {
            let offsets = offsets.as_array().to_vec();
            let data = data.as_array().to_vec();
            return Ok(TextBatch::Arrow { offsets, data });
        }
        Ok(TextBatch::Strings(obj.extract::<Vec<String>>()?))
    }
}

impl TextBatch {
    /// The texts as `&str`, checking the Arrow layout (offsets in bounds
    /// and increasing, UTF-8 text).
    pub fn strs(&self) -> Result<Vec<&str>, Fail> {
        match self {
            TextBatch::Strings(strings) => Ok(strings.iter().map(String::as_str).collect()),
            TextBatch::Arrow { offsets, data } => {
                let mut out = Vec::with_capacity(offsets.len().saturating_sub(1));
                for (i, pair) in offsets.windows(2).enumerate() {
                    let (start, end) = (pair[0], pair[1]);
                    let range = usize::try_from(start)
                        .ok()
                        .zip(usize::try_from(end).ok())
                        .filter(|(s, e)| s <= e && *e <= data.len())
                        .ok_or_else(|| {
                            Fail::Input(format!("string array: bad offsets at element {i}"))
                        })?;
                    let text = std::str::from_utf8(&data[range.0..range.1]).map_err(|e| {
                        Fail::Input(format!("string array: element {i} is not UTF-8 ({e})"))
                    })?;
                    out.push(text);
                }
                Ok(out)
            }
        }
    }
}
