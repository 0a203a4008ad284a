"""Marshmallow schemas for every request and response body (API.md).

A request body is loaded through its schema. An answer is not dumped: the views (and events,
created answers, health) are built in their schema's shape, keys in its order, and sent as
they are; the response schemas describe them (openapi.yaml mirrors them), and
tests/unit/test_schemas.py checks that each answer is what the schema's dump would make."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from flask import current_app, has_app_context
from marshmallow import (
    Schema,
    ValidationError,
    fields,
    post_load,
    validate,
    validates,
    validates_schema,
)

from service.game.lifecycle import LEVELS
from service.game.variant import Option, Variant
from service.game.variants import DEFAULT, VARIANTS
from service.rules.errors import MalformedMove
from service.rules.moves import ACTIONS
from service.rules.tiles import TILES, Tile, spelling_error

TURN_SECONDS_MAX = 604800
"""The longest turn clock, a week (API.md "Turn clocks")."""


def option_defaults(variants: Mapping[str, Variant]) -> dict[str, dict[str, int | str]]:
    """Return each variant's own options with their defaults (RULES.md R7, R9; ALLFIVES.md
    F15); the turn clock's are every variant's."""
    return {name: {o.name: o.default for o in v.options} for name, v in variants.items()}


def unicode_text(text: str) -> None:
    """Refuse text that UTF-8 cannot carry (a lone surrogate from a `\\ud800` escape)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        raise ValidationError("not valid Unicode text (a lone surrogate)") from None


UNSHOWN = r"\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
"""Characters no name may hold: controls (NUL, line breaks, escapes), and the bidirectional
overrides and isolates that would reverse the text shown after a name."""
NAME = re.compile(f"^[^{UNSHOWN}]*[^\\s{UNSHOWN}][^{UNSHOWN}]*$")
"""A player's name: something besides white space, and nothing of UNSHOWN (openapi.yaml's
`PlayerRequest.name` pattern)."""


def shown_name(text: str) -> None:
    """Refuse a name that is blank, or holds a control or bidirectional override."""
    if text and not NAME.fullmatch(text):  # an empty one is refused for its length
        raise ValidationError("a name must show something, and hold no control character "
                              "nor bidirectional override")


class StrictInt(fields.Integer):
    """An integer as JSON Schema's `integer` reads one (`4.0` is 4): it refuses fractions,
    strings and booleans; with a Range that words its own error, a value of another type gets
    that error too, so that it says the range."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)
        worded = [v.error for v in self.validators if isinstance(v, validate.Range) and v.error]
        if worded:
            self.error_messages["invalid"] = worded[0]

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # the contract's `integer`, which a generated client may send
        return int(super()._validated(value))


# Requests ---------------------------------------------------------------

class PlayerIn(Schema):
    """A seat at creation: a human, or an AI of some level (default expert)."""

    name = fields.String(required=True,
                         validate=[validate.Length(1, 64), unicode_text, shown_name])
    kind = fields.String(required=True, validate=validate.OneOf(("human", "ai")))
    level = fields.String(validate=validate.OneOf(LEVELS))

    @validates_schema(skip_on_field_errors=False)  # named beside any other bad field
    def _level_only_for_ai(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("kind") == "human" and "level" in data:
            raise ValidationError("only an AI seat has a level", "level")

    @post_load
    def _default_level(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data["kind"] == "ai":
            data.setdefault("level", "expert")
        return data


def turn_seconds_floor() -> int:
    """The shortest turn clock a creation may ask for: 10 s (API.md), unless the app's
    TURN_SECONDS_MIN, a setting for tests only, lowers it."""
    if not has_app_context():
        return 10
    floor: int = current_app.extensions["spinner"].settings.turn_seconds_min
    return floor


def _turn_seconds_in_range(value: int) -> None:
    floor = turn_seconds_floor()
    if not floor <= value <= TURN_SECONDS_MAX:
        raise ValidationError(f"turn_seconds is an integer {floor}-{TURN_SECONDS_MAX}")


def option_field(option: Option) -> fields.Field:
    """Return the field of a variant's option: a text among its `choices`, or an integer in
    its bounds and step, refused with its sentence and rule (a Range words the refusal of a
    value of any type; a step beyond 1 needs its own check)."""
    error = f"{option.says} ({option.rule})"
    if option.choices:
        return fields.String(validate=validate.OneOf(option.choices, error=error))
    if option.step == 1:
        return StrictInt(validate=validate.Range(option.low, option.high, error=error))

    def in_steps(value: int) -> None:
        if not (option.low <= value <= option.high and value % option.step == 0):
            raise ValidationError(error)
    return StrictInt(validate=in_steps)


class RulesChecks:
    """The checks and defaults of `RulesIn` (a mixin: its fields come from the registry)."""

    fields: dict[str, fields.Field]
    variant_options: dict[str, dict[str, int | str]]  # `option_defaults`, by variant

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _options_of_its_variant(self, data: dict[str, Any], original: Any, **_: Any) -> None:
        """Name every option sent that belongs to another variant only (F16)."""
        variant, sent = data.get("variant"), original if isinstance(original, dict) else {}
        known = self.variant_options
        if variant not in known:
            return
        foreign = [name for other, options in known.items() if other != variant
                   for name in options if name in sent and name not in known[variant]]
        if foreign:
            raise ValidationError({name: [f"{name} is no option of {variant} (F16)"]
                                   for name in foreign})

    @post_load
    def _defaults(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        """Fill in the variant's options and, with a clock, `timeouts_to_leave`; the keys in
        RulesOut's order."""
        filled = {**self.variant_options[data["variant"]], **data}
        if "turn_seconds" in filled:
            filled.setdefault("timeouts_to_leave", 3)
        return {name: filled[name] for name in self.fields if name in filled}


