"""The reference pipelines, read at run time (tests, benchmarks) from the documents that publish them.

Three documents in the reference folder hold the reference code of the product's pipelines as text
pages: each module is a block that follows a heading ``<module>.py — ...`` and a line ``PYTHON``, and
ends where the prose resumes. Nothing of that code is kept in this repository: :func:`load` extracts
each pipeline's modules into a folder of its own and imports them there, in isolation (they import
each other by bare names, ``import gateway``), and leaves ``sys.modules`` and ``sys.path`` as it
found them.
"""

from __future__ import annotations

import ast
import importlib
import json
import os
import re
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[2]
# Where the reference documents are, relative to the repository's root, unless the environment says.
RELATIVE_FOLDER = Path("..", "shared", "seeds")
FOLDER_VARIABLE = "GATED_REVIEW_REFERENCE_DIR"

HEADING = re.compile(r"^([a-z_]+)\.py\s+\S")
CODE_MARK = "PYTHON"
# The environment variable whose value the llm module keeps, at import, as its request timeout.
TIMEOUT_VARIABLE = "OPENAI_TIMEOUT_SECONDS"

# Each pipeline: the function its main.py runs, and the modules it consists of.
PIPELINES = {
    "reflection": ("run_reflection_agent", ("context", "gateway", "llm", "main")),
    "self_critique": ("run_self_critique_agent", ("context", "gateway", "llm", "audit", "main")),
    "routing": ("run_routing", ("tools", "gateway", "llm", "main")),
}


class ReferenceMissing(Exception):
    """The reference documents are not where they should be, or do not hold what they should."""


@dataclass(frozen=True)
class Reference:
    """One reference pipeline: its modules by bare name, and the folder they were extracted to."""

    name: str
    modules: dict[str, ModuleType]
    folder: Path

    @property
    def main(self) -> ModuleType:
        return self.modules["main"]

    @property
    def run(self):
        return getattr(self.main, PIPELINES[self.name][0])

    @cached_property
    def timeout_setting(self) -> str:
        """The name of the llm module's constant that holds its request timeout: the one assigned
        from ``OPENAI_TIMEOUT_SECONDS`` when the module is imported."""
        llm = self.modules["llm"]
        source = Path(llm.__file__).read_text(encoding="utf-8")
        match = re.search(rf"^([A-Za-z_]\w*)\s*=.*[\"']{TIMEOUT_VARIABLE}[\"']", source, re.MULTILINE)
        if not match or not isinstance(getattr(llm, match[1], None), (int, float)):
            raise ReferenceMissing(f"the reference {self.name} llm module keeps no timeout from {TIMEOUT_VARIABLE}")
        return match[1]


def repository_root() -> Path:
    """The repository's root: this checkout's, or for a linked worktree the main checkout's (whose
    ``.git`` folder the worktree's ``.git`` file points into)."""
    marker = ROOT / ".git"
    if marker.is_file():
        gitdir = Path(marker.read_text().partition("gitdir:")[2].strip())
        common = gitdir / "commondir"
        if common.is_file():
            return (gitdir / common.read_text().strip()).resolve().parent
    return ROOT


def folder() -> Path:
    configured = os.environ.get(FOLDER_VARIABLE, "").strip()
    if configured:
        return Path(configured)
    for root in dict.fromkeys((ROOT, repository_root())):
        if (candidate := (root / RELATIVE_FOLDER).resolve()).is_dir():
            return candidate
    return (ROOT / RELATIVE_FOLDER).resolve()


def _code_end(lines: list[str]) -> int:
    """How many of ``lines`` (a block after a ``PYTHON`` line, up to the next one) are code: the
    longest run, ending before a top-level line that follows a blank line, that parses. The prose
    after the code never parses, so no longer run does."""
    cuts = [i for i in range(1, len(lines))
            if lines[i].strip() and not lines[i][0].isspace() and not lines[i - 1].strip()]
    for cut in reversed([*cuts, len(lines)]):
        if _parses(lines[:cut]):
            return cut
    raise ReferenceMissing("a PYTHON block holds no Python that parses")


