#!/usr/bin/env bash
# One short session on a GPU machine (no network there, its own jax): what the repo's numbers
# for a GPU come from (docs/results.md, "On a GPU"). Each step has its own time limit and the
# script goes on past a failed step, so one call gives whatever it can.
#
#   bash experiments/gpu_session.sh <out-dir> [train-seconds] [starting-agent] [run-name] [steps]
#
# steps: which of the three below to run (default "123"; "1" trains only). The run is written
# to runs/<run-name> (default gpu8) and comes back as <out>/<run-name>.tar.gz.
#
# docs/results.md's numbers: `bash experiments/gpu_session.sh $OUT 300 pretrained:reversi8` with
# the code of commit 67fffaa on one H200, pretrained:reversi8 then being the agent with params
# sha256 d694617c56286212... (steps 2 and 3 ran in an earlier call of the same session); the
# stage after it (the shipped reversi8, params sha256 82aa786ec2d01172...): `bash
# experiments/gpu_session.sh $OUT 400 runs/cpu8_s32/reversi8x8_alphazero/seed0 gpu8b 1` with
# the code of commit 0d007b3 on one H200, that CPU run's folder carried to the machine.
#
# 1. reversi 8x8 AlphaZero on the GPU: the starting agent (default pretrained:reversi8; a run
#    directory, saved on any device, works too) trained on with 32 simulations
#    and 32x the games at once (num_envs 4096; replay and minibatch count scaled with it, so
#    each gradient step is still 512 positions and there are as many per ply as on the CPU);
#    <out>/<run-name>.tar.gz holds the curves, the run's config and metrics and the agent exported
#    from it (parameters and card; the checkpoint, with its replay buffer, stays there)
# 2. the AlphaZero, search and symmetry tests on the GPU
# 3. environment throughput, jaxgames beside pgx, at GPU batch sizes
set -u
out=${1:?usage: gpu_session.sh <out-dir> [train-seconds] [starting-agent] [run-name] [steps]}
train_s=${2:-300}
start=${3:-pretrained:reversi8}
run=${4:-gpu8}
steps=${5:-123}
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
python3 - <<'EOF' || exit 1
import jax, flax, optax, chex, mctx, jaxgames
print("devices", jax.devices(), "jax", jax.__version__, "flax", flax.__version__,
      "optax", optax.__version__, "chex", chex.__version__, "mctx", mctx.__version__)
EOF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

if [[ $steps == *1* ]]; then
echo "== 1. reversi8 AlphaZero on the GPU (${train_s} s of training)"
budget=$(python3 -c "print($train_s / 60)")
# the budget is checked after each chunk (~1.5M plies, ~1 min here): the timeout leaves time
# for one chunk past it, the compile and the export below
timeout $((train_s + 130)) python3 experiments/learning_curves.py --games reversi:8 \
    --algos alphazero --seeds 1 --budget-minutes "$budget" --evals 40 \
    --total-steps 60000000 --opponents greedy --eval-games 64 --out "runs/$run" \
    --set net.hidden=512 features=mobility num_simulations=32 learning_rate=0.0001 \
    anneal_lr=false num_envs=4096 replay_size=262144 num_minibatches=128 \
    init_from="$start"
# the parameters alone, with their model card (the checkpoint's replay buffer and optimiser
# state are ~100x larger); the card's training facts are read here, where the run is
python3 -m jaxgames.cli export "runs/$run/reversi8x8_alphazero/seed0" "runs/${run}_export" \
    --name reversi8 --force
tar czf "$out/$run.tar.gz" "runs/$run"/reversi8x8_alphazero/*.* "runs/${run}_export" \
    "runs/$run"/reversi8x8_alphazero/seed0/*.* 2>/dev/null
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
