"""The type stubs describe the functions: a type checker accepts their use and catches misuse."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import agentlog

STUB = Path(agentlog.__file__).with_suffix(".pyi")


def test_the_stub_names_the_keywords_each_function_takes() -> None:
    import ast

    tree = ast.parse(STUB.read_text())
    typed_dicts = {
        node.name: [base.id for base in node.bases if isinstance(base, ast.Name)]
        + [item.target.id for item in node.body if isinstance(item, ast.AnnAssign)]
        for node in tree.body
        if isinstance(node, ast.ClassDef) and node.name.endswith("Options")
    }

    def keywords_of(options: str) -> list:
        names = []
        for name in typed_dicts[options]:
            names += keywords_of(name) if name in typed_dicts else [name] if name != "TypedDict" else []
        return names

    stubbed = {
        node.name: keywords_of(node.args.kwarg.annotation.slice.id)
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.args.kwarg is not None
    }
    taken = {
        "read": agentlog._READING,
        "sessions": agentlog._READING,
        "events": agentlog._READING,
        "convert": agentlog._READING + agentlog._WRITING,
        "groups": ("from_", "shard", "max_line_bytes"),
    }
    for name, keywords in taken.items():
        assert sorted(stubbed[name]) == sorted(keywords), name
    functions = {n for n in agentlog.__all__ if inspect.isfunction(getattr(agentlog, n))}
    assert functions == set(taken) | {"schema"}


def test_a_type_checker_catches_a_wrong_keyword_and_format(tmp_path: Path) -> None:
    mypy = pytest.importorskip("mypy.api")
    good = tmp_path / "good.py"
    good.write_text(
        "import agentlog\n"
        "table = agentlog.read('x', since='7d', agent=['codex']).read_all()\n"
        "report: dict = agentlog.convert(['a'], 'b.parquet', to='parquet', partition_by=['agent', 'date'])\n"
    )
    bad = tmp_path / "bad.py"
    bad.write_text("import agentlog\nagentlog.read('x', nope=3)\nagentlog.convert('a', 'b', to='pdf')\n")
    out, _, status = mypy.run([str(good), "--no-incremental"])
    assert status == 0, out
    out, _, status = mypy.run([str(bad), "--no-incremental"])
    assert status == 1 and 'Unexpected keyword argument "nope"' in out and '"to"' in out, out


def test_every_function_has_a_docstring() -> None:
    for name in agentlog.__all__:
        item = getattr(agentlog, name)
        if inspect.isfunction(item) or inspect.isclass(item):
            assert item.__doc__ and item.__doc__.strip(), name
    assert sys.modules["agentlog._agentlog"].read_table.__doc__
