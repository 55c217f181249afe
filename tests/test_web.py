"""The browser board (``jaxgames play --web``): its JSON API driven over HTTP without a browser,
and the page itself in a real headless browser (Debian's chromium and chromedriver through
selenium; skipped with the reason when they are missing), every position checked against an
independent replay of the moves with the game's own rules."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from jaxgames import cli, records, transcripts
from jaxgames.games import shared_env
from jaxgames.pretrained import load_pretrained
from jaxgames.web import BoardServer, WebGame, agent_spec

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVG_NS = "{http://www.w3.org/2000/svg}"


# ---------------------------------------------------------------------------- helpers
class Client:
    """Requests to a :class:`BoardServer` running in a thread of this process."""

    def __init__(self, server: BoardServer):
        self.server = server

    def call(self, method, path, body=None, *, token=None, host=None):
        """(status, JSON or text) of one request (``body`` as JSON, or bytes as they are)."""
        headers = {"X-Jaxgames-Token": self.server.token if token is None else token}
        if host is not None:
            headers["Host"] = host
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        url = self.server.url.rstrip("/") + path
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                status, text, kind = r.status, r.read().decode(), r.headers["Content-Type"]
        except urllib.error.HTTPError as e:
            status, text, kind = e.code, e.read().decode(), e.headers["Content-Type"]
        return status, json.loads(text) if kind == "application/json" else text

    def ok(self, method, path, body=None):
        status, data = self.call(method, path, body)
        assert status == 200, data
        return data


@pytest.fixture
def board():
    """A factory: ``board(game, agent, human, **options)`` -> a :class:`Client` of a server
    started on a free port (stopped after the test)."""
    servers = []

    def start(game="tic_tac_toe", agent="random", human=0, **options):
        server = BoardServer(WebGame(shared_env(game, **options), agent, human), 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return Client(server)

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def replayed(view):
    """The final state of an independent replay of the page's move list (raises on any
    illegal move)."""
    record = records.GameRecord(game=view["game"], options=view["options"], moves=view["moves"])
    env, states = records.replay(record)
    return env, states[-1]


def svg_title(svg):
    """The position text an SVG of :func:`jaxgames.render.svg` carries in its title."""
    return ET.fromstring(svg).find(SVG_NS + "title").text.split(": ", 1)[1]


# ---------------------------------------------------------------------------- the JSON API
def test_api_plays_undoes_and_saves_a_game(board):
    client = board("tic_tac_toe", "random", 0)
    view = client.ok("GET", "/api/state")
    assert view["turn"] == "human" and view["moves"] == [] and view["human"] == 0
    assert sorted(m["move"] for m in view["legal"]) == sorted(f + r for f in "abc" for r in "123")
    assert all(m["squares"] == [m["move"]] and m["drop"] is None for m in view["legal"])
    while view["turn"] != "over":  # the human plays the first legal square, the agent replies
        if view["turn"] == "human":
            view = client.ok("POST", "/api/move", {"move": view["legal"][0]["move"]})
        else:
            view = client.ok("POST", "/api/agent")
            assert view["message"].startswith("agent random plays ")
        env, state = replayed(view)
        assert svg_title(view["svg"]) == env.to_text(state)
        assert view["legal"] == [] or {m["move"] for m in view["legal"]} == {
            env.action_to_text(state, a) for a in np.flatnonzero(state.legal_action_mask)
        }
    result = records.result_of(state)
    assert view["result"] == result and view["status"].startswith("game over: ")
    assert view["winner"] == records.winner_of(result)
    # undo takes back the agent's reply and the human's move before it
    n = len(view["moves"])
    undone = client.ok("POST", "/api/undo")
    human_last = n % 2 == 1  # the human (X) made the last move of an odd-length game
    assert len(undone["moves"]) == n - (1 if human_last else 2)
    assert undone["turn"] == "human" and undone["message"].startswith("took back: ")
    # the page's display options: move numbers on the pieces, the board turned round
    shown = client.ok("GET", "/api/state?numbers=1&flip=1&legal=0")
    numbers = [e.text for e in ET.fromstring(shown["svg"]).iter() if e.get("class") == "number"]
    assert sorted(map(int, numbers)) == list(range(1, len(undone["moves"]) + 1))
    assert shown["flip"] is True and undone["flip"] is False
    assert 'class="legal"' in undone["svg"] and 'class="legal"' not in shown["svg"]
    # the record replays to the server's position, with its players and result
    text = client.ok("GET", "/api/record")
    record = records.parse(text)
    assert record.players == ("human", "random") and record.moves == undone["moves"]
    env, states = records.replay(record)
    assert svg_title(undone["svg"]) == env.to_text(states[-1])


def test_api_errors_are_one_line_and_the_game_goes_on(board):
    client = board("tic_tac_toe", "random", 0)
    status, data = client.call("POST", "/api/move", {"move": "z9"})
    assert status == 400 and "off the 3x3 board" in data["error"] and "\n" not in data["error"]
    client.ok("POST", "/api/move", {"move": "b2"})
    status, data = client.call("POST", "/api/move", {"move": "a1"})
    assert (status, data["error"]) == (400, "it is the agent's turn")
    view = client.ok("POST", "/api/agent")
    status, data = client.call("POST", "/api/move", {"move": "b2"})
    assert status == 400 and data["error"].startswith("illegal move 'b2'")
    status, data = client.call("POST", "/api/new", {"game": "reversi", "agent": "perfect"})
    assert status == 400 and "perfect" in data["error"] and "tic_tac_toe" in data["error"]
    status, data = client.call("POST", "/api/new", {"game": "reversi", "options": {"size": 5}})
    assert status == 400 and data["error"].startswith("invalid reversi size 5: must be an even")
    status, data = client.call("POST", "/api/new", {"agent": "random", "simulations": 8})
    assert status == 400 and "simulations apply to a trained agent" in data["error"]
    status, data = client.call("POST", "/api/load", {"text": "game: chess\n\na1\n"})
    assert status == 400 and "unknown game 'chess'" in data["error"]
    for raw, why in ((b"{", "not JSON"), (b"[" * 50_000, "nested too deeply")):
        status, data = client.call("POST", "/api/move", raw)
        assert status == 400 and why in data["error"]
    assert client.ok("GET", "/api/state")["moves"] == view["moves"]  # nothing was lost
    # only requests with the page's token, naming this server, reach the game
    status, data = client.call("GET", "/api/state", token="guess")
    assert status == 403 and "X-Jaxgames-Token" in data["error"]
    status, data = client.call("GET", "/api/state", host="evil.example:80")
    assert status == 403
    assert client.call("GET", "/api/nothing")[0] == 404
    status, page = client.call("GET", "/")
    assert status == 200 and client.server.token in page and "__TOKEN__" not in page
    # nothing from the network: no address the page would fetch besides the SVG namespace
    assert set(re.findall(r"https?://[^\s\"'`)]+", page)) == {"http://www.w3.org/2000/svg"}


def test_malformed_requests_are_answered_at_once_and_change_nothing(board, capsys):
    """A Content-Length that is negative or not a number is a 400 at once (a negative one
    used to read until the client gave up, then play the move); a fractional number of
    simulations is refused; a client gone before its answer leaves the terminal quiet."""
    client = board("tic_tac_toe", "random", 0)
    host, port = client.server.server_address[:2]
    for length in ("-1", "ten"):
        with socket.create_connection((host, port), timeout=30) as sock:
            head = (
                f"POST /api/move HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                f"X-Jaxgames-Token: {client.server.token}\r\nContent-Length: {length}\r\n\r\n"
            )
            sock.sendall(head.encode() + b'{"move": "b2"}')
            answer = sock.recv(65536).decode()  # before the client closes its side
        assert answer.startswith("HTTP/1.0 400") and "Content-Length" in answer, answer
    assert client.ok("GET", "/api/state")["moves"] == []  # the move was never played
    status, data = client.call("POST", "/api/new", {"agent": "uct:1", "simulations": 1.5})
    assert status == 400 and "expected an integer, got 1.5" in data["error"]
    for error in (BrokenPipeError(32, "Broken pipe"), ValueError("boom")):
        try:
            raise error
        except Exception:
            client.server.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == "warning: a request failed: boom\n"


def test_api_hint_is_the_agents_probabilities_and_value(board):
    """The hint's probabilities and value are the shipped agent's own (computed here
    independently of the server)."""
    client = board("tic_tac_toe", "pretrained:tic_tac_toe", 0)
    view = client.ok("POST", "/api/move", {"move": "a1"})
    view = client.ok("POST", "/api/agent")
    hint = client.ok("POST", "/api/hint")["hint"]
    env, state = replayed(view)
    policy = load_pretrained("tic_tac_toe")
    p = np.asarray(policy.probs(state))
    legal = {env.action_to_text(state, int(a)) for a in np.flatnonzero(state.legal_action_mask)}
    assert hint["spec"] == "pretrained:tic_tac_toe" and hint["side"] == "X"
    assert {h["move"] for h in hint["probs"]} <= legal and len(hint["probs"]) == len(legal)
    for h in hint["probs"]:
        assert h["p"] == pytest.approx(float(p[env.text_to_action(state, h["move"])]), abs=1e-5)
    assert hint["move"] == hint["probs"][0]["move"]  # the greedy agent plays its likeliest move
    assert hint["value"] == pytest.approx(float(policy.value(state)), abs=1e-5)


def test_a_loaded_record_never_names_a_program_to_run(board, tmp_path):
    """A record's ``nboard:<command>`` agent is passed over (loading a file from anyone would
    run any command); an agent's illegal:N move loads as the loss it was; a token of any
    characters is refused in one answer."""
    client = board("reversi", "random", 0, size=6)
    marker = tmp_path / "ran"
    head = 'game: reversi\noptions: {"size": 6}\nplayer0: human\n'
    view = client.ok("POST", "/api/load", {"text": head + f"player1: nboard:touch {marker}\n\n"})
    assert view["agent"] == "random" and not marker.exists()
    text = "game: tic_tac_toe\nplayer0: human\nplayer1: random\n\na1\nillegal:0\n"
    view = client.ok("POST", "/api/load", {"text": text})
    assert view["moves"] == ["a1", "illegal:0"] and view["result"] == "1-0"
    status, data = client.call("GET", "/api/state", token="t\u00e9")
    assert status == 403 and "X-Jaxgames-Token" in data["error"]


def test_a_hint_player_of_another_game_leaves_other_games_open():
    """``--hint`` names a tic-tac-toe agent: a new reversi game starts (hints from its agent)."""
    hint = "pretrained:tic_tac_toe"
    game = WebGame(shared_env("tic_tac_toe"), "random", 0, hint=hint)
    server = BoardServer(game, 0, hint=hint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = Client(server)
        view = client.ok("POST", "/api/new", {"game": "reversi", "options": {"size": 6}})
        assert view["game"] == "reversi"
        client.ok("POST", "/api/new", {"game": "tic_tac_toe"})
        assert server.game.hint_spec == hint
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("human", [0, 1])
def test_a_move_after_the_end_says_the_game_is_over(human):
    """After X wins on a3 (ply 5) a move is refused as 'the game is over (1-0)', also when the
    side to move after the last ply is the agent's (human 0), never as the agent's turn."""
    game = WebGame(shared_env("tic_tac_toe"), "random", human, moves=["a1", "b1", "a2", "b2", "a3"])
    assert game.over
    with pytest.raises(ValueError, match=r"the game is over \(1-0\)"):
        game.move("c3")


def test_api_animal_shogi_moves_drops_and_load(board):
    """Moves name two squares, drops a hand letter; a capture puts a piece in hand, whose
    target the board draws; a saved record loads back (the players' roles kept)."""
    client = board("animal_shogi", "human", 0)
    view = client.ok("GET", "/api/state")
    assert all(len(m["squares"]) == 2 and m["drop"] is None for m in view["legal"])
    for mv in ("b3b2", "c1b2"):  # sente's chick takes gote's chick, gote's elephant takes it
        view = client.ok("POST", "/api/move", {"move": mv})
    drops = [m for m in view["legal"] if m["drop"]]
    env, state = replayed(view)
    assert {m["move"] for m in drops} == {
        env.action_to_text(state, int(a))
        for a in np.flatnonzero(state.legal_action_mask)
        if "*" in env.action_to_text(state, int(a))
    }
    assert drops and all(m["drop"] == "C" and len(m["squares"]) == 1 for m in drops)
    hand = [g for g in ET.fromstring(view["svg"]).iter(SVG_NS + "g") if g.get("data-drop")]
    assert sorted((g.get("data-drop"), g.get("data-owner")) for g in hand) == [
        ("C", "0"),
        ("C", "1"),
    ]
    view = client.ok("POST", "/api/move", {"move": drops[0]["move"]})
    text = client.ok("GET", "/api/record")
    client.ok("POST", "/api/new", {"game": "tic_tac_toe", "agent": "random"})
    loaded = client.ok("POST", "/api/load", {"text": text, "name": "saved.txt"})
    assert loaded["moves"] == view["moves"] and loaded["players"] == ["human", "human"]
    assert loaded["message"] == "loaded 3 moves" and loaded["svg"] == view["svg"]


def test_api_forced_pass_is_a_move_without_squares_and_choices(board):
    """A reversi position where the mover must pass (loaded from a record with a start
    position): the pass is the one legal move and names no square; the record keeps the
    start. The players offered suit each game and size."""
    client = board("tic_tac_toe", "random", 0)
    text = (
        'game: reversi\noptions: {"size": 4}\nplayer0: human\nplayer1: human\n'
        "start: -XXX-XOXXXXXXXXX X\n\n"
    )
    view = client.ok("POST", "/api/load", {"text": text})
    assert view["legal"] == [{"move": "pass", "squares": [], "drop": None}]
    view = client.ok("POST", "/api/move", {"move": "pass"})
    assert [m["move"] for m in view["legal"]] == ["a2"] and view["players"] == ["human"] * 2
    record = records.parse(client.ok("GET", "/api/record"))
    assert record.start == "-XXX-XOXXXXXXXXX X" and record.moves == ["pass"]
    choices = client.ok("GET", "/api/choices")
    players = {
        game: {(p["spec"], p["options"].get("size")) for p in entries}
        for game, entries in choices["players"].items()
    }
    assert {("perfect", None), ("pretrained:tic_tac_toe", None)} <= players["tic_tac_toe"]
    assert {("pretrained:reversi6", 6), ("engine:3", 8), ("human", None)} <= players["reversi"]
    assert ("pretrained:reversi6", 8) not in players["reversi"]
    assert choices["games"]["reversi"]["names"] == ["black", "white"]


def test_agent_spec_adds_search():
    assert agent_spec("pretrained:reversi8", 64) == "mcts:64:pretrained:reversi8"
    assert agent_spec("sym:runs/x", 8) == "mcts:8:sym:runs/x"
    assert (
        agent_spec("mcts:64/8/1/w:pretrained:reversi8", 16) == "mcts:16/8/1.0/w:pretrained:reversi8"
    )
    assert agent_spec("uct:100", 500) == "uct:500"
    assert agent_spec("engine:3", 0) == "engine:3" and agent_spec("human", 5) == "human"
    for agent, n in (("random", 8), ("engine:3", 1), ("pretrained:x", -1)):
        with pytest.raises(ValueError):
            agent_spec(agent, n)


def test_cli_serves_the_page_and_bad_flags_are_one_line(tmp_path, capsys):
    """``jaxgames play --web --port 0`` prints the address of a page that answers; a bad port
    or a port in use is one ``error:`` line."""

    def play(*argv):
        args = cli.build_parser().parse_args(["play", *argv])
        return args.func(args), capsys.readouterr().err

    code, err = play("--web", "--port", "70000")
    assert code == 2 and err.startswith("error: --port must be in 0..65535")
    code, err = play("--simulations", "8", "--agent", "uct:4")
    assert code == 2 and "--simulations is for --web" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, err = play("--web", "--port", str(port))
        assert code == 2 and err.startswith(f"error: cannot listen on 127.0.0.1:{port} (")
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env["JAX_PLATFORMS"] = "cpu"
    command = [sys.executable, "-m", "jaxgames.cli", "play", "--web", "--port", "0"]
    child = subprocess.Popen(
        [*command, "--agent", "random", "--color", "o"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        line = child.stdout.readline()
        found = re.search(r"(http://127\.0\.0\.1:(\d+)/)", line)
        assert found, (line, child.stderr.read() if child.poll() is not None else "")
        with urllib.request.urlopen(found.group(1), timeout=60) as r:
            page = r.read().decode()
        token = re.search(r'name="jaxgames-token" content="([^"]+)"', page).group(1)
        req = urllib.request.Request(
            found.group(1) + "api/state", headers={"X-Jaxgames-Token": token}
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            view = json.load(r)
        assert view["players"] == ["random", "human"] and view["turn"] == "agent"
    finally:
        child.terminate()
        child.wait(timeout=30)


# ---------------------------------------------------------------------------- in a browser
def _browser():
    """(chromium, chromedriver) paths, or skip saying what is missing."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("the browser test needs selenium (pip install selenium; the test extra)")
    chrome = next(
        (p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p),
        None,
    )
    driver = shutil.which("chromedriver")
    if chrome is None or driver is None:
        pytest.skip(
            "the browser test needs chromium and chromedriver on the PATH "
            "(Debian: apt-get install chromium chromium-driver)"
        )
    return chrome, driver


@pytest.fixture
def browser(tmp_path):
    """A headless chromium driven by selenium, saving downloads into ``tmp_path/downloads``."""
    chrome, driver_path = _browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    downloads = tmp_path / "downloads"
    downloads.mkdir()
    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    options.add_argument("--window-size=1400,1000")
    prefs = {"download.default_directory": str(downloads), "download.prompt_for_download": False}
    options.add_experimental_option("prefs", prefs)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    driver.downloads = downloads
    yield driver
    driver.quit()


class Page:
    """The board page in the browser: waits for the page to be idle, reads what it shows,
    clicks squares."""

    def __init__(self, driver, url, wait=True):
        from selenium.webdriver.common.by import By

        self.driver, self.by = driver, By
        driver.get(url)
        if wait:
            self.idle()

    def find(self, css):
        return self.driver.find_element(self.by.CSS_SELECTOR, css)

    def idle(self, timeout=90):
        """Wait until no request is under way and it is not the agent's turn."""
        from selenium.webdriver.support.ui import WebDriverWait

        def ready(d):
            body = d.find_element(self.by.TAG_NAME, "body")
            error = d.find_element(self.by.ID, "error").text
            assert not error, error
            return body.get_attribute("data-busy") == "0" and body.get_attribute("data-turn") in (
                "human",
                "over",
            )

        WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(ready)
        return self.find("body").get_attribute("data-turn")

    def moves(self):
        return [li.text for li in self.driver.find_elements(self.by.CSS_SELECTOR, "#moves li")]

    def svg(self):
        return self.find("#board svg").get_attribute("outerHTML")

    def click(self, css):
        self.find(css).click()

    def square(self, name):
        self.click(f'#board .target[data-square="{name}"]')


def check_position(page, game, options):
    """The page's board and move list agree with an independent replay of its moves."""
    moves = page.moves()
    record = records.GameRecord(game=game, options=options, moves=moves)
    env, states = records.replay(record)
    assert svg_title(page.svg()) == env.to_text(states[-1])
    return env, states[-1]


def click_move(page, env, state, rng):
    """Click one legal move of ``state`` (chosen by ``rng``), by its squares."""
    legal = [env.action_to_text(state, int(a)) for a in np.flatnonzero(state.legal_action_mask)]
    move = legal[rng.integers(len(legal))]
    if move == "pass":
        page.click("#extra-moves .move-button")
    else:
        page.square(move)
    return move


def test_browser_plays_tic_tac_toe_undoes_saves_and_loads(board, browser):
    client = board("tic_tac_toe", "random", 0)
    page = Page(browser, client.server.url)
    rng = np.random.default_rng(0)
    env, state = check_position(page, "tic_tac_toe", {})
    ply = 0
    while page.idle() == "human":
        click_move(page, env, state, rng)
        page.idle()
        assert len(page.moves()) in (ply + 1, ply + 2)  # the move, and the agent's reply
        env, state = check_position(page, "tic_tac_toe", {})
        ply = len(page.moves())
    assert page.find("#status").text.startswith("game over: ")
    assert page.find("body").get_attribute("data-turn") == "over"
    assert records.result_of(state) in page.find("#status").text
    # undo reopens the game; finish it again by clicks
    page.click("#undo")
    assert page.idle() == "human" and len(page.moves()) < ply
    assert page.find("#message").text.startswith("took back: ")
    env, state = check_position(page, "tic_tac_toe", {})
    while page.idle() == "human":
        click_move(page, env, state, rng)
        page.idle()
        env, state = check_position(page, "tic_tac_toe", {})
    # save: the downloaded record replays (jaxgames replay) to the page's final position
    page.click("#save")
    page.idle()
    deadline = time.monotonic() + 20
    while not list(browser.downloads.glob("*.txt")) and time.monotonic() < deadline:
        time.sleep(0.1)
    (saved,) = browser.downloads.glob("*.txt")
    record = transcripts.load(str(saved))
    assert record.moves == page.moves() and record.players == ("human", "random")
    assert record.result == records.result_of(state) != "*"
    args = cli.build_parser().parse_args(["replay", str(saved), "--auto"])
    import io

    out = io.StringIO()
    assert args.func(args, stdout=out) == 0
    assert f"result: {record.result}" in out.getvalue()
    _, states = records.replay(record)
    assert env.to_text(states[-1]) == env.to_text(state) == svg_title(page.svg())
    # a new game from the form, then the saved one loaded back from the file
    page.click("#new")
    page.idle()
    assert page.moves() == [] or page.find("body").get_attribute("data-turn") == "human"
    page.find("#load").send_keys(str(saved))
    page.idle()
    assert page.moves() == record.moves and page.find("#message").text.startswith("loaded ")


def test_browser_a_new_game_asked_while_the_agent_thinks_comes_after(board, browser):
    """New game clicked while the agent is thinking: the request waits its turn and is played
    after the agent's move, not dropped (the form and the game agree)."""
    from selenium.webdriver.support.ui import WebDriverWait

    client = board("tic_tac_toe", "uct:20000", 1)  # the agent opens and thinks a while
    page = Page(browser, client.server.url, wait=False)
    WebDriverWait(browser, 60, poll_frequency=0.02).until(
        lambda d: "thinking" in page.find("#status").text
    )
    page.find("#agent").clear()
    page.find("#agent").send_keys("random")
    page.click("#new")
    assert page.idle() == "human" and len(page.moves()) == 1  # the new agent's opening move
    assert page.find("#message").text.startswith("agent random plays ")
    assert (client.server.game.agent, client.server.game.human) == ("random", 1)


def test_browser_reversi_and_animal_shogi_by_clicks(board, browser):
    """Reversi 6x6 from the page's form, a few moves against random; animal shogi between two
    humans: a piece moved by two clicks, a capture, a drop from the hand."""
    client = board("tic_tac_toe", "random", 0)
    page = Page(browser, client.server.url)
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(page.find("#game")).select_by_value("reversi")
    size = page.find("#size")
    size.clear()
    size.send_keys("6")
    agent = page.find("#agent")
    agent.clear()  # leaving the size field offers the players of 6x6
    offered = {
        o.get_attribute("value") for o in browser.find_elements(By.CSS_SELECTOR, "#agents option")
    }
    assert {"random", "engine:3", "pretrained:reversi6"} <= offered
    assert "pretrained:reversi8" not in offered
    agent.send_keys("random")
    page.click("#new")
    assert page.idle() == "human" and page.moves() == []
    assert "jaxgames.make('reversi', size=6)" in page.find("#title").text
    env, state = check_position(page, "reversi", {"size": 6})
    rng = np.random.default_rng(1)
    for _ in range(3):
        if page.idle() != "human":
            break
        before = len(page.moves())
        move = click_move(page, env, state, rng)
        page.idle()
        assert page.moves()[before] == move
        env, state = check_position(page, "reversi", {"size": 6})
    assert len(page.moves()) >= 6
    # animal shogi, two humans
    Select(page.find("#game")).select_by_value("animal_shogi")
    agent.clear()
    agent.send_keys("human")
    page.click("#new")
    assert page.idle() == "human"
    page.square("b3")  # select sente's chick: its destination is marked
    assert page.find('#board .target[data-square="b3"]').get_attribute("class") == "target sel"
    page.square("b2")  # ... and take gote's chick
    page.idle()
    page.square("c1")  # gote's elephant takes the chick back
    page.square("b2")
    page.idle()
    assert page.moves() == ["b3b2", "c1b2"]
    page.click('#board .target[data-drop="C"][data-owner="0"]')
    page.square("a3")
    page.idle()
    assert page.moves() == ["b3b2", "c1b2", "C*a3"]
    check_position(page, "animal_shogi", {"max_steps": 256})
    page.square("b4")  # sente's lion: gote cannot move it or reach it
    assert page.find("#message").text == "no legal move from or onto b4"
    page.square("b3")  # gote can only drop its chick there
    assert page.find("#message").text.startswith("first pick the piece")
    assert page.moves() == ["b3b2", "c1b2", "C*a3"]
