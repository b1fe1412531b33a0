"""Section 4 of bench_ui.py: the Run workspace (issue 11, "Performance"). Imported by bench_ui.py only.

A real app in a child process (MainWindow, Worker thread, TurnWorker loop) on a scratch data
folder holding a 200-node workflow package and a run of it. A model server in another process
streams text at 200 tokens/s and, every second, calls ``fs.apply_patch`` to move the run one node
on (a real state write through the engine: guard, atomic replace, re-read, ``RunProgress``).
Measured:

- **layout**: grandalf's layout of the 200-node graph, as the worker's RunLoader runs it (in its
  background pool, never on the GUI thread), once for the real load, then several times more on a
  plain thread while the GUI probe runs;
- **progress**: from the state write (the state file's mtime) to the Progress model showing the
  new node, (a) for the engine's writes during the run (``RunProgress``), (b) for writes by
  another process (an atomic replace; the file watch and a read by the worker). Also from the
  replace itself (the file's ctime, set by the rename): the time before it is the writer's own
  (its fsync, which a busy disk stretches), which no reader can shorten;
- **latency**: a 5 ms QTimer on the GUI thread during the whole run; how late each tick is.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

GOAL_LAYOUT_MS = 200.0
GOAL_PROGRESS_MS = 100.0
GOAL_P99_MS = 50.0
NODES = 200
TOKENS_PER_S = 200.0


def prepare(scratch: Path, *, writes: int, nodes: int = NODES, stream_s: float = 1.0) -> dict[str, Any]:
    """A data folder with the ``nodes``-node chain package installed and a run of it in a conversation."""
    node_count = nodes
    from crewagent.core.packages import PackageStore
    from crewagent.core.runs import create_run
    from crewagent.core.settings import SettingsStore
    from crewagent.core.store import RuntimeStore

    data_dir, config_dir, source = scratch / "data", scratch / "config", scratch / "package"
    for folder in (data_dir, config_dir, source / "steps"):
        folder.mkdir(parents=True, exist_ok=True)
    ids = [f"n{i:03d}" for i in range(node_count)]
    nodes = [{"id": i, "type": "end" if n == node_count - 1 else "step", "file": f"steps/{i}.md", "title": f"Step {n}",
              "agentId": "worker"} for n, i in enumerate(ids)]
    edges = [{"from": ids[n - 1], "to": ids[n], "label": "next", "isDefault": True} for n in range(1, node_count)]
    edges += [{"from": ids[n], "to": ids[n - 3], "label": "revise"} for n in range(5, node_count - 1, 7)]
    graph = {"schemaVersion": "1.1", "entryNodeId": ids[0], "nodes": nodes, "edges": edges}
    (source / "workflow.graph.json").write_text(json.dumps(graph), encoding="utf-8")
    manifest = {"schemaVersion": "1.1", "name": "bench-chain", "version": "1.0.0",
                "entry": {"workflow": "workflow.md", "graph": "workflow.graph.json", "agents": "agents.json"},
                "workflows": [{"id": "chain", "displayName": "Chain of 200", "workflow": "workflow.md",
                               "graph": "workflow.graph.json", "tags": []}]}
    (source / "bmad.json").write_text(json.dumps(manifest), encoding="utf-8")
    agent = {"id": "worker", "metadata": {"name": "Bench", "title": "Worker", "icon": "*"},
             "persona": {"role": "Worker", "identity": "A benchmark", "communication_style": "short", "principles": ["go on"]}}
    (source / "agents.json").write_text(json.dumps({"schemaVersion": "1.1", "agents": [agent]}), encoding="utf-8")
    (source / "workflow.md").write_text('---\nschemaVersion: "1.1"\nworkflowType: chain\ncurrentNodeId: ""\n'
                                        "stepsCompleted: []\nvariables: {}\ndecisionLog: []\nartifacts: []\n---\n\n# Chain\n",
                                        encoding="utf-8")
    for n, node_id in enumerate(ids):
        transitions = [{"to": e["to"], "label": e["label"], "isDefault": e.get("isDefault", False)} for e in edges if e["from"] == node_id]
        front = ['---', 'schemaVersion: "1.1"', f"nodeId: {node_id}", f"type: {nodes[n]['type']}", "inputs: []", "outputs: []",
                 "setsVariables: []", "transitions: " + json.dumps(transitions), "---", "", f"Step {n}.", ""]
        (source / "steps" / f"{node_id}.md").write_text("\n".join(front), encoding="utf-8")
    package = PackageStore(data_dir).import_package(source)
    store = RuntimeStore(data_dir)
    project = store.create_project(scratch / "project", "Bench run")
    meta = store.create_conversation(project.id, title="Chain run", entry_type="run")
    store.update_conversation(project.id, meta.id, activeType="run")
    run = create_run(store, project, meta.id, package, "chain")
    SettingsStore(config_dir).update(tools={"alwaysAllow": ["fs.apply_patch"]})
    store.flush()
    return {"data_dir": str(data_dir), "config_dir": str(config_dir), "project_root": str(project.root),
            "conversation_id": meta.id, "run_id": run.runId, "nodes": ids, "writes": writes, "stream_s": stream_s}


def server(payload: dict[str, Any]) -> Any:
    """The model, started: ~1 s (``stream_s``) of paced text, then one state write moving the run on; ``writes`` times."""
    from crewagent.core.llm.local_server import LocalServer, Pause, RecordedRequest, Reply, SseReply

    ids, writes, alias = payload["nodes"], int(payload["writes"]), f"@state/runs/{payload['run_id']}/workflow.md"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    def paced(seconds: float) -> Iterator[Any]:
        yield chunk({"role": "assistant", "content": ""})
        start = time.monotonic()
        for i in range(int(seconds * TOKENS_PER_S)):
            delay = start + i / TOKENS_PER_S - time.monotonic()
            if delay > 0:
                yield Pause(delay)
            yield chunk({"content": (" working on it", " **step**", " `state`", ".\n\n")[i % 4]})

    class Responder:
        def chat_completion(self, request: RecordedRequest) -> Reply:
            messages = request.body["messages"]
            done = sum(1 for m in messages if m["role"] == "tool")
            if done >= writes:
                return SseReply(itertools.chain(paced(min(0.3, payload["stream_s"])), [chunk({}, "stop")]))
            update = {"currentNodeId": ids[done + 1], "stepsCompleted": ids[: done + 1]}
            call = {"index": 0, "id": f"call_{done}", "type": "function",
                    "function": {"name": "fs_apply_patch", "arguments": json.dumps({"path": alias, "updateFrontmatter": update})}}
            # A generator: each pause is computed as the reply is sent.
            return SseReply(itertools.chain(paced(payload["stream_s"]), [chunk({"tool_calls": [call]}), chunk({}, "tool_calls")]))

        def list_models(self, request: RecordedRequest) -> Reply:
            from crewagent.core.llm.local_server import JsonReply

            return JsonReply(200, {"object": "list", "data": [{"id": "bench", "object": "model"}]})

    return LocalServer(Responder()).start()


def child(payload: dict[str, Any], gui_factory: Callable[..., Any], probe_ms: int) -> dict[str, Any]:
    """The GUI side, in its own process (see the module docstring)."""
    from PySide6.QtCore import Qt, QTimer

    import crewagent.worker.runs as runs_module
    from crewagent.core.llm import ProviderConfig
    from crewagent.core.runs.layout import layout_graph
    from crewagent.ui.run_workspace.models import RunRole

    layouts: list[tuple[float, str]] = []
    original = runs_module.layout_graph

    def timed_layout(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            layouts.append(((time.perf_counter() - start) * 1000, threading.current_thread().name))

    runs_module.layout_graph = timed_layout  # type: ignore[assignment]
    # The panel's own work on the GUI thread, per update (patched before the window connects them).
    from crewagent.ui.run_workspace.panel import RunWorkspace

    gui_work: dict[str, list[float]] = {"snapshot shown": [], "progress applied": []}
    #: The same, as the GUI thread's CPU time (time.thread_time): what the panel itself costs, without
    #: the time the thread waited for a core or for the GIL on a loaded machine.
    gui_cpu: dict[str, list[float]] = {name: [] for name in gui_work}
    first_shown: list[float] = []  # (wall, CPU) of the first snapshot shown (not the empty panel)

    def timed(name: str, method: Any) -> Any:
        # functools.wraps keeps the method's @Slot: without it PySide6 calls the wrapper of a slot
        # connected to the worker's signal on the worker's thread, not queued to the GUI thread.
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return method(self, *args)
            finally:
                gui_work[name].append((time.perf_counter() - start) * 1000)
                gui_cpu[name].append((time.thread_time() - cpu) * 1000)
                if name == "snapshot shown" and args and args[0] is not None and not first_shown:
                    first_shown.extend((gui_work[name][-1], gui_cpu[name][-1]))

        return wrapper

    RunWorkspace._show = timed("snapshot shown", RunWorkspace._show)  # type: ignore[method-assign]
    RunWorkspace.on_run_progress = timed("progress applied", RunWorkspace.on_run_progress)  # type: ignore[method-assign]
    # Session 6: the first snapshot of a run is shown in slices (the panel, then its tables); each
    # later slice is timed too, when this build has them.
    for method_name, name in (("_fill_slice", "tables filled (a later slice)"),):
        if hasattr(RunWorkspace, method_name):
            gui_work[name], gui_cpu[name] = [], []
            setattr(RunWorkspace, method_name, timed(name, getattr(RunWorkspace, method_name)))
    config = ProviderConfig(provider="openai-compatible", base_url=payload["url"], api_key="sk-bench",
                            model="bench", timeout=60.0, max_retries=0)
    gui = gui_factory(payload["data_dir"], provider_factory=lambda settings, demo: config)
    gui.open_project(payload["project_root"])
    view = gui.window.project_view.conversation
    workspace = view.run_workspace
    gui.window.project_view.select_conversation(payload["conversation_id"])
    gui.spin_until(lambda: view.loaded and workspace.snapshot is not None, 60)
    state_file = Path(workspace.snapshot.state_file)

    # What the panel shows, and when: every change of the Progress model.
    shown: list[tuple[int, str]] = []

    def on_change(*_args: Any) -> None:
        model = workspace.progress_model
        current = next((model.index(r, 0).data(RunRole.NODE_ID) for r in range(model.rowCount())
                        if model.index(r, 0).data(RunRole.STATUS) == "current"), "")
        if not shown or shown[-1][1] != current:
            shown.append((time.time_ns(), current))

    for signal in (workspace.progress_model.dataChanged, workspace.progress_model.modelReset):
        signal.connect(on_change)

    ticks: list[float] = []
    probe = QTimer()
    probe.setTimerType(Qt.TimerType.PreciseTimer)
    probe.timeout.connect(lambda: ticks.append(time.perf_counter()))
    probe.start(probe_ms)
    gui.spin_until(lambda: len(ticks) > 20, 5)

    # (1) More layouts of the 200-node graph on a plain thread, while the GUI runs.
    snapshot = workspace.snapshot
    edges = [(e.source, e.target, e.label, e.is_default) for e in snapshot.edges]
    extra: list[float] = []

    def lay_out() -> None:
        for _ in range(payload["extra_layouts"]):
            start = time.perf_counter()
            layout_graph([s.node_id for s in snapshot.steps], edges, roots=[snapshot.entry_node_id])
            extra.append((time.perf_counter() - start) * 1000)

    worker = threading.Thread(target=lay_out, name="bench-layout")
    layout_started = time.perf_counter()
    worker.start()
    gui.spin_until(lambda: not worker.is_alive(), 120)
    layout_ended = time.perf_counter()

    if not payload.get("panel", True):  # the baseline: the same turn with the Run workspace and the logs idle
        workspace.show_conversation("", "")
        view.logs.show_conversation("")
    # (2) The run: the model streams and writes the state every second; each write's delay to the panel.
    writes_at: list[tuple[int, int, str]] = []  # (mtime and ctime ns of the write, node it moved to)

    def note_write(_cid: str, progress: Any) -> None:
        try:
            stat = os.stat(state_file)
        except OSError:
            return
        writes_at.append((stat.st_mtime_ns, stat.st_ctime_ns, progress.current_node_id))

    gui.host.worker.turns.run_progress.connect(note_write, Qt.ConnectionType.DirectConnection)  # on the loop thread
    finished: list[str] = []
    turns = gui.host.worker.turns
    turns.turn_finished.connect(lambda cid, reason, error: finished.append(reason))

    run_started = time.perf_counter()
    view.composer.input.setPlainText("continue")
    view.composer.submit()
    gui.spin_until(lambda: bool(finished), 60 + 3 * payload["writes"])
    run_ended = time.perf_counter()
    gui.drain()

    # (3) Another process writes the state (an atomic replace, as the app's own writes), every 0.5 s.
    external: list[tuple[int, int, str]] = []
    for n in range(payload["external_writes"]):
        node = payload["nodes"][(n % 2) + len(payload["nodes"]) // 2]
        if payload.get("writes_here"):  # --smoke: the same write by this process (the app's file watch cannot tell)
            external.append((*write_state(str(state_file), node), node))
        else:
            writer = subprocess.Popen([sys.executable, "-c", _EXTERNAL_WRITE, str(Path(__file__).parent), str(state_file), node],
                                      stdout=subprocess.PIPE, text=True)
            gui.spin_until(lambda: writer.poll() is not None, 30)
            assert writer.stdout is not None
            with writer.stdout:
                mtime, ctime = (int(word) for word in writer.stdout.read().split())
                external.append((mtime, ctime, node))
        deadline = time.monotonic() + 0.5
        gui.spin_until(lambda: time.monotonic() > deadline, 5)
    probe.stop()
    gui.close()

    def delays(writes: list[tuple[int, int, str]], field: int = 0) -> list[float]:
        """From each write's mtime (``field`` 0) or ctime (1) to the panel showing its node."""
        out = []
        for write in writes:
            start, node = write[field], write[2]
            seen = next((t for t, current in shown if current == node and t >= write[0]), None)
            if seen is not None:
                out.append((seen - start) / 1e6)
        return out

    return {
        "ticks": ticks, "layout_window": [layout_started, layout_ended], "run_window": [run_started, run_ended],
        "loader_layouts": layouts, "thread_layouts": extra,
        "engine_delays": delays(writes_at), "engine_writes": len(writes_at),
        "external_delays": delays(external), "external_writes": len(external), "outcome": finished[:1],
        "engine_replace_delays": delays(writes_at, 1), "external_replace_delays": delays(external, 1),
        "gui_work": gui_work, "gui_cpu": gui_cpu, "first_shown": first_shown,
    }


