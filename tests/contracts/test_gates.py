import copy
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from jsonschema import Draft202012Validator

from contracts_app import gates
from contracts_app.gates import TemplateError, load_templates, validate_document, validate_tree
from contracts_app.yamlio import ContractYamlError, dump_yaml, load_yaml, load_yaml_file

from .conftest import FIXTURES, write_schema

ORDERS = load_yaml_file(FIXTURES / "domains/retail/sales/orders/v1_0/schema.yaml")
EVENT = load_yaml_file(FIXTURES / "domains/retail/checkout/order_placed/v1_0/schema.yaml")
API = load_yaml_file(FIXTURES / "domains/retail/payments/refund_api/v1_0/schema.yaml")


def column(document: dict, name: str) -> dict:
    return next(c for c in document["columns"] if c["name"] == name)


def test_there_is_one_valid_draft_2020_12_template_per_schema_type():
    templates = load_templates()
    assert sorted(templates) == ["api", "dataframe", "event"]
    for template in templates.values():
        assert template.version == "1.0"
        assert template.path.parent.name == "v1_0"
        Draft202012Validator.check_schema(template.validator.schema)


def test_templates_are_compiled_once():
    assert load_templates() is load_templates()
    assert load_templates()["dataframe"].validator is load_templates()["dataframe"].validator


def test_a_broken_template_stops_the_gate(tmp_path):
    write_schema(tmp_path, "dataframe/v1_0", "$schema: https://json-schema.org/draft/2020-12/schema\ntype: 12\n",
                 filename="schema.yaml")
    with pytest.raises(TemplateError, match="is not a valid Draft 2020-12 schema"):
        load_templates(tmp_path)


def test_the_newest_template_version_applies(tmp_path):
    for folder, title in (("v1_0", "old"), ("v1_10", "new"), ("v1_2", "middle")):
        write_schema(tmp_path, f"event/{folder}", f"$schema: https://json-schema.org/draft/2020-12/schema\ntitle: {title}\n",
                     filename="schema.yaml")
    assert load_templates(tmp_path)["event"].validator.schema["title"] == "new"


@pytest.mark.parametrize("document", [ORDERS, EVENT, API], ids=["dataframe", "event", "api"])
def test_demo_documents_pass_the_gates(document):
    assert validate_document(document) == []


def test_a_document_without_schema_type_is_refused():
    document = copy.deepcopy(ORDERS)
    del document["schema"]["schema_type"]
    [problem] = validate_document(document, "orders.yaml")
    assert problem.code == "schema-type"
    assert str(problem) == (
        "orders.yaml: retail.sales.orders: schema.schema_type: is missing; every contract declares one of api, dataframe, event"
    )


def test_a_schema_type_without_a_template_is_refused():
    document = copy.deepcopy(EVENT)
    document["schema"]["schema_type"] = "stream"
    [problem] = validate_document(document)
    assert problem.code == "schema-type"
    assert "'stream' has no template; expected one of api, dataframe, event" in problem.message


def test_every_template_problem_is_reported_at_once_with_contract_and_column():
    document = copy.deepcopy(ORDERS)
    document["schema"]["version"] = 1.0
    document["schema"]["domain"] = "retail-eu"
    column(document, "status")["checks"].append({"between": [0, 1]})
    del column(document, "currency")["nullable"]
    document["meta"]["tier"] = "platinum"
    problems = validate_document(document, "orders.yaml")
    assert {p.code for p in problems} == {"template"}
    described = {(p.where, p.message.split(":")[0]) for p in problems}
    assert ("schema.version", "1.0 is not of type 'string'") in described
    assert any(p.where == "schema.domain" and "does not match" in p.message for p in problems)
    assert any(p.where == "column 'status' checks[1]" and "'between'" in p.message for p in problems)
    assert any(p.where == "column 'currency'" and "'nullable' is a required property" in p.message for p in problems)
    assert any(p.where == "meta.tier" and "'platinum'" in p.message for p in problems)
    assert all(p.contract == "retail.sales.orders" for p in problems)


def test_an_unknown_dtype_and_a_non_canonical_dtype_are_refused_with_different_messages():
    document = copy.deepcopy(ORDERS)
    column(document, "total_amount")["dtype"] = "double"
    column(document, "order_id")["dtype"] = "varchar(20)"
    problems = {p.where: p for p in validate_document(document, "orders.yaml")}
    assert set(problems) == {"column 'total_amount'", "column 'order_id'"}

    stale = problems["column 'total_amount'"]
    assert stale.code == "non-canonical-dtype"
    assert "dtype 'double' is not canonical (the exporter writes 'float64')" in stale.message
    assert "not produced by the current exporter; re-export it" in stale.message

    unknown = problems["column 'order_id'"]
    assert unknown.code == "unknown-dtype"
    assert "unknown dtype 'varchar(20)'" in unknown.message
    assert "Consumers cannot rebuild this column" in unknown.message
    assert "re-export" not in unknown.message


