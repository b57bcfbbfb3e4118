"""The TVM-facing layer: the only code that touches `tvm` or `tvm_ffi`.

Every difference between TVM releases lives here (tests/test_layers.py keeps the rest
of the harness out of TVM). One module a job:
  loading     importing TVM, provenance of a source build, versions, meta_schedule;
  structure   structural hash / equality / first mismatch, identity maps;
  copiers     save_json / load_json, deepcopy, TVMScript print and parse;
  reflection  attrs types, fields and schemas, object builders for the attrs sweep;
  ir          walking and building Relax IR the same way on every release;
  errors      what TVM's error texts mean (the frontend refusing an operator);
  targets     targets as users write them, made into what a release accepts, and the
              probe of what compiles here (a code generator or toolchain missing);
  nn_export   relax.frontend.nn models exported as MLC-LLM exports them;
  calls       the calls paths make (passes by name, extraction, tuning, compile);
  pipelines   the paths as named stages; passes: every registered pass;
  pass_guard  the per-pass instrument; context_hook: that instrument in every
              PassContext of a test session (the suite guard); inject: user hooks;
  relax_edit  the Relax-level reducer's edits of a module's main (cut, start after a
              binding, drop one, constants as parameters or zeros); relax_rewrite:
              rebuilding main after an edit; graph_relax: generated graphs as Relax;
  scripts     the names a Relax module file is run with.
Measured differences (0.25.0 / 0.26.0 / 0.27.0.post1): tensor annotations are
`relax.TensorStructInfo` in 0.25 and `relax.TensorType` later; meta_schedule lives at
`tvm.s_tir.meta_schedule` (older trees: `tvm.meta_schedule`); structural equality lives in
`tvm_ffi`, not `tvm.ir`; 0.27 refuses CLI target strings ("llvm -num-cores 2"); 0.27
renamed the boolean well-formedness check to check_well_formed.
"""
