"""The package's PEP 517 build backend: a wheel and an sdist from the standard library alone, so
``pip install ./sdk-python`` works offline under build isolation (no setuptools to fetch).

It reads ``[project]`` from pyproject.toml and packages ``src/paddock``. Hooks run with the
working directory at the source tree's root, as PEP 517 specifies.
"""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
import tomllib
import zipfile
from pathlib import Path
from typing import Any

TAG = "py3-none-any"
PACKAGE = Path("src") / "paddock"
SDIST_FILES = ["pyproject.toml", "README.md", "_build/paddock_build.py"]
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
"""Zip entries carry this time so a build of the same sources gives the same bytes."""


def _project() -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    return project


def _stem(project: dict[str, Any]) -> str:
    return f"{project['name'].replace('-', '_')}-{project['version']}"


def _metadata(project: dict[str, Any]) -> str:
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {project['name']}",
        f"Version: {project['version']}",
        f"Summary: {project['description']}",
        f"Requires-Python: {project['requires-python']}",
        *(f"Requires-Dist: {dependency}" for dependency in project.get("dependencies", [])),
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(lines) + "\n\n" + Path(project["readme"]).read_text()


def _wheel_file() -> str:
    return f"Wheel-Version: 1.0\nGenerator: paddock_build\nRoot-Is-Purelib: true\nTag: {TAG}\n"


def _package_files() -> list[Path]:
    return sorted(
        path
        for path in PACKAGE.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    )


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, contents: dict[str, bytes]) -> str:
    """Writes the wheel: ``contents`` (archive name → bytes) plus the dist-info files and RECORD."""
    project = _project()
    stem = _stem(project)
    dist_info = f"{stem}.dist-info"
    contents = {
        **contents,
        f"{dist_info}/METADATA": _metadata(project).encode(),
        f"{dist_info}/WHEEL": _wheel_file().encode(),
    }
    record = [_record_line(name, data) for name, data in contents.items()] + [f"{dist_info}/RECORD,,"]
    contents[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{stem}-{TAG}.whl"
    with zipfile.ZipFile(Path(directory) / filename, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in contents.items():
            entry = zipfile.ZipInfo(name, FIXED_TIME)
            entry.external_attr = 0o644 << 16
            wheel.writestr(entry, data, zipfile.ZIP_DEFLATED)
    return filename


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return []


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: dict[str, Any] | None = None
) -> str:
    project = _project()
    dist_info = Path(metadata_directory) / f"{_stem(project)}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata(project))
    (dist_info / "WHEEL").write_text(_wheel_file())
    return dist_info.name


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    return _write_wheel(
        wheel_directory, {path.relative_to("src").as_posix(): path.read_bytes() for path in _package_files()}
    )


def build_editable(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    """``pip install -e``: a wheel whose .pth file puts this tree's ``src`` on the path."""
    return _write_wheel(wheel_directory, {"paddock.pth": f"{Path('src').resolve()}\n".encode()})


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    project = _project()
    stem = _stem(project)
    filename = f"{stem}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        members = {name: Path(name).read_bytes() for name in SDIST_FILES}
        members.update({path.as_posix(): path.read_bytes() for path in _package_files()})
        members["PKG-INFO"] = _metadata(project).encode()
        for name, data in members.items():
            entry = tarfile.TarInfo(f"{stem}/{name}")
            entry.size = len(data)
            entry.mode = 0o644
            archive.addfile(entry, io.BytesIO(data))
    return filename
