"""Training runs: the driver that turns an algorithm into a resumable run directory.

* :mod:`jaxgames.training.driver`     ``run_training``: jitted chunks, metrics, evaluation,
                                      checkpoints, resume
* :mod:`jaxgames.training.loggers`    optional metric mirrors (TensorBoard, W&B)
* :mod:`jaxgames.training.benchmark`  plies per second of a preset's training chunks

The algorithms and their configs are :mod:`jaxgames.agents`; what a run directory holds
(config, checkpoints, metrics, lock) is :mod:`jaxgames.runs`.
"""
