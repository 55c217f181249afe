#!/usr/bin/env bash
# One short session on a GPU machine (no network there, its own jax): what the repo's numbers
# for a GPU come from (docs/results.md, "On a GPU"). Each step has its own time limit and the
# script goes on past a failed step, so one call gives whatever it can.
#
#   bash experiments/gpu_session.sh <out-dir> [train-seconds] [starting-agent] [run-name] [steps]
#                                   [game] [key=value ...]
#
# steps: which of the three below to run (default "123"; "1" trains only). The run is written
# to runs/<run-name> (default gpu8) and comes back as <out>/<run-name>.tar.gz. game: reversi:8
# (default), reversi:6 (the 1024x3 network on mobility features: start from a widened agent)
# or animal_shogi, or reversi:6:resnet (a 6-block, 64-channel ResNet on the same features,
# 1.8 MB of parameters: start it from none, a fresh network; it learned per ply as the MLP did
# and levelled off lower, docs/results.md); key=value settings after it
# replace the game's, e.g.
# `bash experiments/gpu_session.sh $OUT 400 pretrained:animal_shogi gpu_shogi 1 animal_shogi
# anneal_lr=true total_steps=36000000` anneals over the ~36M plies that 400 s give.
#
# docs/results.md's numbers: `bash experiments/gpu_session.sh $OUT 300 pretrained:reversi8` with
# the code of commit 67fffaa on one H200, pretrained:reversi8 then being the agent with params
# sha256 d694617c56286212... (steps 2 and 3 ran in an earlier call of the same session); the
# sixth stage (params sha256 82aa786ec2d01172...): `bash experiments/gpu_session.sh $OUT 400
# runs/cpu8_s32/reversi8x8_alphazero/seed0 gpu8b 1` with the code of commit 0d007b3 on one
# H200, that CPU run's folder carried to the machine; the seventh (the shipped reversi8, params
# sha256 b678b877b8f9be0b...), from the sixth: `bash experiments/gpu_session.sh $OUT 470
# pretrained:reversi8 gpu8c 1 reversi:8 anneal_lr=true total_steps=11500000` with the code of
# commit 3605be6 on one H200 (44 chunks of 262,144 plies, as this script now sizes them). The
# shipped reversi6 (params sha256 44266b6b21ed5f90...): `bash experiments/gpu_session.sh $OUT
# 410 runs/widen6_export gpu6 1 reversi:6 anneal_lr=true total_steps=32000000`, the widened
# CPU stage (`jaxgames export runs/widen6/reversi6x6_alphazero/seed0 runs/widen6_export`)
# carried to the machine; the shipped animal_shogi (params
# sha256 3920cc7ece877aca...): `bash experiments/gpu_session.sh $OUT 280 pretrained:animal_shogi
# gpu_shogi2 1 animal_shogi anneal_lr=true total_steps=27000000`; both with the code of commit
# 3131d87 on one H200.
#
# Run one session at a time on a GPU: two trainings at once (two processes, each with
# XLA_PYTHON_CLIENT_MEM_FRACTION=0.45) ran at a fifth and a third of their rates alone
# (docs/results.md, "Further GPU stages that end level").
#
# 1. AlphaZero on the GPU: the starting agent (default pretrained:reversi8; a run directory,
#    saved on any device, works too) trained on with the settings of the game's last CPU stage
#    (reversi 8x8: 32 simulations; reversi 6x6: 16, twice its CPU stage's; animal shogi: 16)
#    and 32x the games at once (num_envs 4096; replay and minibatch count scaled with it, so
#    each gradient step is still 512 positions and there are as many per ply as on the CPU);
#    <out>/<run-name>.tar.gz holds the curves, the run's config and metrics and the agent
#    exported from it (parameters and card; the checkpoint, with its replay buffer, stays there)
# 2. the AlphaZero, search and symmetry tests on the GPU
# 3. environment throughput, jaxgames beside pgx, at GPU batch sizes
set -u
out=${1:?usage: gpu_session.sh <out-dir> [train-seconds] [starting-agent] [run-name] [steps] [game] [key=value ...]}
train_s=${2:-300}
start=${3:-pretrained:reversi8}
run=${4:-gpu8}
steps=${5:-123}
game=${6:-reversi:8}
board=$game  # the game learning_curves.py plays
# each game's CPU stage settings, 32x the games at once (replay and minibatch count scaled
# with them: each gradient step is still 512 positions, as many per ply as on the CPU)
case $game in
reversi:8)
    settings=(net.hidden=512 features=mobility num_simulations=32 learning_rate=0.0001
              replay_size=262144)
    label=reversi8x8_alphazero name=reversi8 opponent=greedy eval_games=64 chunk=262144 ;;
