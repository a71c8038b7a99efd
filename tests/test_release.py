"""The release files: package metadata, the PyPI description, the sdist's contents list, the
release workflow, server.json (validated against the MCP Registry's schema, vendored in
tests/support/server.schema.json) and the Claude Desktop extension (mcpb/). No network, except the
``mcpb validate`` test, which fetches @anthropic-ai/mcpb from npm when npx is present."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from lancelot_cli._version import __version__
from tests.conftest import REPO
from tests.support.expected import TOOLS

NAME = "io.github.lancelot-cli/lancelot"
SCHEMA = REPO / "tests" / "support" / "server.schema.json"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def project() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


@pytest.fixture(scope="module")
def server() -> dict[str, Any]:
    return load_json(REPO / "server.json")


# -- the package ---------------------------------------------------------------------------------


def test_classifiers_name_the_pythons_the_os_the_status_and_the_audience(project: dict[str, Any]) -> None:
    classifiers = set(project["classifiers"])
    for minor in (11, 12, 13):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    assert "Programming Language :: Python :: 3.10" not in classifiers  # issue 46 #1: 3.10 is not supported
    assert any(c.startswith("Operating System ::") for c in classifiers)
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert any(c.startswith("Intended Audience ::") for c in classifiers)
    assert project["requires-python"] == ">=3.11"
    assert {"Homepage", "Repository", "Issues", "Changelog"} <= set(project["urls"])


def _requirements(project: dict[str, Any]) -> list[str]:
    build = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    return [*build, *project["dependencies"], *extras]


def test_every_requirement_is_bounded_above(project: dict[str, Any]) -> None:
    """Issue 45 #1: `lancedb>=0.40` let 0.41 change BM25 scores and the default tokenizer under users.
    Each requirement stops below a release the suite has not run on."""
    unbounded = [r for r in _requirements(project) if "<" not in r and "==" not in r]
    assert unbounded == []


def test_the_libraries_the_golden_replies_pin_are_held_to_one_minor_release(project: dict[str, Any]) -> None:
    """lancedb decides every score in tests/golden; mcp and typer the shape of every reply."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    by_name = {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower(): r for r in project["dependencies"]}
    for name in ("lancedb", "mcp", "typer"):
        spec = SpecifierSet(by_name[name][len(name) :])
        (upper,) = [Version(s.version) for s in spec if s.operator == "<"]
        (lower,) = [Version(s.version) for s in spec if s.operator == ">="]
        assert (upper.major, upper.minor) == (lower.major, lower.minor + 1), by_name[name]


def test_the_installed_versions_are_within_the_bounds(project: dict[str, Any]) -> None:
    """The suite runs on what the bounds allow (a stale environment would test something else)."""
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    outside = []
    for line in project["dependencies"]:
        requirement = Requirement(line)
        try:
            installed = version(requirement.name)
        except PackageNotFoundError:
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            outside.append(f"{requirement.name} {installed} (wants {requirement.specifier})")
    assert outside == []


def _interpreter(minor: int) -> str | None:
    """A Python 3.<minor> on this machine (PATH or pyenv's folder), if there is one."""
    for found in (
        shutil.which(f"python3.{minor}"),
        *sorted(Path.home().glob(f".pyenv/versions/3.{minor}.*/bin/python3")),
    ):
        if found and subprocess.run([str(found), "-c", "pass"], capture_output=True, check=False).returncode == 0:
            return str(found)
    return None


