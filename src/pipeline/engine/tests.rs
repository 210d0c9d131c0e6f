//! Tests of the ordered parallel run: outcomes, held-back messages, claims and budgets.

use super::*;
use std::sync::atomic::{AtomicU64, Ordering};

use super::claims::{GROUPS_AHEAD, GROUPS_AHEAD_BUILT, GROUPS_AHEAD_HELD};
use super::spill::SPILL_BYTES;
use crate::model::{Meta, MetaType, Payload};
use crate::pipeline::{InputSpec, Item};
use crate::read::Reader;
use crate::write::{Piece, Storage};

/// Writes down what it is given, in order.
#[derive(Default)]
struct Record(Vec<String>);

impl Destination for Record {
    fn begin(&mut self, name: &str) -> io::Result<()> {
        self.0.push(format!("begin {name}"));
        Ok(())
    }

    fn event(&mut self, event: Event) -> io::Result<()> {
        self.0.push(format!("event {}", event.session_id));
        Ok(())
    }

    fn encoded(&mut self, encoded: Encoded) -> io::Result<()> {
        let sessions: Vec<&str> = encoded.sessions.iter().map(|(_, id)| id.as_str()).collect();
        self.0.push(format!("encoded {} {sessions:?}", String::from_utf8(encoded.bytes).unwrap()));
        Ok(())
    }

    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        self.0.push(format!("end {}", outcome.name));
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        self.0.push("end group".into());
        Ok(())
    }
}

fn encoded(text: &str, session: &str) -> Message {
    Message::Encoded(Encoded { bytes: text.as_bytes().to_vec(), sessions: vec![(Agent::Codex, session.into())] })
}

/// Takes every message now in the channel; whether one of them was held back.
fn drain(from: &mpsc::Receiver<Message>, into: &mut Record) -> bool {
    let mut spilled = false;
    while let Ok(message) = from.try_recv() {
        spilled |= matches!(message, Message::Spilled(_));
        deliver(message, into).unwrap();
    }
    spilled
}

fn forward(to: SyncSender<Message>, encoder: Option<Encoder>, spilled: u64) -> Forward {
    let empty = Encoded { bytes: Vec::new(), sessions: Vec::new() };
    let budget = Arc::new(Budget { spilled: AtomicU64::new(spilled), ..Budget::default() });
    let last = Arc::default();
    let settings = Settings::default();
    Forward {
        to,
        group: 0,
        chunk: Vec::new(),
        encoder,
        encoded: empty,
        spill: None,
        shelf: None,
        last,
        backlog: None,
        budget,
        settings,
    }
}

/// A forward of group `group` for a writer with builders, while the writer is at group 0.
fn building(to: SyncSender<Message>, group: usize, spilled: u64) -> Forward {
    Forward { group, backlog: Some(Default::default()), ..forward(to, None, spilled) }
}

const ENCODER: Encoder = |event, out| out.extend_from_slice(event.session_id.as_bytes());

/// A reader with a bug: it panics on every input.
struct Panics;

impl Reader for Panics {
    fn name(&self) -> &'static str {
        "panics"
    }
    fn agent(&self) -> Option<Agent> {
        None
    }
    fn description(&self) -> &'static str {
        "a reader that panics"
    }
    fn sniff(&self, _: &read::Head<'_>) -> bool {
        false
    }
    fn read(&self, _: Input<'_>, _: &mut dyn FnMut(Event) -> io::Result<()>) -> io::Result<ReadReport> {
        panic!("a broken invariant")
    }
}

/// Records outcomes: the input's name and whether it converted.
#[derive(Default)]
struct Outcomes(Vec<(String, Result<u64, String>)>);

impl Destination for Outcomes {
    fn begin(&mut self, _: &str) -> io::Result<()> {
        Ok(())
    }
    fn event(&mut self, _: Event) -> io::Result<()> {
        Ok(())
    }
    fn end(&mut self, outcome: Outcome) -> io::Result<()> {
        let result = outcome.result.map(|r| r.events).map_err(|e| e.to_string());
        self.0.push((outcome.name, result));
        Ok(())
    }
}

