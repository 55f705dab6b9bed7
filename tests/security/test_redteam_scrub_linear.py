"""Scrubbing a long text takes time in proportion to it (found with issue 37's isolated secrets).

Masking passwords in URLs (``scheme://user:password@host``) tried every letter of a long run
of scheme characters as the start of a scheme: a setting of 96 KiB of letters held ``Host()``
for minutes in ``secret_values``, and every log record goes through ``redact_text`` (1 MiB of
letters: half an hour). Each text below is 1 MiB; a quadratic scan does not finish within the
test's timeout, a linear one in well under a second. What is masked is unchanged.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolpacks.core._secrets import REDACTED, redact_text

BOUND = 60.0
"""Seconds one child may take: a linear scan takes well under one, a quadratic one hours."""

MIB = 1024 * 1024
LONG = {
    "letters": "'a' * MIB",
    "scheme characters": "'a1+.-' * (MIB // 5)",
    "a scheme and no password": "'x' * MIB + '://' + 'u' * 64",
    "userinfo without an at sign": "'http://' + 'u:' * (MIB // 2)",
    "many URLs": "'a://u:p@h ' * (MIB // 10)",
}
"""Each long text, as Python source (built in the child process below)."""

CHILD = """
import logging, sys
from toolpacks.core import _logscrub
from toolpacks.core._secrets import redact_text, secret_values

MIB = 1024 * 1024
text = eval(sys.argv[1])
if "@" in text:  # many URLs: each password masked
    assert redact_text(text) == text.replace(":p@", ":****@")
    text = text.replace("@", " ")
assert redact_text(text) == text
assert secret_values({"padding": text}) == []


class Owner:
    pass


owner = Owner()
_logscrub.remember(owner, ["hunter2-secret"])
seen = []
handler = logging.Handler()
handler.emit = lambda record: seen.append(record.getMessage())
logging.getLogger("toolpacks").addHandler(handler)
logging.getLogger("toolpacks").warning("%s", text + " postgres://app:pw-9911@db/m hunter2-secret")
assert "pw-9911" not in seen[0] and "hunter2-secret" not in seen[0], "not scrubbed"
assert seen[0].startswith(text[:100]) and "postgres://app:" in seen[0]
print("ok")
"""
"""Scrubs one long text every way (``redact_text``, ``secret_values``, a log record)."""


@pytest.mark.parametrize("kind", sorted(LONG))
def test_a_long_text_is_scrubbed_in_time(kind: str) -> None:
    """1 MiB with nothing to mask comes back unchanged, on every road; a hang fails.

    In a child process: a regular expression holds the GIL, so only a process can be
    stopped when it never ends.
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, LONG[kind]],
            capture_output=True,
            text=True,
            timeout=BOUND,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"scrubbing 1 MiB of {kind} did not end within {BOUND} s (quadratic)")
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("see https://u:pass-77@h/x now", f"see https://u:{REDACTED}@h/x now"),
        ("9http://u:p@h", f"9http://u:{REDACTED}@h"),
        ("x.y-git+ssh://me:pw@h", f"x.y-git+ssh://me:{REDACTED}@h"),
        ("a://u:p:q@h b://v:w@h", f"a://u:{REDACTED}@h b://v:{REDACTED}@h"),
        ("1+2://u:p@h", "1+2://u:p@h"),  # no letter starts a scheme: not a URL
        ("http://host/path:x@y", "http://host/path:x@y"),  # the colon is past the host
        ("http://u:p @h", "http://u:p @h"),
    ],
)
def test_url_passwords_are_masked_as_before(text: str, masked: str) -> None:
    """The linear scan masks exactly what the regular expression masked."""
    assert redact_text(text) == masked
