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
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
