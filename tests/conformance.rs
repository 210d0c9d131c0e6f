//! Every reader over every corpus file: no panic, every line accounted for, the same events on
//! a second run, and ids that do not depend on where the file lives.

mod common;

use common::{all_session_files, non_empty_lines, read_file};

#[test]
fn every_non_empty_line_becomes_events_or_one_diagnostic() {
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (events, report) = read_file(reader, &path, &name);
        let lines = non_empty_lines(&path);
        assert_eq!(report.lines, lines, "{name}: lines read");
        assert_eq!(
            report.lines_mapped + report.diagnosed(),
            lines,
            "{name}: mapped {} + diagnosed {} != {lines} lines",
            report.lines_mapped,
            report.diagnostics.len()
        );
        assert_eq!(report.events, events.len() as u64, "{name}: events counted");
        if report.lines_mapped > 0 {
            assert!(!events.is_empty(), "{name}: mapped lines gave no events");
        }
    }
}

#[test]
fn a_second_read_gives_identical_events() {
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (first, _) = read_file(reader, &path, &name);
        let (second, _) = read_file(reader, &path, &name);
        assert!(first == second, "{name}: two reads differ");
    }
}

#[test]
fn event_ids_do_not_depend_on_the_folder() {
    for (path, reader) in all_session_files() {
        let here = path.display().to_string();
        let elsewhere = format!("/some/other/place/{}", path.file_name().unwrap().to_string_lossy());
        let (a, _) = read_file(reader, &path, &here);
        let (b, _) = read_file(reader, &path, &elsewhere);
        let ids = |events: &[agentlog::model::Event]| events.iter().map(|e| e.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&a), ids(&b), "{here}: ids changed with the folder");
    }
}

#[test]
fn event_ids_are_unique_within_a_file_and_seq_counts_up() {
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (events, _) = read_file(reader, &path, &name);
        let mut ids = std::collections::HashSet::new();
        for (i, e) in events.iter().enumerate() {
            assert!(ids.insert(e.id.clone()), "{name}: duplicate id {} at line {}", e.id, e.source.line);
            assert_eq!(e.seq, i as u64, "{name}: seq");
            assert_eq!(e.source.file, name);
        }
    }
}

#[test]
fn the_jsonl_writer_writes_what_serde_writes() {
    // The JSONL writer encodes events by hand for speed; its lines must be serde's, byte for byte.
    let mut checked = 0;
    for (path, reader) in all_session_files() {
        let name = path.display().to_string();
        let (events, _) = read_file(reader, &path, &name);
        for e in &events {
            let mut ours = Vec::new();
            agentlog::write::encode::event(e, &mut ours);
            let mut serde = serde_json::to_vec(e).unwrap();
            serde.push(b'\n');
            assert!(
                ours == serde,
                "{name} line {}:\nours:  {}serde: {}",
                e.source.line,
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&serde)
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} events checked");
}
