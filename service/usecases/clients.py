"""Who is asking: the client a request, a game and its AI work count against."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Client:
    """A caller: `key:<name>` for a back end's API key, `addr:<address>` for anyone else."""

    id: str
    keyed: bool = False
