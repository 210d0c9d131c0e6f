"""Type stubs of the agentlog package: the keyword arguments each function takes."""

import os
import warnings
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, TypedDict, Union

from typing_extensions import Unpack

import pyarrow

_Path = Union[str, os.PathLike[str]]
Paths = Union[_Path, Sequence[_Path], None]
Many = Union[str, Sequence[str], None]
_From = Literal["auto", "claude", "codex", "gemini", "copilot", "unified", "interchange"]
_To = Literal["unified", "jsonl", "parquet", "arrow", "interchange", "atif", "otel", "markdown", "html"]

__version__: str
SCHEMA_VERSION: str

class AgentlogError(Exception):
    message: str
    code: Optional[str]
    help: Optional[str]
    path: Optional[str]
    line: Optional[int]
    column: Optional[int]
    problems: List[Dict[str, Any]]
    report: Optional[Dict[str, Any]]
    def __init__(
        self,
        message: str,
        *,
        code: Optional[str] = ...,
        help: Optional[str] = ...,
        path: Optional[str] = ...,
        line: Optional[int] = ...,
        column: Optional[int] = ...,
        problems: Optional[List[Dict[str, Any]]] = ...,
        report: Optional[Dict[str, Any]] = ...,
    ) -> None: ...

class UsageError(AgentlogError, ValueError): ...
class InputError(AgentlogError): ...
class OutputError(AgentlogError): ...

class DiagnosticWarning(UserWarning):
    code: str
    message: str
    path: str
    line: Optional[int]
    column: Optional[int]
    def __init__(self, code: str, message: str, path: str, line: Optional[int], column: Optional[int]) -> None: ...

class InputWarning(DiagnosticWarning): ...

class ReadOptions(TypedDict, total=False):
    """The keywords of read, sessions and events: agentlog convert's reading flags."""

    from_: _From
    jobs: Optional[int]
    session: Many
    since: Optional[str]
    until: Optional[str]
    tz: Optional[str]
    agent: Many
    project: Many
    model: Many
    shard: Optional[str]
    redact: bool
    pseudonymize: Many
    redact_key: Optional[_Path]
    max_line_bytes: Optional[int]

class ConvertOptions(ReadOptions, total=False):
    """The keywords of convert: the reading flags and the output flags."""

    to: Optional[_To]
    partition_by: Many
    incremental: bool
    force: bool
    report: Optional[_Path]
    redact_report: Optional[_Path]
    reasoning: Optional[Literal["folded", "full", "omit"]]
    fold_lines: Optional[int]
    fold_bytes: Optional[int]
    images: Optional[Literal["placeholder", "embed", "files"]]
    otel_content: bool

class GroupsOptions(TypedDict, total=False):
    """The keywords of groups."""

    from_: _From
    shard: Optional[str]
    max_line_bytes: Optional[int]

def read(paths: Paths = None, **options: Unpack[ReadOptions]) -> pyarrow.RecordBatchReader: ...
def sessions(paths: Paths = None, **options: Unpack[ReadOptions]) -> pyarrow.RecordBatchReader: ...
def events(paths: Paths = None, **options: Unpack[ReadOptions]) -> Iterator[Dict[str, Any]]: ...
def schema(table: Literal["events", "sessions"] = "events") -> pyarrow.Schema: ...
def groups(paths: Paths = None, **options: Unpack[GroupsOptions]) -> List[List[str]]: ...
def convert(inputs: Paths, output: _Path, **options: Unpack[ConvertOptions]) -> Dict[str, Any]: ...
