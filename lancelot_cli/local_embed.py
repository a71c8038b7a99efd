"""Local embeddings: an ONNX encoder run on this machine by fastembed (ONNX Runtime, no torch), so
vector and hybrid search need no key and no server. Installed with ``pip install "lancelot-cli[local]"``.

A model is named ``local:NAME`` for a model of fastembed's registry (fastembed downloads and caches
it on first use, e.g. ``local:sentence-transformers/all-MiniLM-L6-v2``, or just
``local:all-MiniLM-L6-v2``) or ``local:/path/to/folder`` for a folder with ``model.onnx`` and the
tokenizer files (``tokenizer.json``, ``tokenizer_config.json``, ``special_tokens_map.json``,
``config.json``), which never touches the network. That name (a folder made absolute, a registry
name made the registry's own) is the model identity the indexer records on the vector column, and
the engine embeds queries with the column's model, so a table is never queried with another model.

A folder is run as a sentence-transformers encoder: mean pooling over the tokens, then L2
normalisation (what all-MiniLM-L6-v2 and most small BERT-like encoders expect). Every input is cut
to ``MAX_TOKENS`` word pieces, sentence-transformers' limit for all-MiniLM-L6-v2 (a 1,200-character
chunk is about that long, and attention costs grow with the square of the length).

fastembed is imported on first use (about 1.5 s, most of it huggingface_hub), in the thread that
loads the model. One loaded model per identity per process (``shared``), loaded once under a lock;
``LocalEmbedder.warm`` loads it in a background thread so a first query does not pay for it.

A folder is checked, copied with int8 weights and registered by local_folder.py (``check_folder``
and ``quantized`` are importable from here too).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeGuard

from lancelot_cli.errors import EmbeddingError
from lancelot_cli.local_folder import check_folder, quantized, register_folder

PREFIX = "local:"
DEFAULT_MODEL = "local:sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 256
# One text per ONNX run, one thread per run, as many runs at once as there are cores (ONNX Runtime
# works outside the GIL): all-MiniLM-L6-v2 made 11.7-12.0 SciFact abstracts per CPU-second that
# way against 8.9-9.1 in batches of 32 on both cores (a batch's activations outgrow the CPU's
# caches, and the threads of one run wait on each other), and a text's vector never depends on
# the texts embedded with it (which int8's per-run activation scales would otherwise make it do).
BATCH = 1
WORKERS = max(1, min(4, os.cpu_count() or 1))


INSTALLED = "the local extra is installed here; only the model is needed (docs/troubleshooting.md)"


def install() -> str:
    """The command that adds the local extra to the copy that is running (install_hint.py); when the
    extra (fastembed) is installed already, ``INSTALLED``: what is missing then is the model."""
    if available():
        return INSTALLED
    return _install_command()


def _install_command() -> str:
    from lancelot_cli.install_hint import install_command

    return install_command("local")


def is_local(model: str | None) -> TypeGuard[str]:
    return model is not None and model.startswith(PREFIX)


def _is_path(name: str) -> bool:
    return (
        name.startswith(("/", "./", "../", "~", ".\\", "..\\"))
        or (len(name) > 2 and name[1] == ":")
        or (os.sep in name and Path(name).expanduser().is_dir())
    )


def identity(spec: str) -> str:
    """The identity of ``local:NAME`` or ``local:PATH``: a folder made absolute, a name as given."""
    name = spec[len(PREFIX) :].strip() if is_local(spec) else spec.strip()
    if not name:
        raise EmbeddingError(
            f"no model named in {spec!r}: use local:NAME (e.g. {DEFAULT_MODEL}) or local:/path/to/folder"
        )
    if _is_path(name):
        return PREFIX + str(Path(name).expanduser().resolve())
    return PREFIX + name


def same_model(a: str, b: str) -> bool:
    """True when two local identities name one model (``all-MiniLM-L6-v2`` is the registry's
    ``sentence-transformers/all-MiniLM-L6-v2``)."""
    a, b = a[len(PREFIX) :], b[len(PREFIX) :]
    if a == b:
        return True
    if a.startswith("/") or b.startswith("/"):
        return False
    return a.rsplit("/", 1)[-1].lower() == b.rsplit("/", 1)[-1].lower()


# Names of local models trained on more than English (all-MiniLM-L6-v2, the default, is not).
_MULTILINGUAL = re.compile(
    r"multilingual|\bm3\b|-m3|labse|xlm|chinese|japanese|korean|-zh\b|-ja\b|jina-embeddings-v3", re.I
)


def multilingual(model: str) -> bool:
    """Whether a local model's name says it was trained on more than English."""
    return bool(_MULTILINGUAL.search(model))


