#!/usr/bin/env python
import os
import sys
from pathlib import Path

if __name__ == "__main__":
    base_dir = Path(__file__).resolve().parent
    # a checkout runs against its own thin client, even where another copy is installed;
    # after the project directory, so the project's own packages (tests/) are found first
    sys.path.insert(1, str(base_dir / "client"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    # The checkout's local settings (.env, written by `make demo`) under the real environment,
    # so the documented commands run as the demo does (docs/configuration.md).
    from registry.env import load_local_settings

    load_local_settings(base_dir)
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - reads the settings, which say what is missing
    except ImproperlyConfigured as exc:
        # Django would go on without settings and fail later on something else ("Models aren't
        # loaded yet"); only its help needs none.
        if len(sys.argv) > 1 and sys.argv[1] not in ("help", "--help", "-h", "version", "--version"):
            sys.exit(f"The settings are incomplete: {exc}. See docs/configuration.md.")

    execute_from_command_line(sys.argv)
