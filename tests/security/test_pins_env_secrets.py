"""Which values read from the environment count as secrets (issue 36, turn-3 survivors).

Every value a configuration reads with ``{ env = "NAME" }`` is a secret to scrub once it has
``MIN_ENV_LEN`` (4) characters, and at any length under a secret-looking key (``token``); a
shorter one under a plain key (``region = "eu"``) is not, so it may key manifests and show in
messages. The boundary and both halves are pinned here, and through a host's own scrubbing.
"""

from __future__ import annotations

import pytest

from toolpacks.core._secrets import MIN_ENV_LEN, secret_values


def test_the_length_boundary_is_four() -> None:
    assert MIN_ENV_LEN == 4


@pytest.mark.parametrize(
    ("value", "secret"),
    [("eu", False), ("abc", False), ("abcd", True), ("abcdefgh", True)],
)
def test_a_plain_key_read_from_the_environment_is_a_secret_from_four_characters(
    value: str, secret: bool
) -> None:
    found = secret_values({"region": {"env": "R"}}, {"R": value})
    assert (value in found) is secret


@pytest.mark.parametrize("value", ["a", "ab", "abc", "abcd"])
def test_a_secret_looking_key_read_from_the_environment_is_a_secret_at_any_length(
    value: str,
) -> None:
    assert value in secret_values({"api_token": {"env": "T"}}, {"T": value})
    assert value in secret_values({"nested": {"password": {"env": "T"}}}, {"T": value})


def test_the_same_short_value_written_in_the_file_is_no_secret() -> None:
    """Only values read from the environment count by length; a literal "eu" is plain text."""
    assert secret_values({"region": "abcdefgh"}) == []
    assert secret_values({"region": {"env": "R"}}, {}) == []


def test_a_missing_variable_falls_back_to_its_default_judged_by_the_key() -> None:
    assert secret_values({"token": {"env": "T", "default": "xy"}}, {}) == ["xy"]
    assert secret_values({"region": {"env": "R", "default": "abcdefgh"}}, {}) == []
