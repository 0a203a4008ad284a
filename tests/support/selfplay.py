"""Self-play: random matches through the real commands, and the invariants they must keep.

Pure like the core it drives: the caller passes the randomness in, as a `random.Random`.
The bench (`bench/engine.py`) and the self-play tests (`tests/unit/test_selfplay.py`) share
`play_random_match`, `sweep` and `Checker`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, Final, Protocol, TypeAlias, TypeVar

from service.game import events as ev
from service.game.commands import Shuffle
from service.game.fairness import Shuffled
from service.game.state import GameState, evolve, replay
from service.game.variants import variant_of
from service.rules.errors import IllegalMove
from service.rules.hand import Hand, index_by_value
from service.rules.matching import EXPOSES
from service.rules.moves import DRAW, PASS, Move
from service.rules.opening import OPENING_RULES
from service.rules.scoring import blocked_winner, points
from service.rules.tiles import TILES, Tile
from service.rules.turns import check_move, target_ends

T = TypeVar("T")

AT: Final = "2000-01-01T00:00:00Z"
"""The time the harnesses stamp on sealed events; unsealed ones carry none."""

MAX_ACTIONS_PER_HAND: Final = 2000
"""Far above any real hand (at most 66 plays, 66 draws and a round of passes after each)."""

WORLD_VALUE: Final = sum(t.value for t in TILES)
"""660, the value of the whole set (R3)."""

_TYPE = itemgetter("type")


class Rng(Protocol):
    """The randomness self-play needs, as `random.Random` provides it."""

    def random(self) -> float:
        """Return a float in [0, 1)."""


def pick(rng: Rng, options: Sequence[T]) -> T:
    """Return one of `options`, uniformly at random."""
    return options[int(rng.random() * len(options))]


def shuffler(rng: Rng, tiles: Sequence[Tile] = TILES) -> Shuffle:
    """Return a Shuffle that deals every hand from a fresh uniformly shuffled deck of `tiles`
    (R5; All Fives passes its 28, F3), with no salt: a simulation commits to nothing."""
    def shuffle(number: int) -> Shuffled:
        keys = [rng.random() for _ in tiles]  # uniform: 53-bit random keys do not tie
        return Shuffled([tiles[i] for i in sorted(range(len(tiles)), key=keys.__getitem__)])
    return shuffle


def players(seats: int) -> list[dict[str, Any]]:
    """Return `seats` random AI players."""
    return [{"name": f"P{s}", "kind": "ai", "level": "random"} for s in range(seats)]


def match_rules(game: int, hands: int = 10) -> tuple[int, dict[str, Any]]:
    """Return the seats (2-8) and rules of the sweep's game `game`: every pair each 14 games."""
    opening = OPENING_RULES[game % len(OPENING_RULES)]
    return 2 + (game // len(OPENING_RULES)) % 7, {"hands": hands, "opening": opening}


S = TypeVar("S", contravariant=True)
H = TypeVar("H", contravariant=True)


class Watcher(Protocol[S, H]):
    """Follows a self-played match of states `S` and hands `H`: `Checker` and All Fives'
    `FivesChecker` check it, the bench samples positions."""

    def start(self, state: S) -> None:
        """See the new match, its first hand dealt."""

    def before(self, hand: H, seat: int, moves: list[Move]) -> None:
        """See the position and the legal moves before the seat moves."""

    def after(self, state: S, new: list[ev.Event]) -> None:
        """See the events one move recorded."""

    def finish(self, state: S, log: list[ev.Event]) -> None:
        """See the finished match and its whole log."""


def play_random_match(seats: int, rules: dict[str, Any], rng: Rng, tally: Counter[str],
                      checker: Watcher[Any, Any] | None = None, *, sealed: bool = False,
                      ) -> tuple[Any, list[ev.Event]]:
    """Play one match of random legal moves of the variant `rules` name (`variants`); count
    its events by type into `tally`."""
    variant = variant_of(rules)
    shuffle, legal, make = shuffler(rng, variant.tiles), variant.legal_moves, variant.make_move
    state, log = variant.create_game(players(seats), rules, shuffle, AT, sealed=sealed)
    if checker:
        checker.start(state)
    while state.status == "playing":
        hand = state.hand
        assert hand is not None and hand.turn is not None  # make_move deals the next hand
        seat = hand.turn
        moves = legal(hand, seat)
        if checker:
            checker.before(hand, seat, moves)
        move = moves[int(rng.random() * len(moves))]  # pick(rng, moves), inlined
        new = make(state, seat, move, shuffle, AT, sealed=sealed)
        log += new
        if checker:
            checker.after(state, new)
    if checker:
        checker.finish(state, log)
    tally.update(map(_TYPE, log))
    return state, log


def sweep(games: int, rng_for: Callable[[int], Rng],
          checker: Watcher[GameState, Hand] | None = None,
          *, hands: int = 10, sealed: bool = False) -> Counter[str]:
    """Play `games` matches (seats and opening rule cycling, see `match_rules`); tally events."""
    tally: Counter[str] = Counter()
    for game in range(games):
        seats, rules = match_rules(game, hands)
        before = tally[ev.HAND_ENDED]
        play_random_match(seats, rules, rng_for(game), tally, checker, sealed=sealed)
        tally[f"hands_{seats}_seats"] += tally[ev.HAND_ENDED] - before
        tally[f"hands_{rules['opening']}"] += tally[ev.HAND_ENDED] - before
    return tally


class Checker:
    """Checks the invariants at every step of self-played matches and keeps what breaks.

    Per step: all 66 tiles accounted for (R1, R5); the open ends indexed by value (for
    `open_plays`); a listed move accepted; then, in turn, a move built to break one rule
    rejected naming it, or a random move accepted exactly when listed (R16). Per hand: it
    ends by domino or block, scored by R19-R22, and replaying its events onto a snapshot
    reproduces the state (R26). Per match: replaying the whole log.
    It draws its probes from its own `rng`, so checked and unchecked matches play alike.
    """

    def __init__(self, rng: Rng, keep: int = 20) -> None:
        self.rng, self.keep = rng, keep
        self.failures: dict[str, list[str]] = {k: [] for k in
                                               ("tiles", "index", "listed", "unlisted",
                                                "ending", "replay")}
        self.counts: Counter[str] = Counter()
        self.snapshot: dict[str, Any] = {}
        self.segment: list[ev.Event] = []

    def fail(self, kind: str, message: str) -> None:
        """Record a broken invariant (keeping the first few messages of each kind)."""
        self.counts[f"failed_{kind}"] += 1
        if len(self.failures[kind]) < self.keep:
            self.failures[kind].append(message)

    def start(self, state: GameState) -> None:
        """Take the snapshot the first hand's events will be replayed onto."""
        self.snapshot, self.segment = state.to_dict(), []

    def before(self, hand: Hand, seat: int, moves: list[Move]) -> None:
        """Check one position before the seat moves."""
        rng, counts = self.rng, self.counts
        counts["steps"] += 1
        self._check_tile_count(hand)
        if hand.ends_by_value != index_by_value(hand.ends):
            self.fail("index", f"hand {hand.number}: ends_by_value does not match the open ends")
        self._check_listed(hand, seat, pick(rng, moves))
        if counts["steps"] % 2:  # one probe of the two kinds below per step, in turn
            self._check_unlisted(hand, seat, moves, rng)
        else:
            self._check_random(hand, seat, moves, rng)

    def after(self, state: GameState, new: list[ev.Event]) -> None:
        """Follow the events one move recorded; check each hand that they end."""
        self.segment += new
        self.counts["search_draws"] += sum(e["type"] == ev.TILE_DRAWN
                                           and e["data"]["reason"] == "search" for e in new)
        if len(self.segment) > MAX_ACTIONS_PER_HAND:
            self.fail("ending", f"{_where(state)}: the hand has not ended after "
                                f"{MAX_ACTIONS_PER_HAND} events (R19, R20)")
            raise RuntimeError(self.failures["ending"][-1])
        ended = [i for i, e in enumerate(new) if e["type"] == ev.HAND_ENDED]
        if ended:
            self._check_hand(state, len(self.segment) - len(new) + ended[0])

    def finish(self, state: GameState, log: list[ev.Event]) -> None:
        """Check that replaying the whole log from nothing gives the final state (R26)."""
        self.counts["matches"] += 1
        if replay(log).to_dict() != state.to_dict():
            self.fail("replay", f"match of {state.seats} seats: replaying its log differs")

    def _check_tile_count(self, hand: Hand) -> None:
        count = sum(map(len, hand.tiles)) + len(hand.boneyard) + len(hand.layout)
        if count != len(TILES):
            self.fail("tiles", f"hand {hand.number}: {count} tiles in play, not 66 (R1)")

    def _check_listed(self, hand: Hand, seat: int, move: Move) -> None:
        self.counts["listed_checked"] += 1
        try:
            checked = check_move(hand, seat, move)
        except IllegalMove as error:
            self.fail("listed", f"listed {move} refused: {error}")
            return
        if checked != move:
            self.fail("listed", f"listed {move} came back as {checked}")

    def _check_unlisted(self, hand: Hand, seat: int, moves: list[Move], rng: Rng) -> None:
        built = pick(rng, BREAKERS)(hand, seat, moves, rng)
        if built is None:
            return
        rule, by, move = built
        if by == seat and move in moves:
            self.fail("unlisted", f"hand {hand.number}: {move} is listed yet breaks {rule}")
            return
        try:
            check_move(hand, by, move)
        except IllegalMove as error:
            self.counts[f"rejected_{error.rule}"] += 1
            if error.rule != rule:
                self.fail("unlisted", f"{move} by seat {by}: {error}; expected {rule}")
            return
        self.fail("unlisted", f"hand {hand.number}: {move} by seat {by} accepted, breaks {rule}")

    def _check_random(self, hand: Hand, seat: int, moves: list[Move], rng: Rng) -> None:
        move = random_move(hand, rng)
        try:
            check_move(hand, seat, move)
            accepted = True
        except IllegalMove:
            accepted = False
        if accepted != (move in moves):
            verdict = "accepted" if accepted else "refused"
            self.fail("listed" if not accepted else "unlisted",
                      f"hand {hand.number}: {move} {verdict}, listed: {move in moves}")

    def _check_hand(self, state: GameState, end_index: int) -> None:
        self.counts["hands"] += 1
        try:
            ended = replay(self.segment[:end_index + 1], GameState.from_dict(self.snapshot))
        except Exception as error:  # a log that cannot be replayed is the failure to report
            self.fail("replay", f"hand ending at version {state.version}: replay raised {error!r}")
        else:
            self._check_ending(ended, self.segment[end_index])
            for event in self.segment[end_index + 1:]:
                evolve(ended, event)
            if ended.to_dict() != state.to_dict():
                self.fail("replay", f"{_where(state)}: replaying the hand's events differs")
        self.start(state)

    def _check_ending(self, state: GameState, event: ev.Event) -> None:
        hand, data = state.hand, event["data"]
        assert hand is not None
        every = sorted(t.index for t in [*_all_held(hand), *hand.boneyard,
                                         *(t for t, _, _ in hand.layout)])
        if every != list(range(len(TILES))):
            self.fail("tiles", f"hand {hand.number} ends without exactly the 66 tiles (R1)")
        if sum(TILES[i].value for i in every) != WORLD_VALUE:
            self.fail("tiles", f"hand {hand.number}: the tiles are not worth 660 (R3)")
        for problem in ending_problems(hand, data):
            self.fail("ending", f"hand {hand.number} of {hand.seats} seats: {problem}")
        self.counts[f"ended_{data['ended_by']}"] += 1


def ending_problems(hand: Hand, data: dict[str, Any]) -> list[str]:
    """Return what is wrong with the way `hand` ended (`hand_ended` data), per R19-R22."""
    problems = []
    scores = [points(held) for held in hand.tiles]
    if data["points"] != scores:
        problems.append(f"points {data['points']} are not the values left, {scores} (R21)")
    if data["ended_by"] == "domino":
        if hand.tiles[data["winner"]]:
            problems.append("the domino winner still holds tiles (R19)")
    elif data["ended_by"] == "blocked":
        if hand.boneyard or hand.obligations or hand.passes < hand.seats:
            problems.append("blocked with tiles to draw, a pending obligation or a seat "
                            "that did not pass (R18, R20)")
        if data["winner"] != blocked_winner(scores):
            problems.append(f"blocked hand won by {data['winner']}, not the lowest score (R22)")
    else:
        problems.append(f"ended by {data['ended_by']!r}, neither domino nor blocked")
    return problems


def random_move(hand: Hand, rng: Rng) -> Move:
    """Return a move of any kind, legal or not: draw, pass, or any tile on any end or none."""
    roll = rng.random()
    if roll < 0.1:
        return DRAW if roll < 0.05 else PASS
    held = _all_held(hand) if roll < 0.2 else hand.tiles[hand.turn or 0]
    tile = pick(rng, held) if held else pick(rng, TILES)
    ends: list[str | None] = [None, *hand.ends]
    return Move("play", tile, pick(rng, ends), int(rng.random() * 10))


Built: TypeAlias = tuple[str, int, Move] | None
"""A move built to break one rule: (that rule, the seat that makes it, the move)."""


def _out_of_turn(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    other = (seat + 1 + int(rng.random() * (hand.seats - 1))) % hand.seats
    return "R4", other, pick(rng, moves)


def _draw_or_pass(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    unlisted = [m for m in (DRAW, PASS) if m not in moves]
    return ("R16" if hand.layout else "R10"), seat, pick(rng, unlisted)


def _unheld_tile(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    held = hand.tiles[seat]
    tile = pick(rng, TILES)
    while tile in held:
        tile = pick(rng, TILES)
    end = pick(rng, [None, *hand.ends])
    return "R16", seat, Move("play", tile, end, int(rng.random() * 10))


def _not_an_open_end(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    if not hand.layout:
        return None
    covered = [end for _, end, _ in hand.layout[1:]]
    end = pick(rng, [None, "e0", "x", *covered])
    return "R11", seat, Move("play", _playable_tile(hand, seat, rng), end, 0)


def _not_owed(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    if not hand.layout or not hand.obligations:
        return None
    free = [(e, v) for e, v in hand.ends.items() if e not in hand.obligations]
    return _fitting(hand, seat, free, "R17", rng)


def _no_match(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    if not hand.layout:
        return None
    tile = _playable_tile(hand, seat, rng)
    ends = [e for e, v in target_ends(hand) if not EXPOSES[tile.index][v]]
    return ("R13", seat, Move("play", tile, pick(rng, ends), 0)) if ends else None


def _wrong_expose(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    if not hand.layout:
        return None
    tile = _playable_tile(hand, seat, rng)
    for end, value in target_ends(hand):
        wrong = [x for x in range(10) if x not in EXPOSES[tile.index][value]]
        if 0 < len(wrong) < 10:
            return "R14", seat, Move("play", tile, end, pick(rng, wrong))
    return None


def _not_the_drawn_tile(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    if hand.drawn is None or len(hand.tiles[seat]) < 2:
        return None
    others = [t for t in hand.tiles[seat] if t is not hand.drawn]
    tile = pick(rng, others)
    end, value = pick(rng, target_ends(hand))
    exposes = EXPOSES[tile.index][value] or (0,)
    return "R16", seat, Move("play", tile, end, exposes[0])


def _not_the_opening(hand: Hand, seat: int, moves: list[Move], rng: Rng) -> Built:
    if hand.layout:
        return None
    others = [t for t in hand.tiles[seat] if t not in hand.openers]
    if others and rng.random() < 0.5:
        return "R10", seat, Move("play", pick(rng, others), None, 0)
    opening = pick(rng, moves)
    return "R10", seat, opening._replace(end="e1")


BREAKERS: Final[tuple[Callable[[Hand, int, list[Move], Rng], Built], ...]] = (
    _out_of_turn, _draw_or_pass, _unheld_tile, _not_an_open_end, _not_owed, _no_match,
    _wrong_expose, _not_the_drawn_tile, _not_the_opening,
)
"""Builders of moves that break one rule each (None where the position does not allow it)."""


def _fitting(hand: Hand, seat: int, ends: list[tuple[str, int]], rule: str, rng: Rng) -> Built:
    """Return a play that fits one of `ends` by R13-R14 yet breaks `rule`, if one exists."""
    held = [hand.drawn] if hand.drawn is not None else hand.tiles[seat]
    fits = [(t, e, EXPOSES[t.index][v]) for t in held for e, v in ends if EXPOSES[t.index][v]]
    if not fits:
        return None
    tile, end, exposes = pick(rng, fits)
    return rule, seat, Move("play", tile, end, pick(rng, exposes))


def _playable_tile(hand: Hand, seat: int, rng: Rng) -> Tile:
    """Return a tile the seat may put down now: the drawn one, or any it holds."""
    return hand.drawn if hand.drawn is not None else pick(rng, hand.tiles[seat])


def _all_held(hand: Hand) -> list[Tile]:
    return [t for held in hand.tiles for t in held]


def _where(state: GameState) -> str:
    hand = state.hand
    return f"{state.seats} seats, hand {hand.number if hand else '-'}, version {state.version}"
