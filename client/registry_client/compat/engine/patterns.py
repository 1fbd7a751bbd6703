"""Containment of regular expressions for the common subset of ECMA-262 patterns.

`contained(a, b)` answers whether every string `pattern: a` accepts is accepted by `pattern: b`
(True / False), or None when either pattern leaves the subset. JSON Schema patterns search
(they match anywhere unless anchored), so a side without `^` or `$` is read as `.*` there.

The subset: literal characters and escapes, `.`, character classes (ranges, negation, `\\d \\w
\\s` and their negations), groups (plain, non-capturing, named), alternation, `* + ?` and
bounded repetition `{m}`, `{m,}`, `{m,n}` (lazy or not: the language is the same), `^` at the
start and `$` at the end of a top-level alternative. Anything else — lookarounds,
backreferences, word boundaries, anchors elsewhere — is outside it and stays undecided.

Both patterns become automata over one partition of the code points (every class either holds
a whole part or none of it); containment is decided on the product of the two subset
constructions, within a bound on its states.
"""

from __future__ import annotations

from functools import lru_cache

MAX_CODE = 0x10FFFF
_LINE_TERMINATORS = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_DIGIT = ((0x30, 0x39),)
_WORD = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE = ((0x09, 0x0D), (0x20, 0x20), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
          (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF))
MAX_REPEAT = 40
MAX_STATES = 4000


class Unsupported(ValueError):
    """The pattern leaves the subset the checker decides."""


def _complement(intervals) -> tuple:
    out, lo = [], 0
    for a, b in sorted(intervals):
        if a > lo:
            out.append((lo, a - 1))
        lo = max(lo, b + 1)
    if lo <= MAX_CODE:
        out.append((lo, MAX_CODE))
    return tuple(out)


_DOT = _complement(_LINE_TERMINATORS)
_ANY = ((0, MAX_CODE),)
_CLASS_ESCAPES = {"d": _DIGIT, "D": _complement(_DIGIT), "w": _WORD, "W": _complement(_WORD),
                  "s": _SPACE, "S": _complement(_SPACE)}
_CONTROL = {"n": 0x0A, "t": 0x09, "r": 0x0D, "f": 0x0C, "v": 0x0B, "0": 0x00}


