"""The lancedb import deferral (lancelot_cli.storage.lancedb_import, issue 13).

These tests fail when an upgrade of lancedb, the namespace client or ``overrides`` needs the
deferral to be checked again, when the deferral stops deferring, when something deferred can no
longer be reached, and when search output differs with and without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from lancelot_cli.storage import lancedb_import
from tests.conftest import subprocess_env

# `python -m lancelot_cli`: an entry point that calls lancelot_cli.startup.start, which sets the deferral up.
MODULE_COMMAND = [sys.executable, "-m", "lancelot_cli"]

PROBE = r"""
import json, sys
def client_models():
    import lance_namespace_urllib3_client.models as models
    return models
from lancelot_cli.startup import start
start()  # what the entry points do first
from lancelot_cli.storage import lancedb_import as fast
import lancedb
loaded = sorted(m for m in sys.modules if m.startswith(("lance_namespace_urllib3_client.api", "urllib3")))
models = sum(m.startswith("lance_namespace_urllib3_client.models.") for m in sys.modules)
report = {"deferred": dict(fast.deferred), "marker": fast.overrides_marker_installed, "api_loaded": loaded,
          "models_loaded": models}

# lance_namespace still offers every model it imported, its aliases, and its interface.
import lance_namespace
report["namespace"] = [lance_namespace.CreateEmptyTableRequest is client_models().CreateTableRequest,
                       lance_namespace.ListTablesRequest(id=["b"]).to_dict(),
                       getattr(annotation := lance_namespace.LanceNamespace.describe_table.__annotations__["request"],
                               "__name__", annotation),
                       "DescribeTableRequest" in dir(lance_namespace)]

# The REST client is still whole: names, submodules and models resolve on first use.
import lance_namespace_urllib3_client as client
from lance_namespace_urllib3_client import TableApi, ApiClient, Configuration
from lance_namespace_urllib3_client.api import NamespaceApi
from lance_namespace_urllib3_client.api.table_api import TableApi as DirectTableApi
report["rest"] = [TableApi is DirectTableApi, client.api.NamespaceApi is NamespaceApi,
                  client.models.ListTablesRequest(id=["a"]).to_dict(), Configuration(host="http://127.0.0.1:9").host,
                  "TableApi" in dir(client), hasattr(client, "no_such_name")]
star = {}
exec("from lance_namespace_urllib3_client.api import *", star)
report["rest"].append(star.get("TagApi") is client.api.tag_api.TagApi)
api = TableApi(ApiClient(Configuration(host="http://127.0.0.1:9")))
report["rest"].append(callable(api.list_tables))

# lancedb's own classes carry the PEP 698 marker; everyone else's overrides are still checked.
report["lancedb_marked"] = lancedb.db.LanceDBConnection.table_names.__override__
import overrides
class Base:
    def f(self, x: int) -> int:
        return x
try:
    class Wrong(Base):
        @overrides.override
        def f(self, y: str) -> int:
            return 0
    report["others_checked"] = False
except TypeError:
    report["others_checked"] = True
print(json.dumps(report))
"""


def probe(**env: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=subprocess_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_installed_versions_are_at_least_the_verified_ones() -> None:
    for dist in lancedb_import.VERIFIED:
        try:
            installed = version(dist)
        except PackageNotFoundError:
            assert dist == "overrides" and sys.version_info >= (3, 12), f"{dist} is not installed"
            continue
        assert lancedb_import.at_least(installed, dist), f"{dist} {installed} is older than the verified one"
    assert lancedb_import.versions_verified()


def test_version_floors_read_plain_numbers_only() -> None:
    assert lancedb_import.at_least("0.40.0", "lancedb") and lancedb_import.at_least("0.41.2", "lancedb")
    assert lancedb_import.at_least("1.0.0", "lancedb")
    for older_or_odd in ("0.39.9", "0.4.0", "0.41.0rc1", "", None, "0.40.0.dev1"):
        assert not lancedb_import.at_least(older_or_odd, "lancedb")


UNVERIFIED = """
import json, sys
from lancelot_cli.storage import lancedb_import
from lancelot_cli.startup import start
lancedb_import.VERIFIED["lancedb"] = (99, 0, 0)  # the installed lancedb now counts as an unverified one
start()
from lancelot_cli.engine import Engine
from lancelot_cli.settings import load
from lancelot_cli.wire import to_json
hits = to_json(Engine(load(flags={"LANCEDB_PATH": sys.argv[1]})).search("refund policy", limit=5))
print(json.dumps({"deferred": lancedb_import.deferred, "api": "lance_namespace_urllib3_client.api" in sys.modules,
                  "hits": hits}))
