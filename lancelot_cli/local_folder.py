"""A local model folder made ready for fastembed: checked, copied once with int8 weights, registered.

A folder (``local:/path/to/folder``) holds ``model.onnx`` and its tokenizer files; fastembed runs
it as a sentence-transformers encoder once it is registered as mean-pooled and normalised. The
int8 copy lives in the user's cache (``quantized``). Only local_embed.py uses this.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

from lancelot_cli.errors import EmbeddingError


def check_folder(folder: Path, next_step: str = "") -> None:
    """Raise ``EmbeddingError`` unless ``folder`` holds an ONNX encoder and its tokenizer files;
    ``next_step`` ends the message of a folder that does not exist."""
    if not folder.is_dir():
        raise EmbeddingError(f"the local model folder {folder} does not exist{next_step}")
    missing = [n for n in ("model.onnx", "tokenizer.json", "tokenizer_config.json") if not (folder / n).is_file()]
    if missing:
        raise EmbeddingError(
            f"the local model folder {folder} has no {', '.join(missing)}; it needs an ONNX "
            f"encoder and its tokenizer files"
        )


def quantized(folder: Path) -> Path:
    """A copy of the model in ``folder`` with int8 weights (per channel), made once and kept in the
    user's cache; ``folder`` itself when that cannot be done (no ``onnx`` package, a model the
    quantizer does not take, ``LANCELOT_LOCAL_INT8=0``).

    Measured with all-MiniLM-L6-v2 on 2 quiet cores, paired runs (tests/benchmarks/README.md,
    "Local embeddings, int8"): 14.5-15.0 chunks per CPU-second against 11.7-12.0 for the float
    model (both one text per run), vectors at cosine 0.992 to the float ones, SciFact nDCG@10
    within 0.005. Per-tensor int8 was as fast but at cosine 0.94; 128 word pieces instead of 256
    were faster still and cost SciFact 0.02. Queries are embedded with the same copy."""
    if os.environ.get("LANCELOT_LOCAL_INT8", "1").strip() == "0":
        return folder
    source = folder / "model.onnx"
    try:
        from platformdirs import user_cache_dir

        info = source.stat()
        key = hashlib.sha256(f"{source.resolve()}\0{info.st_size}\0{info.st_mtime_ns}".encode()).hexdigest()[:16]
        target = Path(user_cache_dir("lancelot")) / "int8" / key
        if not (target / "model.onnx").is_file():
            _quantize(folder, target)
    except Exception:  # noqa: BLE001 - no onnx package, a model it cannot take, no room: the model as it is
        return folder
    return target


def _quantize(folder: Path, target: Path) -> None:
    """Write the int8 copy of ``folder`` to ``target``, whole or not at all (built aside, renamed)."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    staging = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    try:
        staging.mkdir(parents=True, exist_ok=True)
        for item in folder.iterdir():
            if item.is_file() and item.name != "model.onnx":
                shutil.copyfile(item, staging / item.name)
        logging.disable(logging.WARNING)  # the quantizer's "consider pre-processing" hint, on stderr
        try:
            quantize_dynamic(
                folder / "model.onnx",
                staging / "model.onnx",
                weight_type=QuantType.QInt8,
                per_channel=True,
                extra_options={"MatMulConstBOnly": True},
            )
        finally:
            logging.disable(logging.NOTSET)
        os.replace(staging, target)  # another process that made it first wins; its copy is the same
    finally:
        shutil.rmtree(staging, ignore_errors=True)


_registered: dict[Path, str] = {}


def register_folder(fastembed: Any, folder: Path) -> str:
    """Register the folder with fastembed as a mean-pooled, normalised encoder; its registry name."""
    if folder in _registered:
        return _registered[folder]
    from fastembed.common.model_description import ModelSource, PoolingType

    name = "lancelot-local/" + hashlib.sha256(str(folder).encode()).hexdigest()[:16]
    try:
        dim = int(json.loads((folder / "config.json").read_text("utf-8"))["hidden_size"])
    except (OSError, ValueError, KeyError, TypeError):  # no file, not JSON, no such key, not a number
        dim = 0  # only fastembed's own bookkeeping uses it; the vectors say their size
    with contextlib.suppress(ValueError):  # registered already by an earlier load in this process
        fastembed.TextEmbedding.add_custom_model(
            name,
            pooling=PoolingType.MEAN,
            normalization=True,
            sources=ModelSource(hf=name),
            dim=dim,
            model_file="model.onnx",
        )
    _registered[folder] = name
    return name
