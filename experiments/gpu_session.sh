#!/usr/bin/env bash
# One short session on a GPU machine (no network there, its own jax): what the repo's numbers
# for a GPU come from (docs/results.md: the H200 part of "Throughput", the H200 stages of the
# shipped agents, the "More GPU plies" line under "Training methods that did not pay"). Each step
# has its own time limit and the script goes on past a failed step, so one call gives whatever
# it can.
#
#   bash experiments/gpu_session.sh <out-dir> [train-seconds] [starting-agent] [run-name] [steps]
#                                   [game] [key=value ...]
#
# steps: which of the three below to run (default "123"; "1" trains only). The run is written
# to runs/<run-name> (default gpu8) and comes back as <out>/<run-name>.tar.gz. game: reversi8
# (default), reversi6 (the 1024x3 network on mobility features: start from a widened agent),
# reversi6-resnet (a 6-block, 64-channel ResNet on the same features: start it from none, a
# fresh network) or animal_shogi (reversi:8, reversi:6 and reversi:6:resnet are the same);
# key=value settings after it replace the game's, e.g.
# `bash experiments/gpu_session.sh $OUT 400 pretrained:animal_shogi gpu_shogi 1 animal_shogi
# anneal_lr=true total_steps=36000000` anneals over the ~36M plies that 400 s give. The commands
# behind each shipped stage are in docs/results.md, beside its numbers.
#
# Run one session at a time on a GPU: two trainings at once run at a fraction of their rates
# alone (docs/results.md, "Throughput").
#
# 1. AlphaZero on the GPU: the starting agent (default pretrained:reversi8; a run directory,
#    saved on any device, works too) trained on with the settings of the game's last CPU stage
#    (reversi 8x8: 32 simulations; reversi 6x6: 16, twice its CPU stage's; animal shogi: 16)
#    and 32x the games at once (num_envs 4096; replay and minibatch count scaled with it, so
#    each gradient step is still 512 positions and there are as many per ply as on the CPU),
#    through experiments/learning_curves.py (one seed); <out>/<run-name>.tar.gz holds the
#    curves, the run's config and metrics and the agent exported from it (parameters and card;
#    the checkpoint, with its replay buffer, stays there)
# 2. the AlphaZero, search and symmetry tests on the GPU
# 3. environment throughput, jaxgames beside pgx, at GPU batch sizes
set -u
out=${1:?usage: gpu_session.sh <out-dir> [train-seconds] [starting-agent] [run-name] [steps] [game] [key=value ...]}
train_s=${2:-300}
start=${3:-pretrained:reversi8}
run=${4:-gpu8}
steps=${5:-123}
game=${6:-reversi8}
board=$game  # the game learning_curves.py plays
# each game's CPU stage settings, 32x the games at once (replay and minibatch count scaled
# with them: each gradient step is still 512 positions, as many per ply as on the CPU)
case $game in
reversi8|reversi:8)
    board=reversi8
    settings=(--net.hidden=512 --features=mobility --num-simulations=32 --learning-rate=0.0001
              --replay-size=262144)
    label=reversi8_alphazero name=reversi8 opponent=greedy eval_games=64 chunk=262144 ;;
reversi6|reversi:6)
    board=reversi6
    settings=(--net.hidden=1024 --features=mobility --num-simulations=16 --learning-rate=0.0003
              --replay-size=262144)
    label=reversi6_alphazero name=reversi6 opponent=greedy eval_games=64 chunk=1048576 ;;
reversi6-resnet|reversi:6:resnet)  # a convolutional tower: more compute per parameter
    board=reversi6
    settings=(--network=resnet --net.blocks=6 --net.channels=64 --features=mobility
              --num-simulations=16 --learning-rate=0.0003 --replay-size=262144)
    label=reversi6_alphazero name=reversi6 opponent=greedy eval_games=64 chunk=1048576 ;;
animal_shogi)
    settings=(--net.hidden=512 --net.layers=6 --features=observation --num-simulations=16
              --learning-rate=0.0002 --replay-size=1048576)
    label=animal_shogi_alphazero name=animal_shogi opponent=engine:2 eval_games=32 chunk=1048576 ;;
*) echo "gpu_session.sh: unknown game '$game' (reversi8, reversi6, reversi6-resnet or animal_shogi)" >&2
   exit 2 ;;
esac
# what follows the game: key=value settings that replace the above (anneal_lr=true, say);
# total_steps=N sets the run's length, over which the learning rate anneals
total_steps=60000000 extra=()
for kv in "${@:7}"; do
    case $kv in
    total_steps=*) total_steps=${kv#total_steps=} ;;
    *=*) extra+=("--$kv") ;;
    *) echo "gpu_session.sh: '$kv' is not key=value" >&2; exit 2 ;;
    esac
done
# one chunk (an evaluation and a checkpoint with the replay buffer) per ~10 s of H200 training:
# chunks of a fixed number of plies, however long the run; short chunks spend the time saving
evals=$(( (total_steps + chunk - 1) / chunk ))
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1  # this checkout's jaxgames
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
    --out "runs/$run" "${settings[@]}" --anneal-lr=false --num-envs=4096 \
    --num-minibatches=128 --init-from="${start#none}" "${extra[@]}"
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
timeout 100 python3 experiments/benchmark_throughput.py --games reversi8 animal_shogi \
    tic_tac_toe --batch-sizes 4096 65536 --steps 200 --out "$out/throughput" 2>&1 | tail -20
fi
