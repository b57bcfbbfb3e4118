"""The input `tvm.compile` itself gives a pass: the pass sweep's `compiled` point.

A lowering pass run on a module outside its pipeline meets TIR of another phase and refuses
it by an internal check that says nothing about a bug. Stopping `tvm.compile` just before
the pass's first application gives an input of its phase, made by TVM's own pipeline (on a
GPU target, scheduled GPU TIR: no device is needed to lower).

This file is embedded verbatim in reproducers (runner.reproducer): it imports nothing but
tvm, inside the function, and says the stop in the one place both use.
"""


class PassNotReached(Exception):
    """tvm.compile ran to its end without the pass: this module has no such point."""


def compile_until(mod, target, pass_name):
    """The module `tvm.compile(mod, target)` first hands the pass named `pass_name`; the
    compile stops there (the pass does not run). The current PassContext's instruments
    and options stay in force, so the guards see every pass before it."""
    import tvm

    handed = []

    class _Reached(Exception):
        pass

    @tvm.instrument.pass_instrument
    class StopBeforePass:
        # should_run is asked before any instrument's run_before_pass: stopping here
        # leaves no instrument inside a pass that never ran
        def should_run(self, module, info):
            if not handed and str(info.name) == pass_name:
                handed.append(module)
                raise _Reached()
            return True

    current = tvm.transform.PassContext.current()
    context = tvm.transform.PassContext(
        opt_level=current.opt_level, required_pass=list(current.required_pass),
        disabled_pass=list(current.disabled_pass), config=dict(current.config),
        instruments=list(current.instruments) + [StopBeforePass()])
    try:
        with context:
            tvm.compile(mod, target=target)
    except Exception:   # our stop, wrapped by TVM's FFI; or TVM failing before the pass
        if not handed:
            raise
    if not handed:
        raise PassNotReached(f"tvm.compile never runs {pass_name} on this module")
    return handed[0]
