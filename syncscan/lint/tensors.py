"""Which expressions hold tensors: a per-function, flow-in-source-order inference.

Kinds are small strings. A name's kind comes from what was last assigned to it in source order
(good enough for straight-line training code; branches keep the last assignment). Unknown is
None: rules that need a tensor stay silent on it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from syncscan.lint.imports import dotted, qualify

TENSOR = "tensor"  # a tensor that may live on a CUDA device
CPU = "cpu_tensor"  # a tensor known to live in host memory
TENSORS = "tensors"  # a tuple/list of tensors
CPUS = "cpu_tensors"  # a tuple/list of tensors known to live in host memory (matcher indices, ...)
HOST = "host"  # a Python value: int, float, bool, str, torch.Size, shape entries
NDARRAY = "ndarray"
MODULE = "module"  # an nn.Module (calling it gives a tensor)
LOADER = "loader"  # a DataLoader (iterating it gives tensors)
OPTIMIZER = "optimizer"
OTHER = "other"  # a known non-tensor object: device, dtype, stream, event, distribution, ...
# the CPU device, as what a function returns (a position of its tuple) or a parameter is seeded with
# (`return torch.empty(0).device`, `helper(x, torch.device("cpu"))`): a name bound to it is an OTHER kind
# that `Env.cpu_devices` holds; `Inference.kind` never answers it
CPU_DEVICE = "cpu_device"
# what a function returns that is the device of a tensor its arguments hold, or the CPU device on a path
# that found none (`return tensors[0].device if tensors else torch.device("cpu")`, `tensors` the tensors of
# a parameter): the CPU device at a call handed no tensor that may be on a device (`Walk.resolve_call`)
ARG_DEVICE = "arg_device"

TENSORISH = (TENSOR, CPU)
# `record:State`: an instance of a record type of the module (namedtuple, dataclass); `record:State:tensor||host`
# when the construction says what some fields hold (in field order; empty: unknown, read off the type)
RECORD = "record:"


def record_kind(name: str, fields: list | tuple | None = None) -> str:
    if not fields or not any(fields):
        return RECORD + name
    return f"{RECORD}{name}:" + "|".join(k if k is not None and not k.startswith(RECORD) else "" for k in fields)


def parse_record(kind: str | None) -> tuple[str, list] | None:
    """(record type, the kinds its fields hold as far as the value says: [] when it says nothing)."""
    if kind is None or not kind.startswith(RECORD):
        return None
    name, _, fields = kind[len(RECORD):].partition(":")
    return name, [k or None for k in fields.split("|")] if fields else []

# tensor attributes that are host values, and those that are tensors
HOST_ATTRS = frozenset({
    "shape", "ndim", "dtype", "device", "is_cuda", "is_cpu", "requires_grad", "layout", "names",
    "is_leaf", "is_sparse", "is_quantized", "is_meta", "itemsize", "nbytes", "grad_fn", "is_mps",
    "_version", "output_nr", "retains_grad", "is_nested", "is_xpu", "is_sparse_csr", "is_mkldnn",
})
# tensor methods whose result is a host value (they may or may not sync: rules decide)
HOST_METHODS = frozenset({
    "item", "tolist", "numel", "dim", "ndimension", "nelement", "element_size", "get_device",
    "is_contiguous", "is_floating_point", "is_complex", "data_ptr", "stride", "storage_offset",
    "__len__", "is_pinned", "is_shared", "is_set_to", "type", "is_signed", "untyped_storage",
    "equal", "allclose", "is_nonzero", "register_hook", "backward", "size",
    "sparse_dim", "dense_dim", "_nnz", "_dimI", "_dimV",
})
NDARRAY_METHODS = frozenset({"numpy"})
# namespaces whose functions are tensor operators
OP_NAMESPACES = frozenset({
    "torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special", "torch.sparse", "torch.nested",
    "torch.nn.init", "torch.nn.utils.rnn", "torch.masked", "torch.signal.windows",
})

# autograd's functions outside the operator namespaces, by what they return: `torch.autograd.grad` a tuple of
# gradients (on the inputs' device), the `torch.autograd.functional` transforms a tensor (or a tuple of them
# for tuple inputs; `vjp` / `jvp` / `vhp` / `hvp` give (outputs, products)), `parameters_to_vector` one tensor
_AUTOGRAD_RETURNS = {
    "torch.autograd.grad": TENSORS, "torch.autograd.functional.vjp": TENSORS,
    "torch.autograd.functional.jvp": TENSORS, "torch.autograd.functional.vhp": TENSORS,
    "torch.autograd.functional.hvp": TENSORS, "torch.nn.utils.parameters_to_vector": TENSOR,
    "torch.nn.utils.convert_parameters.parameters_to_vector": TENSOR,
}

# torch functions that do not return tensors
TORCH_HOST_FUNCS = frozenset({
    "torch.is_tensor", "torch.numel", "torch.is_floating_point", "torch.is_complex",
    "torch.equal", "torch.allclose", "torch.is_nonzero", "torch.is_storage", "torch.is_grad_enabled",
    "torch.typename", "torch.broadcast_shapes",
    "torch.get_default_dtype", "torch.cuda.is_available", "torch.cuda.device_count",
    "torch.cuda.current_device", "torch.cuda.memory_allocated", "torch.cuda.max_memory_allocated",
    "torch.cuda.memory_reserved", "torch.cuda.get_device_name", "torch.Size", "torch.initial_seed",
    "torch.seed", "torch.get_num_threads", "torch.distributed.get_rank",
    "torch.distributed.get_world_size", "torch.distributed.is_initialized",
    "torch.distributed.is_available", "torch.backends.cudnn.is_available",
    "torch.compiler.is_compiling", "torch.jit.is_scripting", "torch.jit.is_tracing",
    "torch.is_autocast_enabled", "torch.are_deterministic_algorithms_enabled",
    "torch.finfo", "torch.iinfo",  # dtype info objects: their .min / .max / .eps are Python numbers
})
# factories: on the host unless given a device (or `*_like` of a device tensor)
FACTORIES = frozenset({
    "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.zeros", "torch.ones",
    "torch.empty", "torch.full", "torch.arange", "torch.range", "torch.linspace", "torch.logspace",
    "torch.eye", "torch.rand", "torch.randn", "torch.randint", "torch.randperm", "torch.empty_strided",
    "torch.LongTensor", "torch.FloatTensor", "torch.BoolTensor", "torch.IntTensor", "torch.Tensor",
    "torch.ByteTensor", "torch.DoubleTensor", "torch.HalfTensor", "torch.ShortTensor", "torch.CharTensor",
    "torch.frombuffer",
    # the legacy sparse constructors (`torch.sparse.FloatTensor(idx, values, size)`) take and make host tensors
    "torch.sparse.FloatTensor", "torch.sparse.LongTensor", "torch.sparse.DoubleTensor", "torch.sparse.IntTensor",
    "torch.sparse.ByteTensor", "torch.sparse.HalfTensor",
    "torch.scalar_tensor", "torch.complex", "torch.polar",
    # index and window builders: on the CPU too unless handed a device
    "torch.tril_indices", "torch.triu_indices", "torch.hann_window", "torch.hamming_window",
    "torch.blackman_window", "torch.bartlett_window", "torch.kaiser_window",
})
# progress bars and slices over an iterable: over a loader, they yield its batches (`tqdm(loader)`)
_LOADER_WRAPPERS = frozenset({"tqdm.tqdm", "tqdm.auto.tqdm", "tqdm.notebook.tqdm", "tqdm.std.tqdm",
                              "itertools.islice", "rich.progress.track"})
LOADER_NAMES = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
ITER_WRAPPERS = frozenset({"enumerate", "tqdm", "tqdm.tqdm", "tqdm.auto.tqdm", "iter", "zip", "islice",
                           "itertools.islice", "tqdm.notebook.tqdm"})
# reductions arrays have (tensors and numpy arrays; not lists, dicts, strings or numbers): on a value of
# unknown origin in a module whose only array library is torch, probably a tensor's
PROBABLE_REDUCTIONS = frozenset({"max", "min", "sum", "mean", "amax", "amin", "argmax", "argmin", "norm", "std",
                                 "var", "prod", "any", "all", "abs", "median", "logsumexp", "nansum", "count_nonzero", "dot"})
_LOSS_NAME = re.compile(r"(?:^|_)loss(?:es)?(?:$|_)|^l_|_l$", re.I)
_NOT_ARRAY_MAKERS = frozenset({"list", "dict", "tuple", "set", "sorted", "range", "enumerate", "zip", "map", "filter",
                               "reversed", "iter", "next", "getattr", "vars", "open", "super", "print"})
# libraries whose functions take a pattern and any backend's arrays, and give an array of the same backend:
# einops (`rearrange(x, "b n d -> b d n")`, `reduce(x, "b c -> b", "sum")`), einx (`einx.sum("b [c]", x)`),
# opt_einsum (`contract("ij,jk", a, b)`)
_PATTERN_LIBRARIES = ("einops.", "einx.", "opt_einsum.")
# libraries the inference knows by name (their calls are never looked up in the linted tree)
_LIBRARIES = ("torch.", "numpy.", "np.", "math.", "torchvision.ops.", "builtins.", "typing.", "collections.",
              "functools.", "itertools.", "os.", "re.", "logging.", "warnings.", "autoray.", *_PATTERN_LIBRARIES)
# Array-API dispatchers: a call computes with the library of its array arguments (a CUDA tensor in, a CUDA
# tensor out). autoray's `numpy` namespace (`from autoray import numpy as anp`; `anp.sum(x)`), its functions
# (`autoray.do("sum", x)`, `astype(x, "int64")`), and a namespace got from an array (`xp =
# array_namespace(x)`, `xp = x.__array_namespace__()`; its pseudo-module is DISPATCH).
DISPATCH = "array_api"
_AUTORAY_NUMPY = ("autoray.numpy.", "autoray.autoray.numpy.")
# what a dispatched function of these names gives whatever its arguments
_DISPATCH_HOST = frozenset({"shape", "ndim", "size", "infer_backend", "get_backend", "get_dtype_name", "isscalar",
                            "get_lib_fn", "get_namespace", "array_namespace", "register_function", "set_backend"})
_DISPATCH_OTHER = frozenset({"to_backend_dtype", "finfo", "iinfo", "dtype"})
# their functions that give no array
_PATTERN_NOT_ARRAYS = frozenset({"parse_shape", "pack", "solve", "check", "matches", "contract_path",
                                 "contract_expression"})
# creation routines autoray makes on the device (and with the dtype) of an array passed as `like=`
_DISPATCH_CREATION = frozenset({"empty", "eye", "full", "identity", "ones", "zeros", "array", "asarray",
                                "from_numpy"})
# numpy's names of torch functions (what autoray and array-api-compat map them to)
_TORCH_NAME = {"concatenate": "cat", "max": "amax", "min": "amin", "power": "pow", "clip": "clamp",
               "expand_dims": "unsqueeze", "array": "tensor", "asarray": "as_tensor", "identity": "eye",
               "conjugate": "conj", "take_along_axis": "take_along_dim", "equal": "eq"}
# library constants that are Python floats (math's, which rules read as numbers written out, and numpy's and torch's)
MATH_CONSTANTS = frozenset({"math.pi", "math.e", "math.inf", "math.nan", "math.tau"})
_HOST_CONSTANTS = MATH_CONSTANTS | frozenset({"numpy.inf", "numpy.nan", "numpy.pi", "numpy.e", "numpy.tau", "numpy.Inf",
                                              "numpy.NaN", "numpy.NINF", "numpy.PINF", "numpy.euler_gamma", "torch.inf",
                                              "torch.nan", "torch.pi", "torch.e"})
_NOT_TENSOR_KINDS = (HOST, NDARRAY, OTHER, MODULE, LOADER, OPTIMIZER)  # a name holding one of these is not a function
SAME_ELEMENTS = frozenset({"reversed", "list", "tuple", "sorted"})  # builtins whose result holds the same elements
BUILTIN_HOST = frozenset({"len", "int", "float", "bool", "str", "repr", "isinstance", "hasattr", "all", "any",
                          "round", "format", "id", "hash", "ord", "chr", "callable", "type"})


def is_cpu_device(node: ast.AST | None) -> bool | None:
    """True for a literal CPU device, False for a literal accelerator device, None if unknown."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.split(":")[0] == "cpu"
    if isinstance(node, ast.Call) and node.args and getattr(node.func, "attr", getattr(node.func, "id", "")) == "device":
        return is_cpu_device(node.args[0])
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return False  # device index
    return None


