"""Pretrained agents shipped in the package (every folder in jaxgames/pretrained/ is covered),
exported agents (``jaxgames export``) and the specs that name them."""

import json
import os
import shlex
import shutil
import socket
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scripts import script
from tiny_configs import TINY_TRAIN_ARGS, train_args

import jaxgames
from jaxgames import cli, specs
from jaxgames.agents.registry import algorithm_module
from jaxgames.agents.search import SearchPolicy
from jaxgames.cli.train import train_config
from jaxgames.core import identity_symmetries
from jaxgames.pretrained import (
    PRETRAINED_DIR,
    _steps_in_all,
    _training_stages,
    export_agent,
    load_pretrained,
    load_pretrained_agent,
    measure_vs_random,
    pretrained_names,
    read_card,
    render_card,
    shipped_table,
    stage_command,
)
from jaxgames.provenance import machine_description
from jaxgames.runs import (
    CARD_MD_FILE,
    PARAMS_FILE,
    load_agent,
    read_run_config,
    save_params,
)
from jaxgames.specs import check_spec, make_opponent

SHIPPED = pretrained_names()

# win rate against random required per colour; tic-tac-toe's second player cannot reach 95%:
# perfect play itself wins 80.0% of those games (jaxgames eval --a perfect --b random
# --games 400 --seed 0: W 160 D 40 L 0 as second)
MIN_WIN_RATE = {("tic_tac_toe", "as_second"): 0.75}
MAX_LOSS_RATE = 0.05


def test_shipped_folder_is_small_and_lists_its_agents():
    assert "tic_tac_toe" in SHIPPED
    size = sum(
        os.path.getsize(os.path.join(dp, f))
        for dp, _, files in os.walk(PRETRAINED_DIR)
        for f in files
        if not f.endswith(".pyc")
    )
    assert size < 20e6, f"jaxgames/pretrained is {size / 1e6:.1f} MB"
    for name in SHIPPED:
        files = set(os.listdir(os.path.join(PRETRAINED_DIR, name)))
        assert {"config.json", "params.msgpack", "card.json", "card.md"} <= files, name


def test_docs_table_lists_the_shipped_cards():
    """docs/pretrained.md's table is the cards' (experiments/refresh_pretrained.py rewrites it
    whenever it re-measures an agent): a card changed by hand or a new agent shows up here."""
    refresh_pretrained = script("refresh_pretrained")

    with open(refresh_pretrained.DOCS, encoding="utf-8") as f:
        _, table, _ = refresh_pretrained.split_docs(f.read())
    assert table == shipped_table(), "stale: rerun experiments/refresh_pretrained.py"
    assert [line.split("`")[1] for line in table.splitlines()[2:]] == SHIPPED
    with pytest.raises(ValueError, match="lacks the lines"):
        refresh_pretrained.split_docs("## Shipped\n| name |\n")


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_agent(name, monkeypatch):
    """Loads without the network, acts legally under jit/vmap, beats random as each colour,
    and reproduces its card's numbers exactly (same games: same seed)."""

    def no_network(*args, **kwargs):
        raise AssertionError("loading a pretrained agent must not use the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    load_pretrained_agent.cache_clear()
    load_pretrained.cache_clear()
    policy = load_pretrained(name)
    env = load_pretrained_agent(name).env
    card = read_card(os.path.join(PRETRAINED_DIR, name))
    assert card["name"] == name and card["spec"] == f"pretrained:{name}"
    assert card["game"] == env.name and card["training"]["env_steps"] > 0
    assert card["reproduce"].startswith("python experiments/refresh_pretrained.py")

    # legal under jit(vmap) in positions of random games, with a value in [-1, 1]
    n = 64
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(1), n))
    act = jax.jit(jax.vmap(policy))
    value = jax.jit(jax.vmap(policy.value))
    step = jax.jit(jax.vmap(env.step))
    for k in range(6):
        keys = jax.random.split(jax.random.PRNGKey(k), n)
        a = act(keys, states)
        live = np.asarray(jnp.any(states.legal_action_mask, axis=-1))
        legal = np.asarray(states.legal_action_mask[jnp.arange(n), a])
        assert legal[live].all(), name
        v = np.asarray(value(states))
        assert v.shape == (n,) and np.all(np.abs(v) <= 1.0 + 1e-6)
        r = jax.vmap(jaxgames.random_action)(keys, states.legal_action_mask)
        states = step(states, r)

    vs = card["measurements"]["vs_random"]
    measured = measure_vs_random(policy, env, vs["games_per_colour"], vs["seed"])
    for side in ("as_first", "as_second"):
        assert measured[side] == vs[side], (name, side)  # the card is reproduced exactly
        r = measured[side]
        games = r["wins"] + r["draws"] + r["losses"]
        assert games >= 200
        assert r["wins"] >= MIN_WIN_RATE.get((env.name, side), 0.95) * games, (name, side, r)
        assert r["losses"] <= MAX_LOSS_RATE * games, (name, side, r)


