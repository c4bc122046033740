"""syncscan.no_sync / allow_sync and the pytest fixture and marker.

CPU tests stand in for the CUDA-only calls (`fake_cuda`): the debug-mode setting becomes a
variable, the CUDA bindings that the guard patches become recording fakes, and a custom op
raises the debug mode's own error. GPU tests (`gpu` marker) run the real thing.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import inspect
import os
import subprocess
import sys
import textwrap
import threading
import traceback
import warnings
from pathlib import Path

import pytest

import syncscan
from syncscan.runtime import guard as G
from syncscan.runtime.guard import (HostSyncError, HostSyncWarning, SyncGuardUnavailable,
                                    SyncGuardUnavailableWarning, allow_sync, no_sync)

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
THIS = Path(__file__).name


def next_line() -> int:
    """The line number after the caller's line."""
    return sys._getframe(1).f_lineno + 1


def where(line: int) -> str:
    return f"{THIS}:{line}"


# ----------------------------------------------------------------------------- CPU stand-ins

class FakeCuda:
    """The CUDA side of the guard, on a machine without a GPU."""

    def __init__(self, monkeypatch, torch):
        self.debug_mode = 0
        self.modes: list[int] = []  # every value the guard set
        self.calls: list[str] = []  # the fake bindings that ran
        monkeypatch.setattr(G, "unavailable_reason", lambda: None)
        monkeypatch.setattr(G, "_get_debug_mode", lambda: self.debug_mode)
        monkeypatch.setattr(G, "_set_debug_mode", self._set)
        for owner, name in ((torch._C, "_cuda_synchronize"), (torch._C, "_cuda_emptyCache"),
                            (torch._C, "_accelerator_synchronizeDevice"),
                            (torch.cuda.Event, "synchronize"), (torch.cuda.Stream, "synchronize")):
            monkeypatch.setattr(owner, name, self._binding(name), raising=False)
        self.originals = {name: getattr(torch._C, name) for name in ("_cuda_synchronize", "_cuda_emptyCache")}
        # the public wrappers check for a driver before they call the bindings
        monkeypatch.setattr(torch.cuda, "_lazy_init", lambda: None)
        monkeypatch.setattr(torch.cuda, "device", lambda device=None: contextlib.nullcontext())
        monkeypatch.setattr(torch.cuda.memory, "is_initialized", lambda: True)

    def _set(self, mode: int) -> None:
        self.debug_mode = mode
        self.modes.append(mode)

    def _binding(self, name):
        def binding(*args, **kwargs):
            self.calls.append(name)

        return binding


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def fake_cuda(monkeypatch, torch):
    fake = FakeCuda(monkeypatch, torch)
    yield fake
    assert not G._tls.stack and G._tls.mode is None and G._active == 0, "guard state leaked"


_fake_sync_state = {"cuda": None}  # the FakeCuda of the running test


def _fake_sync_op(torch):
    """A custom op that behaves like a syncing aten op under the debug mode: it raises c10's
    error while the (fake) debug mode is "error", and returns x * 2 otherwise."""
    if not hasattr(torch.library, "custom_op"):
        pytest.skip("torch.library.custom_op needs torch >= 2.4")
    name = "syncscan_test::fake_sync"
    if not hasattr(_fake_sync_op, "op"):
        @torch.library.custom_op(name, mutates_args=(), schema="(Tensor x) -> Tensor")
        def fake_sync(x):
            if _fake_sync_state["cuda"].debug_mode == 2:
                raise RuntimeError("called a synchronizing CUDA operation")
            return x * 2

        _fake_sync_op.op = fake_sync
    return _fake_sync_op.op


@pytest.fixture
def fake_sync(fake_cuda, torch):
    _fake_sync_state["cuda"] = fake_cuda
    yield _fake_sync_op(torch)
    _fake_sync_state["cuda"] = None


# ----------------------------------------------------------------------------- CPU: API

def test_syncscan_exports_the_guard():
    assert syncscan.no_sync is no_sync and syncscan.allow_sync is allow_sync
    assert issubclass(HostSyncError, AssertionError) and issubclass(HostSyncError, RuntimeError)