def kwarg(call: ast.Call, name: str) -> ast.AST | None:
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def device_entry(value: ast.AST) -> ast.AST | None:
    """The device a dict of keyword arguments visibly carries: `{"device": d, "dtype": t}`,
    `dict(device=d, dtype=t)`. None when it has no device, or keys it does not show (`**other`),
    or `non_blocking` (the copy's blocking is then not the caller's default)."""
    if isinstance(value, ast.Dict):
        if any(not (isinstance(k, ast.Constant) and isinstance(k.value, str)) for k in value.keys):
            return None
        keys = [k.value for k in value.keys]  # type: ignore[union-attr]
        if "device" not in keys or "non_blocking" in keys:
            return None
        return value.values[keys.index("device")]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict" \
            and not value.args and all(k.arg is not None and k.arg != "non_blocking" for k in value.keywords):
        return kwarg(value, "device")
    return None


def is_tensor_annotation(ann: ast.AST | None, imports: dict[str, str]) -> bool:
    if ann is None:
        return False
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.split(".")[-1] == "Tensor"
    if isinstance(ann, ast.Subscript):  # Optional[Tensor], Union[Tensor, int]; not list[Tensor]
        base = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        if base == "Optional":
            return is_tensor_annotation(ann.slice, imports)
        if base == "Union" and isinstance(ann.slice, ast.Tuple):
            return any(is_tensor_annotation(e, imports) for e in ann.slice.elts)
        return False
    if isinstance(ann, ast.BinOp):  # Tensor | None
        return is_tensor_annotation(ann.left, imports) or is_tensor_annotation(ann.right, imports)
    q = qualify(ann, imports)
    if q:
        return q in ("torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor")
    return isinstance(ann, ast.Name) and ann.id == "Tensor"


_SEQ_TYPES = frozenset({"list", "List", "Sequence", "Iterable", "Iterator", "MutableSequence", "Collection"})
_HOST_TYPES = frozenset({"int", "float", "bool", "str", "bytes", "complex"})
_MAP_TYPES = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"})


def annotation_kind(ann: ast.AST | None, imports: dict[str, str],
                    mappings: bool = False) -> tuple[str | None, tuple | None]:
    """What a type annotation (or a `# type:` comment's type) says a value is: (kind, the kinds of the
    positions of a fixed-length tuple or None). `Tensor`, `Optional[Tensor]` -> tensor; `list[Tensor]`,
    `tuple[Tensor, ...]` -> tensors; `int`, `list[int]` -> host; `tuple[Tensor, int]` -> (None, (tensor, host)).
    `mappings`: `Dict[str, Tensor]` -> tensors too (asked only where nothing iterates or tests keys in it: the
    return of an abstract method, whose caller reads `.items()` or `d[k]`; a list of tensors iterates to tensors,
    a dict to its keys)."""
    if ann is None:
        return None, None
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str) and ann.value.split(".")[-1] != "Tensor":
        try:
            ann = ast.parse(ann.value.strip(), mode="eval").body
        except SyntaxError:
            return None, None
    if is_tensor_annotation(ann, imports):
        return TENSOR, None
    if _ndarray_annotation(ann):
        return NDARRAY, None
    if isinstance(ann, ast.Name):
        return (HOST if ann.id in _HOST_TYPES else None), None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # `list[Tensor] | None`
        parts = [annotation_kind(x, imports) for x in (ann.left, ann.right)
                 if not (isinstance(x, ast.Constant) and x.value is None)]
        return parts[0] if len(parts) == 1 or parts[0] == parts[1] else (None, None)
    if not isinstance(ann, ast.Subscript):
        return None, None
    base = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
    args = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    if base == "Optional":
        return annotation_kind(args[0], imports, mappings)
    if base in ("tuple", "Tuple"):
        if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
            args = args[:1]
        else:
            kinds = tuple(annotation_kind(a, imports)[0] for a in args)
            return _all_of(kinds), kinds
    if base in _SEQ_TYPES or base in ("tuple", "Tuple"):
        return _all_of((annotation_kind(args[0], imports)[0],)), None
    if mappings and base in _MAP_TYPES and len(args) == 2 and not any(
            isinstance(n, ast.Name) and n.id in ("Any", "object") for n in ast.walk(args[1])):
        # `Dict[str, Tensor]`: a collection of tensors, as a dict display is (not `dict[str, Tensor | Any]`)
        return _all_of((annotation_kind(args[1], imports)[0],)), None
    return None, None


def _ndarray_annotation(ann: ast.AST) -> bool:
    """`np.ndarray`, `npt.NDArray`, `NDArray[np.int64]`: a numpy array (not `ArrayLike`, which takes tensors)."""
    if isinstance(ann, ast.Subscript):
        ann = ann.value
    name = ann.attr if isinstance(ann, ast.Attribute) else ann.id if isinstance(ann, ast.Name) else ""
    return name in ("ndarray", "NDArray")


def _all_of(kinds) -> str | None:
    """The kind of a sequence of values of these kinds."""
    if kinds and all(k == TENSOR for k in kinds):
        return TENSORS
    if kinds and all(k == HOST for k in kinds):
        return HOST
    return None


def type_tested(test: ast.AST) -> str | None:
    """`x` when the test asks what `x` is: `isinstance(x, ...)`, `hasattr(x, ...)`, `torch.is_tensor(x)`,
    `type(x) is ...` (alone, negated, or in an `and` / `or`). Code under such a test is written for one
    type among several: what it does with `x` says nothing of `x` elsewhere."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.BoolOp):
        return next((x for v in test.values if (x := type_tested(v)) is not None), None)
    if isinstance(test, ast.Compare) and isinstance(test.left, ast.Call):
        test = test.left  # `type(x) is torch.Tensor`
    if isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name):
        f = test.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if name in ("isinstance", "hasattr", "is_tensor", "type", "is_numpy_array", "is_torch_tensor"):
            return test.args[0].id
    return None


def boolean_on_its_face(e: ast.AST) -> bool:
    """A boolean tensor by its form alone, whatever its operands' kinds: an ordering or equality comparison, `~m`,
    `m & n` / `m | n` of one, `x.isnan()`, `torch.logical_and(...)`, `.bool()`."""
    if isinstance(e, ast.Compare):
        return not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert):
        return boolean_on_its_face(e.operand)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return boolean_on_its_face(e.left) or boolean_on_its_face(e.right)
    if isinstance(e, ast.Call):
        f = e.func
        return (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")) in BOOL_FUNCS
    return False


# attributes only a tensor has: `hasattr(x, "cpu")` asks whether x is one
_TENSOR_ONLY_ATTRS = frozenset({"cpu", "cuda", "detach", "numpy", "is_cuda", "data_ptr"})


def tensor_tested(test: ast.AST, imports: dict[str, str]) -> str | None:
    """`x` of `torch.is_tensor(x)` / `isinstance(x, torch.Tensor)` / `hasattr(x, "cpu")`, alone or first of an
    `and`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        test = test.values[0]
    if not (isinstance(test, ast.Call) and test.args and isinstance(test.args[0], ast.Name)):
        return None
    f = test.func
    if isinstance(f, ast.Name) and f.id == "isinstance" and len(test.args) == 2:
        return test.args[0].id if qualify(test.args[1], imports) in ("torch.Tensor", "torch.nn.Parameter") else None
    if isinstance(f, ast.Name) and f.id == "hasattr" and len(test.args) == 2:
        a = test.args[1]
        return test.args[0].id if isinstance(a, ast.Constant) and a.value in _TENSOR_ONLY_ATTRS else None
    return test.args[0].id if qualify(f, imports) == "torch.is_tensor" else None


def merge_kinds(a: str | None, b: str | None) -> str | None:
    """The kind of a name that one path of the code left holding `a` and another `b`: a tensor when
    either path makes it one and the other a host value or unknown (`n = 0` on one branch does not
    stop the sync on the other); a host tensor with a Python number stays on the host; a host tensor
    with unknown is unknown (`x if len(p) else torch.empty(0)`: the fallback does not make `x` a host
    tensor)."""
    if a == b:
        return a
    ra, rb = parse_record(a), parse_record(b)
    if ra and rb and ra[0] == rb[0]:  # one record type: field by field
        if not ra[1] or not rb[1] or len(ra[1]) != len(rb[1]):
            return RECORD + ra[0]
        return record_kind(ra[0], [merge_kinds(x, y) for x, y in zip(ra[1], rb[1])])
    if TENSOR in (a, b):
        other = b if a == TENSOR else a
        return TENSOR if other in (HOST, CPU, NDARRAY, None) else None
    if {a, b} == {CPU, HOST}:
        return CPU
    if None in (a, b) and (a or b) in (MODULE, OPTIMIZER):
        # a model built on one path and loaded on the other (`model = checkpoint["model"]`): a model still
        return a or b
    return None


class Env:
    """Name -> kind for one function (falling back to the enclosing scopes), plus the attributes
    of `self` known for the current class."""

    __slots__ = ("names", "parent", "self_attrs", "bools", "sure", "guess", "funcs", "opaque", "containers",
                 "probable", "cpu_devices", "aliases", "kw_devices", "partly_host", "filled", "dicts")

    def __init__(self, parent: Env | None = None, self_attrs: dict | None = None):
        self.names: dict[str, str | None] = {}
        self.bools: set[str] = set()  # names holding boolean tensors (masks)
        self.sure: set[str] = set()  # parameters whose kind comes from types or callers, not a guess
        self.guess: set[str] = set()  # names unpacked from a module's output (`h, height, width = self.embed(x)`)
        self.funcs: dict[str, ast.AST] = {}  # functions defined in this scope (their calls: what they return)
        self.opaque: set[str] = set()  # names last bound to what a call of unknown code returned
        self.containers: set[str] = set()  # names bound to an empty list / dict, filled later (`d[k] = t`)
        self.probable: set[str] = set()  # names whose kind is only probable (see Inference.probable)
        self.cpu_devices: set[str] = set()  # names holding the CPU device (`device="cpu"` by default)
        # names holding an array module: `xp = torch if isinstance(x, torch.Tensor) else np` -> (torch, numpy)
        self.aliases: dict[str, tuple[str, ...]] = {}
        # names holding keyword arguments that visibly carry a device (`tkwargs = {"device": x.device}`,
        # a `**kwargs` every call fills with `device=`) -> that device expression: `torch.zeros(n, **tkwargs)`
        self.kw_devices: dict[str, ast.AST] = {}
        # names holding a tensor that is a host tensor on some path that reaches here (`r = eigh(t.cpu()) if
        # small else eigh(t)`): copying it to a device is a blocking copy on that path
        self.partly_host: set[str] = set()
        # names of unknown kind that the code writes tensors into (`al[i] = s.dot(q) * ro[i]`) -> the constant keys
        # written (`state["exp_avg"] = ...`), "" for a computed index: a list, a dict or a tensor, the item read
        # back under such a key (`al[j]`, `state["exp_avg"]`, not `state["step"]`) is a tensor (probable: an
        # ndarray takes a host tensor's numbers). None for a name bound to a display of values not all tensors
        # (`bracket_f = [f_prev, f_new]`): what it holds is known to be mixed, whatever is written into it
        self.filled: dict[str, dict | None] = {}  # name -> {item key: kind written there}, None: never filled
        # names bound to a dict display or comprehension (`metrics = {"mean": m, "std": s}`): iterating one gives
        # its keys, not the tensors it holds
        self.dicts: set[str] = set()
        self.parent = parent
        self.self_attrs = self_attrs if self_attrs is not None else (parent.self_attrs if parent else {})

    def snapshot(self) -> tuple:
        """This scope's own bindings, to walk another path from the same start (see `merge`)."""
        return (dict(self.names), set(self.bools), set(self.guess), set(self.opaque), set(self.probable),
                set(self.cpu_devices), set(self.partly_host))

    def restore(self, snap: tuple) -> None:
        names, bools, guess, opaque, probable, cpu, partly = snap
        self.names, self.bools, self.guess, self.opaque = dict(names), set(bools), set(guess), set(opaque)
        self.probable, self.cpu_devices, self.partly_host = set(probable), set(cpu), set(partly)

    def merge(self, other: tuple) -> None:
        """Join the bindings of another path (a snapshot) into this one's: where the two differ, the
        name holds what either path may leave in it (`merge_kinds`)."""
        names, bools, guess, opaque, probable, cpu, partly = other
        partly = self.partly_host | partly
        self.opaque |= opaque
        self.probable |= probable
        self.cpu_devices &= cpu
        mine = self.names
        for n in mine.keys() | names.keys():
            a = mine[n] if n in mine else self.parent.get(n) if self.parent is not None else None
            b = names[n] if n in names else self.parent.get(n) if self.parent is not None else None
            if (n in self.guess) != (n in guess):  # a guess on one path, a value on the other: the value
                mine[n] = b if n in self.guess else a
                self.guess.discard(n)
            elif n in self.containers and ({a, b} == {None, TENSORS} or {a, b} == {None, CPUS}):
                mine[n] = a or b  # `res = []`, then `res.append(t)` in a loop that may run no time: still empty
            else:
                mine[n] = merge_kinds(a, b)
            if mine[n] == TENSOR and (CPU in (a, b) or n in partly) \
                    or mine[n] is None and None in (a, b) and (CPU in (a, b) or n in partly):
                # a host tensor on one path, a tensor (or what the linter cannot place: `x = torch.from_numpy(x)`
                # under `if isinstance(x, np.ndarray):`) on the other
                partly.add(n)
            else:
                partly.discard(n)
        self.partly_host = partly
        self.bools = {n for n in self.bools | bools if mine.get(n) in (TENSOR, CPU)}

    def get(self, name: str) -> str | None:
        env = self
        while env is not None:
            if name in env.names:
                return env.names[name]
            env = env.parent
        return None

    def is_bool(self, name: str) -> bool:
        env = self
        while env is not None:
            if name in env.names:
                return name in env.bools
            env = env.parent
        return False

    def is_sure(self, name: str) -> bool:
        env = self
        while env is not None:
            if name in env.names:
                return name in env.sure
            env = env.parent
        return False

    def is_probable(self, name: str) -> bool:
        env = self
        while env is not None:
            if name in env.names:
                return name in env.probable
            env = env.parent
        return False

    def is_cpu_device(self, name: str) -> bool:
        env = self
        while env is not None:
            if name in env.names:
                return name in env.cpu_devices
            env = env.parent
        return False

    def modules_of(self, name: str) -> tuple[str, ...]:
        env = self
        while env is not None:
            if name in env.names:
                return env.aliases.get(name, ())
            env = env.parent
        return ()

    def _owner(self, name: str) -> Env | None:
        """The scope whose binding of `name` is seen here."""
        env: Env | None = self
        while env is not None and name not in env.names:
            env = env.parent
        return env

    def is_partly_host(self, name: str) -> bool:
        env = self._owner(name)
        return env is not None and name in env.partly_host

    def kw_device(self, name: str) -> ast.AST | None:
        env = self._owner(name)
        return env.kw_devices.get(name) if env is not None else None

    def is_opaque(self, name: str) -> bool:
        env = self
        while env is not None:
            if name in env.names:
                return name in env.opaque
            env = env.parent
        return False

    def is_guess(self, name: str) -> bool:
        env = self
        while env is not None:
            if name in env.names:
                return name in env.guess
            env = env.parent
        return False


