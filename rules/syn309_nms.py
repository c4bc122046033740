from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import not_a_device_tensor, short

# torchvision's non-maximum suppression: the public functions and the custom op they call
FUNCS = frozenset({
    "torchvision.ops.nms", "torchvision.ops.batched_nms", "torchvision.ops.boxes.nms",
    "torchvision.ops.boxes.batched_nms", "torch.ops.torchvision.nms", "torch.ops.torchvision.nms.default",
})


class Nms(Rule):
    code = "SYN309"
    name = "nms"
    summary = ("torchvision's non-maximum suppression: `torchvision.ops.nms`, `batched_nms` and the custom op "
               "`torch.ops.torchvision.nms`.")
    why = ("How many boxes survive depends on the data: the CUDA kernel computes the suppression mask on the GPU, "
           "then copies it to the host to pick the kept boxes and size the output, so the host waits for all "
           "queued GPU work at every call (once per image, or per class, in a loop).")
    rewrite = ("Call it as rarely as possible: one `batched_nms(boxes, scores, idxs, t)` over every image and "
               "class of the batch (offset `idxs` by image) instead of a loop of `nms` calls, one wait instead "
               "of many. Where an approximate suppression is acceptable, a fixed-size one has no wait: on boxes "
               "sorted by score, `iou = box_iou(b, b).triu_(1); keep = iou.amax(0) <= t` (Fast NMS) gives a "
               "mask of fixed shape to use with `torch.where` or as weights.")
    triggers = TORCH_CODE
    ops = ("torchvision::nms",)
    rewrite_hint = "one batched_nms over the whole batch; or Fast NMS: keep = box_iou(b, b).triu_(1).amax(0) <= t"
    footprint = Footprint(ops=6)  # Fast NMS: box_iou (about 3 ops), triu_, amax, le; no nms kernel
    bad = (
        Bad("""
import torchvision
def postprocess(self, boxes, scores):
    keep = torchvision.ops.nms(boxes, scores, 0.5)
    return boxes[keep]
""", line=4),
        Bad("""
from torchvision.ops import boxes as box_ops
def forward(self, boxes, scores, labels):
    keep = box_ops.batched_nms(boxes, scores, labels, self.nms_thresh)
    return keep[: self.detections_per_img]
""", line=4),
        Bad("""
import torch
def nms(boxes, scores, iou_threshold: float):
    return torch.ops.torchvision.nms(boxes, scores, iou_threshold)
""", line=4),
    )
    good = (
        Good("""
import torch
from torchvision.ops import box_iou
def forward(self, boxes, scores, t: float):
    order = scores.argsort(descending=True)
    b = boxes[order]
    keep = box_iou(b, b).triu_(1).amax(0) <= t  # Fast NMS: a fixed-size mask, no wait
    return torch.where(keep[:, None], b, 0)
"""),
        Good("""
import torch
import torchvision
def check():
    b = torch.rand(10, 4)  # on the host: nothing to wait for
    return torchvision.ops.nms(b, torch.rand(10), 0.5)
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q not in FUNCS:
            return
        if node.args and not_a_device_tensor(ctx, node.args[0]):
            return  # boxes on the host
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the number of boxes kept depends on the data, so the "
                    "suppression mask is copied to the host, which waits for all queued GPU work",
                    "one `batched_nms` over the whole batch instead of a loop of calls; or a fixed-size Fast NMS "
                    "(`box_iou(b, b).triu_(1).amax(0) <= t` on score-sorted boxes) where an approximation is fine")
