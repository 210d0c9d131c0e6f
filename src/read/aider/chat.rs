//! The chat history: runs, and in each the prompts, answers and notices, told apart line by line
//! (see the module docs of [`super`]).

use std::io;

use serde_json::{Map, Value, json};

use super::status::{Notice, details};
use super::{RUN_HEADER, command, parse_local, session_id};
use crate::model::{Context, Event, Json, Message, Meta, MetaType, Part, Payload, Role, ToolCall, ToolOutput};
use crate::read::{Emitter, Line, LineMapper, LineParser, Problem};

/// One non-blank line of the chat history, owned.
#[derive(Debug)]
pub(super) struct Text {
    number: u64,
    offset: u64,
    text: String,
}

/// Takes each line as it is: every line of Markdown is text of some block.
#[derive(Clone)]
pub(super) struct Lines;

impl LineParser for Lines {
    type Parsed = Text;

    fn parse(&self, line: Line<'_>) -> Result<Text, Problem> {
        Ok(Text { number: line.number, offset: line.offset, text: line.text.to_owned() })
    }
}

/// The lines of one block: a prompt, an answer or a notice.
enum Block {
    None,
    Prompt(Vec<Text>),
    Answer(Vec<Text>),
    Notice(Vec<Text>),
}

impl Block {
    fn last_number(&self) -> Option<u64> {
        match self {
            Block::None => None,
            Block::Prompt(lines) | Block::Answer(lines) | Block::Notice(lines) => lines.last().map(|l| l.number),
        }
    }

    fn push(&mut self, line: Text) {
        if let Block::Prompt(lines) | Block::Answer(lines) | Block::Notice(lines) = self {
            lines.push(line);
        }
    }
}

/// One run of Aider: a session.
struct Run {
    session: String,
    context: Context,
    /// Whether the run loaded the chat history before it (`--restore-chat-history`).
    restored: bool,
    /// The run's events, emitted when it ends, once all it says about itself is known.
    events: Vec<(Event, u32)>,
}

/// Maps the lines of a chat history to events, one run at a time.
#[derive(Default)]
pub(super) struct Mapper {
    run: Option<Run>,
    /// The session of the run before this one.
    previous: Option<String>,
    block: Option<Block>,
    /// Whether the file keeps the two spaces Aider ends prompt and notice lines with.
    keeps_breaks: bool,
}

impl Mapper {
    /// Takes one line into the current block, or ends it and starts another.
    fn take(&mut self, line: Text, out: &mut Emitter<'_>) -> io::Result<()> {
        let text = line.text.as_str();
        if let Some(time) = text.strip_prefix(RUN_HEADER) {
            self.close_block();
            self.end_run(out)?;
            self.start_run(&line, time.trim());
            return Ok(());
        }
        let block = self.block.get_or_insert(Block::None);
        let adjacent = block.last_number().is_some_and(|n| line.number == n + 1);
        let is_notice = text.starts_with("> ") || text == ">";
        let is_prompt = text.starts_with("#### ") || text == "####";
        let marked = text.ends_with("  ");
        if (is_notice || is_prompt) && marked {
            self.keeps_breaks = true;
        }
        // In a file that keeps Aider's line breaks, a `#### ` line without one is a heading of
        // an answer (every prompt line has one), and so is a `> ` line inside an answer a quote
        // (the first line of a notice of several lines may lack one).
        let in_answer = matches!(block, Block::Answer(_));
        let unmarked = self.keeps_breaks && !marked;
        if is_notice && !(in_answer && unmarked) {
            self.close_block();
            self.block = Some(Block::Notice(vec![line]));
        } else if is_prompt && !unmarked {
            if matches!(block, Block::Prompt(_)) && adjacent {
                block.push(line);
            } else {
                self.close_block();
                self.block = Some(Block::Prompt(vec![line]));
            }
        } else if (matches!(block, Block::Notice(_)) && adjacent) || in_answer {
            // A notice of several lines goes on right below its first line.
            block.push(line);
        } else {
            self.close_block();
            self.block = Some(Block::Answer(vec![line]));
        }
        Ok(())
    }

