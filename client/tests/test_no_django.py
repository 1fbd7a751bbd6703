"""The thin client must import where Django cannot: pipelines install it alone."""

import subprocess
import sys
from pathlib import Path

CLIENT_ROOT = Path(__file__).resolve().parents[1]

BLOCK_DJANGO = """
import importlib.abc, sys

class NoDjango(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "django" or name.startswith("django.") or name in {"rest_framework", "registry"}:
            raise ImportError(f"{name} is not available here")
        return None

sys.meta_path.insert(0, NoDjango())
try:
    import django  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the blocker failed: django imported")
"""


def test_the_client_and_all_its_modules_import_without_django():
    script = BLOCK_DJANGO + f"""
import pkgutil, importlib
sys.path.insert(0, {str(CLIENT_ROOT)!r})
import registry_client
for module in pkgutil.walk_packages(registry_client.__path__, "registry_client."):
    importlib.import_module(module.name)
print("imported", registry_client.__name__)
assert not any(m == "django" or m.startswith("django.") for m in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd="/")
    assert result.returncode == 0, result.stderr
    assert "imported registry_client" in result.stdout
