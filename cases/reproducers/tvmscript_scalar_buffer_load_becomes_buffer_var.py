#!/usr/bin/env python3
"""Reproducer: TVMScript prints a load of a one-element buffer as the bare buffer name.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), passes tirx.BindTarget (input
             and output) and tirx.TilePrimitiveDispatch (output):
             <root>.functions[I.GlobalVar("payload_vector")].body.body.value.args[1]
             (test_rejects_invalid_payload_types[vector]) and
             <root>.functions[I.GlobalVar("main")].body.body.seq[4033].indices[0]
             (test_extended_declaration_limit) (python -m harness guard-suite
             tests/python/tirx/iket/test_iket_profiler.py, TVM's own tests at v0.26.0 on
             0.27.0.post1)
On:          apache-tvm 0.26.0 and 0.27.0.post1 (measured: the copy silently differs);
             0.25.0 prints the same text and its parser refuses it (also exit 1)
Cause:       src/tirx/script/printer/buffer.cc (BufferLoad / BufferStore printers): for a
             buffer of shape (1,) with the default layout ("scalar buffer") a load prints as
             `s` and a store as `s = v`, whatever the index. The parser reads `s` as the
             buffer variable itself, not a load: as a call argument it is accepted, so
             T.call_extern("int32", "use", s[0]) comes back passing the buffer (its handle)
             instead of the int32 value; `s[n] = 5` comes back as `s[0] = 5`.
Run:         python tvmscript_scalar_buffer_load_becomes_buffer_var.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

# The load s[0] is an int32 value handed to an extern function.
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def main(s: T.Buffer((1,), "int32")):
        T.evaluate(T.call_extern("int32", "use", s[0]))
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print(f"cannot run here: the module does not parse on this release: {exc}")
    sys.exit(2)

text = module.script(show_meta=True)
try:
    copy = tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001 - the printed text itself is the bug's evidence
    line = next((text_line.strip() for text_line in text.splitlines() if "use" in text_line), "?")
    print(f"reproduces: the load prints as `{line}`, which does not parse back: "
          f"{str(exc).strip().splitlines()[0][:200]}")
    sys.exit(1)
if not tvm_ffi.structural_equal(module, copy):
    arg = copy["main"].body.value.args[1]
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}: the call's argument is "
          f"now a {type(arg).__name__} of type {type(arg.ty).__name__} (the buffer "
          f"variable {arg.name}), not the int32 load s[0]")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)
