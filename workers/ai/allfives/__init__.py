"""AI players for All Fives (ALLFIVES.md): pure functions of one seat's view, as Spinner's."""

from workers.ai.allfives.strategies import FIVES_STRATEGIES, choose_fives_move

__all__ = ["FIVES_STRATEGIES", "choose_fives_move"]
