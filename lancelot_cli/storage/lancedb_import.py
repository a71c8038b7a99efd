"""Import lancedb without paying for code a local or S3 table never runs.

Three costs of ``import lancedb`` 0.40 on Python 3.11, all removed by one meta-path finder that
``install()`` puts first on ``sys.meta_path``. Importing this module does nothing: ``install`` is
called at start-up by ``lancelot_cli.startup.start`` (the entry points), before lancedb loads.

* ``lance_namespace`` imports the generated REST client ``lance_namespace_urllib3_client``, whose
  package ``__init__`` files import nine API modules (every method wrapped by pydantic's
  ``validate_call``, built at import), ``urllib3`` and all 146 request/response models: about half
  of the import. Only the REST namespace uses the API classes. Those ``__init__`` files are run
  with their ``from <package>.<module> import Name`` lines taken out; each such name is imported
  on first access through a module ``__getattr__`` (PEP 562), so ``from lance_namespace_urllib3_client
  import TableApi`` and ``client.models.X`` still work. ``importlib.util.LazyLoader`` cannot do
  this: every import of the client is ``from X import Name``, which executes a lazy module at once.
* ``lance_namespace`` itself imports 108 of those models by name, only to annotate the methods of
  its abstract ``LanceNamespace`` (about a quarter of what was left). Its module is compiled with
  ``from __future__ import annotations`` (annotations stay strings, as PEP 563 makes them) and the
  models become lazy names the same way; this applies only when the models appear nowhere but in
  annotations and in plain ``Alias = Model`` lines (checked on the source, see ``_namespace_plan``).
  The one visible difference: ``typing.get_type_hints`` on its methods cannot resolve those strings
  (lancedb and lance never call it; our processes use no namespace).
* On Python < 3.12 lancedb decorates its methods with ``overrides.override``, which re-checks each
  signature against the base class at import (it disassembles the class body: ~30 % of what is
  left). On 3.12+ lancedb uses ``typing.override``, a marker. For decorations made by lancedb's
  own modules we give it that marker; every other caller gets the real, checking decorator.

Both apply from the versions verified below (``VERIFIED``: the oldest whose layout was checked by
hand) on, and only while the layout is still the one checked: an ``__init__`` that is not the
expected list of imports and constants, or a ``lance_namespace`` that uses a model outside its
annotations, loads the normal way, as does an older or unparsable version. So an upgrade needs no
pin: at worst it loses the speed-up (tests/test_fast_import.py proves that path). Nothing here changes
what a query returns: tests/test_fast_import.py compares search output with and without it.
Set ``LANCELOT_NO_FAST_IMPORT=1`` to turn it off.

Why it is kept, although it reads lancedb's dependencies' source (issue 48 #3): lancedb 0.40 imports
``lance_namespace`` and ``lancedb.embeddings`` from ``lancedb/db.py`` at module level, so no public
import path (a ``lancedb`` submodule, lazy registration) avoids them. Without it, a one-file
re-index of the FastAPI docs took 1.81 s of CPU instead of 0.77, a cold ``search`` 2.12 instead of
0.98, and ``serve`` spawn → first result went from 1.38× to 2.45× a hello-world MCP server (target
1.5×); peak RSS +18 MiB (tests/benchmarks/README.md, "What the lancedb import deferral saves").
The fix belongs upstream (the models imported for annotations only, the REST client's package
``__init__`` files resolved on first use); once a lancedb release has it, delete this module.
"""

from __future__ import annotations
import __future__

import contextlib
import importlib.machinery
import os
import sys
from types import ModuleType
from typing import Any

CLIENT = "lance_namespace_urllib3_client"
NAMESPACE = "lance_namespace"
# Package __init__ files of the client that import their submodules eagerly.
LAZY_PACKAGES = frozenset({CLIENT, f"{CLIENT}.api", f"{CLIENT}.models"})
# distribution -> the oldest version whose layout was checked by hand; newer ones are checked by
# their layout at import (see the module doc).
VERIFIED = {
    "lancedb": (0, 40, 0),
    "lance-namespace-urllib3-client": (0, 13, 0),
    "overrides": (7, 7, 0),
}
OFF_VARIABLE = "LANCELOT_NO_FAST_IMPORT"

_finder: _Finder | None = None
# What the finder actually did, for tests and benchmarks: package -> number of deferred names.
deferred: dict[str, int] = {}
overrides_marker_installed = False


