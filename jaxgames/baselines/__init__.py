"""Classic baselines from the reference articles, on device: tic-tac-toe value iteration
(:mod:`~jaxgames.baselines.value_iteration`) and tabular Q-learning
(:mod:`~jaxgames.baselines.tabular_q`)."""
