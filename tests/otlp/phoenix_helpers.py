"""Helpers for the Phoenix OTLP tests: run a throw-away Arize Phoenix server, send agentlog's
traces to it, read them back through Phoenix's own client, and ask agentlog what to expect.

Runs in the venv that `tests/otlp/install.sh` makes (arize-phoenix, opentelemetry-proto, pytest).
"""

from __future__ import annotations

import base64
import collections
import ctypes
import gzip
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
AGENTLOG = os.environ.get("AGENTLOG_BIN") or str(REPO / "target" / "debug" / "agentlog")
# The longest a server may live, whatever happens to the test process (seconds).
SERVER_LIFETIME = int(os.environ.get("AGENTLOG_PHOENIX_LIFETIME", "900"))
STARTUP_TIMEOUT = 180.0
PROTOBUF = "application/x-protobuf"
MAX_COUNT = 2**63 - 1  # the largest OTLP intValue


# --- the server -----------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port free on all interfaces (Phoenix binds its gRPC port on [::], whatever the host)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            s.bind(("::", 0))
            return s.getsockname()[1]
    except OSError:  # no IPv6
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("0.0.0.0", 0))
            return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when the process that started it dies."""
    try:
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except Exception:
        pass


@dataclass
class Phoenix:
    """A Phoenix server of our own; `start()` returns once it accepts OTLP."""

    workdir: Path
    port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)
    env: dict[str, str] = field(default_factory=dict)  # more PHOENIX_* settings
    process: subprocess.Popen | None = None
    startup_seconds: float | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def traces_endpoint(self) -> str:
        return f"{self.base_url}/v1/traces"

    @property
    def log(self) -> Path:
        return self.workdir / "phoenix.log"

    def start(self) -> "Phoenix":
        env = dict(os.environ)
        for key in list(env):
            if key.startswith(("PHOENIX_", "OTEL_")):
                del env[key]
        env.update(
            PHOENIX_HOST="127.0.0.1",
            PHOENIX_PORT=str(self.port),
            PHOENIX_GRPC_PORT=str(self.grpc_port),
            PHOENIX_WORKING_DIR=str(self.workdir),
            PHOENIX_TELEMETRY_ENABLED="false",
            PHOENIX_ALLOW_EXTERNAL_RESOURCES="false",
        )
        env.update(self.env)
        command = [sys.executable, "-m", "phoenix.server.main", "serve"]
        # coreutils timeout: the server ends after SERVER_LIFETIME seconds even if this process
        # is killed before its `finally` runs (SIGTERM, then SIGKILL 10 s later).
        if shutil.which("timeout"):
            command = ["timeout", "--kill-after=10", str(SERVER_LIFETIME), *command]
        # importing phoenix.client takes about 9 s (it loads most of Phoenix): meanwhile
        threading.Thread(target=importlib.import_module, args=("phoenix.client",), daemon=True).start()
        began = time.monotonic()
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                command,
                env=env,
                cwd=self.workdir,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        try:
            self._wait_ready(began)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        return self

    def _wait_ready(self, began: float) -> None:
        """Until an empty OTLP export is accepted (the HTTP app and the span queue are up)."""
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"phoenix exited with {self.process.returncode}:\n{self.log_tail()}")
            if time.monotonic() - began > STARTUP_TIMEOUT:
                raise TimeoutError(f"phoenix not ready after {STARTUP_TIMEOUT:.0f} s:\n{self.log_tail()}")
            try:
                r = httpx.post(self.traces_endpoint, content=b"", headers={"Content-Type": PROTOBUF}, timeout=2)
                if r.status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM the server's process group, SIGKILL it after 10 s."""
        p = self.process
        if p is None or p.poll() is not None:
            return
        try:
            os.killpg(p.pid, signal.SIGTERM)  # the group we made with start_new_session
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    # --- reading back -------------------------------------------------------------------

    def client(self):
        from phoenix.client import Client

        return Client(base_url=self.base_url)

    def spans(self, project: str, **filters) -> list[dict]:
        """The spans of a project, all of them or those matching `get_spans` filters (trace_ids=
        ...); empty when the project does not exist (yet)."""
        try:
            return self.client().spans.get_spans(project_identifier=project, limit=1_000_000, timeout=120,
                                                 **filters)
        except httpx.HTTPStatusError as e:
            if e.response.status_code == 404:
                return []
            raise

    def wait_for_spans(self, project: str, count: int, settle: float = 1.0, timeout: float = 60.0) -> list[dict]:
        """The project's spans once at least `count` are there and the number has stopped
        changing for `settle` seconds (ingestion is asynchronous: the POST returns first)."""
        deadline = time.monotonic() + timeout
        last, since = -1, time.monotonic()
        while True:
            spans = self.spans(project)
            now = time.monotonic()
            if len(spans) != last:
                last, since = len(spans), now
            if len(spans) >= count and now - since >= settle:
                return spans
            if now > deadline:
                return spans
            time.sleep(0.2)

    def rest(self, path: str, **params) -> dict:
        r = httpx.get(f"{self.base_url}{path}", params=params, timeout=60)
        r.raise_for_status()
        return r.json()