# methods whose result is a mask where their receiver is one (views, copies, moves)
MASK_VIEWS = frozenset({"clone", "detach", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze", "expand",
                        "expand_as", "permute", "t", "transpose", "view_as", "reshape_as", "repeat", "cuda", "to"})
BOOL_FUNCS = frozenset({
    "isnan", "isinf", "isfinite", "isin", "isclose", "isneginf", "isposinf", "isreal", "logical_and",
    "logical_or", "logical_not", "logical_xor", "eq", "ne", "lt", "gt", "le", "ge", "greater", "less",
    "greater_equal", "less_equal", "not_equal", "bool", "signbit", "bernoulli_mask", "ones_like_bool",
})
# the words of a name that say "boolean mask", and those that say "indices" (which win: `pos_inds`,
# `keep_idx`, `cache_position` hold indices). Whole words, not substrings: `cfg`, `axis_len`,
# `cache_position` are no masks. `keep`, `pos`, `neg` say nothing alone (`keep = nms(...)`).
_MASKY_WORDS = frozenset({"mask", "masks", "valid", "invalid", "selected", "positive", "negative", "matched",
                          "visible", "inside", "ignore", "ignored", "foreground", "background", "fg", "bg", "m",
                          "sel", "cond", "condition", "bool"})
_INDEX_WORDS = frozenset({"ind", "inds", "idx", "idxs", "index", "indices", "ids", "id", "position", "positions"})
_WORD = re.compile(r"[a-z]+")


def masky_name(name: str) -> bool:
    n = name.lower()
    words = _WORD.findall(n)
    if any(w in _INDEX_WORDS for w in words) and n != "idx_bool":
        return False
    return "mask" in n or n.startswith(("is_", "has_")) or any(w in _MASKY_WORDS for w in words)


_DTYPES = frozenset(f"torch.{t}" for t in (
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16", "int32", "int64",
    "uint8", "long", "int", "short", "bool", "complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn",
    "float8_e5m2"))
# a tensor's factories of its own device (no Python number, list, numpy array or nn.Module has them)
_NEW_FACTORIES = frozenset({"new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"})
# methods of dicts, lists and strings that tensors do not have
_CONTAINER_METHODS = frozenset({"items", "keys", "get", "append", "extend", "pop", "popitem", "update", "setdefault",
                                "insert", "remove", "startswith", "endswith", "join", "lower", "upper", "strip",
                                "encode", "decode", "format"})