def install() -> bool:
    """Put the finder in place (once); False when turned off. Versions are checked from what the
    import itself has at hand (``lancedb.__version__``, the client's ``__version__``, overrides'
    ``__VERSION__``), not with importlib.metadata (~6 to 30 ms)."""
    global _finder
    if os.environ.get(OFF_VARIABLE, "").strip() not in ("", "0"):
        return False
    if _finder is None:
        _finder = _Finder()
        sys.meta_path.insert(0, _finder)
    return True


def at_least(found: Any, dist: str) -> bool:
    """True when version text ``found`` ("0.40.0", "7.7.0") is at least ``VERIFIED[dist]``; a version
    that is not plain numbers (None, "1.0rc1") is not."""
    parts = str(found).split(".") if found is not None else []
    if not parts or not all(part.isdigit() for part in parts):
        return False
    return tuple(int(part) for part in parts) >= VERIFIED[dist]


def versions_verified() -> bool:
    """True when every installed distribution in ``VERIFIED`` is at least the verified one (for tests)."""
    from importlib.metadata import PackageNotFoundError, version

    for dist in VERIFIED:
        try:
            if not at_least(version(dist), dist):
                return False
        except PackageNotFoundError:
            if dist != "overrides":  # only installed on Python < 3.12
                return False
    return True


def _lancedb_verified() -> bool:
    """lancedb is being imported (it sets ``__version__`` before its other imports), a verified one."""
    return at_least(getattr(sys.modules.get("lancedb"), "__version__", None), "lancedb")