"""


@pytest.mark.slow
def test_an_unverified_lancedb_is_imported_the_normal_way_and_searches_the_same(sample_db: Path) -> None:
    """What a lancedb newer than the checked layout, or older than the floor, gets: no deferral, same answer."""
    runs = {}
    verified = UNVERIFIED.replace('lancedb_import.VERIFIED["lancedb"] = (99, 0, 0)', "")
    for label, code in (("unverified", UNVERIFIED), ("verified", verified)):
        proc = subprocess.run(
            [sys.executable, "-c", code, str(sample_db)],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[label] = json.loads(proc.stdout.splitlines()[-1])
    assert runs["unverified"]["deferred"] == {} and runs["unverified"]["api"] is True
    assert runs["verified"]["deferred"] and runs["verified"]["api"] is False
    assert runs["unverified"]["hits"] == runs["verified"]["hits"] and '"count":5' in runs["verified"]["hits"]


def test_only_lancedb_uses_overrides() -> None:
    """The marker is given to lancedb's methods only; no other installed package should depend on it."""
    from importlib.metadata import distributions

    users = sorted(
        {
            d.metadata["Name"].lower()
            for d in distributions()
            if any(r.split(";")[0].strip().lower().startswith("overrides") for r in d.requires or [])
        }
    )
    assert users == ["lancedb"]


@pytest.mark.slow
def test_import_lancedb_defers_the_rest_client_and_it_still_works() -> None:
    report = probe()
    deferred = report["deferred"]  # 110, 164 and 146 names with lancedb 0.40.0; a newer layout may differ
    assert (
        set(deferred) == {"lance_namespace", "lance_namespace_urllib3_client", "lance_namespace_urllib3_client.models"}
        and min(deferred.values()) >= 50
    )
    assert report["models_loaded"] < 40, "lance_namespace imported the client's models again"
    assert report["namespace"] == [True, {"id": ["b"], "include_declared": True}, "DescribeTableRequest", True]
    assert report["api_loaded"] == [], "the REST API modules or urllib3 were imported by `import lancedb`"
    assert report["marker"] is (sys.version_info < (3, 12))
    same, same_api, model, host, listed, unknown, star, callable_ = report["rest"]
    assert same and same_api and model["id"] == ["a"] and host == "http://127.0.0.1:9"
    assert listed and unknown is False and star and callable_
    assert report["lancedb_marked"] is True and report["others_checked"] is True


@pytest.mark.slow
def test_switched_off_is_the_normal_import() -> None:
    report = probe(LANCELOT_NO_FAST_IMPORT="1")
    assert report["deferred"] == {} and report["marker"] is False and report["models_loaded"] > 100
    assert report["namespace"][:2] == [True, {"id": ["b"], "include_declared": True}]
    assert "lance_namespace_urllib3_client.api.table_api" in report["api_loaded"]
    assert report["rest"][0] and report["others_checked"] is True


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        ["search", "refund policy", "--json"],
        ["search", "how do I return a jacket", "--json", "--limit", "10"],
        ["query", "what is the refund policy for jackets", "--json"],
        ["show", "policies/refunds.md", "--json"],
        ["status", "--json"],
    ],
)
def test_output_is_byte_identical_without_the_deferral(sample_db: Path, args: list[str]) -> None:
    outputs = []
    for off in ("0", "1"):
        proc = subprocess.run(
            [*MODULE_COMMAND, *args, "--db", str(sample_db)],
            capture_output=True,
            env=subprocess_env(LANCELOT_NO_FAST_IMPORT=off),
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1] and outputs[0]


@pytest.mark.slow
def test_vector_search_is_byte_identical_without_the_deferral(vector_env, vector_db: Path) -> None:
    outputs = []
    for off in ("0", "1"):
        proc = subprocess.run(
            [*MODULE_COMMAND, "search", "refund policy", "--type", "hybrid", "--json", "--db", str(vector_db)],
            capture_output=True,
            env=subprocess_env(LANCELOT_NO_FAST_IMPORT=off),
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr.decode()[-2000:]
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1] and json.loads(outputs[0])["hits"]