def write_state(state_file: str, node: str) -> tuple[int, int]:
    """Replace the state file with currentNodeId = ``node`` (an atomic replace, as the app's own
    writes); the new file's mtime (its content written) and ctime (its rename into place), ns."""
    from crewagent.core.store._fsutil import atomic_write_bytes
    from crewagent.core.tools import frontmatter

    path = Path(state_file)
    document = frontmatter.parse(path.read_text(encoding="utf-8"))
    atomic_write_bytes(path, frontmatter.render(document, {**document.data, "currentNodeId": node}).encode("utf-8"))
    stat = os.stat(path)
    return stat.st_mtime_ns, stat.st_ctime_ns


#: Run by another process: ``write_state(argv[2], argv[3])`` (this module's folder is argv[1]); prints the mtime and ctime.
_EXTERNAL_WRITE = "import sys; sys.path.insert(0, sys.argv[1]); from _bench_run_ui import write_state; print(*write_state(*sys.argv[2:4]))"


def lateness(ticks: list[float], window: list[float], interval_ms: float) -> list[float]:
    """How late each probe tick came in ``window`` (the window's edges count as ticks: a stall at its
    start or end is not lost)."""
    inside = [window[0], *(t for t in ticks if window[0] <= t <= window[1]), window[1]]
    return [max(0.0, (b - a) * 1000 - interval_ms) for a, b in zip(inside, inside[1:])]


