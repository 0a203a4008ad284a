"""The application's use cases, over the ports (`ports.py`) that adapters implement."""
