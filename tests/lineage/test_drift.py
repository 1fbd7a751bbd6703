"""Schema drift: the output's schema facet against the bound contract."""

from __future__ import annotations

import uuid

import pytest

from contracts_app.drift import canonical_dtype, compare
from contracts_app.models import Contract, ContractVersion, DatasetBinding, SchemaDriftCheck

from .conftest import post, run_event, schema_facet

pytestmark = pytest.mark.django_db


def dataframe_document(version: str, columns: list[tuple[str, str, bool]], strict=True) -> dict:
    return {
        "schema": {"name": "retail.checkout.orders", "domain": "retail", "subdomains": ["checkout"], "entity": "orders",
                   "version": version, "owner": "checkout", "schema_type": "dataframe"},
        "config": {"strict": strict, "coerce": True},
        "columns": [{"name": n, "dtype": d, "nullable": False, "required": r} for n, d, r in columns],
    }


ORDERS_V1 = [("order_id", "int64", True), ("amount", "float64", True), ("placed_at", "datetime64[ns]", True),
             ("note", "str", False)]


@pytest.fixture
def contract(dataset, owner_team):
    """retail.checkout.orders bound to `dataset`, with 1.0 and a newer 1.1 and a 2.0rc1 pre-release."""
    c = Contract.objects.create(name="retail.checkout.orders", domain="retail", subdomains=["checkout"],
                                entity="orders", schema_type="dataframe", owner_team=owner_team)
    ContractVersion.objects.create(contract=c, version="1.0", document=dataframe_document("1.0", ORDERS_V1[:2]), checksum="a")
    ContractVersion.objects.create(contract=c, version="1.1", document=dataframe_document("1.1", ORDERS_V1), checksum="b")
    ContractVersion.objects.create(contract=c, version="2.0rc1", document=dataframe_document("2.0rc1", []), checksum="c")
    DatasetBinding.objects.create(dataset=dataset, contract=c)
    return c


def write(client, secret, dataset, *fields, event_type="COMPLETE", run_id=None):
    out = {"namespace": dataset.namespace, "name": dataset.name, "facets": {"schema": schema_facet(*fields)}}
    return post(client, run_event(event_type, run_id=run_id, outputs=[out]), secret)


def test_an_output_matching_the_contract_records_a_clean_check(client, lineage_secret, dataset, contract):
    write(client, lineage_secret, dataset, ("order_id", "BIGINT"), ("amount", "double precision"),
          ("placed_at", "timestamp with time zone"))
    check = SchemaDriftCheck.objects.get()
    assert check.version == "1.1"  # the latest published, never the pre-release
    assert check.findings == [] and not check.drifted


def test_missing_required_unknown_and_mistyped_fields_are_drift(client, lineage_secret, dataset, contract):
    write(client, lineage_secret, dataset, ("order_id", "varchar(36)"), ("placed_at", "timestamp"), ("coupon", "text"))
    check = SchemaDriftCheck.objects.get()
    kinds = {(f["kind"], f["field"]) for f in check.findings}
    assert kinds == {("type_mismatch", "order_id"), ("missing_required", "amount"), ("unknown_field", "coupon")}
    assert check.drift_count == 3
    mismatch = next(f for f in check.findings if f["kind"] == "type_mismatch")
    assert mismatch["expected"] == "int64" and mismatch["actual"] == "varchar(36)"
    assert "the contract says int64" in mismatch["message"]


def test_a_narrower_integer_fits_but_a_wider_one_does_not():
    doc = dataframe_document("1.0", [("a", "int64", True), ("b", "int32", True)])
    findings = compare(schema_facet(("a", "integer"), ("b", "bigint")), doc)
    assert [(f["kind"], f["field"]) for f in findings] == [("type_mismatch", "b")]


def test_a_filtering_contract_notes_extra_fields_without_calling_them_drift():
    doc = dataframe_document("1.0", [("a", "int64", True)], strict="filter")
    findings = compare(schema_facet(("a", "long"), ("extra", "string")), doc)
    assert [(f["kind"], f["severity"]) for f in findings] == [("filtered_field", "note")]


def test_an_unmappable_type_is_a_note_not_drift():
    doc = dataframe_document("1.0", [("shape", "str", True)])
    findings = compare(schema_facet(("shape", "geography")), doc)
    assert [(f["kind"], f["severity"]) for f in findings] == [("unmapped_type", "note")]


def test_field_names_match_case_insensitively_as_warehouses_upper_case_them():
    doc = dataframe_document("1.0", [("order_id", "int64", True)])
    assert compare(schema_facet(("ORDER_ID", "NUMBER(38,0)")), doc) == [
        {"kind": "type_mismatch", "field": "order_id", "severity": "drift", "expected": "int64",
         "actual": "NUMBER(38,0)", "message": "'order_id' is 'NUMBER(38,0)' (float64) in the output; the contract says int64."}
    ]


def test_event_contracts_compare_with_their_json_schema_payload():
    doc = {"schema": {"schema_type": "event"}, "payload": {
        "type": "object", "required": ["id", "at"], "additionalProperties": False,
        "properties": {"id": {"type": "string"}, "at": {"type": "string", "format": "date-time"},
                       "qty": {"type": ["integer", "null"]}}}}
    findings = compare(schema_facet(("id", "uuid"), ("qty", "double"), ("extra", "int")), doc)
    assert {(f["kind"], f["field"]) for f in findings} == {
        ("missing_required", "at"), ("type_mismatch", "qty"), ("unknown_field", "extra")}