class Inference:
    """Computes the kind of an expression in the current environment, with the module's imports."""

    def __init__(self, imports: dict[str, str]):
        self.imports = imports
        self.env = Env()
        self.module_classes: dict[str, str] = {}  # class name -> "module" when it subclasses nn.Module
        self.namedtuples: frozenset[str] = frozenset()  # named tuple types of the module
        self.records: dict[str, dict] = {}  # record types of the module -> their fields (ModuleIndex.records)
        # the engine's hook: (record type, field) -> the kind that field holds (KindFacts.field_kind)
        self.field_kind: Callable[[str, str], str | None] | None = None
        # names imported from other modules of the tree, and the engine's hook for what they hold
        self.tree_names: frozenset[str] | set[str] = frozenset()
        # attr -> whether the folder's classes keep a tensor under `self.<attr>` (CrossFile.tensor_attr), when
        # the tree is known
        self.tensor_attr: Callable[[str], bool] | None = None
        # names imported `from` a module that is not a library the inference knows (the tree's, or a third
        # party's): functions the inference cannot see unless it reads the tree (see `_host_call`)
        self.imported_names: frozenset[str] | set[str] = frozenset()
        self.name_resolver: Callable[[str], str | None] | None = None
        # the engine's hook: the name stands for another module of the tree (`from . import misc`)
        self.tree_module: Callable[[str], bool] | None = None
        # name -> the class of another module of the tree it holds an instance of (FileFacts.tree_instance)
        self.tree_instance: Callable[[str], str | None] | None = None
        self.held_attr: Callable[[ast.Attribute, str], str | None] | None = None  # (Walk.held_attr)
        self.none_attr: Callable[[str], bool] | None = None  # (Walk.none_attr)
        self.fn_attr: Callable[[str], list] | None = None  # (Walk.fn_attr)
        self._fn_calls: dict[tuple, ast.Call] = {}  # (call, function) -> the call as if it named the function
        self._partly_calls: set[int] = set()  # calls of the tree's functions that give a host tensor on some paths
        self.batch_names: set[str] = set()  # names a loop over a DataLoader bound (its batches' parts)
        # iterables of unknown kind that a training step's loop runs over (`for batch in dataset.train:` with
        # `loss.backward()` in the body): a data loader's batches, probably (Walk.v_For)
        self.step_iters: set[int] = set()
        self.built_with_device: Callable[[str], bool] | None = None  # (FileFacts.built_with_device)
        self.function_returns: dict[str, str | None] = {}  # module-level function -> kind it returns
        # the engine's hook: a call of a function or method of this module -> Returned (what it gives), or None
        self.resolver: Callable[[ast.Call], Any] | None = None
        # `self.m(...)` of a method that a base of another module of the tree defines and the linter has not read
        self.inherited: Callable[[ast.Call], bool] | None = None
        # the engine's hook: which of what a call of a function of the tree gives are masks (masks.returned_masks)
        self.mask_resolver: Callable[[ast.Call, bool], Any] | None = None
        # the engine's hook: what `name.attr` holds, `name` an instance of a class of the module (instances.py)
        self.instance_attr: Callable[[ast.Name, str], str | None] | None = None
        # `t.evaluate(loader)` with `t` an instance of a class of the module: whether the walk can run that method
        self.instance_method: Callable[[ast.Name | ast.Attribute, str], object] | None = None
        # `model.latest_losses()` of a model of no known class: what the tree's classes with that method return
        self.duck_method: Callable[[ast.Call, ast.Name, str], Any] | None = None
        self.usage: set[int] | frozenset = frozenset()  # ids of bindings the body later uses as tensors
        self.probable_usage: set[int] | frozenset = frozenset()  # ... as arrays (interproc.ARRAY_METHODS)
        # torch is the module's only array library: an array-like of unknown origin is probably a tensor
        self.torch_only = False
        self.self_bools: frozenset[str] = frozenset()  # `self.<attr>` the walk's class only ever stores masks in
        self.self_totals: frozenset[str] = frozenset()  # `self.<attr>` running totals of tensors (walk._running_totals)
        # set when a kind was answered only from a probable clue (`probable_tensor`); the lint walk
        # clears it before each rule's look at a node and reads it into the finding's confidence
        self.probable = False
        # the default device factories without one use: `with torch.device(d):` around the code (certain),
        # else a CUDA default the module sets when imported (`torch.set_default_device("cuda")`: probable)
        self.default_device: ast.AST | None = None
        self.module_default_device = False
        # the dotted names the module calls as array namespaces of a backend (syncscan.lint.namespaces)
        self.namespaces: frozenset[str] = frozenset()

    def call_device(self, call: ast.Call) -> ast.AST | None:
        """The device a call's keywords name: `device=d`, or a `**kw` whose dict visibly carries one
        (`tkwargs = {"device": x.device, "dtype": x.dtype}`; a `**kwargs` parameter every call fills
        with `device=`): `torch.zeros(n, **tkwargs)` is made there, `x.to(**tkwargs)` copies there."""
        d = kwarg(call, "device")
        if d is not None:
            return d
        for k in call.keywords:
            if k.arg is None and isinstance(k.value, ast.Name):
                d = self.env.kw_device(k.value.id)
                if d is not None:
                    return d
        return None

    def cpu_device(self, node: ast.AST | None, calls: bool = True) -> bool | None:
        """`is_cpu_device`, knowing the names that hold the CPU device here (`device: str = "cpu"`,
        `dev = torch.device(device)`, `dev = host_t.device`, `dev, dtype = helper(...)` of a helper that
        returns the CPU device there)."""
        if isinstance(node, ast.Name):
            if not self.env.is_cpu_device(node.id):
                return None
            if self.env.is_probable(node.id):
                self.probable = True  # (what the folder's other modules hand a parameter: probable)
            return True
        if isinstance(node, ast.Call) and node.args and getattr(node.func, "attr", getattr(node.func, "id", "")) \
                == "device":
            return self.cpu_device(node.args[0])
        if isinstance(node, ast.Attribute) and node.attr == "device":
            return True if self.host_tensor_surely(node.value) else None
        if calls and isinstance(node, ast.Call) and self.returns_cpu_device(node):
            return True  # `torch.zeros(n, device=host_device())`
        return is_cpu_device(node)

    def host_tensor_surely(self, node: ast.AST) -> bool:
        """A host tensor, not by a probable clue (`torch.empty(0)`, `t.cpu()`): its `.device` is the CPU."""
        was, self.probable = self.probable, False
        try:
            return self.kind(node) == CPU and not self.probable
        finally:
            self.probable = was

    def returns_cpu_device(self, call: ast.AST) -> bool:
        """A call of a function of the tree whose every return gives the CPU device (`-> torch.device`
        returning `torch.device("cpu")` or `torch.empty(0).device`)."""
        if not isinstance(call, ast.Call) or self.resolver is None:
            return False
        r = self.resolver(call)
        return r is not None and r.kind == CPU_DEVICE

    def _modules(self, value: ast.AST) -> tuple[str, ...]:
        """The array modules a value may be: `torch`, `np`, `torch if c else np`, an alias of them."""
        if isinstance(value, ast.IfExp):
            a, b = self._modules(value.body), self._modules(value.orelse)
            return tuple(dict.fromkeys(a + b)) if a and b else ()
        if isinstance(value, ast.Name):
            q = self.imports.get(value.id)
            if q in ("torch", "numpy", "cupy", "jax.numpy", "torch.nn.functional", "autoray.numpy"):
                return (q,)
            return self.env.modules_of(value.id)
        if isinstance(value, ast.Call) and is_namespace_call(value, self.imports):
            return (DISPATCH,)
        return ()

    def probable_tensor(self, node: ast.AST) -> bool:
        """`node` (of unknown kind) is probably a tensor: the module uses no array library but torch, and
        the value comes out of code the inference cannot see (a library call, or a name last bound to
        one: `deg = degree(index)`, `deg.max()`). Marks the answer as probable."""
        if not self.torch_only:
            return False
        root = node
        while isinstance(root, ast.Subscript):
            root = root.value
        if isinstance(root, ast.Call):
            ok = not (isinstance(root.func, ast.Name) and (root.func.id in BUILTIN_HOST or
                                                           root.func.id in _NOT_ARRAY_MAKERS))
        else:
            ok = isinstance(root, ast.Name) and self.env.is_opaque(root.id)
        if ok:
            self.probable = True
        return ok

    # -- binding -------------------------------------------------------------------------------
    def bind(self, target: ast.AST, kind: str | None, value: ast.AST | None = None, probable: bool = False) -> None:
        if isinstance(target, ast.Name):
            cpu_dev = kind == CPU_DEVICE  # (a position of a helper's tuple, a parameter seeded so)
            if cpu_dev or kind == ARG_DEVICE:
                kind = OTHER
            if kind in (None, TENSOR) and id(target) in self.usage:
                # `y = helper(x)` then `y.unsqueeze(0)`: only a tensor has that method (a probable tensor is one)
                kind, probable = TENSOR, False
            elif kind is None and id(target) in self.probable_usage:
                kind, probable = TENSOR, True  # `y.max()` in a module with no array library but torch
            env = self.env
            env.names[target.id] = kind
            mods = self._modules(value) if value is not None else ()
            if mods:
                env.aliases[target.id] = mods
            else:
                env.aliases.pop(target.id, None)
            dev = device_entry(value) if value is not None else None
            if dev is not None:
                env.kw_devices[target.id] = dev
            else:
                env.kw_devices.pop(target.id, None)
            # (a call's value is asked of the resolver only where it gives no tensor: devices are no tensors)
            if cpu_dev or value is not None and (self.cpu_device(value, calls=False) is True
                                                 or kind == OTHER and self.returns_cpu_device(value)):
                env.cpu_devices.add(target.id)
            else:
                env.cpu_devices.discard(target.id)
            if probable and kind is not None:
                env.probable.add(target.id)
            else:
                env.probable.discard(target.id)
            if kind == TENSOR and value is not None and self.partly_host(value):
                env.partly_host.add(target.id)
            else:
                env.partly_host.discard(target.id)
            env.guess.discard(target.id)
            if kind is None and isinstance(value, ast.Call) and not isinstance(value.func, ast.Name) \
                    or kind is None and isinstance(value, ast.Call) and value.func.id not in BUILTIN_HOST:
                env.opaque.add(target.id)
            else:
                env.opaque.discard(target.id)
            if kind is None and isinstance(value, (ast.Dict, ast.List)) and not getattr(value, "elts", None) \
                    and not getattr(value, "keys", None) or kind is None and _placeholders(value):
                env.containers.add(target.id)
            else:
                env.containers.discard(target.id)
            if kind in TENSORISH and value is not None and self.is_bool(value):
                self.env.bools.add(target.id)
            else:
                self.env.bools.discard(target.id)
            if kind is None and isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set)):
                env.filled[target.id] = None
            else:
                env.filled.pop(target.id, None)
            if isinstance(value, (ast.Dict, ast.DictComp)):
                env.dicts.add(target.id)
            else:
                env.dicts.discard(target.id)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            if elts is None and isinstance(value, ast.Call) and self.resolver is not None:
                r = self.resolver(value)  # `a, b = helper(x)`: what each position of its returned tuple holds
                if r is not None and r.elts is not None and len(r.elts) == len(target.elts) \
                        and not any(isinstance(t, ast.Starred) for t in target.elts):
                    for t, k in zip(target.elts, r.elts):
                        self.bind(t, k)
                    self._bind_masks(target, value)
                    return
            if elts is None and isinstance(value, (ast.GeneratorExp, ast.ListComp)) \
                    and not any(isinstance(t, ast.Starred) for t in target.elts):
                was, self.probable = self.probable, False
                k = self._element_of(value)  # `a, b = (f(x) for x in (p, q))`: what each pass gives
                guessed, self.probable = self.probable, was
                if k is not None:
                    for t in target.elts:
                        self.bind(t, k, probable=probable or guessed)
                    return
            rec = parse_record(kind)
            fields = self.records.get(rec[0]) if rec is not None else None
            if rec is not None and fields and len(fields) == len(target.elts) \
                    and not any(isinstance(t, ast.Starred) for t in target.elts):  # `y0, f0, t0 = state`
                for t, f in zip(target.elts, fields):
                    self.bind(t, self._field(rec, f))
                return
            # a module may return a tuple of anything (`hidden, height, width`): its parts are tensors by a guess
            guess = elts is None and kind == TENSOR and self._module_call(value)
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Starred):
                    t = t.value
                    self.bind(t, TENSORS if kind in (TENSORS, TENSOR) else None)
                    continue
                if elts is not None:
                    self.bind(t, self.kind(elts[i]), elts[i])
                else:
                    self.bind(t, self.element_kind(kind))
                    if isinstance(t, ast.Name) and value is not None and self.env.names.get(t.id) == TENSOR \
                            and self.partly_host(value):  # `evals, evecs = retr` of a partly-host result
                        self.env.partly_host.add(t.id)
                    # (a part named for a loss is one: `loss, parts = model(batch)`)
                    if guess and isinstance(t, ast.Name) and not _LOSS_NAME.search(t.id):
                        self.env.guess.add(t.id)
            if isinstance(value, ast.Call):
                self._bind_masks(target, value)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
            held = self.env.self_attrs.get(target.attr)
            if probable and target.attr not in self.env.self_attrs:
                return  # (the attribute would carry a probable kind to other methods as a known one)
            if held == TENSOR and kind == CPU:
                return  # another method's tensor (a buffer moved with the module) stays one, as at a join
            if held == TENSOR and kind == HOST and isinstance(value, ast.Constant) and target.attr in self.self_totals:
                return  # `self.sum = 0` in `reset` of a running total of tensors: a tensor once added to, as at a join
            if kind is not None or target.attr not in self.env.self_attrs:
                self.env.self_attrs[target.attr] = kind
        elif isinstance(target, ast.Starred):
            self.bind(target.value, kind)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.fill(target.value.id, kind)
            name, filled = target.value.id, self.env.filled
            if kind in (TENSOR, CPU) and name not in self.env.containers and self.env.get(name) is None \
                    and (name not in filled or filled[name] is not None):
                # (`inputs[i] = torch.from_numpy(inputs[i])`: a host tensor where it is read back, probably)
                slots = filled.setdefault(name, {})
                key = _item_key(target.slice)
                slots[key] = merge_kinds(slots[key], kind) if key in slots else kind  # type: ignore[index]

    def _field(self, rec: tuple[str, list], field: str) -> str | None:
        """What `field` of a record holds: what the value's construction put there, else what the
        module's constructions of its type do (KindFacts.field_kind)."""
        fields = list(self.records.get(rec[0], ()))
        if field in fields and fields.index(field) < len(rec[1]) and rec[1][fields.index(field)] is not None:
            return rec[1][fields.index(field)]
        return self.field_kind(rec[0], field) if self.field_kind is not None else None

    def fill(self, name: str, kind: str | None) -> None:
        """`d[k] = v` / `l.append(v)` into a list or dict that started empty: a collection of tensors
        while every value put in is a tensor."""
        env = self.env
        if name not in env.containers or name not in env.names:
            return
        held = env.names[name]
        if kind == TENSOR and held in (None, TENSORS, CPUS):
            env.names[name] = TENSORS
        elif kind == CPU and held in (None, CPUS):  # host tensors only (rows built on the host, then stacked)
            env.names[name] = CPUS
        elif kind == CPU and held == TENSORS:
            pass  # a host tensor among tensors: tensors, where each lives unknown
        elif kind != TENSOR:
            env.names[name] = None
            env.containers.discard(name)

    def _module_call(self, value: ast.AST | None) -> bool:
        if not isinstance(value, ast.Call):
            return False
        f = value.func
        if isinstance(f, ast.Attribute) and f.attr in ("forward", "__call__"):
            f = f.value
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            return self.env.self_attrs.get(f.attr) == MODULE
        return self.kind(f) == MODULE

    @staticmethod
    def element_kind(kind: str | None) -> str | None:
        """The kind of an element when unpacking or iterating a value of `kind`."""
        if kind in (TENSORS, TENSOR):
            return TENSOR
        if kind in (CPU, CPUS):
            return CPU
        if kind == LOADER:
            return TENSORS  # a batch: a tensor, or a tuple/list/dict of tensors
        if kind == NDARRAY:
            return NDARRAY
        if kind == HOST:  # `b, n, d = x.shape`, `for s in sizes`: parts of host values are host values
            return HOST
        if kind == MODULE:  # nn.ModuleList / Sequential
            return MODULE
        return None

    def iter_kind(self, it: ast.AST) -> tuple[str | None, bool]:
        """(kind of each item, whether the iterable is a data loader) for `for x in it`."""
        if isinstance(it, ast.Call):
            fname = self.call_qualname(it) or getattr(it.func, "id", None)
            if fname in ("range",):
                return HOST, False
            if fname in ITER_WRAPPERS and it.args:
                inner, is_loader = self.iter_kind(it.args[0])
                if fname == "enumerate":
                    return ("enumerate", inner), is_loader  # type: ignore[return-value]
                if fname == "zip":  # one item kind per zipped iterable; a loader among them (`zip(range(n), dl)`)
                    if any(isinstance(a, ast.Starred) for a in it.args):
                        return None, is_loader
                    got = [self.iter_kind(a) for a in it.args]
                    return ("zip", tuple(k for k, _ in got)), any(ld for _, ld in got)  # type: ignore[return-value]
                return inner, is_loader
            f = it.func
            if isinstance(f, ast.Attribute) and f.attr == "items" and not it.args \
                    and self._items_of_tensors(f.value):
                return ("zip", (HOST, TENSOR)), False  # type: ignore[return-value]
            if isinstance(f, ast.Attribute) and f.attr in ("items", "values") and not it.args \
                    and self.kind(f.value) == CPUS:
                # host tensors with `.items()`: a dict of them, (key, host tensor) pairs, or its host tensors
                return (("zip", (HOST, CPU)) if f.attr == "items" else CPU), False  # type: ignore[return-value]
            if isinstance(f, ast.Attribute) and f.attr in _MODULE_TENSORS and not it.args \
                    and self.kind(f.value) in (MODULE, None):
                # `for name, p in module.named_parameters():` a module's parameters (or buffers), where it keeps them
                return (("zip", (HOST, TENSOR)) if f.attr.startswith("named_") else TENSOR), False  # type: ignore[return-value]
            if it.args and not isinstance(it.args[0], ast.Starred) and self.kind(it) is None:
                inner, is_loader = self.iter_kind(it.args[0])
                if is_loader:  # `metric_logger.log_every(data_loader, 10)`, a prefetcher: the loader's batches
                    return inner, True
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and it.func.attr == "keys" \
                and not it.args and self.kind(it.func.value) == TENSORS:
            return None, False  # `for k in d.keys()`: the keys of a dict of tensors
        if isinstance(it, ast.Name) and it.id in self.env.dicts and self.env.get(it.id) == TENSORS:
            return None, False  # `for k in metrics`: a dict display's keys
        k = self.kind(it)
        if k == LOADER or _looks_like_loader(it):
            return TENSORS, True
        if k is None and id(it) in self.step_iters:
            self.probable = True  # (what a training loop iterates: batches, unless it yields device tensors)
            return TENSORS, True
        return self.element_kind(k), False

    def _items_of_tensors(self, d: ast.AST) -> bool:
        """`d.items()` gives (key, tensor) pairs: `d` is a dict of tensors, or a part of a DataLoader batch
        (`x_dict` of `for x_dict, y in loader:`: a batch's part that has `.items()` is a dict of them); another
        value taken for a tensor (what a library call handed a tensor gives) may be any mapping."""
        k = self.kind(d)
        return k == TENSORS or k == TENSOR and isinstance(d, ast.Name) and d.id in self.batch_names

    def bind_loop_target(self, target: ast.AST, it: ast.AST) -> bool:
        item, is_loader = self.iter_kind(it)
        if is_loader and isinstance(target, ast.Name) and "loader" in target.id.lower():
            # `for loader in self.train_dataloader` (a list of loaders under a loader's name): each is a loader
            self.bind(target, LOADER)
            return False
        self._bind_item(target, item, is_loader)
        return is_loader

    def _bind_item(self, target: ast.AST, item, is_loader: bool) -> None:
        if is_loader:
            self.batch_names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        if isinstance(item, tuple):  # enumerate(x): (index, element); zip(a, b): (element of a, element of b)
            parts = (HOST, item[1]) if item[0] == "enumerate" else item[1]
            if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(parts) \
                    and not any(isinstance(t, ast.Starred) for t in target.elts):
                for t, part in zip(target.elts, parts):
                    if isinstance(part, tuple):
                        self._bind_item(t, part, False)
                    else:
                        self.bind(t, part)
            else:
                self.bind(target, None)
        elif item == TENSORS and isinstance(target, ast.Name):
            self.bind(target, TENSOR if is_loader else TENSORS)
        else:
            self.bind(target, item)

    # -- kinds ---------------------------------------------------------------------------------
    def call_qualname(self, call: ast.Call) -> str | None:
        return qualify(call.func, self.imports)

    def kind(self, node: ast.AST) -> str | None:
        m = _KIND_OF.get(node.__class__)  # (`_k_<Node>`, looked up by class: no name built per node)
        k = m(self, node) if m is not None else None
        # (a helper's device, never a kind of its own: `cpu_device` / `returns_cpu_device` tell the CPU's)
        return OTHER if k == CPU_DEVICE or k == ARG_DEVICE else k

    def _k_Constant(self, node):
        return None if node.value is None or node.value is Ellipsis else HOST

    def _k_JoinedStr(self, node):
        return HOST

    def _k_Name(self, node):
        k = self.env.get(node.id)
        if k is not None and self.env.is_probable(node.id):
            self.probable = True
        if k is None and node.id in self.tree_names and self.name_resolver is not None:
            k = self.name_resolver(node.id)  # a constant another module of the tree defines
            if k is not None:
                return k
        if k is None and node.id in self.imports:
            return OTHER
        return k

    def _k_Starred(self, node):
        return self.kind(node.value)

    def _k_NamedExpr(self, node):
        return self.kind(node.value)

    def _k_Tuple(self, node):
        kinds = [self.kind(e) for e in node.elts]
        if kinds and all(k in (CPU, CPUS) for k in kinds):
            return CPUS
        if kinds and all(k in TENSORISH or k == TENSORS for k in kinds):
            return TENSORS
        if kinds and all(k == HOST for k in kinds):
            return HOST
        return None

    _k_List = _k_Tuple

    def _k_Dict(self, node):
        """A dict of tensors (`{"ce": ce, "l1": l1}`): its values are tensors (kind `tensors`)."""
        if node.values and None not in node.keys:
            kinds = {self.kind(v) for v in node.values}
            if kinds == {TENSOR}:
                return TENSORS
            if kinds == {CPU}:
                return CPUS  # `{"x": torch.tensor(a), "y": torch.tensor(b)}`: host tensors, under their keys
        return None

    def _k_ListComp(self, node):
        """A list of host tensors when each element is one (`[torch.as_tensor(i) for i in ...]`), of tensors
        when each is a tensor (`[g.pow(2) for g in grads]`)."""
        k = self._element_of(node)
        return CPUS if k in (CPU, CPUS) else TENSORS if k == TENSOR else None

    def _element_of(self, node: ast.ListComp | ast.GeneratorExp) -> str | None:
        """The kind of each element a comprehension makes (its targets bound in a scratch scope)."""
        saved = self.env
        self.env = Env(saved)
        try:
            for g in node.generators:
                self.bind_loop_target(g.target, g.iter)
            return self.kind(node.elt)
        finally:
            self.env = saved

    def _k_Attribute(self, node):
        q = qualify(node, self.imports)
        if q is not None:
            if q in _HOST_CONSTANTS:
                return HOST  # `h = np.inf`: a Python float, as `float("inf")` is
            return OTHER if q.startswith(("torch.", "numpy.", "np.")) or "." in q else None
        base = node.value
        if isinstance(base, ast.Name) and base.id == "self":
            k = self.env.self_attrs.get(node.attr)
            return TENSOR if k is None and _tensor_named(node.attr) else k
        bk = self.kind(base)
        rec = parse_record(bk)
        if rec is not None:
            return self._field(rec, node.attr)
        if bk in TENSORISH:
            if node.attr in HOST_ATTRS or node.attr.startswith("is_"):  # is_xpu, is_nested, ...: Python bools
                return HOST
            if node.attr.startswith("_"):
                return None  # private metadata (`_ragged_idx`), not a tensor as a rule
            return bk  # .T, .mT, .data, .grad, .values / .indices of namedtuple results
        if bk in (TENSORS, CPUS) and node.attr in HOST_ATTRS:
            return HOST  # (a list annotated where a tensor comes: `img_batch: list[Tensor]` ... `img_batch.shape[0]`)
        if bk == TENSORS:
            return TENSOR  # namedtuple fields: sort(...).values, max(dim=...).indices
        if bk == CPUS:
            return CPU
        if bk == NDARRAY:
            return HOST if node.attr in ("shape", "ndim", "size", "dtype") else NDARRAY
        if bk == HOST:
            return HOST
        if bk is None and node.attr in ("shape", "ndim"):
            return HOST  # whatever has a shape (a tensor, an array) gives a host tuple / int
        if bk in (None, MODULE) and isinstance(base, ast.Name) and self.instance_attr is not None \
                and self.env.get(base.id) in (None, MODULE):  # (an nn.Module of the tree keeps tensors it computed too)
            k = self.instance_attr(base, node.attr)  # `top1.avg` of `top1.update(acc1[0], n)`
            if k is not None:
                return k
        if bk == MODULE and self.held_attr is not None and isinstance(base, ast.Attribute):
            k = self.held_attr(base, node.attr)  # `self.emp_norm._std`: a buffer of a submodule of this module's
            if k is not None:
                return k
        if bk is None and _tensor_named(node.attr):
            return TENSOR  # `generation_config._pad_token_tensor`: named for what it holds
        if bk is None and node.attr in ("data", "grad") and isinstance(base, ast.Attribute) \
                and base.attr in ("weight", "bias"):
            return TENSOR  # `layer.weight.data`, `layer.bias.grad`: a layer's parameter, whatever `layer` is
        if bk is None and self.tensor_attr is not None and _held_submodule(base) and self.tensor_attr(node.attr):
            self.probable = True  # `self.layers[l].mask`: the folder keeps tensors under that name (crossfile)
            return TENSOR
        return None

    def _k_Subscript(self, node):
        bk = self.kind(node.value)
        if bk in (TENSOR, CPU):
            return bk
        if bk == TENSORS:
            return TENSOR if not isinstance(node.slice, ast.Slice) else TENSORS
        if bk == CPUS:
            return CPU if not isinstance(node.slice, ast.Slice) else CPUS
        if bk == HOST:
            return HOST  # t.shape[0], a list of ints
        if bk == NDARRAY:
            return NDARRAY
        if bk is None and isinstance(node.value, ast.Name) and not isinstance(node.slice, ast.Slice) \
                and (k := (self.env.filled.get(node.value.id) or {}).get(_item_key(node.slice))) is not None:
            self.probable = True
            return k
        return None

    def _k_BinOp(self, node):
        if isinstance(node.op, ast.Mod) and isinstance(node.left, (ast.Constant, ast.JoinedStr)) \
                and not isinstance(getattr(node.left, "value", ""), (int, float, complex)):
            return HOST  # `"%g" % t`: a string
        return self._combined(node.left, [node.right])

    def _k_UnaryOp(self, node):
        if isinstance(node.op, ast.Not):
            return HOST
        return self.kind(node.operand)

    def _k_Compare(self, node):
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return HOST
        if any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops) and any(
                self._enum_member(c) or isinstance(c, (ast.List, ast.Tuple)) for c in (node.left, *node.comparators)):
            return HOST  # `fmt == BoxFormat.XYXY`, `x.dtype == torch.float16`, `t != [None]`: Python bools
        return self._combined(node.left, node.comparators)

    def _combined(self, first: ast.AST, rest: list) -> str | None:
        """The operands' kinds combined (`_combine`). A probable clue on one operand does not make the
        answer probable when another is surely a device tensor: `probable * t` is a tensor either way."""
        before = self.probable
        kinds = []
        for e in (first, *rest):
            self.probable = False
            kinds.append((self.kind(e), self.probable))
        k = kinds[0][0]
        for other, _ in kinds[1:]:
            k = _combine(k, other)
        if k is None and any(x == CPU for x, _ in kinds) and all(x in (CPU, HOST, None) for x, _ in kinds) \
                and not any(x == CPU and _zero_dim_made(e) for e, (x, _) in zip((first, *rest), kinds)):
            # `ramp * (lo - hi)` with `ramp = torch.linspace(0, 1, n)`: a host tensor of one or more dimensions
            # computes only with host values (a device tensor would raise), so the result is on the host
            k = CPU
        sure = k == TENSOR and any(x == TENSOR and not p for x, p in kinds)
        self.probable = before or (any(p for _, p in kinds) and not sure)
        return k

    def _k_BoolOp(self, node):
        # `a and b` is one of its operands, as if a branch picked it: `not batch_first and mask[0].all()`
        # is the tensor whenever `batch_first` is False
        k = self.kind(node.values[0])
        for v in node.values[1:]:
            k = merge_kinds(k, self.kind(v))
        return k

    def _k_IfExp(self, node):
        # `x.detach() if torch.is_tensor(x) else x`: the body is written for a tensor x
        name = tensor_tested(node.test, self.imports)
        env = self.env
        if name is None or env.get(name) in TENSORISH:
            return merge_kinds(self.kind(node.body), self.kind(node.orelse))
        had, old = name in env.names, env.names.get(name)
        env.names[name] = TENSOR
        try:
            body = self.kind(node.body)
        finally:
            if had:
                env.names[name] = old
            else:
                del env.names[name]
        return merge_kinds(body, self.kind(node.orelse))

    def _k_Call(self, node):
        func = node.func
        if self.namespaces and func.__class__ is ast.Attribute and dotted(func.value) in self.namespaces:
            return self._dispatch_kind(func.attr, node.args, False, node, unseen=True)
        q = self.call_qualname(node)
        if q is not None:
            if q in _LOADER_WRAPPERS and node.args and not isinstance(node.args[0], ast.Starred) \
                    and self.iter_kind(node.args[0])[1]:
                return LOADER  # `tk0 = tqdm.tqdm(data_loader)`: it yields the loader's batches
            k = self._torch_call_kind(q, node)
            if k is not None or q.startswith(_LIBRARIES) or self.resolver is None:
                return k
            r = self.resolver(node)  # a function another module of the linted tree defines
            if r is None and self.through_tree_module(func):  # `import pkg.misc as misc`: `misc.f(t)`
                return self._unseen_call(node, func.attr, None)
            if r is None and isinstance(func, ast.Name) and func.id in self.imported_names:
                return self._host_call(node, func.id, None)  # `from .conversions import to_homogeneous`
            return r.kind if r is not None else None
        if isinstance(func, ast.Name):
            name = func.id
            if name in BUILTIN_HOST:
                return HOST
            if name in SAME_ELEMENTS and len(node.args) == 1 and not node.keywords and name not in self.imports:
                k = self.kind(node.args[0])  # `reversed(xs)`, `list(xs)`: the same elements
                if k in (TENSORS, CPUS):
                    return k
                if k in (TENSOR, CPU):  # `reversed(t)` is `t.flip(0)`; `list(t)` a list of its rows
                    return k if name == "reversed" else TENSORS if k == TENSOR else CPUS
            if name == "iter" and len(node.args) == 1 and self.iter_kind(node.args[0])[1]:
                return LOADER  # `it = iter(loader)`: `next(it)` draws a batch
            if name == "getattr" and len(node.args) in (2, 3) and name not in self.imports \
                    and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str) \
                    and node.args[1].value.isidentifier() and self.kind(node.args[0]) not in TENSORISH:
                # `getattr(self, "_flag", False)`: the attribute, as `self._flag` reads it (the default only
                # stands in when the object has none); of a tensor, a dynamic attribute is metadata (`fake_mode`)
                k = self.kind(ast.copy_location(ast.Attribute(node.args[0], node.args[1].value, ast.Load()), node))
                if k is not None:
                    return k
            k = self.env.get(name)
            if k == MODULE:
                return TENSOR
            if name == "closure" and k is None and not node.args and not node.keywords and name not in self.imports:
                return TENSOR  # `loss = closure()`: torch.optim's contract, the closure re-evaluates and returns the loss
            if name in self.module_classes:
                return self.module_classes[name]
            if name in self.namedtuples and (node.args or node.keywords):  # `State(y, f, t0, t1)`
                kinds = [self.kind(a) for a in node.args] + [self.kind(k.value) for k in node.keywords]
                if all(k in (CPU, CPUS) for k in kinds):
                    return CPUS
                # (a field holding a list of tensors, `beta=[b.to(device) for b in ...]`: the record says more)
                if all(k == TENSOR or k == TENSORS and name not in self.records for k in kinds):
                    return TENSORS
            if name in self.records and name not in self.imports:  # its fields say what it holds
                fields = list(self.records[name])
                if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                    return record_kind(name)
                got = dict(zip(fields, [self.kind(a) for a in node.args]))
                got.update({k.arg: self.kind(k.value) for k in node.keywords if k.arg is not None})
                return record_kind(name, [got.get(f) for f in fields])
            if name in self.function_returns:
                return self.function_returns[name]
            if self.resolver is not None:
                r = self._resolve(node)
                if r is not None:
                    return r.kind
            if name in ("max", "min", "sum", "abs") and node.args:
                kinds = [self.kind(a) for a in node.args]
                if len(kinds) == 1 and kinds[0] == TENSORS or TENSOR in kinds and name != "sum" \
                        and all(k in (TENSOR, TENSORS) for k in kinds):
                    return TENSOR  # `sum(losses.values())`, `max(a, b)` of tensors
                if any(k in TENSORISH for k in kinds):
                    return TENSOR if TENSOR in kinds else CPU
                if name in ("max", "min", "abs") and all(k == HOST for k in kinds):
                    return HOST  # `max(k_h / q_h, 1.0)`: Python numbers
                return None
            return self._unseen_call(node, name, k)
        if isinstance(func, ast.Attribute):
            recv = func.value
            meth = func.attr
            mods = self.env.modules_of(recv.id) if isinstance(recv, ast.Name) else ()
            if mods:  # `lib.any(x)` with `lib = torch if ... else np`: what either module's function gives
                k = self._torch_call_kind(f"{mods[0]}.{meth}", node)
                for m in mods[1:]:
                    k = merge_kinds(k, self._torch_call_kind(f"{m}.{meth}", node))
                return k
            if self.through_tree_module(func):  # `from . import misc`: `misc.is_nan(t)`, as `is_nan(t)`
                r = self.resolver(node) if self.resolver is not None else None
                return r.kind if r is not None else self._unseen_call(node, meth, None)
            if self.tree_instance_call(node):  # `corpus.get_data(path, n)` of `corpus = Corpus()`: read there
                r = self.resolver(node) if self.resolver is not None else None
                # (handed no tensor, a tensor of unknown device says less than where the object was made:
                # `engine.draw(n, dtype=dtype)` of an engine built from Python values, SYN204's guess)
                # (a model or a loader handed in says where: `ev.accuracy(model, loader)`)
                # (an object made on a device computes there: `mde.distances()` of `mde = m.MDE(..., device=d)`;
                # so does a model)
                if r is not None and not (r.kind == TENSOR and self.env.get(recv.id) != MODULE and not (
                        self.built_with_device is not None and self.built_with_device(recv.id)) and not any(
                        self.kind(a) in (TENSOR, TENSORS, MODULE, LOADER)
                        for a in [*node.args, *(k.value for k in node.keywords)])):
                    return r.kind
            if self.instance_method is not None and self.resolver is not None and (
                    isinstance(recv, ast.Name) and recv.id not in ("self", "cls") and self.env.get(recv.id) is None
                    or isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self"
                    and self.env.self_attrs.get(recv.attr) is None) and self.instance_method(recv, meth) is not None:
                r = self.resolver(node)  # `acc = trainer.evaluate(loader)` of `trainer = Trainer(...)`: read there
                if r is not None and r.kind is not None:
                    return r.kind
            if isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
                k = self.env.self_attrs.get(meth) if recv.id == "self" else None
                r = self._resolve(node) if self.resolver is not None else None
                if k == MODULE:  # a module of this file may say more (a matcher returning CPU indices)
                    return r.kind if r is not None and r.kind is not None else TENSOR
                if r is None and k is None and recv.id == "self" and self.inherited is not None \
                        and not meth.startswith("_") and self._may_guess(meth, None) and self._tensor_arg(node) \
                        and self.inherited(node):
                    self.probable = True  # `self.get_logits(x)` of a base's: code the inference cannot see, as `m.f(x)`
                    return TENSOR
                if r is None and k in (None, OTHER) and recv.id == "self" and self.fn_attr is not None:
                    return self._attr_function_kind(node, self.fn_attr(meth))
                return r.kind if r is not None else None
            if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super":
                r = self.resolver(node) if self.resolver is not None else None  # a base's method
                return r.kind if r is not None else None
            rk = self.kind(recv)
            if rk in TENSORISH:
                return self._tensor_method_kind(rk, meth, node)
            if rk == MODULE and isinstance(recv, ast.Name) and self.duck_method is not None \
                    and not self.tree_instance_call(node):  # (an instance of a class the walk knows: read there)
                r = self.duck_method(node, recv, meth)
                if r is not None:
                    return r.kind
            if rk == MODULE:
                if meth in ("forward", "__call__"):
                    return TENSOR
                if meth in ("to", "cuda", "cpu", "train", "eval", "half", "float", "requires_grad_"):
                    return MODULE
                return None
            if rk == NDARRAY:
                return HOST if meth in ("item", "tolist") else NDARRAY
            if rk == TENSORS and meth in ("to", "cuda", "values"):
                return TENSORS
            if rk == TENSORS and meth in ("get", "pop") and node.args:
                return TENSOR
            if meth in ("cuda", "detach"):  # methods only a tensor (or a module, for `cuda`) has
                return TENSOR
            if meth in _NEW_FACTORIES:  # `x.new_empty(2)`: made where `x` is, and only a tensor has them
                return TENSOR
            if rk is None and meth == "to" and self.torch_only and self._casts_dtype(node):
                self.probable = True  # `x.to(device=d, dtype=y.dtype)`: a module is seldom cast this way
                return CPU if self.cpu_device(node.args[0] if node.args else self.call_device(node)) is True \
                    else TENSOR
            if rk is None and meth in PROBABLE_REDUCTIONS and self.probable_tensor(recv):
                return TENSOR
            if rk is None and isinstance(recv, ast.Name) and recv.id not in self.imports \
                    and meth not in _CONTAINER_METHODS and meth not in HOST_METHODS and not meth.startswith("_") \
                    and self._may_guess(meth, None) and self._tensor_arg(node):
                self.probable = True  # `m.solve(radius)`: an object the inference cannot see, handed a tensor
                return TENSOR
        return None

    def _casts_dtype(self, node: ast.Call) -> bool:
        """`.to(...)` names a dtype: `dtype=`, `torch.float64`, `y.dtype`."""
        return kwarg(node, "dtype") is not None or any(
            isinstance(a, ast.Attribute) and a.attr == "dtype" or (qualify(a, self.imports) or "") in _DTYPES
            for a in node.args)

    def _unseen_call(self, node: ast.Call, name: str, k: str | None) -> str | None:
        """A function the inference cannot see (`name`; `k`: what a variable of that name holds), applied to
        a tensor: in a module whose only array library is torch, probably a tensor."""
        if self._may_guess(name, k) and self._tensor_arg(node):
            self.probable = True  # `norm(y / scale)`, `func(t, y)`: what code the inference cannot see
            return TENSOR  # made from tensors, where the only array library is torch: probably one
        return self._host_call(node, name, k)

    def _host_call(self, node: ast.Call, name: str, k: str | None) -> str | None:
        """A function the inference cannot see, handed host tensors and host values only (no device, no
        tensor that may be on one): probably a host tensor, where the only array library is torch (a helper
        computes where its inputs are: `to_homogeneous(kp.cpu())`)."""
        if not self.host_inputs(node, name, k):
            return None
        self.probable = True
        return CPU

    def host_inputs(self, node: ast.Call, name: str, k: str | None = None) -> bool:
        """`_host_call`'s test, without marking the answer probable."""
        if not self._may_guess(name, k) or name.lstrip("_")[:1].isupper() \
                or any(isinstance(a, ast.Starred) for a in node.args) \
                or any(kw.arg is None or "device" in kw.arg for kw in node.keywords):
            return False
        values = [*node.args, *(kw.value for kw in node.keywords)]
        if any(w in name.lower() for w in ("device", "cuda", "gpu")) or any(
                isinstance(v, ast.Attribute) and v.attr == "device" or _looks_like_device(v) for v in values):
            return False  # `_to_device_nonblocking(idx, luts.device)`: a mover
        before = self.probable
        kinds = [self.kind(v) for v in values]
        self.probable = before
        return any(x in (CPU, CPUS) for x in kinds) and all(x in (CPU, CPUS, HOST) for x in kinds)

    def _may_guess(self, name: str, k: str | None) -> bool:
        return self.torch_only and name not in _NOT_ARRAY_MAKERS and not name[:1].isupper() \
            and k not in _NOT_TENSOR_KINDS

    def tree_module_call(self, call: ast.Call) -> bool:
        """`misc.f(t)`, `pyro.sample("x", d)`: a call of a function (not a class) through a module of the
        tree, handed something other than literals (`logging.get_logger(__name__)` is not): worth reading
        that module's function for (what it returns says more than a guess)."""
        f = call.func
        if isinstance(f, ast.Name):  # `from .misc import is_nan`: `is_nan(t)`, as `misc.is_nan(t)`
            named = f.id in self.imported_names and self.tree_module is not None and self.env.get(f.id) is None \
                and not f.id.lstrip("_")[:1].isupper() and self.tree_module(f.id)
        else:
            named = self.through_tree_module(f) and not f.attr[:1].isupper()  # type: ignore[attr-defined]
        return named and any(
            not isinstance(a, (ast.Constant, ast.JoinedStr)) and not (isinstance(a, ast.Name) and a.id == "__name__")
            for a in [*call.args, *(k.value for k in call.keywords)])

    def tree_instance_call(self, call: ast.Call) -> bool:
        """`obj.method(...)` where `obj` is an instance of a class another module of the tree defines
        (`corpus = Corpus()`, imported by name)."""
        f = call.func
        return isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and self.tree_instance is not None \
            and not f.attr.startswith("__") and self.env.get(f.value.id) in (None, MODULE) \
            and self.tree_instance(f.value.id) is not None

    def through_tree_module(self, func: ast.AST) -> bool:
        """`func` is `m.f` where `m` names another module of the linted tree (not a library, not a local)."""
        recv = func.value if isinstance(func, ast.Attribute) else None
        return isinstance(recv, ast.Name) and self.tree_module is not None and self.env.get(recv.id) is None \
            and self.tree_module(recv.id)

    def _tensor_arg(self, call: ast.Call) -> bool:
        """Some positional argument of `call` is a tensor on the device (or probably one)."""
        return any(not isinstance(a, ast.Starred) and self.kind(a) == TENSOR for a in call.args)

    def _enum_member(self, node: ast.AST) -> bool:
        """`Format.XYXY`, `tv_tensors.BoundingBoxFormat.XYXY`, `torch.float16`, `torch.device("cpu")`."""
        q = qualify(node, self.imports) or (qualify(node.func, self.imports) if isinstance(node, ast.Call) else None)
        if q is None and isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Attribute)):
            q = qualify(node.value, self.imports) or (node.value.id if isinstance(node.value, ast.Name) else None)
            q = q and f"{q}.{node.attr}"
        if not q:
            return False
        parts = q.split(".")
        if any(p[:1].isupper() and not p.isupper() for p in parts[:-1]) and parts[-1].isupper():
            return True  # an enum's member: a CamelCase class, an UPPER_CASE name
        return q in _DTYPES or q in ("torch.device", "torch.dtype")

    def _tensor_method_kind(self, rk, meth, node):
        if meth in _CONTAINER_METHODS:
            return None  # `out.items()`, `batch.get("x")`: a dict or list the inference took for a tensor
        if meth.startswith("is_"):
            return HOST  # is_conj(), is_inference(), ...
        if meth.startswith("_") and not meth.startswith("__") and meth not in HOST_METHODS:
            return None  # private helpers (`_typed_storage()`, `_values()`): unknown
        if meth in HOST_METHODS:
            if meth == "size" and not node.args and not node.keywords:
                return HOST
            if meth == "type" and (node.args or node.keywords):
                arg = node.args[0] if node.args else node.keywords[0].value
                q = qualify(arg, self.imports) or ""
                if q.startswith("torch.cuda."):
                    return TENSOR
                if q == "torch.Tensor":
                    return self._default_made()  # the default tensor type: CUDA where the module sets it so
                return CPU if q.endswith("Tensor") else rk
            return HOST
        if meth in NDARRAY_METHODS:
            return NDARRAY
        if meth == "cpu":
            return CPU
        if meth in ("cuda",):
            return TENSOR
        if meth == "to":
            dev = node.args[0] if node.args else self.call_device(node)
            cpu = self.cpu_device(dev)
            if cpu is True:
                return CPU
            if cpu is False:
                return TENSOR
            dk = self.kind(dev) if dev is not None else None
            if dk in TENSORISH:
                return dk  # .to(other_tensor)
            return TENSOR if rk == CPU and dev is not None and _looks_like_device(dev) else rk
        if meth in ("pin_memory",):
            return CPU
        if meth == "type_as" and node.args:  # a copy to the other tensor's device
            k = self.kind(node.args[0])
            if k is None and rk == CPU and not isinstance(node.args[0], ast.Constant):
                # `torch.eye(n).type_as(R)`: `type_as` takes a tensor, of unknown place here (on the GPU when
                # there is one): no longer surely on the host
                self.probable = True
                return TENSOR
            return k if k in TENSORISH else rk
        if meth in ("unbind", "split", "chunk", "tensor_split", "unsqueeze_", "sort", "topk", "max", "min",
                    "median", "mode", "kthvalue", "nonzero", "unique", "svd", "qr", "eig", "slogdet",
                    "hsplit", "vsplit", "dsplit", "lu", "cummax", "cummin", "aminmax", "frexp", "var_mean",
                    "std_mean"):
            # may return several tensors: subscripting or unpacking them still gives tensors
            return rk
        return rk

    def _torch_call_kind(self, q, node):
        if q in TORCH_HOST_FUNCS:
            return HOST
        if q == "typing.cast" and len(node.args) == 2:  # `cast(torch.Tensor, x)`: x, as the type says
            k = annotation_kind(node.args[0], self.imports)[0]
            own = self.kind(node.args[1])
            if own is not None or k is None:
                return own
            if k == TENSOR:
                self.probable = True  # (a claim for the type checker: a tensor, but where it lives is not said)
            return k
        target = dispatched(q, node)
        if target is not None:  # (autoray's arrays are of the backend the user picks, as a namespace's)
            return self._dispatch_kind(*target[:3], node, *target[3:], unseen=q.startswith("autoray."))
        if q in LOADER_NAMES or q.endswith(".DataLoader"):
            return LOADER
        if q.startswith(("numpy.", "np.")):
            return NDARRAY if not q.endswith(("item",)) else HOST
        if q.startswith("math."):
            return HOST
        if q == "torchvision.utils.make_grid" and node.args:  # one image of a batch, where the batch is
            k = self.kind(node.args[0])
            return TENSOR if k in (TENSOR, TENSORS) else CPU if k in (CPU, CPUS) else None
        if not q.startswith(("torch.", "torchvision.ops.")):  # not torchvision.* / torchaudio.* helpers at large
            return None
        last = q.rsplit(".", 1)[-1]
        if last.lstrip("_").startswith(("is_", "has_", "are_")):
            return HOST  # torch.is_grad_enabled(), torch.overrides.has_torch_function(...): Python bools
        parts = q.split(".")
        if len(parts) > 2 and any(p.startswith("_") for p in parts[1:]) and parts[1] != "ops":
            return None  # private helpers (torch.nn.init._calculate_fan_in_and_fan_out, torch._custom_ops.get_ctx)
        known = _AUTOGRAD_RETURNS.get(q)
        if known is not None:
            return known
        if q in ("torch.autograd.Variable", "torch.autograd.variable.Variable"):
            return self.kind(node.args[0]) if node.args else None  # a legacy wrapper: the tensor itself
        if q.startswith("torch.optim.") and last[:1].isupper():
            return OPTIMIZER
        if q.startswith(("torch.nn.utils.clip_grad.clip_grad_norm", "torch.nn.utils.clip_grad_norm",
                         "torch.nn.utils.get_total_norm", "torch.nn.utils.clip_grad.get_total_norm",
                         "torch.nn.utils.parameters_to_vector", "torch.nn.utils.convert_parameters.parameters_to")):
            return TENSOR  # the total norm, on the gradients' device; the parameters as one vector
        if last in ("Parameter", "Buffer") and q.startswith("torch.nn."):
            return TENSOR  # `nn.Parameter(...)` / `nn.Buffer(...)`: tensors that move with their module
        if last == "ParameterList" and q.startswith("torch.nn."):
            return TENSORS  # its items are parameters (`for w in self.loss_weight: w.item()`)
        if q.startswith("torch.nn.") and not q.startswith("torch.nn.functional.") and last[:1].isupper():
            return MODULE if not q.startswith(("torch.nn.utils.", "torch.nn.parameter.")) else None
        if last == "Parameter":
            return TENSOR
        if q.startswith(("torch.cuda.", "torch.distributed.", "torch.autograd.profiler", "torch.profiler",
                         "torch.backends.", "torch.utils.", "torch.jit.", "torch.compiler.", "torch.distributions.",
                         "torch.amp.", "torch.cuda.amp.", "torch.hub.", "torch.onnx.", "torch.fx.",
                         "torch.testing.", "torch.library.", "torch._dynamo.", "torch._C.", "torch.overrides.",
                         "torch._jit_internal.", "torch.nn.modules.utils.", "torch.xpu.", "torch.mps.",
                         "torch.hpu.", "torch.mtia.", "torch.accelerator.")):
            if q.startswith("torch.nn.utils.clip_grad"):
                return TENSOR
            return OTHER if last[:1].isupper() else None
        if last[:1].isupper() and q not in FACTORIES:
            return OTHER  # torch.device, torch.Generator, torch.dtype constructors, ...
        if q in ("torch.device", "torch.get_default_device", "torch.dtype", "torch.no_grad", "torch.enable_grad",
                 "torch.inference_mode", "torch.set_grad_enabled", "torch.manual_seed", "torch.compile", "torch.autocast",
                 "torch.save", "torch.load", "torch.set_printoptions", "torch.set_default_dtype",
                 "torch.use_deterministic_algorithms", "torch.set_num_threads", "torch.set_float32_matmul_precision",
                 "torch.promote_types", "torch.result_type"):  # (dtypes: `x.to(torch.promote_types(a, b))`)
            return OTHER
        if q in FACTORIES:
            dev = self.call_device(node)
            if dev is None:
                if q in ("torch.tensor", "torch.as_tensor") and node.args:
                    k = self.kind(node.args[0])
                    if k in TENSORISH:
                        return k
                return self._default_made()
            if self.cpu_device(dev) is True:
                return CPU
            if isinstance(dev, ast.Attribute) and isinstance(dev.value, ast.Name) and dev.value.id == "self" \
                    and self.none_attr is not None and self.none_attr(dev.attr):
                self.probable = True  # `device=self.device` set from `device=None`: the default device, unless given
                return self._default_made()
            return TENSOR
        if q.endswith("_like") and node.args:
            dev = self.call_device(node)
            if dev is not None:
                return CPU if self.cpu_device(dev) is True else TENSOR
            k = self.kind(node.args[0])
            return k if k in TENSORISH else TENSOR
        # other functions of torch's operator namespaces: tensors; helpers elsewhere in torch
        # (torch.ao.quantization.qconfig_equals, torch.version.cuda.replace, torch._use_cudnn_...): unknown
        if q.rsplit(".", 1)[0] not in OP_NAMESPACES and not q.startswith(("torch.ops.", "torchvision.ops.")):
            return None
        if (last.startswith("_") and not last.startswith("_foreach")) or last.startswith(("get_", "set_")):
            return None  # torch.get_device_module(), torch.set_default_device(): not tensors
        # any other torch function: a tensor, on the host only if every tensor argument is
        kinds = [self.kind(a) for a in node.args] + [self.kind(k.value) for k in node.keywords]
        kinds = [CPU if k == CPUS else k for k in kinds]  # `torch.cat([cpu_a, cpu_b])`: on the host
        if kinds and CPU in kinds and TENSOR not in kinds and None not in [k for k in kinds if k != HOST]:
            return CPU
        if node.args and all(k == HOST for k in kinds[:len(node.args)]) and kwarg(node, "device") is None \
                and all(k in (HOST, OTHER) for k in kinds[len(node.args):]) \
                and not any(isinstance(a, ast.Starred) for a in node.args):
            return CPU  # `torch.div(x.size(1), 2, rounding_mode="trunc")`: Python numbers become a CPU tensor
        if any(k == TENSORS for k in kinds) and last in ("stack", "cat", "concat", "concatenate", "hstack",
                                                          "vstack", "dstack", "block_diag", "cartesian_prod"):
            return TENSOR
        return TENSOR

    def _resolve(self, node: ast.Call):
        """`self.resolver(node)`, noting the calls whose function returns a host tensor on some paths (`partly_host`
        reads the note: a second resolution of the same call would cost as much as the first)."""
        r = self.resolver(node)  # type: ignore[misc]
        if r is not None and r.partly_host:
            self._partly_calls.add(id(node))
        else:
            self._partly_calls.discard(id(node))
        return r

    def _attr_function_kind(self, node: ast.Call, funcs: list) -> str | None:
        """`self.clip_func(params)` where the class binds `self.clip_func = torch.nn.utils.clip_grad_norm_` (or
        another torch function on another path): what the function gives; a tensor where one gives a tensor
        and the others give nothing known (probable)."""
        kinds = []
        for f in funcs:
            c = self._fn_calls.get((id(node), id(f)))
            if c is None:  # (kept: a node's kind may be remembered by its id)
                c = self._fn_calls[(id(node), id(f))] = ast.copy_location(
                    ast.Call(func=f, args=node.args, keywords=node.keywords), node)
            kinds.append(self.kind(c))
        if not kinds or TENSOR not in kinds or not all(k in (TENSOR, None) for k in kinds):
            return None
        if None in kinds:
            self.probable = True
        return TENSOR

    def _default_made(self) -> str | None:
        """Where a factory given no device makes its tensor: on the host, unless the code runs under
        `with torch.device(d):` (on `d`) or in a module that sets a CUDA default device when imported (probably
        on the device: a later call may set it back)."""
        d = self.default_device
        if d is not None:
            if isinstance(d, ast.Constant) and d.value == "meta":
                return None  # `with torch.device("meta"):` tensors without data (reading one raises, never waits)
            return CPU if self.cpu_device(d) is True else TENSOR
        if self.module_default_device:
            self.probable = True
            return TENSOR
        return CPU

    def _dispatch_kind(self, name: str, args: list, numpy_default: bool, node: ast.Call,
                       keywords: bool = True, unseen: bool = False) -> str | None:
        """What an array-API dispatcher's function `name` gives for these arguments: it computes with the
        library of its arrays, so a device tensor in gives a device tensor out (as torch's function of that
        name), host tensors only a host tensor, numpy arrays an array; unknown arrays, unknown. `like=`
        picks the library (`like="torch"`: torch's function, made where torch makes tensors by default),
        or, for a creation routine handed an array, the array's device (autoray injects it)."""
        last = name.rsplit(".", 1)[-1]
        if last in _DISPATCH_HOST or last.lstrip("_").startswith(("is_", "has_")):
            return HOST  # (`bd.is_array(x)`: a Python bool, as torch's `is_` functions give)
        if last in _DISPATCH_OTHER:
            return OTHER
        if last in ("to_numpy", "asnumpy"):
            return NDARRAY
        as_torch = "torch." + torch_name(name)
        like = kwarg(node, "like")
        if like is not None:
            if isinstance(like, ast.Constant) and isinstance(like.value, str):
                lib = like.value.split(".")[0]
                return self._torch_call_kind(as_torch, node) if lib == "torch" else NDARRAY \
                    if lib in ("numpy", "builtins") else None
            lk = self.kind(like)
            if lk == NDARRAY:
                return NDARRAY
            if lk not in TENSORISH:
                return None
            if last in _DISPATCH_CREATION:
                dev = self.call_device(node)
                return lk if dev is None else CPU if self.cpu_device(dev) is True else TENSOR
            return self._torch_call_kind(as_torch, node)  # `linspace(0, 1, n, like=t)`: torch's own default
        if any(isinstance(a, ast.Starred) for a in args) or keywords and any(k.arg is None for k in node.keywords):
            return None
        named = [k.value for k in node.keywords if k.arg not in ("dtype", "device", "like")] if keywords else []
        kinds = [self.kind(a) for a in [*args, *named]]
        kinds = [TENSOR if k == TENSORS else CPU if k == CPUS else k for k in kinds]
        if TENSOR in kinds or CPU in kinds and all(k in (CPU, HOST, OTHER) for k in kinds):
            if as_torch in TORCH_HOST_FUNCS:
                return HOST
            return TENSOR if TENSOR in kinds else CPU
        if NDARRAY in kinds and all(k in (NDARRAY, HOST, OTHER) for k in kinds) \
                or numpy_default and args and all(k == HOST for k in kinds):
            return NDARRAY  # numpy's arrays, or Python numbers (autoray hands them to numpy)
        if unseen and (None in kinds or last in _DISPATCH_CREATION) and NDARRAY not in kinds:
            # a namespace of a backend the module does not name (`tl.abs(err)`, `bd.zeros(shape)`): arrays of the
            # backend the user picks, torch's for a PyTorch user, on a device unsaid (probable)
            self.probable = True
            return TENSOR
        return None

    def _bind_masks(self, target: ast.Tuple | ast.List, call: ast.Call) -> None:
        """`valid, i = first_nonzero(x)`: the parts a helper of the module returns as masks are masks (of another
        module's helper, `made_bool` asks where the part indexes)."""
        masks = self.mask_resolver(call, False) if self.mask_resolver is not None else False
        if isinstance(masks, tuple) and len(masks) == len(target.elts):
            for t, m in zip(target.elts, masks):
                if m and isinstance(t, ast.Name) and self.env.names.get(t.id) in TENSORISH:
                    self.env.bools.add(t.id)

    def is_bool(self, node: ast.AST, by_name: bool = True) -> bool:
        """Whether a tensor expression is a boolean mask (comparison, ~, &, isnan, .bool(), ...).
        `by_name`: also trust a tensor whose name says it is a mask (`mask`, `valid`, `keep`)."""
        if isinstance(node, ast.Compare):
            return not any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops)
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, (ast.Invert, ast.Not)) and self.is_bool(node.operand, by_name)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return self.is_bool(node.left, by_name) or self.is_bool(node.right, by_name)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):  # `wrong * nonzero`: bools multiply as `&`
            return self.is_bool(node.left, by_name) and self.is_bool(node.right, by_name)
        if isinstance(node, ast.Name):
            return self.env.is_bool(node.id) or (by_name and masky_name(node.id) and self.kind(node) in (TENSOR, CPU))
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                # (every value the class stores in it is boolean on its face: `self.nz = self.w_sum > 1e-10`)
                return node.attr in self.self_bools and self.kind(node) in (TENSOR, CPU)
            return by_name and masky_name(node.attr) and self.kind(node) in (TENSOR, CPU)
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in BOOL_FUNCS:
                return True
            if name in ("to", "type") and (node.args or kwarg(node, "dtype") is not None):
                q = qualify(node.args[0] if node.args else kwarg(node, "dtype"), self.imports) or ""
                return q == "torch.bool"
            if (name in MASK_VIEWS or name in ("any", "all")) and isinstance(f, ast.Attribute):
                return self.is_bool(f.value, by_name) if name not in ("any", "all") else True
            q = qualify(f, self.imports) or ""
            if q in FACTORIES or q.endswith("_like") and q.startswith("torch."):  # `torch.tensor(m, dtype=torch.bool)`
                dt = kwarg(node, "dtype")
                return dt is not None and (qualify(dt, self.imports) or "") == "torch.bool"
            # a function or method of the module whose every return is a mask (`unknown = self._unknown(target)`)
            return self.mask_resolver is not None and (isinstance(f, ast.Name) or isinstance(f, ast.Attribute) and (
                isinstance(f.value, ast.Name) and f.value.id == "self")) and self.mask_resolver(node, False) is True
        if isinstance(node, ast.Subscript):
            return self.is_bool(node.value, by_name)
        return False

    def partly_host(self, node: ast.AST, depth: int = 0) -> bool:
        """A tensor (kind `tensor`) that is a host tensor on some path the code may take: a name some
        branch left holding a host tensor (`Env.partly_host`), `a if c else b` of a host tensor and a
        tensor, and what elementwise ops, torch functions, dtype changes and indexing make of such a value.
        Copying it to a device (`.to(orig_device)`) is then a blocking copy on that path."""
        if depth > 8:
            return False
        if isinstance(node, ast.Name):
            return self.env.is_partly_host(node.id)
        if isinstance(node, ast.IfExp):
            a, b = self.kind(node.body), self.kind(node.orelse)
            return merge_kinds(a, b) == TENSOR and (CPU in (a, b) or self.partly_host(node.body, depth + 1)
                                                    or self.partly_host(node.orelse, depth + 1))
        if isinstance(node, (ast.Subscript, ast.Starred)):
            return self.partly_host(node.value, depth + 1)
        if isinstance(node, ast.UnaryOp):
            return self.partly_host(node.operand, depth + 1)
        if isinstance(node, ast.BinOp):
            return self.partly_host(node.left, depth + 1) or self.partly_host(node.right, depth + 1)
        if not isinstance(node, ast.Call):
            return False
        f = node.func
        q = self.call_qualname(node)
        if q is None and id(node) in self._partly_calls:
            return True  # a function of the tree that returns a host tensor on some path (noted by `_resolve`)
        if q is not None:  # `torch.linalg.eigh(r)`: a function of torch computes where its tensors are
            return q.startswith("torch.") and q.rsplit(".", 1)[0] in OP_NAMESPACES and q not in FACTORIES \
                and any(self.partly_host(a, depth + 1) for a in node.args)
        if not isinstance(f, ast.Attribute) or f.attr in ("cuda", "cpu", "type_as", "pin_memory", "numpy") \
                or f.attr in HOST_METHODS:
            return False
        if f.attr == "to" and (self.call_device(node) is not None or node.args and (
                qualify(node.args[0], self.imports) or "") not in _DTYPES):
            return False  # moved (or maybe moved) somewhere
        return self.partly_host(f.value, depth + 1)

    def is_tensor(self, node: ast.AST) -> bool:
        """A tensor that may live on a CUDA device (so reading it on the host may sync)."""
        return self.kind(node) == TENSOR

    def is_any_tensor(self, node: ast.AST) -> bool:
        return self.kind(node) in TENSORISH


