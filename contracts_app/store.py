"""The contract store: plain I/O for published YAML and the index CSVs.

Layout (identical in an S3 bucket under a prefix and in a local directory, so
the thin client reads both the same way):

    contracts/domains/<domain>/<sub…>/<entity>/v1_0/schema.yaml
    contracts/index/schema_index.csv        name,key,version,date,schema_type,deprecation_date,sunset_date
    integrations/source_specs/<domain>/<sub…>/<entity>/v1_0/spec.yaml
    integrations/index/spec_index.csv       name,key,version,date,source_schema,source_table

Keys mirror the contract's path in the authoring tree. Writers put objects
first and rewrite an index last, so a reader never meets an index entry whose
object is missing. No database access here.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

# The index keys are the client's own: the registry writes the indexes the client reads.
from registry_client.backends.base import SCHEMA_INDEX_KEY, SPEC_INDEX_KEY  # noqa: F401 - re-exported
from registry_client.versions import version_to_folder as version_folder

# The lane dates (deprecation, sunset) of each version's lane ride along on its row:
# clients that do not know them ignore the columns.
SCHEMA_INDEX_COLUMNS = ("name", "key", "version", "date", "schema_type", "deprecation_date", "sunset_date")
SPEC_INDEX_COLUMNS = ("name", "key", "version", "date", "source_schema", "source_table")



class StoreError(Exception):
    """The contract store could not be read or written; the message says where."""


def contract_key(parts: Sequence[str], version: str) -> str:
    return "/".join(["contracts", "domains", *parts, version_folder(version), "schema.yaml"])


def spec_key(parts: Sequence[str], version: str) -> str:
    return "/".join(["integrations", "source_specs", *parts, version_folder(version), "spec.yaml"])


def render_csv(columns: Sequence[str], rows: Iterable[dict]) -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=lambda r: (r["name"], r["version"])):
        writer.writerow(row)
    return buffer.getvalue().encode()


@dataclass
class LocalStore:
    """A directory on disk: the embedded default."""

    root: str

    def describe(self) -> str:
        return f"directory {self.root}"

    def put(self, key: str, body: bytes, content_type: str = "application/yaml") -> None:
        path = Path(self.root) / key
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Write-then-rename, so a reader sees the old file or the new one, never half of one.
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
            os.replace(tmp, path)
        except OSError as exc:
            raise StoreError(f"could not write {key} in {self.describe()}: {exc}") from exc

    def get(self, key: str) -> bytes:
        try:
            return (Path(self.root) / key).read_bytes()
        except OSError as exc:
            raise StoreError(f"could not read {key} from {self.describe()}: {exc}") from exc

    def exists(self, key: str) -> bool:
        return (Path(self.root) / key).is_file()


@dataclass
class S3Store:
    """An S3 bucket (any S3 API: AWS, SeaweedFS, MinIO) under a key prefix."""

    bucket: str
    prefix: str = ""
    endpoint_url: str | None = None
    region: str = "us-east-1"
    access_key_id: str = ""
    secret_access_key: str = ""
    _client: object = None

    def describe(self) -> str:
        where = f" at {self.endpoint_url}" if self.endpoint_url else ""
        return f"s3://{self.bucket}/{self.prefix}{where}".rstrip("/")

    @property
    def client(self):
        if self._client is None:
            import boto3
            from botocore.config import Config

            self._client = boto3.client(
                "s3", endpoint_url=self.endpoint_url, region_name=self.region,
                aws_access_key_id=self.access_key_id or None, aws_secret_access_key=self.secret_access_key or None,
                config=Config(connect_timeout=5, read_timeout=20, retries={"max_attempts": 2},
                              s3={"addressing_style": "path"}),
            )
        return self._client

    def _key(self, key: str) -> str:
        return f"{self.prefix.strip('/')}/{key}" if self.prefix.strip("/") else key

    def put(self, key: str, body: bytes, content_type: str = "application/yaml") -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=body, ContentType=content_type)
        except (BotoCoreError, ClientError) as exc:
            raise StoreError(f"could not write {key} to {self.describe()}: {exc}") from exc

    def get(self, key: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            raise StoreError(f"could not read {key} from {self.describe()}: {exc}") from exc

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError:
            return False
        return True


Store = LocalStore | S3Store


def store_from_settings() -> Store:
    """The store named by the CONTRACT_STORE setting (s3://bucket/prefix or a directory)."""
    from django.conf import settings

    config = settings.CONTRACT_STORE
    if config.is_s3:
        return S3Store(
            bucket=config.bucket, prefix=config.prefix, endpoint_url=settings.S3_ENDPOINT_URL,
            region=settings.S3_REGION, access_key_id=settings.S3_ACCESS_KEY_ID,
            secret_access_key=settings.S3_SECRET_ACCESS_KEY,
        )
    return LocalStore(root=config.path)
