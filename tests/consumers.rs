//! DuckDB and pyarrow read the Parquet and Arrow outputs (`tests/independent/consume.py`):
//! column types as published, and usage per agent and day over the partitioned dataset equal
//! to the totals in the unified JSONL. CI installs both; elsewhere the test skips with a notice.

mod common;

use std::path::Path;
use std::process::Command;

use assert_cmd::cargo::cargo_bin_cmd;

#[test]
fn duckdb_and_pyarrow_read_the_outputs_and_agree_with_the_jsonl() {
    if !common::python_has("duckdb, pyarrow") {
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
    convert(&["--to", "parquet", "-o", "dataset", "--partition-by", "agent,date"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/independent/consume.py");
    let out = Command::new("python3").arg(script).arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("consumers agree"), "{stdout}");
}