def section(scratch: Path, results: dict[str, Any], *, quick: bool, env_of: Callable[[str, str], dict[str, str]],
            run_child: Callable[[str, dict[str, Any], dict[str, str], float], dict[str, Any]],
            table: Callable[[list[str], list[list[str]]], str], percentile: Callable[[list[float], float], float],
            model_server: Callable[[str, dict[str, Any], dict[str, str]], AbstractContextManager[str]], probe_ms: int,
            smoke: bool = False) -> None:
    # --quick (the smoke run of tests/ui/test_bench_ui_smoke.py) only proves the section runs:
    # a 30-node graph, two short streams and writes, two outside writes, one extra layout, and
    # no baseline app (a third and fourth process, for a row that only a full run can compare).
    # ``smoke`` (--smoke, the test itself): streams of 0.1 s (the same writes, fewer chunks between
    # them), and the outside writes made by this process, not by two more.
    writes, nodes, stream_s, external_writes, extra_layouts = (2, 30, 0.3, 2, 1) if quick else (20, NODES, 1.0, 20, 5)
    if smoke:
        stream_s = 0.1
    outs: dict[bool, dict[str, Any]] = {}
    for panel in (True,) if quick else (True, False):
        data = prepare(scratch / ("run" if panel else "baseline"), writes=writes, nodes=nodes, stream_s=stream_s)
        env = env_of(data["config_dir"], data["data_dir"])
        with model_server("serve_run", data, env) as url:
            outs[panel] = run_child("run", {**data, "url": url, "external_writes": external_writes if panel else 0,
                                            "extra_layouts": extra_layouts, "panel": panel, "writes_here": smoke}, env, 600)
    out, baseline = outs[True], outs.get(False)
    out["baseline"] = baseline
    results["run"] = out
    loader = out["loader_layouts"]
    layouts = [ms for ms, _thread in loader] + out["thread_layouts"]
    threads = sorted({thread for _ms, thread in loader})
    layout_lag = lateness(out["ticks"], out["layout_window"], probe_ms)
    run_lag = lateness(out["ticks"], out["run_window"], probe_ms)
    base_lag = lateness(baseline["ticks"], baseline["run_window"], probe_ms) if baseline else []
    engine, external = out["engine_delays"], out["external_delays"]
    worst_layout = max(layouts) if layouts else float("nan")
    print(f"\n## 4. Run workspace: a {nodes}-node workflow, a run writing its state every {stream_s:g} s")
    print(f"\nA model streams 200 tokens/s and calls fs.apply_patch every {stream_s:g} s (a real state write through the "
          f"engine), {writes} times; then another process replaces the state file {out['external_writes']} times. "
          "The baseline is the same run in a fresh app whose Run workspace follows no conversation.")
    print(f"\nLoad average after the section: {', '.join(f'{x:.2f}' for x in os.getloadavg())}.")
    print()
    rows = [
        [f"layout of {nodes} nodes (grandalf), off the GUI thread", f"< {GOAL_LAYOUT_MS:.0f} ms",
         f"median {statistics.median(layouts):.0f} ms, max {worst_layout:.0f} ms ({len(layouts)} layouts; loader thread: {', '.join(threads)})"],
        ["  GUI tick lateness while laying out", f"< {GOAL_P99_MS:.0f} ms p99",
         f"p99 {percentile(layout_lag, 0.99):.1f} ms, max {max(layout_lag, default=0):.1f} ms"],
        ["progress: engine write → Progress tab", f"< {GOAL_PROGRESS_MS:.0f} ms",
         f"median {statistics.median(engine):.0f} ms, max {max(engine):.0f} ms ({len(engine)}/{out['engine_writes']} writes)" if engine else "none seen"],
        ["progress: another process's write → Progress tab", f"< {GOAL_PROGRESS_MS:.0f} ms",
         f"median {statistics.median(external):.0f} ms, max {max(external):.0f} ms ({len(external)}/{out['external_writes']} writes)" if external else "none seen"],
        ["  the same two, from the file's replace (its ctime; before it: the writer's fsync)", "",
         "; ".join(f"{name} median {statistics.median(values):.0f} ms, max {max(values):.0f} ms"
                   for name, values in (("engine", out["engine_replace_delays"]), ("other process", out["external_replace_delays"]))
                   if values) or "none seen"],
        ["GUI event loop while the run streams and writes", f"p99 < {GOAL_P99_MS:.0f} ms",
         f"p50 {percentile(run_lag, 0.5):.1f} ms, p99 {percentile(run_lag, 0.99):.1f} ms, max {max(run_lag, default=0):.1f} ms "
         f"({len(run_lag)} ticks of {probe_ms} ms, turn {out['outcome'][0] if out['outcome'] else '?'})"],
        ["  the same run with the Run workspace idle (baseline)", "",
         f"p50 {percentile(base_lag, 0.5):.1f} ms, p99 {percentile(base_lag, 0.99):.1f} ms, max {max(base_lag, default=0):.1f} ms"
         if baseline else "not run (--quick)"],
    ]
    cpu_of = out.get("gui_cpu", {})
    for name, spans in out["gui_work"].items():
        if spans:
            cpu = cpu_of.get(name) or []
            shown_first = out.get("first_shown") or []
            first = (f"; the first run snapshot: {shown_first[0]:.1f} ms, CPU {shown_first[1]:.1f} ms"
                     if shown_first and name == "snapshot shown" else "")
            rows.append([f"  the panel's GUI-thread work: {name}", "< 30 ms a slice",
                         f"median {statistics.median(spans):.1f} ms, max {max(spans):.1f} ms ({len(spans)} times); "
                         f"CPU median {statistics.median(cpu):.1f} ms, max {max(cpu):.1f} ms{first}" if cpu else
                         f"median {statistics.median(spans):.1f} ms, max {max(spans):.1f} ms ({len(spans)} times)"])
    print(table(["measure", "goal", "result"], rows))
    verdicts = [
        ("layout under 200 ms, off the GUI thread", worst_layout < GOAL_LAYOUT_MS and "MainThread" not in threads),
        ("progress reaches the panel within 100 ms", bool(engine and external) and max(engine + external) < GOAL_PROGRESS_MS),
        ("GUI p99 latency under 50 ms while a run streams", bool(run_lag) and percentile(run_lag, 0.99) < GOAL_P99_MS),
    ]
    print()
    for goal, held in verdicts:
        print(f"Goal \"{goal}\": **{'holds' if held else 'missed'}**.")
