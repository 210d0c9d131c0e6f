//! DuckDB, Polars, pyarrow and pandas read every output with the calls the guide documents (docs/src/datasets.md)
//! (`tests/independent/consume.py`): the same rows, output tokens per agent and tool inputs'
//! file paths as the unified JSONL, column types as published, and usage per agent and day
//! over the partitioned dataset equal to the JSONL's. CI installs all four;
//! elsewhere the test skips with a notice.

mod common;

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;

#[test]
fn every_consumer_reads_every_output_to_the_same_figures() {
    if !common::python_has("duckdb, pyarrow, polars, pandas") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut inputs = vec![common::own_corpus()];
    inputs.extend(common::shared_corpus());
    let convert = |args: &[&str]| {
        let out = cargo_bin_cmd!("agentlog")
            .arg("convert")
            .arg("-q")
            .args(&inputs)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    convert(&["-o", "unified.jsonl"]);
    convert(&["-o", "events.parquet"]);
    convert(&["-o", "events.arrow"]);
    convert(&["-o", "interchange.json"]);
    let stream = cargo_bin_cmd!("agentlog").args(["convert", "-q", "--to", "arrow"]).args(&inputs).output().unwrap();
    std::fs::write(dir.path().join("events.arrows"), stream.stdout).unwrap();
    let schema = cargo_bin_cmd!("agentlog").args(["schema", "arrow"]).output().unwrap();
    assert_eq!(schema.status.code(), Some(0));
    std::fs::write(dir.path().join("event-schema.arrow"), schema.stdout).unwrap();
    convert(&["--to", "parquet", "-o", "dataset", "--partition-by", "agent,date"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/consume.py");
    let out = Command::new("python3").arg(script).arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("consumers agree"), "{stdout}");
}
