"""DRF's JSON parser, with registry.jsonbody's bounds."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser, JSONParser

from registry.jsonbody import JsonBodyError, parse_json
from registry.models import RegistryError
from registry.teamsync import load_yaml


class BoundedJSONParser(JSONParser):
    """Refuses, as 400 with what and where, the JSON that would fail later as a
    500: nesting past MAX_DEPTH, huge integers, NaN, lone surrogates."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        body = stream.read() if stream is not None else b""
        try:
            return parse_json(body)
        except JsonBodyError as exc:
            raise ParseError(exc.detail, code=exc.code) from None


class TeamsYamlParser(BaseParser):
    """A teams file's YAML (docs/teams.md), read by the teams file's own loader."""

    media_type = "application/yaml"

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        body = stream.read() if stream is not None else b""
        try:
            return load_yaml(body.decode("utf-8"))
        except UnicodeDecodeError:
            raise ParseError("A teams file is UTF-8 text.", code="bad_yaml") from None
        except RegistryError as exc:
            raise ParseError(" ".join(exc.messages), code="bad_yaml") from None
