import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from registry_client.versions import (
    InvalidVersionError,
    folder_to_version,
    is_prerelease,
    parse_version,
    validate_version,
    version_to_folder,
)

PAIRS = [
    ("1.0", "v1_0"),
    ("2.1", "v2_1"),
    ("1.0.1", "v1_0_1"),
    ("10.12.3", "v10_12_3"),
    ("0.1", "v0_1"),
    ("2.0.0rc1", "v2_0_0rc1"),
    ("2.0a1", "v2_0a1"),
    ("3.1.0b2", "v3_1_0b2"),
    ("1.1.dev3", "v1_1_dev3"),
    ("2.0.0rc1.dev2", "v2_0_0rc1_dev2"),
]


@pytest.mark.parametrize(("version", "folder"), PAIRS)
def test_versions_and_folders_convert_both_ways(version, folder):
    assert version_to_folder(version) == folder
    assert folder_to_version(folder) == version


@pytest.mark.parametrize(
    "version",
    ["1", "v1.0", "1.0.0.0", "1..0", "1.0.", ".1", "01.0", "1.00", "1.0-rc1", "1.0rc", "1.0RC1", "1.0.0c1",
     "1.0 ", " 1.0", "1_0", "latest", "", "1.0.post1", "1.0+local", "1.0.0-rc.1", "1.0.dev"],
)
def test_malformed_versions_are_refused(version):
    with pytest.raises(InvalidVersionError, match="version"):
        version_to_folder(version)


@pytest.mark.parametrize("value", [1.0, 2, None, ["1.0"]])
def test_a_version_must_be_a_string(value):
    with pytest.raises(InvalidVersionError, match="must be a string"):
        validate_version(value)


def test_a_yaml_float_version_is_told_to_quote_it():
    with pytest.raises(InvalidVersionError, match="quote it in YAML"):
        validate_version(1.0)


def test_a_non_normalized_version_names_the_normalized_form():
    # packaging would accept "1.0.0-rc1" as 1.0.0rc1; a folder must have exactly one spelling
    with pytest.raises(InvalidVersionError):
        validate_version("1.0.0-rc1")


@pytest.mark.parametrize(
    "folder",
    ["1_0", "v1", "v1.0", "V1_0", "v1_0_", "v_1_0", "v1__0", "v01_0", "v1_0_0_0", "v1_0-rc1", "v1_0rc",
     "v1_0.dev1", "v1_0dev1", "vX_Y", "", "v1_0 ", "schema", "v1_0_post1"],
)
def test_malformed_version_folders_are_refused(folder):
    with pytest.raises(InvalidVersionError, match="malformed version folder"):
        folder_to_version(folder)


def test_versions_compare_semantically_and_prereleases_are_flagged():
    assert parse_version("10.0") > parse_version("9.0")
    assert is_prerelease("2.0.0rc1")
    assert is_prerelease("1.1.dev3")
    assert not is_prerelease("2.0")


numbers = st.integers(min_value=0, max_value=999)
versions = st.builds(
    lambda major, minor, patch, pre, dev: (
        f"{major}.{minor}" + (f".{patch}" if patch is not None else "") + (pre or "") + (f".dev{dev}" if dev is not None else "")
    ),
    numbers, numbers, st.none() | numbers,
    st.none() | st.builds(lambda kind, n: f"{kind}{n}", st.sampled_from(["a", "b", "rc"]), numbers),
    st.none() | numbers,
)


@settings(max_examples=200, deadline=None)
@given(versions)
def test_every_version_round_trips_through_its_folder(version):
    folder = version_to_folder(version)
    assert folder.startswith("v") and "." not in folder
    assert folder_to_version(folder) == version
