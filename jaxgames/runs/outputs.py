"""The one check of every path a command writes (``--json``, ``render --svg/--animate/--grid``,
``replay --svg DIR``, ``export OUT_DIR``, ``train --runs-dir``, ``play``'s ``save FILE``),
made before the command does any work, so that nothing saved is ever overwritten by mistake.

Refused, each with one ``ValueError`` line naming the flag and the path:

* a path inside a run directory or an exported agent (a folder with ``config.json`` and
  metrics, checkpoints or parameters): its own files (:data:`RUN_FILES`) and anything in its
  sub-folders (``checkpoints/``, ``seed<s>/``, ...); a new file of another name beside them is
  allowed (``runs/R/eval.json``);
* the input the command reads (``render rec.txt --svg rec.txt``);
* a path that cannot be created: a missing or read-only folder, a file where a folder is
  needed; probed by creating and removing a temporary file there, which also catches file
  systems that refuse writes whatever the permission bits say (``/proc``, read-only mounts,
  root on a read-only folder);
* an existing file, unless ``force`` (the command's ``--force``).
"""

from __future__ import annotations

import os
import tempfile
from typing import Iterable

from jaxgames.runs import CARD_FILE, CARD_MD_FILE, CONFIG_FILE, PARAMS_FILE
from jaxgames.runs.lock import LOCK_FILE

#: the files and folders of a run directory or an exported agent, never written by a command
#: other than the one that owns them
RUN_FILES = frozenset(
    {
        CONFIG_FILE,
        "metrics.jsonl",
        "metrics.csv",
        "learning_curve.png",
        LOCK_FILE,
        PARAMS_FILE,
        CARD_FILE,
        CARD_MD_FILE,
        "checkpoints",
        "corrupt_checkpoints",
    }
)
#: besides config.json, any of these makes a folder a run (or an exported agent)
_RUN_MARKERS = ("metrics.jsonl", "checkpoints", PARAMS_FILE)


def is_run_folder(path: str) -> bool:
    """``path`` is a run directory or an exported agent (not just any folder with a
    ``config.json``)."""
    return os.path.isfile(os.path.join(path, CONFIG_FILE)) and any(
        os.path.exists(os.path.join(path, m)) for m in _RUN_MARKERS
    )


def _is_training_run(path: str) -> bool:
    return any(os.path.exists(os.path.join(path, m)) for m in ("metrics.jsonl", "checkpoints"))


def run_owning(real: str, *, is_folder: bool = False) -> tuple[str, str] | None:
    """(run folder, the part of ``real`` inside it) if ``real`` (an absolute path) is in a run
    folder's files or sub-folders, or is a run folder itself; ``is_folder``: ``real`` is (or
    will be) a folder, which inside a run is never a new file beside its files."""
    if os.path.isdir(real) and is_run_folder(real):
        return real, "."
    child, folder = real, os.path.dirname(real)
    while True:
        if is_run_folder(folder):
            rel = os.path.relpath(real, folder)
            top = rel.split(os.sep)[0]
            beside = rel == os.path.basename(child) and top not in RUN_FILES
            if not beside or is_folder or os.path.isdir(real):
                return folder, rel
            return None  # a new file of its own name beside the run's files
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        child, folder = folder, parent


def _probe(folder: str, flag: str, path: str) -> None:
    """``ValueError`` unless a file can be created in the existing ``folder``."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".jaxgames-write-test-", dir=folder)
    except OSError as e:
        raise ValueError(
            f"{flag} {path!r}: cannot write in folder {folder!r} ({e.strerror or e})"
        ) from None
    os.close(fd)
    os.unlink(probe)


def check_output_path(
    path: str,
    flag: str,
    *,
    force: bool = False,
    inputs: Iterable[str] = (),
    folder: bool = False,
    overwrite_hint: str = "add --force to overwrite it",
    agent_folder: bool = False,
) -> None:
    """``ValueError`` unless ``path`` may be written (module docstring); ``flag`` names it in
    the message (``"--json"``). ``folder``: ``path`` is a folder the command creates (its
    missing parents too) and fills; an existing folder is then the caller's to judge (e.g.
    ``export`` replaces only an exported agent with ``--force``). ``overwrite_hint``: how to
    replace an existing file, said when it is refused. ``agent_folder``: ``path`` may itself be
    an exported agent (``export --force`` replaces one), never a training run."""
    kind = "folder" if folder else "file"
    if not isinstance(path, str) or not path.strip():
        raise ValueError(f"{flag} {path!r}: give a {kind} name")
    real = os.path.realpath(path)
    owner = run_owning(real, is_folder=folder)
    if owner == (real, ".") and agent_folder and not _is_training_run(real):
        owner = None
    if owner is not None:
        run, rel = owner
        where = "is the run or agent folder" if rel == "." else "is inside the run or agent folder"
        raise ValueError(f"{flag} {path!r} {where} {run!r}; write elsewhere")
    for given in inputs:
        if real == os.path.realpath(given):
            raise ValueError(f"{flag} {path!r} is the input being read; write elsewhere")
    if folder:
        if os.path.exists(real) and not os.path.isdir(real):
            raise ValueError(f"{flag} {path!r} is a file, not a directory")
        nearest = real
        while not os.path.exists(nearest):
            nearest = os.path.dirname(nearest)
        if not os.path.isdir(nearest):
            raise ValueError(f"{flag} {path!r}: {nearest!r} is a file, not a directory")
        _probe(nearest, flag, path)
        return
    if os.path.isdir(real):
        raise ValueError(f"{flag} {path!r} is a directory; give a file name, e.g. {path}/out.json")
    parent = os.path.dirname(real)
    if not os.path.isdir(parent):
        raise ValueError(f"{flag} {path!r}: folder {os.path.dirname(path) or '.'!r} does not exist")
    _probe(parent, flag, path)
    if os.path.exists(real) and not force:
        raise ValueError(f"{flag} {path!r} exists; {overwrite_hint}")