class _Finder:
    """A meta-path finder for the client's packages and ``overrides`` while a verified lancedb is
    imported; ``None`` (the normal import) for every other name and every other case."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name == NAMESPACE:
            return self._namespace_spec(name, path)
        if name not in LAZY_PACKAGES and name != "overrides":
            return None
        if not _lancedb_verified() or (name != CLIENT and name != "overrides" and CLIENT not in deferred):
            return None  # the sub-packages only follow a deferred (so verified) client package
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        if name == "overrides":
            spec.loader = _OverridesLoader(name, spec.origin)
            return spec
        plan = _plan(name, spec.loader.get_data(spec.origin))
        if plan is None:  # not the layout we verified: the normal import
            return None
        if name == CLIENT and not at_least(plan[2], "lance-namespace-urllib3-client"):
            return None
        spec.loader = _LazyPackageLoader(name, spec.origin, plan)
        return spec

    def _namespace_spec(self, name: str, path: Any) -> importlib.machinery.ModuleSpec | None:
        if not _lancedb_verified():
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.origin is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        plan = _namespace_plan(spec.loader.get_data(spec.origin))
        if plan is None:
            return None
        spec.loader = _LazyPackageLoader(name, spec.origin, plan, flags=__future__.annotations.compiler_flag)
        return spec


def _plan(package: str, source: bytes) -> tuple[Any, dict[str, tuple[str, str]], Any] | None:
    """(code without the submodule imports, {name: (module, attribute)}, its ``__version__``), or
    None if the file holds anything but those imports, a docstring and constant assignments."""
    import ast

    tree = ast.parse(source)
    names: dict[str, tuple[str, str]] = {}
    kept: list[ast.stmt] = []
    version = None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith(package + "."):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names[alias.asname or alias.name] = (node.module, alias.name)  # type: ignore[assignment]
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            kept.append(node)
        elif (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and all(isinstance(t, ast.Name) for t in node.targets)
        ):
            kept.append(node)
            if any(t.id == "__version__" for t in node.targets):  # type: ignore[attr-defined]
                version = node.value.value
        else:
            return None
    if not names:
        return None
    tree.body = kept
    return tree, names, version


def _namespace_plan(source: bytes) -> tuple[Any, dict[str, tuple[str, str]], None] | None:
    """(``lance_namespace``'s code without its import of the client's models, {name: (module,
    attribute)}, None), or None unless every use of those models is an annotation (which PEP 563
    leaves a string) or a top-level ``Alias = Model`` line (which becomes a lazy name too)."""
    import ast

    tree = ast.parse(source)
    models = f"{CLIENT}.models"
    names: dict[str, tuple[str, str]] = {}
    kept: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == models:
            if any(alias.name == "*" for alias in node.names):
                return None
            names.update({alias.asname or alias.name: (models, alias.name) for alias in node.names})
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Name)
            and node.value.id in names
        ):
            names[node.targets[0].id] = names[node.value.id]
        else:
            kept.append(node)
    if not names:
        return None
    tree.body = kept
    annotations: set[int] = set()
    for found in ast.walk(tree):
        if isinstance(found, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = [
                *found.args.posonlyargs,
                *found.args.args,
                *found.args.kwonlyargs,
                found.args.vararg,
                found.args.kwarg,
            ]
            parts = [a.annotation for a in arguments if a is not None and a.annotation is not None]
            parts += [found.returns] if found.returns is not None else []
        elif isinstance(found, ast.AnnAssign):
            parts = [found.annotation]
        else:
            continue
        annotations.update(id(inner) for part in parts for inner in ast.walk(part))
    for found in ast.walk(tree):
        if isinstance(found, ast.Name) and found.id in names and id(found) not in annotations:
            return None  # a model used at run time (or rebound): the normal import
    return tree, names, None


class _LazyPackageLoader(importlib.machinery.SourceFileLoader):
    def __init__(
        self, fullname: str, path: str | None, plan: tuple[Any, dict[str, tuple[str, str]], Any], flags: int = 0
    ) -> None:
        super().__init__(fullname, path)  # type: ignore[arg-type]
        self._tree, self._names, _ = plan
        self._flags = flags

    def exec_module(self, module: ModuleType) -> None:
        names = self._names
        namespace = module.__dict__
        prefix = module.__name__ + "."
        # Submodules the eager __init__ imported become attributes of the package on first use too.
        submodules = {target[len(prefix) :].split(".")[0] for target, _ in names.values() if target.startswith(prefix)}

        def __getattr__(attr: str) -> Any:  # noqa: N807 - the module __getattr__ of PEP 562
            # __import__ rather than importlib.import_module: `python -X importtime` then still
            # shows each module's own time instead of adding it to whoever touched the name.
            if attr in names:
                source, original = names[attr]
                value = getattr(__import__(source, fromlist=["_"]), original)
            elif attr in submodules:
                value = __import__(prefix + attr, fromlist=["_"])
            else:
                raise AttributeError(f"module {module.__name__!r} has no attribute {attr!r}")
            namespace[attr] = value
            return value

        def __dir__() -> list[str]:  # noqa: N807 - the module __dir__ of PEP 562
            return sorted(set(namespace) | set(names) | submodules)

        namespace["__getattr__"] = __getattr__
        namespace["__dir__"] = __dir__
        exec(compile(self._tree, self.path, "exec", flags=self._flags, dont_inherit=True), namespace)
        if "__all__" not in namespace:  # `import *` still gives every public name, loading them
            namespace["__all__"] = sorted(n for n in {*namespace, *names, *submodules} if not n.startswith("_"))
        deferred[module.__name__] = len(names)


class _OverridesLoader(importlib.machinery.SourceFileLoader):
    def exec_module(self, module: ModuleType) -> None:
        global overrides_marker_installed
        super().exec_module(module)
        if sys.version_info < (3, 12) and at_least(getattr(module, "__VERSION__", None), "overrides"):
            module.override = _override_for(module)  # type: ignore[attr-defined]
            overrides_marker_installed = True


def _override_for(module: ModuleType) -> Any:
    """``overrides.override`` that is a plain marker (PEP 698, as lancedb uses on 3.12) when the
    decorated method is defined in a lancedb module, and the real checking decorator otherwise.

    The real path calls ``_overrides`` from this frame, as ``override`` itself does: it finds the
    base classes by looking a fixed number of frames up.
    """
    checking = module.override
    check = sys.modules["overrides.overrides"]._overrides

    def override(method: Any = None, *, check_signature: bool = True, check_at_runtime: bool = False) -> Any:
        if method is None:
            return checking(check_signature=check_signature, check_at_runtime=check_at_runtime)
        if str(getattr(method, "__module__", "")).split(".")[0] != "lancedb":
            return check(method, check_signature, check_at_runtime)
        with contextlib.suppress(AttributeError, TypeError):
            method.__override__ = True
        return method

    override.__doc__ = checking.__doc__
    override.__wrapped__ = checking  # type: ignore[attr-defined]
    return override
