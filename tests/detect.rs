//! Telling each file's agent: every file of every corpus (the project's own, the shared
//! third-party corpus and the other agents' samples) is read by the reader of the agent whose
//! folder holds it, and no other reader's `sniff` claims it as well.

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use agentlog::read::{Head, READERS, Reader};

/// The corpora's folders: the own corpus, the shared corpus and each folder of the other
/// agents' samples (whose names must all be in `common::FOLDERS`).
fn corpora() -> Vec<PathBuf> {
    let mut dirs = vec![common::own_corpus()];
    dirs.extend(common::shared_corpus());
    if let Some(other) = common::other_agents() {
        let mut folders: Vec<PathBuf> = std::fs::read_dir(&other)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.is_dir())
            .collect();
        folders.sort();
        for folder in &folders {
            let name = folder.file_name().unwrap().to_str().unwrap();
            assert!(
                common::FOLDERS.iter().any(|(f, _)| *f == name),
                "../shared/other-agents/{name} holds samples of an agent no reader is named for in common::FOLDERS"
            );
        }
        dirs.extend(folders);
    }
    dirs
}

/// The readers whose `sniff` claims a file, from its first lines as `convert` looks at them.
fn claimants(path: &Path) -> Vec<&'static dyn Reader> {
    let file = std::fs::File::open(path).unwrap();
    let mut text = String::new();
    let mut records = Vec::new();
    let mut first_line = String::new();
    for line in BufReader::new(file).split(b'\n').take(8) {
        let line = String::from_utf8_lossy(&line.unwrap()).into_owned();
        text.push_str(&line);
        text.push('\n');
        let line = line.trim().trim_start_matches('\u{feff}');
        if line.is_empty() {
            continue;
        }
        if first_line.is_empty() {
            first_line = line.to_owned();
        }
        if let Ok(value @ serde_json::Value::Object(_)) = serde_json::from_str(line) {
            records.push(value);
        }
    }
    let name = path.display().to_string();
    let records = agentlog::read::Records::from(records);
    let head = Head { name: &name, records: &records, first_line: &first_line, text: &text };
    READERS.iter().copied().filter(|r| r.sniff(&head)).collect()
}

#[test]
fn every_file_of_every_corpus_is_told_as_the_agent_of_its_folder() {
    let mut per_reader: BTreeMap<&str, usize> = BTreeMap::new();
    for dir in corpora() {
        // `told_inputs` asserts that each input's reader is the one its folder names.
        for (path, reader, stored) in common::told_inputs(&dir) {
            *per_reader.entry(reader.name()).or_default() += 1;
            if stored || !path.is_file() || path.extension().is_some_and(|e| e == "zst") {
                continue;
            }
            let others: Vec<&str> =
                claimants(&path).into_iter().map(|r| r.name()).filter(|name| *name != reader.name()).collect();
            assert!(others.is_empty(), "{}: also claimed by {others:?}", path.display());
        }
    }
    // Every agent's reader has files to be told by, in the own corpus at least.
    for reader in READERS.iter().filter(|r| r.agent().is_some()) {
        assert!(per_reader.contains_key(reader.name()), "no file of {} in the corpora: {per_reader:?}", reader.name());
    }
}
