"""Run metrics on disk: ``metrics.jsonl`` (one JSON object per chunk), ``metrics.csv`` and a
learning-curve plot (optional matplotlib)."""

from __future__ import annotations

import csv
import json
import os
from typing import Any


class MetricsLog:
    """Append-only JSONL of per-chunk records ``{"chunk": k, "env_steps": ..., ...}``.

    :meth:`truncate` drops records after a chunk (used when resuming from a checkpoint that
    is older than the last logged chunk; the chunks are recomputed identically).
    """

    def __init__(self, run_dir: str):
        self.path = os.path.join(run_dir, "metrics.jsonl")
        self.csv_path = os.path.join(run_dir, "metrics.csv")

    def records(self) -> list[dict[str, Any]]:
        """All complete records (a torn last line from a kill is ignored)."""
        if not os.path.exists(self.path):
            return []
        out = []
        with open(self.path) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    break
        return out

    def truncate(self, last_chunk: int) -> None:
        """Keep only records with ``chunk <= last_chunk``."""
        keep = [r for r in self.records() if r.get("chunk", 0) <= last_chunk]
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            for r in keep:
                f.write(json.dumps(r) + "\n")
        os.replace(tmp, self.path)

    def append(self, record: dict[str, Any]) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(record) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def write_csv(self) -> None:
        """Rewrite ``metrics.csv`` from the JSONL (columns: union of keys, in first-seen order)."""
        rows = self.records()
        cols: list[str] = []
        for r in rows:
            cols.extend(k for k in r if k not in cols)
        with open(self.csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)


def plot_learning_curve(run_dir: str, records: list[dict[str, Any]], title: str = "") -> str | None:
    """Win rate vs random (as first and as second player) against env steps ->
    ``<run_dir>/learning_curve.png``. Returns the path, or ``None`` without matplotlib or
    without evaluation records."""
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
        ax.plot(
            steps,
            [r[f"eval/loss_{side}"] for r in rows],
            style,
            alpha=0.5,
            label=f"loss as {side} player",
        )
    ax.set_xlabel("environment steps")
    ax.set_ylabel("rate vs uniform random")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    path = os.path.join(run_dir, "learning_curve.png")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