def _parses(lines: list[str]) -> bool:
    try:
        ast.parse("\n".join(lines))
    except SyntaxError:
        return False
    return True


def modules_in(text: str) -> dict[str, str]:
    """The Python modules of one reference document: ``{"gateway": "<source>", ...}``."""
    lines = text.splitlines()
    found: dict[str, str] = {}
    for number, line in enumerate(lines):
        if line.strip() != CODE_MARK:
            continue
        # The heading is a few lines up (a sentence of prose may stand between).
        match = next((m for i in range(number - 1, max(number - 6, -1), -1)
                      if (m := HEADING.match(lines[i].strip()))), None)
        if not match:
            continue
        following = next((i for i in range(number + 1, len(lines)) if lines[i].strip() == CODE_MARK), len(lines))
        body = lines[number + 1:following]
        found.setdefault(match.group(1), "\n".join(body[:_code_end(body)]).rstrip() + "\n")
    return found


def sources(name: str, documents: Path | None = None) -> dict[str, str]:
    """The modules of reference pipeline ``name``, from the document whose main.py defines its flow."""
    documents = documents or folder()
    if not documents.is_dir():
        raise ReferenceMissing(
            f"the reference pipelines are read from {documents} (or ${FOLDER_VARIABLE}), which is not there")
    function, wanted = PIPELINES[name]
    for path in sorted(documents.glob("*.txt")):
        modules = modules_in(path.read_text(encoding="utf-8", errors="replace"))
        if set(wanted) <= set(modules) and re.search(rf"^def {function}\(", modules["main"], re.MULTILINE):
            return {module: modules[module] for module in wanted}
    raise ReferenceMissing(f"no document in {documents} holds the reference {name} pipeline ({', '.join(wanted)})")


def example_answers(name: str, documents: Path | None = None) -> list[str]:
    """The answers of the example runs that pipeline ``name``'s documents print (their "Example output"
    JSON): what the reference pipelines show as a good final text."""
    documents = documents or folder()
    function = PIPELINES[name][0]
    answers = []
    for path in sorted(documents.glob("*.txt")):
        text = path.read_text(encoding="utf-8", errors="replace")
        modules = modules_in(text)
        if "main" not in modules or not re.search(rf"^def {function}\(", modules["main"], re.MULTILINE):
            continue
        # The example's JSON is abridged ("history": [{...}]): its answer is read as the one string it is.
        for block in re.finditer(r"^JSON\n(\{\n.*?\n\})\n", text, re.MULTILINE | re.DOTALL):
            found = re.search(r'^\s*"answer":\s*("(?:[^"\\]|\\.)*")', block[1], re.MULTILINE)
            answer = json.loads(found[1]) if found else None
            if isinstance(answer, str) and answer not in answers:
                answers.append(answer)
    return answers


def load(name: str, into: Path) -> Reference:
    """Extract reference pipeline ``name`` into ``into`` and import it there, in isolation: its
    modules are removed from ``sys.modules`` (and its folder from ``sys.path``) afterwards, and any
    module of the same name that was imported before is put back."""
    code = sources(name)
    into.mkdir(parents=True, exist_ok=True)
    for module, source in code.items():
        (into / f"{module}.py").write_text(source, encoding="utf-8")
    before = {module: sys.modules.pop(module) for module in code if module in sys.modules}
    sys.path.insert(0, str(into))
    try:
        importlib.invalidate_caches()
        loaded = {module: importlib.import_module(module) for module in code}
    finally:
        sys.path.remove(str(into))
        for module in code:
            sys.modules.pop(module, None)
        sys.modules.update(before)
    for module in loaded.values():
        if Path(module.__file__).parent != into:
            raise ReferenceMissing(f"{module.__name__} was imported from {module.__file__}, not from {into}")
    return Reference(name, loaded, into)