def config_of_command(command: str):
    """The config that the ``jaxgames train ...`` command trains, parsed as the CLI does."""
    return train_config(train_args(shlex.split(command)[1:]))


@pytest.mark.parametrize("name", SHIPPED)
def test_card_keeps_the_config_of_every_stage(name):
    """The card keeps the whole config of every training stage (the newest: the shipped
    config.json's), and the command card.md shows for a stage, parsed as the CLI does, gives
    that stage's config. The commands are derived against today's presets when the card is
    rendered, so a preset change re-renders card.md (one command) and never needs a config
    the card no longer has."""
    folder = os.path.join(PRETRAINED_DIR, name)
    algorithm, config = read_run_config(folder)
    card = read_card(folder)
    stages = _training_stages(card["training"])
    assert stages[0]["algorithm"] == algorithm
    # normalised: the card keeps the fields of its day (retired ones at their old defaults)
    assert algorithm_module(algorithm).Config.from_dict(stages[0]["config"]) == config
    for stage in stages:
        stage_config = algorithm_module(stage["algorithm"]).Config.from_dict(stage["config"])
        command = stage_command(stage)
        assert shlex.split(command)[:3] == ["jaxgames", "train", stage["algorithm"]]
        assert config_of_command(command) == stage_config, (name, command)
    with open(os.path.join(folder, CARD_MD_FILE), encoding="utf-8") as f:
        assert f.read() == render_card(card), (
            f"{name}/card.md is stale (a preset or the card layout changed): run "
            "python experiments/refresh_pretrained.py --render-only"
        )


def test_card_commands_survive_a_preset_change(monkeypatch):
    """A preset changed after an agent shipped (as the reversi preset's ``features`` was)
    changes the commands card.md derives, and they still give the configs the card keeps."""
    from jaxgames.agents import presets

    card = read_card(os.path.join(PRETRAINED_DIR, "reversi8"))
    before = [stage_command(s) for s in _training_stages(card["training"])]
    changed = {**presets.PRESETS["alphazero"]["reversi"], "features": "observation"}
    monkeypatch.setitem(presets.PRESETS["alphazero"], "reversi", {**changed, "root_noise": 0.5})
    for stage, old in zip(_training_stages(card["training"]), before):
        command = stage_command(stage)
        assert "--features=mobility" in command and "--root-noise=0.25" in command, old
        config_class = algorithm_module(stage["algorithm"]).Config
        assert config_of_command(command) == config_class.from_dict(stage["config"])


def test_unknown_name_lists_the_shipped_ones(ttt):
    for call in (
        lambda: load_pretrained("nope"),
        lambda: make_opponent("pretrained:nope", ttt),
        lambda: check_spec("mcts:4:pretrained:nope", ttt),
    ):
        with pytest.raises(ValueError, match="unknown pretrained agent 'nope'; shipped: .*tic_tac"):
            call()
    with pytest.raises(ValueError, match="use 'pretrained:<name>'"):
        check_spec("pretrained:", ttt)
    assert jaxgames.pretrained_names() == SHIPPED
    assert jaxgames.load_pretrained is load_pretrained


