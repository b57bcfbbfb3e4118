"""The sweep's shard units (harness.cli.sweep_units): a model's layouts travel together,
so identical inputs meet in one shard's memo; a heavy model is split by pass."""
from harness import shards
from harness.catalog.cases import Case
from harness.cli import sweep_units

PASSES = [f"P{index:02d}" for index in range(20)]
POINTS = ("imported", "legalized", "fused")


def _work():
    cases = [Case("heavy", "darknet:heavy.cfg"), Case("heavy-nhwc", "darknet:heavy.cfg",
                                                         layout="nhwc")]
    cases += [Case(f"small{index}", f"builder:small{index}") for index in range(6)]
    cases += [Case(f"small{index}-nhwc", f"builder:small{index}", layout="nhwc")
              for index in range(6)]
    return [(swept, case, point) for swept in PASSES for case in cases for point in POINTS]


def _cost(item):
    return 8.0 if item[1].source == "darknet:heavy.cfg" else 0.2


def test_a_models_layouts_and_points_of_one_pass_share_a_unit():
    for key, items in sweep_units.units(_work(), _cost, 16).items():
        assert len({item[1].source for item in items}) == 1, key
    owner = {}
    for key, items in sweep_units.units(_work(), _cost, 16).items():
        for swept, case, _ in items:
            assert owner.setdefault((swept, case.source), key) == key


def test_a_heavy_model_is_split_by_pass_and_a_small_one_is_not():
    work = _work()
    for count in (4, 16):
        split = sweep_units.units(work, _cost, count)
        target = sum(map(_cost, work)) / count / sweep_units.UNITS_PER_SHARD
        heaviest_pass = 2 * len(POINTS) * 8.0   # one pass on the heavy model's two cases
        assert len([key for key in split if "heavy" in key]) > 1
        assert all(sum(map(_cost, items)) <= target + heaviest_pass   # one pass is atomic
                   for items in split.values())
    assert len([key for key in sweep_units.units(work, _cost, 4) if "small0" in key]) == 1


def test_the_shards_of_a_sweep_are_disjoint_and_together_the_sweep():
    work = _work()
    chosen = [sweep_units.select(work, _cost, shards.Shard(number, 4)) for number in (1, 2, 3, 4)]
    names = [[(s, c.id, p) for s, c, p in part] for part in chosen]
    assert sum(map(len, names)) == len(work)
    assert len({name for part in names for name in part}) == len(work)
    assert sweep_units.select(work, _cost, None) == work
    # the heavy model's weight is spread: no shard carries much more than its share
    totals = [sum(map(_cost, part)) for part in chosen]
    assert max(totals) < 1.2 * sum(totals) / 4, totals
