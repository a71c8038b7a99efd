"""lancelot_cli.install_hint: the install command printed in hints works for the copy that runs.

Fake ``lancelot-cli`` dist-info folders in tmp, read through ``importlib.metadata`` exactly as an
installed one is: handed over as a ``Distribution``, or found by name on ``sys.path`` in a
subprocess (where the module also runs from a site-packages-like folder, as after an index install).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from lancelot_cli import install_hint
from lancelot_cli.install_hint import install_command
from tests.conftest import REPO


def fake_dist(site: Path, direct_url: dict[str, object] | None) -> metadata.Distribution:
    info = site / "lancelot_cli-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: lancelot-cli\nVersion: 0.1.0\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    return metadata.PathDistribution(info)


def test_an_index_install_gets_the_package_name(tmp_path: Path) -> None:
    dist = fake_dist(tmp_path, None)
    assert install_command("local", dist) == 'pip install "lancelot-cli[local]"'
    assert install_command("lambda", dist) == 'pip install "lancelot-cli[lambda]"'
    assert install_command(None, dist) == 'pip install "lancelot-cli"'


def test_a_clone_gets_its_folder(tmp_path: Path) -> None:
    clone = tmp_path / "my clone"  # a space: the command must still be one shell word
    clone.mkdir()
    plain = fake_dist(tmp_path / "a", {"url": clone.as_uri(), "dir_info": {}})
    editable = fake_dist(tmp_path / "b", {"url": clone.as_uri(), "dir_info": {"editable": True}})
    assert shlex.split(install_command("local", plain)) == ["pip", "install", f"{clone}[local]"]
    assert install_command("local", plain) == f"pip install '{clone}[local]'"
    assert shlex.split(install_command("local", editable)) == ["pip", "install", "-e", f"{clone}[local]"]


def test_a_wheel_file_is_named_while_it_exists(tmp_path: Path) -> None:
    wheel = tmp_path / "lancelot_cli-0.1.0-py3-none-any.whl"
    dist = fake_dist(tmp_path / "site", {"url": wheel.as_uri(), "archive_info": {"hashes": {}}})
    assert install_command("local", dist) == 'pip install "lancelot-cli[local]"'  # gone: the name
    wheel.write_bytes(b"")
    assert shlex.split(install_command("local", dist)) == ["pip", "install", f"{wheel}[local]"]


def test_a_vcs_install_gets_its_url(tmp_path: Path) -> None:
    dist = fake_dist(
        tmp_path, {"url": "https://github.com/lancelot-cli/lancelot", "vcs_info": {"vcs": "git", "commit_id": "abc123"}}
    )
    assert shlex.split(install_command("local", dist)) == [
        "pip",
        "install",
        "lancelot-cli[local] @ git+https://github.com/lancelot-cli/lancelot@abc123",
    ]


@pytest.mark.parametrize("text", ["", "not json", "[1, 2]"])
def test_an_unreadable_record_is_an_index_install(tmp_path: Path, text: str) -> None:
    dist = fake_dist(tmp_path, None)
    (Path(str(dist._path)) / "direct_url.json").write_text(text)  # type: ignore[attr-defined]
    assert install_command("local", dist) == 'pip install "lancelot-cli[local]"'


def _run_hint(pythonpath: Path, cwd: Path) -> tuple[str, str]:
    code = "import lancelot_cli.install_hint as h; print(h.__file__); print(h.install_command('local'))"
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=60, check=True
    ).stdout.splitlines()
    return out[0], out[1]


@pytest.mark.slow
def test_found_by_name_an_index_install(tmp_path: Path) -> None:
    """The module in a site-packages-like folder next to a dist-info with no direct_url.json."""
    site = tmp_path / "site"
    (site / "lancelot_cli").mkdir(parents=True)
    (site / "lancelot_cli" / "__init__.py").write_text("")
    shutil.copy(install_hint.__file__, site / "lancelot_cli" / "install_hint.py")
    fake_dist(site, None)
    where, hint = _run_hint(site, tmp_path)
    assert Path(where).parent == site / "lancelot_cli"
    assert hint == 'pip install "lancelot-cli[local]"'


@pytest.mark.slow
def test_found_by_name_an_editable_clone(tmp_path: Path) -> None:
    """Run from this checkout, with a dist-info that records it as an editable install."""
    site = tmp_path / "site"
    fake_dist(site, {"url": REPO.as_uri(), "dir_info": {"editable": True}})
    os.symlink(REPO / "lancelot_cli", site / "lancelot_cli")
    _, hint = _run_hint(site, tmp_path)
    assert shlex.split(hint) == ["pip", "install", "-e", f"{REPO}[local]"]


@pytest.mark.slow
def test_a_checkout_that_is_not_the_installed_copy_names_itself(tmp_path: Path) -> None:
    """PYTHONPATH=/some/clone over an install from elsewhere: the running clone is named."""
    site = tmp_path / "site"
    fake_dist(site, {"url": (tmp_path / "other-clone").as_uri(), "dir_info": {"editable": True}})
    os.symlink(REPO / "lancelot_cli", site / "lancelot_cli")
    _, hint = _run_hint(site, tmp_path)
    assert shlex.split(hint) == ["pip", "install", f"{REPO}[local]"]
