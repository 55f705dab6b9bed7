"""Glob patterns matched in linear time, with no regular expression.

A pattern comes from the model, so matching must cost one pass over each path whatever the
pattern says. Globs used to become regular expressions, and ``re`` backtracks: against a long
name, ``*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b`` took minutes, and since ``re`` holds the GIL for
the whole match, every other call and signal handler of the process waited too.

Here a pattern becomes a small nondeterministic automaton whose set of live states is one
Python ``int`` (a bit per state); one character of the path is one step of a few integer
operations, and the steps already taken are cached (a DFA built lazily, with a size limit).
Every match is a plain Python loop, so other threads get the GIL at the usual intervals.

Syntax (the same as before, matched against whole ``/``-separated relative paths, case
sensitive):

- ``*`` matches any characters except ``/``; ``?`` one character except ``/``;
- ``**/`` matches any number of directories (none included), anywhere in the pattern;
- ``**`` at the very end matches everything below (``/`` included); elsewhere it is ``*``;
- ``[abc]``, ``[a-z]``, ``[!abc]`` match one character in (or not in) the set; ``]`` right
  after ``[`` is a member, ``-`` first or last is literal. A ``[`` without a closing ``]`` is
  a literal ``[``. An empty set (``[!]``) or a backwards range (``[z-a]``) is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_PATTERN_CHARS", "Glob", "GlobError", "compile_glob"]

MAX_PATTERN_CHARS = 1_000
"""Longest pattern accepted: its automaton has about one state per character."""
CACHE_STEPS = 8_192
"""Most steps one ``Glob`` remembers; past it, steps are computed each time (still linear)."""

# The tokens a pattern is made of. Single characters are ``_Char``; the three that match a
# variable number of characters (the empty string included) are these constants.
_STAR = "[^/]*"
"""``*``: any characters but ``/``."""
_DIRS = "(.*/)?"
"""``**/``: nothing, or any characters ending with ``/``."""
_ALL = ".*"
"""A trailing ``**``: any characters."""


class GlobError(ValueError):
    """A glob pattern is too long or has an invalid ``[...]`` part; the message says which."""


@dataclass(frozen=True, slots=True)
class _Char:
    """One character of the path: a literal, ``?``, or a ``[...]`` set."""

    ranges: tuple[tuple[str, str], ...] = ()
    """Inclusive character ranges of the set (a literal is one range of one character)."""
    negate: bool = False
    """Whether the character must be outside ``ranges`` (``?`` negates ``/``)."""

    def accepts(self, char: str) -> bool:
        """Whether ``char`` is one this token matches."""
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside is not self.negate

    @property
    def literal(self) -> str | None:
        """The one character this token matches, if it is a literal."""
        if self.negate or len(self.ranges) != 1 or self.ranges[0][0] != self.ranges[0][1]:
            return None
        return self.ranges[0][0]


_Token = _Char | str
_ANY = _Char((("/", "/"),), negate=True)


def compile_glob(pattern: str) -> Glob:
    """The matcher of a glob pattern (see the module's docstring for the syntax).

    Raises:
        GlobError: The pattern is longer than ``MAX_PATTERN_CHARS``, or a ``[...]`` part is
            empty or has a backwards range.
    """
    if len(pattern) > MAX_PATTERN_CHARS:
        raise GlobError(
            f"the pattern is {len(pattern)} characters long; patterns are limited to "
            f"{MAX_PATTERN_CHARS} characters"
        )
    return Glob(_simplify(_tokens(pattern)))


def _tokens(pattern: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append(_DIRS)
            i += 3
            continue
        if pattern.startswith("**", i) and i + 2 == n:
            out.append(_ALL)
            i += 2
            continue
        char = pattern[i]
        i += 1
        if char == "*":
            out.append(_STAR)
        elif char == "?":
            out.append(_ANY)
        elif char == "[" and (end := pattern.find("]", i + 1)) != -1:
            # The first character of the set is never its end: '[]]' is the set of ']'.
            out.append(_char_set(pattern[i:end], pattern))
            i = end + 1
        else:
            out.append(_Char(((char, char),)))
    return out


def _char_set(body: str, pattern: str) -> _Char:
    """The token of ``[body]``: members and ``a-z`` ranges; a leading ``!`` negates."""
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    if not body:
        raise GlobError(f"{pattern!r} has an empty set '[!]'")
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(body):
        low = body[k]
        if k + 2 < len(body) and body[k + 1] == "-":
            high = body[k + 2]
            if high < low:
                raise GlobError(f"{pattern!r} has a backwards range '{low}-{high}'")
            ranges.append((low, high))
            k += 3
        else:
            ranges.append((low, low))
            k += 1
    return _Char(tuple(ranges), negate)


def _simplify(tokens: list[_Token]) -> list[_Token]:
    """Merge each run of variable-length tokens into at most two equivalent ones.

    ``*`` then ``*`` is ``*``, ``**/`` then ``**/`` is ``**/``, and ``**/`` followed (at
    any distance in the run) by ``*`` matches every string, like a trailing ``**``: any
    string is a prefix ending in its last ``/`` followed by a part without ``/``. So a run
    is ``*``, ``**/``, ``* **/`` or everything, and no step ever follows more than three
    empty transitions.
    """
    out: list[_Token] = []
    run: list[str] = []
    for token in [*tokens, _Char()]:  # the sentinel flushes the last run
        if isinstance(token, str):
            run.append(token)
            continue
        out.extend(_merge(run))
        run = []
        out.append(token)
    return out[:-1]


def _merge(run: list[str]) -> list[str]:
    if not run:
        return []
    if _ALL in run:
        return [_ALL]
    kinds = [token for k, token in enumerate(run) if k == 0 or run[k - 1] != token]
    if _DIRS in kinds and _STAR in kinds[kinds.index(_DIRS) :]:
        return [_ALL]
    return kinds  # [*], [**/], or [*, **/]


class Glob:
    """A compiled glob pattern; ``match`` costs one step per character of the path.

    State ``0`` is the start; every token adds a state (``**/`` adds two: inside the
    directories, and after their last ``/``). A set bit of the state mask means the path
    read so far can end at that state.
    """

    def __init__(self, tokens: list[_Token]) -> None:
        self._literals: dict[str, int] = {}
        self._sets: list[tuple[int, _Char]] = []
        self._after_slash = 0  # "after **/": entered by a '/' from "inside **/"
        self._loops = 0  # states staying live on any character but '/'
        self._loops_slash = 0  # states staying live on '/' too
        self._skip_one = 0  # states live whenever the previous one is (empty match)
        self._skip_two = 0  # "after **/" is live whenever the state before "**/" is
        self._everything = tokens == [_ALL]
        # '**/*.py' is '.*' then literals: a suffix test says it all.
        rest = tokens[1:]
        self._suffix_only = tokens[:1] == [_ALL] and len(_literal_run(rest)) == len(rest)
        bit = 0
        for token in tokens:
            bit += 1
            mask = 1 << bit
            if token == _STAR:
                self._loops |= mask
                self._skip_one |= mask
            elif token == _ALL:
                self._loops |= mask
                self._loops_slash |= mask
                self._skip_one |= mask
            elif token == _DIRS:
                self._loops |= mask
                self._loops_slash |= mask
                self._skip_one |= mask
                bit += 1
                self._after_slash |= 1 << bit
                self._skip_two |= 1 << bit
            elif isinstance(token, _Char) and (char := token.literal) is not None:
                self._literals[char] = self._literals.get(char, 0) | mask
            elif isinstance(token, _Char):
                self._sets.append((mask, token))
        self._accept = 1 << bit
        self._prefix = _literal_run(tokens)
        self._suffix = _literal_run(tokens[::-1])[::-1]
        self._start = self._close(1)
        self._entering: dict[str, int] = {}
        self._steps: dict[tuple[int, str], int] = {}

    def match(self, path: str) -> bool:
        """Whether the whole of ``path`` matches the pattern."""
        if self._everything:
            return True
        if not (path.startswith(self._prefix) and path.endswith(self._suffix)):
            return False
        if self._suffix_only:
            return True
        return bool(self._run(self._start, path) & self._accept)

    def may_match_below(self, directory: str) -> bool:
        """Whether some path under ``directory`` (a ``/``-separated relative path) can match.

        A walk uses it to leave out the directories the pattern cannot reach.
        """
        return bool(self._run(self._start, directory + "/"))

    def _run(self, state: int, text: str) -> int:
        steps = self._steps
        for char in text:
            key = (state, char)
            following = steps.get(key)
            if following is None:
                following = self._step(state, char)
                if len(steps) < CACHE_STEPS:
                    steps[key] = following
            state = following
            if not state:
                break
        return state

    def _step(self, state: int, char: str) -> int:
        """The states live after reading ``char`` from ``state``."""
        loops = self._loops_slash if char == "/" else self._loops
        return self._close(((state << 1) & self._enter(char)) | (state & loops))

    def _enter(self, char: str) -> int:
        """The states a character moves into from the state just before them."""
        mask = self._entering.get(char)
        if mask is None:
            mask = self._literals.get(char, 0)
            if char == "/":
                mask |= self._after_slash
            for bit, token in self._sets:
                if token.accepts(char):
                    mask |= bit
            if len(self._entering) < CACHE_STEPS:
                self._entering[char] = mask
        return mask

    def _close(self, state: int) -> int:
        """Add the states reachable without reading a character (at most three hops)."""
        while True:
            wider = state | ((state << 1) & self._skip_one) | ((state << 2) & self._skip_two)
            if wider == state:
                return state
            state = wider


def _literal_run(tokens: list[_Token]) -> str:
    """The literal characters at the start of ``tokens``, which every match starts with."""
    chars: list[str] = []
    for token in tokens:
        if not isinstance(token, _Char) or (char := token.literal) is None:
            break
        chars.append(char)
    return "".join(chars)
