# Before anything imports jsonschema: its IRI checks load their parser on first use
# (registry_client.lazyformats), not at every process start.
import os

from registry_client import lazyformats

lazyformats.install()

# The package names its settings for whatever imports it outside manage.py (a bench, a
# script, a Celery process), as importing the Celery app here once did.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")



def __getattr__(name: str):
    # Celery costs about a second to import. Only its own processes (`celery -A registry`,
    # which finds `registry.celery`) and the code that sends a task need it, and each of
    # those imports registry.celery itself: a command or a page loads none of it.
    if name == "celery_app":
        from registry.celery import app

        return app
    raise AttributeError(f"module 'registry' has no attribute {name!r}")
