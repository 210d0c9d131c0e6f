"""Coding-agent session logs (Claude Code, Codex CLI, Gemini CLI, Copilot CLI) as one event model, from Python.

The functions here run agentlog's own Rust library in-process; every keyword means what the
``agentlog convert`` flag of the same name means (``from_`` is ``--from``)::

    import agentlog, polars as pl

    events = pl.from_arrow(agentlog.read("~/.claude/projects"))  # the Parquet events table
    sessions = agentlog.sessions(since="2026-11-01").read_pandas()
    for event in agentlog.events("rollout.jsonl"):               # unified JSON, as dicts
        ...
    report = agentlog.convert(["~/.codex/sessions"], "codex.parquet")

Problems with single lines (a truncated line, garbage) and inputs that could not be read at all
are :class:`DiagnosticWarning` warnings, and reading goes on, as the command does; turn them
into errors with ``warnings.simplefilter("error", agentlog.DiagnosticWarning)``. Arguments
that are wrong, and input paths that name nothing, raise :class:`UsageError` and
:class:`InputError` before anything is read.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Union

from . import _agentlog

__all__ = [
    "AgentlogError",
    "DiagnosticWarning",
    "InputError",
    "InputWarning",
    "OutputError",
    "SCHEMA_VERSION",
    "UsageError",
    "convert",
    "events",
    "groups",
    "read",
    "schema",
    "sessions",
]

__version__: str = _agentlog.__version__
#: The version of the unified event schema the events follow.
SCHEMA_VERSION: str = _agentlog.SCHEMA_VERSION

Paths = Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], None]
Many = Union[str, Sequence[str], None]


class AgentlogError(Exception):
    """A run that could not start or finish.

    Attributes: ``code`` (a stable code such as ``agentlog::input::not_found``), ``message``,
    ``help`` (what to do about it, or None), ``path`` (the input it is about, or None),
    ``line`` and ``column`` (1-based, where the problem is in ``path``, or None), and
    ``problems``, every problem of the run as dicts (the first is this one).
    """

    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = None,
        help: Optional[str] = None,
        path: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[int] = None,
        problems: Optional[List[Dict[str, Any]]] = None,
        report: Optional[Dict[str, Any]] = None,
    ) -> None:
        place = path if line is None else f"{path}:{line}" + ("" if column is None else f":{column}")
        super().__init__(f"{place}: {message}" if place and place not in message else message)
        self.message = message
        self.code = code
        self.help = help
        self.path = path
        self.line = line
        self.column = column
        self.problems = problems or []
        #: For :func:`convert`: the run's report, when the run went as far as writing one.
        self.report = report


class UsageError(AgentlogError, ValueError):
    """Arguments that are wrong: an unknown format, a bad date, options that do not fit."""


class InputError(AgentlogError):
    """An input that names nothing or could not be read at all."""


class OutputError(AgentlogError):
    """The output could not be written; nothing was left under its name."""


class DiagnosticWarning(UserWarning):
    """A problem with one input line, or with one input, while the others were read.

    Attributes: ``code`` (such as ``agentlog::input::invalid_json``), ``message``, ``path``,
    ``line`` and ``column`` (1-based; None for a problem with the whole input).
    """

    def __init__(self, code: str, message: str, path: str, line: Optional[int], column: Optional[int]) -> None:
        place = path if line is None else f"{path}:{line}" + ("" if column is None else f":{column}")
        super().__init__(f"{place}: {message} [{code}]")
        self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.column = column


class InputWarning(DiagnosticWarning):
    """An input that could not be read at all (unreadable, of no known format); the others were."""


def _warn(
    code: str, message: str, path: str, line: Optional[int], column: Optional[int], stacklevel: int = 2
) -> None:
    """Issues a problem met while reading as a warning; the warning names the input's file, line
    and column, and is attributed to the caller's line (``stacklevel``), as library warnings are:
    attributing it to the input would make Python read the whole input to show its line."""
    category = DiagnosticWarning if line is not None else InputWarning
    warnings.warn(category(code, message, path, line, column), stacklevel=stacklevel)


def _warn_in_loop(code: str, message: str, path: str, line: Optional[int], column: Optional[int]) -> None:
    """:func:`_warn` for problems met while the loop over :func:`events` asks for the next one."""
    _warn(code, message, path, line, column, stacklevel=4)


def _error(problems: List[Dict[str, Any]], report: Optional[Dict[str, Any]] = None, exit_code: int = 2) -> AgentlogError:
    """The exception for the first of ``problems``."""
    first = problems[0] if problems else {"message": f"agentlog failed with exit status {exit_code}"}
    code = first.get("code") or ""
    kinds = {"usage": UsageError, "input": InputError, "output": OutputError}
    by_exit = {2: UsageError, 3: InputError, 4: OutputError}
    kind: type = kinds.get(code.split("::")[1] if code.count("::") else "", by_exit.get(exit_code, AgentlogError))
    return kind(
        first.get("message", ""),
        code=first.get("code"),
        help=first.get("help"),
        path=first.get("path"),
        line=first.get("line"),
        column=first.get("column"),
        problems=problems,
        report=report,
    )


def _flag(name: str) -> str:
    return "--" + name.rstrip("_").replace("_", "-")


def _command(paths: Paths, options: Dict[str, Any]) -> List[str]:
    """``agentlog convert`` with ``options`` as flags, then the input paths after ``--``."""
    argv = ["agentlog", "convert"]
    for name, value in options.items():
        if value is None or value is False:
            continue
        if value is True:
            argv.append(_flag(name))
        elif isinstance(value, (list, tuple)):
            for item in value:
                argv += [_flag(name), os.fspath(item) if isinstance(item, os.PathLike) else str(item)]
        else:
            argv += [_flag(name), os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    argv.append("--")
    if paths is None:
        return argv
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return argv + [os.path.expanduser(os.fspath(p)) for p in paths]


#: The keywords of :func:`read`, :func:`sessions` and :func:`events`: ``agentlog convert``'s
#: reading flags.
_READING = (
    "from_", "jobs", "session", "since", "until", "tz", "agent", "project", "model", "shard", "redact",
    "pseudonymize", "redact_key", "max_line_bytes",
)
#: The keywords :func:`convert` takes besides them: its output flags.
_WRITING = (
    "to", "partition_by", "incremental", "force", "report", "redact_report", "reasoning", "fold_lines",
    "fold_bytes", "images", "otel_content",
)
#: Keywords that may be given many values, as a flag given many times.
_REPEATED = ("session", "agent", "project", "model")
#: Keywords whose many values are one comma-separated flag value.
_JOINED = ("pseudonymize", "partition_by")


def _options(function: str, allowed: Sequence[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """``options`` as flag values, refusing keywords ``function`` does not take."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(f"{function}() got unexpected keyword arguments: {', '.join(unknown)}")
    flags = {}
    for name, value in options.items():
        if name in _REPEATED and isinstance(value, str):
            value = [value]
        elif name in _JOINED and value is not None and not isinstance(value, str):
            value = ",".join(value)
        flags[name] = value
    return flags


