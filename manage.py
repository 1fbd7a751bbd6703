#!/usr/bin/env python
import os
import sys
from pathlib import Path

if __name__ == "__main__":
    # a checkout runs against its own thin client, even where another copy is installed;
    # after the project directory, so the project's own packages (tests/) are found first
    sys.path.insert(1, str(Path(__file__).resolve().parent / "client"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