@pytest.mark.parametrize(("facet_type", "dtype"), [
    ("string", "str"), ("VARCHAR(255)", "str"), ("character varying(10)", "str"), ("uuid", "str"),
    ("integer", "int32"), ("INT", "int32"), ("smallint", "int32"),
    ("bigint", "int64"), ("long", "int64"), ("INT64", "int64"), ("int8", "int64"),
    ("float", "float32"), ("real", "float32"), ("double", "float64"), ("FLOAT64", "float64"),
    ("decimal(10,2)", "float64"), ("numeric", "float64"),
    ("boolean", "bool"), ("BOOL", "bool"),
    ("timestamp", "datetime64[ns]"), ("TIMESTAMP_NTZ", "datetime64[ns]"), ("date", "datetime64[ns]"),
    ("timestamp(6) with time zone", "datetime64[ns]"),
    ("array<string>", "List[str]"), ("ARRAY<BIGINT>", "List[int64]"), ("text[]", "List[str]"),
    ("_int4", "List[int32]"), ("list<double>", "List[float64]"),
    ("struct<a:int>", None), ("geography", None), ("", None), (None, None), (5, None),
])
def test_facet_types_map_to_contract_dtypes(facet_type, dtype):
    assert canonical_dtype(facet_type) == dtype


def test_one_check_per_run_later_events_replace_it(client, lineage_secret, dataset, contract):
    run_id = str(uuid.uuid4())
    write(client, lineage_secret, dataset, ("order_id", "text"), event_type="START", run_id=run_id)
    write(client, lineage_secret, dataset, ("order_id", "bigint"), ("amount", "double"), ("placed_at", "timestamp"),
          event_type="COMPLETE", run_id=run_id)
    check = SchemaDriftCheck.objects.get()
    assert check.event_type == "COMPLETE" and check.findings == []


def test_no_contract_or_no_schema_facet_records_nothing(client, lineage_secret, dataset, unowned_dataset):
    write(client, lineage_secret, dataset, ("x", "int"))  # dataset not bound here: no contract fixture
    post(client, run_event(outputs=["mart.other"]), lineage_secret)
    assert not SchemaDriftCheck.objects.exists()


def test_a_malformed_schema_facet_is_dropped_and_checks_nothing(client, lineage_secret, dataset, contract):
    out = {"namespace": dataset.namespace, "name": dataset.name,
           "facets": {"schema": {"_producer": "https://x.example/p", "_schemaURL": "https://x.example/s", "fields": "oops"}}}
    response = post(client, run_event(outputs=[out]), lineage_secret)
    assert response.status_code == 201
    assert [(w["path"], w["code"]) for w in response.json()["warnings"]] == [("outputs[0].facets.schema", "facet_invalid")]
    assert response.json()["warnings"][0]["reason"].startswith("outputs[0].facets.schema.fields: ")
    assert not SchemaDriftCheck.objects.exists()


def test_drift_is_in_the_api(client, lineage_secret, owner, dataset, contract):
    write(client, lineage_secret, dataset, ("order_id", "bigint"))
    client.force_login(owner)
    body = client.get(f"/api/datasets/{dataset.pk}/drift/").json()
    assert len(body["results"]) == 1 and body["next"] is None
    check = body["results"][0]
    assert check["contract"] == "retail.checkout.orders" and check["version"] == "1.1" and check["drifted"] is True
    assert {f["field"] for f in check["findings"]} == {"amount", "placed_at"}
    latest = client.get("/api/drift/", {"drifted": "true"}).json()
    assert [r["name"] for r in latest["results"]] == [dataset.name]


def test_drift_is_on_the_dataset_page(client, lineage_secret, owner, dataset, contract):
    write(client, lineage_secret, dataset, ("order_id", "bigint"), ("amount", "text"), ("placed_at", "date"))
    client.force_login(owner)
    page = client.get(dataset.get_absolute_url()).content.decode()
    assert "Schema drift" in page and "1 drift finding" in page and "type_mismatch" in page


def test_drift_is_a_prometheus_metric(client, lineage_secret, dataset, contract):
    write(client, lineage_secret, dataset, ("order_id", "bigint"))
    metrics = client.get("/metrics", HTTP_AUTHORIZATION="Bearer tests-metrics-token").content.decode()
    line = next(m for m in metrics.splitlines() if m.startswith("registry_schema_drift_findings{"))
    assert 'name="retail.public.orders"' in line and 'contract="retail.checkout.orders"' in line
    assert line.endswith(" 2.0")


def test_the_drift_section_is_one_query(client, lineage_secret, rf, owner, dataset, contract, django_assert_num_queries):
    from contracts_app.drift import drift_section

    for _ in range(3):
        write(client, lineage_secret, dataset, ("order_id", "bigint"), run_id=str(uuid.uuid4()))
    request = rf.get(dataset.get_absolute_url())
    request.user = owner
    # 1: the dataset's latest ten checks.
    with django_assert_num_queries(1):
        html = drift_section(request, dataset)
    assert "Earlier runs" in html