def _table(table: str, argv: List[str]) -> Any:
    import pyarrow as pa

    try:
        stream = _agentlog.read_table(argv, table, _warn)
    except _agentlog.Failure as failure:
        raise _error(failure.args[0]) from None
    return pa.RecordBatchReader.from_stream(stream)


def read(paths: Paths = None, **options: Any) -> "pyarrow.RecordBatchReader":  # noqa: F821
    """The events of ``paths`` as a ``pyarrow.RecordBatchReader`` of the events table.

    The table has the schema of the Parquet events table ``agentlog convert --to parquet``
    writes (one row per event; ``agentlog schema`` and the README list the columns), in the
    same order, with the same ids. ``paths``: files, directories (read recursively), glob
    patterns or ``"-"``; ``None`` reads the agents' default places (``~/.claude``,
    ``~/.codex``, ``~/.gemini``, ``~/.copilot``, ``$CLAUDE_CONFIG_DIR``, ``$CODEX_HOME``).

    The batches come from Rust through the Arrow C stream interface without copying, read on
    ``jobs`` threads (one per core by default) without the interpreter's lock, at most a few
    batches ahead of the consumer: memory does not grow with the input. The reader can be
    consumed once; ``polars.from_arrow``, ``duckdb.from_arrow`` and ``.read_pandas()`` take it
    directly.

    Filters as in ``agentlog convert``: ``session`` (ids), ``since``/``until`` (a date, a time,
    or a span such as ``"7d"``), ``tz``, ``agent``, ``project`` and ``model`` (glob patterns).
    ``shard="K/N"`` reads shard K of N of the inputs' groups. ``redact``, ``pseudonymize``
    (``"user,email,host,path"`` or ``"all"``) and ``redact_key`` as ``--redact``.

    Problems with lines or inputs are :class:`DiagnosticWarning` warnings; a warning filter
    that makes them errors ends the stream, and pyarrow raises ``ArrowInvalid`` with the
    file, line and message.

    Raises :class:`UsageError` for wrong arguments and :class:`InputError` for a path that
    names nothing, before anything is read.
    """
    argv = _command(paths, _options("read", _READING, options))
    return _table("events", argv)


def sessions(paths: Paths = None, **options: Any) -> "pyarrow.RecordBatchReader":  # noqa: F821
    """The sessions of ``paths`` as a ``pyarrow.RecordBatchReader`` of the sessions table.

    One row per session (the Parquet sessions table: title, times, models, token totals,
    cost, counts), summed over all the inputs of the session. The arguments are those of
    :func:`read`; the rows come in one batch once every input is read.
    """
    argv = _command(paths, _options("sessions", _READING, options))
    return _table("sessions", argv)


