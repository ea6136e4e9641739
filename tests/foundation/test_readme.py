"""The README and the docs name only what the repository has: every path exists, every `xqarb` command parses.

A newcomer has only the repository. The README once sent readers to DESIGN.md and RULES.md, which were not in it;
these tests read the README (and the docs it points to) as a reader would and fail on any path or command that
is not there.

What counts as a named path (`named_paths`): a link target, and, inside backticks or code blocks, a word that
looks like a path: one with a `/` (`services/ingest/`, `bench/RESULTS.md`) or a file name with a documentation,
code or configuration extension (`DESIGN.md`, `pyproject.toml`). Words starting with `/`, `.`, `$` or holding
`<`, `*`, `{` are URLs, local files of a running system or placeholders. In the README every such word must exist
(relative to the repository root); in the docs only words under a top-level folder of the repository are checked,
because the docs also name files of a running system (`var/ledger.sqlite`) and short module names.

What counts as a command (`shown_commands`): in backticks or a code block, `xqarb` (or `.../xqarb`) and the words
after it up to a shell operator. In a line that starts with `xqarb`, a `|` followed by one of xqarb's subcommands
lists alternatives, as in the README's usage lines (`xqarb ingest serve | vision serve`); followed by anything
else it is a shell pipe (`| head`). Each must name subcommands `xqarb --help` knows, and each
`--option` it shows must be one of that subcommand's options. In the docs, the section "Not yet built" is left
out: it names on purpose what the command line does not have.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from xqarb.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ("docs/ARCHITECTURE.md", "docs/RULES.md")
# Extensions of files a reader is sent to (not data files a command takes, such as FILE.pgn).
FILE_EXTENSIONS = frozenset(
    {"md", "py", "toml", "yaml", "yml", "sh", "avsc", "txt", "json", "html", "js", "css", "cfg"}
)
TOP_LEVEL = ("xqarb/", "services/", "schemas/", "deploy/", "tests/", "bench/", "docs/", "scripts/")
SHELL_OPERATORS = frozenset({"&&", "||", ";", ">", ">>", "<", "2>"})
NOT_BUILT_HEADING = "## Not yet built"

_FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
_INLINE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_PATH = re.compile(r"[A-Za-z_][\w.\-]*(?:/[\w.\-]+)*/?")
_WORD = re.compile(r"[a-z][a-z-]*")


# --------------------------------------------------------------------------------------------- reading the text


def code_units(text: str) -> list[str]:
    """Every code block line (without its `# comment`) and every inline code span, in order."""
    units: list[str] = []
    for block in _FENCE.findall(text):
        for line in block.splitlines():
            units.append(re.split(r"\s#\s", line, maxsplit=1)[0])
    units.extend(_INLINE.findall(_FENCE.sub("", text)))
    return units


def _clean(word: str) -> str:
    return word.strip("\"'(),;:[]")


def named_paths(text: str, *, strict: bool = True) -> list[str]:
    """The repository paths a Markdown text names (see the module docstring); `strict=False` for the docs."""
    found: list[str] = []
    for target in _LINK.findall(_FENCE.sub("", text)):
        if not re.match(r"[a-z]+:|#", target):
            found.append(target.split("#", 1)[0])
    for unit in code_units(text):
        for word in map(_clean, unit.split()):
            if not _PATH.fullmatch(word):
                continue
            if "/" in word:
                if strict or word.startswith(TOP_LEVEL):
                    found.append(word)
            elif strict and "." in word and word.rsplit(".", 1)[1] in FILE_EXTENSIONS:
                found.append(word)
    return list(dict.fromkeys(found))


def top_level_commands() -> frozenset[str]:
    return frozenset(_subcommands(build_parser()) or {})


def shown_commands(text: str, known: frozenset[str] | None = None) -> list[list[str]]:
    """The `xqarb` command lines a Markdown text shows, each as its words after `xqarb`. `known`: xqarb's
    subcommands, which tell a `|` listing alternatives from a shell pipe."""
    known = top_level_commands() if known is None else known
    commands: list[list[str]] = []
    for unit in code_units(text):
        words = unit.split()
        start = next((i for i, w in enumerate(words) if w == "xqarb" or w.endswith("/xqarb")), None)
        if start is None:
            continue
        current: list[str] = []
        rest = words[start + 1 :]
        for i, word in enumerate(rest):
            # `xqarb a | b`: a usage line listing alternatives, when b is a subcommand; else a pipe
            if word == "|" and start == 0 and i + 1 < len(rest) and rest[i + 1] in known:
                commands.append(current)
                current = []
            elif word in SHELL_OPERATORS or word == "|":
                break
            else:
                current.append(word)
        commands.append(current)
    return commands


def without_not_built(text: str) -> str:
    """The text without its "Not yet built" section (up to the next heading of the same level)."""
    head, sep, rest = text.partition(NOT_BUILT_HEADING)
    if not sep:
        return text
    after = re.search(r"^## ", rest, re.M)
    return head + (rest[after.start() :] if after else "")


# --------------------------------------------------------------------------------------------- checking


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return None


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings}


def command_problem(words: list[str], parser: argparse.ArgumentParser) -> str | None:
    """Why `xqarb <words>` is not a command the parser knows, or None."""
    shown = "xqarb " + " ".join(words)
    rest = list(words)
    while rest:
        subs = _subcommands(parser)
        if subs is None or not _WORD.fullmatch(rest[0]):
            break  # no subcommands here, or an option or a placeholder (FILE, [FEN ...]) follows
        name = rest.pop(0)
        if name not in subs:
            return f"`{shown}`: {name!r} is not a subcommand here (known: {', '.join(sorted(subs))})"
        parser = subs[name]
    for word in map(_clean, rest):
        option = word.split("=", 1)[0]
        if option.startswith("--") and option not in _options(parser):
            return f"`{shown}`: {parser.prog} has no option {option} (it has {', '.join(sorted(_options(parser)))})"
    return None


def missing_paths(paths: list[str], base: Path) -> list[str]:
    """The paths that exist neither relative to `base` (the text's folder) nor to the repository root."""
    return [p for p in paths if not (base / p).exists() and not (ROOT / p).exists()]


# --------------------------------------------------------------------------------------------- the README


def test_every_path_the_readme_names_exists():
    paths = named_paths(README.read_text(encoding="utf-8"))
    assert "docs/ARCHITECTURE.md" in paths and "services/ingest/" in paths, paths  # the reader finds them
    missing = missing_paths(paths, ROOT)
    assert not missing, f"README.md names paths the repository does not have: {missing}"


def test_every_xqarb_command_the_readme_shows_is_known():
    commands = shown_commands(README.read_text(encoding="utf-8"))
    assert ["up", "--demo"] in commands and ["vision", "serve"] in commands, commands
    parser = build_parser()
    problems = [p for words in commands if (p := command_problem(words, parser))]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------- the docs


@pytest.mark.parametrize("doc", DOCS)
def test_every_repository_path_a_doc_names_exists(doc):
    path = ROOT / doc
    paths = named_paths(path.read_text(encoding="utf-8"), strict=False)
    assert paths, f"{doc} names no repository path: the reader would be left without the code"
    missing = missing_paths(paths, path.parent)
    assert not missing, f"{doc} names paths the repository does not have: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_xqarb_command_a_doc_shows_as_built_is_known(doc):
    commands = shown_commands(without_not_built((ROOT / doc).read_text(encoding="utf-8")))
    parser = build_parser()
    problems = [p for words in commands if (p := command_problem(words, parser))]
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------- the checks can fail


SAMPLE = """# A project
Read [the guide](docs/GUIDE.md) and `DESIGN.md`; figures in `bench/RESULTS.md`; data in `var/` at run time.

```sh
bash scripts/setup.sh && .venv/bin/xqarb up --demo     # then open `/api/boards`
xqarb replay FILE.pgn [--json] [--fast]
xqarb ingest serve | vision watch | referee web
xqarb rules legal FEN | head
```

## Not yet built
- `xqarb verify --proof FILE`
"""


def test_the_reader_finds_the_paths_and_commands_of_a_sample():
    paths = named_paths(SAMPLE)
    assert paths == ["docs/GUIDE.md", "scripts/setup.sh", "DESIGN.md", "bench/RESULTS.md", "var/"]
    assert named_paths(SAMPLE, strict=False) == ["docs/GUIDE.md", "scripts/setup.sh", "bench/RESULTS.md"]
    assert missing_paths(paths, ROOT) == ["docs/GUIDE.md", "DESIGN.md", "var/"]
    commands = shown_commands(SAMPLE)
    assert commands == [["up", "--demo"], ["replay", "FILE.pgn", "[--json]", "[--fast]"], ["ingest", "serve"],
                        ["vision", "watch"], ["referee", "web"], ["rules", "legal", "FEN"],
                        ["verify", "--proof", "FILE"]]
    assert shown_commands(without_not_built(SAMPLE))[-1] == ["rules", "legal", "FEN"]


def test_unknown_subcommands_and_options_are_named():
    parser = build_parser()
    assert command_problem(["up", "--demo"], parser) is None
    assert command_problem(["rules", "legal", "[FEN", "...]"], parser) is None
    assert "'watch' is not a subcommand" in command_problem(["vision", "watch"], parser)
    assert "no option --fast" in command_problem(["replay", "FILE.pgn", "[--json]", "[--fast]"], parser)
    assert "'nosuch' is not a subcommand" in command_problem(["nosuch"], parser)


# --------------------------------------------------------------------------------------------- citations


REFEREE = "services/referee/"
_CITATION = re.compile(r"`([\w/]+\.py): ([\w.]+)`((?:, `[\w.]+`)*)")
_FOLLOWER = re.compile(r"`([\w.]+)`")


def cited(text: str) -> list[tuple[str, str]]:
    """(file, name) for every `file.py: name` citation, and the `, `other`` names that follow it."""
    found: list[tuple[str, str]] = []
    for file, name, followers in _CITATION.findall(text):
        path = file if file.startswith(TOP_LEVEL) else REFEREE + file
        found.append((path, name))
        found.extend((path, more) for more in _FOLLOWER.findall(followers))
    return found


def _names(node: ast.stmt) -> set[str]:
    """The names a statement defines: a function, a class, an assignment or an annotated field."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    if isinstance(node, ast.Assign):
        return {t.id for t in node.targets if isinstance(t, ast.Name)}
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


def _defined(tree: ast.Module, dotted: str) -> bool:
    """Whether a module defines `name` or `Class.member`."""
    scope: list[ast.stmt] = list(tree.body)
    for part in dotted.split("."):
        match = next((node for node in scope if part in _names(node)), None)
        if match is None:
            return False
        scope = list(getattr(match, "body", []))
    return True


def test_every_function_the_rules_digest_cites_is_in_the_code():
    citations = cited((ROOT / "docs/RULES.md").read_text(encoding="utf-8"))
    assert ("services/referee/game.py", "_illegal_move") in citations, citations[:5]
    trees: dict[str, ast.Module] = {}
    missing = []
    for path, name in citations:
        if path not in trees:
            assert (ROOT / path).is_file(), f"docs/RULES.md cites {path}, which does not exist"
            trees[path] = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        if not _defined(trees[path], name):
            missing.append(f"{path}: {name}")
    assert not missing, f"docs/RULES.md cites what the code does not define: {missing}"


def test_a_citation_of_something_undefined_is_caught():
    text = "`game.py: _illegal_move`, `_no_such_handler`; `clock.py: ClockState.flagged`"
    citations = cited(text)
    assert citations == [(REFEREE + "game.py", "_illegal_move"), (REFEREE + "game.py", "_no_such_handler"),
                         (REFEREE + "clock.py", "ClockState.flagged")]
    tree = ast.parse((ROOT / REFEREE / "game.py").read_text(encoding="utf-8"))
    assert _defined(tree, "_illegal_move") and not _defined(tree, "_no_such_handler")
