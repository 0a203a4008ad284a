"""A hand's one-line text form, as FEN is a chess position's: for tests, logs and debugging.

    0: 3-S 5-6 | 1: 2-2 | boneyard: 1-1 4-S | ends: e1=3 e2=7 | owed: e1 | turn 0

Parts are separated by `|`, in any order. `N: tiles` is seat N's hand; the seats run to the
highest N given. Lists follow a colon: `boneyard:` (top first), `ends:` (id=value, oldest
first, R11), `owed:` (R17), `openers:` (R8, before the first play), `drawn:` (the tile drawn
this turn, R16; added to the hand of the seat to move if it is not there) and `layout:` (the
plays so far in the move text form, comma separated: `layout: 9-9 9, 3-9 e1 3`). Single values
follow a space: `turn N` (`-` for none), `hand N`, `rule next_lower`, `shuffler N`,
`passes N` (R18, R20), `next_end N` (the number of the next end id). A part left out means:
seat 0 to move, hand 1, rule `draw`, shuffler 0, no passes, nothing in the lists, except the
layout, which is the hand's opening double alone in the centre (R10, R12), so that the hand
is under way; and `next_end` follows the highest end id.
"""

from __future__ import annotations

from collections.abc import Iterable

from service.rules.hand import Hand
from service.rules.moves import Move
from service.rules.opening import opening_double, opening_value
from service.rules.tiles import Tile

_LISTS = ("boneyard", "ends", "owed", "openers", "drawn", "layout")
_VALUES = ("turn", "hand", "rule", "shuffler", "passes", "next_end")


def parse_position(text: str) -> Hand:
    """Build the hand written `text` in the one-line form; raise ValueError if it is not one."""
    parts = _parts(text)
    held = {int(key): _tiles(value) for key, value in parts.items() if key.isdigit()}
    number = int(parts.get("hand", 1))
    hand = Hand(number, parts.get("rule", "draw"), max(held, default=0) + 1,
                int(parts.get("shuffler", 0)))
    hand.tiles = [held.get(seat, []) for seat in range(hand.seats)]
    hand.boneyard = _tiles(parts.get("boneyard", ""))
    ends = (item.partition("=") for item in parts.get("ends", "").split())
    hand.set_ends({end: int(value) for end, _, value in ends})
    hand.obligations = parts.get("owed", "").split()
    hand.openers = tuple(_tiles(parts.get("openers", "")))
    hand.layout = _layout(parts["layout"], number) if "layout" in parts else _opened(number)
    hand.next_end = int(parts.get("next_end", _next_end(hand)))
    hand.turn = None if parts.get("turn") == "-" else int(parts.get("turn", 0))
    hand.passes = int(parts.get("passes", 0))
    if parts.get("drawn"):
        hand.drawn = Tile.parse(parts["drawn"])
        if hand.turn is not None and hand.drawn not in hand.tiles[hand.turn]:
            hand.tiles[hand.turn].append(hand.drawn)
    _check_each_tile_once(hand, text)
    return hand


def position_text(hand: Hand) -> str:
    """Return the one-line form of `hand`, leaving out what is as a part left out means."""
    parts = [f"{seat}: {_texts(held)}".rstrip() for seat, held in enumerate(hand.tiles)]
    lists = {
        "boneyard": _texts(hand.boneyard),
        "ends": " ".join(f"{end}={value}" for end, value in hand.ends.items()),
        "owed": " ".join(hand.obligations),
        "openers": _texts(hand.openers),
        "drawn": hand.drawn.text if hand.drawn else "",
    }
    parts += [f"{key}: {value}" for key, value in lists.items() if value]
    if hand.layout != _opened(hand.number):
        layout = ", ".join(str(Move("play", *play)) for play in hand.layout)
        parts.append(f"layout: {layout}".rstrip())
    parts.append(f"turn {'-' if hand.turn is None else hand.turn}")
    values = {"hand": (hand.number, 1), "rule": (hand.rule, "draw"),
              "shuffler": (hand.shuffler, 0), "passes": (hand.passes, 0),
              "next_end": (hand.next_end, _next_end(hand))}
    parts += [f"{key} {value}" for key, (value, default) in values.items() if value != default]
    return " | ".join(parts)


def _parts(text: str) -> dict[str, str]:
    """Split `text` into its parts, key -> value, refusing a part it does not know."""
    parts: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split("|"))):
        key, _, value = part.partition(":") if ":" in part else part.partition(" ")
        key = key.strip()
        if not (key.isdigit() or key in _LISTS or key in _VALUES) or key in parts:
            raise ValueError(f"{part!r} is not a part of a position, or a second one")
        parts[key] = value.strip()
    return parts


def _tiles(text: str) -> list[Tile]:
    """Return the tiles written in `text`, separated by spaces."""
    return [Tile.parse(word) for word in text.split()]


def _texts(tiles: Iterable[Tile]) -> str:
    return " ".join(t.text for t in tiles)


def _opened(number: int) -> list[tuple[Tile, str | None, int]]:
    """The layout of a hand just opened with its opening double (R10, R12)."""
    double = opening_double(number)
    return [(double, None, opening_value(double, number))]


def _layout(text: str, number: int) -> list[tuple[Tile, str | None, int]]:
    """Read the plays of a layout; the opening's value may be left to R12."""
    layout: list[tuple[Tile, str | None, int]] = []
    for play in filter(None, (p.strip() for p in text.split(","))):
        _, tile, end, expose = Move.parse(play)
        if tile is None or (expose is None and end is not None):
            raise ValueError(f"{play!r} is not a play that says what it left, in a layout")
        layout.append((tile, end, opening_value(tile, number) if expose is None else expose))
    return layout


def _next_end(hand: Hand) -> int:
    """The number after the highest open end id's; 5 with none open once the hand is opened."""
    return 1 + max((int(end[1:]) for end in hand.ends), default=4 if hand.layout else 0)


def _check_each_tile_once(hand: Hand, text: str) -> None:
    everything = [t for held in hand.tiles for t in held] + hand.boneyard
    everything += [t for t, _, _ in hand.layout]
    if len(set(everything)) != len(everything):
        raise ValueError(f"a tile appears twice in the position {text!r}")
