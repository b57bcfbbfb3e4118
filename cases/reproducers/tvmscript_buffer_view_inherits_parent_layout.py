#!/usr/bin/env python3
"""Reproducer: TVMScript prints a reshaped view as `parent.view(shape)`; it parses back with
the parent's layout instead of its own.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), pass tirx.FlattenBuffer (its
             input): <root>.functions[I.GlobalVar("main")].body.seq[3].buffer.ty.layout.shard[0].extent
             (python -m harness guard-suite
             tests/python/tirx/transform/test_transform_flatten_buffer.py::
             test_flatten_remaps_loads_in_view_shape, TVM's own tests at v0.26.0 on 0.27.0.post1)
On:          apache-tvm 0.25.0, 0.26.0 and 0.27.0.post1 (measured)
Cause:       a buffer declared on another buffer's data with another shape and the default
             (row-major) layout of that shape: the printer writes it as `data.view(32)`
             without a layout, since "a default-to-default reshape is still represented by
             view(*shape)" (src/tirx/script/printer/stmt.cc:623); but Buffer.view(*shape)
             with no layout re-declares the view with the parent's layout
             (python/tvm/tirx/_buffer_view.py:123), so a 32-element view comes back with the
             64-element layout T.S[64:1] instead of T.S[32:1]. The text is the same, the
             module is not.
Run:         python tvmscript_buffer_view_inherits_parent_layout.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    import tvm_ffi
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

# A 32-element view over a 64-element shared buffer, both with their default layouts.
SCRIPT = """
# from tvm.script import ir as I
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def main():
        data = T.alloc_buffer([64], "float16", scope="shared")
        view = T.decl_buffer((32,), "float16", data.data, scope="shared")
        view[0] = T.float16(0)
"""
try:
    module = tvm.script.from_source(SCRIPT)
except Exception as exc:  # noqa: BLE001 - this release's TVMScript differs: cannot run here
    print(f"cannot run here: the module does not parse on this release: {exc}")
    sys.exit(2)


def view_layout(mod):
    for stmt in mod["main"].body.seq:
        buffer = getattr(stmt, "buffer", None)
        if buffer is not None and buffer.name == "view":
            return getattr(buffer, "layout", None)
    return None


copy = tvm.script.from_source(module.script(show_meta=True))
if not tvm_ffi.structural_equal(module, copy):
    print("reproduces: the TVMScript copy differs at "
          f"{tvm_ffi.get_first_structural_mismatch(module, copy)[0]}: the view's layout is "
          f"{view_layout(module)} in the original, {view_layout(copy)} in the copy")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)
