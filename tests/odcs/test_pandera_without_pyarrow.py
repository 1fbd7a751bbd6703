"""A pandera user without pyarrow reads every pandera export: `from_yaml` on ?format=pandera-yaml and
`from_json` on ?format=pandera-json build schemas that judge frames as the client's rebuilt model
does; `from_json` or `from_yaml` on the JSON Schema export fail saying what it is instead of
returning a schema that accepts anything. The reader is pandera in its own virtualenv with no
pyarrow (tests/odcs/tools.py), run as a person runs it."""

from __future__ import annotations

import json
import subprocess

import pytest
from jsonschema import Draft202012Validator
from registry_client.pandera_models import (
    NOT_A_PANDERA_SCHEMA,
    build_model,
    pandera_json,
    pandera_json_schema,
    pandera_yaml,
)

from tests.odcs import pandera_reader
from tests.odcs.conftest import DEMO, DEMO_IDS
from tests.odcs.tools import ensure_pandera_without_pyarrow
from tests.publish.equivalence import hand_made_frames

pytestmark = pytest.mark.pandera_tool

FRAMES = [(label, d) for label, d in zip(DEMO_IDS, DEMO, strict=True) if d["schema"]["schema_type"] == "dataframe"]
TABLES = [(label, d) for label, d in FRAMES if not any(c["dtype"].startswith("List[") for c in d["columns"])]
WITH_LISTS = [(label, d) for label, d in FRAMES if (label, d) not in TABLES]
ORDERS = "/api/contracts/retail.sales.orders/versions/1.0/"


@pytest.fixture(scope="module")
def pandera_python():
    return ensure_pandera_without_pyarrow()


def read(python, requests: list[dict]) -> list[dict]:
    """What pandera without pyarrow makes of each export (one interpreter for all of them)."""
    result = subprocess.run([str(python), pandera_reader.__file__], input=json.dumps(requests),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def encoded_frames(document: dict) -> dict[str, dict]:
    return {case: pandera_reader.encode_frame(frame) for case, frame in hand_made_frames(document).items()}


def judged_by_the_rebuilt_model(document: dict, frames: dict[str, dict]) -> dict[str, list]:
    schema = build_model(document).to_schema()
    return {case: pandera_reader.judge(schema, pandera_reader.decode_frame(frame)) for case, frame in frames.items()}


def test_pandera_without_pyarrow_reads_both_pandera_exports_and_judges_frames_as_the_rebuilt_model(pandera_python):
    requests, expected = [], []
    for _, document in TABLES:
        frames = encoded_frames(document)
        judged = judged_by_the_rebuilt_model(document, frames)
        requests += [{"reader": "from_yaml", "text": pandera_yaml(document), "frames": frames},
                     {"reader": "from_json", "text": json.dumps(pandera_json(document)), "frames": frames}]
        expected += [(document, judged)] * 2
        assert "string[pyarrow]" not in requests[-2]["text"] + requests[-1]["text"]
    answers = read(pandera_python, requests)
    for request, answer, (document, judged) in zip(requests, answers, expected, strict=True):
        label = f"{document['schema']['name']} {document['schema']['version']} by {request['reader']}"
        assert "error" not in answer, f"{label}: {answer.get('error')}"
        schema = answer["schema"]
        assert schema["name"] == document["schema"]["name"], label
        assert schema == pandera_reader.describe(build_model(document).to_schema()), label
        assert answer["results"] == judged, label
        assert answer["results"]["valid"] == ["ok"] and any(r[0] == "error" for r in answer["results"].values())
    assert len(answers) == 2 * len(TABLES) >= 16


def test_what_pandera_itself_writes_where_pyarrow_is_installed_is_unreadable_without_it(pandera_python):
    # why the export spells dtypes itself: pandera's own to_yaml writes the dtype pandas picked
    _, document = TABLES[0]
    written = build_model(document).to_schema().to_yaml()
    assert "string[pyarrow]" in written
    (answer,) = read(pandera_python, [{"reader": "from_yaml", "text": written}])
    assert "pyarrow" in answer["error"]


def test_list_columns_are_the_one_thing_pandera_cannot_read_back_in_either_format(pandera_python):
    requests = []
    for _, document in WITH_LISTS:
        requests += [{"reader": "from_yaml", "text": pandera_yaml(document)},
                     {"reader": "from_json", "text": json.dumps(pandera_json(document))}]
    for answer in read(pandera_python, requests):
        assert answer["error"].startswith("TypeError") and "list[" in answer["error"]
    assert len(requests) == 6


def test_the_json_schema_export_is_refused_by_pandeas_readers_saying_what_it_is(pandera_python):
    _, document = TABLES[0]
    text = json.dumps(pandera_json_schema(document))
    answers = read(pandera_python, [{"reader": "from_json", "text": text}, {"reader": "from_yaml", "text": text}])
    for answer in answers:
        assert answer["error"].startswith("TypeError") and NOT_A_PANDERA_SCHEMA in answer["error"]


@pytest.mark.parametrize(("label", "document"), FRAMES, ids=[f[0] for f in FRAMES])
def test_the_json_schema_export_is_still_a_json_schema_of_the_records(label, document):
    schema = pandera_json_schema(document)
    Draft202012Validator.check_schema(schema)  # the keyword pandera trips on is an annotation here
    first = document["columns"][0]
    sample = {"str": "x", "int32": 1, "int64": 1, "float32": 1.5, "float64": 1.5, "bool": True}.get(first["dtype"])
    if sample is not None:
        validator = Draft202012Validator(schema)
        assert validator.is_valid({first["name"]: [sample]})
        assert not validator.is_valid({first["name"]: [{"not": "a value"}]})


@pytest.fixture
def api_client(client, owner):
    client.force_login(owner)
    return client


@pytest.mark.django_db
def test_the_api_serves_pandera_json_and_pandera_yaml_that_pandera_without_pyarrow_reads(
        api_client, published_demo, pandera_python):
    as_json = api_client.get(ORDERS, {"format": "pandera-json"})
    as_yaml = api_client.get(ORDERS, {"format": "pandera-yaml"})
    pyarrow = api_client.get(ORDERS, {"format": "pandera-yaml", "strings": "pyarrow"})
    assert as_json.status_code == as_yaml.status_code == pyarrow.status_code == 200
    assert as_json["Content-Type"] == "application/vnd.pandera+json"
    assert "string[pyarrow]" in pyarrow.content.decode() and "string[pyarrow]" not in as_yaml.content.decode()
    json_answer, yaml_answer, pyarrow_answer = read(pandera_python, [
        {"reader": "from_json", "text": as_json.content.decode()},
        {"reader": "from_yaml", "text": as_yaml.content.decode()},
        {"reader": "from_yaml", "text": pyarrow.content.decode()}])
    assert json_answer["schema"] == yaml_answer["schema"]
    assert json_answer["schema"]["columns"]["order_id"] == "str"
    assert "pyarrow" in pyarrow_answer["error"]  # asked for, and it needs pyarrow to read


@pytest.mark.django_db
def test_an_unknown_string_storage_is_a_bad_request(api_client, published_demo):
    response = api_client.get(ORDERS, {"format": "pandera-json", "strings": "arrow"})
    assert response.status_code == 400 and response.json()["code"] == "unknown_string_storage"