def test_guard_module_does_not_import_torch():
    code = "import sys, syncscan; syncscan.no_sync; import syncscan.pytest_plugin; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_bad_options():
    with pytest.raises(ValueError, match="'raise' or 'warn'"):
        no_sync(mode="collect")
    with pytest.raises(TypeError, match="keyword options"):
        no_sync(1)
    assert no_sync(raise_=False).mode == "warn" and no_sync().raise_


# ----------------------------------------------------------------------------- CPU: no CUDA

@pytest.fixture
def no_cuda(monkeypatch):
    monkeypatch.setattr(G, "unavailable_reason", lambda: "no GPU in this test")


def test_without_cuda_under_pytest_skips(no_cuda):
    ran = []
    with pytest.raises(pytest.skip.Exception, match="syncscan.no_sync needs a CUDA GPU: no GPU in this test"):
        with no_sync():
            ran.append(1)
    assert not ran


def test_without_cuda_outside_pytest_raises(no_cuda, monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    with pytest.raises(SyncGuardUnavailable, match="needs a CUDA GPU: no GPU in this test.*strict=False"):
        with no_sync():
            pass


def test_without_cuda_strict_false_warns_and_runs(no_cuda, monkeypatch):
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    with pytest.warns(SyncGuardUnavailableWarning, match="runs unchecked"):
        with no_sync(strict=False) as g:
            assert not g.checking
            ran = True
    assert ran and g.syncs == []


def test_unavailable_reason_matches_torch(torch):
    reason = G.unavailable_reason()
    assert (reason is None) == torch.cuda.is_available()


# ----------------------------------------------------------------------------- CPU: patches

def test_cuda_synchronize_raises_naming_the_line_and_restores(fake_cuda, torch):
    fake_cuda.debug_mode = 1  # the user's own setting, to be restored
    with pytest.raises(HostSyncError) as err:
        with no_sync():
            assert torch._C._cuda_synchronize is not fake_cuda.originals["_cuda_synchronize"]
            line = next_line()
            torch.cuda.synchronize()  # the public API; the stack walk skips torch's frames
    message = str(err.value)
    assert "torch.cuda.synchronize()" in message and "SYN501" in message
    assert where(line) in message and "torch.cuda.synchronize()" in message.splitlines()[2]
    assert err.value.event.function == "test_cuda_synchronize_raises_naming_the_line_and_restores"
    assert traceback.extract_tb(err.value.__traceback__)[-1].lineno == line  # trimmed to the user's line
    assert fake_cuda.calls == []  # raised before waiting
    assert fake_cuda.modes == [2, 1] and fake_cuda.debug_mode == 1
    assert torch._C._cuda_synchronize is fake_cuda.originals["_cuda_synchronize"]


@pytest.mark.parametrize("call,what", [
    (lambda t: t.cuda.empty_cache(), "torch.cuda.empty_cache()"),
    (lambda t: t.cuda.Event.synchronize(object()), "torch.cuda.Event.synchronize()"),
    (lambda t: t.cuda.Stream.synchronize(object()), "torch.cuda.Stream.synchronize()"),
    (lambda t: t._C._accelerator_synchronizeDevice(0), "torch.accelerator.synchronize()"),
], ids=["empty_cache", "event", "stream", "accelerator"])
def test_explicit_waits_raise(fake_cuda, torch, call, what):
    with pytest.raises(HostSyncError, match=r"host waits for the GPU: " + what.replace("(", r"\(").replace(")", r"\)")):
        with no_sync():
            call(torch)
    assert fake_cuda.calls == []


def test_a_patch_names_the_callers_line_not_a_helper_in_torch(fake_cuda, torch):
    def user_helper():
        return torch.cuda.empty_cache()  # the line to name

    line = inspect.getsourcelines(user_helper)[1] + 1
    with pytest.raises(HostSyncError) as err, no_sync():
        user_helper()
    assert err.value.event.lineno == line and err.value.event.function == "user_helper"


def test_allow_sync_permits_and_restores_the_users_mode(fake_cuda, torch):
    fake_cuda.debug_mode = 1
    with no_sync():
        with allow_sync():
            assert fake_cuda.debug_mode == 1  # the mode from before the guard
            torch.cuda.synchronize()
        assert fake_cuda.debug_mode == 2
        with pytest.raises(HostSyncError):
            torch.cuda.synchronize()

    @allow_sync
    def known_sync():
        torch.cuda.synchronize()

    with no_sync():
        known_sync()
    assert fake_cuda.calls == ["_cuda_synchronize", "_cuda_synchronize"]
    assert fake_cuda.debug_mode == 1


def test_allow_sync_outside_a_guard_does_nothing(fake_cuda, torch):
    with allow_sync():
        torch.cuda.synchronize()
    assert fake_cuda.calls == ["_cuda_synchronize"] and fake_cuda.modes == []


def test_warn_mode_collects_and_continues(fake_cuda, torch):
    with pytest.warns(HostSyncWarning) as record:
        with no_sync(raise_=False) as g:
            first = next_line()
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            with allow_sync():
                torch.cuda.synchronize()  # not collected
    assert [e.what for e in g.syncs] == ["torch.cuda.synchronize()", "torch.cuda.empty_cache()"]
    assert [e.lineno for e in g.syncs] == [first, first + 1]
    assert fake_cuda.calls == ["_cuda_synchronize", "_cuda_emptyCache", "_cuda_synchronize"]
    assert len(record) == 2 and record[0].filename == __file__ and record[0].lineno == first


def test_nested_guards_innermost_wins_and_patches_come_off_once(fake_cuda, torch):
    with no_sync():
        with no_sync(mode="warn") as inner, pytest.warns(HostSyncWarning):
            torch.cuda.synchronize()
        assert len(inner.syncs) == 1
        assert torch._C._cuda_synchronize.__syncscan_original__ is fake_cuda.originals["_cuda_synchronize"]
        with pytest.raises(HostSyncError):
            torch.cuda.synchronize()
    assert torch._C._cuda_synchronize is fake_cuda.originals["_cuda_synchronize"]
    assert fake_cuda.modes[-1] == 0


def test_other_exceptions_pass_through_and_state_is_restored(fake_cuda, torch):
    with pytest.raises(ValueError, match="not a sync"):
        with no_sync():
            raise ValueError("not a sync")
    assert fake_cuda.modes == [2, 0]
    assert torch._C._cuda_synchronize is fake_cuda.originals["_cuda_synchronize"]


def test_a_bare_debug_mode_error_becomes_a_host_sync_error(fake_cuda):
    with pytest.raises(HostSyncError) as err:
        with no_sync():
            line = next_line()
            raise RuntimeError("called a synchronizing CUDA operation")
    assert err.value.event.lineno == line and isinstance(err.value.__cause__, RuntimeError)
    assert traceback.extract_tb(err.value.__traceback__)[-1].lineno == line


def test_other_threads_are_not_checked(fake_cuda, torch):
    outcome = []

    def worker():
        try:
            torch.cuda.synchronize()
            outcome.append("waited")
        except HostSyncError:
            outcome.append("raised")

    with no_sync():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        with pytest.raises(HostSyncError):
            torch.cuda.synchronize()
    assert outcome == ["waited"]


def test_decorator_forms(fake_cuda, torch):
    @no_sync
    def bare():
        torch.cuda.synchronize()

    @no_sync(mode="raise")
    def called():
        torch.cuda.synchronize()

    for func in (bare, called):
        with pytest.raises(HostSyncError) as err:
            func()
        assert err.value.event.function == func.__name__
    assert G._active == 0


def test_a_guard_cannot_be_entered_twice(fake_cuda):
    guard = no_sync()
    with guard:
        with pytest.raises(RuntimeError, match="already active"):
            guard.__enter__()
    with guard:  # and can be used again once left
        pass


# ----------------------------------------------------------------------------- CPU: dispatch mode

def test_an_op_that_syncs_is_named_with_the_callers_line(fake_sync, torch):
    x = torch.ones(3)
    with pytest.raises(HostSyncError) as err:
        with no_sync():
            torch.add(x, 1)  # ops that do not sync run as usual
            line = next_line()
            fake_sync(x)
    assert "host waits for the GPU: syncscan_test::fake_sync" in str(err.value)
    assert err.value.event.lineno == line and where(line) in str(err.value)
    assert traceback.extract_tb(err.value.__traceback__)[-1].lineno == line
    assert err.value.__suppress_context__  # torch's bare error is not chained: the message says it all


def test_syncscan_debug_keeps_the_whole_traceback(fake_cuda, torch, monkeypatch):
    monkeypatch.setenv("SYNCSCAN_DEBUG", "1")
    with pytest.raises(HostSyncError) as err, no_sync():
        torch.cuda.synchronize()
    assert traceback.extract_tb(err.value.__traceback__)[-1].filename == G.__file__


def test_warn_mode_reruns_the_op_with_the_check_off(fake_sync, fake_cuda, torch):
    x = torch.ones(3)
    with pytest.warns(HostSyncWarning), no_sync(mode="warn") as g:
        y = fake_sync(x)
        z = fake_sync(y)
        assert fake_cuda.debug_mode == 2  # back on after each rerun
    assert torch.equal(z, x * 4)
    assert [e.what for e in g.syncs] == ["syncscan_test::fake_sync"] * 2


def test_ops_inside_allow_sync_are_not_checked(fake_sync, torch):
    with no_sync() as g:
        with allow_sync():
            y = fake_sync(torch.ones(2))
    assert torch.equal(y, torch.full((2,), 2.0)) and g.syncs == []


def test_pageable_non_blocking_copy_is_flagged(torch):
    src = torch.ones(4)  # pageable
    to_copy = torch.ops.aten._to_copy.default
    flagged = G._missed_sync(to_copy, (src,), {"device": torch.device("cuda"), "non_blocking": True})
    assert flagged is not None and flagged[0] == "SYN204"
    assert G._missed_sync(to_copy, (src,), {"device": torch.device("cuda"), "non_blocking": False}) is None
    assert G._missed_sync(to_copy, (src,), {"dtype": torch.float64, "non_blocking": True}) is None


# ----------------------------------------------------------------------------- pytest plugin

def _pytest_command(*args: str) -> list[str]:
    """pytest in a subprocess; loads the plugin explicitly where syncscan is not installed."""
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]
    if not any(ep.name == "syncscan" for ep in importlib.metadata.entry_points(group="pytest11")):
        cmd[3:3] = ["-p", "syncscan.pytest_plugin"]
    return cmd


