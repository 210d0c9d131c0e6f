//! The native part of the `agentlog` Python package: the library's entry points, called with
//! a command line the Python functions build from their arguments, so that a keyword means
//! exactly what the flag of the same name means to the `agentlog` command.
//!
//! Reading runs on threads of its own, without the interpreter's lock, a bounded number of
//! batches ahead of the consumer. What it reports on the way (a skipped line, an input that
//! could not be read) goes to a Python callable, which turns it into a warning.

mod run;
mod stream;

use std::ffi::OsString;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use agentlog::cli::{self, Problem};
use agentlog::write::arrow::Table;

create_exception!(
    _agentlog,
    Failure,
    PyException,
    "A run that could not start or finish; its only argument is the list of problems, as dicts."
);

/// The problems as a Python list of dicts with `code`, `message`, `help` and `path`.
fn problems<'py>(py: Python<'py>, problems: &[Problem]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for p in problems {
        let dict = PyDict::new(py);
        dict.set_item("code", &p.code)?;
        dict.set_item("message", &p.message)?;
        dict.set_item("help", &p.help)?;
        dict.set_item("path", &p.path)?;
        list.append(dict)?;
    }
    Ok(list)
}

/// A [`Failure`] carrying `found`.
fn failure(py: Python<'_>, found: &[Problem]) -> PyErr {
    match problems(py, found) {
        Ok(list) => Failure::new_err((list.unbind(),)),
        Err(e) => e,
    }
}

fn words(argv: Vec<String>) -> Vec<OsString> {
    argv.into_iter().map(OsString::from).collect()
}

/// Resolves a `convert` command line and starts reading it into `table` on threads of its own;
/// `report` is called with each problem met on the way.
#[pyfunction]
fn read_table(py: Python<'_>, argv: Vec<String>, table: &str, report: Py<PyAny>) -> PyResult<stream::Stream> {
    let table = table_named(table)?;
    let reading = py.detach(|| cli::reading(words(argv))).map_err(|found| failure(py, &found))?;
    Ok(stream::Stream::new(run::start(reading, run::Into::Table(table)), table.schema(), report))
}

/// The schema of `table`, without reading anything.
#[pyfunction]
fn table_schema(table: &str) -> PyResult<stream::Schema> {
    Ok(stream::Schema(table_named(table)?.schema()))
}

fn table_named(table: &str) -> PyResult<Table> {
    match table {
        "events" => Ok(Table::Events),
        "sessions" => Ok(Table::Sessions),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!("no table named {other}: events or sessions"))),
    }
}

/// Resolves a `convert` command line and starts reading it into unified JSON lines.
#[pyfunction]
fn read_lines(py: Python<'_>, argv: Vec<String>, report: Py<PyAny>) -> PyResult<stream::Lines> {
    let reading = py.detach(|| cli::reading(words(argv))).map_err(|found| failure(py, &found))?;
    Ok(stream::Lines::new(run::start(reading, run::Into::Lines), report))
}

/// Resolves a `convert` command line into its groups of inputs, in order: the input names of
/// each group, the units that can be read apart (on other machines) and give the same events.
/// The inputs that cannot be read come second, as problems.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn groups<'py>(py: Python<'py>, argv: Vec<String>) -> PyResult<(Vec<Vec<String>>, Bound<'py, PyList>)> {
    let reading = py.detach(|| cli::reading(words(argv))).map_err(|found| failure(py, &found))?;
    let groups = reading.groups.iter().map(|g| g.items.iter().map(|i| i.spec.name().to_owned()).collect()).collect();
    let failed: Vec<Problem> = reading.failed.iter().map(|e| Problem::of(e)).collect();
    Ok((groups, problems(py, &failed)?))
}

/// Runs a command line as the `agentlog` command would, printing nothing: gives its exit code
/// and the errors it would have printed.
#[pyfunction]
fn run_keeping<'py>(py: Python<'py>, argv: Vec<String>) -> PyResult<(u8, Bound<'py, PyList>)> {
    let (exit, found) = py.detach(|| cli::run_keeping(words(argv)));
    Ok((exit.code(), problems(py, &found)?))
}

/// Runs a command line as the `agentlog` command, printing on stdout and stderr; gives the
/// exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| cli::main_from(words(argv))).code()
}

/// The native module.
#[pymodule]
fn _agentlog(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("Failure", m.py().get_type::<Failure>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEMA_VERSION", agentlog::model::SCHEMA_VERSION)?;
    m.add_function(wrap_pyfunction!(read_table, m)?)?;
    m.add_function(wrap_pyfunction!(read_lines, m)?)?;
    m.add_function(wrap_pyfunction!(groups, m)?)?;
    m.add_function(wrap_pyfunction!(table_schema, m)?)?;
    m.add_function(wrap_pyfunction!(run_keeping, m)?)?;
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_class::<stream::Stream>()?;
    m.add_class::<stream::Lines>()?;
    m.add_class::<stream::Schema>()?;
    Ok(())
}
