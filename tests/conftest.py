"""Shared test settings: where the recorded GPU traces are, and skipping GPU-only tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# every report the tests produce (in this process and in the syncscan processes they start) is
# validated against docs/report.schema.json as it is made (syncscan.schema.check)
os.environ["SYNCSCAN_CHECK_REPORTS"] = "1"
# CI clones the repository with shared/ beside it (../shared); a checkout may also hold shared/.
SHARED = next((p for p in (REPO.parent / "shared", REPO / "shared") if (p / "traces").is_dir()), None)
TRACES = SHARED / "traces" if SHARED else None
FIXTURES = REPO / "fixtures"
PYTHON = sys.executable


def load_benchmark(name: str):
    """A script of benchmarks/ (a folder of scripts, not a package) as a module, loaded once."""
    import importlib.util

    key = f"syncscan_bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, REPO / "benchmarks" / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return sys.modules[key]


def _cuda() -> bool:
    if os.environ.get("SYNCSCAN_NO_GPU"):
        return False
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _cuda():
        skip = pytest.mark.skip(reason="needs a CUDA GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def traces_dir() -> Path:
    if TRACES is None:
        pytest.skip("the recorded traces (../shared/traces) are not beside this checkout")
    return TRACES