    fn start_run(&mut self, line: &Text, time: &str) {
        let session = session_id(time, line.number);
        let mut event = Event::new(
            session.clone(),
            Payload::Meta(Meta {
                meta_type: MetaType::SessionStart,
                data: Some(Json::from_value(&json!({ "started_at": time, "text": line.text }))),
                usage: None,
            }),
        );
        event.timestamp = parse_local(time);
        place(&mut event, line, "run_header");
        self.run = Some(Run { session, context: Context::default(), restored: false, events: vec![(event, 0)] });
    }

    /// The current run; lines before the first header are a run of their own.
    fn run(&mut self, first: &Text) -> &mut Run {
        self.run.get_or_insert_with(|| Run {
            session: format!("before-first-run-L{}", first.number),
            context: Context::default(),
            restored: false,
            events: Vec::new(),
        })
    }

    /// Turns the current block into events of the current run.
    fn close_block(&mut self) {
        match self.block.take() {
            None | Some(Block::None) => {}
            Some(Block::Prompt(lines)) => self.prompt(&lines),
            Some(Block::Answer(lines)) => self.answer(&lines),
            Some(Block::Notice(lines)) => self.notice(&lines),
        }
    }

    fn prompt(&mut self, lines: &[Text]) {
        let text = lines.iter().map(|l| prompt_line(&l.text)).collect::<Vec<_>>().join("\n");
        let first = &lines[0];
        let run = self.run(first);
        let mut data = details(&text);
        let payload = if lines.len() == 1 && data.contains_key("question") {
            // A question answered by an earlier choice ("all", "skip") is written as a prompt.
            data.insert("text".into(), json!(text));
            meta(MetaType::System, data)
        } else if let Some((name, args)) = command(&text) {
            let mut data = Map::new();
            data.insert("text".into(), json!(text));
            data.insert("command".into(), json!(format!("/{name}")));
            data.insert("args".into(), json!(args));
            meta(MetaType::Command, data)
        } else {
            Payload::Message(Message::from_parts(Role::User, vec![Part::Text { text }]))
        };
        let mut event = Event::new(run.session.clone(), payload);
        event.context = run.context.clone();
        place(&mut event, first, "prompt");
        merge(&mut event, lines);
        run.events.push((event, 0));
    }

    fn answer(&mut self, lines: &[Text]) {
        let mut text = String::new();
        for (i, line) in lines.iter().enumerate() {
            if i > 0 {
                // The blank lines between two lines are where the line numbers skip.
                let gap = line.number - lines[i - 1].number;
                text.extend(std::iter::repeat_n('\n', gap as usize));
            }
            text.push_str(&line.text);
        }
        let first = &lines[0];
        let run = self.run(first);
        let mut event = Event::new(
            run.session.clone(),
            Payload::Message(Message::from_parts(Role::Assistant, vec![Part::Text { text }])),
        );
        event.context = run.context.clone();
        place(&mut event, first, "answer");
        merge(&mut event, lines);
        run.events.push((event, 0));
    }

    fn notice(&mut self, lines: &[Text]) {
        let text = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let t = l.text.strip_suffix("  ").unwrap_or(&l.text);
                if i == 0 { t.strip_prefix('>').map_or(t, |t| t.strip_prefix(' ').unwrap_or(t)) } else { t }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let first = &lines[0];
        let run = self.run(first);
        let session = run.session.clone();
        let call_id = format!("{session}:L{}", first.number);
        let mut events = Vec::new();
        match Notice::of(&text) {
            Notice::Tokens(tokens) => {
                let usage = tokens.usage(run.context.model.as_deref());
                let data = tokens.data(&text);
                events.push(Payload::Meta(Meta {
                    meta_type: MetaType::Usage,
                    data: Some(Json::from_value(&data)),
                    usage: Some(usage),
                }));
            }
            Notice::Edit(path) => {
                let input = Json::from_value(&json!({ "path": path }));
                events.push(tool_call(&call_id, "edit", input));
                events.push(Payload::ToolOutput(ToolOutput {
                    call_id: Some(call_id),
                    name: Some("edit".into()),
                    tool_kind: None,
                    text: text.clone(),
                    parts: Vec::new(),
                    is_error: Some(false),
                    exit_code: None,
                    failed: None,
                    duration_ms: None,
                    result: None,
                }));
            }
            // Aider shows the command's output but does not write it to the history.
            Notice::Shell(command) => {
                events.push(tool_call(&call_id, "shell", Json::from_value(&json!({ "command": command }))))
            }
            Notice::Version(version) => {
                run.context.agent_version = Some(version.to_owned());
                events.push(system(&text, Map::new()));
            }
            Notice::Model { model, edit_format } => {
                run.context.model = Some(model.to_owned());
                let mut data = Map::new();
                data.insert("text".into(), json!(text));
                data.insert("model".into(), json!(model));
                data.insert("edit_format".into(), json!(edit_format));
                events.push(meta(MetaType::TurnContext, data));
            }
            Notice::Restored => {
                run.restored = true;
                events.push(system(&text, Map::new()));
            }
            Notice::Other => events.push(system(&text, details(&text))),
        }
        for (slot, payload) in events.into_iter().enumerate() {
            let mut event = Event::new(session.clone(), payload);
            event.context = run.context.clone();
            place(&mut event, first, "notice");
            if slot == 0 {
                merge(&mut event, lines);
            }
            run.events.push((event, slot as u32));
        }
    }

