"""The documentation holds together: a README of one screen that links every page of docs/, and no
relative link in README.md or docs/ that leads nowhere (a file that is not there, or an #anchor that
names no heading, by GitHub's rules for heading anchors). No database."""

import re
import subprocess
from pathlib import Path

import pytest

from agents.core.stops import STOP_REASONS

ROOT = Path(__file__).parents[1]
DOCS = ROOT / "docs"
README_MAX_LINES = 150
PAGES = ("running", "desk", "incidents", "publishing", "api", "security", "testing", "architecture",
         "performance", "performance-log", "contract", "decisions", "status-page")
# Code comments point at these sections of docs/contract.md by name.
CONTRACT_SECTIONS = ("Stop reasons", "The patch guard", "Fact and claim checks", "Budgets", "The route gateway",
                     "Escalations and decisions", "Publishing and the outbox", "Deadlines and notifications")

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+\1")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]


def prose_lines(path: Path) -> list[str]:
    """The file's lines outside fenced code blocks (a link or a heading in a code block is text)."""
    lines, fenced = [], False
    for line in path.read_text().splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        lines.append("" if fenced else line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text (code marks, emphasis and link targets gone),
    lower-cased, everything but letters, digits, spaces, hyphens and underscores dropped, spaces to
    hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a file; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose_lines(path):
        match = HEADING.match(line)
        if not match:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def headings(path: Path) -> list[str]:
    return [m.group(2) for line in prose_lines(path) if (m := HEADING.match(line))]


def links(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of every inline link outside code."""
    found = []
    for number, line in enumerate(prose_lines(path), 1):
        for match in LINK.finditer(CODE_SPAN.sub("", line)):
            found.append((number, match.group(1)))
    return found


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)


def test_the_readme_fits_on_one_screen():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; at most {README_MAX_LINES}"


def test_docs_has_a_page_for_each_reader():
    missing = [f"docs/{page}.md" for page in PAGES if not (DOCS / f"{page}.md").is_file()]
    assert missing == []


def test_the_readme_links_every_docs_page():
    linked = {(ROOT / target.split("#", 1)[0]).resolve()
              for _, target in links(ROOT / "README.md") if relative(target) and not target.startswith("#")}
    unlinked = [page.relative_to(ROOT).as_posix() for page in sorted(DOCS.glob("*.md")) if page.resolve() not in linked]
    assert unlinked == []


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_a_file_and_a_heading(path):
    broken = []
    for number, target in links(path):
        if not relative(target):
            continue
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(ROOT).as_posix()}:{number}: {target}"
        if not destination.exists():
            broken.append(f"{where} (no such file)")
        elif anchor and (destination.suffix != ".md" or anchor not in anchors(destination)):
            broken.append(f"{where} (no such heading)")
    assert broken == []


def test_the_link_checker_knows_githubs_anchors():
    """The checks above could not pass by accident: the slugs are GitHub's."""
    assert slug("Production settings, HTTPS and the Content-Security-Policy") == (
        "production-settings-https-and-the-content-security-policy")
    assert slug("The `run_pipeline` command") == "the-run_pipeline-command"
    assert slug("What changed (before 2026-11-23)?") == "what-changed-before-2026-11-23"
    assert slug("Every device, the keyboard") == "every-device-the-keyboard"
    assert [target for _, target in links(ROOT / "README.md") if target == "docs/contract.md"]


def test_the_contract_has_the_sections_code_comments_point_at():
    present = set(headings(DOCS / "contract.md"))
    assert [name for name in CONTRACT_SECTIONS if name not in present] == []


def test_the_contract_names_every_stop_reason_of_the_catalogue():
    contract = (DOCS / "contract.md").read_text()
    assert [reason for reason in STOP_REASONS if f"`{reason}`" not in contract] == []


# A citation of a document the repository does not hold, or of a ticket instead of the reason itself.
# Spelled in parts, so this file does not cite anything itself when the whole tree is searched.
_DOC_WORD, _TICKET_WORD = "SP" + "EC", "iss" + "ue"
CITATION = re.compile(rf"(?-i:\b{_DOC_WORD}\b)|§\s*\d|\b{_TICKET_WORD}s?\s+#?\d+|\(#\d{{1,4}}\)", re.IGNORECASE)


def test_no_file_cites_an_outside_specification_or_an_issue_number():
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    offenders = []
    for name in files:
        path = ROOT / name
        if path.suffix in (".png", ".ico", ".woff2") or not path.is_file() or path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if CITATION.search(line):
                offenders.append(f"{name}:{number}: {line.strip()[:80]}")
    assert offenders == []


def test_the_citation_check_finds_each_kind():
    for line in (f"as {_DOC_WORD} §3.4 says", "see §7", f"from {_TICKET_WORD} 11", "(#14)",
                 f"{_TICKET_WORD.title()}s #3 and 4"):
        assert CITATION.search(line), line
    for line in ("SPECIALIST", "for spec in specs", "a colour (#182033)", "issue the update", "ticket #4821"):
        assert not CITATION.search(line), line


# A repository path, as the docs and the code's comments name files: a token that starts with one of the
# repository's top-level folders and ends in a file extension (``reviewer/outbox/publishing.py``,
# ``static/js/live.js``) or in "/" for a folder (``agents/core/llm/``). Runtime files (var/,
# test-artifacts/) and bare file names (``tasks.py``) are not paths in this sense.
TOP_FOLDERS = ("agents", "reviewer", "tests", "bench", "docs", "templates", "static")
PATH_TOKEN = re.compile(
    rf"(?<![\w./-])((?:{'|'.join(TOP_FOLDERS)})/[\w./-]*?"
    r"(?:\.(?:py|md|html|css|js|json|toml|txt|yml|yaml|sh|cfg|ini)|/))(?![\w-])"
)


def comments_and_docstrings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring of a Python file."""
    import ast
    import io
    import tokenize

    source = path.read_text()
    found = [(token.start[0], token.string) for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                found.append((node.body[0].lineno, docstring))
    return found


def named_paths() -> list[tuple[str, str]]:
    """(where, path) for every repository path that the docs, README.md, the templates and static files,
    and the Python code's comments and docstrings name."""
    texts = [(path, number, line) for path in [*documents(), *sorted((ROOT / "templates").rglob("*.html")),
                                               *sorted((ROOT / "static").rglob("*.[jc]s*"))]
             for number, line in enumerate(path.read_text().splitlines(), 1)]
    texts += [(path, number, text) for folder in ("agents", "reviewer", "bench", "tests")
              for path in sorted((ROOT / folder).rglob("*.py")) for number, text in comments_and_docstrings(path)]
    return [(f"{path.relative_to(ROOT)}:{number}", token) for path, number, text in texts
            for token in PATH_TOKEN.findall(text)]


def test_every_repository_path_that_the_docs_and_comments_name_exists():
    named = named_paths()
    assert len(named) > 300  # the scan reads what it should: the docs and comments name hundreds of paths
    stale = [f"{where}: {path}" for where, path in named if not (ROOT / path.rstrip("/")).exists()]
    assert stale == []


def test_a_path_token_is_a_repository_path_with_an_extension_or_a_closing_slash():
    text = ("see reviewer/outbox/publishing.py, `agents/core/llm/` and static/js/live.js; not agents.core.stops, "
            "/api/v1/runs/, var/demo-logins.json, docs or reviewer/desk")
    assert PATH_TOKEN.findall(text) == ["reviewer/outbox/publishing.py", "agents/core/llm/", "static/js/live.js"]
