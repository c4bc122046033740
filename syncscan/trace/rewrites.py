"""One-line rewrite hint per rule code, shown next to each sync site in `syncscan analyze`.

The full explanation of each rule is `syncscan rules CODE`; these are the short form, taken from
shared/reference/sync-ops.md (the measured sync-free alternatives).
"""

REWRITES = {
    "SYN101": "keep the value on the GPU (torch.where, torch.maximum); read it every N steps in one batched copy",
    "SYN102": "keep the tensor on the GPU; copy to the host rarely, in one batch",
    "SYN103": "keep it a tensor: compare and combine on the GPU instead of int()/float()/bool()",
    "SYN104": "branch on the GPU with torch.where, or check with torch._assert_async(cond)",
    "SYN105": "format tensors rarely, after one batched copy to the host",
    "SYN106": "use torch.maximum / torch.minimum instead of builtin max/min on tensors",
    "SYN107": "keep the comparison a tensor: torch.isclose(a, b).all(), no Python bool",
    "SYN108": "use host integers for sizes and bounds; fill_(cuda_scalar) instead of full(shape, t)",
    "SYN201": "copy with .to('cpu', non_blocking=True) into pinned memory and wait on an event before reading",
    "SYN202": "build the tensor once outside the step, or pin_memory() then .to(dev, non_blocking=True)",
    "SYN203": "torch.stack([t0, t1]) instead of torch.tensor([t0, t1])",
    "SYN204": "pin the host tensor (pin_memory()) and copy with .to(dev, non_blocking=True)",
    "SYN205": "DataLoader(..., pin_memory=True) and .to(dev, non_blocking=True)",
    "SYN206": "keep index tensors on the device; index_select with a CUDA index",
    "SYN207": "assign a CUDA 0-dim tensor, or use index_fill_",
    "SYN301": "3-argument torch.where(m, a, b), torch.count_nonzero, or torch.nonzero_static(m, size=k)",
    "SYN302": "torch.where(m, x, 0); masked mean as (x * m).sum() / m.sum()",
    "SYN303": "torch.where(m, v, x) instead of x[m] = v",
    "SYN304": "torch.where(m, x, 0) and reduce, instead of masked_select",
    "SYN305": "count distinct values without unique: s = x.flatten().sort().values; (s[1:] != s[:-1]).sum() + 1",
    "SYN306": "cross_entropy(..., ignore_index=-1) with masked targets set to -1, no boolean masks",
    "SYN307": "torch.zeros(K, device=dev).scatter_add_(0, i, ones) with K known",
    "SYN308": "masked_fill(m, python_scalar) or torch.where(m, v, x)",
    "SYN401": "pass output_size= to repeat_interleave",
    "SYN402": "pass num_classes= to one_hot",
    "SYN403": "pass min= and max= to histc",
    "SYN404": "use the *_ex variant (linalg.cholesky_ex, inv_ex, ...) and check info on the GPU",
    "SYN405": "construct distributions with validate_args=False in the training step",
    "SYN406": "leave clip_grad_norm_(error_if_nonfinite=False), the default",
    "SYN501": "order work on the GPU with event.wait(stream) / stream.wait_stream(other), not synchronize()",
    "SYN502": "event.wait(stream) / stream.wait_stream(other) instead of a host-side synchronize",
    "SYN503": "do not call torch.cuda.empty_cache() in the step",
    "SYN504": "dist collectives with async_op=True; wait as late as possible",
}


def rewrite_for(code: str | None) -> str | None:
    return REWRITES.get(code) if code else None


# What each rule's rewrite still does per instance of the op that synced, for the replay's
# "with the rewrite" question (syncscan.trace.estimate): (forward ops that launch, backward
# nodes, whether the GPU work of the syncing op stays, whether its host time stays). Counted
# from the rewrite each rule documents (rules/). An op whose host time stays keeps it less its
# waits (the same op without the sync: `output_size=`, the `_ex` variant). A backward site (the
# backward node of a masked read) adds nothing: its rewrite's backward is counted with the
# forward op. A rule missing here is not modelled (only its waits are removed).
REWRITE_COST = {
    "SYN101": (1, 0, False, False),  # accumulate .detach()ed values on the device: one add_
    "SYN102": (1, 0, False, False),
    "SYN103": (1, 0, False, False),  # compare and combine on the device
    "SYN104": (2, 1, False, False),  # the comparison and torch.where; where's backward
    "SYN105": (0, 0, False, False),  # format rarely: nothing per step
    "SYN106": (1, 0, False, False),  # torch.maximum / minimum
    "SYN107": (2, 0, False, False),  # isclose + all
    "SYN108": (1, 0, False, False),
    "SYN201": (1, 0, False, False),  # the value stays on the device: the op that used the host copy
    "SYN202": (1, 0, True, False),   # a pinned non_blocking copy: the copy stays
    "SYN203": (1, 0, False, False),  # torch.stack
    "SYN204": (1, 0, True, False),   # a pinned non_blocking copy: the copy stays
    "SYN206": (1, 0, True, False),   # a device index: the gather stays
    "SYN207": (1, 0, False, False),  # index_fill_ / a 0-dim device value
    "SYN301": (1, 0, False, False),  # masked_fill / 3-argument where, no compaction
    "SYN302": (1, 0, False, False),  # where / multiply by the mask / an ignore_index fill
    "SYN303": (1, 0, False, False),  # where(m, v, x)
    "SYN304": (1, 0, False, False),
    # sort-and-count sorts as unique does (its GPU work and host time stay, less the wait), then
    # ne, sum, add for the count and lt, mul, where to decide on the device; 2 backward nodes
    "SYN305": (6, 2, True, True),
    "SYN306": (2, 0, False, False),  # the ignore_index fill and its mask
    "SYN307": (2, 0, False, False),  # zeros + scatter_add_
    "SYN308": (1, 0, False, False),
    "SYN401": (0, 0, True, True),    # the same op with output_size=
    "SYN402": (0, 0, True, True),    # with num_classes=
    "SYN403": (0, 0, True, True),    # with min= and max=
    "SYN404": (0, 0, True, True),    # the _ex variant does the same factorisation
    "SYN405": (0, 0, True, True),
    "SYN406": (0, 0, True, True),
    "SYN501": (0, 0, False, False),  # order with events and wait_stream; time with events
    "SYN502": (0, 0, False, False),
    "SYN503": (0, 0, False, False),
    "SYN504": (0, 0, True, True),    # async collective: the communication stays
}
