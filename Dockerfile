FROM python:3.11-slim
# ENV_FILE empty: manage.py reads no .env here, even one mounted in; settings come from the
# container's environment only (docs/configuration.md).
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 ENV_FILE=""
WORKDIR /app
COPY client/ client/
COPY pyproject.toml ./
RUN pip install --no-cache-dir ./client && pip install --no-cache-dir .
COPY . .
RUN DEBUG=1 python manage.py collectstatic --noinput -v0
EXPOSE 8000
# Granian: a Rust HTTP server; its WSGI workers cost the lineage ingest a
# third less CPU per request than gunicorn's (docs/benchmarks.md). It also
# serves the collected static files. Its threads are kept for the longest
# idle time it allows: each holds a database connection (conn_max_age), and a
# thread ended after the default 30 idle seconds leaves its connection open
# until garbage collection, while its successor opens another.
CMD ["granian", "--interface", "wsgi", "registry.wsgi:application", "--host", "0.0.0.0", "--port", "8000", \
     "--workers", "4", "--blocking-threads", "8", "--blocking-threads-idle-timeout", "600", "--respawn-failed-workers", \
     "--static-path-route", "/static", "--static-path-mount", "/app/var/static"]
