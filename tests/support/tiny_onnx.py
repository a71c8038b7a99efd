"""A tiny BERT-like ONNX encoder with random weights and its tokenizer files, built in a test (no
network, no download), to run local embeddings end to end: `lancelot index --embed-model local:DIR`.

The graph has the inputs and output of a sentence-transformers export (``input_ids``,
``attention_mask``, ``token_type_ids`` -> ``last_hidden_state [batch, seq, hidden]``): token and
token-type embeddings, then two dense layers with a tanh between. Mean-pooled, that is a smoothed
bag of words, so texts that share words get near vectors: enough for hybrid search to find them.

Needs the ``onnx`` and ``tokenizers`` packages (the ``local`` extra brings both).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]


def build(folder: Path, words: Iterable[str] = (), *, hidden: int = 32, seed: int = 0) -> Path:
    """Write model.onnx, tokenizer.json, tokenizer_config.json, special_tokens_map.json and
    config.json to ``folder``; ``words`` (lower-cased) are the vocabulary, the rest is [UNK]."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate(SPECIAL)}
    for word in sorted({w.lower() for text in words for w in re.findall(r"\w+", text)}):
        vocab.setdefault(word, len(vocab))
    _tokenizer(folder, vocab)

    rng = np.random.default_rng(seed)
    weights = {
        "word": rng.normal(0, 1, (len(vocab), hidden)).astype(np.float32),
        "type": rng.normal(0, 0.1, (2, hidden)).astype(np.float32),
        "w1": (rng.normal(0, 1, (hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
        "w2": (rng.normal(0, 1, (hidden, hidden)) / np.sqrt(hidden)).astype(np.float32),
    }
    weights["word"][[0, 2, 3]] = 0.0  # [PAD], [CLS], [SEP]: only words move a text's vector
    nodes = [
        helper.make_node("Gather", ["word", "input_ids"], ["we"]),
        helper.make_node("Gather", ["type", "token_type_ids"], ["te"]),
        helper.make_node("Add", ["we", "te"], ["emb"]),
        helper.make_node("MatMul", ["emb", "w1"], ["h1"]),
        helper.make_node("Tanh", ["h1"], ["a1"]),
        helper.make_node("Add", ["a1", "emb"], ["r1"]),  # a residual keeps the words apart
        helper.make_node("MatMul", ["r1", "w2"], ["h2"]),
        # attention_mask is an input as in BERT; the caller's mean pooling is what uses it
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis"], ["mask_3d"]),
        helper.make_node("Mul", ["h2", "mask_3d"], ["last_hidden_state"]),
    ]
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    inits.append(numpy_helper.from_array(np.array([2], np.int64), "axis"))
    ints = [
        helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "tiny_encoder", ints, [out], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by every onnxruntime the extra allows
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    (folder / "config.json").write_text(
        json.dumps({"model_type": "bert", "hidden_size": hidden, "vocab_size": len(vocab), "pad_token_id": 0})
    )
    return folder


def _tokenizer(folder: Path, vocab: dict[str, int]) -> None:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordLevel

    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "model_max_length": 128,
                "pad_token": "[PAD]",
                "unk_token": "[UNK]",
                "cls_token": "[CLS]",
                "sep_token": "[SEP]",
            }
        )
    )
    (folder / "special_tokens_map.json").write_text(
        json.dumps({"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]"})
    )
