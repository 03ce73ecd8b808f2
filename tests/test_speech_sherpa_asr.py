"""SherpaAsr, recognition included: no sherpa-onnx ASR model ships in a registry package, so
the test makes one. fayd's default Whisper tiny.en (CTranslate2 weights) is rebuilt as the
encoder/decoder ONNX pair that sherpa-onnx's Whisper recognizer loads (the graph of
sherpa-onnx's scripts/whisper/export-onnx.py, written with the ``onnx`` package), then Piper
and espeak-ng speech go through it. Paraformer, SenseVoice and zipformer cannot be made
here: for them, file discovery and the refusal of unusable files (sherpa-onnx would exit())
are tested, not recognition."""

from __future__ import annotations

import base64
import json
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fayd.errors import ModelError
from fayd.models import resolve
from fayd.speech.asr_sherpa import KINDS, SherpaAsr, find_model_files

# --- real recognition: Whisper tiny.en converted for sherpa-onnx ------------------------------


@pytest.fixture(scope="module")
def converted_whisper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pytest.importorskip("onnx", reason="the onnx package builds the test model (dev extra)")
    folder = tmp_path_factory.mktemp("sherpa-whisper")
    convert_ct2_whisper(resolve("asr").files["model"], folder)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)  # ~150 MB


@pytest.fixture(scope="module")
def sherpa_whisper(converted_whisper: Path) -> SherpaAsr:
    return SherpaAsr(converted_whisper, kind="whisper", language="en", threads=2)


def test_sherpa_whisper_hears_piper(sherpa_whisper: SherpaAsr, piper_speech_16k, key_words):
    heard = sherpa_whisper.transcribe(piper_speech_16k).lower()
    assert key_words <= set(heard.replace(".", "").replace(",", "").split()), heard


def test_sherpa_whisper_hears_espeak(sherpa_whisper: SherpaAsr, espeak_speech_16k) -> None:
    heard = sherpa_whisper.transcribe(espeak_speech_16k).lower()
    assert "kitchen" in heard and "music" in heard, heard


def test_sherpa_whisper_on_silence_and_nothing(sherpa_whisper: SherpaAsr) -> None:
    assert sherpa_whisper.transcribe(np.zeros(0, dtype=np.float32)) == ""
    assert isinstance(sherpa_whisper.transcribe(np.zeros(16000, dtype=np.float32)), str)


def test_found_files_and_language(converted_whisper: Path, sherpa_whisper: SherpaAsr) -> None:
    assert sherpa_whisper.files["encoder"] == converted_whisper / "tiny.en-encoder.onnx"
    assert sherpa_whisper.kind == "whisper" and sherpa_whisper.language == "en"


# --- the converter (test helper) --------------------------------------------------------------

