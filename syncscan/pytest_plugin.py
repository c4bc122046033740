"""pytest plugin (entry point `pytest11: syncscan`): the `no_sync` fixture and marker.

    def test_step(no_sync):            # the test body fails at its first host-device sync
        train_step(model, batch)
        assert not no_sync.syncs

    @pytest.mark.no_sync               # the same, as a marker
    def test_loss(): ...

    @pytest.mark.no_sync(mode="warn")  # collect and warn instead of failing
    def test_report(): ...

Only the test function's call is guarded, not fixture setup or teardown (moving a model to
the GPU there is fine). Without a CUDA GPU such tests are skipped with the reason.

Loaded by every pytest run of a project that has syncscan installed, so this module imports
neither torch nor syncscan.runtime at start-up: they load when a test asks for the guard.
"""

from __future__ import annotations

import functools

import pytest

_MARKER = "no_sync"
_FIXTURE = "no_sync"


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{_MARKER}(mode='raise'): fail the test where it makes the host wait for a CUDA GPU "
        "(syncscan.no_sync; skipped without CUDA)",
    )


def _skip_if_unavailable(at_item: bool = False) -> None:
    from syncscan.runtime.guard import unavailable_reason

    reason = unavailable_reason()
    if reason is None:
        return
    message = f"syncscan.no_sync needs a CUDA GPU: {reason}"
    if at_item:  # report the test's location, not this file's (as skipif markers do)
        try:
            raise pytest.skip.Exception(message, _use_item_location=True)
        except TypeError:  # a pytest without that option
            pass
    pytest.skip(message)


def _options(item) -> dict:
    marker = item.get_closest_marker(_MARKER)
    if marker is None:
        return {}
    if marker.args:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.no_sync takes keyword options only "
                                "(mode='warn', strict=False)")
    return dict(marker.kwargs)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    # Skip before any fixture runs: a GPU test's fixtures may be costly or need CUDA.
    if item.get_closest_marker(_MARKER) is not None:
        _skip_if_unavailable(at_item=True)


@pytest.fixture(name=_FIXTURE)
def no_sync_fixture(request):
    """A `syncscan.no_sync()` guard active while the test function runs; `.syncs` lists syncs."""
    _skip_if_unavailable()
    from syncscan.runtime.guard import NoSync

    return NoSync(**_options(request.node))


def _guarded(test_function, guard):
    @functools.wraps(test_function)
    def run_guarded(*args, **kwargs):
        __tracebackhide__ = True
        with guard:
            return test_function(*args, **kwargs)

    return run_guarded


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    guard = None
    funcargs = getattr(item, "funcargs", None) or {}
    if _FIXTURE in funcargs:
        from syncscan.runtime.guard import NoSync

        if isinstance(funcargs[_FIXTURE], NoSync):  # not a project's own fixture of that name
            guard = funcargs[_FIXTURE]
    if guard is None and item.get_closest_marker(_MARKER) is not None and hasattr(item, "obj"):
        from syncscan.runtime.guard import NoSync

        guard = NoSync(**_options(item))
    if guard is None:
        yield
        return
    # Wrap the test function itself, so that the guard covers exactly the test's body and a
    # HostSyncError propagates like any failure of the test.
    original = item.obj
    item.obj = _guarded(original, guard)
    try:
        yield
    finally:
        item.obj = original
