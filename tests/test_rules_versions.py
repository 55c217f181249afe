"""Rules versions: runs, ladders, model cards and game records store the game's rules version;
loading one made under another version warns in one line; files without one are version 1."""

import json
import os
import shutil
import warnings

import pytest

import jaxgames
from jaxgames import cli, records
from jaxgames.core import RulesVersionWarning
from jaxgames.evaluation.ladder import load_ladder, save_ladder
from jaxgames.games import env_class
from jaxgames.pretrained import PRETRAINED_DIR, export_agent, read_card
from jaxgames.runs import CONFIG_FILE, check_run_dir, config_record, load_agent, read_run_config


@pytest.fixture
def rules_v2(monkeypatch):
    """This code plays tic-tac-toe rules version 2 (every file here was made under 1)."""
    monkeypatch.setattr(env_class("tic_tac_toe"), "rules_version", 2)


def _silent(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return fn(*args)


def _warns_once(fn, *args, match="rules version 1; this jaxgames plays version 2"):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    rules = [w for w in caught if issubclass(w.category, RulesVersionWarning)]
    assert len(rules) == 1, [str(w.message) for w in caught]
    assert match in str(rules[0].message) and "\n" not in str(rules[0].message)
    return out, str(rules[0].message)


def test_every_game_has_a_rules_version():
    for name in jaxgames.registered_games():
        assert isinstance(env_class(name).rules_version, int) and env_class(name).rules_version >= 1


def test_runs_store_it_and_old_runs_are_version_1(tmp_path, rules_v2):
    folder = os.path.join(PRETRAINED_DIR, "tic_tac_toe")  # config.json predates versions
    assert "rules_version" not in json.load(open(os.path.join(folder, CONFIG_FILE)))
    _, message = _warns_once(read_run_config, folder)
    assert "tic_tac_toe" in message and folder in message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesVersionWarning)
        config = load_agent(folder).config
    assert config_record("ppo", config)["rules_version"] == 2


def test_old_files_load_silently_under_version_1(tmp_path):
    folder = os.path.join(PRETRAINED_DIR, "tic_tac_toe")
    _silent(read_run_config, folder)
    _silent(read_card, folder)
    _silent(load_ladder, "tic_tac_toe")
    rec = records.parse("game: tic_tac_toe\n\na1\n")
    assert rec.rules_version == 1
    _silent(records.replay, rec)


def test_exported_card_and_config_carry_the_run_version(tmp_path, rules_v2):
    src = tmp_path / "src"
    shutil.copytree(os.path.join(PRETRAINED_DIR, "tic_tac_toe"), src)
    out = str(tmp_path / "out")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesVersionWarning)
        card = export_agent(str(src), out)
    assert card["rules_version"] == 1  # trained under version 1, whatever exports it
    _warns_once(read_card, out)
    # a run written under version 2 reads silently under version 2
    data = json.load(open(src / CONFIG_FILE))
    data["rules_version"] = 2
    json.dump(data, open(src / CONFIG_FILE, "w"))
    _silent(read_run_config, str(src))


def test_ladders_store_it(tmp_path, rules_v2):
    ladder, message = _warns_once(load_ladder, "tic_tac_toe")
    assert "ladder" in message and ladder.rules_version == 1
    ladder.rules_version = 2
    path = save_ladder(ladder, str(tmp_path / "l.json"))
    assert json.load(open(path))["rules_version"] == 2
    assert _silent(load_ladder, path).rules_version == 2


def test_records_store_it(tmp_path, rules_v2, capsys):
    env = jaxgames.make("tic_tac_toe")
    rec = records.new_record(env, ["a1", "b1"], ["human", "random"])
    text = records.to_text(rec)
    assert "rules: 2\n" in text
    assert records.parse(text).rules_version == 2
    _silent(records.replay, records.parse(text))
    old = str(tmp_path / "old.txt")
    open(old, "w").write(text.replace("rules: 2\n", ""))
    _, message = _warns_once(records.load, old)
    assert message.startswith(old)
    # on the command line: one warning (the CLI prints each as one line), the replay shown
    code, _ = _warns_once(cli.main, ["replay", old, "--auto"])
    assert code == 0 and "a1" in capsys.readouterr().out
    with pytest.raises(records.RecordError, match=r":2: rules must be"):
        records.parse("game: tic_tac_toe\nrules: two\n\na1\n")


def test_resuming_a_run_made_under_other_rules_warns(tmp_path, rules_v2):
    run = tmp_path / "run"
    shutil.copytree(os.path.join(PRETRAINED_DIR, "tic_tac_toe"), run)
    data = json.load(open(run / CONFIG_FILE))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RulesVersionWarning)
        record = config_record(data["algorithm"], read_run_config(str(run))[1])
    assert record["rules_version"] == 2  # what a new run writes today
    assert _warns_once(check_run_dir, str(run), record)[0] is True
    json.dump({**data, "rules_version": 2}, open(run / CONFIG_FILE, "w"))
    assert _silent(check_run_dir, str(run), record) is True
