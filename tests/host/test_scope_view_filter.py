"""A principal's view keeps exactly the tools its scopes reach, in order (issue 31).

``for_principal`` numbers each tool's scope set once per toolset and picks a view's tools by
those numbers; whatever the grouping, a view must hold exactly what a plain filter keeps —
for many scope sets, agent scopes, tools needing several scopes and tools needing none.
"""

from __future__ import annotations

import random

from toolpacks import Principal, Toolset
from toolpacks.core._tool import Tool


def _fn(x: int) -> int:
    """Return x."""
    return x


def test_every_view_keeps_what_a_plain_filter_keeps() -> None:
    rng = random.Random(31)
    scopes = [f"s{i}" for i in range(6)]
    tools = [
        Tool(_fn, name=f"t{i:03d}", scopes=rng.sample(scopes, rng.randint(0, 3)))
        for i in range(300)
    ]
    toolset = Toolset(tools, agent="a")
    needs = {t.name: frozenset(t.scopes) for t in tools}
    for k in range(40):
        granted = frozenset(rng.sample(scopes, rng.randint(0, 6)))
        view = toolset.for_principal(Principal(f"u{k}", scopes=granted))
        expected = [n for n in sorted(needs) if needs[n] <= granted]
        assert view.names() == expected, granted
        for name in expected[:5]:
            assert view.get(name) is toolset.get(name)
    assert toolset.for_principal(None).names() == sorted(n for n in needs if not needs[n])