// Issue 19, item 5: one input that trips a bug aborted the whole batch; now it fails alone.
#[test]
fn a_bug_met_in_one_input_fails_that_input_only() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/codex/tool-outputs.jsonl");
    let item = |reader: &'static dyn Reader| Item {
        spec: InputSpec::File(file.into()),
        size: 0,
        reader,
        told: true,
        forced: false,
        unchanged: false,
        new_kind: None,
    };
    for readers in [1, 2] {
        let groups: Vec<Group> = [item(&Panics), item(read::reader("codex").unwrap()), item(&Panics)]
            .into_iter()
            .enumerate()
            .map(|(i, item)| Group { items: vec![item], key: i.to_string() })
            .collect();
        let mut outcomes = Outcomes::default();
        run(&groups, &mut outcomes, &Settings::new(readers, 1 << 20).unwrap(), &Prepare::Nothing).unwrap();
        let results: Vec<_> = outcomes.0.iter().map(|(_, r)| r.clone()).collect();
        assert_eq!(results.len(), 3, "{readers} readers");
        assert!(matches!(&results[0], Err(e) if e.contains("a broken invariant")), "{results:?}");
        assert!(matches!(results[1], Ok(n) if n > 0), "{results:?}");
        assert!(results[2].is_err(), "{results:?}");
    }
}

#[test]
fn each_group_ends_after_its_last_input_on_any_number_of_threads() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/codex/");
    let item = |name: &str| Item {
        spec: InputSpec::File(format!("{dir}{name}")),
        size: 0,
        reader: read::reader("codex").unwrap(),
        told: true,
        forced: false,
        unchanged: false,
        new_kind: None,
    };
    let groups = vec![
        Group { items: vec![item("tool-outputs.jsonl"), item("token-accounting.jsonl")], key: "a".into() },
        Group { items: vec![item("unknown-types.jsonl")], key: "b".into() },
    ];
    for readers in [1, 2] {
        let mut record = Record::default();
        run(&groups, &mut record, &Settings::new(readers, 1 << 20).unwrap(), &Prepare::Nothing).unwrap();
        let marks: Vec<&str> =
            record.0.iter().map(String::as_str).filter(|m| m.starts_with("end") || m.starts_with("begin")).collect();
        let name = |n: &str| format!("{dir}{n}");
        let expected = [
            format!("begin {}", name("tool-outputs.jsonl")),
            format!("end {}", name("tool-outputs.jsonl")),
            format!("begin {}", name("token-accounting.jsonl")),
            format!("end {}", name("token-accounting.jsonl")),
            "end group".into(),
            format!("begin {}", name("unknown-types.jsonl")),
            format!("end {}", name("unknown-types.jsonl")),
            "end group".into(),
        ];
        assert_eq!(marks, expected, "{readers} readers");
    }
}

