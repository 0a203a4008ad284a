"""Adapters: settings, the wiring of connections, the Redis event store, the rq turn queue,
the rate-limit counter, metrics and logs."""
