"""The loader of the reference pipelines: each pipeline's modules come out whole, import in a folder
and a module namespace of their own, and leave nothing behind; the repository holds no copy."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents.testing import reference
from agents.testing.reference import PIPELINES, ROOT, ReferenceMissing, modules_in, sources


def test_each_pipeline_is_imported_from_a_folder_of_its_own_and_leaves_no_module_behind(references):
    folders = {ref.folder for ref in references.values()}
    assert len(folders) == len(PIPELINES)
    for name, ref in references.items():
        assert set(ref.modules) == set(PIPELINES[name][1])
        for module in ref.modules.values():
            assert module.__file__.startswith(str(ref.folder))
            assert sys.modules.get(module.__name__) is not module
    # Each pipeline's main module sees its own gateway, not another pipeline's.
    for name, gateway in (("reflection", "ReflectionGateway"), ("self_critique", "SelfCritiqueGateway"),
                          ("routing", "RouteGateway")):
        ref = references[name]
        assert getattr(ref.main, gateway) is getattr(ref.modules["gateway"], gateway)


def test_a_code_block_ends_where_the_prose_resumes():
    text = "\n".join([
        "gateway.py — the boundary", "", "PYTHON", "PROMPT = \"\"\"", "Rules:", "", "Return JSON.", "\"\"\"", "",
        "def check(x):", "    return x", "", "What matters most here (in plain words)", "", "  • it checks", "",
        "llm.py — the calls", "", "A sentence of prose first.", "", "PYTHON", "MODEL = 'm'", "",
        "Was hier am wichtigsten ist", ""])
    found = modules_in(text)
    assert found == {"gateway": 'PROMPT = """\nRules:\n\nReturn JSON.\n"""\n\ndef check(x):\n    return x\n',
                     "llm": "MODEL = 'm'\n"}


def test_a_missing_reference_folder_is_reported(monkeypatch, tmp_path):
    monkeypatch.setenv(reference.FOLDER_VARIABLE, str(tmp_path / "absent"))
    with pytest.raises(ReferenceMissing, match="absent"):
        sources("reflection")
    monkeypatch.setenv(reference.FOLDER_VARIABLE, str(tmp_path))
    with pytest.raises(ReferenceMissing, match="no document"):
        sources("routing")


def test_the_repository_holds_no_copy_of_the_reference_code(references):
    """No tracked file carries the reference code: a handful of its long lines would give it away."""
    lines = {line.strip() for ref in references.values() for module in ref.modules.values()
             for line in open(module.__file__, encoding="utf-8") if len(line.strip()) >= 60}
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for path in filter(None, tracked.decode().split("\0")):
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        shared = sum(line in text for line in lines)
        assert shared < 5, f"{path} holds {shared} lines of the reference pipelines' code"