def rules_schema(variants: Mapping[str, Variant]) -> type[Schema]:
    """Build the schema of the game options: the `variant` (the first registered, Spinner,
    by default), each variant's options (`option_field`), then those of API.md "Turn
    clocks": `turn_seconds` (absent: no clock), `timeouts_to_leave` (with a clock, default
    3). An option of another variant is refused naming it (F16)."""
    options = {o.name: option_field(o) for v in variants.values() for o in v.options}
    return type("RulesIn", (RulesChecks, Schema), {
        "variant_options": option_defaults(variants),
        "variant": fields.String(load_default=DEFAULT, validate=validate.OneOf(
            variants, error=f"the variant is {' or '.join(variants)}")),
        **options,
        "turn_seconds": StrictInt(validate=_turn_seconds_in_range),
        "timeouts_to_leave": StrictInt(validate=validate.Range(
            1, 10, error="timeouts_to_leave is an integer 1-10")),
    })


RulesIn = rules_schema(VARIANTS)
"""The game options of every registered variant (`rules_schema`)."""


class NotifyIn(Schema):
    """Where a game's turn notifications (webhooks) go: an https URL (API.md "Lifecycle")."""

    url = fields.String(required=True, validate=[validate.Length(1, 2048), unicode_text])


class CreateGameIn(Schema):
    """`POST /v1/games`: 2 to 8 players (R4), the rules, an optional seed and an optional
    URL for turn notifications."""

    players = fields.List(fields.Nested(PlayerIn), required=True)
    rules = fields.Nested(RulesIn, load_default=None)
    seed = StrictInt(allow_none=True, load_default=None)
    notify = fields.Nested(NotifyIn, load_default=None)

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _players_of_its_variant(self, data: dict[str, Any], original: Any, **_: Any) -> None:
        """Count the players sent, even when some of them are invalid too: 2 to 8 (R4), or
        2 to 4 for All Fives (F2)."""
        players = original.get("players") if isinstance(original, dict) else None
        variant = VARIANTS[(data.get("rules") or {}).get("variant", DEFAULT)]
        if isinstance(players, list) and len(players) not in variant.seats:
            raise ValidationError(f"{variant.a_game} has {variant.seats[0]} to "
                                  f"{variant.seats[-1]} players ({variant.seats_rule})",
                                  "players")

    @post_load
    def _default_rules(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if data["rules"] is None:
            data["rules"] = RulesIn().load({})
        return data


class LeaveIn(Schema):
    """`POST /v1/games/{id}/leave`: the AI level that takes the seat over (API.md "Leaving")."""

    replace_with = fields.String(required=True, validate=validate.OneOf(LEVELS))


class MoveIn(Schema):
    """`POST /v1/games/{id}/moves`: play a tile on an end, draw, or pass (R16)."""

    action = fields.String(required=True, validate=validate.OneOf(ACTIONS))
    tile = fields.String()
    end = fields.String(allow_none=True, validate=unicode_text)
    expose = StrictInt(allow_none=True, validate=validate.Range(0, 9, error="expose is 0-9 (R14)"))

    def __init__(self, tiles: Collection[Tile] = TILES, **kwargs: Any) -> None:
        """A schema for moves in a game played with `tiles` (R1's set, or All Fives' F1)."""
        super().__init__(**kwargs)
        self.tiles = tiles

    @validates("tile")
    def _tile_in_notation(self, value: str, **_: Any) -> None:
        try:
            Tile.parse(value)
        except MalformedMove:
            raise ValidationError(spelling_error(value, self.tiles).detail) from None

    @validates_schema(pass_original=True, skip_on_field_errors=False)
    def _fields_fit_action(self, data: dict[str, Any], original: Any, **_: Any) -> None:
        """Name every field the action cannot take, beside any other bad field."""
        action, sent = data.get("action"), original if isinstance(original, dict) else {}
        if action == "play" and "tile" not in sent:
            raise ValidationError("a play names its tile", "tile")
        extra = [name for name in ("tile", "end", "expose") if name in sent]
        if action in ("draw", "pass") and extra:
            raise ValidationError({name: [f"a {action} takes no {name}"] for name in extra})


# Responses --------------------------------------------------------------

class MoveOut(Schema):
    """A move in request form, as listed in `legal_moves`."""

    action = fields.String()
    tile = fields.String()
    end = fields.String(allow_none=True)
    expose = fields.Integer()


class SeatOut(Schema):
    """A seat in the creation answer; `token` only for human seats, shown once."""

    seat = fields.Integer()
    name = fields.String()
    kind = fields.String()
    level = fields.String()
    token = fields.String()


class NotifyOut(Schema):
    """The creation's `notify`, with the secret that signs its notifications (shown once)."""

    url = fields.String()
    secret = fields.String()


class CreatedOut(Schema):
    """The answer to `POST /v1/games`; `notify` only for a game created with one."""

    game_id = fields.String()
    version = fields.Integer()
    seats = fields.List(fields.Nested(SeatOut))
    notify = fields.Nested(NotifyOut)


class PlayerOut(Schema):
    """A seat in the state: counts only, never tiles (R25)."""

    seat = fields.Integer()
    name = fields.String()
    kind = fields.String()
    level = fields.String()
    tile_count = fields.Integer()
    total = fields.Integer()


class PlacedTileOut(Schema):
    """A tile on the table: the end it went on (null for the opener) and the value it left."""

    tile = fields.String()
    end = fields.String(allow_none=True)
    expose = fields.Integer()


class EndOut(Schema):
    """An open end (R11)."""

    id = fields.String()
    value = fields.Integer()


class LayoutOut(Schema):
    """The table: tiles in the order played and the open ends."""

    tiles = fields.List(fields.Nested(PlacedTileOut))
    ends = fields.List(fields.Nested(EndOut))


class HandScoreOut(Schema):
    """One finished hand's scores (R21, R22)."""

    hand_number = fields.Integer()
    points = fields.List(fields.Integer())
    winner = fields.Integer(allow_none=True)
    ended_by = fields.String()


RulesOut = Schema.from_dict({
    "variant": fields.String(),
    **{o.name: fields.String() if o.choices else fields.Integer()
       for v in VARIANTS.values() for o in v.options},
    "turn_seconds": fields.Integer(), "timeouts_to_leave": fields.Integer(),
}, name="RulesOut")
"""The rules as created, defaults filled in: the variant and its own options."""


OWN_FIELDS = ("seat", "hand", "legal_moves")
"""The fields of StateOut that only the caller's own seat gets (R25)."""


class StateOut(Schema):
    """The state as one seat (or a spectator) may see it (API.md "The state")."""

    game_id = fields.String()
    version = fields.Integer()
    status = fields.String()
    rules = fields.Nested(RulesOut)
    hand_number = fields.Integer()
    opening_double = fields.String()
    turn = fields.Integer(allow_none=True)
    boneyard_count = fields.Integer()
    layout = fields.Nested(LayoutOut)
    obligations = fields.List(fields.String())
    players = fields.List(fields.Nested(PlayerOut))
    scores = fields.List(fields.Nested(HandScoreOut))
    winners = fields.List(fields.Integer())
    turn_deadline = fields.String(allow_none=True)
    seat = fields.Integer()
    hand = fields.List(fields.String())
    legal_moves = fields.List(fields.Nested(MoveOut))


class EventOut(Schema):
    """One event of the log; `hash` is left out of a redacted log."""

    seq = fields.Integer()
    type = fields.String()
    at = fields.String()
    seat = fields.Integer(allow_none=True)
    data = fields.Dict()
    hash = fields.String()


class EventsOut(Schema):
    """`GET /events`: the log, redacted for the caller until the match ends."""

    events = fields.List(fields.Nested(EventOut))


class ExportOut(Schema):
    """`GET /export`: the complete log of an ended match."""

    game_id = fields.String()
    events = fields.List(fields.Nested(EventOut))


class FieldErrorOut(Schema):
    """One bad field of a request."""

    field = fields.String()
    message = fields.String()


class ProblemOut(Schema):
    """An RFC 9457 problem document."""

    type = fields.String()
    title = fields.String()
    status = fields.Integer()
    detail = fields.String()
    errors = fields.List(fields.Nested(FieldErrorOut))
    rule = fields.String()
    legal_moves = fields.List(fields.Nested(MoveOut))
    version = fields.Integer()


class HealthOut(Schema):
    """`GET /healthz`."""

    status = fields.String()
    store = fields.String()


class StreamTurnOut(Schema):
    """The data of a `/stream` frame `event: turn`: where the game stands after the events
    sent before it."""

    version = fields.Integer()
    turn = fields.Integer(allow_none=True)
    status = fields.String()


class StreamTicketOut(Schema):
    """`POST /stream-tickets`: a ticket that opens the game's stream as the seat for a while."""

    ticket = fields.String()
    expires_at = fields.String()
