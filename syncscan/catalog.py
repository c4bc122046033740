"""Rule codes shared by the static and runtime halves.

The rule files under rules/ are the source of truth for each rule's documentation; this module
holds only what the runtime half needs without loading them: which lint rule a synchronising
aten op or CUDA call corresponds to. A test checks every code here exists as a rule.
"""

from __future__ import annotations

# code -> kebab-case name (kept in sync with rules/ by tests/test_catalog.py)
RULE_NAMES = {
    "SYN101": "item",
    "SYN102": "tolist",
    "SYN103": "scalar-conversion",
    "SYN104": "tensor-condition",
    "SYN105": "tensor-format",
    "SYN106": "builtin-on-tensor",
    "SYN107": "host-comparison",
    "SYN108": "tensor-as-size",
    "SYN201": "copy-to-host",
    "SYN202": "host-data-to-device",
    "SYN203": "tensor-of-tensors",
    "SYN204": "unpinned-copy-to-device",
    "SYN205": "dataloader-without-pin-memory",
    "SYN206": "host-index",
    "SYN207": "scalar-index-assign",
    "SYN208": "ctc-loss",
    "SYN301": "nonzero",
    "SYN302": "boolean-mask-index",
    "SYN303": "boolean-mask-assign",
    "SYN304": "masked-select",
    "SYN305": "unique",
    "SYN306": "masked-cross-entropy",
    "SYN307": "bincount",
    "SYN308": "masked-fill-tensor-value",
    "SYN309": "nms",
    "SYN401": "repeat-interleave-without-output-size",
    "SYN402": "one-hot-without-num-classes",
    "SYN403": "histc-without-range",
    "SYN404": "linalg-without-ex",
    "SYN405": "distribution-validate-args",
    "SYN406": "clip-grad-norm-error-if-nonfinite",
    "SYN407": "grouped-mm-offsets",
    "SYN501": "cuda-synchronize",
    "SYN502": "event-or-stream-synchronize",
    "SYN503": "empty-cache",
    "SYN504": "blocking-collective",
}

# aten op (as named in profiler traces) -> rule code. Backward ops map through their forward op.
OP_TO_RULE = {
    "aten::item": "SYN101",
    "aten::_local_scalar_dense": "SYN101",
    "aten::tolist": "SYN102",
    "aten::is_nonzero": "SYN104",
    "aten::equal": "SYN107",
    "aten::allclose": "SYN107",
    "aten::nonzero": "SYN301",
    "aten::nonzero_numpy": "SYN301",
    "aten::argwhere": "SYN301",
    "aten::where": "SYN301",
    "aten::index": "SYN302",
    "aten::index_put": "SYN303",
    "aten::index_put_": "SYN303",
    "aten::_index_put_impl_": "SYN303",
    "aten::masked_select": "SYN304",
    "aten::unique": "SYN305",
    "aten::_unique": "SYN305",
    "aten::_unique2": "SYN305",
    "aten::unique_dim": "SYN305",
    "aten::unique_consecutive": "SYN305",
    "aten::bincount": "SYN307",
    "aten::masked_fill": "SYN308",
    "aten::masked_fill_": "SYN308",
    "aten::repeat_interleave": "SYN401",
    "aten::one_hot": "SYN402",
    "aten::histc": "SYN403",
    "aten::linalg_cholesky_ex": "SYN404",
    "aten::linalg_cholesky": "SYN404",
    "aten::linalg_inv": "SYN404",
    "aten::linalg_inv_ex": "SYN404",
    "aten::linalg_solve": "SYN404",
    "aten::linalg_lu_factor": "SYN404",
    "aten::linalg_ldl_factor": "SYN404",
    "aten::clip_grad_norm_": "SYN406",
    "aten::ctc_loss": "SYN208",
    "aten::_ctc_loss": "SYN208",
    "aten::_use_cudnn_ctc_loss": "SYN208",
    "aten::_cudnn_ctc_loss": "SYN208",
    "torchvision::nms": "SYN309",
    "aten::_grouped_mm": "SYN407",
}

# ops whose sync is a device<->host copy: the rule depends on the copy direction
COPY_OPS = {"aten::to", "aten::_to_copy", "aten::copy_", "aten::cpu", "aten::numpy", "aten::tensor",
            "aten::lift_fresh", "aten::as_tensor"}
COPY_RULE = {"DtoH": "SYN201", "HtoD": "SYN204"}

# runtime calls made outside any aten op
RUNTIME_TO_RULE = {
    "cudaDeviceSynchronize": "SYN501",
    "cudaEventSynchronize": "SYN502",
    "cudaStreamSynchronize": "SYN502",
}


def rule_for_op(op: str | None, copy_direction: str | None = None, runtime_call: str | None = None) -> str | None:
    """The lint rule matching a runtime sync: by its aten op, else the copy direction, else the CUDA call."""
    if op:
        base = op[:-1] if op.endswith("Backward0") else op
        if op in OP_TO_RULE:
            return OP_TO_RULE[op]
        if op in COPY_OPS and copy_direction in COPY_RULE:
            return COPY_RULE[copy_direction]
        if base in ("IndexBackward", "IndexPutBackward"):
            return "SYN302"
    if runtime_call and not op:
        return RUNTIME_TO_RULE.get(runtime_call)
    return None
