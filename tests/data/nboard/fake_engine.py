"""A stand-in NBoard engine for the tests: it plays back a recorded transcript.

    python fake_engine.py TRANSCRIPT

``> line``: the next line the client must send (anything else: a message on stderr, exit 3);
``< line``: a line the engine answers (``~ line``: the same, written in Latin-1, as an engine
with a non-ASCII name under another locale); ``! exit N``: the engine dies with exit code N; ``#``
lines are comments. After the transcript it waits for the end of input (or ``quit``).
"""

import sys


def main(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        script = [line.rstrip("\n") for line in f if line.strip() and not line.startswith("#")]
    for item in script:
        kind, text = item[0], item[2:]
        if kind == ">":
            got = sys.stdin.readline().rstrip("\n")
            if got != text:
                print(f"fake engine: expected {text!r}, got {got!r}", file=sys.stderr, flush=True)
                return 3
        elif kind == "<":
            print(text, flush=True)
        elif kind == "~":
            sys.stdout.buffer.write(text.encode("latin-1") + b"\n")
            sys.stdout.buffer.flush()
        elif kind == "!":
            print("fake engine: dying as told", file=sys.stderr, flush=True)
            return int(text.split()[1])
    for line in sys.stdin:
        if line.strip() == "quit":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