reversi:6)
    settings=(net.hidden=1024 features=mobility num_simulations=16 learning_rate=0.0003
              replay_size=262144)
    label=reversi6x6_alphazero name=reversi6 opponent=greedy eval_games=64 chunk=1048576 ;;
reversi:6:resnet)  # a convolutional tower: more compute per parameter (1.8 MB; the MLP 9.6 MB)
    board=reversi:6
    settings=(network=resnet net.blocks=6 net.channels=64 features=mobility num_simulations=16
              learning_rate=0.0003 replay_size=262144)
    label=reversi6x6_alphazero name=reversi6 opponent=greedy eval_games=64 chunk=1048576 ;;
animal_shogi)
    settings=(net.hidden=512 net.layers=6 features=observation num_simulations=16
              learning_rate=0.0002 replay_size=1048576)
    label=animal_shogi_alphazero name=animal_shogi opponent=engine:2 eval_games=32 chunk=1048576 ;;
*) echo "gpu_session.sh: unknown game '$game' (reversi:8, reversi:6, reversi:6:resnet or animal_shogi)" >&2
   exit 2 ;;
esac
# what follows the game: key=value settings that replace the above (anneal_lr=true, say);
# total_steps=N sets the run's length, over which the learning rate anneals
total_steps=60000000 extra=()
for kv in "${@:7}"; do
    case $kv in
    total_steps=*) total_steps=${kv#total_steps=} ;;
    *=*) extra+=("$kv") ;;
    *) echo "gpu_session.sh: '$kv' is not key=value" >&2; exit 2 ;;
    esac
done
# one chunk (an evaluation and a checkpoint with the replay buffer) per ~10 s of H200 training:
# chunks of a fixed number of plies, however long the run; short chunks spend the time saving
evals=$(( (total_steps + chunk - 1) / chunk ))
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
python3 - <<'EOF' || exit 1
import jax, flax, optax, chex, mctx, jaxgames
print("devices", jax.devices(), "jax", jax.__version__, "flax", flax.__version__,
      "optax", optax.__version__, "chex", chex.__version__, "mctx", mctx.__version__)
EOF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

if [[ $steps == *1* ]]; then
echo "== 1. $game AlphaZero on the GPU (${train_s} s of training)"
budget=$(python3 -c "print($train_s / 60)")
# the budget is checked after each chunk (~10 s here):
# the timeout leaves time for one chunk past it, the compile and the export below
timeout $((train_s + 130)) python3 experiments/learning_curves.py --games "$board" \
    --algos alphazero --seeds 1 --budget-minutes "$budget" --evals "$evals" \
    --total-steps "$total_steps" --opponents "$opponent" --eval-games "$eval_games" \
    --out "runs/$run" --set "${settings[@]}" anneal_lr=false num_envs=4096 \
    num_minibatches=128 init_from="${start#none}" "${extra[@]}"
# the parameters alone, with their model card (the checkpoint's replay buffer and optimiser
# state are ~100x larger); the card's training facts are read here, where the run is
python3 -m jaxgames.cli export "runs/$run/$label/seed0" "runs/${run}_export" \
    --name "$name" --force
tar czf "$out/$run.tar.gz" "runs/$run/$label"/*.* "runs/${run}_export" \
    "runs/$run/$label"/seed0/*.* 2>/dev/null
fi

if [[ $steps == *2* ]]; then
echo "== 2. tests on the GPU"
# four test processes share the GPU: none may take most of its memory up front
XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 100 python3 -m pytest -q -n 4 -p no:cacheprovider \
    tests/test_alphazero.py tests/test_search.py tests/test_symmetries.py 2>&1 | tail -15
fi

if [[ $steps == *3* ]]; then
echo "== 3. environment throughput"
timeout 100 python3 experiments/benchmark_throughput.py --games reversi:8 animal_shogi \
    tic_tac_toe --batch-sizes 4096 65536 --steps 200 --out "$out/throughput" 2>&1 | tail -20
fi
