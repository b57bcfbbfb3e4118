#!/usr/bin/env python3
"""Reproducer: nn.Module.export_tvm(spec) pops each method's "$" options out of the caller's dict.

Seen:        writing the harness's relax.frontend.nn door (cases nn-*): exporting a model
             twice with the same spec dict gave two different modules; the door now
             makes its ModuleSpec from copies (harness/tvmapi/nn_export.py), so no check
             sees it.
On:          apache-tvm 0.27.0.post1 / apache-tvm-ffi 0.1.14.post1
Cause:       spec.MethodSpec.from_raw does `spec.pop("$", {})` on the dict it was given
             (python/tvm/relax/frontend/nn/spec.py): after the first export the caller's
             spec has lost param_mode / effect_mode, and a second export silently uses
             the defaults ("plain").
Run:         python nn_export_tvm_pops_spec_options.py
             (exit 1: reproduces, 0: does not, 2: cannot run here)
"""
import sys

try:
    from tvm.relax.frontend import nn
except ImportError as exc:
    print(f"cannot run here: {exc}")
    sys.exit(2)


class MLP(nn.Module):
    def __init__(self):
        self.fc = nn.Linear(8, 8)

    def forward(self, x: nn.Tensor):
        return self.fc(x)


def parameters(mod):
    return [str(getattr(var, "name", None) or var.name_hint)   # 0.25: name_hint
            for var in mod["forward"].params]


spec = {"forward": {"x": nn.spec.Tensor(["n", 8], "float32"),
                    "$": {"param_mode": "packed", "effect_mode": "none"}}}
model = MLP()
first, _ = model.export_tvm(spec)
spec_after = dict(spec["forward"])
second, _ = model.export_tvm(spec)
if "$" not in spec_after or parameters(first) != parameters(second):
    print(f"reproduces: the first export took \"$\" out of the caller's spec (now "
          f"{sorted(spec_after)}); the same spec exported twice gives parameters "
          f"{parameters(first)}, then {parameters(second)}")
    sys.exit(1)
print("does not reproduce: the spec is left as given and both exports agree")
sys.exit(0)
