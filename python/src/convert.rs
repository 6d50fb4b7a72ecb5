//! JSON between the library (serde values and rmcp's model types) and
//! Python objects (dicts, lists, str, int, float, bool, None), through
//! `pythonize`: no JSON text in between.

use pyo3::{exceptions::PyTypeError, prelude::*};
use serde::{Serialize, de::DeserializeOwned};

/// `value` as a Python object.
pub fn to_py<T: Serialize + ?Sized>(py: Python<'_>, value: &T) -> PyResult<Py<PyAny>> {
    pythonize::pythonize(py, value)
        .map(Bound::unbind)
        .map_err(|e| PyTypeError::new_err(format!("cannot convert to Python: {e}")))
}

/// `object` read as a `T`; `what` names it in the error.
pub fn from_py<T: DeserializeOwned>(object: &Bound<'_, PyAny>, what: &str) -> PyResult<T> {
    pythonize::depythonize(object)
        .map_err(|e| PyTypeError::new_err(format!("{what} is not what toolbridge expects: {e}")))
}

/// `object` read as a `T`, or nothing when it is absent or `None`.
pub fn from_py_optional<T: DeserializeOwned>(
    object: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<T>> {
    match object {
        Some(object) if !object.is_none() => from_py(object, what).map(Some),
        _ => Ok(None),
    }
}
