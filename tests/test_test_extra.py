"""The ``test`` extra is what the suite needs: a missing part fails the run, never skips it.

Tests import the SDKs the extra installs (mcp, openai, anthropic, google-genai, botocore,
the agent frameworks) directly, without ``importorskip``; this test names what is missing
at once, instead of a collection error per file.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _test_extra() -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = []
    for requirement in project["optional-dependencies"]["test"]:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        assert match is not None, requirement
        names.append(match.group(0))
    return names


def test_every_distribution_of_the_test_extra_is_installed() -> None:
    """``pip install -e ".[dev]"`` installs the extra; a part that is not there is a failure."""
    missing = []
    for name in _test_extra():
        try:
            metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    assert not missing, f"the `test` extra promises {missing}, which are not installed"


def test_no_test_skips_when_a_promised_sdk_is_missing() -> None:
    """No ``importorskip`` or ``is not None`` guard hides an SDK the extra installs."""
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")) + sorted(ROOT.glob("plugins/*/tests/*.py")):
        text = path.read_text(encoding="utf-8")
        if path.name == Path(__file__).name:
            continue
        if "importorskip(" in text or "genai is not None" in text:
            offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, f"skip guards on SDKs the test extra installs: {offenders}"
