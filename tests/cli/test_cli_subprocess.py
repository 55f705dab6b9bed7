"""The installed command line in a fresh interpreter: cheap commands stay cheap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys, runpy
sys.argv = ["toolpacks", *sys.argv[1:]]
try:
    runpy.run_module("toolpacks", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    status = exc.code
print("EXIT", status)
print("PYDANTIC", "pydantic" in sys.modules)
"""


def test_version_and_list_do_not_import_pydantic(tmp_path: Path) -> None:
    """``python -m toolpacks --version`` and ``list`` run without importing pydantic."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLPACKS_")}
    env["TOOLPACKS_CACHE_DIR"] = str(tmp_path / "cache")
    for argv, expected in ((["--version"], "toolpacks "), (["list"], "")):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=60,
            check=False,
        )
        assert "EXIT 0" in done.stdout, done.stderr
        assert expected in done.stdout
        assert "PYDANTIC False" in done.stdout, f"{argv}: pydantic was imported"