# node class -> Inference's `_k_<Node>` for it
_KIND_OF = {c: getattr(Inference, "_k_" + name) for name, c in vars(ast).items()
            if isinstance(c, type) and issubclass(c, ast.AST) and hasattr(Inference, "_k_" + name)}


def sets_default_device(stmt: ast.stmt, imports: dict[str, str]) -> bool:
    """`torch.set_default_device("cuda")` (any device but the CPU), `torch.set_default_tensor_type(torch.cuda.
    FloatTensor)` (or its name as a string): a statement that makes factories given no device make on a GPU."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not isinstance(call, ast.Call) or len(call.args) != 1:
        return False
    q = qualify(call.func, imports)
    arg = call.args[0]
    if q == "torch.set_default_device":
        return is_cpu_device(arg) is False
    if q == "torch.set_default_tensor_type":
        name = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else qualify(arg, imports)
        return bool(name) and name.startswith("torch.cuda.")
    return False


def is_namespace_call(call: ast.Call, imports: dict[str, str]) -> bool:
    """`array_namespace(x)` (array-api-compat, scipy), `array_api_compat.get_namespace(x)`,
    `x.__array_namespace__()`: the array-API namespace of the arrays handed in."""
    f = call.func
    if isinstance(f, ast.Attribute) and f.attr == "__array_namespace__":
        return True
    q = qualify(f, imports) or (f.id if isinstance(f, ast.Name) else "")
    return q.rsplit(".", 1)[-1] == "array_namespace" or q == "array_api_compat.get_namespace"


def torch_name(name: str) -> str:
    """torch's name of a numpy function a dispatcher calls (`concatenate` -> `cat`, `max` -> `amax`)."""
    return _TORCH_NAME.get(name, name)


