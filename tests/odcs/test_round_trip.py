"""Export -> import gives back the same canonical document: every demo contract, and
generated ones; and the export is valid ODCS by the schema the standard's tool ships."""

from __future__ import annotations

import copy
import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from registry_client.odcs import OdcsError, RegistryFacts, from_odcs, to_odcs

from contracts_app.gates import validate_document
from contracts_app.models import document_checksum
from tests.odcs.conftest import DEMO, DEMO_IDS


def travel(document: dict, facts: RegistryFacts | None = None) -> dict:
    """Export, write as YAML, read back, import."""
    return from_odcs(yaml.safe_load(yaml.safe_dump(to_odcs(document, facts), sort_keys=False))).document


@pytest.mark.parametrize("document", DEMO, ids=DEMO_IDS)
def test_every_demo_contract_comes_back_the_same(document):
    back = travel(document)
    assert back == document
    assert document_checksum(back) == document_checksum(document)


@pytest.mark.datacontract
@pytest.mark.parametrize("document", DEMO, ids=DEMO_IDS)
def test_every_demo_export_is_valid_odcs(document, odcs_validator):
    errors = sorted(odcs_validator.iter_errors(to_odcs(document)), key=lambda e: list(e.absolute_path))
    assert [f"{list(e.absolute_path)}: {e.message}" for e in errors] == []


def test_a_table_maps_onto_the_standards_own_fields():
    orders = next(d for d in DEMO if d["schema"]["name"] == "retail.sales.orders" and d["schema"]["version"] == "1.0")
    odcs = to_odcs(orders)
    assert (odcs["apiVersion"], odcs["kind"], odcs["id"], odcs["version"], odcs["status"], odcs["domain"]) == (
        "v3.1.0", "DataContract", "retail.sales.orders", "1.0", "active", "retail")
    assert odcs["team"] == {"name": "checkout"}
    (table,) = odcs["schema"]
    columns = {p["name"]: p for p in table["properties"]}
    assert columns["order_id"]["logicalTypeOptions"] == {"pattern": "^ORD-[0-9]{8}$"}
    assert (columns["order_id"]["required"], columns["order_id"]["unique"]) == (True, True)
    assert (columns["item_count"]["logicalType"], columns["item_count"]["physicalType"]) == ("integer", "integer")
    assert columns["item_count"]["logicalTypeOptions"] == {"format": "i32", "exclusiveMinimum": 0}
    assert columns["status"]["quality"][0]["metric"] == "invalidValues"
    # nullable and may be missing: ODCS says "may hold nulls", the rest travels as ours
    assert columns["coupon_code"]["required"] is False
    assert columns["coupon_code"]["customProperties"] == [{"property": "registryColumn", "value": {"required": False}}]


def test_a_pre_release_is_a_draft():
    document = copy.deepcopy(DEMO[0])
    document["schema"]["version"] = "3.0.0rc1"
    assert to_odcs(document)["status"] == "draft"


def test_a_check_the_standard_cannot_express_travels_as_ours():
    document = copy.deepcopy(DEMO[0])
    document["columns"][0]["checks"] = [{"notin": ["x"]}, {"str_startswith": "S"}]
    (prop,) = [p for p in to_odcs(document)["schema"][0]["properties"] if p["name"] == document["columns"][0]["name"]]
    assert {"notin": ["x"]} in prop["customProperties"][0]["value"]["checks"]
    assert travel(document) == document


def test_bad_odcs_is_refused_naming_the_path():
    odcs = to_odcs(DEMO[0])
    odcs["schema"][0]["properties"][1].update(physicalType="geometry", logicalType="object")
    with pytest.raises(OdcsError, match=r"schema\[0\]\.properties\[1\]: logicalType 'object'"):
        from_odcs(odcs)
    with pytest.raises(OdcsError, match="apiVersion/kind"):
        from_odcs({"apiVersion": "v2.2.0", "kind": "DataContract"})


