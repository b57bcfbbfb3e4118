"""The PyTorch door's models: torchvision's, and small transformers configurations.

Each is built with random weights (torchvision's `weights=None`, BatchNorm statistics
from the example batch: torch_calibration; transformers from a config, no hub access),
seeded, and exported with `torch.export` at a static input shape (TVM's tutorials' path,
`from_exported_program`), once per (torch, torchvision, transformers) version into the
cache, and so is its refusal: a model that does not export is `unsupported` with torch's
reason. The same program through `torch.onnx.export` is the ONNX door's twin (`onnx_twin`).
torch is an optional extra; without it a torch case is "cannot test here" (exit 125; the
pytest plugin skips it, saying so). Listing the catalog never imports torch: `listing()`
reads a JSON file written once per torchvision version by a child that does.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import json
import os
import subprocess
import sys

from harness import classify, paths
from harness.doors import door, torch_calibration
from harness.doors.door import ExtraUnavailable
from harness.verdict import first_line

FAMILIES = ("classification", "segmentation", "detection", "video", "optical_flow",
            "quantization")
FORMAT = 2    # bump when what is exported changes: the cache starts afresh (2: calibrated)
_EXPORT = "program = torch.export.export(model, inputs)"   # a recipe's last line


class TorchUnavailable(ExtraUnavailable):
    """torch (or torchvision / transformers) is not installed here: cannot test."""
    extra = "torch"


class ExportRefused(Exception):
    """The model does not export (or its twin does not): the case is unsupported."""


def versions() -> dict[str, str | None]:
    """The torch stack's versions, without importing it."""
    return dict(_versions())


@functools.cache
def _versions() -> dict[str, str | None]:
    """Read once a process: metadata lookups cost a millisecond each, and listing the
    catalog asks for every model."""
    return {name: paths.package_version(name)
            for name in ("torch", "torchvision", "transformers", "onnxscript")}


def require(*names: str) -> None:
    """Import the torch stack's `names`, or say it is missing and how to install it."""
    door.require("torch", *names, error=TorchUnavailable)


def cache_folder() -> str:
    stack = versions()
    label = "-".join(f"{name}{stack[name]}" for name in ("torch", "torchvision",
                                                          "transformers"))
    return os.path.join(paths.cache_dir(), "torch-export", f"{label}-v{FORMAT}")


# ---- what each model is fed ---------------------------------------------------------

# Input shapes per torchvision family; models that need more than the family's (an
# image size fixed by the architecture) are named. Static, so exports are exact.
_IMAGE = (1, 3, 224, 224)
_CLIP = (1, 3, 16, 112, 112)
_SHAPES = {"inception_v3": (1, 3, 299, 299), "quantized_inception_v3": (1, 3, 299, 299),
           "mvit_v1_b": (1, 3, 16, 224, 224), "mvit_v2_s": (1, 3, 16, 224, 224),
           "s3d": (1, 3, 16, 224, 224)}


def _builder_arguments(family: str) -> dict:
    """Random weights, never a download: detection and segmentation builders fetch ImageNet
    weights for their backbone unless told not to (`weights_backbone`)."""
    arguments = {"weights": None}
    if family in ("detection", "segmentation"):
        arguments["weights_backbone"] = None
    if family == "quantization":
        arguments["quantize"] = True
    return arguments


def _torchvision_inputs(name: str, family: str) -> list[tuple[int, ...]]:
    if family == "optical_flow":
        return [_IMAGE, _IMAGE]          # two frames
    if family == "video":
        return [_SHAPES.get(name, _CLIP)]
    return [_SHAPES.get(name, _IMAGE)]


