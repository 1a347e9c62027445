"""The package as users get it: strict typing, and an offline install with pip."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .conftest import User

SDK = Path(__file__).resolve().parents[1]
PYTHON = "/usr/bin/python3"
"""Debian's interpreter, the one that has httpx (PATH may lead to another)."""


def test_mypy_strict_passes_over_the_package_and_its_tests() -> None:
    checked = subprocess.run(
        ["/usr/bin/mypy", "--strict", "--config-file", str(SDK / "pyproject.toml"), "src", "tests"],
        cwd=SDK,
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_pip_installs_the_directory_and_the_sdist_offline(tmp_path: Path) -> None:
    environment = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(environment)], check=True)
    pip = [str(environment / "bin" / "python"), "-m", "pip", "install", "--no-index", "--quiet"]
    subprocess.run([*pip, str(SDK)], check=True)
    site = environment / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    assert _installed(environment) == f"{site}/paddock/__init__.py 0.1.0 0.1.0 ['httpx>=0.23'] True"

    built = subprocess.run(
        [PYTHON, "-c", f"import paddock_build; print(paddock_build.build_sdist({str(tmp_path)!r}))"],
        cwd=SDK,
        env={"PYTHONPATH": str(SDK / "_build")},
        capture_output=True,
        text=True,
        check=True,
    )
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(tmp_path / built.stdout.strip())], check=True)
    assert _installed(environment).endswith("0.1.0 0.1.0 ['httpx>=0.23'] True")


def test_the_readme_python_example_runs_from_an_installed_package(tmp_path: Path, user: User) -> None:
    readme = (SDK.parent / "README.md").read_text()
    example = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert example is not None, "README.md has no ```python example"
    environment = tmp_path / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", str(environment)], check=True)
    python = str(environment / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--no-index", "--quiet", str(SDK)], check=True)
    ran = subprocess.run(
        [python, "-c", example.group(1)],
        cwd=tmp_path,
        env={**os.environ, "PADDOCK_API_KEY": user.api_key, "PADDOCK_BASE_URL": user.base_url},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert lines[0] == "42"
    assert lines[-1].startswith("CommandExit") and "exit_code=0" in lines[-1], lines[-1]


def _installed(environment: Path) -> str:
    """Where the venv imports paddock from, its two versions, its requirements, and py.typed."""
    probe = (
        "import importlib.metadata as m, pathlib, paddock; "
        "print(paddock.__file__, paddock.__version__, m.version('paddock'), m.requires('paddock'), "
        "(pathlib.Path(paddock.__file__).parent / 'py.typed').exists())"
    )
    python = str(environment / "bin" / "python")
    answer = subprocess.run([python, "-c", probe], cwd="/", capture_output=True, text=True, check=True)
    return answer.stdout.strip()
