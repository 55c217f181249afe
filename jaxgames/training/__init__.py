"""Training runs: the driver that turns an algorithm into resumable run directories.

* :mod:`jaxgames.training.driver`      ``run_training``: jitted chunks (one seed, or several in
                                       one ``vmap``), metrics, evaluation, checkpoints, resume
* :mod:`jaxgames.training.init_from`   starting a run from a trained agent's network
* :mod:`jaxgames.training.loggers`     optional metric mirrors (TensorBoard, W&B)
* :mod:`jaxgames.training.experiment`  what the scripts of ``experiments/`` share

The algorithms and their configs are :mod:`jaxgames.agents`; what a run directory holds
(config, checkpoints, metrics, lock) is :mod:`jaxgames.runs`. The speed of a preset's training
chunks is measured by ``experiments/benchmark_partners.py --variants preset`` and
``experiments/profile_selfplay.py``.
"""
