#!/usr/bin/env python3
"""Reproducer: TVMScript prints an ExternFunc as R.ExternFunc(symbol[, type]) without its attrs; they parse back as None.

Seen:        lossy-roundtrip at stage suite (copy, tvmscript), passes LowerRuntimeBuiltin and
             VMShapeLower: <root>.functions[I.GlobalVar("torch_relu")].attrs.__dict__["is_pyfunc"]
             (python -m harness guard-suite tests/python/relax/test_base_py_module_printer.py,
             TVM's own tests at v0.26.0 on 0.26.0: test_call_py_func_with_base_py_module)
On:          see the triage note (notes/s36/triage-E.md)
Cause:       an @I.pyfunc of a BasePyModule is an ExternFunc whose attrs say what it is
             (is_pyfunc, function_type "python", python_function_name, python_source). The
             ExternFunc printer (src/relax/script/printer/function.cc:138) writes only the
             symbol and a non-default type: `torch_relu = R.ExternFunc("torch_relu")`. Parsed
             back, the function has no attrs. The text is the same, the module is not (JSON and
             deepcopy carry the attrs exactly).
Run:         python tvmscript_extern_func_attrs_dropped.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
    from tvm import relax
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)
try:
    from tvm_ffi import structural_equal
except ImportError:                     # 0.25 and older
    structural_equal = tvm.ir.structural_equal

annotation = getattr(relax, "TensorStructInfo", None) or relax.TensorType   # 0.25 | later
extern = relax.ExternFunc("torch_relu").with_attrs(
    {"is_pyfunc": True, "function_type": "python", "python_function_name": "torch_relu"})
x = relax.Var("x", annotation((10,), "float32"))
main = relax.Function([x], x, annotation((10,), "float32"))
module = tvm.IRModule({"torch_relu": extern, "main": main})

text = module.script(show_meta=True)
try:
    copy = tvm.script.from_source(text)
except Exception as exc:  # noqa: BLE001
    print(f"cannot run here: the printed module does not parse: {type(exc).__name__}: {exc}")
    sys.exit(2)
original_attrs = dict(module["torch_relu"].attrs or {})
copy_attrs = dict(copy["torch_relu"].attrs or {}) if copy["torch_relu"].attrs is not None else None
if not structural_equal(module, copy) or copy_attrs != original_attrs:
    line = [s.strip() for s in text.splitlines() if "torch_relu" in s]
    print(f"reproduces: printed {line[0] if line else '?'}\n"
          f"  attrs of the module: {original_attrs}\n  attrs of the copy:   {copy_attrs}")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)
