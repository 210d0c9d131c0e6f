//! Subagent replies that Claude Code recorded only in `progress` records (`agent_progress`).

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::value::RawValue;

use super::parse::Response;
use super::raw;
use crate::model::Event;
use crate::read::Object;

/// The usage of a subagent's model response that Claude Code recorded in a `progress`
/// record (`agent_progress`): the only record of it for a subagent without a transcript
/// file of its own. Counted like any response, once per (`message.id`, `requestId`) across
/// the files of a project, so a subagent file holding the same response does not count it
/// again.
pub(super) fn response(head: &Event, object: &Object<'_>, data: &RawValue) -> Option<Box<Response>> {
    static AGENT_PROGRESS: LazyLock<memchr::memmem::Finder<'static>> =
        LazyLock::new(|| memchr::memmem::Finder::new(b"\"agent_progress\""));
    AGENT_PROGRESS.find(data.get().as_bytes())?;
    let progress: raw::AgentProgress<'_> = serde_json::from_str(data.get()).ok()?;
    let outer = progress.message.filter(|_| progress.kind.as_deref() == Some("agent_progress"))?;
    let reply = outer.message.filter(|_| outer.kind.as_deref() == Some("assistant"))?;
    let (Some(id), Some(usage)) = (reply.id, reply.usage) else { return None };
    if reply.model.as_deref() == Some("<synthetic>") {
        return None;
    }
    let mut head = head.clone();
    head.is_sidechain = true;
    head.agent_id = progress.agent_id;
    head.parent_session_id = Some(head.session_id.clone());
    head.parent_call_id = object.raw("parentToolUseID").and_then(|r| serde_json::from_str(r.get()).ok());
    head.response_id = Some(id.clone().into_owned());
    head.context.model = reply.model.map(Cow::into_owned);
    Some(Box::new(Response {
        head,
        output: usage.output_tokens.get().unwrap_or(0),
        usage,
        all_copied: false,
        key: (id.into_owned(), outer.request_id.unwrap_or_default()),
    }))
}