def test_unknown_parts_are_reported_with_their_paths():
    odcs = to_odcs(DEMO[0])
    odcs["price"] = {"priceAmount": 1}
    odcs["schema"][0]["properties"][0]["classification"] = "restricted"
    odcs["schema"][0]["properties"][0]["customProperties"] = [{"property": "owner_note", "value": "x"}]
    notes = from_odcs(odcs).notes
    assert "price: not imported; the contract format has no place for it" in notes
    assert "schema[0].properties[0].classification: not imported; the contract format has no place for it" in notes
    assert any(n.startswith("schema[0].properties[0].customProperties[owner_note]") for n in notes)


# --- generated contracts ------------------------------------------------------------

NAMES = st.text(string.ascii_lowercase + "_", min_size=1, max_size=8).filter(lambda s: s.strip("_") == s)
NUMBER = st.one_of(st.integers(-1000, 1000), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False))
TEXT = st.text(string.ascii_letters + string.digits + " -", max_size=10)
ORDER = ("eq", "ne", "gt", "ge", "lt", "le", "isin", "notin", "str_contains", "str_endswith", "str_matches",
         "str_length", "str_startswith", "unique_values_eq")


def check_values(dtype: str) -> dict[str, st.SearchStrategy]:
    if dtype in ("int32", "int64", "float32", "float64"):
        value = st.integers(-1000, 1000) if dtype.startswith("int") else NUMBER
        return {k: value for k in ("gt", "ge", "lt", "le", "eq", "ne")} | {
            "isin": st.lists(value, min_size=1, max_size=4), "notin": st.lists(value, min_size=1, max_size=3)}
    if dtype == "str":
        return {"str_matches": st.sampled_from(["^A[0-9]+$", "[a-z]+", "^(?:x|y)"]), "str_startswith": TEXT,
                "str_endswith": TEXT, "str_contains": TEXT, "isin": st.lists(TEXT, min_size=1, max_size=4),
                "notin": st.lists(TEXT, min_size=1, max_size=3), "eq": TEXT,
                "str_length": st.dictionaries(st.sampled_from(["min_value", "max_value", "exact_value"]),
                                              st.integers(0, 40), min_size=1)}
    if dtype == "datetime64[ns]":
        stamp = st.sampled_from(["2020-01-01T00:00:00", "2024-06-30T12:00:00", "1999-12-31T23:59:59"])
        return {k: stamp for k in ("gt", "ge", "lt", "le")}
    if dtype == "bool":
        return {"eq": st.booleans(), "isin": st.lists(st.booleans(), min_size=1, max_size=2)}
    return {}


@st.composite
def columns(draw, name: str) -> dict:
    dtype = draw(st.sampled_from(["str", "int32", "int64", "float32", "float64", "bool", "datetime64[ns]",
                                  "List[str]", "List[int64]", "List[float64]", "List[bool]"]))
    column = {"name": name, "dtype": dtype}
    if draw(st.integers(0, 3)) == 0:  # a warehouse's own type name, as an import keeps it
        column["physical_type"] = draw(st.sampled_from(["INT", "DECIMAL(10, 2)", "TEXT", "TIMESTAMPTZ", "UUID"]))
    column.update({"nullable": draw(st.booleans()), "coerce": draw(st.booleans()),
                   "required": draw(st.booleans()), "unique": draw(st.booleans())})
    if draw(st.booleans()):
        column["title"] = draw(TEXT.filter(bool))
    if draw(st.booleans()):
        column["description"] = draw(TEXT.filter(bool))
    options = check_values(dtype)
    keys = draw(st.lists(st.sampled_from(sorted(options)), unique=True, max_size=4)) if options else []
    if draw(st.integers(0, 3)):
        keys = sorted(keys, key=ORDER.index)  # pandera's order, as the exporter writes; sometimes not
    column["checks"] = [{key: draw(options[key])} for key in keys]
    return column


