"""All Fives self-play: random matches through its real commands, and the invariants of
F1-F16 checked at every step against a count, ends and scores rebuilt from the layout.

Pure like the core it drives: the caller passes the randomness in. The bench
(`bench/engine.py`, whose `--long` sweep runs this beside Spinner's) and the tests
(`tests/unit/test_allfives_selfplay.py`) share `play_fives_match`, `fives_sweep` and
`FivesChecker`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

from service.game import events as ev
from service.game.allfives.commands import TARGET
from service.game.allfives.hand import FivesHand
from service.game.allfives.scoring import pips, play_points, round_to_five
from service.game.allfives.state import FivesState, replay
from service.game.allfives.tiles import FIVES_SET
from service.game.allfives.turns import check_move
from service.rules.errors import RuleError
from service.rules.moves import DRAW, PASS, Move
from service.rules.outcomes import BLOCKED, DOMINO
from service.rules.tiles import TILES, Tile
from tests.support.selfplay import Rng, pick, play_random_match

SEATS: Final = (2, 3, 4)
TARGETS: Final = (150, 50, 500)
MAX_EVENTS_PER_HAND: Final = 200
"""Far above any real hand: 28 plays, 28 draws and a round of passes."""


def fives_rules(target: int) -> dict[str, Any]:
    """Return the rules of an All Fives match to `target`."""
    return {"variant": "all_fives", "target": target}


def play_fives_match(seats: int, target: int, rng: Rng, tally: Counter[str],
                     checker: FivesChecker | None = None, *, sealed: bool = False,
                     ) -> tuple[FivesState, list[ev.Event]]:
    """Play one match of random legal moves to `target`; count its events into `tally`."""
    state, log = play_random_match(seats, fives_rules(target), rng, tally, checker,
                                   sealed=sealed)
    assert isinstance(state, FivesState)
    return state, log


def fives_sweep(hands: int, rng_for: Callable[[int], Rng],
                checker: FivesChecker | None = None) -> Counter[str]:
    """Play matches, seats cycling 2-4 and targets 150, 50, 500, until `hands` hands ended."""
    tally: Counter[str] = Counter()
    game = 0
    while tally[ev.HAND_ENDED] < hands:
        seats, target = SEATS[game % 3], TARGETS[game // 3 % 3]
        before = tally[ev.HAND_ENDED]
        play_fives_match(seats, target, rng_for(game), tally, checker)
        tally[f"hands_{seats}_seats"] += tally[ev.HAND_ENDED] - before
        game += 1
    tally["matches"] = game
    return tally


class Layout:
    """The table rebuilt from `tile_played` events alone, apart from `FivesHand`."""

    def __init__(self) -> None:
        self.plays: list[tuple[Tile, str | None, int | None, list[str]]] = []
        self.covered: set[str] = set()

    def add(self, data: dict[str, Any]) -> None:
        """Lay one played tile."""
        self.plays.append((Tile.parse(data["tile"]), data["end"], data["expose"],
                           list(data["new_ends"])))
        if data["end"] is not None:
            self.covered.add(data["end"])

    def count(self) -> int:
        """The count (F9): each tile's uncovered ends as they show."""
        total, spinner = 0, True
        for tile, end, expose, new_ends in self.plays:
            longs = new_ends[:2 - (end is not None)]
            if tile.is_double and spinner:  # F8: its long ends show it whole, or once
                spinner = False
                total += tile.value if any(e not in self.covered for e in longs) else 0
            elif end is None:
                total += sum(h for e, h in zip(new_ends, (tile.lo, tile.hi), strict=True)
                             if e not in self.covered)
            elif new_ends[0] not in self.covered:
                assert expose is not None
                total += tile.value if tile.is_double else expose
        return total

    def open_ends(self) -> set[str]:
        """The ends a tile may go on (F8): the spinner's sides once its long ends are covered."""
        ends, spinner = set(), True
        for tile, end, _, new_ends in self.plays:
            if tile.is_double and spinner:
                spinner = False
                longs = new_ends[:2 - (end is not None)]
                if any(e not in self.covered for e in longs):
                    ends |= set(longs)
                    continue
            ends |= set(new_ends)
        return ends - self.covered