class _Parser:
    def __init__(self, text: str):
        self.text, self.i = text, 0

    def peek(self):
        return self.text[self.i] if self.i < len(self.text) else None

    def take(self):
        ch = self.peek()
        self.i += 1
        return ch

    def alternatives(self, top: bool = False):
        branches = [self.sequence(top)]
        while self.peek() == "|":
            self.take()
            branches.append(self.sequence(top))
        return branches

    def sequence(self, top: bool):
        items, start = [], self.i
        bol = eol = False
        while self.peek() not in (None, "|", ")"):
            if self.peek() == "^":
                if not top or self.i != start or items:
                    raise Unsupported("^ inside a pattern")
                self.take()
                bol = True
                continue
            if self.peek() == "$":
                self.take()
                if not top or self.peek() not in (None, "|"):
                    raise Unsupported("$ inside a pattern")
                eol = True
                continue
            items.append(self.quantified(self.atom()))
        node = ("cat", items)
        return (bol, node, eol) if top else node

    def atom(self):
        ch = self.take()
        if ch == "(":
            if self.peek() == "?":
                self.take()
                kind = self.take()
                if kind == "<" and self.peek() not in ("=", "!"):
                    while self.peek() not in (None, ">"):
                        self.take()
                    if self.take() != ">":
                        raise Unsupported("unterminated group name")
                elif kind != ":":
                    raise Unsupported("lookaround")
            inner = self.alternatives()
            if self.take() != ")":
                raise Unsupported("unbalanced parenthesis")
            return ("alt", inner)
        if ch == "[":
            return ("set", self.char_class())
        if ch == ".":
            return ("set", _DOT)
        if ch == "\\":
            return ("set", self.escape(in_class=False))
        if ch in ("*", "+", "?", ")", "]", "{", "}") and not (ch in "]}" or (ch == "{" and not self._is_quantifier())):
            raise Unsupported(f"nothing to repeat before {ch!r}")
        return ("set", ((ord(ch), ord(ch)),))

    def escape(self, in_class: bool):
        ch = self.take()
        if ch is None:
            raise Unsupported("trailing backslash")
        if ch in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[ch]
        if ch in _CONTROL and not (ch == "0" and (self.peek() or "").isdigit()):
            return ((_CONTROL[ch], _CONTROL[ch]),)
        if ch == "b" and in_class:
            return ((8, 8),)
        if ch in ("x", "u"):
            width = 2 if ch == "x" else 4
            digits = self.text[self.i:self.i + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise Unsupported("malformed escape")
            self.i += width
            code = int(digits, 16)
            return ((code, code),)
        if ch.isalnum():
            raise Unsupported(f"escape \\{ch}")  # word boundaries, backreferences, \c, \p …
        return ((ord(ch), ord(ch)),)

    def char_class(self):
        negate = self.peek() == "^"
        if negate:
            self.take()
        out, first = [], True
        while True:
            ch = self.take()
            if ch is None:
                raise Unsupported("unterminated class")
            if ch == "]" and not first:
                break
            first = False
            lo = self.escape(in_class=True) if ch == "\\" else ((ord(ch), ord(ch)),)
            if self.peek() == "-" and self.i + 1 < len(self.text) and self.text[self.i + 1] != "]" and len(lo) == 1 and lo[0][0] == lo[0][1]:
                self.take()
                ch2 = self.take()
                hi = self.escape(in_class=True) if ch2 == "\\" else ((ord(ch2), ord(ch2)),)
                if len(hi) != 1 or hi[0][0] != hi[0][1] or hi[0][0] < lo[0][0]:
                    raise Unsupported("malformed range")
                out.append((lo[0][0], hi[0][0]))
            else:
                out.extend(lo)
        return _complement(out) if negate else tuple(out)

    def _is_quantifier(self) -> bool:
        rest = self.text[self.i:]
        j = 0
        while j < len(rest) and rest[j].isdigit():
            j += 1
        if j == 0:
            return False
        if j < len(rest) and rest[j] == ",":
            j += 1
            while j < len(rest) and rest[j].isdigit():
                j += 1
        return j < len(rest) and rest[j] == "}"

    def quantified(self, node):
        while True:
            ch = self.peek()
            if ch in ("*", "+", "?"):
                self.take()
                node = ("rep", node, 0 if ch != "+" else 1, None if ch != "?" else 1)
            elif ch == "{" and (self.i + 1 < len(self.text)) and self._quantifier_at(self.i + 1):
                self.take()
                m = self._number()
                n = m
                if self.peek() == ",":
                    self.take()
                    n = self._number() if self.peek() != "}" else None
                self.take()  # }
                if m > MAX_REPEAT or (n is not None and (n > MAX_REPEAT or n < m)):
                    raise Unsupported("repetition too large to decide")
                node = ("rep", node, m, n)
            else:
                return node
            if self.peek() == "?":
                self.take()  # lazy: the same language

    def _quantifier_at(self, i: int) -> bool:
        saved, self.i = self.i, i
        try:
            return self._is_quantifier()
        finally:
            self.i = saved

    def _number(self) -> int:
        start = self.i
        while (self.peek() or "").isdigit():
            self.take()
        return int(self.text[start:self.i])


@lru_cache(maxsize=512)
def parse(pattern: str) -> tuple:
    """The pattern's top-level alternatives, each (anchored at start, node, anchored at end)."""
    p = _Parser(pattern)
    branches = p.alternatives(top=True)
    if p.peek() is not None:
        raise Unsupported("unbalanced parenthesis")
    return tuple(branches)


def _sets(node, out: list) -> None:
    kind = node[0]
    if kind == "set":
        out.append(node[1])
    elif kind in ("cat", "alt"):
        for child in node[1]:
            _sets(child, out)
    elif kind == "rep":
        _sets(node[1], out)


class _NFA:
    def __init__(self, atoms: list[tuple[int, int]]):
        self.atoms = atoms
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[frozenset, int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1

    def charset(self, intervals) -> frozenset:
        return frozenset(k for k, (a, b) in enumerate(self.atoms) if any(lo <= a and b <= hi for lo, hi in intervals))

    def build(self, node, start: int) -> int:
        """Add `node` after `start`; the state reached after it."""
        kind = node[0]
        if kind == "set":
            end = self.state()
            self.moves[start].append((self.charset(node[1]), end))
            return end
        if kind == "cat":
            for child in node[1]:
                start = self.build(child, start)
            return start
        if kind == "alt":
            end = self.state()
            for child in node[1]:
                self.eps[self.build(child, start)].append(end)
            return end
        _, child, m, n = node
        for _ in range(m):
            start = self.build(child, start)
        if n is None:
            loop = self.state()
            self.eps[start].append(loop)
            self.eps[self.build(child, loop)].append(loop)
            return loop
        end = self.state()
        self.eps[start].append(end)
        for _ in range(n - m):
            start = self.build(child, start)
            self.eps[start].append(end)
        return end

    def closure(self, states) -> frozenset:
        out, stack = set(states), list(states)
        while stack:
            for t in self.eps[stack.pop()]:
                if t not in out:
                    out.add(t)
                    stack.append(t)
        return frozenset(out)

    def step(self, states: frozenset, atom: int) -> frozenset:
        return self.closure({t for s in states for cs, t in self.moves[s] if atom in cs})


def _automaton(branches, atoms) -> tuple[_NFA, frozenset, int]:
    nfa = _NFA(atoms)
    start, accept = nfa.state(), nfa.state()
    everything = ("rep", ("set", _ANY), 0, None)
    for bol, node, eol in branches:
        seq = ([] if bol else [everything]) + [node] + ([] if eol else [everything])
        nfa.eps[nfa.build(("cat", seq), start)].append(accept)
    return nfa, nfa.closure({start}), accept


def _atoms(*branch_sets) -> list[tuple[int, int]]:
    cuts = {0, MAX_CODE + 1}
    for branches in branch_sets:
        found: list = []
        for _, node, _ in branches:
            _sets(node, found)
        for intervals in found:
            for a, b in intervals:
                cuts.update((a, b + 1))
    points = sorted(cuts)
    return [(points[k], points[k + 1] - 1) for k in range(len(points) - 1)]


def contained(a: str, b: str) -> bool | None:
    """Is every string matching pattern `a` matched by pattern `b`? None when undecided."""
    if a == b:
        return True
    try:
        pa, pb = parse(a), parse(b)
    except (Unsupported, RecursionError):
        return None
    atoms = _atoms(pa, pb)
    na, sa, fa = _automaton(pa, atoms)
    nb, sb, fb = _automaton(pb, atoms)
    seen = {(sa, sb)}
    stack = [(sa, sb)]
    while stack:
        x, y = stack.pop()
        if fa in x and fb not in y:
            return False  # a string reaches here: accepted by a, refused by b
        for k in range(len(atoms)):
            nx = na.step(x, k)
            if not nx:
                continue  # a refuses every continuation
            pair = (nx, nb.step(y, k))
            if pair not in seen:
                if len(seen) >= MAX_STATES:
                    return None
                seen.add(pair)
                stack.append(pair)
    return True