    /// Emits the events of the current run: those before its version and model notices get them
    /// too, and the `session_start` of a run that loaded the history before it
    /// (`--restore-chat-history`) says so and names the run before it in `data.restored_from`.
    /// That is no fork: the run is a session of its own that sent the earlier messages along
    /// (all of the file's, summarised when long), as a resumed session of another agent would.
    fn end_run(&mut self, out: &mut Emitter<'_>) -> io::Result<()> {
        let Some(run) = self.run.take() else { return Ok(()) };
        let version = run.events.iter().find_map(|(e, _)| e.context.agent_version.clone());
        let model = run.events.iter().find_map(|(e, _)| e.context.model.clone());
        for (mut event, slot) in run.events {
            event.context.agent_version = event.context.agent_version.or_else(|| version.clone());
            event.context.model = event.context.model.or_else(|| model.clone());
            if let Payload::Meta(Meta { meta_type: MetaType::SessionStart, data: Some(data), .. }) = &mut event.payload
            {
                let mut fields: Map<String, Value> = serde_json::from_str(data.get()).unwrap_or_default();
                fields.insert("restored_history".into(), json!(run.restored));
                fields.insert("restored_from".into(), json!(self.previous.as_ref().filter(|_| run.restored)));
                *data = Json::from_value(&fields);
            }
            out.emit(event, slot)?;
        }
        self.previous = Some(run.session);
        Ok(())
    }
}

impl LineMapper<Text> for Mapper {
    fn map(&mut self, line: Text, out: &mut Emitter<'_>) -> io::Result<()> {
        self.take(line, out)
    }

    fn finish(&mut self, out: &mut Emitter<'_>) -> io::Result<()> {
        self.close_block();
        self.end_run(out)
    }
}

/// A prompt line's text: without the `#### ` and the two spaces Aider ends it with.
fn prompt_line(line: &str) -> &str {
    let line = line.strip_suffix("  ").unwrap_or(line);
    line.strip_prefix("#### ").or_else(|| line.strip_prefix("####")).unwrap_or(line)
}

fn meta(meta_type: MetaType, data: Map<String, Value>) -> Payload {
    Payload::Meta(Meta { meta_type, data: Some(Json::from_value(&data)), usage: None })
}

/// A notice as a `system` event: its text, and what [`details`] found in it.
fn system(text: &str, details: Map<String, Value>) -> Payload {
    let mut data = Map::new();
    data.insert("text".into(), json!(text));
    data.extend(details);
    meta(MetaType::System, data)
}

fn tool_call(call_id: &str, name: &str, input: Json) -> Payload {
    Payload::ToolCall(ToolCall {
        call_id: Some(call_id.to_owned()),
        name: name.into(),
        tool_kind: None,
        input: Some(input),
        input_text: None,
    })
}

/// Sets where an event comes from: the first line of its block.
fn place(event: &mut Event, line: &Text, record_type: &str) {
    event.source.line = line.number;
    event.source.byte_offset = line.offset;
    event.source.record_type = Some(record_type.into());
}

/// Lists the other lines of a block in its first event's `extra.merged_lines`.
fn merge(event: &mut Event, lines: &[Text]) {
    if lines.len() > 1 {
        let numbers: Vec<u64> = lines[1..].iter().map(|l| l.number).collect();
        event.extra = Some(Json::from_value(&json!({ "merged_lines": numbers })));
    }
}