@pytest.mark.slow
def test_python_3_10_is_refused_in_one_line() -> None:
    """Issue 46 #1: on 3.10 (which requires-python allowed) every `index` failed on a 3.11 pattern and
    the background server could import the caller's folder. pip now refuses the install, and a
    checkout run there says what to do in one line."""
    python = _interpreter(10)
    if python is None:
        pytest.skip("no Python 3.10 on this machine")
    pip = subprocess.run(
        [python, "-m", "pip", "install", "--dry-run", "--no-deps", "-q", str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert pip.returncode != 0 and "requires a different Python" in pip.stderr, pip.stderr[-1000:]
    run = subprocess.run(
        [python, "-m", "lancelot_cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=REPO,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.strip().startswith("lancelot needs Python 3.11 or newer; this is 3.10")


def test_both_script_names_run_the_cli(project: dict[str, Any]) -> None:
    """`uvx lancelot-cli serve` needs a script named like the distribution."""
    assert project["scripts"] == {"lancelot": "lancelot_cli.cli.app:main", "lancelot-cli": "lancelot_cli.cli.app:main"}


def test_mangum_is_the_lambda_extra_only(project: dict[str, Any]) -> None:
    def names(requirements: list[str]) -> set[str]:
        return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}

    assert "mangum" not in names(project["dependencies"])
    assert "mangum" in names(project["optional-dependencies"]["lambda"])
    assert "mangum" in names(project["optional-dependencies"]["test"])  # tests/test_lambda.py


def test_the_pypi_description_starts_with_the_install_and_carries_the_mcp_name(project: dict[str, Any]) -> None:
    assert project["readme"] == "docs/pypi.md"
    text = (REPO / "docs" / "pypi.md").read_text(encoding="utf-8")
    first_code = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert first_code.splitlines()[0].startswith("pipx install lancelot-cli")
    assert "uv tool install lancelot-cli" in first_code
    assert "https://github.com/lancelot-cli/lancelot" in text
    assert re.search(rf"^mcp-name: {re.escape(NAME)}$", text, re.M)
    assert len(text) < 4000  # a page, not the README


def test_the_sdist_carries_the_examples_and_the_tests() -> None:
    manifest = (REPO / "MANIFEST.in").read_text(encoding="utf-8").split()
    for folder in ("examples", "tests", "tools", "docs", "man", "completions", "mcpb", ".github"):
        assert folder in manifest
    for needed in ("tests/conftest.py", "tests/support/__init__.py", "tests/golden", "examples/sample-docs"):
        assert (REPO / needed).exists()


@pytest.mark.slow
def test_the_wheel_ships_the_man_pages_and_completions_but_not_the_tools_that_write_them(tmp_path: Path) -> None:
    """Issue 40: what generates the docs, man pages and completions (tools/) is the project's, not the
    user's; the files it writes still land in share/."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(REPO), "-w", str(tmp_path), "--no-deps", "-q"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = tmp_path.glob("lancelot_cli-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("tools/")]
    moved = ("generate", "docgen", "docsample", "docrun", "manpage", "readable")
    assert not [n for n in names if n.startswith("lancelot_cli/cli/") and Path(n).stem in moved]
    assert "lancelot_cli/cli/readable_list.py" in names and "lancelot_cli/cli/reference.py" in names  # runtime
    data = {n.split(".data/data/", 1)[1] for n in names if ".data/data/" in n}
    assert {f"share/man/man1/{p.name}" for p in (REPO / "man").glob("*.1")} <= data
    assert {
        "share/bash-completion/completions/lancelot.bash",
        "share/zsh/site-functions/_lancelot",
        "share/fish/vendor_completions.d/lancelot.fish",
    } <= data


def test_the_dockerfile_installs_the_lambda_extra() -> None:
    dockerfile = (REPO / "Dockerfile").read_text(encoding="utf-8")
    assert '"/tmp/src[lambda]"' in dockerfile
    assert "docs/pypi.md" in dockerfile  # the readme the build reads


def test_the_changelog_names_this_version() -> None:
    assert f"## [{__version__}]" in (REPO / "CHANGELOG.md").read_text(encoding="utf-8")


# -- the release workflow ------------------------------------------------------------------------


def test_the_release_workflow_parses_and_does_the_steps() -> None:
    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8"))
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as True
    assert trigger["push"]["tags"] == ["v*"]
    jobs = workflow["jobs"]
    assert jobs["test"]["strategy"]["matrix"]["python"] == ["3.11", "3.12", "3.13"]
    assert jobs["build"]["needs"] == "test"
    steps = json.dumps(jobs["build"]["steps"])
    assert "python -m build" in steps and "twine check" in steps and "mcpb validate" in steps
    pypi = jobs["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}  # trusted publishing: no token secret
    assert any(str(step.get("uses", "")).startswith("pypa/gh-action-pypi-publish") for step in pypi["steps"])
    registry = jobs["mcp-registry"]
    assert registry["needs"] == "pypi"  # the registry checks the package on PyPI
    assert registry["permissions"] == {"id-token": "write"}
    runs = " ".join(step.get("run", "") for step in registry["steps"])
    assert "mcp-publisher login github-oidc" in runs and "mcp-publisher publish" in runs
    assert "secrets." not in (REPO / ".github" / "workflows" / "release.yml").read_text(encoding="utf-8")


# -- server.json (MCP Registry) ------------------------------------------------------------------


def _validator() -> Any:
    jsonschema = pytest.importorskip("jsonschema")  # a dependency of mcp
    schema = load_json(SCHEMA)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_server_json_validates_against_the_registry_schema(server: dict[str, Any]) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _validator().iter_errors(server)]
    assert errors == []


@pytest.mark.parametrize(
    "change",
    [
        {"name": "no-slash"},
        {"description": "x" * 101},
        {"version": None},
        {"packages": [{"registryType": "pypi", "identifier": "lancelot-cli"}]},  # no transport
    ],
)
def test_the_schema_rejects_a_broken_entry(server: dict[str, Any], change: dict[str, Any]) -> None:
    broken = {**server, **change}
    broken = {k: v for k, v in broken.items() if v is not None}
    assert list(_validator().iter_errors(broken))


def test_server_json_describes_the_pypi_package(server: dict[str, Any]) -> None:
    assert server["name"] == NAME
    assert server["$schema"].startswith("https://static.modelcontextprotocol.io/schemas/")
    assert server["version"] == __version__
    (package,) = server["packages"]
    assert package["registryType"] == "pypi"
    assert package["identifier"] == "lancelot-cli"
    assert package["version"] == __version__
    assert package["runtimeHint"] == "uvx"
    assert package["transport"] == {"type": "stdio"}
    assert [a.get("value") for a in package["packageArguments"]] == ["serve"]
    env = {v["name"]: v for v in package["environmentVariables"]}
    assert env["LANCEDB_PATH"]["isRequired"] is True and env["LANCEDB_PATH"]["format"] == "filepath"
    assert env["OPENAI_API_KEY"]["isSecret"] is True and not env["OPENAI_API_KEY"].get("isRequired")


def test_the_variables_are_ones_lancelot_reads(server: dict[str, Any]) -> None:
    from lancelot_cli.settings import ENVIRONMENT

    for variable in server["packages"][0]["environmentVariables"]:
        assert variable["name"] in ENVIRONMENT


# -- the Claude Desktop extension (mcpb/) --------------------------------------------------------


def test_the_extension_carries_the_package_version() -> None:
    manifest = load_json(REPO / "mcpb" / "manifest.json")
    assert manifest["version"] == __version__
    bundle = tomllib.loads((REPO / "mcpb" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert bundle["dependencies"] == [f"lancelot-cli=={__version__}"]


def test_the_extension_asks_for_a_folder_and_a_masked_key() -> None:
    manifest = load_json(REPO / "mcpb" / "manifest.json")
    assert manifest["server"]["type"] == "uv"
    assert (REPO / "mcpb" / manifest["server"]["entry_point"]).is_file()
    config = manifest["user_config"]
    assert config["database"]["type"] == "directory" and config["database"]["required"] is True
    assert config["openai_api_key"]["sensitive"] is True and config["openai_api_key"]["required"] is False
    env = manifest["server"]["mcp_config"]["env"]
    assert env == {"LANCEDB_PATH": "${user_config.database}", "OPENAI_API_KEY": "${user_config.openai_api_key}"}
    assert {tool["name"] for tool in manifest["tools"]} == TOOLS


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npx") is None, reason="npx is not installed: @anthropic-ai/mcpb cannot run")
def test_mcpb_validates_and_packs_the_extension_and_the_bundle_starts_the_server(
    tmp_path: Path, sample_db: Path
) -> None:
    import zipfile

    def mcpb(*args: str) -> str:
        done = subprocess.run(
            ["npx", "-y", "@anthropic-ai/mcpb", *args], cwd=REPO, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert "validation passes" in mcpb("validate", "mcpb/manifest.json")
    bundle = tmp_path / "lancelot.mcpb"
    mcpb("pack", "mcpb", str(bundle))
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(bundle) as archive:
        assert {"manifest.json", "pyproject.toml", "server/main.py"} <= set(archive.namelist())
        archive.extractall(unpacked)
    manifest = load_json(unpacked / "manifest.json")
    assert manifest["server"]["entry_point"] == "server/main.py"
    # The host runs the entry point with the dependencies installed (here: this install), and the
    # user's answers as the environment the manifest maps them to.
    from tests.support.stdio import list_tools_over_stdio

    env = {"LANCEDB_PATH": str(sample_db), "LANCELOT_CONFIG_DIR": str(tmp_path / "config")}
    tools = list_tools_over_stdio(sys.executable, [str(unpacked / manifest["server"]["entry_point"])], env)
    assert set(tools) == TOOLS
