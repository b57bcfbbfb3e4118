#!/usr/bin/env python3
"""Reproducer: TVMScript prints `T.if_then_else` over handles, which its parser refuses.

Seen:        the suite guard on any test that compiles for a CPU (`tvm.compile` of a relu,
             tests/test_suite_guard.py): from tirx.MakePackedAPI's output on, every
             PrimFunc's packed-API prologue picks each argument's data pointer with
             `T.if_then_else(x_type_index == 70, T.handle_add_byte_offset(...), ...)`;
             the TVMScript copy of every later pass's output fails to parse.
On:          apache-tvm 0.26.0, 0.27.0.post1 (0.25.0's prologue has no such select)
Cause:       the parser's T.if_then_else (prim._OpIfThenElse) takes PrimExpr operands and
             refuses a handle-typed Var or call ("Mismatched type on argument #2 ...
             Expected `ir.Expr`"), though the IR (built in C++) holds one and the printer
             prints it; the Python builder tirx.if_then_else refuses handles the same way.
Run:         python tvmscript_if_then_else_of_handles.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    import tvm
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            y = R.nn.relu(x)
            R.output(y)
        return y
'''
PASS = "tirx.MakePackedAPI"


class Reached(Exception):
    pass


handed = []


@tvm.instrument.pass_instrument
class StopBeforePass:
    """Keeps the module tvm.compile hands the pass, and stops the compile there."""
    def should_run(self, module, info):
        if not handed and str(info.name) == PASS:
            handed.append(module)
            raise Reached()
        return True


try:
    with tvm.transform.PassContext(instruments=[StopBeforePass()]):
        tvm.compile(tvm.script.from_source(SOURCE), target="llvm")
except Exception:
    if not handed:
        raise
tir = tvm.tirx if hasattr(tvm, "tirx") else tvm.tir
with tvm.target.Target("llvm"):
    packed = tir.transform.MakePackedAPI()(handed[0])
text = packed.script(show_meta=True)   # as the harness copies it: string constants in metadata
try:
    tvm.script.from_source(text, check_well_formed=False)
except Exception as exc:  # noqa: BLE001 - the parser's refusal is what this reproduces
    lines = [line.strip() for line in str(exc).splitlines() if "error" in line.lower()]
    print("reproduces: the printed " + next(
        (line.strip() for line in text.splitlines() if "if_then_else" in line), "text")
        + " does not parse: " + (lines[0] if lines else str(exc).splitlines()[-1]))
    sys.exit(1)
print("does not reproduce: MakePackedAPI's output round-trips through TVMScript")
sys.exit(0)
