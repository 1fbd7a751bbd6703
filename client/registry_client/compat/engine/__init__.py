"""Change-by-change comparison of two JSON Schemas.

`compare(old, new)` walks both schemas side by side and emits one `Change` per
difference, each with the two directions it may break:

- breaks_backward: some document valid under `old` can fail `new`;
- breaks_forward: some document valid under `new` can fail `old`.

The rule that keeps the checker honest: a direction is only called safe when a
sufficient condition proves it (L(old) ⊆ L(new) for backward). Everything the
engine cannot prove counts as breaking, with a reason that says so. Precision
comes from reasoning about more keywords, never from guessing.

Where one side describes a finite set of values (const, enum, boolean/null-only
types) the question is decided exactly by validating each value with the real
validator, which removes most false alarms around enum and const.

`compare` is the package's one entry point. The modules, from the bottom up:

- vocabulary: the keyword sets and type atoms every other module names;
- normalize: Draft 4-7 spellings rewritten into the 2020-12 shape;
- algebra: schemas as values (equality keys, the JSON types they admit, conjunction);
- refs: the two sides, `$ref` resolution and the context shared by one comparison;
- walk: the recursion, `compare`, and the table of keyword families;
- generic, scalars, objects, arrays, combinators: one family of keywords each;
- verdicts: how a direction is settled or summarised once the families have spoken.

Names with a leading underscore are shared between these modules but are not part
of the package's interface. The keyword families recurse through the walk, which
imports them; they reach its recursion through the context (`cx.diff`, `cx.sub`,
set by `compare`), so imports point one way.
"""

from __future__ import annotations

from .walk import compare

__all__ = ["compare"]