def maybe_here(model: str) -> bool:
    """Whether ``model`` may be on this machine, judged without importing fastembed (about 1.5 s):
    a folder that exists, or a registry model whose name appears in fastembed's cache folder
    (``FASTEMBED_CACHE_PATH``, else ``fastembed_cache`` in the temporary folder, as fastembed
    decides). A yes is only a maybe: loading it offline (``LocalEmbedder(offline=True)``) decides."""
    import tempfile

    name = identity(model)[len(PREFIX) :]
    if name.startswith("/"):
        return Path(name, "model.onnx").is_file()
    cache = Path(os.environ.get("FASTEMBED_CACHE_PATH") or Path(tempfile.gettempdir(), "fastembed_cache"))
    short = name.rsplit("/", 1)[-1].lower()
    try:
        return any(short in entry.name.lower() for entry in cache.iterdir())
    except OSError:
        return False


def available() -> bool:
    """Whether the local extra is installed (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("fastembed") is not None


# Who is told that a model is loading, a wait of seconds to minutes: a function of the message that
# returns a context manager for the wait (the CLI's spinner, cli/render.py `waiting`); None in a
# server, which has no person to tell.
Announce = Callable[[str], AbstractContextManager[object]]
_ANNOUNCE: list[Announce] = []


@contextlib.contextmanager
def announced_to(announce: Announce) -> Iterator[None]:
    """While inside, a model that loads says so through ``announce``."""
    _ANNOUNCE.append(announce)
    try:
        yield
    finally:
        _ANNOUNCE.remove(announce)


def _announced(model: str, offline: bool) -> AbstractContextManager[object]:
    if not _ANNOUNCE:
        return contextlib.nullcontext()
    name = model[len(PREFIX) :]
    fetch = not offline and not name.startswith("/") and not maybe_here(model)
    return _ANNOUNCE[-1](f"{'Downloading and loading' if fetch else 'Loading'} the local model {name}…")


class LocalEmbedder:
    """Turns texts into vectors with one local model, loaded on first use (or by ``warm``).

    ``model`` is the identity; ``embed`` raises ``EmbeddingError`` with a next step."""

    def __init__(self, model: str, *, threads: int | None = 1, offline: bool = False) -> None:
        self.model = identity(model)
        self._threads = threads
        self._offline = offline  # a registry model only from fastembed's cache, never downloaded
        self._lock = threading.Lock()
        self._encoder: Any = None
        self._error: EmbeddingError | None = None

    def __repr__(self) -> str:
        return f"LocalEmbedder(model={self.model!r}, loaded={self.loaded})"

    @property
    def loaded(self) -> bool:
        return self._encoder is not None

    def load(self, *, cached_only: bool = False) -> None:
        """Load the model now (at most once; a failure is kept and raised again, not retried per
        query). With ``cached_only`` a registry model is taken only from fastembed's cache, and
        its absence is not kept as a failure: a later ``load`` may still download it."""
        if self._encoder is not None:
            return
        with self._lock:
            if self._error is not None:
                raise self._error
            if self._encoder is None:
                offline = self._offline or cached_only
                try:
                    with _announced(self.model, offline):
                        self._encoder = _load(self.model[len(PREFIX) :], self._threads, offline)
                except EmbeddingError as exc:
                    if self._offline or not cached_only:
                        self._error = exc
                    raise

    def warm(self) -> threading.Thread:
        """Load the model in a background (daemon) thread if it is on this machine already (a
        folder, or a registry model in fastembed's cache): a server's warm-up never downloads. A
        model that is not there yet is fetched by the first ``embed``, which says so if it cannot."""

        def run() -> None:
            with contextlib.suppress(Exception):  # not there, or broken: the first embed() says what
                self.load(cached_only=True)

        thread = threading.Thread(target=run, name="lancelot-local-model", daemon=True)
        thread.start()
        return thread

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.load()
        texts = list(texts)
        if len(texts) < 2 * WORKERS:
            return self._run(texts)
        # Longest first, dealt round-robin, so the workers finish about together.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        shares = [order[k::WORKERS] for k in range(WORKERS)]
        parts = list(_pool().map(self._run, [[texts[i] for i in share] for share in shares]))
        found: list[list[float]] = [[] for _ in texts]
        for share, vectors in zip(shares, parts, strict=True):
            for i, vector in zip(share, vectors, strict=True):  # one vector per text
                found[i] = vector
        return found

    def _run(self, texts: list[str]) -> list[list[float]]:
        try:
            return [vector.tolist() for vector in self._encoder.embed(texts, batch_size=BATCH)]
        except Exception as exc:  # noqa: BLE001 - onnxruntime's errors: a model that does not fit the runner
            raise EmbeddingError(f"the local model {self.model} failed to embed: {_short(exc)}") from None


_POOL: list[Any] = []
_POOL_LOCK = threading.Lock()


def _pool() -> Any:
    """The threads that run a model on several texts at once (made on first use)."""
    with _POOL_LOCK:
        if not _POOL:
            from concurrent.futures import ThreadPoolExecutor

            _POOL.append(ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="lancelot-embed"))
        return _POOL[0]


_shared: dict[str, LocalEmbedder] = {}
_shared_lock = threading.Lock()


def shared(model: str) -> LocalEmbedder:
    """The process's embedder for ``model`` (one loaded copy per identity)."""
    key = identity(model)
    with _shared_lock:
        found = _shared.get(key)
        if found is None:
            found = _shared[key] = LocalEmbedder(key)
        return found


def canonical(model: str) -> str:
    """The identity of ``model`` as the indexer records it: a registry name in the registry's own
    spelling (``all-MiniLM-L6-v2`` -> ``sentence-transformers/all-MiniLM-L6-v2``), a folder absolute."""
    ident = identity(model)
    name = ident[len(PREFIX) :]
    if name.startswith("/"):
        return ident
    return PREFIX + _registry_name(_fastembed().TextEmbedding, name)


def _fastembed() -> Any:
    try:
        import fastembed
    except ImportError:
        raise EmbeddingError(f"local embeddings need the local extra: {_install_command()}") from None
    return fastembed


def _registry_name(text_embedding: Any, name: str) -> str:
    models = [m["model"] for m in text_embedding.list_supported_models()]
    for wanted in (name.lower(), "/" + name.lower()):
        for full in models:
            if full.lower() == wanted or full.lower().endswith(wanted):
                return full
    raise EmbeddingError(
        f'fastembed has no model {name!r}; use one of `python -c "from fastembed import '
        f'TextEmbedding; print(TextEmbedding.list_supported_models())"` or local:/path/to/folder'
    )


def _load(name: str, threads: int | None, offline: bool) -> Any:
    if not offline and not name.startswith("/") and not maybe_here(PREFIX + name):
        _check_hub(name)  # a download: fail in seconds when there is no network, not after fastembed's retries
    fastembed = _fastembed()
    from loguru import logger  # fastembed's logger: its download retries would print to stderr

    logger.disable("fastembed")
    if name.startswith("/"):
        folder = Path(name)
        check_folder(folder, "; index again with --embed-model local:/path/to/folder")
        folder = quantized(folder)
        registered = register_folder(fastembed, folder)
        kwargs: dict[str, Any] = {"specific_model_path": str(folder)}
    else:
        registered = _registry_name(fastembed.TextEmbedding, name)
        kwargs = {"local_files_only": True} if offline else {}
    try:
        encoder = fastembed.TextEmbedding(registered, threads=threads, **kwargs)
    except Exception as exc:  # noqa: BLE001 - fastembed, huggingface_hub, onnxruntime: each has its own errors
        if name.startswith("/"):
            raise EmbeddingError(f"cannot load the model in {name}: {_short(exc)}") from None
        raise EmbeddingError(
            f"cannot load {name} (fastembed downloads it on first use; without a network, "
            f"pass a model folder as local:/path/to/folder): {_short(exc)}"
        ) from None
    _cap_tokens(encoder)
    return encoder


def _check_hub(name: str) -> None:
    from lancelot_cli.hub import unreachable

    problem = unreachable()
    if problem:
        raise EmbeddingError(
            f"cannot download {name}: {problem}; connect once to download it (it runs offline after that), "
            f"or pass a model folder as local:/path/to/folder"
        )


def _cap_tokens(encoder: Any) -> None:
    """Cut inputs to ``MAX_TOKENS`` word pieces (the tokenizer config often says 512)."""
    tokenizer = getattr(getattr(encoder, "model", None), "tokenizer", None)
    truncation = getattr(tokenizer, "truncation", None) or {}
    if tokenizer is not None and truncation.get("max_length", MAX_TOKENS + 1) > MAX_TOKENS:
        tokenizer.enable_truncation(max_length=MAX_TOKENS, direction=truncation.get("direction", "right"))


def _short(exc: BaseException, size: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= size else text[: size - 1] + "…"
