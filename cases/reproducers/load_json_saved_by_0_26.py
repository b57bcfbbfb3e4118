#!/usr/bin/env python3
"""Reproducer: what apache-tvm 0.26.0 saved as JSON, 0.27.0.post1 cannot load, or loads wrong.

Found by `python -m harness matrix CASE --set 'apache-tvm==0.26.0,apache-tvm-ffi==0.1.14.post1'
--set 'apache-tvm==0.27.0.post1,apache-tvm-ffi==0.1.14.post1' --cross-release`: on every case
the module 0.26.0 saved does not load on 0.27.0.post1 (TypeError: Cannot convert from type
`ir.PrimType` to `BigInt`), nor does the MetaSchedule tuning log 0.26.0 wrote. The cause:
0.27 made IntImm's `value` a BigInt object, written as a reference to an `int` node, where
0.26.0 writes the number itself; tvm/ir/json_compact.py's upgrade (which renames 0.26's
tirx.* types) does not convert it, so 0.27 reads 0.26's number as a node index. Three texts
0.26.0 wrote (apache-tvm-ffi 0.1.14.post1), embedded below:

- MODULE, `tvm.ir.save_json` of a Relax module `main(x: R.Tensor((2,), "float32"))`
  returning x: its IntImm 2 points at itself (node 2), and 0.27's load_json dies of
  SIGSEGV (run here in a child process).
- INTIMMS, `tvm.ir.save_json([5, IntImm("int64", 0)])`: node 0 is the int 5, so 0.27
  loads the IntImm as 5, silently.
- WORKLOAD, a one-statement PrimFunc as a tuning log's workload table holds it; 0.27's
  JSONDatabase refuses the log: Cannot convert from type `None` to `BigInt`.

Exit 1: reproduces, 0: does not, 2: cannot run here (a release older than 0.26.0 is not
expected to read what 0.26.0 wrote).
"""
import base64
import json
import os
import struct
import subprocess
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
if tuple(int(part) for part in tvm.__version__.split(".")[:2]) < (0, 26):
    print(f"cannot run: apache-tvm {tvm.__version__} is older than the release that saved")
    sys.exit(2)