def events(paths: Paths = None, **options: Any) -> Iterator[Dict[str, Any]]:
    """The events of ``paths`` as dicts, one per event, in the unified JSON shape.

    Each dict is one line of ``agentlog convert --to unified`` (``id``, ``session_id``,
    ``agent``, ``timestamp``, ``kind``, ``payload``, ``source``, …; the event JSON Schema
    describes them). The arguments are those of :func:`read`. Reading runs ahead of the loop
    on threads of its own; breaking out of the loop stops it.

    Problems with lines or inputs are :class:`DiagnosticWarning` warnings, issued after the
    events of their input; with a warning filter that makes them errors, the loop raises the
    warning itself (with ``path``, ``line``, ``column`` and ``code``).
    """
    argv = _command(paths, _options("events", _READING, options))
    try:
        lines = _agentlog.read_lines(argv, _warn_in_loop)
    except _agentlog.Failure as failure:
        raise _error(failure.args[0]) from None
    return _events(lines)


def _events(lines: Any) -> Iterator[Dict[str, Any]]:
    try:
        for run in lines:
            for line in run.splitlines():
                yield json.loads(line)
    finally:
        lines.close()


def schema(table: str = "events") -> "pyarrow.Schema":  # noqa: F821
    """The schema of the ``events`` or ``sessions`` table that :func:`read` and
    :func:`sessions` give, without reading anything (for Spark's ``mapInArrow``, say)."""
    import pyarrow as pa

    return pa.schema(_agentlog.table_schema(table))


def groups(paths: Paths = None, **options: Any) -> List[List[str]]:
    """The inputs of ``paths`` as units of work, in input order: lists of input names.

    Files in one list share reader state and must be read together (a Claude Code project
    directory, whose files copy each other's records when sessions are resumed); lists can be
    read apart, on other threads or machines, and :func:`read` of each gives, together, the
    same rows as :func:`read` of ``paths``. This is how ``--shard K/N`` splits a run, and what
    to hand out to Spark tasks (``examples/spark_convert.py``). Inputs that cannot be read
    are left out with an :class:`InputWarning`.
    """
    argv = _command(paths, _options("groups", ("from_", "shard", "max_line_bytes"), options))
    try:
        units, failed = _agentlog.groups(argv)
    except _agentlog.Failure as failure:
        raise _error(failure.args[0]) from None
    for problem in failed:
        _warn(problem["code"] or "", problem["message"], problem["path"] or "", None, None, stacklevel=3)
    return units


def convert(inputs: Paths, output: Union[str, "os.PathLike[str]"], **options: Any) -> Dict[str, Any]:
    """Converts ``inputs`` into ``output`` exactly as ``agentlog convert`` does.

    ``to`` is the format (``unified``, ``parquet``, ``arrow``, ``interchange``, ``atif``,
    ``otel``, ``markdown``, ``html``; by default told from ``output``'s extension). Every other
    keyword is the flag of the same name. ``inputs=None`` reads the agents' default places.

    Returns the run's report: ``files`` (per input: ``file``, ``status``, ``lines``,
    ``events``, ``diagnostics``, ``error``), ``totals`` (``files``, ``sessions``, ``events``,
    ``warnings``, ``failed``, ``bytes``) and ``exit_code``, the command's exit status (0, or 1
    when lines were reported). Reported lines are also :class:`DiagnosticWarning` warnings.

    Raises :class:`UsageError` (exit status 2) for arguments that do not fit, before
    anything is written; :class:`InputError` (3) when an input could not be read at all, after
    the others were converted and written, as the command does (the exception's ``report``
    holds the report); :class:`OutputError` (4) when the output could not be written.
    """
    flags = _options("convert", _READING + _WRITING, options)
    with tempfile.TemporaryDirectory(prefix="agentlog-") as scratch:
        report = flags.pop("report", None)
        report_path = os.fspath(report) if report is not None else os.path.join(scratch, "report.json")
        argv = _command(inputs, {"output": output, **flags, "report": report_path})
        exit_code, problems = _agentlog.run_keeping(argv)
        result: Optional[Dict[str, Any]] = None
        if os.path.exists(report_path):
            with open(report_path, encoding="utf-8") as f:
                result = json.load(f)
    if result is not None:
        result["exit_code"] = exit_code
        for entry in result.get("files", []):
            for d in entry.get("diagnostics") or []:
                _warn(d["code"], d["message"], d["file"], d.get("line"), d.get("column"), stacklevel=3)
    if exit_code > 1:
        if result is not None and not problems:
            problems = [
                {"code": "agentlog::input::failed", "message": f["error"], "path": f["file"], "help": None}
                for f in result.get("files", [])
                if f.get("error")
            ]
        raise _error(problems, result, exit_code)
    assert result is not None, "a run that ended well writes its report"
    return result


def _main() -> None:
    """The ``agentlog`` command, as installed by the package."""
    sys.exit(_agentlog.main(["agentlog", *sys.argv[1:]]))
