from __future__ import annotations

from registry_client.backends.base import Backend
from registry_client.errors import StoreUnreachable


class S3Backend(Backend):
    """An S3 bucket under a prefix. The index is read once per instance and
    cached, so listing and resolving versions never list the bucket."""

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None, client=None,
                 region_name: str | None = None, **client_kwargs):
        super().__init__()
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.endpoint_url = endpoint_url
        if client is None:
            import boto3
            from botocore.config import Config

            client = boto3.client(
                "s3", endpoint_url=endpoint_url, region_name=region_name,
                config=Config(connect_timeout=5, read_timeout=20, retries={"max_attempts": 2},
                              s3={"addressing_style": "path"}),
                **client_kwargs,
            )
        self.client = client

    def describe(self) -> str:
        where = f" at {self.endpoint_url}" if self.endpoint_url else ""
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/") + where

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def has_key(self, key: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise StoreUnreachable(f"Could not read {key} from {self.describe()}: {exc}") from exc
        except BotoCoreError as exc:
            raise StoreUnreachable(f"Could not reach {self.describe()}: {exc}") from exc
        return True

    def read_bytes(self, key: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read()
        except (BotoCoreError, ClientError) as exc:
            raise StoreUnreachable(f"Could not read {key} from {self.describe()}: {exc}") from exc