def test_specs_and_cli(ttt, capsys):
    assert check_spec(" pretrained:tic_tac_toe", ttt) == "pretrained:tic_tac_toe"
    assert make_opponent("pretrained:tic_tac_toe", ttt) is load_pretrained("tic_tac_toe")
    search = make_opponent("mcts:4:pretrained:tic_tac_toe", ttt)
    assert isinstance(search, SearchPolicy) and search.guide is load_pretrained("tic_tac_toe")
    with pytest.raises(ValueError, match="pretrained agent 'tic_tac_toe' was trained on"):
        check_spec("pretrained:tic_tac_toe", jaxgames.make("reversi", size=6))
    # the game is read from the agent; 50 games against random: no loss
    assert (
        cli.main(["eval", "--a", "pretrained:tic_tac_toe", "--b", "random", "--games", "50"]) == 0
    )
    out = capsys.readouterr().out
    assert "A = pretrained:tic_tac_toe" in out and "L 0 / 50" in out
    assert cli.main(["eval", "--a", "pretrained:nope"]) == 2
    assert "unknown pretrained agent 'nope'" in capsys.readouterr().err


def test_sym_spec_averages_an_agent_over_the_symmetries(ttt, capsys):
    """``sym:<agent>``: normal form, as a search's guide, the agent found through it, one
    shipped object per process, one-line errors, and a match on the command line."""
    from jaxgames.pretrained import pretrained_dir
    from jaxgames.specs import agent_run

    r6 = jaxgames.make("reversi", size=6)
    assert check_spec(" sym:pretrained:reversi6", r6) == "sym:pretrained:reversi6"
    assert check_spec("mcts:4:sym:pretrained:reversi6", r6) == "mcts:4:sym:pretrained:reversi6"
    assert agent_run("mcts:4:sym:pretrained:reversi6") == pretrained_dir("reversi6")
    averaged = make_opponent("sym:pretrained:reversi6", r6)
    assert averaged is make_opponent("sym:pretrained:reversi6", r6)
    assert averaged is load_pretrained("reversi6", True, True)  # one object however asked for
    assert (
        averaged.agent.symmetries.count == 8
        and averaged.params is load_pretrained("reversi6").params
    )
    assert load_pretrained("reversi6").agent.symmetries is None
    search = make_opponent("mcts:4:sym:pretrained:reversi6", r6)
    assert isinstance(search, SearchPolicy) and search.guide is averaged
    # a game whose only symmetry is the identity (the Env default, e.g. a plugin game; no
    # shipped game is one): a stand-in
    plain = types.SimpleNamespace(
        name="plain", config={}, num_actions=4, symmetries=identity_symmetries((2, 2, 1), 4)
    )
    for bad, env, match in [
        ("sym:", r6, "use 'sym:<run directory>'"),
        ("sym:random", r6, "use 'sym:<run directory>'"),
        ("sym:mcts:4:pretrained:reversi6", r6, "use 'sym:<run directory>'"),
        ("sym:sym:pretrained:reversi6", r6, "use 'sym:<run directory>'"),
        ("sym:pretrained:tic_tac_toe", r6, "was trained on"),
        ("sym:pretrained:nope", r6, "unknown pretrained agent 'nope'"),
        ("sym:pretrained:tic_tac_toe", plain, "plain has no symmetry besides the identity"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_spec(bad, env)
    assert (
        cli.main(["eval", "--a", "sym:pretrained:tic_tac_toe", "--b", "random", "--games", "20"])
        == 0
    )
    out = capsys.readouterr().out
    assert "A = sym:pretrained:tic_tac_toe" in out and "L 0 / 20" in out


def test_solve_spec_wraps_any_player(ttt, capsys, tmp_path):
    """``solve:E:<player>``: normal form, one-line errors, the agent found through it (the game
    is read from it, its training partners are not rated), and a match on the command line."""
    from jaxgames.cli.rate import held_out_rungs
    from jaxgames.pretrained import pretrained_dir
    from jaxgames.specs import agent_run

    r6 = jaxgames.make("reversi", size=6)
    spec = "solve:010:mcts:4:pretrained:reversi6"
    assert check_spec(spec, r6) == "solve:10:mcts:4:pretrained:reversi6"
    assert check_spec("solve:4:engine:2", r6) == "solve:4:engine:2"
    assert agent_run(spec) == pretrained_dir("reversi6")
    # the wrapped agent's training partners are skipped: a copy of the shipped agent whose
    # config names random as a partner (the shipped ones train in pure self-play)
    partnered = tmp_path / "partnered"
    shutil.copytree(pretrained_dir("reversi6"), partnered)
    with open(partnered / "config.json") as f:
        record = json.load(f)
    record["config"]["partners"] = {"random": 0.25}
    with open(partnered / "config.json", "w") as f:
        json.dump(record, f)
    rungs = ["random", "engine:2"]
    assert held_out_rungs(f"solve:10:mcts:4:{partnered}", rungs) == (["engine:2"], ["random"])
    assert held_out_rungs(spec, rungs) == (rungs, [])
    for bad, env, match in [
        ("solve:0:random", r6, "number of empty squares >= 1"),
        ("solve:x:random", r6, "number of empty squares >= 1"),
        ("solve:21:random", r6, "at most 20"),
        ("solve:10", r6, "use 'solve:E:<player>'"),
        ("solve:4:random", ttt, "exists only for reversi"),
        ("perfect", r6, "tic_tac_toe and animal_shogi.*beyond the exact solver.*solve:E:"),
        ("solve:4:pretrained:tic_tac_toe", r6, "was trained on"),
    ]:
        with pytest.raises(ValueError, match=match):
            check_spec(bad, env)
    assert cli.main(["eval", "--a", "solve:6:pretrained:reversi6", "--games", "4"]) == 0
    assert "A = solve:6:pretrained:reversi6" in capsys.readouterr().out


def test_export_round_trip(tmp_path, capsys, monkeypatch):
    """A tiny run exported and loaded back plays identically; the card's training command
    rebuilds the run's config; bad targets and damaged parameters are one-line errors; the
    refresh script measures an exported agent into its card."""
    runs = str(tmp_path / "runs")
    train = ["train", "ppo", "--game", "tic_tac_toe", "--seed", "3", "--runs-dir", runs]
    assert cli.main(train + TINY_TRAIN_ARGS + ["--no-progress"]) == 0
    run = os.path.join(runs, "tic_tac_toe-ppo-seed3")
    out = str(tmp_path / "shared" / "tiny")
    assert cli.main(["export", run, out]) == 0
    assert sorted(os.listdir(out)) == ["card.json", "card.md", "config.json", "params.msgpack"]
    with open(os.path.join(run, "config.json")) as f, open(os.path.join(out, "config.json")) as g:
        assert f.read() == g.read()

    a, b = load_agent(run), load_agent(out)
    assert (b.algorithm, b.config, b.chunk) == (a.algorithm, a.config, a.chunk)
    for x, y in zip(jax.tree_util.tree_leaves(a.params), jax.tree_util.tree_leaves(b.params)):
        np.testing.assert_array_equal(x, y)
    env = a.env
    states = jax.vmap(env.init)(jax.random.split(jax.random.PRNGKey(0), 32))
    keys = jax.random.split(jax.random.PRNGKey(1), 32)
    for greedy in (True, False):
        pa, pb = a.policy(greedy), b.policy(greedy)
        np.testing.assert_array_equal(jax.vmap(pa)(keys, states), jax.vmap(pb)(keys, states))
    assert isinstance(make_opponent(f"mcts:2:{out}", env), SearchPolicy)

    card = read_card(out)
    t = card["training"]
    assert t["chunk"] == a.chunk and t["env_steps"] > 0 and t["wall_clock_seconds"] >= 0
    # where it trained: the run's config.json records the machine, the card repeats it
    assert t["machine"] == machine_description()
    assert f" on {machine_description()} (run `" in open(os.path.join(out, "card.md")).read()
    assert card["params"]["bytes"] == os.path.getsize(os.path.join(out, PARAMS_FILE))
    # the card's command, parsed as the CLI does, gives the run's config
    command = stage_command(t)
    words = shlex.split(command)
    assert words[:3] == ["jaxgames", "train", "ppo"] and '--net={"hidden": 8, "layers": 1}' in words
    assert config_of_command(command) == a.config and t["config"] == a.config.to_dict()

    # a run started from the exported agent (init_from): its card names that agent's training
    warm = ["train", "ppo", "--game", "tic_tac_toe", "--seed", "4", "--runs-dir", runs]
    assert cli.main(warm + TINY_TRAIN_ARGS + [f"--init-from={out}", "--no-progress"]) == 0
    out2 = str(tmp_path / "warm")
    assert cli.main(["export", os.path.join(runs, "tic_tac_toe-ppo-seed4"), out2]) == 0
    sha = card["params"]["sha256"]  # which parameters it started from, whatever out holds later
    assert read_card(out2)["training"]["started_from"] == {"spec": out, **t, "params_sha256": sha}
    assert f"; parameters sha256 `{sha[:16]}...`) |" in open(os.path.join(out2, "card.md")).read()
    row = f"| started from | `{out}` as it was then: `{command}`, {t['env_steps']:,} env steps"
    assert row in open(os.path.join(out2, "card.md")).read()
    t2 = read_card(out2)["training"]  # the shipped table counts the steps of both runs
    both = f"{t['env_steps'] + t2['env_steps']:,} ({t['env_steps']:,} + {t2['env_steps']:,})"
    assert _steps_in_all(t2) == both and _steps_in_all(t) == f"{t['env_steps']:,}"
    # the agent it started from damaged since (a card without "params"): exported all the same
    card_path = os.path.join(out, "card.json")
    kept = open(card_path).read()
    json.dump({k: v for k, v in json.loads(kept).items() if k != "params"}, open(card_path, "w"))
    seed4 = os.path.join(runs, "tic_tac_toe-ppo-seed4")
    assert cli.main(["export", seed4, str(tmp_path / "warm2")]) == 0, capsys.readouterr().err
    assert read_card(str(tmp_path / "warm2"))["training"]["started_from"] == {"spec": out}
    assert cli.main(["export", out, str(tmp_path / "re")]) == 2  # re-exported: one line
    assert "card.json is damaged: it needs a 'training' object" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "re")
    open(card_path, "w").write(kept)
    link = str(tmp_path / "link")  # a link to the agent is the agent: never exported onto
    os.symlink(out, link)
    with pytest.raises(ValueError, match="onto itself"):
        export_agent(out, link, overwrite=True)
    assert sorted(os.listdir(out)) == ["card.json", "card.md", "config.json", "params.msgpack"]

    # a second export into the folder needs --force; a non-export folder is never replaced
    assert cli.main(["export", run, out]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert cli.main(["export", run, out, "--force"]) == 0
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.txt").write_text("mine")
    assert cli.main(["export", run, str(notes), "--force"]) == 2
    assert "holds something other than an exported agent" in capsys.readouterr().err
    assert os.listdir(notes) == ["mine.txt"] and (notes / "mine.txt").read_text() == "mine"
    # a replacing export that fails before its card leaves no card of the agent it replaced
    import jaxgames.pretrained as pretrained

    def lowering_fails(loaded, out_dir):
        raise ValueError("lowering failed")

    monkeypatch.setattr(pretrained, "check_portable_available", lambda: None)
    monkeypatch.setattr(pretrained, "export_portable", lowering_fails)
    with pytest.raises(ValueError, match="lowering failed"):
        export_agent(run, out, overwrite=True, portable=True)
    assert not os.path.exists(os.path.join(out, "card.json"))
    monkeypatch.undo()
    assert cli.main(["export", run, out, "--force"]) == 0
    assert cli.main(["export", run, str(tmp_path / "runs")]) == 2
    assert "is not empty" in capsys.readouterr().err
    assert cli.main(["export", str(tmp_path / "nowhere"), out]) == 2
    assert "does not exist" in capsys.readouterr().err

    # refresh script: measurements and the command reproducing them land in the card
    refresh_pretrained = script("refresh_pretrained")

    dest = str(tmp_path / "shared")
    args = ["--measure-only", "tiny", "--dest", dest, "--games-per-colour", "4", "--no-ladder"]
    assert refresh_pretrained.main(args) == 0
    card = read_card(out)
    vs = card["measurements"]["vs_random"]
    assert vs == {**measure_vs_random(b.policy(), env, 4, 0), "command": vs["command"]}
    assert (
        vs["command"] == f"jaxgames eval --a {out} --b random --games 8 --opening-plies 0 --seed 0"
    )
    # the card's command plays exactly the measured games (eval's default openings differ)
    replayed = str(tmp_path / "vs.json")
    assert cli.main([*shlex.split(vs["command"])[1:], "--json", replayed]) == 0
    with open(replayed) as f:
        data = json.load(f)
    for colour in ("as_first", "as_second"):
        assert {k: data[colour][k] for k in ("wins", "draws", "losses")} == vs[colour]
    assert card["reproduce"].endswith("--measure-only tiny --games-per-colour 4 --no-ladder")
    assert "## Against random (4 games per colour, seed 0)" in open(f"{out}/card.md").read()
    assert refresh_pretrained.main(["--measure-only", "nope", "--dest", dest]) == 2
    assert "not shipped: nope" in capsys.readouterr().err
    # a ladder rung that cannot play here (animal shogi's perfect before the solve): refused
    # before anything is written, not a card rated on part of the ladder
    before = open(f"{out}/card.json").read()
    why = {"perfect": "no table here"}
    monkeypatch.setattr(specs, "missing_data", lambda rung, env: why.get(rung))
    assert refresh_pretrained.main(["--measure-only", "tiny", "--dest", dest]) == 2
    assert "rung 'perfect' cannot play here" in capsys.readouterr().err
    assert open(f"{out}/card.json").read() == before
    monkeypatch.undo()
    with open(f"{out}/card.md", "w") as f:  # --render-only rewrites card.md from card.json
        f.write("stale")
    assert refresh_pretrained.main(["--render-only", "--dest", dest]) == 0
    assert open(f"{out}/card.md").read() == render_card(card)
    # a card written before the stages' configs were kept shows the command it stored
    assert stage_command({"command": "jaxgames train ppo --game tic_tac_toe"}).endswith("toe")

    # parameters of another network: a one-line ValueError naming the mismatch
    other = jax.tree_util.tree_map(lambda x: np.zeros((3, *x.shape), x.dtype), a.params)
    save_params(other, out)
    with pytest.raises(ValueError, match="does not fit the network of its config.json"):
        load_agent(out)
    with open(os.path.join(out, PARAMS_FILE), "wb") as f:
        f.write(b"\x00garbage")
    with pytest.raises(ValueError, match="does not hold this agent's parameters"):
        load_agent(out)
    with open(os.path.join(out, "card.json")) as f:
        json.load(f)  # untouched by the failed loads


def test_a_policy_given_another_board_says_so():
    """A network asked about observations of another shape (reversi8 on a 6x6 board) is one
    ValueError naming both shapes, not a parameter-shape error from inside flax."""
    key = jax.random.PRNGKey(0)
    policy = jaxgames.load_pretrained("reversi8")
    with pytest.raises(ValueError, match=r"shape \(8, 8, 2\).*got \(6, 6, 2\).*board size"):
        policy(key, jaxgames.make("reversi", size=6).init(key))
    assert 0 <= int(policy(key, jaxgames.make("reversi", size=8).init(key))) < 65
