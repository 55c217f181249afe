"""The browser board's HTTP server: Python's ``http.server`` on 127.0.0.1, one static page
(``board.html``, no build step, nothing fetched from the network) and a JSON API over one
:class:`~jaxgames.web.session.WebGame`.

    GET  /                 the page
    GET  /api/state        the position (``?legal=0&numbers=1&flip=1`` draw options)
    GET  /api/choices      the games and the players to offer
    GET  /api/record       the game so far as a record (text, ``jaxgames replay`` reads it)
    POST /api/new          {"game", "options", "agent", "simulations", "color"}: a new game
    POST /api/move         {"move"}: the human's move, in the game's notation
    POST /api/agent        the agent plays one move
    POST /api/undo         take back the human's last move (and the agent's replies)
    POST /api/hint         the agent's move, move probabilities and value here
    POST /api/load         {"text"}: continue the game of a record (any format ``replay`` reads)

POST bodies may carry ``"display"`` (``{"legal", "numbers", "flip"}``); every answer but the
record's is JSON: the position (:meth:`WebGame.view`), or ``{"error": "one line"}`` with
status 400. Any page in the user's browser can send requests to 127.0.0.1, so the API answers
only requests carrying the token written into the page (``X-Jaxgames-Token``; another origin
cannot read the page to learn it) and naming this server in ``Host`` (against DNS rebinding).
"""

from __future__ import annotations

import http.server
import json
import pathlib
import re
import secrets
import sys
import threading
import urllib.parse
from typing import Any, Callable

from jaxgames import records, transcripts
from jaxgames.specs import check_spec, record_opponent
from jaxgames.terminal import one_line
from jaxgames.web.session import (
    Display,
    WebGame,
    agent_spec,
    color_id,
    game_env,
    suggestions,
)

PAGE = pathlib.Path(__file__).with_name("board.html")
#: the largest request body read (a game record of a long game is a few kilobytes)
MAX_BODY = 1 << 20


