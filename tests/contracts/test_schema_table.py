"""Event and api contracts read as tables of their properties."""

from __future__ import annotations

from pathlib import Path

import yaml
from django.conf import settings

from contracts_app.schema_table import contract_tables, schema_table

DOMAINS = Path(settings.BASE_DIR) / "fixtures" / "contracts" / "domains" / "retail"


def fixture_document(entity: str, version: str) -> dict:
    return yaml.safe_load((DOMAINS / entity / f"v{version}" / "schema.yaml").read_text())


def rows_of(table) -> dict:
    return {(row.name, row.depth): row for row in table.rows}


def test_an_event_payload_is_a_row_per_property_with_nested_items_indented():
    (payload,) = contract_tables(fixture_document("checkout/order_placed", "2_0"))
    rows = rows_of(payload)
    assert payload.name == "payload"
    assert payload.notes == ["Closed: a document with a property not listed here is refused."]
    assert [r.name for r in payload.rows][:3] == ["event_id", "order_id", "customer_id"]
    assert rows[("placed_at", 0)].type == "string (date-time)" and rows[("placed_at", 0)].required
    assert rows[("channel", 0)].type == "enum" and rows[("channel", 0)].required is False
    assert rows[("channel", 0)].constraints == ("one of web, app, store",)
    assert rows[("customer_id", 0)].constraints == ("length ≥ 1", "length ≤ 36")
    assert rows[("lines", 0)].type == "array of object" and rows[("lines", 0)].constraints == ("at least 1 items",)
    assert rows[("[items]", 1)].constraints == ("no other properties",)
    assert rows[("sku", 2)].required and rows[("sku", 2)].constraints == ("matches ^[A-Z]{3}-[0-9]{5}$",)
    assert rows[("quantity", 2)].constraints == ("≥ 1",)


def test_an_api_contract_has_a_table_per_request_response_and_callback():
    tables = contract_tables(fixture_document("payments/refund_api", "1_0"))
    assert [t.name for t in tables] == ["request", "response", "callback refund_settled"]
    assert rows_of(tables[0])[("amount_minor", 0)].constraints == ("> 0",)
    assert rows_of(tables[1])[("rejected_because", 0)].required is False


def test_definitions_references_and_nullable_types_are_named():
    table = schema_table("payload", {
        "type": "object",
        "properties": {
            "note": {"type": ["string", "null"], "description": "Free text."},
            "line": {"$ref": "#/$defs/Line"},
            "paid": {"oneOf": [{"type": "boolean"}, {"$ref": "#/$defs/Line"}]},
            "meta": {"type": "object", "properties": {"source": {"const": "shop"}}},
        },
        "$defs": {"Line": {"type": "object", "required": ["sku"], "properties": {"sku": {"type": "string"}}}},
    })
    rows = rows_of(table)
    assert rows[("note", 0)].type == "string | null" and rows[("note", 0)].description == "Free text."
    assert rows[("line", 0)].type == "→ #/$defs/Line"
    assert rows[("paid", 0)].type == "boolean | → #/$defs/Line"
    assert rows[("source", 1)].constraints == ("= shop",)
    assert rows[("#/$defs/Line", 0)].required is None and rows[("sku", 1)].required


def test_a_schema_that_is_not_an_object_is_one_row():
    table = schema_table("payload", {"type": "array", "items": {"type": "integer"}, "maxItems": 10})
    assert [(r.name, r.type, r.constraints) for r in table.rows] == [
        ("(the whole document)", "array of integer", ("at most 10 items",))]