@pytest.mark.slow
def test_only_a_verified_lancedb_gets_the_deferral() -> None:
    """Importing the client alone (no lancedb being imported) is the normal import."""
    code = (
        "import sys, lancelot_cli.startup\nlancelot_cli.startup.start()\n"
        "from lancelot_cli.storage import lancedb_import as fast\n"
        "import lance_namespace_urllib3_client\n"
        "print(fast.deferred, 'lance_namespace_urllib3_client.api' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=subprocess_env(), capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.stdout.split() == ["{}", "True"], proc.stderr[-2000:]


def test_an_unexpected_package_layout_loads_the_normal_way() -> None:
    package = "lance_namespace_urllib3_client"
    expected = b'"""doc"""\n__version__ = "1"\nfrom lance_namespace_urllib3_client.api.x import X\n'
    tree, names, version = lancedb_import._plan(package, expected)
    assert names == {"X": ("lance_namespace_urllib3_client.api.x", "X")} and len(tree.body) == 2 and version == "1"
    for source in (
        expected + b"X.configure()\n",  # code that needs the deferred name at import
        expected + b"from lance_namespace_urllib3_client.models import *\n",
        expected + b"import urllib3\n",
        b'"""only a docstring"""\n',
    ):
        assert lancedb_import._plan(package, source) is None


def test_lance_namespace_defers_only_models_it_uses_in_annotations() -> None:
    """Its models become lazy names only when nothing but annotations and `Alias = Model` uses them."""
    source = (
        b'"""doc"""\nimport warnings\nfrom lance_namespace_urllib3_client.models import (A, B)\n'
        b"Old = A\nclass Space:\n    def f(self, request: A) -> B:\n        raise NotImplementedError\n"
        b"TABLE: dict[str, str] = {}\n"
    )
    tree, names, _ = lancedb_import._namespace_plan(source)
    models = "lance_namespace_urllib3_client.models"
    assert names == {"A": (models, "A"), "B": (models, "B"), "Old": (models, "A")}
    assert [type(node).__name__ for node in tree.body] == ["Expr", "Import", "ClassDef", "AnnAssign"]
    for extra in (
        b"x = A()\n",  # built at import
        b"def g():\n    return B\n",  # needed when called
        b"def h(value=A):\n    pass\n",  # a default is evaluated at definition
        b"A = 1\n",
    ):  # rebound
        assert lancedb_import._namespace_plan(source + extra) is None, extra
    assert lancedb_import._namespace_plan(b"from lance_namespace_urllib3_client.models import *\n") is None
    assert lancedb_import._namespace_plan(b"import os\n") is None


TYPER_PROBE = """
import json, sys
from lancelot_cli.cli import app
if sys.argv[1] == "unknown-layout":
    app._LAYOUT[:] = [False]  # what another Typer's layout gets
sys.argv = ["lancelot", *json.loads(sys.argv[2])]
code = app.run()
sys.stdout.flush()
print(json.dumps({"code": code, "pydantic": "pydantic" in sys.modules}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [["search", "--help"], ["search", "refund", "--limit", "3", "--json"], ["search", "refund", "--limit", "0"]],
    ids=["help", "limit", "bad-limit"],
)
@pytest.mark.slow
def test_the_typer_deferral_changes_nothing_but_the_pydantic_import(sample_db: Path, args: list[str]) -> None:
    """Deferred, switched off, and on a Typer layout it does not know: the same output and exit code."""
    runs = {}
    for how, env in (("deferred", {}), ("off", {"LANCELOT_NO_FAST_IMPORT": "1"}), ("unknown-layout", {})):
        proc = subprocess.run(
            [sys.executable, "-c", TYPER_PROBE, how, json.dumps([*args, "--db", str(sample_db)])],
            env=subprocess_env(**env),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        *err, report = proc.stderr.splitlines(keepends=True)
        runs[how] = (proc.stdout, "".join(err), json.loads(report))
    outputs = {(out, err, report["code"]) for out, err, report in runs.values()}
    assert len(outputs) == 1 and next(iter(outputs))[0 if args[-1] != "0" else 1]
    assert runs["off"][2]["pydantic"] and runs["unknown-layout"][2]["pydantic"]
    if args == ["search", "--help"]:
        assert runs["deferred"][2]["pydantic"] is False


def test_a_default_in_its_range_needs_no_pydantic_adapter() -> None:
    """`serve --idle` (a float in 0..1440): its default 0.0 is what typer's adapter would return, so
    `lancelot serve` builds none; a value out of the range, or of another type, still goes to typer."""
    import typer.main

    from lancelot_cli.cli import app

    serve = typer.main.get_command(app.app).commands["serve"]  # type: ignore[attr-defined]
    idle = next(p for p in serve.params if p.name == "idle")
    assert idle.default == 0.0 and type(idle.default) is float
    assert app._already_plain(idle, 0.0) and app._already_plain(idle, 1440.0)
    assert not app._already_plain(idle, 1441.0) and not app._already_plain(idle, -1.0)
    assert not app._already_plain(idle, 0)  # an int: typer's adapter makes it a float
    assert not app._already_plain(idle, "5")  # from the command line: typer parses it
