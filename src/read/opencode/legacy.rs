//! The JSON files OpenCode kept before its database (1.1 and earlier), one file per record, as
//! the real 1.1.65, 1.0.185 and 0.5.29 wrote them (`corpus/recorded/opencode/`):
//!
//! ```text
//! 1.x   storage/session/<project>/<session>.json
//!       storage/message/<session>/<message>.json
//!       storage/part/<message>/<part>.json
//! 0.x   project/<project>/storage/session/info/<session>.json
//!       project/<project>/storage/session/message/<session>/<message>.json
//!       project/<project>/storage/session/part/<session>/<message>/<part>.json
//! ```
//!
//! The session's info file is the input; its messages and parts are read from beside it, in
//! the order of their ids (which encode the time they were made). Each file counts as a line:
//! the session file is line 1 and the others follow in the order read. OpenCode 1.2 and later
//! do not import these files (only 1.2.x did, once, on its first start), so they are still on
//! the disks of users who moved on from 1.1.
//!
//! **Usage** differs from 1.18.33's database: `output` includes `reasoning`; in 0.x
//! `input` includes the cache reads too, and an assistant message covers a whole turn, its own
//! `tokens` the last step's only (its `step-finish` parts, where usage is counted, have each
//! step's).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::map::{At, Mapper};
use crate::model::Agent;
use crate::read::{Emitter, ReadReport};

/// Where the records of a session file's session lie.
pub(crate) struct Layout {
    messages: PathBuf,
    parts: Box<dyn Fn(&str) -> PathBuf>,
}

/// The layout a session info file at `path` belongs to, if it is one.
pub(crate) fn layout(path: &Path) -> Option<Layout> {
    let name = path.file_name()?.to_str()?;
    let session = name.strip_suffix(".json")?.to_owned();
    let dir = path.parent()?;
    let up = dir.parent()?;
    if up.file_name()? != "session" {
        return None;
    }
    let storage = up.parent()?;
    if dir.file_name()? == "info" {
        // 0.x: storage/session/{info,message,part}
        let parts = up.join("part").join(&session);
        return Some(Layout {
            messages: up.join("message").join(&session),
            parts: Box::new(move |message| parts.join(message)),
        });
    }
    if storage.file_name()? != "storage" {
        return None;
    }
    let parts = storage.join("part");
    Some(Layout { messages: storage.join("message").join(&session), parts: Box::new(move |m| parts.join(m)) })
}

/// The `.json` files directly in `dir`, in name order.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json") && p.is_file())
        .collect();
    files.sort();
    files
}

/// Reads the session whose info file `name` holds `text`, with its messages and parts.
///
/// # Errors
/// When `out` fails.
pub(crate) fn read(
    name: &str,
    text: &[u8],
    layout: &Layout,
    out: &mut dyn FnMut(crate::model::Event) -> std::io::Result<()>,
) -> std::io::Result<ReadReport> {
    let mut emitter = Emitter::new(Agent::OpenCode, name, out);
    let mut report = ReadReport::default();
    let mut line = 0;
    let mut next = |report: &mut ReadReport| {
        line += 1;
        report.lines += 1;
        line
    };
    let at = next(&mut report);
    let Some(info) = crate::read::file_object(name, at, None, text, &mut report) else {
        return Ok(report);
    };
    report.lines_mapped += 1;
    let session = super::session_info(&info);
    let mut mapper = Mapper::new(&session);
    mapper.session(&session, &At { line: at, id: session.id.clone(), table: "session" }, &mut emitter)?;
    for file in files(&layout.messages) {
        let at = next(&mut report);
        let text = std::fs::read(&file).unwrap_or_default();
        let info = crate::read::file_object(name, at, Some(&file), &text, &mut report);
        report.lines_mapped += u64::from(info.is_some());
        let id = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let mut parts = Vec::new();
        for part in files(&(layout.parts)(&id)) {
            let at = next(&mut report);
            let text = std::fs::read(&part).unwrap_or_default();
            if let Some(object) = crate::read::file_object(name, at, Some(&part), &text, &mut report) {
                report.lines_mapped += 1;
                let part_id = object.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                parts.push((object, At { line: at, id: part_id, table: "part" }));
            }
        }
        mapper.message(&info.unwrap_or_default(), &At { line: at, id, table: "message" }, &parts, &mut emitter)?;
    }
    report.events = emitter.count();
    Ok(report)
}
