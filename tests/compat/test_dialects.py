"""Every draft on its own terms: the checker's verdicts against each declared draft's own validator.

Hypothesis draws schemas from keywords of every draft (Draft 3's `divisibleBy`, `disallow`,
`extends`, `required: true`; Draft 4's boolean exclusive bounds and `id`; Draft 6's `const`,
`contains`, `propertyNames`; Draft 7's `if`; 2019-09/2020-12's `dependentRequired`, `prefixItems`
…) and declares a draft for each side; a schema its draft's metaschema refuses is skipped. Each
pair is then probed with documents judged by the declared drafts' real validators (jsonschema's
Draft3Validator … Draft202012Validator): whenever a probe is valid under old and invalid under
new, the checker must say breaks_backward, and symmetrically forward. Zero false negatives.

COMPAT_DIALECT_EXAMPLES sets the number of pairs (default 150).
"""

from __future__ import annotations

import json
import os
import warnings

import jsonschema
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from registry_client.compat import compare, ecma

from .oracle import BASE_VALUES, _dedupe, _mutations, _walk_constants

DRAFTS = {
    "3": "http://json-schema.org/draft-03/schema#",
    "4": "http://json-schema.org/draft-04/schema#",
    "6": "http://json-schema.org/draft-06/schema#",
    "7": "http://json-schema.org/draft-07/schema#",
    "2019": "https://json-schema.org/draft/2019-09/schema",
    "2020": "https://json-schema.org/draft/2020-12/schema",
    None: None,  # no $schema: read as 2020-12
}
NAMES = ("a", "b", "c")
SCALARS = st.sampled_from([None, True, False, 0, 1, 2, -1, 1.5, "a", "b", ""])
TYPES = st.sampled_from(["null", "boolean", "object", "array", "string", "integer", "number"])
NUMBERS = st.sampled_from([0, 1, 2, 3, 5, -1, 0.5])
COUNTS = st.integers(0, 3)


def _leaf_keywords():
    return st.fixed_dictionaries({}, optional={
        "type": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=3, unique=True)),
        "enum": st.lists(SCALARS, min_size=1, max_size=3, unique_by=json.dumps),
        "const": SCALARS,
        "minimum": NUMBERS, "maximum": NUMBERS,
        "exclusiveMinimum": st.one_of(st.booleans(), NUMBERS),
        "exclusiveMaximum": st.one_of(st.booleans(), NUMBERS),
        "multipleOf": st.sampled_from([1, 2, 3]),
        "divisibleBy": st.sampled_from([1, 2, 3]),
        "minLength": COUNTS, "maxLength": COUNTS,
        "minItems": COUNTS, "maxItems": COUNTS, "uniqueItems": st.booleans(),
        "minProperties": COUNTS, "maxProperties": COUNTS,
        "required": st.one_of(st.booleans(), st.lists(st.sampled_from(NAMES), max_size=2, unique=True)),
        "disallow": st.one_of(TYPES, st.lists(TYPES, min_size=1, max_size=2, unique=True)),
        "format": st.sampled_from(["email", "date", "ip-address", "ipv4"]),
        "pattern": st.sampled_from(["^a", "(?<n>b)", "^\\d+$"]),
        "id": st.sampled_from(["http://example.com/a.json", "http://example.com/b.json", "#x"]),
        "title": st.sampled_from(["t", "u"]),
    })


def _schemas():
    def extend(children):
        return st.fixed_dictionaries({}, optional={
            "properties": st.dictionaries(st.sampled_from(NAMES), children, max_size=2),
            "additionalProperties": st.one_of(st.booleans(), children),
            "items": st.one_of(children, st.lists(children, min_size=1, max_size=2)),
            "additionalItems": st.one_of(st.booleans(), children),
            "prefixItems": st.lists(children, min_size=1, max_size=2),
            "contains": children,
            "propertyNames": st.fixed_dictionaries({"maxLength": COUNTS}),
            "allOf": st.lists(children, min_size=1, max_size=2),
            "anyOf": st.lists(children, min_size=1, max_size=2),
            "oneOf": st.lists(children, min_size=1, max_size=2),
            "not": children,
            "if": children, "then": children, "else": children,
            "extends": children,
            "dependencies": st.dictionaries(st.sampled_from(NAMES), st.one_of(
                st.lists(st.sampled_from(NAMES), max_size=2, unique=True), children), max_size=1),
            "dependentRequired": st.dictionaries(st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), max_size=2, unique=True), max_size=1),
        }).flatmap(lambda structural: _leaf_keywords().map(lambda leaf: {**leaf, **structural}))

    return st.recursive(_leaf_keywords(), extend, max_leaves=6)


def _declare(schema: dict, draft) -> dict | None:
    if draft is not None:
        schema = {"$schema": DRAFTS[draft], **schema}
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema, format_checker=ecma.format_checker(cls))
    except jsonschema.SchemaError:
        return None
    except Exception:  # a metaschema format check the validator itself cannot run
        return None
    return schema


def make_validator(schema: dict):
    """The declared draft's own validator, formats asserted, patterns read as ECMA-262."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return ecma.validator_class(cls)(schema, format_checker=ecma.format_checker(cls))


def _probes(old: dict, new: dict) -> list:
    constants: list = []
    names: set = set(NAMES)
    _walk_constants([old, new], constants, names)
    pool = _dedupe([1.0, 0.0, 2.0, *constants, *BASE_VALUES])[:50]
    seeds = [{n: v for n in NAMES} for v in pool[:10]] + [[v, v] for v in pool[:10]]
    out = list(pool) + seeds
    for seed in seeds[:6]:
        out.extend(_mutations(seed, pool[:12], list(NAMES), 12))
    return _dedupe(out)[:1500]


@settings(max_examples=int(os.environ.get("COMPAT_DIALECT_EXAMPLES", "150")), deadline=None, database=None,
          derandomize=True, suppress_health_check=list(HealthCheck))
@given(old=_schemas(), new=_schemas(), drafts=st.tuples(st.sampled_from(list(DRAFTS)), st.sampled_from(list(DRAFTS))),
       same_draft=st.booleans())
def test_no_probe_breaks_a_direction_the_checker_calls_safe(old, new, drafts, same_draft):
    draft_old, draft_new = drafts[0], drafts[0] if same_draft else drafts[1]
    old, new = _declare(old, draft_old), _declare(new, draft_new)
    assume(old is not None and new is not None)
    warnings.filterwarnings("ignore")
    changes = compare(old, new)
    bb = any(c.breaks_backward for c in changes)
    bf = any(c.breaks_forward for c in changes)
    if bb and bf:
        return
    v_old, v_new = make_validator(old), make_validator(new)
    for doc in _probes(old, new):
        try:
            in_old, in_new = v_old.is_valid(doc), v_new.is_valid(doc)
        except Exception:
            continue  # e.g. Python's `re` refusing an ECMA-262 pattern: the probe proves nothing
        assert not (in_old and not in_new and not bb), (
            f"backward break missed: {json.dumps(doc)} valid under {json.dumps(old)}, not under {json.dumps(new)}; {changes}")
        assert not (in_new and not in_old and not bf), (
            f"forward break missed: {json.dumps(doc)} valid under {json.dumps(new)}, not under {json.dumps(old)}; {changes}")
