"""Evaluation yardsticks: classic opponents, the arena, Elo/Bradley-Terry ratings."""
