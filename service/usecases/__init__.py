"""The application's use cases, one module per capability, over the ports (`ports.py`) that
adapters implement; `games.Games` is the one object the API and the workers call."""