@st.composite
def dataframe_documents(draw) -> dict:
    names = draw(st.lists(NAMES, min_size=1, max_size=6, unique=True))
    document = {
        "schema": {"name": "gen.sub.entity", "domain": "gen", "subdomains": ["sub"], "entity": "entity",
                   "version": draw(st.sampled_from(["1.0", "2.1", "1.0.1", "2.0.0rc1"])), "owner": "checkout",
                   "schema_type": "dataframe", "description": draw(st.one_of(st.none(), TEXT.filter(bool)))},
    }
    meta = draw(st.fixed_dictionaries({}, optional={"tier": st.sampled_from(["bronze", "gold"]),
                                                    "source_system": st.one_of(NAMES, st.lists(NAMES, min_size=1, max_size=2)),
                                                    "stage": NAMES}))
    if meta:
        document["meta"] = meta
    if draw(st.booleans()):
        document["datasets"] = draw(st.lists(st.sampled_from([
            {"namespace": "postgres://db:5432", "name": "shop.public.orders"},
            {"namespace": "s3://lake", "name": "raw/orders"},
            {"namespace": "kafka://bus", "name": "orders.events"},
            {"namespace": "lims", "name": "cell_counts"}]), min_size=1, max_size=3, unique_by=lambda d: d["name"]))
    document["config"] = {
        "strict": draw(st.sampled_from([True, False, "filter"])), "coerce": draw(st.booleans()),
        "drop_invalid_rows": draw(st.booleans()), "ordered": draw(st.booleans()),
        "unique": draw(st.one_of(st.none(), st.lists(st.sampled_from(names), min_size=1, unique=True))),
        "add_missing_columns": draw(st.booleans()), "unique_column_names": draw(st.booleans()),
    }
    document["columns"] = [draw(columns(name)) for name in names]
    return document


@settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(dataframe_documents())
def test_generated_dataframe_contracts_come_back_the_same(document):
    assert validate_document(document) == []
    assert travel(document) == document


JSON_LEAVES = st.one_of(
    st.fixed_dictionaries({"type": st.just("string")}, optional={"minLength": st.integers(0, 5), "pattern": st.just("^a"),
                                                                  "format": st.just("uuid"), "description": TEXT.filter(bool)}),
    st.fixed_dictionaries({"type": st.sampled_from(["integer", "number"])}, optional={"minimum": st.integers(-5, 5),
                                                                                     "exclusiveMaximum": st.integers(6, 9)}),
    st.fixed_dictionaries({"type": st.just("boolean")}),
    st.fixed_dictionaries({"enum": st.lists(TEXT, min_size=1, max_size=3, unique=True)}, optional={"type": st.just("string")}),
    st.fixed_dictionaries({"type": st.just(["string", "null"])}),
)
JSON_SCHEMAS = st.recursive(
    JSON_LEAVES,
    lambda inner: st.one_of(
        st.fixed_dictionaries({"type": st.just("array"), "items": inner}, optional={"minItems": st.integers(0, 3)}),
        st.dictionaries(NAMES, inner, min_size=1, max_size=4).flatmap(lambda props: st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(props)},
            optional={"required": st.lists(st.sampled_from(sorted(props)), unique=True, min_size=1),
                      "additionalProperties": st.just(False)}))),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(NAMES, JSON_SCHEMAS, min_size=1, max_size=4), st.booleans())
def test_generated_event_contracts_come_back_the_same(properties, closed):
    payload = {"type": "object", "properties": properties, "required": sorted(properties)[:1]}
    if closed:
        payload["additionalProperties"] = False
    document = {"schema": {"name": "gen.sub.happened", "domain": "gen", "subdomains": ["sub"], "entity": "happened",
                           "version": "1.0", "owner": "checkout", "schema_type": "event"},
                "payload": payload}
    assert travel(document) == document
