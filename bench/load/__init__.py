"""Load over HTTP, side by side with the ceiling: many games through gunicorn on a real Redis.

    python -m bench.load             # 64 clients, 200 games of 4 players, 1 hand
    python -m bench.load --quick     # a smaller run that fits in about two minutes
    python -m bench.load --profile   # also sample the API workers with py-spy
    python -m bench.load --floor     # also measure the steps between the ceiling and a game

Run from the repository root. It first measures the ceiling: `bench/hello_app.py`, a Flask
hello-world, served by the SAME gunicorn command line as the service (worker class, workers,
connections), hit by the same clients for a fixed time. Then it starts a real redis-server
(AOF, fsync always, as `spinner serve` runs it) and the service under gunicorn, and the
clients create games and play every seat of each over HTTP (stdlib http.client and orjson,
keep-alive, threads in several client processes): per move a GET of the seat's view (for its
legal moves) and a POST of one of them, with If-Match naming the version it was chosen on, as
a careful client sends it. In both phases the clients start only once every gunicorn worker
has loaded its app. Afterwards every game's export must pass `spinner verify`.

The ratio is the game load's HTTP requests per second over the hello-world's; a move costs
two requests, so moves per second are about half of that. Like the ceiling, whose clients
are all busy for its whole run, the load's figures (`moves_per_s`, `req_per_s`, `ratio`) count
the answers until the first client thread finds no game left to take: from then on fewer and
fewer clients are at work while the last games finish. The whole run's figures are printed
too (`whole_run_moves_per_s`, `whole_run_ratio`). `--floor` hammers two steps between the
ceiling and a game request as the ceiling is hammered, on a real redis-server: the hello-world
after one Redis round trip (`floor_redis_ratio`), and the service answering 404 to the GET of
a game that does not exist (`floor_service_ratio`): every request's pipeline and one lookup,
no game; the least any request of the service costs. Every loop is bounded in count and time, and
only 127.0.0.1 is ever contacted. The last line printed is one JSON object.

Modules: `servers` (gunicorn, CPU time), `clients` (the client processes and their tallies),
`phases` (the ceiling, the game load, the audit), `profiling` (py-spy), `report` (figures);
`__main__` is the command line.
"""
