"""What the runtime half knows about the rules: which rule a syncing op, copy or CUDA call
corresponds to, its one-line rewrite, and what the rewrite still runs (for the replay).

The facts are declared in each rule file (rules/, see syncscan.lint.rule.Rule) and generated
into syncscan/catalog_data.py, so the runtime half reads them without loading the rules (and
their linting code). This module holds the lookups over them.
"""

from __future__ import annotations

from typing import Optional

from syncscan.catalog_data import (
    COPY_RULE,
    FOOTPRINTS,
    HOST_FUNCTION_RULE,
    OP_TO_RULE,
    REWRITES,
    RULE_NAMES,
    RUNTIME_TO_RULE,
)

# ops whose sync is a device<->host copy: the rule depends on the copy direction (COPY_RULE)
COPY_OPS = {"aten::to", "aten::_to_copy", "aten::copy_", "aten::cpu", "aten::numpy", "aten::tensor",
            "aten::lift_fresh", "aten::as_tensor"}
# backward nodes of indexing: the sync reads the mask of the forward x[m] (boolean-mask read)
INDEX_BACKWARD = {"IndexBackward", "IndexPutBackward"}


def rule_for_op(op: Optional[str], copy_direction: Optional[str] = None,
                runtime_call: Optional[str] = None) -> Optional[str]:
    """The lint rule matching a runtime sync: by its op, else the copy direction, else the CUDA call."""
    if op:
        base = op[:-1] if op.endswith("Backward0") else op
        if op in OP_TO_RULE:
            return OP_TO_RULE[op]
        if op in COPY_OPS and copy_direction in COPY_RULE:
            return COPY_RULE[copy_direction]
        if base in INDEX_BACKWARD:
            return OP_TO_RULE["aten::index"]
    if runtime_call and not op:
        return RUNTIME_TO_RULE.get(runtime_call)
    return None


# HOST_FUNCTION_RULE by function name: (module prefix, rule) pairs
_HOST_FUNCTIONS: dict[str, list[tuple[str, str]]] = {}
for _name, _code in HOST_FUNCTION_RULE.items():
    _module, _, _fn = _name.rpartition(".")
    _HOST_FUNCTIONS.setdefault(_fn, []).append((_module, _code))


def rule_for_host_function(file: Optional[str], function: Optional[str]) -> Optional[str]:
    """The rule of a Python frame (`torch/distributed/distributed_c10d.py`, `barrier`) that calls
    one of the rules' host functions (torch.distributed.barrier is defined in that module)."""
    if not file or not function or function not in _HOST_FUNCTIONS:
        return None
    module = file.replace("\\", "/").removesuffix(".py").replace("/", ".")
    for prefix, code in _HOST_FUNCTIONS[function]:
        if module == prefix or module.startswith(prefix + "."):
            return code
    return None


def rewrite_for(code: Optional[str]) -> Optional[str]:
    """The rule's rewrite in one line (the full form: `syncscan rules CODE`)."""
    return REWRITES.get(code) if code else None


def footprint_for(code: Optional[str]) -> Optional[tuple[int, int, bool, bool]]:
    """(ops, backward nodes, keeps GPU work, keeps host time) of the rule's rewrite, or None."""
    return FOOTPRINTS.get(code) if code else None


__all__ = ["COPY_OPS", "COPY_RULE", "OP_TO_RULE", "RULE_NAMES", "RUNTIME_TO_RULE", "footprint_for", "rewrite_for",
           "rule_for_host_function", "rule_for_op"]