_CT2_TYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_ct2(path: Path) -> dict[str, np.ndarray]:
    """The variables of a CTranslate2 ``model.bin`` (binary format 6) by name."""
    data = path.read_bytes()
    pos = 0

    def take(fmt: str) -> int:
        nonlocal pos
        (value,) = struct.unpack_from(fmt, data, pos)
        pos += struct.calcsize(fmt)
        return value

    def text() -> str:
        nonlocal pos
        n = take("<H")
        pos += n
        return data[pos - n : pos - 1].decode()  # stored NUL-terminated

    take("<I"), text(), take("<I")  # format version, spec name, spec revision
    weights = {}
    for _ in range(take("<I")):
        name = text()
        dims = [take("<I") for _ in range(take("<B"))]
        dtype = np.dtype(_CT2_TYPES[take("<B")])
        size = take("<I")
        weights[name] = np.frombuffer(data, dtype, size // dtype.itemsize, pos).reshape(dims)
        pos += size
    for _ in range(take("<I")):
        alias, target = text(), text()
        weights[alias] = weights[target]
    return weights


class Graph:
    """A small ONNX graph builder: each op returns its output's name."""

    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        self.w = weights
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self.names: dict[tuple[str, bool], str] = {}
        self.n = 0

    def const(self, value: Any, dtype: Any = np.float32) -> str:
        from onnx import numpy_helper

        self.n += 1
        name = f"c{self.n}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def i64(self, value: Any) -> str:
        return self.const(value, np.int64)

    def weight(self, key: str, transpose: bool = False) -> str:
        if (key, transpose) not in self.names:  # each tensor stored once
            x = np.asarray(self.w[key], dtype=np.float32)
            self.names[key, transpose] = self.const(x.T.copy() if transpose else x)
        return self.names[key, transpose]

    def op(self, op_type: str, *inputs: str, out: str | None = None, **attrs: Any) -> str:
        from onnx import helper

        self.n += 1
        name = out or f"t{self.n}"
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], **attrs))
        return name

    def split(self, x: str, parts: int) -> list[str]:
        from onnx import helper

        self.n += 1
        names = [f"t{self.n}_{i}" for i in range(parts)]
        self.nodes.append(helper.make_node("Split", [x], names, axis=-1, num_outputs=parts))
        return names

    def linear(self, x: str, prefix: str) -> str:
        y = self.op("MatMul", x, self.weight(f"{prefix}/weight", transpose=True))
        return self.op("Add", y, self.weight(f"{prefix}/bias"))

    def norm(self, x: str, prefix: str) -> str:
        gamma, beta = self.weight(f"{prefix}/gamma"), self.weight(f"{prefix}/beta")
        return self.op("LayerNormalization", x, gamma, beta, axis=-1, epsilon=1e-5)

    def gelu(self, x: str) -> str:  # exact (erf) GELU, as Whisper
        erf = self.op("Erf", self.op("Mul", x, self.const(2**-0.5)))
        half = self.op("Mul", x, self.const(0.5))
        return self.op("Mul", half, self.op("Add", erf, self.const(1.0)))

    def ffn(self, x: str, prefix: str) -> str:
        h = self.gelu(self.linear(self.norm(x, f"{prefix}/layer_norm"), f"{prefix}/linear_0"))
        return self.op("Add", x, self.linear(h, f"{prefix}/linear_1"))

    def attend(self, q: str, k: str, v: str, heads: int, mask: str | None = None) -> str:
        def split_heads(t: str) -> str:  # (N, T, D) → (N, H, T, D/H)
            t = self.op("Reshape", t, self.i64([0, 0, heads, -1]))
            return self.op("Transpose", t, perm=[0, 2, 1, 3])

        qh, kh, vh = split_heads(q), split_heads(k), split_heads(v)
        scores = self.op("MatMul", qh, self.op("Transpose", kh, perm=[0, 1, 3, 2]))
        d_head = self.w["encoder/conv1/weight"].shape[0] // heads
        scores = self.op("Mul", scores, self.const(d_head**-0.5))
        if mask is not None:
            scores = self.op("Add", scores, mask)
        out = self.op("MatMul", self.op("Softmax", scores, axis=-1), vh)
        out = self.op("Transpose", out, perm=[0, 2, 1, 3])
        return self.op("Reshape", out, self.i64([0, 0, -1]))

    def save(self, path: Path, inputs: list[Any], outputs: list[Any], meta: dict) -> None:
        from onnx import helper

        graph = helper.make_graph(self.nodes, path.stem, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8  # sherpa-onnx 2.0.1 bundles onnxruntime 1.28
        for key, value in meta.items():
            entry = model.metadata_props.add()
            entry.key, entry.value = key, str(value)
        path.write_bytes(model.SerializeToString())


def convert_ct2_whisper(ct2_dir: Path, out: Path) -> None:
    """CTranslate2 Whisper → ``tiny.en-encoder.onnx``, ``-decoder.onnx``, ``-tokens.txt``
    with the inputs, outputs and metadata sherpa-onnx's Whisper recognizer expects."""
    from onnx import TensorProto, helper

    w = read_ct2(ct2_dir / "model.bin")
    heads = int(w["encoder/num_heads"])
    state, mels = w["encoder/conv1/weight"].shape[:2]
    vocab = w["decoder/embeddings/weight"].shape[0]
    text_ctx = w["decoder/position_encodings/encodings"].shape[0]

    def count(side: str) -> int:
        return sum(1 for k in w if k.startswith(f"{side}/") and k.endswith("linear_1/weight")
                   and "self_attention" in k)  # fmt: skip

    layers = {side: count(side) for side in ("encoder", "decoder")}
    f32, i64 = TensorProto.FLOAT, TensorProto.INT64
    tensor = helper.make_tensor_value_info

    # Encoder: mel → every decoder layer's cross-attention keys and values. sherpa-onnx
    # feeds the utterance plus tail padding rather than 30 s, so the positions are sliced.
    g = Graph(w)
    x = g.op("Conv", "mel", g.weight("encoder/conv1/weight"), g.weight("encoder/conv1/bias"),
             pads=[1, 1])  # fmt: skip
    x = g.op("Conv", g.gelu(x), g.weight("encoder/conv2/weight"),
             g.weight("encoder/conv2/bias"), pads=[1, 1], strides=[2])  # fmt: skip
    x = g.op("Transpose", g.gelu(x), perm=[0, 2, 1])
    frames = g.op("Slice", g.op("Shape", x), g.i64([1]), g.i64([2]))
    positions = g.weight("encoder/position_encodings/encodings")
    x = g.op("Add", x, g.op("Slice", positions, g.i64([0]), frames, g.i64([0])))
    for i in range(layers["encoder"]):
        p = f"encoder/layer_{i}/self_attention"
        q, k, v = g.split(g.linear(g.norm(x, f"{p}/layer_norm"), f"{p}/linear_0"), 3)
        x = g.op("Add", x, g.linear(g.attend(q, k, v, heads), f"{p}/linear_1"))
        x = g.ffn(x, f"encoder/layer_{i}/ffn")
    audio = g.norm(x, "encoder/layer_norm")
    cross: dict[str, list[str]] = {"k": [], "v": []}
    for i in range(layers["decoder"]):
        k, v = g.split(g.linear(audio, f"decoder/layer_{i}/attention/linear_1"), 2)
        cross["k"].append(g.op("Unsqueeze", k, g.i64([0])))
        cross["v"].append(g.op("Unsqueeze", v, g.i64([0])))
    g.op("Concat", *cross["k"], out="n_layer_cross_k", axis=0)
    g.op("Concat", *cross["v"], out="n_layer_cross_v", axis=0)
    cross_shape = [layers["decoder"], "n_audio", "n_frames", state]

    tokenizer = json.loads((ct2_dir / "tokenizer.json").read_text(encoding="utf-8"))
    special = {t["content"]: t["id"] for t in tokenizer["added_tokens"]}
    eot, sot = special["<|endoftext|>"], special["<|startoftranscript|>"]
    languages = [(c[2:-2], i) for c, i in special.items() if c[2:-2].isalpha() and len(c) <= 7]
    suppress = json.loads((ct2_dir / "config.json").read_text())["suppress_ids"]
    meta = {
        "model_type": "whisper-tiny.en", "version": "1", "maintainer": "fayd tests",
        "n_mels": mels, "n_audio_ctx": w["encoder/position_encodings/encodings"].shape[0],
        "n_audio_state": state, "n_audio_head": heads, "n_audio_layer": layers["encoder"],
        "n_vocab": vocab, "n_text_ctx": text_ctx, "n_text_state": state,
        "n_text_head": heads, "n_text_layer": layers["decoder"], "sot_sequence": sot,
        "all_language_tokens": ",".join(str(i) for _, i in languages),
        "all_language_codes": ",".join(c for c, _ in languages),
        "sot": sot, "sot_index": 0, "eot": eot, "blank_id": 220,  # 220 = " "
        "is_multilingual": int(vocab >= 51865), "no_speech": special["<|nocaptions|>"],
        "non_speech_tokens": ",".join(str(i) for i in suppress if i < eot),
        "transcribe": special["<|transcribe|>"], "translate": special["<|translate|>"],
        "sot_prev": special["<|startofprev|>"], "sot_lm": special["<|startoflm|>"],
        "no_timestamps": special["<|notimestamps|>"],
    }  # fmt: skip
    g.save(
        out / "tiny.en-encoder.onnx",
        [tensor("mel", f32, ["n_audio", mels, "n_mel_frames"])],
        [tensor(n, f32, cross_shape) for n in ("n_layer_cross_k", "n_layer_cross_v")],
        meta,
    )

    # Decoder: tokens at ``offset`` + self-attention caches of text_ctx positions → logits.
    g = Graph(w)
    n_tokens = g.op("Slice", g.op("Shape", "tokens"), g.i64([1]), g.i64([2]))
    end = g.op("Add", "offset", n_tokens)
    positions = g.weight("decoder/position_encodings/encodings")
    x = g.op("Gather", g.weight("decoder/embeddings/weight"), "tokens")
    x = g.op("Add", x, g.op("Slice", positions, "offset", end, g.i64([0])))
    # Causal mask over the cache: the query at offset+i sees keys 0 … offset+i.
    rows = g.op("Range", g.i64(0), g.op("Squeeze", n_tokens, g.i64([0])), g.i64(1))
    rows = g.op("Add", rows, "offset")
    cols = g.op("Range", g.i64(0), g.op("Squeeze", end, g.i64([0])), g.i64(1))
    future = g.op("Greater", g.op("Unsqueeze", cols, g.i64([0])),
                  g.op("Unsqueeze", rows, g.i64([1])))  # fmt: skip
    mask = g.op("Where", future, g.const(-1e9), g.const(0.0))
    new_caches: dict[str, list[str]] = {"k": [], "v": []}
    for i in range(layers["decoder"]):
        p, layer = f"decoder/layer_{i}", g.i64([i])
        h = g.norm(x, f"{p}/self_attention/layer_norm")
        q, k, v = g.split(g.linear(h, f"{p}/self_attention/linear_0"), 3)
        seen = {}
        for kv, fresh in (("k", k), ("v", v)):
            cache = g.op("Squeeze", g.op("Gather", f"in_n_layer_self_{kv}_cache", layer, axis=0),
                         g.i64([0]))  # fmt: skip
            before = g.op("Slice", cache, g.i64([0]), "offset", g.i64([1]))
            after = g.op("Slice", cache, end, g.i64([text_ctx]), g.i64([1]))
            cache = g.op("Concat", before, fresh, after, axis=1)
            new_caches[kv].append(g.op("Unsqueeze", cache, g.i64([0])))
            seen[kv] = g.op("Slice", cache, g.i64([0]), end, g.i64([1]))
        attn = g.attend(q, seen["k"], seen["v"], heads, mask)
        x = g.op("Add", x, g.linear(attn, f"{p}/self_attention/linear_1"))
        q = g.linear(g.norm(x, f"{p}/attention/layer_norm"), f"{p}/attention/linear_0")
        ck, cv = (g.op("Squeeze", g.op("Gather", f"n_layer_cross_{kv}", layer, axis=0),
                       g.i64([0])) for kv in ("k", "v"))  # fmt: skip
        x = g.op("Add", x, g.linear(g.attend(q, ck, cv, heads), f"{p}/attention/linear_2"))
        x = g.ffn(x, f"{p}/ffn")
    x = g.op("Reshape", g.norm(x, "decoder/layer_norm"), g.i64([-1, state]))
    # Logits against the token embeddings (Gemm transB: the 80 MB table is stored once).
    logits = g.op("Gemm", x, g.weight("decoder/embeddings/weight"), transB=1)
    batch_tokens = g.op("Slice", g.op("Shape", "tokens"), g.i64([0]), g.i64([2]))
    g.op("Reshape", logits, g.op("Concat", batch_tokens, g.i64([vocab]), axis=0), out="logits")
    g.op("Concat", *new_caches["k"], out="out_n_layer_self_k_cache", axis=0)
    g.op("Concat", *new_caches["v"], out="out_n_layer_self_v_cache", axis=0)
    cache_shape = [layers["decoder"], "n_audio", text_ctx, state]
    g.save(
        out / "tiny.en-decoder.onnx",
        [
            tensor("tokens", i64, ["n_audio", "n_tokens"]),
            tensor("in_n_layer_self_k_cache", f32, cache_shape),
            tensor("in_n_layer_self_v_cache", f32, cache_shape),
            tensor("n_layer_cross_k", f32, cross_shape),
            tensor("n_layer_cross_v", f32, cross_shape),
            tensor("offset", i64, [1]),
        ],
        [
            tensor("logits", f32, ["n_audio", "n_tokens", vocab]),
            tensor("out_n_layer_self_k_cache", f32, cache_shape),
            tensor("out_n_layer_self_v_cache", f32, cache_shape),
        ],
        {},
    )

    # Tokens as sherpa-onnx reads them: each token's bytes in base64, as in tiktoken files.
    # CTranslate2's vocabulary spells bytes with GPT-2's printable byte alphabet: undo it.
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = (b for b in range(256) if b not in printable)
    byte_of = {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(others)}
    vocabulary = (ct2_dir / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:eot]
    lines = (
        f"{base64.b64encode(bytes(byte_of[c] for c in token)).decode()} {i}\n"
        for i, token in enumerate(vocabulary)
    )
    (out / "tiny.en-tokens.txt").write_text("".join(lines), encoding="ascii")


# --- what is tested for every kind: discovery, and errors instead of a dead process -----------


def touch(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).write_bytes(b"")


def test_release_folder_layouts_are_found(tmp_path: Path) -> None:
    # File names as in sherpa-onnx's release archives.
    touch(tmp_path, "tiny.en-encoder.onnx", "tiny.en-encoder.int8.onnx")
    touch(tmp_path, "tiny.en-decoder.onnx", "tiny.en-decoder.int8.onnx", "tiny.en-tokens.txt")
    files = find_model_files(tmp_path, "whisper")
    assert files["encoder"].name == "tiny.en-encoder.int8.onnx"
    assert files["decoder"].name == "tiny.en-decoder.int8.onnx"
    assert files["tokens"].name == "tiny.en-tokens.txt"
    assert find_model_files(tmp_path, "whisper", prefer_int8=False)["encoder"].name == (
        "tiny.en-encoder.onnx"
    )


def test_single_model_kinds(tmp_path: Path) -> None:
    touch(tmp_path, "model.int8.onnx", "tokens.txt")
    for kind in ("paraformer", "sense_voice"):
        assert find_model_files(tmp_path, kind)["model"].name == "model.int8.onnx"


def test_zipformer_transducer(tmp_path: Path) -> None:
    touch(tmp_path, "encoder-epoch-99-avg-1.int8.onnx", "decoder-epoch-99-avg-1.onnx")
    touch(tmp_path, "joiner-epoch-99-avg-1.int8.onnx", "tokens.txt")
    files = find_model_files(tmp_path, "zipformer")
    assert files["decoder"].name == "decoder-epoch-99-avg-1.onnx"  # no int8 one: the full
    assert set(files) == {"encoder", "decoder", "joiner", "tokens"}


def test_missing_and_incomplete_folders_are_named(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="folder not found"):
        SherpaAsr(tmp_path / "nope", kind="whisper")
    touch(tmp_path, "tiny.en-encoder.onnx")
    with pytest.raises(ModelError, match=r"incomplete: no \*decoder\*\.onnx, \*tokens\.txt"):
        SherpaAsr(tmp_path, kind="whisper")
    with pytest.raises(ModelError, match="known: whisper, paraformer, sense_voice, zipformer"):
        SherpaAsr(tmp_path, kind="kaldi")


# The sherpa-onnx source file that rejects the graph: proof that the child built the right
# recognizer with arguments sherpa-onnx accepted (a wrong keyword would fail before it).
LOADER = {
    "whisper": "offline-whisper-model.cc",
    "paraformer": "offline-paraformer-model.cc",
    "sense_voice": "offline-sense-voice-model.cc",
    "zipformer": "offline-transducer-model.cc",
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_graph_sherpa_would_exit_on_is_refused(tmp_path: Path, kind: str) -> None:
    # A real ONNX graph of the wrong kind (the Silero VAD) in every role: sherpa-onnx calls
    # exit() on it; the child-process check turns that into a ModelError.
    vad = resolve("vad").files["model"]
    for role, pattern in KINDS[kind].items():
        name = pattern.replace("*", "x", 1).replace("*", "")
        if role == "tokens":
            (tmp_path / name).write_text("a 0\nb 1\n")
        else:
            shutil.copyfile(vad, tmp_path / name)
    with pytest.raises(ModelError, match=f"{kind} model .* is not usable: .*{LOADER[kind]}"):
        SherpaAsr(tmp_path, kind=kind)


def test_junk_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"not a model")
    (tmp_path / "tokens.txt").write_text("a 0\n")
    with pytest.raises(ModelError, match="not usable"):
        SherpaAsr(tmp_path, kind="sense_voice")