def dispatched(q: str, call: ast.Call) -> tuple | None:
    """(the function's name, the arguments it computes on, whether Python numbers alone go to numpy[, whether
    its keywords may be arrays]) when
    `q` (the call's qualified name) is a function of an array-API dispatcher: `autoray.numpy.sum`,
    `autoray.do("sum", x)`, `autoray.astype`, `array_api.sum` (an `array_namespace(x)` namespace)."""
    if q.startswith(_AUTORAY_NUMPY):
        return q.split(".numpy.", 1)[1], call.args, True
    if q.startswith(DISPATCH + "."):
        return q[len(DISPATCH) + 1:], call.args, False
    if q.startswith(_PATTERN_LIBRARIES) and q.count(".") == 1:
        name = q.split(".", 1)[1]
        # (their keywords are axis lengths and options, never arrays)
        return (name, call.args, False, False) if name[:1].islower() and name not in _PATTERN_NOT_ARRAYS \
            else None
    if not q.startswith("autoray.") or q.count(".") != 1:
        return None
    name = q[len("autoray."):]
    if name == "do":
        first = call.args[0] if call.args else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value, call.args[1:], True
        return None
    return (name, call.args, False) if name[:1].islower() else None


def _zero_dim_made(e: ast.AST) -> bool:
    """Made 0-dim where it stands (`torch.tensor(2.0)`, not `torch.tensor([1, 2])`). A name holding such a tensor is
    not told apart here (the kinds keep no rank): `s = torch.tensor(2.0)` ... `s * x` counts as a host tensor of
    one or more dimensions, a risk measured as nil on the sets (docs/inference.md, "Session 11")."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in ("tensor", "as_tensor",
                                                                                        "scalar_tensor"):
        return not (e.args and isinstance(e.args[0], (ast.List, ast.Tuple, ast.ListComp)))
    return False


_MODULE_TENSORS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers"})


def _combine(a, b):
    if TENSOR in (a, b):
        return TENSOR
    if CPUS in (a, b) and {a, b} <= {CPUS, HOST}:
        return CPUS  # `(x_cpu, y_cpu) * n`, `cpu_list + cpu_list`
    if CPU in (a, b):
        return CPU if {a, b} <= {CPU, HOST} else (None if None in (a, b) else CPU)
    if NDARRAY in (a, b):
        return NDARRAY
    if a == HOST and b == HOST:
        return HOST
    return None


_TENSOR_NAMED = re.compile(r"(?:^|_)tensor$")


def _held_submodule(base: ast.AST) -> bool:
    """`self.layers[l]`: an item of a container the instance holds (a ModuleList of the folder's layers), not a
    settings object (`self.config`, `config`) whose attributes are Python values."""
    return isinstance(base, ast.Subscript) and isinstance(base.value, ast.Attribute) \
        and isinstance(base.value.value, ast.Name) and base.value.value.id == "self"


def _tensor_named(attr: str) -> bool:
    """An attribute named for holding a tensor (`pad_token_tensor`), not for making one (`to_tensor`)."""
    a = attr.lstrip("_").lower()
    return bool(_TENSOR_NAMED.search(a)) and not a.startswith(("to_", "as_", "is_", "from_", "use_", "return_",
                                                                "make_", "get_", "wrap_"))


def _item_key(index: ast.AST) -> object:
    """A constant key as itself (`"exp_avg"`, `0`), a named constant by its name (`constants.POST_TRANSFORM`), any
    computed index as ""."""
    if isinstance(index, ast.Constant):
        return index.value if index.value != "" else ""
    if isinstance(index, ast.Attribute) and isinstance(index.value, ast.Name) and index.attr.isupper():
        return f"{index.value.id}.{index.attr}"
    if isinstance(index, ast.Name) and index.id.isupper():
        return index.id
    return ""


def _placeholders(value: ast.AST | None) -> bool:
    """`{'resids': None, 'x': None}`: a dict of slots filled later, empty as far as its values go."""
    return isinstance(value, ast.Dict) and bool(value.values) and all(
        isinstance(v, ast.Constant) and v.value is None for v in value.values)


def _looks_like_loader(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    name = name.lower()
    return "loader" in name or name in ("batches", "train_dl", "val_dl", "dl", "train_iter", "data_iter")


def _looks_like_device(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return "device" in name.lower() or name.lower() in ("dev", "gpu", "rank", "local_rank")
