# One image for the API (default command) and the AI worker (`spinner worker`).
FROM python:3.11-slim
RUN useradd --create-home --uid 10001 spinner
WORKDIR /app
COPY pyproject.toml README.md ./
COPY service service
COPY workers workers
# the page's full rules, service/api/web/rules.md and allfives.md, link to docs/
COPY docs docs
RUN pip install --no-cache-dir . && install -d -o spinner /tmp/spinner-metrics
USER spinner
ENV REDIS_URL=redis://redis:6379/0
# The gunicorn workers' shared metrics files (empty in each new container): /metrics adds them up.
ENV PROMETHEUS_MULTIPROC_DIR=/tmp/spinner-metrics
EXPOSE 8000
# As `spinner serve` on a 2-core machine: 2 API processes a core, gevent (1000 connections each).
CMD ["gunicorn", "--bind", "0.0.0.0:8000", "--workers", "4", "--worker-connections", "1000", \
     "--worker-class", "service.entrypoints.gunicorn_worker.ProblemWorker", "service.entrypoints.wsgi:app"]
