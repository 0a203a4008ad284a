"""All Fives as an event-sourced game (ALLFIVES.md): its state, fold and commands.

Shared with Spinner: the event records and their hash chain (`service.game.events`), fair
shuffles (`fairness`) and redaction (`views.redact`), which read the same event shapes.
"""
