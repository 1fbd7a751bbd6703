"""DRF's JSON parser, with registry.jsonbody's bounds."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from registry.jsonbody import JsonBodyError, parse_json


class BoundedJSONParser(JSONParser):
    """Refuses, as 400 with what and where, the JSON that would fail later as a
    500: nesting past MAX_DEPTH, huge integers, NaN, lone surrogates."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        body = stream.read() if stream is not None else b""
        try:
            return parse_json(body)
        except JsonBodyError as exc:
            raise ParseError(exc.detail, code=exc.code) from None
