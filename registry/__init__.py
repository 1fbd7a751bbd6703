# Before anything imports jsonschema: its IRI checks load their parser on first use
# (registry_client.lazyformats), not at every process start.
from registry_client import lazyformats

lazyformats.install()

from registry.celery import app as celery_app  # noqa: E402 - after the stand-in above

__all__ = ["celery_app"]
