"""Summarise a JAXGAMES_TEST_PROFILE file: where the test suite's time goes.

    JAXGAMES_TEST_PROFILE=/tmp/prof.jsonl python -m pytest
    python tests/profile_report.py /tmp/prof.jsonl [--top 40]

Per file and per test: wall seconds and the share spent tracing, lowering and compiling
(in the test's own process; a test that runs the CLI in a subprocess shows none); per xdist
worker: its busy seconds and when its last test ended, so an idle tail (one worker running the
last long tests while the other waits) shows as the gap between the workers' ends.
"""

import argparse
import json
from collections import defaultdict


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    rows = [json.loads(line) for line in open(args.profile)]
    keys = ("wall", "trace", "lower", "compile")
    by_file = defaultdict(lambda: dict.fromkeys(keys, 0.0))
    for r in rows:
        for k in keys:
            by_file[r["test"].split("::")[0]][k] += r[k]
    total = {k: sum(r[k] for r in rows) for k in keys}

    def line(name, r):
        jax_s = r["trace"] + r["lower"] + r["compile"]
        return f"{r['wall']:8.1f} {jax_s:8.1f} {r['compile']:8.1f}  {name}"

    print(f"{'wall s':>8} {'jax s':>8} {'compile':>8}  (jax s = trace + lower + compile)")
    print(line(f"all {len(rows)} tests", total))
    print("-- files")
    for name, r in sorted(by_file.items(), key=lambda kv: -kv[1]["wall"]):
        print(line(name, r))
    workers = defaultdict(list)
    for r in rows:
        if "began" in r:
            workers[r["worker"]].append(r)
    if workers:
        t0 = min(r["began"] for r in rows if "began" in r)
        print("-- workers (s from the first test's start: busy, last test ended, last test)")
        for name, rs in sorted(workers.items()):
            last = max(rs, key=lambda r: r["began"] + r["wall"])
            end = last["began"] + last["wall"] - t0
            busy = sum(r["wall"] for r in rs)
            print(f"{busy:8.1f} {end:8.1f}  {name} ({len(rs)} tests; last {last['test']})")
    print(f"-- top {args.top} tests")
    for r in sorted(rows, key=lambda r: -r["wall"])[: args.top]:
        print(line(r["test"], r))


if __name__ == "__main__":
    main()
