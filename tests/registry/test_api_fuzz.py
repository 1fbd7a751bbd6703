"""Schemathesis over the whole OpenAPI document, against a live server on PostgreSQL
holding the demo: every operation, generated inputs, with a bearer token and with
a session, and every operation that takes a form once more with multipart bodies
only. Fails on any 5xx, on any status the operation does not document and on any
answer that breaks the documented schema.

Bounded: TOKEN_SECONDS + SESSION_SECONDS + MULTIPART_SECONDS of generation
(FUZZ_SECONDS_SCALE scales them), a fixed seed, so a failure replays (`st replay
<id>` needs the same data)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from registry.env import parse_contract_store
from registry.models import ApiToken

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCALE = float(os.environ.get("FUZZ_SECONDS_SCALE", "1"))
TOKEN_SECONDS = 90 * SCALE
SESSION_SECONDS = 45 * SCALE
MULTIPART_SECONDS = 35 * SCALE
CHECKS = "not_a_server_error,status_code_conformance,response_schema_conformance"


def schemathesis(url: str, header: str, seconds: float, report: Path, *,
                 schema: Path | None = None) -> subprocess.CompletedProcess:
    location = [str(schema), "--url", url] if schema else [f"{url}/api/schema/"]
    command = [str(Path(sys.executable).with_name("schemathesis")), "run", *location,
               "-H", header, "--checks", CHECKS, "--max-time", str(int(seconds)), "--max-examples", "10",
               "--seed", "7", "--wait-for-schema", "30", "--no-color",
               # hypothesis's own complaints about its generation (too slow, too filtered) are not the API's faults
               "--suppress-health-check", "all"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 240)
    report.write_text(result.stdout + result.stderr)
    return result


def failures(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr)[-8000:]


@pytest.fixture
def demo(settings, tmp_path):
    """The demo's teams, datasets, contracts, lineage and requests: operations find data to answer with."""
    settings.CONTRACT_STORE = parse_contract_store(str(tmp_path / "store"), base_dir=tmp_path)
    with open(os.devnull, "w") as quiet:
        call_command("load_demo", stdout=quiet)


def test_no_operation_answers_a_server_error_or_breaks_its_schema_with_a_token(demo, live_server, tmp_path):
    from django.contrib.auth import get_user_model

    admin = get_user_model().objects.get(username="gina")
    _, secret = ApiToken.issue("fuzz", user=admin)
    result = schemathesis(live_server.url, f"Authorization: Bearer {secret}", TOKEN_SECONDS, tmp_path / "token.txt")
    assert result.returncode == 0, failures(result)


def test_no_operation_answers_a_server_error_or_breaks_its_schema_with_a_session(demo, live_server, tmp_path, client):
    from django.conf import settings
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="carol"))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    result = schemathesis(live_server.url, f"Cookie: {settings.SESSION_COOKIE_NAME}={session}", SESSION_SECONDS,
                          tmp_path / "session.txt")
    assert result.returncode == 0, failures(result)


def demo_objects() -> dict[tuple[str, str], list]:
    """(path prefix, path parameter) → the demo's own values: generated bodies reach
    the views' logic instead of a 404 for an id nobody has."""
    from change_requests.models import ChangeRequest
    from contracts_app.models import Contract, ContractVersion
    from registry.models import Dataset, Team

    return {
        ("/api/change-requests/", "id"): list(ChangeRequest.objects.values_list("pk", flat=True)),
        ("/api/contracts/", "name"): list(Contract.objects.values_list("name", flat=True)),
        ("/api/contracts/", "version"): sorted(set(ContractVersion.objects.values_list("version", flat=True))),
        ("/api/datasets/", "id"): list(Dataset.objects.values_list("pk", flat=True)[:20]),
        ("/api/teams/", "team"): list(Team.objects.values_list("slug", flat=True)),
    }


def test_no_operation_answers_a_server_error_to_a_multipart_body(demo, live_server, tmp_path, client):
    """The document offers JSON, urlencoded and multipart bodies alike; this run sends
    multipart only, to every operation that takes a body in it, about the demo's objects."""
    from django.contrib.auth import get_user_model

    document = json.loads(client.get("/api/schema/?format=json").content)
    known = demo_objects()
    for path, item in document["paths"].items():
        for method in [m for m, op in item.items() if isinstance(op, dict) and "responses" in op]:
            content = item[method].get("requestBody", {}).get("content", {})
            if "multipart/form-data" not in content:
                del item[method]
                continue
            item[method]["requestBody"]["content"] = {"multipart/form-data": content["multipart/form-data"]}
            for parameter in item[method].get("parameters", []):
                values = next((v for (prefix, name), v in known.items()
                               if path.startswith(prefix) and parameter["name"] == name and parameter["in"] == "path"), None)
                if values:
                    parameter["schema"] = {"type": parameter["schema"]["type"], "enum": values}
    document["paths"] = {path: item for path, item in document["paths"].items()
                         if any(isinstance(op, dict) and "responses" in op for op in item.values())}
    assert len(document["paths"]) >= 10, "the operations that take a form are missing from the document"
    schema = tmp_path / "multipart.json"
    schema.write_text(json.dumps(document))
    _, secret = ApiToken.issue("fuzz", user=get_user_model().objects.get(username="gina"))
    result = schemathesis(live_server.url, f"Authorization: Bearer {secret}", MULTIPART_SECONDS,
                          tmp_path / "multipart.txt", schema=schema)
    assert result.returncode == 0, failures(result)
