# Type stub of the Rust extension module rtsched._core (crates/py). Every name the module
# exports is declared here (tests/test_typing.py checks both ways); keep it in step with the
# bindings. Times are integer nanoseconds, or duration strings ("2ms") where `Time` is taken.

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

Time = int | str

__version__: str
MAX_M: int
MAX_TIME: int

class RtschedError(ValueError): ...
class InternalError(RuntimeError): ...

class Task:
    def __init__(
        self,
        wcet: Time,
        period: Time,
        deadline: Time | None = None,
        name: str | None = None,
        segments: Sequence[Time | tuple[Time, Time] | dict[str, Time]] | None = None,
    ) -> None: ...
    @property
    def segments(self) -> list[int | tuple[int, int]] | None: ...
    @property
    def suspension(self) -> int: ...
    @property
    def wcet(self) -> int: ...
    @property
    def deadline(self) -> int: ...
    @property
    def period(self) -> int: ...
    @property
    def name(self) -> str | None: ...
    @property
    def utilization(self) -> float: ...
    @property
    def density(self) -> float: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...
    def __copy__(self) -> Task: ...
    def __deepcopy__(self, memo: Any) -> Task: ...

class TaskSet:
    def __init__(self, tasks: Iterable[Task] | None = None, m: int | None = None) -> None: ...
    @property
    def m(self) -> int | None: ...
    @m.setter
    def m(self, m: int | None) -> None: ...
    @property
    def tasks(self) -> list[Task]: ...
    @property
    def priorities(self) -> list[int] | None: ...
    @property
    def utilization(self) -> float: ...
    def append(self, task: Task) -> None: ...
    def extend(self, tasks: Iterable[Task]) -> None: ...
    def utilization_exact(self) -> tuple[str, str]: ...
    def utilization_at_most(self, m: int) -> bool: ...
    def hyperperiod(self, bound: int | None = None) -> int: ...
    def __len__(self) -> int: ...
    @overload
    def __getitem__(self, index: int) -> Task: ...
    @overload
    def __getitem__(self, index: slice) -> TaskSet: ...
    def __iter__(self) -> Iterator[Task]: ...
    def __eq__(self, other: object) -> bool: ...
    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]: ...
    def __copy__(self) -> TaskSet: ...
    def __deepcopy__(self, memo: Any) -> TaskSet: ...
    def copy(self) -> TaskSet: ...
    def to_json(self) -> str: ...
    def to_csv(self) -> str: ...
    def to_pandas(self) -> Any: ...
    @staticmethod
    def from_json(text: str) -> TaskSet: ...
    @staticmethod
    def from_csv(text: str) -> TaskSet: ...
    @staticmethod
    def from_lists(
        wcet: Iterable[Any],
        period: Iterable[Any],
        deadline: Iterable[Any] | None = None,
        name: Iterable[str | None] | None = None,
        m: int | None = None,
    ) -> TaskSet: ...
    @staticmethod
    def from_pandas(df: Any, m: int | None = None) -> TaskSet: ...

def parse_jsonl(text: str) -> list[TaskSet]: ...
def parse_duration(text: str) -> int: ...
def format_duration(ns: int) -> str: ...
def format_time(ns: int) -> str: ...
def test_names() -> list[str]: ...
def generate(
    n: int | None,
    util: float,
    generator: str,
    periods: str,
    umax: float,
    deadlines: str,
    seed: int,
    count: int,
    m: int | None = None,
    suspension_ratio: str | None = None,
    suspension_segments: int = 2,
) -> list[TaskSet]: ...
def analyze_sets(
    sets: Sequence[TaskSet],
    m: int | None,
    tests: Sequence[str] | None,
    max_steps: int,
    exact_utilization: bool = False,
    progress: Callable[[int, int], None] | None = None,
    overheads: tuple[str, str, str | None, int, int, bool] | None = None,
    priorities: str | None = None,
) -> tuple[list[dict[str, Any]], bool]: ...
def analyze_dag_sets(
    texts: Sequence[str],
    m: int | None,
    tests: Sequence[str] | None,
    max_steps: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[dict[str, Any]], bool]: ...
def analyze_file(
    path: str,
    m: int | None,
    tests: Sequence[str] | None,
    max_steps: int,
    exact_utilization: bool = False,
    write: Callable[[bytes], Any] | int | None = None,
    progress: Callable[..., None] | None = None,
    keep_first: int = 0,
    priorities: str | None = None,
) -> dict[str, Any]: ...
def analyze_columns(
    wcet: bytes,
    period: bytes,
    deadline: bytes | None,
    starts: bytes,
    ms: bytes,
    tests: Sequence[str] | None,
    max_steps: int,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, bytes]: ...
