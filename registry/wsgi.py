import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
application = get_wsgi_application()

# Everything loaded so far lives as long as the worker: keep it out of the
# garbage collector's passes, which otherwise walk these ~270,000 objects and
# were half the time of shaping a lineage graph's answer (docs/benchmarks.md).
gc.freeze()
