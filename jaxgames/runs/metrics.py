"""Run metrics on disk: ``metrics.jsonl`` (one JSON object per chunk), ``metrics.csv`` and a
learning-curve plot (optional matplotlib)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any

from jaxgames.validation import quote


class MetricsError(ValueError):
    """``metrics.jsonl`` has a damaged record before its last line (nothing is changed)."""


class MetricsLog:
    """Append-only JSONL of per-chunk records ``{"chunk": k, "env_steps": ..., ...}``. Reading
    is strict: only a torn last line (a killed writer) is dropped; any other bad line raises
    :class:`MetricsError` naming it, and nothing is rewritten."""

    def __init__(self, run_dir: str):
        self.path = os.path.join(run_dir, "metrics.jsonl")
        self.csv_path = os.path.join(run_dir, "metrics.csv")

    def records(self) -> list[dict[str, Any]]:
        """All complete records (a torn last line ignored)."""
        if not os.path.exists(self.path):
            return []
        with open(self.path, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        last = len(lines)  # lines[-1] is b"" when the file ends with a newline, as appends do
        out: list[dict[str, Any]] = []
        for i, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            why = self._problem(raw, out)
            if why is None:
                out.append(json.loads(raw))
            elif i == last:
                break  # a torn last line: the writer was killed while appending it
            else:
                text = raw.decode("utf-8", errors="replace")
                raise MetricsError(
                    f"{self.path}, line {i}, is damaged ({why}): {quote(text, 80)}; only a torn "
                    "last line is dropped automatically: repair or delete that line and rerun "
                    "(nothing was changed)"
                )
        return out

    @staticmethod
    def _problem(raw: bytes, before: list[dict[str, Any]]) -> str | None:
        """Why ``raw`` is not the record that may follow ``before`` (``None``: it is)."""
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            return f"not JSON: {type(e).__name__}: {str(e)[:80]}"
        if not isinstance(rec, dict):
            return "not a JSON object"
        chunk = rec.get("chunk")
        if isinstance(chunk, bool) or not isinstance(chunk, int):
            return "no integer 'chunk'"
        if before and chunk <= before[-1]["chunk"]:
            return f"chunk {chunk} after chunk {before[-1]['chunk']}"
        return None

    def truncate(self, last_chunk: int) -> None:
        """Keep only records with ``chunk <= last_chunk`` (resuming from an older checkpoint)."""
        keep = [r for r in self.records() if r.get("chunk", 0) <= last_chunk]
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            for r in keep:
                f.write(json.dumps(r) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def append(self, record: dict[str, Any]) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def write_csv(self) -> None:
        """Rewrite ``metrics.csv`` from the JSONL (columns in first-seen order), atomically."""
        rows = self.records()
        cols: list[str] = []
        for r in rows:
            cols.extend(k for k in r if k not in cols)
        tmp = self.csv_path + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
        os.replace(tmp, self.csv_path)


def chunk_record(
    chunk: int, steps_per_chunk: int, metrics: dict[str, Any], seconds: float
) -> dict[str, Any]:
    """One chunk's record: number, env steps so far, ``train/<name>`` metrics, seconds and
    steps per second (the caller adds ``eval/<name>`` and ``time``)."""
    rec: dict[str, Any] = {"chunk": chunk, "env_steps": chunk * steps_per_chunk}
    rec.update({f"train/{n}": float(v) for n, v in metrics.items()})
    rec["chunk_seconds"] = seconds
    rec["steps_per_sec"] = steps_per_chunk / seconds
    return rec


def plot_learning_curve(run_dir: str, records: list[dict[str, Any]], title: str = "") -> str | None:
    """Win and loss rates vs random per side against env steps ->
    ``<run_dir>/learning_curve.png`` (``None`` without matplotlib or evaluation records)."""
    rows = [r for r in records if "eval/win_first" in r]
    if not rows:
        return None
    try:
        import matplotlib  # optional dependency (the 'plots' extra)

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    steps = [r["env_steps"] for r in rows]
    fig, ax = plt.subplots(figsize=(6, 4))
    for side, style in (("first", "-"), ("second", "--")):
        ax.plot(steps, [r[f"eval/win_{side}"] for r in rows], style, label=f"win as {side} player")
        losses = [r[f"eval/loss_{side}"] for r in rows]
        ax.plot(steps, losses, style, alpha=0.5, label=f"loss as {side} player")
    ax.set_xlabel("environment steps")
    ax.set_ylabel("rate vs uniform random")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    path = os.path.join(run_dir, "learning_curve.png")
    tmp = os.path.join(run_dir, "learning_curve.tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)
    return path
