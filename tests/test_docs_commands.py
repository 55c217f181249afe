"""The command lines in the README and docs/ still parse: every ``jaxgames ...`` and ``python
experiments/<script>.py ...`` written out with its arguments is parsed by today's parser (a
``train`` line's overrides are applied to its preset too), and a script the docs name but the
repository no longer has is named with the commit that had it (``at commit 1a2b3c4`` or ``git
show 1a2b3c4:experiments/x.py``). Nothing is run: a script's ``main`` stops at its parser."""

import argparse
import contextlib
import io
import os
import re
import shlex

import pytest
from scripts import ROOT, script

from jaxgames.cli import build_parser
from jaxgames.cli.train import train_config

DOCS = ["README.md"] + sorted(
    os.path.join("docs", f) for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md")
)
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
COMMAND = re.compile(r"^(jaxgames |python experiments/|bash experiments/)")
#: a placeholder or shell syntax: the line shows a command's form, not a command to run
FORM = re.compile(r"^[A-Z][A-Z_]*$|^<.*>$|\.\.\.|^\[|[|&;]")
COMMIT = re.compile(r"\b[0-9a-f]{7,40}\b")


def commands(text: str) -> list[str]:
    """The command lines of a markdown text: fenced lines (``\\`` continuations joined, ``#``
    comments cut) and inline code spans, whitespace collapsed."""
    found = []
    for block in FENCE.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            found.append(re.split(r"\s#\s|\s\s+#", line)[0])
    for span in re.findall(r"`([^`]+)`", FENCE.sub("", text)):
        found.append(span)
    return [" ".join(c.split()) for c in found if COMMAND.match(" ".join(c.split()))]


class _Parsed(Exception):
    """Raised by the patched parser: the script's arguments parsed, nothing is run."""


def _parse_script(path: str, argv: list[str], monkeypatch) -> None:
    parse = argparse.ArgumentParser.parse_known_args

    def parse_and_stop(self, args=None, namespace=None):
        parse(self, args, namespace)
        raise _Parsed

    module = script(os.path.basename(path)[: -len(".py")])
    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_known_args", parse_and_stop)
        with pytest.raises(_Parsed):
            module.main(argv)


@pytest.mark.parametrize("doc", DOCS)
def test_documented_commands_parse(doc, monkeypatch):
    text = open(os.path.join(ROOT, doc)).read()
    parser = build_parser()
    checked, failures = 0, []
    for line in commands(text):
        tokens = shlex.split(line.replace("$OUT", "out"))
        if tokens[0] == "python" and not os.path.exists(os.path.join(ROOT, tokens[1])):
            # a script since removed: the paragraph that names it names the commit that had it
            paragraph = next(p for p in text.split("\n\n") if tokens[1] in " ".join(p.split()))
            if not COMMIT.search(paragraph):
                failures.append(f"{line!r}: {tokens[1]} is gone and no commit is named")
            continue
        if tokens[0] == "bash":
            if not os.path.exists(os.path.join(ROOT, tokens[1])):
                failures.append(f"{line!r}: {tokens[1]} does not exist")
            continue
        if all(t.startswith("-") for t in tokens[2:]) or any(FORM.search(t) for t in tokens):
            continue  # a command or option named in prose, or a form with placeholders
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                if tokens[0] == "jaxgames":
                    args, extra = parser.parse_known_args(tokens[1:])
                    if args.command == "train":
                        args.overrides = extra
                        train_config(args)
                    elif extra:
                        parser.error(f"unrecognized arguments: {' '.join(extra)}")
                else:
                    _parse_script(tokens[1], tokens[2:], monkeypatch)
        except (SystemExit, ValueError) as e:
            lines = err.getvalue().strip().splitlines()
            failures.append(f"{line!r}: {lines[-1] if lines else e}")
        checked += 1
    assert not failures, "\n".join(failures)
    if doc in ("README.md", "docs/ladders.md", "docs/presets.md", "docs/profile.md"):
        assert checked >= 3  # the extraction still finds these files' commands