# --- agentlog -------------------------------------------------------------------------------


def agentlog(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Runs agentlog; exit status 1 (converted with warnings) counts as success."""
    # without the OTEL_EXPORTER_OTLP_* variables agentlog's sender would also read
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    p = subprocess.run([AGENTLOG, *args], capture_output=True, text=True, env=env)
    if check and p.returncode not in (0, 1):
        raise RuntimeError(f"agentlog {' '.join(args)} exited {p.returncode}:\n{p.stderr[-4000:]}")
    return p


def otel_requests(inputs: list[str], content: bool = False) -> list[dict]:
    """agentlog's OTLP/JSON export of the inputs: one ExportTraceServiceRequest per line."""
    args = ["convert", *inputs, "--to", "otel", "-q"]
    if content:
        args.append("--otel-content")
    return [json.loads(line) for line in agentlog(*args).stdout.splitlines() if line.strip()]


def unified_events(inputs: list[str]) -> list[dict]:
    return [json.loads(line) for line in agentlog("convert", *inputs, "--to", "unified", "-q").stdout.splitlines()]


def usage_by_session(inputs: list[str]) -> dict[str, dict]:
    """`agentlog usage --by session --json`: its rows keyed by session id."""
    doc = json.loads(agentlog("usage", *inputs, "--by", "session", "--json", "-q", "--tz", "UTC").stdout)
    return {row["session"]: row for row in doc["rows"]}


# --- sending --------------------------------------------------------------------------------


def _hex_ids_to_base64(request: dict) -> dict:
    """OTLP/JSON writes trace and span ids as hex; protobuf's JSON mapping wants base64 for bytes."""
    request = json.loads(json.dumps(request))
    for rs in request.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
                for link in span.get("links", []):
                    for key in ("traceId", "spanId"):
                        if link.get(key):
                            link[key] = base64.b64encode(bytes.fromhex(link[key])).decode()
    return request


def to_protobuf(request: dict) -> bytes:
    """One OTLP/JSON ExportTraceServiceRequest as protobuf bytes."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return ParseDict(_hex_ids_to_base64(request), ExportTraceServiceRequest()).SerializeToString()


def post_requests(requests: list[dict], endpoint: str, project: str | None = None, gzipped: bool = False) -> None:
    """POSTs OTLP/JSON requests to an OTLP/HTTP endpoint as protobuf, one POST each."""
    headers = {"Content-Type": PROTOBUF}
    if project:
        headers["x-project-name"] = project
    if gzipped:
        headers["Content-Encoding"] = "gzip"
    with httpx.Client(timeout=60) as http:
        for request in requests:
            body = to_protobuf(request)
            r = http.post(endpoint, content=gzip.compress(body) if gzipped else body, headers=headers)
            if r.status_code != 200:
                raise AssertionError(f"POST {endpoint}: {r.status_code} {r.text[:500]}")


def send(inputs: list[str], endpoint: str, project: str | None = None) -> str:
    """Sends agentlog's traces of `inputs` to the OTLP/HTTP `endpoint` (`.../v1/traces`), into
    Phoenix project `project` (the `x-project-name` header), with `--otlp-endpoint`. Returns how
    it sent them."""
    p = send_with_agentlog(inputs, endpoint, project)
    if p.returncode not in (0, 1):
        raise AssertionError(f"agentlog --otlp-endpoint exited {p.returncode}:\n{p.stderr[-4000:]}")
    return "agentlog --otlp-endpoint"


def send_with_agentlog(inputs: list[str], endpoint: str, project: str | None = None,
                       *options: str) -> subprocess.CompletedProcess:
    """`agentlog convert INPUT... --to otel --otlp-endpoint URL [OPTIONS]`, whatever its exit status."""
    args = ["convert", *inputs, "--to", "otel", "-q", "--otlp-endpoint", endpoint, *options]
    if project:
        args += ["--otlp-header", f"x-project-name={project}"]
    return agentlog(*args, check=False)


def copy_with_new_session(source: Path, directory: Path) -> tuple[Path, str]:
    """A copy of a single-session Claude Code file under a new session id, so that its traces get
    new trace and span ids (agentlog derives them from the session and event ids): Phoenix keeps
    the first version of a span, so a test that must see spans arrive needs ids never sent."""
    text = source.read_text()
    old = {json.loads(line).get("sessionId") for line in text.splitlines() if line.strip()} - {None}
    assert len(old) == 1, f"{source} holds sessions {old}"
    new = str(uuid.uuid4())
    target = directory / f"{new}.jsonl"
    target.write_text(text.replace(old.pop(), new))
    return target, new


# --- what to expect ---------------------------------------------------------------------------


@dataclass
class Expected:
    """What agentlog's own outputs say Phoenix should hold after an export of some inputs."""

    sessions: set[tuple[str, str]]  # (agent, session id) with at least one event not copied
    chat_spans: int  # usage meta events (copied ones are left out of traces)
    tool_spans: int  # tool_call events, the same
    chats_per_session: collections.Counter
    tools_per_session: collections.Counter
    # per session: (model, prompt, output, cache read, cache write, reasoning) of each usage
    # event, the prompt being input + cache read + cache write as gen_ai.usage.input_tokens is
    chat_values: dict[str, collections.Counter]
    tool_names: dict[str, collections.Counter]  # per session: the tool calls' names
    usage: dict[str, dict]  # agentlog usage --by session --json rows
    # session id -> the session `agentlog usage` counts it under: a subagent's (is_sidechain)
    # parent session, else its own
    usage_session: dict[str, str]
    span_ids: set[str]  # distinct span ids in agentlog's OTLP/JSON output
    requests: list[dict]


def expected(inputs: list[str]) -> Expected:
    events = unified_events(inputs)
    kept = [e for e in events if not e["copied"]]
    usage_events = [e for e in kept if e["kind"] == "meta" and e["payload"]["meta_type"] == "usage"
                    and e["payload"]["usage"] is not None]
    tool_calls = [e for e in kept if e["kind"] == "tool_call"]
    requests = otel_requests(inputs)
    span_ids = {s["spanId"] for s in iter_json_spans(requests)}
    chat_values = collections.defaultdict(collections.Counter)
    for e in usage_events:
        u = e["payload"]["usage"]
        # OTLP integers are signed 64-bit: agentlog holds counts (and their sums) at the largest
        n = {k: min(u.get(k) or 0, MAX_COUNT) for k in ("input_tokens", "cache_read_tokens",
                                                        "cache_write_tokens", "output_tokens", "reasoning_tokens")}
        model = u.get("model") or e["context"].get("model")
        prompt = min(n["input_tokens"] + n["cache_read_tokens"] + n["cache_write_tokens"], MAX_COUNT)
        chat_values[e["session_id"]][(model, prompt, n["output_tokens"], n["cache_read_tokens"],
                                      n["cache_write_tokens"], n["reasoning_tokens"])] += 1
    tool_names = collections.defaultdict(collections.Counter)
    for e in tool_calls:
        tool_names[e["session_id"]][e["payload"]["name"]] += 1
    return Expected(
        sessions={(e["agent"], e["session_id"]) for e in kept},
        chat_spans=len(usage_events),
        tool_spans=len(tool_calls),
        chats_per_session=collections.Counter(e["session_id"] for e in usage_events),
        tools_per_session=collections.Counter(e["session_id"] for e in tool_calls),
        chat_values=dict(chat_values),
        tool_names=dict(tool_names),
        usage=usage_by_session(inputs),
        usage_session={e["session_id"]: (e["parent_session_id"] if e["is_sidechain"] and e["parent_session_id"]
                                         else e["session_id"]) for e in kept},
        span_ids=span_ids,
        requests=requests,
    )


def iter_json_spans(requests: list[dict]):
    for request in requests:
        for rs in request.get("resourceSpans", []):
            for ss in rs.get("scopeSpans", []):
                yield from ss.get("spans", [])


def operation(span: dict) -> str | None:
    return span["attributes"].get("gen_ai.operation.name")


def by_trace(spans: list[dict]) -> dict[str, list[dict]]:
    traces = collections.defaultdict(list)
    for s in spans:
        traces[s["context"]["trace_id"]].append(s)
    return traces


def new_workdir(prefix: str = "agentlog-phoenix-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix))