class BoardServer(http.server.ThreadingHTTPServer):
    """Serves the page and the API of one game at a time on ``127.0.0.1:port`` (0: a free
    port; :attr:`url` says which). ``game`` is the first game; ``seed`` and ``hint`` carry
    over to the games started from the page. Requests are answered one at a time (a lock
    around the game), so a slow agent move delays the next request and never races it."""

    daemon_threads = True

    def __init__(self, game: WebGame, port: int = 0, *, hint: str | None = None) -> None:
        if not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"--port must be in 0..65535 (0: any free port), got {port!r}")
        try:
            super().__init__(("127.0.0.1", port), _Handler)
        except OSError as e:
            raise ValueError(
                f"cannot listen on 127.0.0.1:{port} ({e.strerror or e}); choose another --port "
                "(0: any free port)"
            ) from None
        self.game = game
        self.hint = hint
        self.token = secrets.token_urlsafe(24)
        self.lock = threading.Lock()
        self.page = PAGE.read_text(encoding="utf-8").replace("__TOKEN__", self.token)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A page closed or reloaded before its answer (the connection gone) is nothing to
        report; anything else is one line on stderr, never a traceback."""
        error = sys.exc_info()[1]
        if not isinstance(error, ConnectionError):
            print(f"warning: a request failed: {one_line(error)}", file=sys.stderr)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    # ------------------------------------------------------------ the API
    def new_game(self, body: dict[str, Any]) -> WebGame:
        """A new game from the page's form (the current game's settings where one is left out)."""
        old = self.game
        game = str(body.get("game", old.env.name))
        options = body.get("options", dict(old.env.config) if game == old.env.name else {})
        env = game_env(game, options)
        agent = agent_spec(
            str(body.get("agent", old.agent or "human")), _int(body.get("simulations", 0))
        )
        human = color_id(body.get("color", "first"))
        return WebGame(env, agent, human, hint=self._hint_for(env), seed=old.seed)

    def _hint_for(self, env: Any) -> str | None:
        """The ``--hint`` spec where it plays ``env``; else hints come from the agent (a hint
        player trained on another game or size must not stop that game from starting)."""
        if self.hint is None:
            return None
        try:
            check_spec(self.hint, env)
        except ValueError:
            return None
        return self.hint

    def load(self, body: dict[str, Any]) -> WebGame:
        """The game of a record's text, continued with the current agent and colour."""
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("load needs the text of a game record")
        source = str(body.get("name") or "<record>")
        record = transcripts.parse_any(text, source=source, validate=False)
        env = game_env(record.game, record.options)
        _, states = records.replay(record, env)  # checks every move, with the shared env
        agent, human = _opponent(record, self.game, env)
        return WebGame(
            env,
            agent,
            human,
            hint=self._hint_for(env),
            seed=self.game.seed,
            start=None if record.start is None else states[0],  # saved again without start:
            moves=record.moves,
        )

    def answer(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON answer of one API request (``ValueError``: a one-line error)."""
        display = Display.from_json(body.get("display"))
        game = self.game
        if (method, path) == ("GET", "/api/choices"):
            return suggestions()
        if (method, path) == ("POST", "/api/hint"):
            return {"hint": game.hint()}
        message = ""
        if (method, path) == ("GET", "/api/state"):
            pass
        elif (method, path) == ("POST", "/api/new"):
            self.game = game = self.new_game(body)
        elif (method, path) == ("POST", "/api/load"):
            self.game = game = self.load(body)
            message = f"loaded {len(game.moves)} moves"
        elif (method, path) == ("POST", "/api/move"):
            game.move(str(body.get("move", "")))
        elif (method, path) == ("POST", "/api/agent"):
            message = f"agent {game.agent} plays {game.agent_move()} ({game.thought:.2f}s)"
        elif (method, path) == ("POST", "/api/undo"):
            message = f"took back: {' '.join(game.undo())}"
        else:
            raise LookupError(f"no {method} {path}")
        return dict(game.view(display), message=message)


def _opponent(record: records.GameRecord, old: WebGame, env: Any) -> tuple[str, int]:
    """(agent, human's side) to continue ``record`` with: the record's agent against its
    human (:func:`~jaxgames.specs.record_opponent`), else the current game's agent
    (``random`` for another game) and colour."""
    found = record_opponent(record.players, env)
    if found is not None:
        return found
    same = (old.env.name, dict(old.env.config)) == (env.name, dict(env.config))
    return ((old.agent or "human") if same else "random"), old.human


def _int(value: Any) -> int:
    """An integer of a request: a JSON integer (a float only when whole) or its text."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
        return int(value)
    raise ValueError(f"expected an integer, got {value!r}")


class _Handler(http.server.BaseHTTPRequestHandler):
    server: BoardServer
    server_version = "jaxgames-board"

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the terminal is the user's
        pass

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _allowed_host(self) -> bool:
        host = self.headers.get("Host", "")
        port = self.server.port
        names = ("127.0.0.1", "localhost", "[::1]")
        # a client leaves out the default port 80
        return host in [f"{n}:{port}" for n in names] or (port == 80 and host in names)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        if not self._allowed_host():
            return self._json(403, {"error": "this server answers only 127.0.0.1 and localhost"})
        if url.path in ("/", "/index.html") and method == "GET":
            return self._send(200, self.server.page.encode(), "text/html; charset=utf-8")
        if not url.path.startswith("/api/"):
            return self._json(404, {"error": f"no page {url.path}"})
        token = self.headers.get("X-Jaxgames-Token", "").encode("utf-8", "replace")
        if not secrets.compare_digest(token, self.server.token.encode()):  # bytes: any header
            return self._json(403, {"error": "missing or wrong X-Jaxgames-Token; reload the page"})
        try:
            body = self._body(method, url.query)
        except ValueError as e:
            return self._json(400, {"error": one_line(e)})
        with self.server.lock:
            if (method, url.path) == ("GET", "/api/record"):
                text = records.to_text(self.server.game.record())
                return self._send(200, text.encode(), "text/plain; charset=utf-8")
            try:
                data = self.server.answer(method, url.path, body)
            except LookupError as e:
                return self._json(404, {"error": one_line(e)})
            except Exception as e:  # one line to the page, never a traceback
                return self._json(400, {"error": one_line(e)})
        self._json(200, data)

    def _body(self, method: str, query: str) -> dict[str, Any]:
        if method == "GET":
            query_items = urllib.parse.parse_qs(query, keep_blank_values=True).items()
            flags = {k: v[-1] not in ("0", "false", "") for k, v in query_items}
            return {"display": flags}
        text = self.headers.get("Content-Length") or "0"
        try:
            size = int(text)
        except ValueError:
            raise ValueError(f"Content-Length {text!r} is not a number of bytes") from None
        if not 0 <= size <= MAX_BODY:
            raise ValueError(f"request of {size:,} bytes; between 0 and {MAX_BODY:,}")
        raw = self.rfile.read(size) if size else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError as e:
            raise ValueError(f"the request is not JSON: {e}") from None
        except RecursionError:
            raise ValueError("the request's JSON is nested too deeply") from None
        if not isinstance(body, dict):
            raise ValueError("the request must be a JSON object")
        return body


def serve(
    server: BoardServer,
    say: Callable[[str], None] = print,
    open_browser: bool = False,
) -> int:
    """Print the address and answer requests until Ctrl-C (exit code 0)."""
    say(f"jaxgames board: {server.url}  (Ctrl-C stops the server)")
    if open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        say("stopped")
    finally:
        server.server_close()
    return 0
