"""The quick-start notebook ``docs/quickstart.ipynb`` runs from top to bottom on the current code
(nbclient + ipykernel, a real Jupyter kernel), and what it displays are the states' and records'
drawings.

The notebook is committed with its outputs (so that it shows on GitHub); after changing it,
refresh them with ``python tests/test_notebook.py`` (executes it and writes it back)."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "docs" / "quickstart.ipynb"


def execute(timeout: int = 300):
    """The notebook executed in a fresh kernel started in the repository root (so that it
    imports this checkout's ``jaxgames``), without the persistent compilation cache."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    env = dict(os.environ, JAXGAMES_COMPILE_CACHE="0", PYTHONPATH=str(ROOT))
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute(env=env)  # passed on to the kernel's start
    return nb


def _outputs(nb):
    return [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


def test_quickstart_notebook_runs_and_shows_boards():
    nb = execute()
    outputs = _outputs(nb)
    assert not [o for o in outputs if o.output_type == "error"]
    shown = [o.data for o in outputs if o.output_type == "execute_result"]
    svgs = [d["image/svg+xml"] for d in shown if "image/svg+xml" in d]
    htmls = [d["text/html"] for d in shown if "text/html" in d]
    # one reversi state twice (before and after c2), two animated game records
    assert sum("<title>reversi:" in s and "@keyframes" not in s for s in svgs) == 2
    assert sum("@keyframes" in s for s in svgs) == 2
    # the batch: its shape and its first boards
    assert any("a batch of shape (1024,)" in h and h.count("<svg") == 8 for h in htmls)


def test_committed_notebook_has_outputs():
    """The notebook in the repository was executed (GitHub shows the outputs)."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs for c in code)
    assert not [o for o in _outputs(nb) if o.output_type == "error"]


if __name__ == "__main__":
    sys.exit(nbformat.write(execute(), NOTEBOOK))
