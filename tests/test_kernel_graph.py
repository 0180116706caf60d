"""Each stage of a kernel stands alone (tests/kernel_graph.py): it calls nothing of another file of
its kernel, includes its own header alone, and no circle of calls joins files outside the part
not yet split into stages (the core)."""
import kernel_graph as G


def test_stages_stand_alone():
    assert G.findings() == []


def test_the_rules_catch_a_circle_and_a_stage_reaching_in():
    files = ["a.c", "b.c", "core.c", "x_stages.c"]
    calls = {"a.c": {"b.c", "common/rnic_crc.c"}, "b.c": {"a.c"}, "core.c": set(), "x_stages.c": {"a.c", "b.c"}}
    found = G.findings({"x": (files, calls, {"core.c"}, "x_stages.c")})
    assert "x: a circle outside the core: a.c <-> b.c" in found
    assert "x/a.c: a stage calls into b.c" in found and "x/b.c: a stage calls into a.c" in found
    assert len(found) == 3
    # the same circle inside the core is allowed (reported by the script, not a finding)
    assert G.findings({"x": (files, calls, {"a.c", "b.c"}, "x_stages.c")}) == []
    assert G.circles(calls) == [["a.c", "b.c"]]
