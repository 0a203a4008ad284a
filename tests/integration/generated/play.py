"""An integrator's program that knows the service only through the Python client generated from
openapi.yaml (the package `spinner_client`, made by tests/integration/test_generated_client.py):
it plays a one-hand match between two human seats, moving for both, one against an AI seat and
an All Fives match to 50 against an AI seat, then prints what each finished match's log showed,
as JSON.

    python play.py BASE_URL

It reads events, states and created seats as typed objects only (never as dicts), so that
`mypy --strict` checks it against the generated types.
"""

from __future__ import annotations

import json
import sys
import time

from spinner_client import AuthenticatedClient, Client
from spinner_client.api.games import create_game, get_game, post_move
from spinner_client.api.log import get_events
from spinner_client.models import (
    AllFivesRules,
    AllFivesRulesRequest,
    Created,
    CreatedHumanSeat,
    CreateGameRequest,
    EventLog,
    GameEndedEvent,
    Kind,
    LeaderDrawnEvent,
    Level,
    Move,
    MoveRequest,
    MoveRequestAction,
    PassedEvent,
    PlayerRequest,
    PublicState,
    RulesRequest,
    SeatState,
    TileDrawnDataReason,
    TileDrawnEvent,
    TilePlayedEvent,
)

AI_WAIT_S = 20.0
"""How long an AI seat may take over its turn."""


Rules = RulesRequest | AllFivesRulesRequest


def create(base_url: str, kinds: list[Kind], rules: Rules
           ) -> tuple[str, dict[int, AuthenticatedClient]]:
    """Create a match of these seats under `rules`, without credentials; return its id and a
    client for each human seat, holding that seat's token."""
    players = [PlayerRequest(name=f"P{seat}", kind=kind, level=Level.RANDOM) if kind is Kind.AI
               else PlayerRequest(name=f"P{seat}", kind=kind) for seat, kind in enumerate(kinds)]
    body = CreateGameRequest(players=players, rules=rules)
    created = create_game.sync(client=Client(base_url=base_url), body=body)
    assert isinstance(created, Created), created
    return created.game_id, {seat.seat: AuthenticatedClient(base_url=base_url, token=seat.token)
                             for seat in created.seats if isinstance(seat, CreatedHumanSeat)}


def as_request(move: Move) -> MoveRequest:
    """A legal move, as the body of a move request."""
    return MoveRequest(action=MoveRequestAction(move.action.value), tile=move.tile,
                       end=move.end, expose=move.expose)


def play(base_url: str, kinds: list[Kind], rules: Rules) -> dict[str, object]:
    """Play a match of these seats to its end, each human seat making its first legal move
    in turn; return what its log shows and the variant its state names."""
    game_id, seats = create(base_url, kinds, rules)
    spectator = Client(base_url=base_url)
    moves, deadline = 0, time.monotonic() + AI_WAIT_S
    while True:
        public = get_game.sync(game_id, client=spectator)
        assert isinstance(public, PublicState), public  # a spectator's state
        if public.turn is None:
            variant = "all_fives" if isinstance(public.rules, AllFivesRules) else "spinner"
            return {"moves": moves, "winners": public.winners, "variant": variant,
                    **read_log(spectator, game_id)}
        seat = seats.get(public.turn)
        if seat is None:  # an AI seat's turn: it moves on its own
            assert time.monotonic() < deadline, "the AI seat did not move"
            time.sleep(0.02)
            continue
        mine = get_game.sync(game_id, client=seat)
        assert isinstance(mine, SeatState), mine
        moved = post_move.sync(game_id, client=seat, body=as_request(mine.legal_moves[0]),
                               if_match=f'"{mine.version}"')
        assert isinstance(moved, SeatState) and moved.version > mine.version, moved
        moves, deadline = moves + 1, time.monotonic() + AI_WAIT_S


def read_log(spectator: Client, game_id: str) -> dict[str, object]:
    """The ends each play opened, the match's winners and totals, how often each seat acted,
    the tiles drawn for the first leader and the points plays scored (All Fives), as the
    finished match's log shows them."""
    log = get_events.sync(game_id, client=spectator)
    assert isinstance(log, EventLog), log
    new_ends = [end for event in log.events if isinstance(event, TilePlayedEvent)
                for end in event.data.new_ends]
    ended = [event.data.winners for event in log.events if isinstance(event, GameEndedEvent)]
    totals = [total for event in log.events if isinstance(event, GameEndedEvent)
              for total in event.data.totals]
    leader_drawn = [tile.value for event in log.events if isinstance(event, LeaderDrawnEvent)
                    for tile in event.data.tiles]
    points = sum(event.data.points for event in log.events
                 if isinstance(event, TilePlayedEvent) and isinstance(event.data.points, int))
    acted: dict[int, int] = {}
    for event in log.events:
        drew = isinstance(event, TileDrawnEvent) and event.data.reason is TileDrawnDataReason.DRAW
        if event.seat is not None and (drew or isinstance(event, TilePlayedEvent | PassedEvent)):
            acted[event.seat] = acted.get(event.seat, 0) + 1
    return {"new_ends": new_ends, "logged_winners": ended, "acted": acted,
            "leader_drawn": leader_drawn, "points": points, "totals": totals}


def main() -> None:
    """Play both matches against the service at argv[1]; print what their logs showed."""
    base_url = sys.argv[1]
    one_hand = RulesRequest(hands=1)
    print(json.dumps({
        "humans": play(base_url, [Kind.HUMAN, Kind.HUMAN], one_hand),
        "against_ai": play(base_url, [Kind.HUMAN, Kind.AI], one_hand),
        "all_fives": play(base_url, [Kind.HUMAN, Kind.AI],
                          AllFivesRulesRequest(variant="all_fives", target=50)),
    }))


if __name__ == "__main__":
    main()