class FivesChecker:
    """Checks F1-F16's invariants at every step of self-played matches; keeps what breaks.

    Per step: the 28 tiles in hands, boneyard and layout (F1, F3); the open ends and the
    count rebuilt from the layout (F8, F9); each play's points from that count (F10); a
    listed move accepted and a random one accepted exactly when listed (F11); no total at
    the target while the match goes on (F15). Per hand: it ends (within a bound) by domino,
    block or target, scored by F12-F14. Per match: its totals are the sum of the points
    its events gave, one seat reached the target, and replaying the log gives its state.
    """

    KINDS: Final = ("tiles", "layout", "points", "listed", "ending", "target", "replay")

    def __init__(self, rng: Rng, keep: int = 20) -> None:
        self.rng, self.keep = rng, keep
        self.failures: dict[str, list[str]] = {k: [] for k in self.KINDS}
        self.counts: Counter[str] = Counter()
        self.layout = Layout()
        self.events = 0
        self.hand: FivesHand | None = None  # the hand the last move was made in

    def fail(self, kind: str, message: str) -> None:
        """Record a broken invariant (keeping the first few messages of each kind)."""
        self.counts[f"failed_{kind}"] += 1
        if len(self.failures[kind]) < self.keep:
            self.failures[kind].append(message)

    def start(self, state: FivesState) -> None:
        """See a new match, its first hand dealt."""
        self.layout, self.events = Layout(), 0

    def before(self, hand: FivesHand, seat: int, moves: list[Move]) -> None:
        """Check one position before the seat moves."""
        self.counts["steps"] += 1
        self.hand = hand
        every = [*(t for held in hand.tiles for t in held), *hand.boneyard,
                 *(t for t, _, _ in hand.layout)]
        if sorted(t.index for t in every) != sorted(t.index for t in FIVES_SET):
            self.fail("tiles", f"hand {hand.number}: not the 28 tiles of double-six (F1)")
        if set(hand.ends) != self.layout.open_ends() or hand.count != self.layout.count():
            self.fail("layout", f"hand {hand.number}: ends {hand.ends} or count {hand.count} "
                                "differ from the layout's (F8, F9)")
        self._check_moves(hand, seat, moves)

    def _check_moves(self, hand: FivesHand, seat: int, moves: list[Move]) -> None:
        listed = pick(self.rng, moves)
        try:
            accepted = check_move(hand, seat, listed) == listed
        except RuleError:
            accepted = False
        if not accepted:
            self.fail("listed", f"listed {listed} refused or changed (F11)")
        try:
            check_move(hand, (seat + 1) % hand.seats, listed)
            self.fail("listed", f"{listed} accepted out of turn (F2)")
        except RuleError as error:
            self.counts[f"rejected_{error.rule}"] += 1
        probe = random_move(hand, self.rng)
        try:
            check_move(hand, seat, probe)
            accepted = True
        except RuleError as error:
            accepted = False
            self.counts[f"rejected_{error.rule}"] += 1
        if accepted != (probe in moves):
            self.fail("listed", f"hand {hand.number}: {probe} accepted: {accepted}, "
                                f"listed: {probe in moves} (F11)")

    def after(self, state: FivesState, new: list[ev.Event]) -> None:
        """Follow the events one move recorded."""
        self.events += len(new)
        if self.events > MAX_EVENTS_PER_HAND:
            self.fail("ending", f"a hand of {state.seats} seats runs past "
                                f"{MAX_EVENTS_PER_HAND} events (F12, F13)")
            raise RuntimeError(self.failures["ending"][-1])
        for event in new:
            if event["type"] == ev.TILE_PLAYED:
                self.layout.add(event["data"])
                if event["data"]["points"] != play_points(self.layout.count()):
                    self.fail("points", f"{event['data']} scores other than its count (F10)")
            elif event["type"] == ev.HAND_ENDED:
                self._check_ending(state, event["data"])
            elif event["type"] == ev.HAND_STARTED:
                self.layout, self.events = Layout(), 0
        if state.status == "playing" and max(state.totals) >= state.target:
            self.fail("target", f"totals {state.totals} reach {state.target}, play goes on (F15)")

    def _check_ending(self, state: FivesState, data: dict[str, Any]) -> None:
        self.counts["hands"] += 1
        self.counts[f"ended_{data['ended_by']}"] += 1
        for problem in ending_problems(data, self.hand):
            self.fail("ending", f"hand {data['hand_number']} of {state.seats} seats: {problem}")

    def finish(self, state: FivesState, log: list[ev.Event]) -> None:
        """Check the ended match: its totals, its one winner, its replay (F15, F16, R26)."""
        self.counts["matches"] += 1
        totals = [0] * state.seats
        for event in log:
            if event["type"] == ev.TILE_PLAYED:
                totals[event["seat"]] += event["data"]["points"]
            elif event["type"] == ev.HAND_ENDED:
                totals = [t + p for t, p in zip(totals, event["data"]["points"], strict=True)]
        winners = [s for s, t in enumerate(totals) if t >= state.target]
        if totals != state.totals or len(winners) != 1 or state.winners != winners:
            self.fail("target", f"totals {state.totals} (events: {totals}), winners "
                                f"{state.winners}: not one seat at the target (F15)")
        if log[-1]["type"] != ev.GAME_ENDED or log[-2]["type"] != ev.HAND_ENDED:
            self.fail("target", "the match does not end with hand_ended, game_ended (F16)")
        if replay(log).to_dict() != state.to_dict():
            self.fail("replay", f"match of {state.seats} seats: replaying its log differs")