# Small transformers configurations: a few layers, tiny widths, static shapes. The
# architectures are the real ones (attention, rotary embeddings, layer norms, GELU...).
TRANSFORMERS = {
    "bert": ("BertConfig", "BertModel", dict(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
        vocab_size=512, max_position_embeddings=64), ("input_ids", (1, 16))),
    "gpt2": ("GPT2Config", "GPT2Model", dict(
        n_embd=64, n_layer=2, n_head=2, vocab_size=512, n_positions=64, use_cache=False),
        ("input_ids", (1, 16))),
    "vit": ("ViTConfig", "ViTModel", dict(
        image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=128), ("pixel_values", (1, 3, 32, 32))),
    "llama": ("LlamaConfig", "LlamaModel", dict(
        hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=512, max_position_embeddings=64, use_cache=False),
        ("input_ids", (1, 16))),
    "whisper-encoder": ("WhisperConfig", "WhisperModel", dict(
        d_model=64, encoder_layers=2, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128,
        num_mel_bins=16, max_source_positions=32, vocab_size=512, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, decoder_start_token_id=1),
        ("input_features", (1, 16, 64))),
}


@dataclasses.dataclass(frozen=True)
class TorchModel:
    """One model of the PyTorch door: `family` is a torchvision family or "transformers"."""
    family: str
    name: str

    @property
    def key(self) -> str:
        return f"{self.family}-{self.name}"

    def input_shapes(self) -> list[tuple[int, ...]]:
        if self.family == "transformers":
            return [TRANSFORMERS[self.name][3][1]]
        return _torchvision_inputs(self.name, self.family)

    # ---- building -------------------------------------------------------------

    def build(self):
        """(module in eval mode, example inputs), seeded: the same on every run."""
        require("torch", "transformers" if self.family == "transformers" else "torchvision")
        import torch
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(0)
        if self.family == "transformers":
            config_name, model_name, config, (input_name, shape) = TRANSFORMERS[self.name]
            import transformers
            model = _last_hidden_state(getattr(transformers, model_name)(
                getattr(transformers, config_name)(**config)), self.name)
            if input_name == "input_ids":
                inputs = (torch.randint(0, 512, shape, generator=generator),)
            else:
                inputs = (torch.randn(*shape, generator=generator),)
            return model.eval(), inputs
        import torchvision
        inputs = tuple(torch.randn(*shape, generator=generator)
                       for shape in _torchvision_inputs(self.name, self.family))

        def make():
            torch.manual_seed(0)
            return torchvision.models.get_model(self.name, **_builder_arguments(self.family))
        return torch_calibration.calibrated(make, inputs), inputs

    def recipe(self, export: bool = True) -> str:
        """Python source that builds this model as `build` does (for repro.py), binding
        `model` and `inputs`, and with `export`, `program` (torch.export's)."""
        if self.family == "transformers":
            config_name, model_name, config, (input_name, shape) = TRANSFORMERS[self.name]
            make = "torch.randint(0, 512, {shape})" if input_name == "input_ids" else \
                "torch.randn(*{shape})"
            return "\n".join([
                "import torch, transformers",
                "torch.manual_seed(0)",
                f"inner = transformers.{model_name}(transformers.{config_name}(**{config!r}))",
                "class Model(torch.nn.Module):",
                "    def __init__(self, inner):",
                "        super().__init__()",
                "        self.inner = inner",
                "    def forward(self, x):",
                "        return " + _last_hidden_state_text(self.name),
                "model = Model(inner).eval()",
                f"inputs = ({make.format(shape=shape)},)"] + ([_EXPORT] if export else []))
        return torch_calibration.torchvision_recipe(
            self.name, _builder_arguments(self.family),
            _torchvision_inputs(self.name, self.family)) + ("\n" + _EXPORT if export else "")

    # ---- the cached export ----------------------------------------------------

    def export(self) -> str:
        """Export once into the cache (or raise its refusal); the program file's path."""
        return self._cached(".pt2", self._export_program)

    def program(self):
        """The exported program (torch.export), from the cache when it was made before."""
        path = self.export()
        require("torch")
        import torch
        return torch.export.load(path)

    def onnx_twin(self):
        """The same exported program through `torch.onnx.export`, as an ONNX model."""
        require("onnxscript")
        path = self._cached(".onnx", self._export_onnx)
        import onnx
        return onnx.load(path)

    def _export_program(self, path: str) -> None:
        import torch
        # code on the path that is not ours raising is raised as it is
        model, inputs = classify.Call.of("export", self.build,
                                         reraise=(TorchUnavailable, OSError)).result()
        with torch.no_grad():
            program = torch.export.export(model, inputs)
        torch.export.save(program, path)

    def _export_onnx(self, path: str) -> None:
        import torch
        exported = torch.onnx.export(self.program(), dynamo=True, verbose=False)
        exported.save(path)

    def refusal(self, twin: bool = False) -> str | None:
        """torch's refusal of this model as cached by an earlier export (None: exported,
        or never tried): what `list --json` shows without exporting anything."""
        for suffix in (".pt2",) + ((".onnx",) if twin else ()):
            refused = os.path.join(cache_folder(), self.key + suffix + ".refused")
            if os.path.exists(refused):
                with open(refused) as handle:
                    return handle.read()
        return None

    def _cached(self, suffix: str, make) -> str:
        """The cache file for `suffix`, made under a lock (two workers may want the same
        model); a refusal is cached beside it and raised again as ExportRefused."""
        folder = cache_folder()
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, self.key + suffix)
        refused = path + ".refused"
        with open(path + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(path) and not os.path.exists(refused):
                try:
                    with _quiet():
                        make(path + ".partial")
                    os.replace(path + ".partial", path)
                except (TorchUnavailable, ExportRefused, OSError, classify.HarnessBug):
                    raise   # missing torch, the program's own refusal (the twin's), a download
                    #         (URLError), the disk, our bug building it: not this export's refusal
                except Exception as exc:  # noqa: BLE001 - torch's refusal: the case's verdict
                    what = "torch.export" if suffix == ".pt2" else "torch.onnx.export"
                    with open(refused, "w") as handle:
                        handle.write(f"{what} refused {self.name}: {type(exc).__name__}: "
                                     f"{first_line(exc)[:400]}")
        if os.path.exists(refused):
            with open(refused) as handle:
                raise ExportRefused(handle.read())
        return path


def _last_hidden_state(inner, name: str):
    """A transformers model as a module returning one tensor (the last hidden state):
    an exported program with one output, whatever the model's output class is."""
    import torch

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner.encoder(x).last_hidden_state if name == "whisper-encoder" \
                else self.inner(x).last_hidden_state
    return Model()


def _last_hidden_state_text(name: str) -> str:
    """`_last_hidden_state`'s forward, as source for the recipe."""
    call = "self.inner.encoder(x)" if name == "whisper-encoder" else "self.inner(x)"
    return f"{call}.last_hidden_state"


@contextlib.contextmanager
def _quiet():
    """torch's exporters print progress and warnings by the page: keep the child's log
    readable (a failure still raises with its message)."""
    import warnings
    with warnings.catch_warnings(), open(os.devnull, "w") as devnull, \
            contextlib.redirect_stdout(devnull):
        warnings.simplefilter("ignore")
        yield


# ---- the listing ----------------------------------------------------------------------

def listing() -> dict[str, list[str]]:
    """{torchvision family: model names} as `torchvision.models.list_models` says, read
    from a file written once per torchvision version; {} when torchvision is missing."""
    version = versions()["torchvision"]
    if version is None:
        return {}
    return _listing(version)


@functools.cache
def _listing(version: str) -> dict[str, list[str]]:
    path = os.path.join(paths.cache_dir(), "torch-export", f"torchvision{version}-models.json")
    if not os.path.exists(path):
        text = subprocess.run([sys.executable, "-m", "harness.doors.torch_models", "--list"],
                              capture_output=True, text=True, check=True,
                              cwd=paths.REPO_ROOT).stdout
        paths.write_shared(path, text)   # pytest's workers may list at once
    with open(path) as handle:
        return json.load(handle)


def _list_models() -> dict[str, list[str]]:
    from torchvision import models
    families = {}
    for family in FAMILIES[1:]:
        families[family] = sorted(models.list_models(module=getattr(models, family)))
    others = set().union(*families.values())
    families["classification"] = sorted(set(models.list_models()) - others)
    return {family: families[family] for family in FAMILIES}


if __name__ == "__main__" and sys.argv[1:] == ["--list"]:
    json.dump(_list_models(), sys.stdout, indent=1)
