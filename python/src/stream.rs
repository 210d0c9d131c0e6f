//! What Python holds of a run: an Arrow C stream of record batches, or an iterator of runs of
//! unified JSON lines.

use std::sync::Mutex;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::ffi::FFI_ArrowSchema;
use arrow_schema::{ArrowError, SchemaRef};
use pyo3::exceptions::{PyOSError, PyRuntimeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};

use agentlog::model::Diagnostic;

use crate::run::{Item, Running};

/// A table's schema, exported through the Arrow PyCapsule interface (`__arrow_c_schema__`).
#[pyclass(module = "agentlog._agentlog", frozen)]
pub struct Schema(pub SchemaRef);

#[pymethods]
impl Schema {
    /// The schema as an `arrow_schema` PyCapsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.0.as_ref()).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }
}

/// Hands a problem to the Python callable `report(code, message, path, line, column)`.
fn report(py: Python<'_>, report: &Py<PyAny>, d: &Diagnostic) -> PyResult<()> {
    report.call1(py, (&d.code, &d.message, &d.file, d.line, d.column)).map(drop)
}

/// A table being read, exported once through the Arrow PyCapsule interface
/// (`__arrow_c_stream__`): pyarrow, Polars and DuckDB take it without copying.
#[pyclass(module = "agentlog._agentlog")]
pub struct Stream {
    reader: Mutex<Option<Reader>>,
    schema: SchemaRef,
}

impl Stream {
    /// A stream of `running`'s batches of `schema`; problems go to `report`.
    pub fn new(running: Running, schema: SchemaRef, report: Py<PyAny>) -> Self {
        let reader = Reader { running: Some(running), schema: schema.clone(), report };
        Stream { reader: Mutex::new(Some(reader)), schema }
    }
}

#[pymethods]
impl Stream {
    /// The stream as an `arrow_array_stream` PyCapsule; a stream can be exported once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is fixed; a consumer asking for another casts on its side.
        let _ = requested_schema;
        let reader = self.reader.lock().map_err(|_| PyRuntimeError::new_err("poisoned"))?.take();
        let Some(reader) = reader else {
            return Err(PyRuntimeError::new_err("this stream was already consumed"));
        };
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// The names of the table's columns.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }
}

/// The Rust side of the C stream: batches in order; problems are reported to Python as they
/// come, and a report that raises ends the stream with its message.
struct Reader {
    running: Option<Running>,
    schema: SchemaRef,
    report: Py<PyAny>,
}

impl Iterator for Reader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let item = self.running.as_ref()?.items.recv().unwrap_or(Item::End(Err("the reading thread ended".into())));
            match item {
                Item::Batch(batch) => return Some(Ok(batch)),
                Item::Lines(_) => {}
                Item::Problem(d) => {
                    if let Err(e) = Python::attach(|py| report(py, &self.report, &d).map_err(|e| e.to_string())) {
                        self.running = None;
                        return Some(Err(ArrowError::InvalidArgumentError(e)));
                    }
                }
                Item::End(end) => {
                    self.running = None;
                    return end.err().map(|e| Err(ArrowError::IoError(e.clone(), std::io::Error::other(e))));
                }
            }
        }
    }
}

impl RecordBatchReader for Reader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// Runs of unified JSON lines, as `bytes`, for [`crate::read_lines`]; problems are reported
/// between them, and a report that raises raises here.
#[pyclass(module = "agentlog._agentlog")]
pub struct Lines {
    running: Mutex<Option<Running>>,
    report: Py<PyAny>,
}

impl Lines {
    /// The lines of `running`; problems go to `report`.
    pub fn new(running: Running, report: Py<PyAny>) -> Self {
        Lines { running: Mutex::new(Some(running)), report }
    }
}

#[pymethods]
impl Lines {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let lock = || self.running.lock().map_err(|_| PyRuntimeError::new_err("poisoned"));
        loop {
            // The run is taken out while this thread waits without the interpreter's lock: another
            // thread calling meanwhile finds the iterator ended rather than waiting on it.
            let Some(run) = lock()?.take() else { return Ok(None) };
            let (run, item) = py.detach(move || {
                let item = run.items.recv();
                (run, item)
            });
            let mut running = lock()?;
            *running = Some(run);
            let item = item.unwrap_or(Item::End(Err("the reading thread ended".into())));
            match item {
                Item::Lines(bytes) => return Ok(Some(PyBytes::new(py, &bytes))),
                Item::Batch(_) => {}
                Item::Problem(d) => {
                    if let Err(e) = report(py, &self.report, &d) {
                        *running = None;
                        return Err(e);
                    }
                }
                Item::End(end) => {
                    *running = None;
                    return end.map(|()| None).map_err(PyOSError::new_err);
                }
            }
        }
    }

    /// Stops the run; the iterator ends.
    fn close(&self) {
        if let Ok(mut running) = self.running.lock() {
            *running = None;
        }
    }
}
