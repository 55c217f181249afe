"""Gumbel AlphaZero: the network learns from its own search, entirely on device.

Same rollout-then-learn loop as PPO (:mod:`jaxgames.agents.rollout_learning`), but every
learner move is chosen by a Gumbel MuZero search (:func:`jaxgames.agents.search.search_batch`,
mctx) over the real game, guided by the current network, and the network is trained to
predict what the search found (Danihelka et al. 2022, "Policy improvement by planning with
Gumbel"):

    act       per ply, in num_envs games: search with num_simulations simulations and Gumbel
              noise (gumbel_scale) -> the move to play and the improved policy pi' (the
              softmax of prior logits + completed Q-values); partners reply inside the step
              (:mod:`jaxgames.agents.games_batch`), exactly as for PPO
    targets   policy: pi' of each searched position; value: the game's outcome from the
              mover's view (negamax returns with gae_lambda = 1,
              :func:`jaxgames.agents.common.negamax_gae`; the network's value bootstraps only
              games cut by the rollout's end), as in AlphaZero (Silver et al. 2018),
              discounted by gamma per ply (1 except animal shogi's 0.99: its games can loop,
              and a win sooner must be worth more than shuffling pieces until a repetition);
              with ``score_utility`` > 0 the outcome mixed with the final score margin, in the
              training games and the training search alike (:class:`jaxgames.core.ScoreUtility`)
    replay    with ``replay_size`` > 0 the (obs, mask, pi', value target) of every searched
              position goes into an on-device ring of the last ``replay_size`` positions
              (:mod:`jaxgames.agents.replay`, part of the checkpointed train state) and each
              update draws its update_epochs x batch minibatch examples uniformly from it
              (AlphaZero trains on a window of recent self-play games); 0: shuffled passes
              over the fresh rollout only
    augment   each example of a minibatch is moved by a uniformly drawn symmetry of the game
              (``env.symmetries``: the 8 rotations/reflections of a reversi or tic-tac-toe
              board, the left-right mirror of animal shogi), as AlphaGo Zero / AlphaZero did
              with the 8 symmetries of Go (Silver et al. 2017, 2018): a symmetry of the rules
              maps a position's search target onto the moved position's
    learn     update_epochs x num_minibatches Adam steps on
              cross-entropy(pi', masked policy) + vf_coef * 0.5 * (V - target)^2

    train = make_train(AlphaZeroConfig(game="tic_tac_toe"))     # pure; jit it, vmap it over seeds

``replay_size=0, augment=False`` is the loop before replay and augmentation, bit for bit.
Playout caps (``full_search_every`` > 1; KataGo's playout-cap randomisation, Wu 2019 "Accelerating
self-play learning in Go", in lockstep over the batch): only every few plies get the full search
and become training positions, the rest are played with a cheap search; on reversi 6x6 at equal
training time (5 min, seed 0; docs/results.md) caps of 32/4 simulations every 4th ply came out
level with the preset as networks alone (51.5% [48.5, 54.6] head to head) and lost with 16
simulations each (43.9% [39.1, 48.8]); 16 simulations and an MLP of width 512 came out level,
a small CNN lost as a network alone (45.8%; level after a 30-minute run, 48.9% [45.8, 52.0]
against the shipped MLP agent), 4 simulations lost (41.3%), so the presets keep 8
simulations and the MLP.

Reanalysis (``reanalyse_rows`` > 0, with replay): the buffer also keeps each position's game
state, and every update searches ``reanalyse_rows`` stored plies of all games again with the
current network (a uniformly drawn window of consecutive rows) and writes the fresh improved
policies over their stored ones, so the replayed policy targets follow the network instead of
the one that played them (MuZero Reanalyse, Schrittwieser et al. 2021, "Online and offline
reinforcement learning by planning with a learned model"; EfficientZero, Ye et al. 2021,
revisits its targets the same way). The value targets are game outcomes and do not go stale,
so they stay. A reanalysed ply costs what a played one does (``num_simulations + 1``
evaluations) and adds no new position: on reversi 6x6 (5 min, seed 0; docs/results.md)
``reanalyse_rows=8`` came out level with the preset at equal time (47.9% [44.8, 51.0] head to
head alone, 49.2% with 16 simulations each) and a little ahead at equal plies (51.4% / 54.9%);
with a 4x window (replay_size=32768) ``reanalyse_rows=16`` lost to the same window without it
with 16 simulations each (41.6% [36.9, 46.5]). The presets keep it off: on a CPU new games
cost no more than re-searched ones.

A ply costs ``num_simulations + 1`` network evaluations, so on a CPU it trains on far fewer
plies per second than PPO; what it buys is a better target per ply.

Root noise. The improved policy pi' = softmax(prior logits + sigma(completed Q)) can move a
move's logit by only a few units (``value_scale``), and mctx min-max rescales the completed
Q-values, which turns differences of thousandths into the full range when every move looks
equally lost. Trained on its own pi', the prior then collapses onto a few moves, and a move
the network has written off (a block, even a winning move) stays out of reach of the search
for good. Pure self-play on tic-tac-toe shows it at its worst: within 13k plies O learned to
lose in five plies every game, and the network lost all 400 games to the perfect player.
AlphaZero's Dirichlet noise at the root (``root_noise``; Silver et al. 2017, eps = 0.25, with
KataGo's total concentration 10.83 spread over the legal moves) keeps every legal move within
reach: ``jaxgames train alphazero --game tic_tac_toe --root-noise=0.25`` (0.5M plies, ~20 s
of training) then draws all 400 games against the perfect player for seeds 0, 1 and 2, where
the same preset without it lost 28 and 30 of 400 for seeds 0 and 1 (none for seed 2, all as
O), and pure self-play with it loses 4 of 400 instead of 400 (``jaxgames eval --a <run> --b
perfect --games 400``).
Presets, measured on this 2-core CPU (shared with other jobs; one seed, 150k plies, about a
minute after a ~45 s compile; "vs random" is the network alone, greedy, no search):
reversi 6x6 ~6-9k plies/s, 93-95% vs random as either colour after 143k plies (with replay
0 / 8192 / 65536: 90/95%, 95/94%, 95/93% as first/second); 8x8 (replay 65536) ~5-7k
plies/s, 82-85%; animal shogi (replay 32768) ~2-3k plies/s, 92-94% wins and 2-3% losses.
Ladder ratings (``jaxgames rate``; docs/results.md), presets without root noise: reversi,
4M plies: 6x6 637 [553, 742] Elo (PPO preset at the same plies: 531), 8x8 590 [501, 703]
(PPO: 577); animal shogi, 5M plies (15 min): 737 [634, 885] (PPO: 735), and with 64
simulations at play time 896 [786, 1057] (PPO's network: 815): a value head learned from
search targets and outcomes serves search better. Without root noise more plies of the 6x6
preset do not pay (26M plies, 30 min at ~14k plies/s on the idle CPU: 673 [597, 778] alone,
831 [748, 943] with 64 simulations, level with 637 / 861 at 4M); with it they do: 703
[625, 806] at 4M plies, 781 [704, 883] at 26M (34 min), 932 [848, 1041] with 64 simulations;
on 8x8 root noise lifts the 4M-ply network from 590 to 668 [582, 781] (7.3 min), and 24M plies
(42 min) rate 817 [731, 934] alone, 985 [891, 1114] with 64 simulations; on animal shogi, 5M
plies (14.5 min): 847 [736, 1003] alone (737 without), 1018 [912, 1180] with 64 simulations;
14M plies (48 min): 887 [781, 1035] alone, 58.4% [55.3, 61.4] head to head against the 5M network.
Those runs played most of their games against fixed partners (random, greedy, alphabeta:2, as
PPO's presets do); the presets now train in pure self-play, which at equal training time (5
min, seed 0) scores 60.7% (6x6), 79.5% (8x8) and 80.2% (animal shogi) head to head against
them; the shipped self-play agents and the full-budget runs are in docs/results.md.
The trained network is evaluated and loaded like any other (``load_policy``: the network
alone, greedy); play it with search through :class:`jaxgames.agents.search.SearchPolicy`
(opponent spec ``mcts:N:<run>``).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Mapping, NamedTuple

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxgames import distributed
from jaxgames.agents.algorithm import Algorithm, make_chunk
from jaxgames.agents.common import Agent, batch_observation, masked_log_probs, negamax_gae
from jaxgames.agents.replay import (
    TrajectoryBuffer,
    TrajectoryBufferState,
    make_trajectory_buffer,
)
from jaxgames.agents.rollout_learning import (
    RolloutConfig,
    RolloutState,
    make_setup,
    shuffled_minibatches,
)
from jaxgames.agents.search import search_batch
from jaxgames.core import Symmetries, apply_symmetry, with_score_utility
from jaxgames.validation import check_bool, check_float, check_int, fail


@dataclasses.dataclass(frozen=True)
class AlphaZeroConfig(RolloutConfig):
    """Gumbel AlphaZero hyper-parameters: the rollout fields of
    :class:`~jaxgames.agents.rollout_learning.RolloutConfig`, the shared ``TrainConfig`` fields, and

    num_simulations:            search simulations per learner move
    max_num_considered_actions: root moves kept by the Gumbel top-k (sequential halving)
    gumbel_scale:               Gumbel noise at the root while training (exploration; 0: none)
    explore_plies:              plies at the start of each game whose move is drawn with the
                                Gumbel noise; later plies play the search's best move
                                (gumbel_scale 0 there; root noise still varies the search), so
                                the outcomes that train the value head come from near-best
                                play, as AlphaZero sampled only its first 30 moves (Silver et
                                al. 2018). 0 (default): every ply is drawn with the noise;
                                on reversi 6x6 at equal plies (3.0M) explore_plies=10 scored
                                44.5% [41.4, 47.6] head to head against 0, 44.1% with search
                                (docs/results.md): the noisy games teach more; from the
                                shipped reversi6 3.2M more plies with 12 scored 49.2% against
                                the same 3.2M with 0 (docs/results.md): no gain late either
    value_scale:                c_scale of the completed Q-values while training (how far the
                                searched values move the improved policy pi' from the prior,
                                :func:`~jaxgames.agents.search.search_batch`; mctx's default 0.1)
    rescale_values:             min-max rescale the completed Q-values to [0, 1] before scaling
                                (mctx's default; False: outcomes in [-1, 1] enter as they are)
    root_noise:                 share of Dirichlet noise in the root prior of every training
                                search (AlphaZero's eps = 0.25; 0: none): keeps moves the network
                                has written off within reach of the search (see below)
    root_noise_alpha:           the noise's total concentration over the legal moves (KataGo 10.83)
    gae_lambda:                 1.0 (default): the value target is the game's outcome, as in
                                AlphaZero (bootstrapped only where a game crosses the rollout's
                                end); below 1 it mixes in the search's root values, which are
                                averages over the sequential-halving visits (spread over weak moves
                                too), not values of the improved policy: on tic-tac-toe 0.95 gave
                                much weaker networks
    replay_size:                searched positions kept on device to learn from (rounded down
                                to whole plies of num_envs games, at least one rollout); each
                                update samples its minibatches uniformly from them; 0: learn
                                on the fresh rollout only (update_epochs shuffled passes)
    augment:                    move every example of a minibatch by a random symmetry of the
                                game (``env.symmetries``; no-op for a game without any)
    full_search_every:          playout caps (KataGo's playout-cap randomisation, Wu 2019, in
                                lockstep): every full_search_every-th ply of the rollout (all
                                games at once) searches with num_simulations and is learned
                                from; the plies between search with cheap_simulations, only
                                move the games on and are not learned from (as in KataGo).
                                Games start and end at different plies, so each game's learned
                                positions fall at varied move numbers. 1 (default): every ply
                                is a full search (caps off). Must divide num_steps.
    cheap_simulations:          simulations of the plies between full searches
    win_check:                  one ply of exact lookahead in every training search
                                (:func:`~jaxgames.agents.search.with_win_check`): a node whose
                                mover can win at once is worth +1 and keeps only its winning
                                moves, so the targets never pass up a win in one nor walk
                                into a loss in one the prior misses. A env steps per expanded
                                node; off by default (every shipped agent trained without it)
    reanalyse_rows:             stored plies (of all num_envs games) searched again with the
                                current network every update, their policy targets replaced
                                (see "Reanalysis" above; needs replay_size > 0, at most
                                replay_rows); 0 (default): targets stay as played
    """

    num_simulations: int = 8
    max_num_considered_actions: int = 16
    gumbel_scale: float = 1.0
    explore_plies: int = 0
    value_scale: float = 0.1
    rescale_values: bool = True
    root_noise: float = 0.0
    root_noise_alpha: float = 10.83
    gamma: float = 1.0
    gae_lambda: float = 1.0
    replay_size: int = 0
    augment: bool = True
    full_search_every: int = 1
    cheap_simulations: int = 1
    win_check: bool = False
    reanalyse_rows: int = 0

    def validate(self) -> None:
        super().validate()
        check_int("num_simulations", self.num_simulations)
        check_int("max_num_considered_actions", self.max_num_considered_actions)
        check_float("gumbel_scale", self.gumbel_scale, 0.0, float("inf"))
        check_int("explore_plies", self.explore_plies, minimum=0)
        check_float("value_scale", self.value_scale, 0.0, float("inf"))
        check_bool("rescale_values", self.rescale_values)
        check_float("root_noise", self.root_noise, 0.0, 1.0)
        check_float("root_noise_alpha", self.root_noise_alpha, 0.0, float("inf"))
        if self.root_noise_alpha <= 0:
            fail("root_noise_alpha", self.root_noise_alpha, "must be > 0")
        check_int("replay_size", self.replay_size, minimum=0)
        check_bool("augment", self.augment)
        check_int("full_search_every", self.full_search_every)
        check_int("cheap_simulations", self.cheap_simulations)
        check_bool("win_check", self.win_check)
        check_int("reanalyse_rows", self.reanalyse_rows, minimum=0)
        if self.reanalyse_rows and not self.replay_size:
            fail("reanalyse_rows", self.reanalyse_rows, "needs a replay buffer (replay_size > 0)")
        if self.reanalyse_rows > self.replay_rows > 0:
            fail(
                "reanalyse_rows",
                self.reanalyse_rows,
                f"must not exceed the {self.replay_rows} plies the replay buffer holds",
            )
        if self.num_steps % self.full_search_every:
            fail(
                "full_search_every",
                self.full_search_every,
                f"must divide num_steps = {self.num_steps}",
            )
        if self.cheap_simulations > self.num_simulations:
            fail(
                "cheap_simulations",
                self.cheap_simulations,
                f"must not exceed num_simulations = {self.num_simulations}",
            )
        learned = self.num_envs * self.num_steps // self.full_search_every
        if self.replay_size == 0 and learned % self.num_minibatches:
            fail(
                "num_minibatches",
                self.num_minibatches,
                f"must divide the {learned} positions learned per update "
                "(num_envs * num_steps / full_search_every) when replay_size is 0",
            )

    @property
    def replay_rows(self) -> int:
        """Plies of all num_envs games the replay ring holds (0: no replay)."""
        if self.replay_size == 0:
            return 0
        return max(self.replay_size // self.num_envs, self.num_steps)


Config = AlphaZeroConfig

# Per-game defaults, sized for a 2-core CPU: the PPO presets' MLPs (on CPU the CNN/ResNet cost
# ~10x the FLOPs per evaluation, and every ply here is num_simulations + 1 evaluations), 128
# games in parallel (one batched network call per simulation), and a replay window of a few
# updates' searched positions (each drawn ~update_epochs times, as from a fresh rollout).
GAME_DEFAULTS: dict[str, dict[str, Any]] = {
    "tic_tac_toe": dict(
        network="mlp",
        net={"hidden": 128, "layers": 3},
        num_envs=32,
        num_steps=16,
        total_steps=500_000,
        learning_rate=1e-3,
        num_simulations=16,
        updates_per_chunk=25,
        eval_games=500,
        # a quarter of the games against random play: self-play between near-equals rarely
        # shows the positions a weak opponent leaves (as for the reversi/animal-shogi presets)
        partners={"random": 0.25},
        # without it the prior collapses onto a few moves: seeds 0-2 lost 28, 30 and 0 of 400
        # games to the perfect player after 0.5M plies; with it none (see the module docstring)
        root_noise=0.25,
    ),
    # one preset for 6x6 and 8x8 (presets are per game)
    "reversi": dict(
        network="mlp",  # 256x3: 11-14k plies/s with 8 simulations on 2 cores (8x8, 6x6)
        # sized for this preset's short default run: at 5 min a 512x3 MLP came out level on
        # 6x6 (47.1% head to head). Given 30-50 min, 512x3 (--net.hidden=512, 0.63x the plies
        # per second) wins at equal time on both sizes (55.0% on 6x6 at 28 min, 56.8% on 8x8
        # at 29 min) and is what the shipped reversi6 and reversi8 use (docs/results.md)
        net={"hidden": 256, "layers": 3},
        # the network reads both sides' legal moves and frontier discs beside the discs: on 6x6
        # at equal plies (3.0M, 1.13x the time per ply) it beat the bare discs 55.8% [52.7, 58.9]
        # head to head alone and 64.9% [60.1, 69.4] with 32 simulations; the shipped reversi8
        # reads them too (it beats the one without at half the plies, docs/results.md)
        features="mobility",
        num_envs=128,
        num_steps=16,  # 2048 positions per update
        total_steps=1_000_000,
        learning_rate=1e-3,
        # Gumbel search improves the policy even with few simulations (Danihelka et al.
        # 2022); 8 keeps ~6k plies/s, where a 6x6 network passes 90% vs random in ~100k plies;
        # at equal time 4 lost to it and 16 came out level. Later in training deeper searches
        # pay: the 47-min 512x3 network trained 16M more plies with 16 (init_from, learning
        # rate 2.5e-4, 70 min) beat it 60.9% head to head (docs/results.md); the shipped
        # reversi8 has the same two stages (10.5M plies with 8, then 7.0M with 16)
        num_simulations=8,
        # 4 updates of play: on 6x6 at 143k plies (one seed each) windows of 0 / 8192 / 65536
        # were within noise of each other vs random (90-95%); the short window keeps targets
        # from an old network out while a minibatch still mixes several updates' games
        replay_size=8_192,
        augment=True,
        updates_per_chunk=25,
        eval_games=256,
        # pure self-play: at equal training time (5 min, seed 0) the network trained without
        # the former partners (75% of the games vs random, greedy and alphabeta:2) scored
        # 60.7% [57.6, 63.6] (6x6) and 79.5% [76.8, 81.8] (8x8) head to head against the one
        # trained with them, and won more against the held-out engines (docs/results.md)
        partners={},
        # 4M plies, seed 0: 6x6 703 [625, 806] Elo with it, 637 [553, 742] without (63.4%
        # [60.4, 66.4] head to head, 1000 games); 8x8 668 [582, 781] with, 590 [501, 703] without
        root_noise=0.25,
    ),
    "animal_shogi": dict(
        network="mlp",  # 128x6 as for PPO: ~7.8k plies/s with 8 simulations on 2 cores
        # sized for this preset's short default run. Given 40 min, 256x6 (--set net.hidden=256,
        # 0.73x the plies per second) beat 128x6 65.9% [62.9, 68.8] head to head; 512x6 beat
        # 256x6 66.8% at 45 min but drew 18/400 vs random alone; trained 18M plies (~94 min)
        # it beats 256x6 68.8% without those draws; 15M more plies from there (init_from,
        # learning rate 2.5e-4, 79 min) beat it 59.8%; 9M more with num_simulations=16 (74
        # min) beat that 53.6% and 9M more again (2e-4, 136 min) 65.2%: the shipped
        # animal_shogi, 75%+ alone vs engine:2 as either colour (docs/results.md)
        net={"hidden": 128, "layers": 6},
        # the network reads each side's attackers of every square beside the pieces: at equal
        # plies (2.5M, 128x6, 1.07x the time per ply) it beat the bare observation 66.3%
        # [63.3, 69.2] head to head alone and 66.5% [61.7, 70.9] with 32 simulations each
        # (docs/results.md); the shipped animal_shogi predates it and reads the observation
        features="attacks",
        num_envs=128,
        num_steps=16,
        total_steps=1_000_000,
        learning_rate=5e-4,
        num_simulations=8,
        # 16 updates of play (~60 MB on device: an observation is 4x3x24 floats)
        replay_size=32_768,
        augment=True,  # the left-right mirror: 2 symmetries
        updates_per_chunk=25,
        eval_games=256,
        # pure self-play: at equal training time (5 min, seed 0) it scored 80.2% [77.7, 82.6]
        # head to head against the network trained with the former partners (62.5% of the
        # games vs random, greedy and alphabeta:2; docs/results.md)
        partners={},
        # 5M plies, seed 0: 847 [736, 1003] Elo with it, 737 [634, 885] without (67.1% [64.1,
        # 69.9] head to head, 1000 games)
        root_noise=0.25,
        # a win sooner is worth more: with gamma = 1 the 19M-ply self-play network drew 11 of
        # 200 games as second against random by threefold repetition (shuffling in won
        # positions); with 0.99 it draws 1 of 200 and scores 55.7% [52.6, 58.8] head to head
        # against the gamma = 1 network of the same budget (docs/results.md)
        gamma=0.99,
    ),
}
QUICK: dict[str, Any] = dict(total_steps=40_000, updates_per_chunk=5, eval_games=100)


def default_config(
    game: str = "tic_tac_toe",
    game_options: dict | None = None,
    quick: bool = False,
    **overrides: Any,
) -> AlphaZeroConfig:
    """The Gumbel AlphaZero config for ``game`` with its defaults; ``quick`` for a short demo
    run; ``overrides`` (field=value) win over both."""
    return AlphaZeroConfig.preset(game, game_options, quick, GAME_DEFAULTS, QUICK, overrides)


class Transition(NamedTuple):
    """One learner move of the rollout, leaves shaped [num_steps, num_envs, ...] after the scan."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves of obs
    policy_target: jax.Array  # float32[..., A] the search's improved policy (0 on illegal moves)
    value: jax.Array  # float32 the search's root value, mover's view
    reward: jax.Array  # float32 rewards[mover] of this step
    done: jax.Array  # bool   this step ended the game
    sign: jax.Array  # float32 +1 if the next state's mover is this mover, else -1
    state: Any = None  # the game state searched (kept only to reanalyse; None: not kept)


class SearchTarget(NamedTuple):
    """One searched position to learn from (what the replay buffer stores); leaves
    [..., *item] with any batch axes."""

    obs: jax.Array  # float32[..., *obs_shape]
    mask: jax.Array  # bool[..., A] legal moves of obs
    policy: jax.Array  # float32[..., A] the search's improved policy pi' (0 on illegal moves)
    value: jax.Array  # float32[...] value target, mover's view (the game's outcome)
    state: Any = None  # the game state of obs (kept only to reanalyse; None: not kept)


@struct.dataclass
class AlphaZeroState(RolloutState):
    """The rollout train state (params, opt_state, env_state, key, update; shared with PPO)
    plus the replay buffer of :class:`SearchTarget` (``None`` when ``replay_size`` is 0: the
    state then has exactly the leaves of a PPO state)."""

    buffer: TrajectoryBufferState | None = None


def augment_targets(symmetries: Symmetries, key: jax.Array, batch: SearchTarget) -> SearchTarget:
    """Each example of ``batch`` (leaves [B, ...]) moved by its own uniformly drawn symmetry of
    the game: a symmetry of the rules maps the search target of a position onto the search
    target of the moved position (the value is unchanged)."""
    k = jax.random.randint(key, batch.value.shape, 0, symmetries.count, dtype=jnp.int32)
    obs, mask, policy = apply_symmetry(symmetries, k, batch.obs, batch.mask, batch.policy)
    return SearchTarget(obs, mask, policy, batch.value)


def sample_targets(
    buffer: TrajectoryBuffer,
    buf: TrajectoryBufferState,
    key: jax.Array,
    num_minibatches: int,
    minibatch_size: int,
    symmetries: Symmetries | None = None,
) -> SearchTarget:
    """``num_minibatches * minibatch_size`` positions drawn uniformly (with replacement) from the
    written part of the replay buffer ``buf`` (of :class:`SearchTarget`), each moved by a random
    symmetry if ``symmetries`` is given: leaves [num_minibatches, minibatch_size, ...]."""
    k_sample, k_augment = jax.random.split(key)
    rows, envs = buffer.sample_indices(buf, k_sample, num_minibatches * minibatch_size, 1)
    batch = jax.tree_util.tree_map(lambda x: x[:, 0], buffer.gather(buf, rows, envs))
    batch = batch._replace(state=None)  # the network learns from obs; states only reanalyse
    if symmetries is not None:
        batch = augment_targets(symmetries, k_augment, batch)
    return jax.tree_util.tree_map(
        lambda x: x.reshape(num_minibatches, minibatch_size, *x.shape[1:]), batch
    )


def reanalyse(
    buffer: TrajectoryBuffer,
    buf: TrajectoryBufferState,
    key: jax.Array,
    rows: int,
    search_policy: Callable[[Any, jax.Array], jax.Array],
) -> TrajectoryBufferState:
    """``buf`` (of :class:`SearchTarget` with states) with the policy targets of ``rows``
    consecutive stored plies of all games, a window drawn uniformly from the written part,
    replaced by ``search_policy(states, key) -> float32[B, A]`` of their stored states (B =
    rows * num_envs). Rows of the window beyond the written part (a buffer still filling) keep
    what they hold."""
    k_rows, k_search = jax.random.split(key)
    window = buffer.sample_indices(buf, k_rows, 1, rows)[0][0]  # int32[rows]
    stored = jax.tree_util.tree_map(lambda d: d[window], buf.data)  # [rows, num_envs, ...]
    states = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), stored.state)
    fresh = search_policy(states, k_search).reshape(stored.policy.shape)
    # a buffer holding fewer than `rows` rows starts the window at its oldest row
    written = jnp.arange(rows) < buffer.size(buf)  # bool[rows]
    policy = jnp.where(written[:, None, None], fresh, stored.policy)
    data = buf.data._replace(policy=buf.data.policy.at[window].set(policy, unique_indices=True))
    return buf.replace(data=data)


def alphazero_loss(agent: Agent, params: Any, batch: SearchTarget, config: AlphaZeroConfig):
    """Cross-entropy to the search policy plus the value regression, on a flat batch (axis B).

    Returns (total float32[], aux dict of float32[]).
    """
    logits, value = agent.apply(params, batch.obs)
    chex.assert_equal_shape([logits, batch.mask, batch.policy])
    chex.assert_equal_shape([value, batch.value])
    logp = masked_log_probs(logits, batch.mask)
    policy_loss = -jnp.sum(jnp.where(batch.mask, batch.policy * logp, 0.0), axis=-1).mean()
    value_loss = 0.5 * ((value - batch.value) ** 2).mean()
    target_entropy = -jnp.sum(
        jnp.where(batch.policy > 0, batch.policy * jnp.log(batch.policy), 0.0), -1
    )
    total = policy_loss + config.vf_coef * value_loss
    aux = {
        "loss": total,
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        # policy_loss - target_entropy = KL(pi' || pi): how far the network is from its search
        "policy_kl": policy_loss - target_entropy.mean(),
    }
    return total, aux


def make_algorithm(config: AlphaZeroConfig, partners: Mapping[str, Any] | None = None) -> Algorithm:
    """Gumbel AlphaZero as an :class:`~jaxgames.agents.algorithm.Algorithm` for the run driver."""
    setup = make_setup(config, AlphaZeroConfig, partners)
    env, agent, games = setup.env, setup.agent, setup.games
    symmetries = env.symmetries
    augment = config.augment and symmetries.count > 1
    buffer = (
        make_trajectory_buffer(config.replay_rows, config.num_envs) if config.replay_rows else None
    )

    def init(key: jax.Array) -> AlphaZeroState:
        state = setup.init(key)
        buf = None
        if buffer is not None:
            item = SearchTarget(
                jax.ShapeDtypeStruct(agent.observation_shape, jnp.float32),
                jax.ShapeDtypeStruct((env.num_actions,), jnp.bool_),
                jax.ShapeDtypeStruct((env.num_actions,), jnp.float32),
                jax.ShapeDtypeStruct((), jnp.float32),
                # one game's state (leaves of the batch without its game axis)
                jax.tree_util.tree_map(
                    lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), state.env_state
                )
                if config.reanalyse_rows
                else None,
            )
            buf = buffer.init(item)
        return AlphaZeroState(
            state.params, state.opt_state, state.env_state, state.key, state.update, buf
        )

    def replay_draw(buf: TrajectoryBufferState):
        """Minibatches for one epoch, from the buffer (see :func:`sample_targets`)."""
        return lambda key: sample_targets(
            buffer,
            buf,
            key,
            config.num_minibatches,
            config.batch_size // config.num_minibatches,
            symmetries if augment else None,
        )

    every = config.full_search_every

    # finished games in the training search are worth what the training games pay
    search_env = with_score_utility(env, config.score_utility)

    def train_search(guide, key, states, num_simulations, gumbel_scale):
        """The search of every training ply (and reanalysis): mctx.PolicyOutput."""
        return search_batch(
            search_env,
            guide,
            key,
            states,
            num_simulations,
            config.max_num_considered_actions,
            gumbel_scale,
            config.value_scale,
            config.rescale_values,
            config.root_noise,
            config.root_noise_alpha,
            config.win_check,
        )

    def rollout(params, env_state, key):
        """num_steps plies of all games: final env_state and key, the Transitions (leaves
        [num_steps, num_envs, ...]) and the episode stats; with playout caps every
        ``every``-th ply (0, every, 2 every, ...) is a full search, the rest cheap ones."""
        guide = agent.policy(params)

        def ply(num_simulations, carry, _):
            env_state, key = carry
            key, k_search, k_reset = jax.random.split(key, 3)
            gumbel_scale = config.gumbel_scale
            if config.explore_plies:  # per game: float32[B, 1], broadcast over the moves
                exploring = env_state.step_count < config.explore_plies
                gumbel_scale = jnp.where(exploring, gumbel_scale, 0.0)[:, None]
            out = train_search(guide, k_search, env_state, num_simulations, gumbel_scale)
            root_value = out.search_tree.summary().value
            step = games.step(env_state, out.action, k_reset)
            mask = env_state.legal_action_mask
            t = Transition(
                batch_observation(env_state),
                mask,
                jnp.where(mask, out.action_weights, 0.0),
                root_value,
                step.reward,
                step.done,
                step.sign,
                env_state if config.reanalyse_rows else None,
            )
            return (step.state, key), (t, (step.done, step.outcome[:, 0], step.length))

        full = functools.partial(ply, config.num_simulations)
        if every == 1:
            (env_state, key), (traj, stats) = jax.lax.scan(
                full, (env_state, key), None, length=config.num_steps
            )
            return env_state, key, traj, stats

        def capped(carry, _):  # one full search, then every - 1 cheap ones
            carry, first = full(carry, None)
            carry, rest = jax.lax.scan(
                functools.partial(ply, config.cheap_simulations), carry, None, length=every - 1
            )
            return carry, jax.tree_util.tree_map(
                lambda a, b: jnp.concatenate([a[None], b]), first, rest
            )

        (env_state, key), out = jax.lax.scan(
            capped, (env_state, key), None, length=config.num_steps // every
        )
        traj, stats = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), out)
        return env_state, key, traj, stats

    def update(state: AlphaZeroState, _) -> tuple[AlphaZeroState, dict[str, jax.Array]]:
        env_state, key, traj, (done, p0_reward, length) = rollout(
            state.params, state.env_state, state.key
        )
        _, last_value = agent.apply(state.params, batch_observation(env_state))
        _, targets = negamax_gae(
            traj.reward,
            traj.value,
            traj.done,
            traj.sign,
            last_value,
            config.gamma,
            config.gae_lambda,
        )
        data = SearchTarget(traj.obs, traj.mask, traj.policy_target, targets, traj.state)
        if every > 1:  # learn from the full searches only (outcomes still span every ply)
            data = jax.tree_util.tree_map(lambda x: x[::every], data)
        extra = {}
        if buffer is not None:  # the fresh rollout goes in, the minibatches come out
            state = state.replace(buffer=buffer.extend(state.buffer, data))
            if config.reanalyse_rows:  # the stored targets re-searched with the current params
                guide = agent.policy(state.params)

                def search_policy(states, k):
                    out = train_search(
                        guide, k, states, config.num_simulations, config.gumbel_scale
                    )
                    return jnp.where(states.legal_action_mask, out.action_weights, 0.0)

                key, k_re = jax.random.split(key)
                state = state.replace(
                    buffer=reanalyse(
                        buffer, state.buffer, k_re, config.reanalyse_rows, search_policy
                    )
                )
            draw = replay_draw(state.buffer)
            extra["replay_fill"] = (buffer.size(state.buffer) / buffer.capacity).astype(jnp.float32)
        elif augment:
            flat = jax.tree_util.tree_map(lambda x: x.reshape(-1, *x.shape[2:]), data)
            draw = shuffled_minibatches(
                flat, config.num_minibatches, functools.partial(augment_targets, symmetries)
            )
        else:
            draw = None  # shuffled passes over the fresh rollout, as in PPO
        state, metrics = setup.learn(
            config,
            lambda p, mb: alphazero_loss(agent, p, mb, config),
            state,
            env_state,
            key,
            data,
            draw,
        )
        metrics.update(
            games.episode_stats(done, p0_reward, length, traj.reward),
            value_mean=traj.value.mean(),
            **extra,
        )
        return state, metrics

    return Algorithm(
        name="alphazero",
        config=config,
        env=env,
        agent=agent,
        init=init,
        chunk=make_chunk(update, config.updates_per_chunk),
        params=lambda s: s.params,
        # buffer leaves [rows, num_envs, ...]: split over devices by game, like env_state
        partition=distributed.partition_by_field(env_state=0, buffer=1),
    )


def make_train(config: AlphaZeroConfig):
    """``train(key) -> (AlphaZeroState, metrics)``: the whole run as one pure, jittable,
    vmappable function (metrics float32[num_chunks] per name)."""
    return make_algorithm(config).make_train()
