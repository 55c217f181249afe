"""Training infrastructure shared by all algorithms.

* :mod:`jaxgames.training.config`     typed, validated configs with ``--key=value`` overrides
* :mod:`jaxgames.training.algorithm`  the ``Algorithm`` interface (init / jitted chunk / params)
* :mod:`jaxgames.training.driver`     ``run_training``: chunks, metrics, evaluation,
                                      checkpoints, resume
* :mod:`jaxgames.training.checkpoint` checksummed orbax checkpoints, fallback past damaged ones
* :mod:`jaxgames.training.metrics`    metrics.jsonl / metrics.csv / learning-curve plot
* :mod:`jaxgames.training.lock`       one writer per run directory
"""
