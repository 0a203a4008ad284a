"""The expert's search budget shrinks as expert turns queue up (issue 17): a long queue costs
less CPU a turn, while the move still reaches the log at its fixed time (no timing channel)."""

from __future__ import annotations

import pytest

from workers.jobs import SEARCH_SHARE, search_budget


@pytest.mark.parametrize("waiting", [0, 1])
def test_a_calm_queue_leaves_the_whole_budget(waiting):
    assert search_budget(0.3, waiting, calm=1) == pytest.approx(0.3 * SEARCH_SHARE)


def test_the_budget_shrinks_with_the_turns_waiting():
    budgets = [search_budget(0.3, waiting, calm=1) for waiting in (1, 2, 4, 8, 30)]
    assert budgets == sorted(budgets, reverse=True)
    assert budgets[1] == pytest.approx(0.3 * SEARCH_SHARE / 2)
    assert budgets[-1] == pytest.approx(0.3 * SEARCH_SHARE / 30)


def test_a_larger_calm_queue_shrinks_later():
    assert search_budget(0.3, 4, calm=4) == pytest.approx(0.3 * SEARCH_SHARE)
    assert search_budget(0.3, 8, calm=4) == pytest.approx(0.3 * SEARCH_SHARE / 2)


def test_no_time_left_means_no_search():
    assert search_budget(-0.1, 0, calm=1) <= 0