def test_the_dtype_gate_only_applies_to_dataframe_contracts():
    document = copy.deepcopy(EVENT)
    document["payload"]["properties"]["dtype"] = {"type": "string"}
    assert validate_document(document) == []


def test_column_names_are_unique_and_config_unique_names_columns():
    document = copy.deepcopy(ORDERS)
    document["columns"].append(copy.deepcopy(column(document, "status")))
    document["config"]["unique"] = ["order_id", "shop_id"]
    messages = sorted(str(p) for p in validate_document(document, "orders.yaml"))
    assert messages == [
        "orders.yaml: retail.sales.orders: column 'status': is declared more than once",
        "orders.yaml: retail.sales.orders: config.unique: names 'shop_id', which is not a column",
    ]


def test_an_event_payload_must_itself_be_a_valid_json_schema():
    document = copy.deepcopy(EVENT)
    document["payload"]["properties"]["order_id"]["type"] = "text"
    [problem] = validate_document(document)
    assert problem.where == "payload"
    assert problem.message.startswith("is not a valid Draft 2020-12 JSON Schema at properties/order_id/type")


def test_an_api_contract_needs_request_and_response_and_valid_callbacks():
    document = copy.deepcopy(API)
    del document["response"]
    document["callbacks"]["refund_settled"]["required"] = "refund_id"
    messages = {(p.where, p.message) for p in validate_document(document)}
    assert ("document", "'response' is a required property") in messages
    assert any(where == "callbacks.refund_settled" for where, _ in messages)


def test_a_dataframe_section_is_refused_on_an_event_contract():
    document = copy.deepcopy(EVENT)
    document["columns"] = [{"name": "x", "dtype": "str", "nullable": False}]
    [problem] = validate_document(document)
    assert "Additional properties are not allowed ('columns' was unexpected)" in problem.message


def test_a_document_that_is_not_a_mapping_is_refused():
    [problem] = validate_document(["schema"], "list.yaml")
    assert str(problem) == "list.yaml: document: must be a mapping, not list"


def test_duplicate_yaml_keys_are_refused():
    with pytest.raises(ContractYamlError, match="line 3, column 1: duplicate key 'dtype'"):
        load_yaml("name: a\ndtype: str\ndtype: int64\n")


def write_document(root, folder, document):
    return write_schema(root, folder, dump_yaml(document), filename="schema.yaml")


def test_validate_contracts_passes_on_the_demo_tree():
    out = StringIO()
    call_command("validate_contracts", root=FIXTURES, stdout=out)
    count = len(list(FIXTURES.glob("domains/**/schema.yaml")))
    assert f"{count} documents: {count} ok, 0 refused" in out.getvalue()


def test_validate_contracts_reports_every_problem_of_every_document(tree):
    stale = copy.deepcopy(ORDERS)
    column(stale, "total_amount")["dtype"] = "double"
    column(stale, "order_id")["dtype"] = "uuid"
    write_document(tree, "domains/retail/sales/orders/v1_0", stale)
    misplaced = copy.deepcopy(EVENT)
    write_document(tree, "domains/retail/checkout/order_placed/v2_0", misplaced)
    untyped = copy.deepcopy(API)
    del untyped["schema"]["schema_type"]
    write_document(tree, "domains/retail/payments/refund_api/v1_0", untyped)
    write_schema(tree, "domains/retail/payments/refund_api/v1_1", "schema: {a: 1, a: 2}\n", filename="schema.yaml")
    write_document(tree, "domains/retail/crm/customers/v1_0",
                   load_yaml_file(FIXTURES / "domains/retail/crm/customers/v1_0/schema.yaml"))

    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError, match="4 of 5 contract documents fail the gates"):
        call_command("validate_contracts", root=tree, stdout=out, stderr=err)
    report = err.getvalue()
    assert "column 'total_amount': dtype 'double' is not canonical" in report
    assert "column 'order_id': unknown dtype 'uuid'" in report
    assert "schema.version: '1.0' does not match its folder 'v2_0' (version '2.0')" in report
    assert "schema.schema_type: is missing" in report
    assert "duplicate key 'a'" in report
    assert "retail.crm.customers 1.0  ok" in out.getvalue()


def test_two_documents_with_one_name_and_version_are_refused(tree):
    write_document(tree, "domains/retail/checkout/order_placed/v1_0", EVENT)
    moved = copy.deepcopy(EVENT)
    write_document(tree, "domains/retail/checkout/order_placed/v1_0/copy/v1_0", moved)
    problems = [p for _, found in validate_tree(tree) for p in found]
    duplicates = [p for p in problems if "'1.0' is also declared by domains/retail/checkout/order_placed/v1_0/" in p.message]
    assert len(duplicates) == 1


def test_gates_report_the_location_rule(tmp_path):
    problems = gates.check_location(EVENT, tmp_path / "domains/retail/checkout/placed/v1_0/schema.yaml", tmp_path)
    assert [p.message for p in problems] == [
        "'retail.checkout.order_placed' does not match its folders, which spell 'retail.checkout.placed'"
    ]
