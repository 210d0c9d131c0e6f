//! The OpenTelemetry writer (`--to otel`): agent sessions as traces under the OpenTelemetry
//! GenAI semantic conventions, for tracing backends.
//!
//! Wire format: OTLP/JSON, one `ExportTraceServiceRequest` per line (the OTLP file exporter's
//! format), one per session: its trace holds an `invoke_agent` span for the session
//! (`gen_ai.conversation.id` the session id), a nested `invoke_agent` span per subagent under
//! the call that spawned it, a `chat` span per model response with its usage, and an
//! `execute_tool` span per tool call (`error.type` and an error status when it failed). Span
//! times are the log's. Trace and span ids are derived from the session and event ids, so a
//! second export of the same logs gives the same ids. Message content is recorded only with
//! `--otel-content`, as the conventions ask.
//!
//! With an endpoint ([`Options::otlp`]) the requests are sent there ([`otlp`]) in place of
//! being written; [`live`] sends the spans of sessions still being written.

pub mod live;
pub mod otlp;
mod spans;

use std::io::{self, BufWriter, Write};

use crate::model::Event;
use crate::write::{
    AtomicFile, EventSink, Held, Options, Target, WriteError, Writer, is_directory_target, unsupported,
};

use spans::Session;

/// The OpenTelemetry writer.
pub struct Otel;

impl Writer for Otel {
    fn name(&self) -> &'static str {
        "otel"
    }

    fn description(&self) -> &'static str {
        "OpenTelemetry traces (OTLP/JSON, GenAI conventions), one ExportTraceServiceRequest per session per line"
    }

    fn open<'w>(&self, target: Target<'w>, options: &Options) -> Result<Box<dyn EventSink + 'w>, WriteError> {
        if !options.partition_by.is_empty() {
            return Err(unsupported("--partition-by", self.name()));
        }
        let output = match (target, &options.otlp) {
            (_, Some(exporter)) => Output::Endpoint(std::sync::Arc::clone(exporter)),
            (Target::Stream(out), None) => Output::Stream(out),
            (Target::Path(path), None) if is_directory_target(&path) => {
                return Err(crate::write::not_a_directory(&path, self.name()));
            }
            (Target::Path(path), None) => Output::File(BufWriter::new(AtomicFile::create(&path)?)),
        };
        Ok(Box::new(Sink {
            output: Some(output),
            sessions: Held::default(),
            content: options.otel_content,
            spanned: std::collections::HashSet::new(),
        }))
    }
}

enum Output<'w> {
    Stream(Box<dyn Write + Send + 'w>),
    File(BufWriter<AtomicFile>),
    Endpoint(std::sync::Arc<otlp::Exporter>),
}

impl Output<'_> {
    fn write(&mut self, request: &serde_json::Value) -> io::Result<()> {
        let out: &mut dyn Write = match self {
            Output::Stream(out) => out,
            Output::File(out) => out,
            Output::Endpoint(exporter) => return exporter.send(request),
        };
        serde_json::to_writer(&mut *out, request)?;
        out.write_all(b"\n")
    }
}

struct Sink<'w> {
    output: Option<Output<'w>>,
    sessions: Held<Session>,
    content: bool,
    /// The session and subagent spans written so far: a session whose files are read in
    /// several groups gets its span once, from the first.
    spanned: std::collections::HashSet<[u8; 8]>,
}

impl EventSink for Sink<'_> {
    fn event(&mut self, e: &Event) -> io::Result<()> {
        let content = self.content;
        self.sessions.get(e.agent, &e.session_id, || Session::new(e.agent, &e.session_id, content)).add(e);
        Ok(())
    }

    fn end_group(&mut self) -> io::Result<()> {
        let out = self.output.as_mut().expect("not finished");
        for session in self.sessions.take() {
            // A response's and a call's span is written once anyway; the others are kept to the
            // first.
            let spanned = &mut self.spanned;
            if let Some(request) = session.request_of(&mut |id, done| done || spanned.insert(id)) {
                out.write(&request)?;
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.end_group()?;
        match self.output.take().expect("finish is called once") {
            Output::Stream(mut out) => out.flush(),
            Output::File(file) => file.into_inner().map_err(io::IntoInnerError::into_error)?.commit(),
            // The caller closes the exporter, and reports what it sent.
            Output::Endpoint(exporter) => exporter.flush(),
        }
    }
}
