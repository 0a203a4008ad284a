"""Issue 17's attacks, retried against a running service: `python -m bench.attacks`."""
