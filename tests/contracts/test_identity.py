import dataclasses

import pytest
from registry_client.identity import InvalidIdentityError, SchemaInfo, SchemaMeta
from registry_client.mixins import contract_header, read_contract_header


def info(**overrides) -> SchemaInfo:
    values = {"domain": "lab", "subdomains": ["analytics"], "entity": "cell_count", "version": "1.0", "owner": "lab-data"}
    values.update(overrides)
    return SchemaInfo(**values)


def test_the_dotted_name_is_derived_from_the_parts():
    assert info().name == "lab.analytics.cell_count"
    assert info(subdomains=[]).name == "lab.cell_count"
    assert info(subdomains=["a", "b", "c"]).name == "lab.a.b.c.cell_count"
    assert info().folder == "domains/lab/analytics/cell_count/v1_0"


@pytest.mark.parametrize("bad", ["lab.x", "lab/x", "lab-x", "lab\\x", "lab x", ""])
@pytest.mark.parametrize("part", ["domain", "entity", "subdomain"])
def test_a_name_part_with_a_dot_slash_or_dash_is_refused(part, bad):
    overrides = {"subdomains": ["ok", bad]} if part == "subdomain" else {part: bad}
    with pytest.raises(InvalidIdentityError) as caught:
        info(**overrides)
    assert repr(bad) in str(caught.value) or "empty" in str(caught.value)


def test_subdomains_must_be_a_list_not_a_string():
    with pytest.raises(InvalidIdentityError, match="subdomains must be a list"):
        info(subdomains="analytics")


def test_a_malformed_version_is_refused():
    with pytest.raises(InvalidIdentityError, match="malformed version '1'"):
        info(version="1")


def test_schema_type_is_a_closed_set():
    assert info(schema_type="event").schema_type == "event"
    with pytest.raises(InvalidIdentityError, match="schema_type 'table'"):
        info(schema_type="table")


def test_schema_info_is_frozen_and_hashable():
    value = info()
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.version = "2.0"
    assert value == info(subdomains=("analytics",))
    assert len({value, info()}) == 1


def test_the_schema_section_round_trips_and_a_mismatched_name_is_refused():
    section = info(description="Cells.").to_dict()
    assert list(section) == ["name", "domain", "subdomains", "entity", "version", "owner", "schema_type", "description"]
    assert SchemaInfo.from_dict(section) == info(description="Cells.")
    with pytest.raises(InvalidIdentityError, match="does not match its parts"):
        SchemaInfo.from_dict({**section, "name": "lab.cell_count"})


@pytest.mark.parametrize(
    ("key", "value"),
    [("tier", "platinum"), ("alignment", "raw"), ("contract_type", "outgress")],
)
def test_meta_tags_are_closed_sets(key, value):
    with pytest.raises(InvalidIdentityError, match=f"meta {key} '{value}' is not one of"):
        SchemaMeta(**{key: value})


def test_source_system_is_a_string_or_a_list():
    assert SchemaMeta(source_system="lims").source_systems == ("lims",)
    listed = SchemaMeta(source_system=["lims", "historian"])
    assert listed.source_system == ("lims", "historian")
    assert listed.to_dict() == {"source_system": ["lims", "historian"]}
    assert hash(listed)
    for bad in ([], [""], 3, ["lims", 4]):
        with pytest.raises(InvalidIdentityError, match="source_system"):
            SchemaMeta(source_system=bad)


def test_meta_matches_any_of_several_source_systems():
    meta = SchemaMeta(tier="bronze", source_system=["lims", "historian"])
    assert meta.matches(tier="bronze", source_system="historian")
    assert not meta.matches(tier="gold")
    assert not meta.matches(source_system="erp")


def test_meta_from_dict_refuses_unknown_keys():
    assert SchemaMeta.from_dict({"tier": "gold", "stage": "published"}) == SchemaMeta(tier="gold", stage="published")
    with pytest.raises(InvalidIdentityError, match="unknown meta keys: teir"):
        SchemaMeta.from_dict({"teir": "gold"})


def test_the_contract_header_is_flat_strings_and_reads_back():
    meta = SchemaMeta(tier="bronze", source_system=["lims", "historian"], stage="raw")
    header = contract_header(info(description="Cells."), meta)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in header.items())
    assert header["contract.name"] == "lab.analytics.cell_count"
    assert header["contract.version"] == "1.0"
    assert header["contract.subdomains"] == '["analytics"]'
    assert header["contract.meta.source_system"] == '["lims", "historian"]'
    # pyarrow hands metadata back as bytes, mixed with other keys
    as_parquet = {k.encode(): v.encode() for k, v in header.items()} | {b"pandas": b"{}"}
    assert read_contract_header(as_parquet) == (info(description="Cells."), meta)
    assert read_contract_header({b"pandas": b"{}"}) is None
