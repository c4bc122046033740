"""All rules, loaded from the syncscan.rules package (the repository's rules/ folder)."""

from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache

TYPE_CHECKING = False  # (typing's, without importing typing: see records.py)
if TYPE_CHECKING:
    from syncscan.lint.rule import Rule

# (the rule machinery, pkgutil and pathlib are imported by what needs them: a lint served from the
# cache only asks where the rules package is)


def rules_package():
    """The syncscan.rules package. Installed, the build maps rules/ to it; run from a source
    checkout (PYTHONPATH=the checkout), it is mounted from the rules/ folder beside the package."""
    try:
        import syncscan.rules as pkg

        return pkg
    except ModuleNotFoundError as e:
        if e.name != "syncscan.rules":
            raise
    import importlib.util

    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    init = os.path.join(checkout, "rules", "__init__.py")
    if not os.path.isfile(init):
        raise ModuleNotFoundError("syncscan.rules is missing: reinstall syncscan", name="syncscan.rules")
    spec = importlib.util.spec_from_file_location("syncscan.rules", init, submodule_search_locations=[os.path.dirname(init)])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["syncscan.rules"] = pkg
    spec.loader.exec_module(pkg)
    import syncscan

    syncscan.rules = pkg
    return pkg


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    import pkgutil

    from syncscan.lint.rule import Rule

    pkg = rules_package()

    found: dict[str, type[Rule]] = {}
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"syncscan.rules.{info.name}")
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, Rule) and "code" in obj.__dict__ \
                    and obj.__module__ == mod.__name__:
                if obj.code in found:
                    raise RuntimeError(f"rule code {obj.code} defined twice")
                found[obj.code] = obj
    return tuple(found[c] for c in sorted(found))


@lru_cache(maxsize=None)
def trigger_words() -> tuple[str, ...]:
    """The prefilter's words: every rule's `triggers`, the torch-code words first (most files
    that can hold a finding say `torch`, so the search usually stops at the first word)."""
    from syncscan.lint.rule import TORCH_CODE

    union = dict.fromkeys(w for r in all_rules() for w in r.triggers)
    return tuple(sorted(union, key=lambda w: w not in TORCH_CODE))  # stable: the torch words first


def by_code() -> dict[str, type[Rule]]:
    return {r.code: r for r in all_rules()}


def signature() -> str:
    """Changes whenever a rule file changes, so cached results are not reused across versions."""
    import hashlib
    import inspect

    h = hashlib.blake2b(digest_size=8)
    for r in all_rules():
        try:
            h.update(inspect.getsource(inspect.getmodule(r)).encode())
        except (OSError, TypeError):
            h.update(r.code.encode())
    return h.hexdigest()
