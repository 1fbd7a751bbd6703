"""Every shell block of docs/authoring-contracts.md, docs/publishing.md and docs/adopting.md runs as printed,
from the root of a fresh clone after `make demo-setup` (scripts/run-doc-commands)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "run-doc-commands"

def load_script():
    # a script without the .py suffix: its loader has to be named
    spec = spec_from_loader("run_doc_commands", SourceFileLoader("run_doc_commands", str(SCRIPT)))
    module = module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


doc_commands = load_script()


AUTHORING_AND_PUBLISHING = "docs/authoring-contracts.md,docs/publishing.md"
ADOPTING = "docs/adopting.md"
# Which pages each test runs, apart from the other's (a copy of the set-up clone each).
PAGES_OF = {
    "test_every_shell_block_of_the_authoring_and_publishing_docs_runs_as_printed_in_a_fresh_clone":
        AUTHORING_AND_PUBLISHING,
    "test_the_adopting_walk_through_runs_as_printed_from_an_empty_database_to_a_routed_change_request":
        ADOPTING,
}


@pytest.fixture(scope="module")
def doc_run(request) -> str:
    """What one run of the script printed for the pages of the tests selected here: one clone
    and one `make demo-setup` (most of the time) serve both, each page group in a copy of it."""
    selected = {item.name for item in request.session.items}
    groups = [pages for name, pages in PAGES_OF.items() if name in selected]
    # This test's own virtualenv, used as it is: the clone installs nothing.
    command = [sys.executable, str(SCRIPT), "--venv", sys.prefix]
    for pages in groups:
        command += ["--apart", pages]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)
    return result.stdout + result.stderr


def ran_as_printed(output: str, pages: str) -> bool:
    return f" skipped, in {pages.replace(',', ', ')}\n" in output and "block(s) ran as printed" in output


@pytest.mark.slow
def test_every_shell_block_of_the_authoring_and_publishing_docs_runs_as_printed_in_a_fresh_clone(doc_run):
    assert ran_as_printed(doc_run, AUTHORING_AND_PUBLISHING), doc_run[-15000:]


def test_a_failing_block_is_reported_with_its_page_line_text_and_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n1. Step:\n\n   ```sh\n   echo exporting\n   false\n   echo never\n   ```\n")
    [block] = doc_commands.shell_blocks(page, "docs/page.md")
    assert (block.where, block.text) == ("docs/page.md:5", "echo exporting\nfalse\necho never\n")
    result = doc_commands.run_block(block, tmp_path, {"PATH": os.environ["PATH"]})
    assert result.returncode == 1
    assert doc_commands.failure_report(block, result) == (
        "FAILED docs/page.md:5 (exit 1); the block, as printed:\n"
        "    echo exporting\n    false\n    echo never\n"
        "its output:\n    exporting")


def test_only_sh_and_bash_blocks_run_and_a_marked_one_says_why_it_is_skipped(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nprint('not a shell')\n```\n\n```\nPublished 10\n```\n\n"
        "<!-- doc-commands: skip (needs a running server) -->\n```bash\ncurl http://127.0.0.1:8000/healthz\n```\n\n"
        "```sh\npython manage.py check\n```\n")
    blocks = doc_commands.shell_blocks(page, "page.md")
    assert [(b.where, b.lang, b.skip_reason) for b in blocks] == [
        ("page.md:10", "bash", "needs a running server"), ("page.md:14", "sh", None)]


@pytest.mark.slow
def test_the_adopting_walk_through_runs_as_printed_from_an_empty_database_to_a_routed_change_request(doc_run):
    assert "block(s) ran as printed, 0 skipped, in docs/adopting.md\n" in doc_run, doc_run[-15000:]