MODULE = (
    "{\"root_index\":30,\"nodes\":[{\"type\":\"None\"},{\"type\":\"ir.PrimType\",\"data\":{\"span\":0,\"dtype\""
    ":\"int64\"}},{\"type\":\"ir.IntImm\",\"data\":{\"span\":0,\"ty\":1,\"value\":2}},{\"type\":\"ffi.Array\",\""
    "data\":[2]},{\"type\":\"relax.ShapeType\",\"data\":{\"span\":0,\"values\":3,\"ndim\":1}},{\"type\":\"ir."
    "IntImm\",\"data\":{\"span\":0,\"ty\":1,\"value\":2}},{\"type\":\"ffi.Array\",\"data\":[5]},{\"type\":\"rel"
    "ax.expr.ShapeExpr\",\"data\":{\"span\":0,\"ty\":4,\"values\":6}},{\"type\":\"ir.PrimType\",\"data\":{\"s"
    "pan\":0,\"dtype\":\"float32\"}},{\"type\":\"relax.TensorType\",\"data\":{\"span\":0,\"shape\":7,\"dtype\""
    ":8,\"vdevice\":0,\"ndim\":1}},{\"type\":\"ffi.Array\",\"data\":[9]},{\"type\":\"relax.FuncType\",\"data"
    "\":{\"span\":0,\"params\":10,\"ret\":9,\"derive_func\":0,\"purity\":true}},{\"type\":\"ffi.String\",\"da"
    "ta\":\"main\"},{\"type\":\"ir.GlobalVar\",\"data\":{\"span\":0,\"ty\":11,\"name_hint\":12}},{\"type\":\"ff"
    "i.String\",\"data\":\"global_symbol\"},{\"type\":\"ffi.Map\",\"data\":[14,12]},{\"type\":\"ir.DictAttr"
    "s\",\"data\":{\"__dict__\":15}},{\"type\":\"ffi.String\",\"data\":\"x\"},{\"type\":\"ir.Var\",\"data\":{\"sp"
    "an\":0,\"ty\":9,\"name\":17}},{\"type\":\"ffi.Array\",\"data\":[18]},{\"type\":\"ffi.Array\",\"data\":[]}"
    ",{\"type\":\"relax.expr.SeqExpr\",\"data\":{\"span\":0,\"ty\":9,\"blocks\":20,\"body\":18}},{\"type\":\"r"
    "elax.expr.Function\",\"data\":{\"span\":0,\"ty\":11,\"attrs\":16,\"params\":19,\"body\":21,\"ret_ty\":9"
    ",\"is_pure\":true}},{\"type\":\"ffi.Map\",\"data\":[13,22]},{\"type\":\"ffi.Map\",\"data\":[12,13]},{\""
    "type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.SourceMap\",\"data\":{\"source_map\":25}},{\"type\":\"ffi"
    ".Map\",\"data\":[]},{\"type\":\"ir.DictAttrs\",\"data\":{\"__dict__\":27}},{\"type\":\"ffi.Map\",\"data\""
    ":[]},{\"type\":\"ir.IRModule\",\"data\":{\"functions\":23,\"global_var_map_\":24,\"source_map\":26,\""
    "attrs\":28,\"global_infos\":29}}],\"metadata\":{\"tvm_version\":\"0.26.0\"}}"
)
INTIMMS = (
    "{\"root_index\":4,\"nodes\":[{\"type\":\"int\",\"data\":5},{\"type\":\"None\"},{\"type\":\"ir.PrimType\",\""
    "data\":{\"span\":1,\"dtype\":\"int64\"}},{\"type\":\"ir.IntImm\",\"data\":{\"span\":1,\"ty\":2,\"value\":0}"
    "},{\"type\":\"ffi.Array\",\"data\":[0,3]}],\"metadata\":{\"tvm_version\":\"0.26.0\"}}"
)
WORKLOAD_HASH = "5428836235886533938"
WORKLOAD = (
    "{\"root_index\":31,\"nodes\":[{\"type\":\"None\"},{\"type\":\"ir.Type\",\"data\":{\"span\":0}},{\"type\":\""
    "ffi.String\",\"data\":\"main\"},{\"type\":\"ir.GlobalVar\",\"data\":{\"span\":0,\"ty\":1,\"name_hint\":2}"
    "},{\"type\":\"relax.AnyType\",\"data\":{\"span\":0}},{\"type\":\"ffi.Array\",\"data\":[4]},{\"type\":\"ff"
    "i.Array\",\"data\":[]},{\"type\":\"ir.TupleType\",\"data\":{\"span\":0,\"fields\":6}},{\"type\":\"relax."
    "FuncType\",\"data\":{\"span\":0,\"params\":5,\"ret\":7,\"derive_func\":0,\"purity\":true}},{\"type\":\"f"
    "fi.String\",\"data\":\"global_symbol\"},{\"type\":\"ffi.Map\",\"data\":[9,2]},{\"type\":\"ir.DictAttrs"
    "\",\"data\":{\"__dict__\":10}},{\"type\":\"ir.PrimType\",\"data\":{\"span\":0,\"dtype\":\"\"}},{\"type\":\"f"
    "fi.String\",\"data\":\"global\"},{\"type\":\"ir.PointerType\",\"data\":{\"span\":0,\"element_type\":12,"
    "\"storage_scope\":13}},{\"type\":\"ffi.String\",\"data\":\"a\"},{\"type\":\"ir.Var\",\"data\":{\"span\":0,"
    "\"ty\":14,\"name\":15}},{\"type\":\"ffi.Array\",\"data\":[16]},{\"type\":\"ffi.Array\",\"data\":[]},{\"ty"
    "pe\":\"ir.TupleType\",\"data\":{\"span\":0,\"fields\":18}},{\"type\":\"ir.PrimType\",\"data\":{\"span\":0"
    ",\"dtype\":\"int32\"}},{\"type\":\"ir.IntImm\",\"data\":{\"span\":0,\"ty\":20,\"value\":0}},{\"type\":\"tir"
    "x.Evaluate\",\"data\":{\"span\":0,\"value\":21}},{\"type\":\"tirx.PrimFunc\",\"data\":{\"span\":0,\"ty\":"
    "8,\"attrs\":11,\"params\":17,\"ret_type\":19,\"body\":22}},{\"type\":\"ffi.Map\",\"data\":[3,23]},{\"ty"
    "pe\":\"ffi.Map\",\"data\":[2,3]},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.SourceMap\",\"data\":{"
    "\"source_map\":26}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.DictAttrs\",\"data\":{\"__dict__\""
    ":28}},{\"type\":\"ffi.Map\",\"data\":[]},{\"type\":\"ir.IRModule\",\"data\":{\"functions\":24,\"global_"
    "var_map_\":25,\"source_map\":27,\"attrs\":29,\"global_infos\":30}}],\"metadata\":{\"tvm_version\":\""
    "0.26.0\"}}"
)


def load_module() -> str | None:
    """In a child: the load may die of a signal."""
    proc = subprocess.run([sys.executable, "-c", "import sys, tvm; tvm.ir.load_json(sys.stdin.read())"],
                          input=MODULE, capture_output=True, text=True, timeout=300)
    if proc.returncode < 0:
        return f"tvm.ir.load_json of a Relax module saved by 0.26.0 died of signal {-proc.returncode}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return f"tvm.ir.load_json of a Relax module saved by 0.26.0 failed: {last}"
    return None


def load_intimms() -> str | None:
    try:
        loaded = tvm.ir.load_json(INTIMMS)
    except Exception as exc:  # noqa: BLE001
        return f"tvm.ir.load_json of [5, IntImm(0)] saved by 0.26.0 failed: {type(exc).__name__}: {exc}"
    if int(loaded[1].value) != 0:
        return f"[5, IntImm(int64, 0)] saved by 0.26.0 loads as {list(loaded)}"
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
        return (f"a tuning log written by 0.26.0 does not open: {type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[-1]}")
    return None


print(f"apache-tvm {tvm.__version__}")
failures = [found for found in (load_module(), load_intimms(), open_tuning_log()) if found]
for found in failures:
    print(found)
if failures:
    print("reproduces")
    sys.exit(1)
print("does not reproduce")
sys.exit(0)