#[test]
fn messages_held_back_while_the_writer_is_busy_arrive_in_order() {
    let (to, from) = mpsc::sync_channel(1);
    let mut forward = forward(to, Some(ENCODER), 0);
    let event = Event::new("s2".into(), Payload::Meta(Meta { meta_type: MetaType::Title, data: None, usage: None }));
    // The channel takes one message; the writer is busy, so the rest are held back.
    forward.send(Message::Begin("a".into())).unwrap();
    forward.send(encoded("one", "s1")).unwrap();
    forward.send(Message::Events(vec![event])).unwrap();
    forward.send(encoded("two", "s2")).unwrap();
    assert_eq!(forward.budget.spilled.load(Ordering::Relaxed), 6);
    let mut record = Record::default();
    assert!(!drain(&from, &mut record));
    // Now the held messages go first, and what follows is held again behind them.
    forward.send(encoded("three", "s3")).unwrap();
    assert!(drain(&from, &mut record));
    forward.send(Message::End(failed("a", InputError::unknown_format("a")))).unwrap();
    assert!(drain(&from, &mut record));
    // At the end of the group, what is still held is handed over.
    forward.finish().unwrap();
    assert!(drain(&from, &mut record));
    let expected =
        ["begin a", r#"encoded one ["s1"]"#, "event s2", r#"encoded two ["s2"]"#, r#"encoded three ["s3"]"#, "end a"];
    assert_eq!(record.0, expected);
    assert_eq!(forward.budget.spilled.load(Ordering::Relaxed), 0, "every byte held back was handed over");
}

#[test]
fn a_group_read_ahead_holds_back_once_the_budget_waits_in_memory() {
    let (to, from) = mpsc::sync_channel(4);
    let mut forward = forward(to, Some(ENCODER), 0);
    forward.group = 1;
    forward.budget.waiting.store(AHEAD_BYTES, Ordering::Relaxed);
    // The channel has room, but groups ahead keep the budget waiting already.
    forward.send(encoded("one", "s1")).unwrap();
    assert!(forward.spill.is_some(), "held back in a file");
    assert_eq!(forward.budget.spilled.load(Ordering::Relaxed), 3);
    // The group being written is never held back for the budget.
    forward.budget.writing.store(1, Ordering::Relaxed);
    forward.finish().unwrap();
    forward.send(encoded("two", "s1")).unwrap();
    assert!(forward.spill.is_none());
    assert_eq!(forward.budget.waiting.load(Ordering::Relaxed), AHEAD_BYTES + 3);
    let mut record = Record::default();
    assert!(drain(&from, &mut record));
    assert_eq!(record.0, [r#"encoded one ["s1"]"#, r#"encoded two ["s1"]"#]);
}

#[test]
fn readers_go_far_ahead_only_while_they_can_hold_back_in_files() {
    let budget = Arc::new(Budget::default());
    let claims = Claims::new(10_000, 2, Arc::clone(&budget), Reach::WhileHeldBack, Settings::default());
    assert_eq!(claims.ahead(), 2 * GROUPS_AHEAD_HELD);
    budget.spilled.store(SPILL_BYTES, Ordering::Relaxed);
    assert_eq!(claims.ahead(), 2 * GROUPS_AHEAD, "the files hold their limit");
    budget.spilled.store(0, Ordering::Relaxed);
    budget.no_files.store(true, Ordering::Relaxed);
    assert_eq!(claims.ahead(), 2 * GROUPS_AHEAD, "no file could be made or written");
    assert_eq!(
        Claims::new(10_000, 2, Arc::clone(&budget), Reach::Near, Settings::default()).ahead(),
        2 * GROUPS_AHEAD,
        "nothing can be held back"
    );
    let far = Claims::new(10_000, 2, Arc::clone(&budget), Reach::Built, Settings::default());
    assert_eq!(far.ahead(), 2 * GROUPS_AHEAD_BUILT, "pieces wait in memory, bounded in bytes");
}

#[test]
fn a_group_ends_without_waiting_for_a_busy_writer() {
    let (to, from) = mpsc::sync_channel(1);
    let mut forward = forward(to, Some(ENCODER), 0);
    forward.send(Message::Begin("a".into())).unwrap();
    forward.send(encoded("one", "s1")).unwrap();
    forward.send(Message::End(failed("a", InputError::unknown_format("a")))).unwrap();
    // The channel is full: what is held back goes where the writer looks once it is closed,
    // without waiting for the writer (which is not draining here).
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        forward.finish().unwrap();
        let _ = done.send(forward);
    });
    let forward = finished.recv_timeout(std::time::Duration::from_secs(10)).expect("finish waited for the writer");
    let last = forward.last.lock().unwrap().take().expect("the held messages are left aside");
    let mut record = Record::default();
    assert!(!drain(&from, &mut record));
    deliver(last, &mut record).unwrap();
    assert_eq!(record.0, ["begin a", r#"encoded one ["s1"]"#, "end a"]);
}

#[test]
fn a_group_read_ahead_with_builders_keeps_its_messages_instead_of_waiting() {
    let (to, from) = mpsc::sync_channel(1);
    let mut forward = building(to, 3, 0);
    let (done, finished) = mpsc::channel();
    thread::spawn(move || {
        for name in ["a", "b", "c"] {
            forward.send(Message::Begin(name.to_owned())).unwrap();
        }
        forward.finish().unwrap();
        let _ = done.send(forward);
    });
    let forward = finished.recv_timeout(std::time::Duration::from_secs(10)).expect("a full channel made it wait");
    let mut record = Record::default();
    assert!(!drain(&from, &mut record));
    let last = forward.last.lock().unwrap().take().expect("the kept messages are left aside");
    deliver(last, &mut record).unwrap();
    assert_eq!(record.0, ["begin a", "begin b", "begin c"], "in order");
}

#[test]
fn groups_held_back_one_after_another_share_a_file_and_keep_their_own_ranges() {
    let budget = Arc::new(Budget::default());
    let mut shelf = None;
    let mut first = Spill::new(&budget, &mut shelf).unwrap();
    first.hold(encoded("one", "s1"));
    let mut second = Spill::new(&budget, &mut shelf).unwrap();
    second.hold(encoded("two", "s2"));
    second.hold(encoded("three", "s2"));
    assert!(Arc::ptr_eq(&first.file, &second.file));
    assert_eq!(second.start, 3);
    let mut record = Record::default();
    second.deliver(&mut record).unwrap();
    first.deliver(&mut record).unwrap();
    assert_eq!(record.0, [r#"encoded two ["s2"]"#, r#"encoded three ["s2"]"#, r#"encoded one ["s1"]"#]);
    assert_eq!(budget.spilled.load(Ordering::Relaxed), 0);
}

/// Sends `messages` through a channel of one to a writer on another thread that is busy at
/// first, checking that nothing is held back; what the writer got.
fn through_a_busy_channel(mut forward: Forward, messages: Vec<Message>, from: mpsc::Receiver<Message>) -> Vec<String> {
    let writer = thread::spawn(move || {
        let mut record = Record::default();
        // Busy at first: the reader finds the channel full.
        thread::sleep(std::time::Duration::from_millis(50));
        for message in from {
            assert!(!matches!(message, Message::Spilled(_)), "nothing may be held back");
            deliver(message, &mut record).unwrap();
        }
        record.0
    });
    for message in messages {
        forward.send(message).unwrap();
    }
    forward.finish().unwrap();
    drop(forward);
    writer.join().unwrap()
}

#[test]
fn without_an_encoder_the_reader_waits_for_the_writer() {
    let (to, from) = mpsc::sync_channel(1);
    let messages = vec![Message::Begin("a".into()), Message::Begin("b".into()), Message::Begin("c".into())];
    assert_eq!(through_a_busy_channel(forward(to, None, 0), messages, from), ["begin a", "begin b", "begin c"]);
}

#[test]
fn once_the_files_hold_their_limit_the_reader_waits_for_the_writer() {
    let (to, from) = mpsc::sync_channel(1);
    let messages = vec![Message::Begin("a".into()), encoded("one", "s1"), encoded("two", "s1")];
    let got = through_a_busy_channel(forward(to, Some(ENCODER), SPILL_BYTES), messages, from);
    assert_eq!(got, ["begin a", r#"encoded one ["s1"]"#, r#"encoded two ["s1"]"#]);
}

/// Stores a `String` as its bytes.
static TEXT: Storage = Storage { store: store_text, load: load_text };

fn store_text(content: &(dyn std::any::Any + Send), out: &mut dyn io::Write) -> io::Result<bool> {
    let Some(text) = content.downcast_ref::<String>() else { return Ok(false) };
    out.write_all(text.as_bytes())?;
    Ok(true)
}

fn load_text(bytes: &mut dyn io::Read) -> io::Result<Box<dyn std::any::Any + Send>> {
    let mut text = String::new();
    bytes.read_to_string(&mut text)?;
    Ok(Box::new(text))
}

fn built(piece: Piece) -> Message {
    Message::Built(Built { piece: Some(piece), sessions: Vec::new() })
}

#[test]
fn a_piece_read_ahead_waits_in_a_file_once_pieces_in_memory_hold_their_limit() {
    let (to, from) = mpsc::sync_channel(4);
    let mut forward = building(to, 1, 0);
    forward.budget.waiting.store(AHEAD_BYTES, Ordering::Relaxed);
    let (done, sent) = mpsc::channel();
    thread::spawn(move || {
        forward.send(built(Piece::storable(String::from("rows of group 1"), 1 << 20, &TEXT))).unwrap();
        forward.send(built(Piece::storable(String::from("and more"), 1 << 20, &TEXT))).unwrap();
        let _ = done.send(forward);
    });
    let forward = sent.recv_timeout(std::time::Duration::from_secs(10)).expect("stored instead of waiting");
    assert_eq!(forward.budget.spilled.load(Ordering::Relaxed), 23, "both in the file");
    assert_eq!(forward.budget.waiting.load(Ordering::Relaxed), AHEAD_BYTES, "nothing more waits in memory");
    let mut texts = Vec::new();
    while let Ok(Message::Built(Built { piece: Some(piece), .. })) = from.try_recv() {
        assert_eq!(piece.bytes, 0);
        texts.push(piece.open::<String>().unwrap());
    }
    assert_eq!(texts, ["rows of group 1", "and more"], "read back in order");
    assert_eq!(forward.budget.spilled.load(Ordering::Relaxed), 0, "released once read back");
}

#[test]
fn a_piece_that_may_not_wait_in_a_file_or_finds_the_files_full_waits_for_room() {
    for (spilled, piece) in [
        (SPILL_BYTES, Piece::storable(String::from("files full"), 10, &TEXT)),
        (0, Piece::new(String::from("in memory only"), 10)),
    ] {
        let (to, from) = mpsc::sync_channel(4);
        let mut forward = building(to, 1, spilled);
        forward.budget.waiting.store(AHEAD_BYTES, Ordering::Relaxed);
        let budget = Arc::clone(&forward.budget);
        let (done, sent) = mpsc::channel();
        thread::spawn(move || {
            forward.send(built(piece)).unwrap();
            let _ = done.send(forward);
        });
        assert!(sent.recv_timeout(std::time::Duration::from_millis(100)).is_err(), "it waits for room");
        // The writer reaches the group: it may send.
        budget.writing.store(1, Ordering::Relaxed);
        let forward = sent.recv_timeout(std::time::Duration::from_secs(10)).expect("sent once the writer is there");
        assert_eq!(forward.budget.spilled.load(Ordering::Relaxed), spilled, "nothing more in files");
        let Ok(Message::Built(Built { piece: Some(piece), .. })) = from.try_recv() else { panic!("a piece") };
        assert_eq!(piece.bytes, 10, "in memory");
    }
}
