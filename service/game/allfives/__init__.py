"""All Fives (ALLFIVES.md) in one folder: its pure rules (`tiles`, `hand`, `turns`,
`scoring`: F1-F15), its event-sourced game (`state`, the fold; `commands`) and its entry in
the registry (`variant.VARIANT`). Its AI lives beside, in `workers/ai/allfives/`.

Shared with Spinner: tiles and moves (`service.rules`), the event records and their hash
chain (`service.game.events`), the fold's shared handlers (`state.SHARED_FOLD`), fair
shuffles (`fairness`) and redaction (`views.redact`), which read the same event shapes.
"""
