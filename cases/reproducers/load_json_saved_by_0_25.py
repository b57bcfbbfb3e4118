#!/usr/bin/env python3
"""Reproducer: what apache-tvm 0.25.0 saved as JSON, 0.26.0 and 0.27.0.post1 cannot load.

Found by `python -m harness matrix CASE --set 'apache-tvm==0.25.0,apache-tvm-ffi==0.1.12'
--set 'apache-tvm==0.26.0,apache-tvm-ffi==0.1.14.post1' --cross-release`: on every case the
module 0.25.0 saved does not load on 0.26.0, nor does the MetaSchedule tuning log 0.25.0
wrote. Two texts 0.25.0 wrote (apache-tvm-ffi 0.1.12), embedded below:

- MODULE, `tvm.ir.save_json` of a Relax module `main(x: R.Tensor((2,), "float32"))
  returning x`. `tvm.ir.load_json` upgrades old graphs (tvm/ir/json_compact.py renames
  relax.expr.Var to ir.Var and a Var's name_hint to name) but a 0.25.0 Relax Var keeps its
  name in a relax.Id (`vid`) and its type as `struct_info_`: TypeError: Required field
  `name` not set in type `ir.Var`.
- WORKLOAD, a one-statement PrimFunc as a tuning log's workload table holds it
  (JSONDatabase.commit_workload: [structural hash, base64 of length + JSON]). MetaSchedule's
  JSONDatabase parses it with the C++ loader, which runs none of the Python upgrade:
  Cannot find type `tirx.Var`. (On 0.26.0 tvm.ir.load_json of the same text does load, but
  the parameter's pointer type is lost: not structurally equal to the same PrimFunc built
  on 0.26.0.)

Exit 1: reproduces, 0: does not, 2: cannot run here.
"""
import base64
import json
import os
import struct
import sys
import tempfile

try:
    import tvm
    try:
        import tvm.s_tir.meta_schedule as ms
    except ImportError:
        import tvm.meta_schedule as ms
except ImportError as exc:
    print(f"cannot run: {exc}")
    sys.exit(2)