def _run_pytest(tmp_path: Path, source: str, *args: str, env_extra: dict | None = None):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # keep this repository's settings out
    test_file = tmp_path / "test_user.py"
    test_file.write_text(textwrap.dedent(source))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               **(env_extra or {}))
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run(_pytest_command("-rA", str(test_file), *args), capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=120)


USER_TESTS_WITHOUT_GPU = """
    import sys
    import pytest
    import syncscan

    def test_plugin_loaded_without_torch():
        assert "torch" not in sys.modules

    def test_fixture(no_sync):
        raise AssertionError("must not run")

    @pytest.mark.no_sync
    def test_marker():
        raise AssertionError("must not run")

    @pytest.mark.no_sync(mode="warn")
    def test_marker_with_options():
        raise AssertionError("must not run")

    @syncscan.no_sync
    def test_decorator():
        raise AssertionError("must not run")
"""


def test_plugin_without_cuda_skips_with_the_reason(tmp_path):
    # CUDA_VISIBLE_DEVICES="" hides any GPU, so this runs the same on a GPU machine
    out = _run_pytest(tmp_path, USER_TESTS_WITHOUT_GPU, env_extra={"CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 passed, 4 skipped" in out.stdout, out.stdout
    for name, line in (("test_fixture", 9), ("test_marker", 12), ("test_marker_with_options", 16),
                       ("test_decorator", 20)):
        expected = f"SKIPPED [1] test_user.py:{line}: syncscan.no_sync needs a CUDA GPU: "
        assert expected in out.stdout, f"{name}: {out.stdout}"
    assert "must not run" not in out.stdout


def test_plugin_registers_the_marker(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    out = subprocess.run(_pytest_command("--markers"), capture_output=True, text=True, cwd=tmp_path,
                         env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=120)
    assert "@pytest.mark.no_sync(mode='raise'): fail the test where it makes the host wait" in out.stdout


# ============================================================================= GPU
# The naive patterns: each function's line marked `# sync` must be named in the error.

def _nonzero(t, d):
    m = t.rand(64, device=d) > 0.5
    return t.nonzero(m)  # sync


def _item(t, d):
    x = t.rand(64, device=d)
    return x.sum().item()  # sync


def _if_tensor(t, d):
    x = t.rand(64, device=d)
    if (x > 2).any():  # sync
        return 1


def _mask_read(t, d):
    x = t.rand(64, device=d)
    return x[x > 0.5]  # sync


def _mask_assign(t, d):
    x = t.rand(64, device=d)
    x[x > 0.5] = t.zeros((), device=d)  # sync


def _to_host(t, d):
    return t.rand(64, device=d).cpu()  # sync


def _tensor_from_list(t, d):
    return t.tensor([1.0, 2.0], device=d)  # sync


def _cuda_synchronize(t, d):
    t.rand(64, device=d)
    t.cuda.synchronize()  # sync


def _event_synchronize(t, d):
    e = t.cuda.Event()
    e.record()
    e.synchronize()  # sync


def _stream_synchronize(t, d):
    t.cuda.current_stream().synchronize()  # sync


def _empty_cache(t, d):
    t.cuda.empty_cache()  # sync


def _pageable_to(t, d):
    x = t.ones(1 << 16)
    return x.to(d, non_blocking=True)  # sync


def _pageable_cuda(t, d):
    x = t.ones(1 << 16)
    return x.cuda(non_blocking=True)  # sync


def _pageable_copy_(t, d):
    x, y = t.ones(1 << 16), t.empty(1 << 16, device=d)
    y.copy_(x, non_blocking=True)  # sync


def _pageable_copy_to_host(t, d):
    x, y = t.ones(1 << 16, device=d), t.empty(1 << 16)
    y.copy_(x, non_blocking=True)  # sync


def _unique_dim(t, d):
    x = t.randint(0, 3, (64, 2), device=d)
    return t.unique(x, dim=0)  # sync


def _masked_backward(t, d):
    x = t.rand(64, device=d, requires_grad=True)
    with allow_sync():
        y = x[x.detach() > 0.5].sum()
    y.backward()  # sync


NAIVE = [
    (_nonzero, "aten::nonzero"), (_item, "aten::_local_scalar_dense"), (_if_tensor, None),
    (_mask_read, "aten::index"), (_mask_assign, "aten::index_put_"), (_to_host, "aten::_to_copy"),
    (_tensor_from_list, None), (_cuda_synchronize, "torch.cuda.synchronize()"),
    (_event_synchronize, "torch.cuda.Event.synchronize()"),
    (_stream_synchronize, "torch.cuda.Stream.synchronize()"),
    (_empty_cache, "torch.cuda.empty_cache()"), (_pageable_to, "aten::_to_copy"),
    (_pageable_cuda, "aten::_to_copy"), (_pageable_copy_, "aten::copy_"),
    (_pageable_copy_to_host, "aten::copy_"), (_unique_dim, "aten::unique_dim"),
    (_masked_backward, None),
]


def _marked_line(func) -> int:
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, text in enumerate(lines) if text.rstrip().endswith("# sync"))


def _report(text: str) -> None:
    """Append to the file named by SYNCSCAN_GUARD_REPORT (what docs/guard.md quotes)."""
    path = os.environ.get("SYNCSCAN_GUARD_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(text.rstrip() + "\n\n")


@pytest.fixture
def cuda(torch):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    torch.ones(1, device="cuda").sum().item()  # CUDA context made outside any guard
    return torch.device("cuda")


@pytest.mark.gpu
@pytest.mark.parametrize("pattern,what", NAIVE, ids=[f.__name__.strip("_") for f, _ in NAIVE])
def test_gpu_naive_pattern_fails_naming_the_line(torch, cuda, pattern, what):
    with allow_sync():
        pattern(torch, cuda)  # warm up (lazy inits) unguarded
    with pytest.raises(HostSyncError) as err:
        with no_sync():
            pattern(torch, cuda)
    event = err.value.event
    _report(f"[{pattern.__name__}]\n{err.value}")
    assert (event.filename, event.lineno) == (__file__, _marked_line(pattern)), str(err.value)
    if what is not None:
        assert event.what == what, str(err.value)
    if pattern is _masked_backward:
        assert event.in_backward and "in backward" in str(err.value)
        assert "IndexBackward0" in event.what and event.rule == "SYN302", str(err.value)
    assert traceback.extract_tb(err.value.__traceback__)[-1].lineno == _marked_line(pattern)
    assert torch.cuda.get_sync_debug_mode() == 0


def _sync_free(t, d):
    x = t.rand(1024, device=d, requires_grad=True)
    m = x.detach() > 0.5
    y = t.where(m, x, 0.0)  # 3-argument where
    masked_mean = (y * m).sum() / m.sum()
    target = t.randint(-1, 10, (256,), device=d)
    logits = t.randn(256, 10, device=d, requires_grad=True)
    ce = t.nn.functional.cross_entropy(logits, target, ignore_index=-1)
    s = target.sort().values
    num_labels = (s[1:] != s[:-1]).sum() + 1  # instead of unique()
    loss = t.where(num_labels < 2, 0.0 * ce, ce) + masked_mean
    loss.backward()
    x2 = x.detach().clone()
    x2[m] = 0.0  # boolean mask with a Python scalar becomes masked_fill: no sync
    idx = t.nonzero_static(m, size=8)
    pinned = PINNED[0]  # pinned outside the guard (pinning allocates host memory)
    on_gpu = pinned.to(d, non_blocking=True)
    back = on_gpu.to("cpu", non_blocking=True)  # into pinned memory
    done = t.cuda.Event()
    done.record()
    side = t.cuda.Stream()
    side.wait_event(done)
    side.wait_stream(t.cuda.current_stream())
    t._assert_async(on_gpu.sum() > 0)
    return loss.detach(), idx, back, done


PINNED: list = []


@pytest.mark.gpu
def test_gpu_sync_free_code_passes(torch, cuda):
    PINNED[:] = [torch.ones(1 << 16).pin_memory()]
    _sync_free(torch, cuda)  # warm up
    with no_sync() as g:
        loss, idx, back, done = _sync_free(torch, cuda)
    assert g.syncs == []
    done.synchronize()  # after the guard: values are right
    assert back.sum().item() == 1 << 16 and torch.isfinite(loss).item()


@pytest.mark.gpu
def test_gpu_allow_sync_and_restore(torch, cuda):
    x = torch.rand(64, device=cuda)
    expected = x.sum().item()
    torch.cuda.set_sync_debug_mode("warn")
    try:
        with no_sync():
            assert torch.cuda.get_sync_debug_mode() == 2
            with allow_sync():
                assert torch.cuda.get_sync_debug_mode() == 1
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the user's own "warn" mode speaks here
                    value = x.sum().item()
            with pytest.raises(HostSyncError):
                x.sum().item()
        assert torch.cuda.get_sync_debug_mode() == 1
        assert value == pytest.approx(expected, rel=1e-5)
        assert not hasattr(torch._C._cuda_synchronize, "__syncscan_original__")
        assert not hasattr(torch.cuda.Event.synchronize, "__syncscan_original__")
    finally:
        torch.cuda.set_sync_debug_mode(0)


@pytest.mark.gpu
def test_gpu_warn_mode_collects_every_sync_and_gets_the_same_results(torch, cuda):
    x = torch.rand(4096, device=cuda)
    m = x > 0.5
    expected = (x[m].sum().item(), torch.nonzero(m).shape[0], torch.unique(x.round()).tolist())
    with pytest.warns(HostSyncWarning), no_sync(mode="warn") as g:
        got = (x[m].sum().item(), torch.nonzero(m).shape[0], torch.unique(x.round()).tolist())
        torch.cuda.synchronize()
    assert got == expected
    whats = [e.what for e in g.syncs]
    _report("[warn mode]\n" + "\n".join(str(e) for e in g.syncs))
    assert "aten::index" in whats and "aten::nonzero" in whats and "torch.cuda.synchronize()" in whats
    assert "aten::_local_scalar_dense" in whats and len(whats) >= 5
    assert all(e.filename == __file__ for e in g.syncs)


def _load_fixture(name: str):
    path = FIXTURES / f"{name}.py"
    if not path.exists():
        pytest.skip(f"{path.relative_to(REPO)} does not exist yet")
    spec = importlib.util.spec_from_file_location(f"syncscan_fixture_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _line_of(module, text: str) -> int:
    lines = Path(module.__file__).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.mark.gpu
def test_gpu_naive_masked_loss_fails_at_its_first_sync(torch, cuda):
    naive = _load_fixture("masked_loss_naive")
    step = naive.make_step(cuda, batch=4, size=32)
    with allow_sync():
        step()  # warm-up: cuDNN and the optimizer state
    with pytest.raises(HostSyncError) as err, no_sync():
        step()
    event = err.value.event
    _report(f"[masked_loss_naive, raise]\n{err.value}")
    assert Path(event.filename).name == "masked_loss_naive.py"
    assert event.lineno == _line_of(naive, "torch.nonzero(")
    assert event.what in ("aten::nonzero", "aten::nonzero_numpy"), str(err.value)

    with pytest.warns(HostSyncWarning), no_sync(mode="warn") as g:
        step()
    _report("[masked_loss_naive, warn: one step]\n" + "\n".join(str(e) for e in g.syncs))
    lines = {(Path(e.filename).name, e.lineno) for e in g.syncs if e.filename}
    for text in ("torch.nonzero(", "target[inds] =", "torch.unique(", "F.cross_entropy(pred[mask]",
                 "loss.backward()"):
        assert ("masked_loss_naive.py", _line_of(naive, text)) in lines, (text, lines)
    assert any(e.in_backward for e in g.syncs)


@pytest.mark.gpu
def test_gpu_fixed_masked_loss_passes(torch, cuda):
    fixed = _load_fixture("masked_loss_fixed")
    step = fixed.make_step(cuda, batch=4, size=32)
    step()  # warm-up, unguarded
    with no_sync() as g:
        losses = [step() for _ in range(3)]
    assert g.syncs == [] and all(torch.isfinite(loss).item() for loss in losses)


USER_TESTS_ON_GPU = """
    import pytest
    import torch

    def test_fixture_naive(no_sync):
        m = torch.rand(64, device="cuda") > 0.5
        torch.nonzero(m)

    def test_fixture_clean(no_sync):
        x = torch.rand(64, device="cuda")
        torch.where(x > 0.5, x, 0.0).sum()
        assert no_sync.syncs == []

    @pytest.mark.no_sync
    def test_marker_naive():
        x = torch.rand(64, device="cuda")
        x.sum().item()

    @pytest.mark.no_sync(mode="warn")
    def test_marker_warn():
        x = torch.rand(64, device="cuda")
        x.sum().item()
"""


@pytest.mark.gpu
def test_gpu_plugin_fails_the_naive_tests(tmp_path, cuda):
    out = _run_pytest(tmp_path, USER_TESTS_ON_GPU, "-W", "default")
    _report("[pytest plugin]\n" + out.stdout[-3000:])
    assert "2 failed, 2 passed" in out.stdout, out.stdout + out.stderr
    assert "FAILED test_user.py::test_fixture_naive" in out.stdout
    assert "FAILED test_user.py::test_marker_naive" in out.stdout
    assert "test_user.py:7" in out.stdout and "aten::nonzero" in out.stdout
    assert "test_user.py:17" in out.stdout and "aten::_local_scalar_dense" in out.stdout
    assert "HostSyncWarning" in out.stdout  # from the warn-mode marker
    assert "torch/_dynamo" not in out.stdout and "prototype feature" not in out.stdout
    assert "torch.nonzero(m)\nE " in out.stdout  # the traceback ends at the user's line
