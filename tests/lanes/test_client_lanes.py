"""The thin client resolves lane selectors over a store's index, honouring lane dates."""

from __future__ import annotations

import logging
from datetime import date

import pytest
from registry_client import Registry
from registry_client.backends import LocalBackend
from registry_client.errors import LaneSunset, UnknownVersion
from registry_client.versions import lane_of, lane_selector, latest_in_lane

VERSIONS = ["1.0", "1.1", "2.0", "2.1", "2.10.1", "2.11.0rc1", "3.0", "3.1.dev2", "4.0a1"]


def store(tmp_path, dates: dict[int, tuple[str, str]] | None = None):
    """A store whose index lists `lab.cells` at VERSIONS, with lane dates per major."""
    index = tmp_path / "contracts" / "index" / "schema_index.csv"
    index.parent.mkdir(parents=True)
    rows = ["name,key,version,date,schema_type,deprecation_date,sunset_date"]
    for version in VERSIONS:
        deprecation, sunset = (dates or {}).get(lane_of(version), ("", ""))
        key = f"contracts/domains/lab/cells/{version}/schema.yaml"
        (tmp_path / key).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / key).write_text(f"schema: {{name: lab.cells, version: '{version}'}}\n")
        rows.append(f"lab.cells,{key},{version},2026-01-01,dataframe,{deprecation},{sunset}")
    index.write_text("\n".join(rows) + "\n")
    return tmp_path


def on(day: str):
    return lambda: date.fromisoformat(day)


def test_a_lane_selector_names_a_major_with_or_without_x():
    assert lane_selector("2") == 2 and lane_selector("2.x") == 2 and lane_selector("10.x") == 10
    assert lane_selector("2.1") is None and lane_selector("latest") is None and lane_selector("x") is None


def test_the_newest_release_of_a_lane_skips_pre_releases_and_orders_semantically():
    assert latest_in_lane(VERSIONS, 2) == "2.10.1"
    assert latest_in_lane(VERSIONS, 3) == "3.0"
    assert latest_in_lane(VERSIONS, 4) is None


def test_the_client_resolves_a_lane_as_its_newest_release(tmp_path):
    registry = Registry(LocalBackend(store(tmp_path)))
    assert registry.resolve("lab.cells", "2") == "2.10.1"
    assert registry.resolve("lab.cells", "2.x") == "2.10.1"
    assert registry.resolve("lab.cells", "1.x") == "1.1"
    assert registry.resolve("lab.cells") == "3.0"
    assert registry.get_schema("lab.cells", "2.x")["schema"]["version"] == "2.10.1"


def test_a_lane_with_only_pre_releases_does_not_resolve(tmp_path):
    registry = Registry(LocalBackend(store(tmp_path)))
    with pytest.raises(UnknownVersion, match="no version '4.x'"):
        registry.resolve("lab.cells", "4.x")


def test_a_deprecated_lane_still_resolves_and_the_warning_names_its_sunset(tmp_path, caplog):
    registry = Registry(LocalBackend(store(tmp_path, {2: ("2026-11-01", "2027-01-15")})), today=on("2026-12-03"))
    with caplog.at_level(logging.WARNING, logger="registry_client"):
        assert registry.resolve("lab.cells", "2.x") == "2.10.1"
        registry.resolve("lab.cells", "2.x")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1  # once per version and instance, not per call
    assert "deprecated since 2026-11-01" in warnings[0] and "its sunset is 2027-01-15" in warnings[0]


def test_before_its_deprecation_date_a_lane_is_silent(tmp_path, caplog):
    registry = Registry(LocalBackend(store(tmp_path, {2: ("2026-11-01", "2027-01-15")})), today=on("2026-10-31"))
    with caplog.at_level(logging.WARNING, logger="registry_client"):
        registry.resolve("lab.cells", "2")
    assert caplog.records == []


def test_at_sunset_a_lane_selector_stops_resolving_but_an_explicit_version_still_does(tmp_path, caplog):
    registry = Registry(LocalBackend(store(tmp_path, {2: ("2026-11-01", "2026-12-03")})), today=on("2026-12-03"))
    with pytest.raises(LaneSunset, match="reached its sunset on 2026-12-03"):
        registry.get_pandera_model("lab.cells", version="2")
    with caplog.at_level(logging.WARNING, logger="registry_client"):
        assert registry.resolve("lab.cells", "2.1") == "2.1"
    assert "reached its sunset on 2026-12-03" in caplog.records[0].getMessage()


def test_latest_skips_a_sunset_lane(tmp_path):
    registry = Registry(LocalBackend(store(tmp_path, {3: ("2026-11-01", "2026-12-01")})), today=on("2026-12-03"))
    assert registry.resolve("lab.cells", "latest") == "2.10.1"
    assert registry.resolve("lab.cells", "3.0") == "3.0"


def test_the_client_lists_the_lanes_with_their_dates(tmp_path):
    registry = Registry(LocalBackend(store(tmp_path, {1: ("2026-01-01", "2026-06-01")})))
    lanes = registry.lanes("lab.cells")
    assert list(lanes) == [1, 2, 3, 4]
    assert lanes[1] == {"latest": "1.1", "deprecation_date": "2026-01-01", "sunset_date": "2026-06-01"}
    assert lanes[4]["latest"] is None


def test_an_index_without_lane_columns_still_reads(tmp_path):
    root = store(tmp_path)
    index = root / "contracts" / "index" / "schema_index.csv"
    lines = [",".join(line.split(",")[:5]) for line in index.read_text().splitlines()]
    index.write_text("\n".join(lines) + "\n")
    assert Registry(LocalBackend(root)).resolve("lab.cells", "2.x") == "2.10.1"
