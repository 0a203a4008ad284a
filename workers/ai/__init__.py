"""AI players: pure strategies that see one seat's view and return a legal move."""

from workers.ai.strategies import STRATEGIES, choose_move

__all__ = ["STRATEGIES", "choose_move"]