def generate_stream(
    n: int | None,
    util: float,
    generator: str,
    periods: str,
    umax: float,
    deadlines: str,
    seed: int,
    count: int,
    m: int | None,
    write: Callable[[bytes], Any] | int,
    progress: Callable[[int, int], None] | None = None,
    suspension_ratio: str | None = None,
    suspension_segments: int = 2,
) -> tuple[int, bool]: ...
def check_point_names(
    generator: str, periods: str, deadlines: str, umax: float, methods: Sequence[str], dag: str | None = None
) -> None: ...
def placement_partition(ts: TaskSet, text: str, m: int) -> list[list[int]]: ...
def partition(
    ts: TaskSet,
    m: int,
    heuristic: str,
    admission: str,
    epsilon: int,
    meta: bool,
    variant: str = "artifact",
    rp: str | None = None,
    rp_floor: int | None = None,
    slice_order: str = "flipped",
    merge_same_core: bool = False,
    overheads: str | None = None,
    mechanism: str | None = None,
    overheads_label: str | None = None,
    stat: str | None = None,
    cpd: int = 0,
    quantum: int = 1_000_000,
    extrapolate: bool = False,
) -> str: ...
def default_partition(ts: TaskSet, scheduler: str, m: int) -> dict[str, Any]: ...
def acceptance(
    generator: str,
    periods: str,
    n: int,
    utils: Sequence[float],
    m: int,
    count: int,
    seed: int,
    tests: Sequence[str],
    max_steps: int,
) -> dict[str, dict[str, list[int]]]: ...
def evaluate_point(point_json: str) -> dict[str, list[Any]]: ...
def simulate_schedulers() -> list[str]: ...
def simulate_scheduler_entries() -> str: ...
def dag_read(text: str) -> str: ...
def dag_analyze(
    text: str,
    m: int | None = None,
    tests: Sequence[str] | None = None,
    max_steps: int = 1000000,
    priorities: str | None = None,
) -> str: ...
def dag_generate(spec_json: str, seed: int, count: int, m: int | None = None, start: int = 0) -> list[str]: ...
def dag_dot(text: str, task: int | None = None) -> str: ...
def dag_test_names(several: bool = False) -> list[str]: ...
def simulate(
    workload: TaskSet | str,
    m: int | None,
    scheduler: str,
    params: Mapping[str, int | str | bool] | None = None,
    placement: str | None = None,
    horizon: Time | None = None,
    sporadic: Time | None = None,
    exec_fraction: float | None = None,
    seed: int = 0,
    outputs: Sequence[str] = ...,
    overheads: str | None = None,
    overhead_stat: str | None = None,
    draw_suspensions: bool = False,
) -> dict[str, Any]: ...
def forkjoin_simulate(
    text: str,
    m: int | None,
    scheduler: str,
    horizon: int | None = None,
    sporadic: int | None = None,
    seed: int = 0,
    check: bool = False,
) -> str: ...
def forkjoin_generate(m: int, lo: float, hi: float, seed: int, count: int, start: int = 0) -> list[str]: ...
def spres_slack_runs(
    ts: TaskSet,
    m: int,
    placement: str,
    horizon: int,
    slacks: Sequence[float],
    seed: int = 0,
    cash: bool = True,
    soft_unsplit: bool = False,
) -> list[str]: ...
def trace_gantt_svg(jsonl: str, start: int | None = None, end: int | None = None) -> str: ...

class RunPlan:
    """A decided run (``prepare_run``): what it will use, said before it starts."""

    @property
    def cpus(self) -> list[int]: ...
    @property
    def partition(self) -> list[list[int]] | None: ...
    @property
    def placement(self) -> dict[str, Any] | None: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def placement_warnings(self) -> list[str]: ...
    @property
    def notes(self) -> list[str]: ...

def prepare_run(request: dict[str, Any]) -> RunPlan: ...
def run(plan: RunPlan) -> dict[str, Any]: ...
def assess_timing(
    summary: str,
    scheduler: str,
    rt_priority: int | None = None,
    calibration: str | None = None,
    no_calibration: str | None = None,
    reaction_model: tuple[str, str] | None = None,
) -> tuple[bool, str, list[str]]: ...
def calibrate(budget_ns: int, rt_priority: int | None = None) -> str: ...

TRUST_FACTOR: int
TRUST_FLOOR_NS: int
CALIBRATION_CAP_NS: int

def forkjoin_slot_set(text: str) -> TaskSet: ...
def mechanisms() -> str: ...
def check_mechanism_params(scheduler: str, params: Sequence[tuple[str, str]]) -> None: ...
def overhead_mechanisms() -> list[dict[str, Any]]: ...
def inflate_budgets(
    ts: TaskSet,
    m: int,
    mechanism: str,
    model_text: str,
    label: str | None = None,
    stat: str | None = None,
    cpd: int = 0,
    quantum: int = 1_000_000,
    extrapolate: bool = False,
) -> dict[str, Any]: ...
def overhead_terms() -> list[dict[str, Any]]: ...
def read_overhead_model(text: str) -> dict[str, Any]: ...
def describe_overhead_model(
    text: str, mechanism: str | None = None, m: int | None = None, n: int | None = None
) -> dict[str, Any]: ...
def push_pull_costs(
    sets: Sequence[TaskSet],
    m: int,
    horizon: int,
    variants: Sequence[str] = ("linear", "fmask", "cpudl", "cpupri"),
    max_calls: int = 50000000,
) -> str: ...
def analyze_overheads(
    sets: Sequence[TaskSet],
    ms: Sequence[int],
    model_text: str,
    mechanism: str,
    stat: str | None = None,
    cpd: int = 0,
    quantum: int = 1000000,
    extrapolate: bool = False,
    max_steps: int = 1000000,
) -> list[str]: ...