def ending_problems(data: dict[str, Any], hand: FivesHand | None) -> list[str]:
    """Return what is wrong with a `hand_ended`, recomputed from the hands left (F12-F15)."""
    held = [[Tile.parse(t) for t in tiles] for tiles in data["hands"]]
    left = [pips(tiles) for tiles in held]
    winner, points, by = data["winner"], data["points"], data["ended_by"]
    if by == TARGET:
        return [] if points == [0] * len(left) and winner is not None else [
            "a target ending scores nothing more and names its seat (F15)"]
    if by == DOMINO and (winner is None or held[winner]):
        return ["the domino winner still holds tiles (F12)"]
    if by == BLOCKED:
        assert hand is not None
        if hand.boneyard or not hand.blocked:
            return ["blocked with tiles to draw or a seat that did not pass (F13)"]
        fewest = [s for s, p in enumerate(left) if p == min(left)]
        if winner != (fewest[0] if len(fewest) == 1 else None):
            return [f"blocked hand won by {winner}, not the one fewest holder (F13)"]
    if by not in (DOMINO, BLOCKED):
        return [f"ended by {by!r}"]
    expected = [0] * len(left)
    if winner is not None:
        expected[winner] = round_to_five(sum(left) - left[winner])
    return [] if points == expected else [f"points {points}, not {expected} (F12-F14)"]


def random_move(hand: FivesHand, rng: Rng) -> Move:
    """Return a move of any kind, legal or not: draw, pass, or any tile on any end or none."""
    roll = rng.random()
    if roll < 0.1:
        return DRAW if roll < 0.05 else PASS
    held: Sequence[Tile] = hand.tiles[hand.turn] or FIVES_SET
    tile = pick(rng, held if roll < 0.8 else FIVES_SET if roll < 0.95 else TILES)
    end = pick(rng, [None, *hand.ends, *hand.sides])
    return Move("play", tile, end, None if end is None else int(rng.random() * 7))
