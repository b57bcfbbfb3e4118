"""The reach map: which of each TVM frontend's converters the corpus really exercises.

Measured, not listed: each case's model goes through its door's import with the
frontend's converter map noted (tvmapi.frontend_reach); a converter no case looked up is
unexercised, with the reason the corpus says (no framework test uses the operator,
torch.export never emits it, its tests fail to import, not in this selection).
`totals` (a child) reads each frontend's converters; `reach_map` adds the rows up.
"""
