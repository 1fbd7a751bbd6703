"""Where the client reads published contracts from.

Every backend answers the same four questions: the schema index, the spec
index, and the document behind an index entry (for contracts and specs).
"""

from registry_client.backends.base import Backend, IndexEntry
from registry_client.backends.http import HttpBackend
from registry_client.backends.local import LocalBackend
from registry_client.backends.s3 import S3Backend

__all__ = ["Backend", "HttpBackend", "IndexEntry", "LocalBackend", "S3Backend"]
