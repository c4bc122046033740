"""syncscan: find where PyTorch code makes the CPU wait for the GPU, and what it costs."""

__version__ = "0.1.0"

# The runtime API (step, profile, no_sync, allow_sync) needs torch; import it lazily so that
# `import syncscan` and the linter stay light enough for a pre-commit environment.
_RUNTIME = {
    "step": "syncscan.runtime.api",
    "profile": "syncscan.runtime.api",
    "no_sync": "syncscan.runtime.guard",
    "allow_sync": "syncscan.runtime.guard",
}


def __getattr__(name):
    if name in _RUNTIME:
        import importlib

        return getattr(importlib.import_module(_RUNTIME[name]), name)
    raise AttributeError(f"module 'syncscan' has no attribute {name!r}")


__all__ = ["__version__", *_RUNTIME]