MODULE = (
    "{\"root_index\":29,\"nodes\":[{\"type\":\"None\"},{\"type\":\"ir.IntImm\",\"data\":{\"span\":0,\"dtype\":\""
    "int64\",\"value\":2}},{\"type\":\"ffi.Array\",\"data\":[1]},{\"type\":\"relax.ShapeStructInfo\",\"data"
    "\":{\"span\":0,\"values\":2,\"ndim\":1}},{\"type\":\"ir.IntImm\",\"data\":{\"span\":0,\"dtype\":\"int64\",\""
    "value\":2}},{\"type\":\"ffi.Array\",\"data\":[4]},{\"type\":\"relax.expr.ShapeExpr\",\"data\":{\"span\""
    ":0,\"struct_info_\":3,\"values\":5}},{\"type\":\"relax.TensorStructInfo\",\"data\":{\"span\":0,\"shap"
    "e\":6,\"dtype\":\"float32\",\"vdevice\":0,\"ndim\":1}},{\"type\":\"ffi.Array\",\"data\":[7]},{\"type\":\"r"
    "elax.FuncStructInfo\",\"data\":{\"span\":0,\"params\":8,\"ret\":7,\"derive_func\":0,\"purity\":true}}"
    ",{\"type\":\"ffi.String\",\"data\":\"main\"},{\"type\":\"ir.GlobalVar\",\"data\":{\"span\":0,\"struct_inf"
    "o_\":9,\"name_hint\":10}},{\"type\":\"ffi.String\",\"data\":\"global_symbol\"},{\"type\":\"ffi.Map\",\"d"
    "ata\":[12,10]},{\"type\":\"ir.DictAttrs\",\"data\":{\"__dict__\":13}},{\"type\":\"ffi.String\",\"data\""
    ":\"x\"},{\"type\":\"relax.Id\",\"data\":{\"name_hint\":15}},{\"type\":\"relax.expr.Var\",\"data\":{\"span"
    "\":0,\"struct_info_\":7,\"vid\":16}},{\"type\":\"ffi.Array\",\"data\":[17]},{\"type\":\"ffi.Array\",\"da"
    "ta\":[]},{\"type\":\"relax.expr.SeqExpr\",\"data\":{\"span\":0,\"struct_info_\":7,\"blocks\":19,\"body"
    "\":17}},{\"type\":\"relax.expr.Function\",\"data\":{\"span\":0,\"struct_info_\":9,\"attrs\":14,\"param"
    "s\":18,\"body\":20,\"ret_struct_info\":7,\"is_pure\":true}},{\"type\":\"ffi.Map\",\"data\":[11,21]},{"
    "\"type\":\"ffi.Map\",\"data\":[10,11]},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.SourceMap\",\"da"
    "ta\":{\"source_map\":24}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.DictAttrs\",\"data\":{\"__di"
    "ct__\":26}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.IRModule\",\"data\":{\"functions\":22,\"gl"
    "obal_var_map_\":23,\"source_map\":25,\"attrs\":27,\"global_infos\":28}}],\"metadata\":{\"tvm_versi"
    "on\":\"0.25.0\"}}"
)
WORKLOAD_HASH = "8739994231387975835"
WORKLOAD = (
    "{\"root_index\":28,\"nodes\":[{\"type\":\"None\"},{\"type\":\"ffi.String\",\"data\":\"main\"},{\"type\":\"i"
    "r.GlobalVar\",\"data\":{\"span\":0,\"struct_info_\":0,\"name_hint\":1}},{\"type\":\"relax.ObjectStru"
    "ctInfo\",\"data\":{\"span\":0}},{\"type\":\"ffi.Array\",\"data\":[3]},{\"type\":\"ffi.Array\",\"data\":[]"
    "},{\"type\":\"relax.TupleStructInfo\",\"data\":{\"span\":0,\"fields\":5}},{\"type\":\"relax.FuncStruc"
    "tInfo\",\"data\":{\"span\":0,\"params\":4,\"ret\":6,\"derive_func\":0,\"purity\":true}},{\"type\":\"ffi."
    "String\",\"data\":\"global_symbol\"},{\"type\":\"ffi.Map\",\"data\":[8,1]},{\"type\":\"ir.DictAttrs\",\""
    "data\":{\"__dict__\":9}},{\"type\":\"ffi.String\",\"data\":\"a\"},{\"type\":\"ir.PrimType\",\"data\":{\"sp"
    "an\":0,\"dtype\":\"handle\"}},{\"type\":\"tirx.Var\",\"data\":{\"span\":0,\"dtype\":\"handle\",\"name\":11,"
    "\"type_annotation\":12}},{\"type\":\"ffi.Array\",\"data\":[13]},{\"type\":\"ffi.Array\",\"data\":[]},{"
    "\"type\":\"ir.TupleType\",\"data\":{\"span\":0,\"fields\":15}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type"
    "\":\"ir.IntImm\",\"data\":{\"span\":0,\"dtype\":\"int32\",\"value\":0}},{\"type\":\"tirx.Evaluate\",\"data"
    "\":{\"span\":0,\"value\":18}},{\"type\":\"tirx.PrimFunc\",\"data\":{\"span\":0,\"struct_info_\":7,\"attr"
    "s\":10,\"params\":14,\"ret_type\":16,\"buffer_map\":17,\"body\":19}},{\"type\":\"ffi.Map\",\"data\":[2,"
    "20]},{\"type\":\"ffi.Map\",\"data\":[1,2]},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.SourceMap\""
    ",\"data\":{\"source_map\":23}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.DictAttrs\",\"data\":{\""
    "__dict__\":25}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.IRModule\",\"data\":{\"functions\":21"
    ",\"global_var_map_\":22,\"source_map\":24,\"attrs\":26,\"global_infos\":27}}],\"metadata\":{\"tvm_v"
    "ersion\":\"0.25.0\"}}"
)


def load_module() -> str | None:
    try:
        tvm.ir.load_json(MODULE)
    except Exception as exc:  # noqa: BLE001
        return f"tvm.ir.load_json of a Relax module saved by 0.25.0 failed: {type(exc).__name__}: {exc}"
    return None


def open_tuning_log() -> str | None:
    folder = tempfile.mkdtemp()
    payload = base64.b64encode(struct.pack("<Q", len(WORKLOAD)) + WORKLOAD.encode()).decode()
    with open(os.path.join(folder, "database_workload.json"), "w") as handle:
        handle.write(json.dumps([WORKLOAD_HASH, payload]) + "\n")
    open(os.path.join(folder, "database_tuning_record.json"), "w").close()
    try:
        ms.database.JSONDatabase(work_dir=folder, allow_missing=False)
    except Exception as exc:  # noqa: BLE001
        return (f"a tuning log written by 0.25.0 does not open: {type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[-1]}")
    return None


print(f"apache-tvm {tvm.__version__}")
failures = [found for found in (load_module(), open_tuning_log()) if found]
for found in failures:
    print(found)
if failures:
    print("reproduces")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)
