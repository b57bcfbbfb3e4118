"""The TFLite door: a .tflite flatbuffer through TVM's TFLite frontend (`from_tflite`).

The mobile path: most edge deployments hand TVM a .tflite file. Models:
- a `.tflite` file;
- a Python model file that defines, at module level,
      tflite_model   the flatbuffer's bytes (what `tf.lite.TFLiteConverter.convert()`
                     returns: a Keras model with random weights, quantized or not);
  it is run once per (file text, TensorFlow version) and its flatbuffer cached, since
  TensorFlow's import and converter take seconds. The catalog's TFLite models are such
  files (cases/tflite/), made on the machine from code, no download.
The reference is the TFLite interpreter itself (ai-edge-litert's LiteRT, the package
TensorFlow points to). Everything needs the `tflite` extra (pip install -e '.[tflite]').
"""
from __future__ import annotations

import dataclasses
import hashlib
import os

from harness import paths
from harness.doors import python_file
from harness.doors.door import Door, ReferenceUnavailable, require
from harness.tvmapi import calls
from harness.verdict import BadInput, first_line

MODEL = "tflite_model"   # the name a model file defines
EXTRA = "tflite"
_IDENTIFIER = b"TFL3"    # a TFLite flatbuffer's file identifier (bytes 4-8)


@dataclasses.dataclass(eq=False)
class TFLiteModel:
    """A TFLite flatbuffer and how repro.py makes it again."""
    label: str
    flatbuffer: bytes = dataclasses.field(repr=False)
    recipe: str = dataclasses.field(repr=False)


def check_flatbuffer(data, label: str) -> bytes:
    """`data` as the flatbuffer's bytes, or a BadInput naming `label` and the fix."""
    if not isinstance(data, (bytes, bytearray)):
        raise BadInput(f"{label}: `{MODEL}` must be the flatbuffer's bytes (what "
                       f"TFLiteConverter.convert() returns), not a {type(data).__name__}")
    if bytes(data[4:8]) != _IDENTIFIER:
        raise BadInput(f"{label} is not a TFLite flatbuffer (no {_IDENTIFIER.decode()} "
                       "identifier); write it with tf.lite.TFLiteConverter")
    return bytes(data)


def _converted(path: str) -> bytes:
    """The flatbuffer a model file makes, from the cache when this text made it before."""
    text = python_file.read(path)
    digest = hashlib.sha256(text.encode()).hexdigest()[:20]
    folder = os.path.join(paths.cache_dir(), "tflite", f"tensorflow{_tensorflow_version()}")
    cached = os.path.join(folder, f"{digest}.tflite")
    if os.path.exists(cached):
        with open(cached, "rb") as handle:
            return handle.read()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")   # TensorFlow's start-up chatter
    flatbuffer = check_flatbuffer(python_file.run(path).get(MODEL), path)
    paths.write_shared(cached, flatbuffer)
    return flatbuffer


def _tensorflow_version() -> str:
    """The cache's key: another converter writes another flatbuffer."""
    return paths.package_version("tensorflow-cpu") or paths.package_version("tensorflow") \
        or "none"


class TFLiteDoor(Door):
    name = "tflite"
    frontend = "TFLite"
    suffixes = (".tflite", ".py")
    py_binds = MODEL
    extra = EXTRA
    reference = "TFLite interpreter"
    reproducer = "tflite"
    converter_map = "tflite"

    def validate(self, path: str) -> None:
        if path.endswith(".tflite"):
            with open(python_file.existing(path), "rb") as handle:
                check_flatbuffer(handle.read(8), path)
            return
        self.require_names(path, "TFLite",
                           {MODEL: "the bytes TFLiteConverter.convert() returns"})

    def load(self, path: str) -> TFLiteModel:
        require(EXTRA, "tflite")
        if path.endswith(".tflite"):
            with open(python_file.existing(path), "rb") as handle:
                flatbuffer = check_flatbuffer(handle.read(), path)
            recipe = f"flatbuffer = open({os.path.abspath(path)!r}, 'rb').read()"
            return TFLiteModel(path, flatbuffer, recipe)
        require(EXTRA, "tensorflow")
        return TFLiteModel(path, _converted(path), "\n".join([
            "import os",
            "os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '3')",
            f"_source = {python_file.read(path)!r}",
            "_namespace = {'__name__': 'model_file'}",
            "exec(compile(_source, 'model.py', 'exec'), _namespace)",
            f"flatbuffer = _namespace[{MODEL!r}]"]))

    def owns(self, model) -> bool:
        return isinstance(model, TFLiteModel)

    def inputs(self, path: str) -> dict:
        """A .tflite file's inputs from its flatbuffer (the `tflite` schema package: no
        TensorFlow, no TVM); {} for a model file (only running it would tell) or where the
        schema package is missing or the file does not read."""
        if not path.endswith(".tflite"):
            return {}
        try:
            import tflite
            with open(path, "rb") as handle:
                graph = tflite.Model.GetRootAsModel(handle.read(), 0).Subgraphs(0)
            return {graph.Tensors(index).Name().decode(): [int(extent) for extent in
                                                           graph.Tensors(index).ShapeAsNumpy()]
                    for index in graph.InputsAsNumpy()}
        except Exception:  # noqa: BLE001 - a listing says nothing rather than fail
            return {}

    def to_relax(self, model: TFLiteModel):
        return calls.from_tflite(model.flatbuffer)

    def recipe(self, model: TFLiteModel) -> str:
        return model.recipe

    def answer(self, model: TFLiteModel, arrays: list) -> list:
        """The TFLite interpreter on the same arrays, inputs and outputs in the subgraph's
        order (TVM's `main` takes and returns them in that order)."""
        try:
            from ai_edge_litert.interpreter import Interpreter
        except ImportError as exc:
            raise ReferenceUnavailable(f"the TFLite interpreter is not installed ({exc}): "
                                       f"pip install -e '.[{EXTRA}]'") from None
        try:
            interpreter = Interpreter(model_content=model.flatbuffer, num_threads=1)
            interpreter.allocate_tensors()
            for detail, array in zip(interpreter.get_input_details(), arrays, strict=True):
                interpreter.set_tensor(detail["index"], array.astype(detail["dtype"]))
            interpreter.invoke()
            return [interpreter.get_tensor(detail["index"]).copy()
                    for detail in interpreter.get_output_details()]
        except Exception as exc:  # noqa: BLE001 - the interpreter refusing is not TVM's
            raise ReferenceUnavailable(f"the TFLite interpreter cannot run the model on the "
                                       f"drawn inputs: {type(exc).__name__}: "
                                       f"{first_line(exc)[:300]}") from None


DOOR = TFLiteDoor()
