#!/usr/bin/env bash
# Every GPU measurement of the repo in one command that fits one device call (no network there,
# its own jax): where self-play's time goes, environment throughput, and an AlphaZero run that
# starts fresh, from an agent, or resumes a run directory brought along. Each stage has its own
# time limit and the script goes on past a failed one, so one call gives whatever it can.
#
#   bash experiments/gpu_session.sh <out-dir> [stages] [key=value ...]
#
# stages: comma-separated, run in the order given (default profile,throughput,train)
#   profile     experiments/profile_selfplay.py: per AlphaZero update, the time of the search's
#               network calls, its env steps, mctx's bookkeeping, replay and learner, at batch
#               sizes up to 65536 -> <out>/profile/
#   profile_bf16  the same with bfloat16 matmuls -> <out>/profile_bf16/
#   throughput  random play at batch sizes up to 2^20 -> <out>/throughput/
#   train       AlphaZero through experiments/learning_curves.py (one seed, greedy network
#               scored against held-out opponents after every chunk) -> <out>/<run>.tar.gz: the
#               curves, the run's config and metrics and the agent exported from it (the
#               checkpoint, with its replay buffer, stays in runs/<run>: a warm machine resumes
#               it when the same command runs again)
#   compare     the ResNet tower (6 blocks x 64 channels) against the train stage's MLP at equal
#               wall-clock: each trains seconds=... from a fresh network with the same settings
#               otherwise (the budget is checked after each chunk: a small chunk=... cuts
#               finer), then `jaxgames match` plays them head to head (200 openings, both
#               colours) -> <out>/compare.json, <out>/<run>_compare.tar.gz
#   tests       the AlphaZero, search, network and symmetry tests on the GPU
# key=value: envs="1024 ..." (profile's batch sizes), batches="65536 ..." (throughput's);
#   for train: game=reversi8|reversi6|animal_shogi, games=16384 (at once), seconds=150 (budget),
#   start=none|pretrained:<name>|<run dir> (default none: a fresh network), run=<name> (default
#   gpu_<game>), chunk=<plies per evaluation and checkpoint>, total_steps=<plies the learning
#   rate anneals over>, opponents="greedy engine:2 ..."; any other key is a config field
#   (net.dtype=bfloat16, learning_rate=0.001, ...) taking the place of the settings below.
#
# Run one session at a time on a GPU: two trainings at once run at a fraction of their rates
# alone (docs/results.md, "Throughput").
set -u
out=${1:?usage: gpu_session.sh <out-dir> [stages] [key=value ...]}
stages=${2:-profile,throughput,train}
game=reversi8 seconds=150 start=none run="" chunk="" total_steps=200000000 opponents="" extra=()
given=" "  # the config fields given as key=value, as flags: " --anneal-lr --net.hidden "
games=16384
envs="4096 16384 65536" batches="65536 262144 1048576"
for kv in "${@:3}"; do
    case $kv in
    game=*|games=*|seconds=*|start=*|run=*|chunk=*|total_steps=*|opponents=*|envs=*|batches=*)
        declare "${kv%%=*}=${kv#*=}" ;;
    *=*) key=--${kv%%=*}; key=${key//_/-}; extra+=("$key=${kv#*=}"); given+="$key " ;;
    *) echo "gpu_session.sh: '$kv' is not key=value" >&2; exit 2 ;;
    esac
done
# each game's GPU network; the preset scaled to games=16384 at once by the library's rule
# (TrainConfig.scaled_to: the replay ring keeps its plies of every game, minibatches grow to
# 2048 positions with more of them per update, the learning rate with the square root of the
# minibatch's growth, Malladi et al. 2022; docs/presets.md#more-games-at-once), 16 simulations,
# the learning rate held
case $game in
reversi8|reversi6)
    arch=(--net.hidden=512) features=mobility game_args=(--game reversi --size "${game#reversi}") ;;
animal_shogi)
    arch=(--net.hidden=512 --net.layers=6) features=attacks game_args=(--game animal_shogi) ;;
*) echo "gpu_session.sh: unknown game '$game' (reversi8, reversi6 or animal_shogi)" >&2
   exit 2 ;;
