"""The measurement protocol's host side (rtsched.protocol): the preflight on this machine and on
a fake /proc and /sys tree, the isolation that restores what it changed, the cache-polluting
background load; and the model `measure-overheads` writes under the protocol. No timing is
asserted."""

import json
import os

import pytest
from rtsched import protocol

CPU = sorted(os.sched_getaffinity(0))[0]
KEYS = {"cpus", "scheduling_class", "rt_throttling", "fair_server", "runnable", "irq_affinity", "cpufreq"}


def test_preflight_on_this_machine_has_the_documented_keys():
    p = protocol.preflight([CPU], rt_priority=50)
    assert set(p) == KEYS
    assert p["scheduling_class"]["requested"] == "SCHED_FIFO 50"
    assert isinstance(p["scheduling_class"]["fifo_allowed"], bool)
    assert isinstance(p["runnable"]["count"], int) and isinstance(p["irq_affinity"]["count"], int)
    assert set(p["cpufreq"]) == {str(CPU)}
    # Every part either read its files or says why not; the printout has a line per part.
    assert len(protocol.format_preflight(p)) >= 6
    json.dumps(p)  # it goes into a model file


def fake_root(tmp_path, *, kernel="6.18.4", fair=None, governor="schedutil"):
    """A fake /proc and /sys with two CPUs: a runnable thread on CPU 1 (comm with a space and
    a parenthesis), a sleeping one on CPU 0, IRQs 1 (CPUs 0-1) and 9 (CPU 1 only)."""

    def put(rel, text):
        f = tmp_path / rel.lstrip("/")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)

    put("/proc/sys/kernel/osrelease", f"{kernel}-test\n")
    put("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")
    put("/proc/sys/kernel/sched_rt_period_us", "1000000\n")
    put("/proc/self/status", "Name:\tx\nCapEff:\t0000000000800000\n")  # CAP_SYS_NICE only
    rest = " ".join(["0"] * 40)

    def stat(pid, comm, state, cpu):
        fields = [state] + ["0"] * 35 + [str(cpu)] + ["0"] * 10
        return f"{pid} ({comm}) {' '.join(fields)}\n"

    put("/proc/100/task/100/stat", stat(100, "busy (x) y", "R", 1))
    put("/proc/100/task/101/stat", stat(101, "busy (x) y", "S", 1))
    put("/proc/200/task/200/stat", stat(200, "idle", "S", 0))
    put("/proc/300/stat", stat(300, "notask", "R", 0))  # no task directory: the process itself
    put("/proc/self/stat", rest)
    put("/proc/irq/1/smp_affinity_list", "0-1\n")
    put("/proc/irq/9/smp_affinity_list", "1\n")
    put("/proc/irq/12/smp_affinity_list", "2-3\n")
    put("/sys/devices/system/cpu/online", "0-3\n")
    for c in (0, 1):
        if governor:
            put(f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor", f"{governor}\n")
    if fair is not None:
        for c in (0, 1):
            put(f"/sys/kernel/debug/sched/fair_server/cpu{c}/runtime", f"{fair[0]}\n")
            put(f"/sys/kernel/debug/sched/fair_server/cpu{c}/period", f"{fair[1]}\n")
    return str(tmp_path)


def test_preflight_parses_each_file_of_a_fake_root(tmp_path):
    root = fake_root(tmp_path, fair=(25_000_000, 1_000_000_000))
    p = protocol.preflight([0, 1], root=root)
    assert set(p) == KEYS
    assert p["scheduling_class"]["cap_sys_nice"] is True and p["scheduling_class"]["fifo_allowed"] is True
    rt = p["rt_throttling"]
    assert (rt["runtime_us"], rt["period_us"]) == (950_000, 1_000_000) and "50000 µs" in rt["cost"]
    fs = p["fair_server"]
    assert fs["readable"] is True and fs["kernel"] == "6.18"
    assert fs["cpus"]["1"] == {"runtime_ns": 25_000_000, "period_ns": 1_000_000_000}
    assert "assumed" not in fs and "2.5%" in fs["cost"]
    run = p["runnable"]
    assert run["count"] == 2
    assert {(t["tid"], t["comm"], t["cpu"]) for t in run["tasks"]} == {(100, "busy (x) y", 1), (300, "notask", 0)}
    assert protocol.preflight([1], root=root)["runnable"]["count"] == 1
    irq = p["irq_affinity"]
    assert irq["count"] == 2 and [i["irq"] for i in irq["irqs"]] == [1, 9]
    assert p["cpufreq"] == {"0": "schedutil", "1": "schedutil"}


def test_preflight_says_what_a_missing_or_refused_debugfs_costs(tmp_path):
    # Missing (debugfs not mounted) on Linux >= 6.12: the kernel's default is assumed and said so.
    p = protocol.preflight([0, 1], root=fake_root(tmp_path / "a", governor=None))
    fs = p["fair_server"]
    assert fs["readable"] is False and "not mounted" in fs["error"]
    assert fs["assumed"] == {"runtime_ns": 50_000_000, "period_ns": 1_000_000_000}
    assert "5.0%" in fs["cost"] and "runnable" in fs["cost"]
    assert p["cpufreq"] == {"0": None, "1": None}
    assert any("fair server" in line and "assumed" in line for line in protocol.format_preflight(p))
    # Refused: the directory is there but its files cannot be read.
    root = fake_root(tmp_path / "b", fair=(1, 2))
    for c in (0, 1):
        os.chmod(os.path.join(root, f"sys/kernel/debug/sched/fair_server/cpu{c}/runtime"), 0)
    if os.geteuid() == 0:  # root reads mode-0 files: make them unreadable another way
        for c in (0, 1):
            f = os.path.join(root, f"sys/kernel/debug/sched/fair_server/cpu{c}/runtime")
            os.remove(f)
            os.mkdir(f)  # reading a directory fails (IsADirectoryError)
    fs = protocol.preflight([0, 1], root=root)["fair_server"]
    assert fs["readable"] is False and fs["error"].startswith("debugfs refused")
    assert "assumed" in fs
    # Before Linux 6.12 there is no fair server.
    fs = protocol.preflight([0], root=fake_root(tmp_path / "c", kernel="6.6.1"))["fair_server"]
    assert fs["present"] is False and fs["cost"].startswith("none")


def test_isolate_changes_what_it_may_and_restores_it_on_errors(tmp_path):
    root = fake_root(tmp_path, fair=(50_000_000, 1_000_000_000))
    rd = lambda rel: open(os.path.join(root, rel)).read().strip()  # noqa: E731
    report: dict = {}
    with pytest.raises(RuntimeError, match="boom"):
        with protocol.isolated([0, 1], root=root, report=report) as st:
            assert rd("proc/sys/kernel/sched_rt_runtime_us") == "-1"
            assert rd("sys/kernel/debug/sched/fair_server/cpu1/runtime") == "0"
            assert rd("proc/irq/1/smp_affinity_list") == "2,3" and rd("proc/irq/9/smp_affinity_list") == "2,3"
            assert rd("proc/irq/12/smp_affinity_list") == "2-3"  # not on a measured CPU: untouched
            assert rd("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") == "performance"
            assert len(st["changed"]) == 7 and st["refused"] == []
            raise RuntimeError("boom")
    assert report["isolate"]["changed"][0]["what"] == "/proc/sys/kernel/sched_rt_runtime_us"
    assert rd("proc/sys/kernel/sched_rt_runtime_us") == "950000"
    assert rd("sys/kernel/debug/sched/fair_server/cpu1/runtime") == "50000000"
    assert rd("proc/irq/1/smp_affinity_list") == "0-1" and rd("proc/irq/9/smp_affinity_list") == "1"
    assert rd("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") == "schedutil"
    # What cannot be changed is reported, not raised: no debugfs, no other CPU for the IRQs.
    root = fake_root(tmp_path / "b")
    with open(os.path.join(root, "sys/devices/system/cpu/online"), "w") as f:
        f.write("0-1\n")
    with protocol.isolated([0, 1], root=root) as st:
        assert any("fair_server" in r for r in st["refused"])
        assert any("no CPU outside" in r for r in st["refused"])


def test_llc_size_and_background_plan_read_sysfs(tmp_path):
    for i, size in enumerate(["48K", "32K", "2048K", "260M"]):
        d = tmp_path / f"sys/devices/system/cpu/cpu0/cache/index{i}"
        d.mkdir(parents=True)
        (d / "size").write_text(size + "\n")
    assert protocol.llc_bytes(str(tmp_path)) == 260 << 20
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal: 1 kB\nMemAvailable:    1048576 kB\n")
    plan = protocol.background_plan([0, 1], root=str(tmp_path))
    assert plan["wanted_bytes"] == 520 << 20 and plan["capped_by_memory"] is True
    assert plan["working_set_bytes"] * 2 <= (1 << 30) // 4
    assert protocol.parse_cpu_list("0-2,5") == [0, 1, 2, 5]
    with pytest.raises(ValueError, match="bad CPU list"):
        protocol.parse_cpu_list("3-1")


def _walkers():
    """Live processes running the background walker's code."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"a[::64] += 1" in f.read() and _alive(int(pid)):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_background_load_starts_pinned_at_idle_priority_and_leaves_nothing(tmp_path):
    plan = {**protocol.background_plan([CPU]), "working_set_bytes": 1 << 20}
    with protocol.BackgroundLoad(plan) as load:
        pids = load.pids()
        assert len(pids) == 1 and all(_alive(p) for p in pids)
        assert os.sched_getaffinity(pids[0]) == {CPU}
        assert os.sched_getscheduler(pids[0]) in (os.SCHED_IDLE, os.SCHED_OTHER)
    assert not any(_alive(p) for p in pids)
    # An error inside the block stops it too.
    with pytest.raises(KeyError):
        with protocol.BackgroundLoad(plan) as load:
            pids = load.pids()
            raise KeyError("x")
    assert not any(_alive(p) for p in pids)
    assert _walkers() == []


def test_quick_measurement_writes_the_protocol_columns_and_object(cli, tmp_path):
    """The model's JSON itself (the Rust model parser accepts the new keys only once the
    lead's parser change is merged)."""
    out = tmp_path / "ov"
    code, _, err = cli(
        "measure-overheads", "--scheduler", "pedf", "--quick", "--cpus", CPU, "--out", out, "--seconds", "0.1",
        "--background", "cache",
    )  # fmt: skip
    assert code == 0, err
    assert "preflight: RT throttling" in err and "background: a cache walker" in err
    model = json.loads((out / "overheads-pedf.json").read_text())
    pr = model["protocol"]
    assert set(pr) >= {"filter", "outlier_rule", "background", "grid", "preflight"}
    assert pr["background"] == "cache" and pr["grid"] == [1, 5, 10]
    assert set(pr["preflight"]) == KEYS and pr["background_load"]["cpus"] == [CPU]
    from rtsched.runtime import MODEL_COLUMNS

    for t, row in model["terms"].items():
        assert set(row) == set(MODEL_COLUMNS), t
        assert all(len(row[c]) == len(row["n"]) for c in MODEL_COLUMNS), t
        for i in range(len(row["n"])):
            assert row["max_ns"][i] <= row["max_raw_ns"][i], t
            assert row["p50_ns"][i] <= row["p99_ns"][i], t
            assert row["count"][i] > 0 and row["discarded"][i] >= 0 and row["outliers"][i] >= 0
    for r in model["runs"]:
        assert isinstance(r["interference_intervals"], int)
    # The walkers are gone.
    assert _walkers() == []


def test_quick_spres_measurement_samples_the_migration_terms(cli, tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("SP-RES migrations need two CPUs")
    cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))[:2]))
    out = tmp_path / "ov"
    code, _, err = cli(
        "measure-overheads", "--scheduler", "spres", "--quick", "--cpus", cpus, "--out", out, "--seconds", "0.3"
    )
    assert code == 0, err
    model = json.loads((out / "overheads-spres.json").read_text())
    # n = m cannot split (m tasks fit whole, said on stderr); every larger n drew a set that splits.
    assert [r["split_tasks"] > 0 for r in model["runs"]] == [False, True, True], model["runs"]
    assert "no split at n=2" in err
    for t in ("migration_timer", "subtask_activation"):
        assert t in model["terms"] and sum(model["terms"][t]["count"]) > 0, (t, sorted(model["terms"]))
