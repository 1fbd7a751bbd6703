import pytest
from client_world import DirectoryStore


@pytest.fixture
def store(tmp_path) -> DirectoryStore:
    return DirectoryStore(tmp_path / "store")