esac
opponents=${opponents:-"random greedy engine:2 engine:4"}
# the script's settings but those given as key=value (the scripts refuse a field set twice)
own() { local a; for a in "$@"; do [[ $given == *" ${a%%=*} "* ]] || printf '%s\n' "$a"; done; }
shared=(--features="$features" --anneal-lr=false)
mapfile -t net < <(own "${arch[@]}" "${shared[@]}")  # the profile stages'
mapfile -t bf16 < <(own --net.dtype=bfloat16)
train=("${shared[@]}" --num-simulations=16 --scale-envs="$games")
mapfile -t settings < <(own "${arch[@]}" "${train[@]}")
mapfile -t resnet < <(own --network=resnet --net.blocks=6 --net.channels=64 "${train[@]}")
run=${run:-gpu_$game}
chunk=${chunk:-$((games * 256))}  # 16 updates of 16 plies: an evaluation and a checkpoint each
evals=$(( (total_steps + chunk - 1) / chunk ))
mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1  # this checkout's jaxgames
python3 - <<'EOF' || exit 1
import jax, flax, optax, chex, mctx, jaxgames
print("devices", jax.devices(), "jax", jax.__version__, "flax", flax.__version__,
      "optax", optax.__version__, "chex", chex.__version__, "mctx", mctx.__version__)
EOF
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

for stage in ${stages//,/ }; do
case $stage in
profile)
    echo "== profile: where self-play's time goes (the train stage's settings)"
    timeout 200 python3 experiments/profile_selfplay.py --games "$game" --algos alphazero \
        --num-envs $envs --num-simulations 32 --num-steps 2 --repeats 2 "${net[@]}" \
        --out "$out/profile" "${extra[@]}" ;;
profile_bf16)
    echo "== profile: the same with bfloat16 matmuls"
    timeout 200 python3 experiments/profile_selfplay.py --games "$game" --algos alphazero \
        --num-envs $envs --num-simulations 32 --num-steps 2 --repeats 2 "${net[@]}" \
        "${bf16[@]}" --out "$out/profile_bf16" "${extra[@]}" ;;
throughput)
    echo "== throughput: random play"
    timeout 40 python3 experiments/benchmark_throughput.py --games reversi8 animal_shogi \
        --batch-sizes $batches --steps 100 --repeats 2 --no-plot --no-pgx \
        --out "$out/throughput" ;;
train)
    echo "== train: $game AlphaZero, ${seconds} s, from ${start}"
    budget=$(python3 -c "print($seconds / 60)")
    # the budget is checked after each chunk: the timeout leaves time for one chunk past it,
    # the compilation, the evaluations and the export below
    timeout $((seconds + 170)) python3 experiments/learning_curves.py --games "$game" \
        --algos alphazero --seeds 1 --budget-minutes "$budget" --evals "$evals" \
        --total-steps "$total_steps" --opponents $opponents --eval-games 64 \
        --out "runs/$run" "${settings[@]}" --init-from="${start#none}" "${extra[@]}"
    # the parameters alone, with their model card (the checkpoint's replay buffer and optimiser
    # state are ~100x larger); the card's training facts are read here, where the run is
    python3 -m jaxgames.cli export "runs/$run/${game}_alphazero/seed0" "runs/${run}_export" \
        --name "$game" --force
    tar czf "$out/$run.tar.gz" "runs/$run"/*.* "runs/$run/${game}_alphazero"/*.* \
        "runs/$run/${game}_alphazero"/seed0/*.* "runs/${run}_export" 2>/dev/null ;;
compare)
    echo "== compare: ResNet against the MLP, ${seconds} s each from scratch"
    budget=$(python3 -c "print($seconds / 60)")
    for variant in mlp resnet; do
        if [ "$variant" = mlp ]; then arch_args=("${settings[@]}"); else arch_args=("${resnet[@]}"); fi
        timeout $((seconds + 240)) python3 experiments/learning_curves.py --games "$game" \
            --algos alphazero --seeds 1 --budget-minutes "$budget" --evals "$evals" \
            --total-steps "$total_steps" --opponents $opponents --eval-games 64 \
            --out "runs/${run}_compare" --variant "$variant" "${arch_args[@]}" "${extra[@]}"
    done
    timeout 120 python3 -m jaxgames.cli match "runs/${run}_compare/${game}_alphazero_resnet/seed0" \
        "runs/${run}_compare/${game}_alphazero_mlp/seed0" "${game_args[@]}" --games 200 \
        --json "$out/compare.json" --force
    tar czf "$out/${run}_compare.tar.gz" "runs/${run}_compare"/*.* \
        "runs/${run}_compare"/*/*.* 2>/dev/null ;;
tests)
    echo "== tests on the GPU"
    # four test processes share the GPU: none may take most of its memory up front
    XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 100 python3 -m pytest -q -n 4 \
        -p no:cacheprovider tests/test_alphazero.py tests/test_search.py \
        tests/test_networks.py tests/test_symmetries.py 2>&1 | tail -15 ;;
*) echo "gpu_session.sh: unknown stage '$stage' (profile, profile_bf16, throughput, train, compare, tests)" >&2 ;;
esac
done
