"""The typed fact providers of one file, memoised: what the lint walk and the rules ask about a
module instead of recomputing it (or caching it on the lint context).

    src     SourceTree   the tree, text, parents, positions, a function's own nodes
    imports dict         local name -> qualified name
    index   ModuleIndex  functions, classes, owners, calls by name, `self.<attr>` assignments
    kinds   KindFacts    returns of the module's functions, parameters from their callers, usage
    class_attrs(cls)     what `self.<attr>` holds in a class
    call_name(call)      the qualified name of a call's function (memoised per call node)
    get(provider)        a derived fact of the whole file, computed once: `provider(file)`
    per(node, provider)  a derived fact of one function (or any node), computed once: `provider(file, node)`
    state(owner, make)   a rule's own per-file state (what it gathers while the walk goes)

The lint walk, and the rule-less walks that the kind facts run over single functions, share one
`FileFacts`; a walk is made by the `walker` the engine installs (this module does not import the
engine).
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from syncscan.lint.imports import dotted, import_map, qualify
from syncscan.lint.interproc import TOP, KindFacts
from syncscan.lint.module import ModuleIndex
from syncscan.lint.namespaces import array_namespaces
from syncscan.lint.tensors import DISPATCH, MODULE, is_cpu_device
from syncscan.lint.tree import SourceTree

if TYPE_CHECKING:
    from syncscan.lint.crossfile import CrossFile
    from syncscan.lint.walk import Walk

T = TypeVar("T")
Walker = Callable[["FileFacts", int], "Walk"]

# packages whose arrays look like tensors (`a.max()`, `a[:, 0]`) but never sync
OTHER_ARRAY_LIBRARIES = frozenset({"numpy", "pandas", "jax", "jaxlib", "cupy", "tensorflow", "mlx", "dask", "xarray",
                                   "scipy", "numba", "polars", "pyarrow", "sklearn", "cv2", "onnxruntime",
                                   "tflite_runtime", "openvino", "tensorrt", "paddle", "mindspore", "skimage",
                                   "imageio"})
_KNOWN_LIBRARIES = ("torch", "numpy", "math", "typing", "collections", "functools", "itertools", "os", "re", "sys",
                    "logging", "warnings", "dataclasses", "abc", "enum", "pathlib", "json", "copy", "inspect")
# the base classes (qualified or as spelled) that make a class an nn.Module
_MODULE_BASE_SUFFIXES = ("Module", "Model", "Loss", "Net", "Layer", "LightningModule", "Block", "PreTrainedModel")


class FileFacts:
    def __init__(self, path: str, source: str, tree: ast.Module, walker: Walker | None = None,
                 crossfile: CrossFile | None = None, modules: CrossFile | None = None):
        self.src = SourceTree(path, source, tree)
        self.imports = import_map(tree)
        self.index = ModuleIndex(self.src, self.imports)
        self.walker = walker
        self.crossfile = crossfile  # the other modules of the tree (what their functions return), if known
        # ... known only for calls through a module of the tree (`misc.is_nan(t)`), where `crossfile` is off
        self.modules = crossfile or modules
        self.deps: set[str] = set()  # files of the tree consulted for this one's kinds (crossfile.py)
        self.value_deps: set[str] = set()  # ... read for module-level values they define (a budget of their own)
        self.text_deps: set[str] = set()  # ... read as text only (not parsed: outside the budget of `deps`)
        # `from utils import *` of a module of the tree that imports torch: `torch` (numpy, `F`, ...) comes with it,
        # where this module does not import it itself (a script's helpers pass their imports on)
        self._star_targets = self._star_modules(path) if self.modules is not None and "import *" in source else []
        if self._star_targets:
            own = {t.id for s in tree.body if isinstance(s, ast.Assign) for t in s.targets if isinstance(t, ast.Name)} \
                | {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
            for target in self._star_targets:
                for name, q in self.modules.top_imports(target).items():  # type: ignore[union-attr]
                    if name not in own:
                        self.imports.setdefault(name, q)
                self.text_deps |= self.modules.star_files(target)  # type: ignore[union-attr]
        if "import *" in source:
            _conventional_imports(tree, self.imports, self.index.star_imports())
        self.module_classes: dict[str, str] = {}  # class name -> "module" when it subclasses nn.Module
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and self.is_module_class(node):
                self.module_classes[node.name] = MODULE
        self.namedtuples = self.index.namedtuples() if "amedTuple" in source or "namedtuple" in source \
            else frozenset()
        # record types (namedtuples, dataclasses) -> their fields
        self.records = self.index.records() if self.namedtuples or "dataclass" in source else {}
        self.kinds = KindFacts(self)
        # names imported from modules that are not libraries the inference knows (maybe of this tree)
        # (`import x` binds a module: its name is not a value of another module)
        # (a package of the file's own tree named like a library, `torchattacks` in `.../torchattacks/x.py`,
        # is of the tree)
        self.imported_names = {n for n, (level, mod, _) in self.index.from_imports().items()
                               if level or mod and (not mod.startswith(_KNOWN_LIBRARIES) or _own_package(path, mod))}
        # `from .utils import *`: the names the star-imported modules of the tree define, as if imported by name
        self.star_names = self._star_names() if self._star_targets else {}
        if self.star_names:
            self.imported_names |= self.star_names.keys()
        self.tree_names = self.imported_names if crossfile is not None else set()
        heads = self.index.imported_heads()
        # torch is the only array library the module imports (an array of unknown origin is probably a tensor)
        self.torch_only = "torch" in heads and not heads & OTHER_ARRAY_LIBRARIES
        if not self.torch_only and not heads & OTHER_ARRAY_LIBRARIES and "torch" in source and any(
                level or mod and _own_package(path, mod) for _, (level, mod, _) in self.index.from_imports().items()):
            # a module of a torch library that reaches torch only through its own package (pyro's nuts.py imports
            # pyro.* and no array library): its arrays are the package's tensors
            self.torch_only = True
        self._torch_heads = "torch" in heads or self.torch_only
        self._call_names: dict[int, str | None] = {}
        self._class_attrs: dict[int, dict] = {}
        self._memo: dict[Any, Any] = {}
        self._walks: list[Walk] = []  # every rule-less walk made over this file (close breaks their cycles)

    # -- shorthands ----------------------------------------------------------------------------
    @property
    def path(self) -> str:
        return self.src.path

    @property
    def source(self) -> str:
        return self.src.source

    @property
    def tree(self) -> ast.Module:
        return self.src.tree

    def call_name(self, call: ast.Call) -> str | None:
        """The qualified name of the called function (`torch.nonzero`), through the imports. Memoised
        by node: only ever asked of the file's own (long-lived) call nodes."""
        key = id(call)
        try:
            return self._call_names[key]
        except KeyError:
            q = qualify(call.func, self.imports)
            func = call.func
            if func.__class__ is ast.Attribute and self.namespaces and dotted(func.value) in self.namespaces:
                q = f"{DISPATCH}.{func.attr}"  # `tl.reshape(x, s)`: a backend's function, not a method of `tl`
            self._call_names[key] = q
            return q

    @functools.cached_property
    def namespaces(self) -> frozenset[str]:
        """The dotted names the module calls as array namespaces of a backend (syncscan.lint.namespaces)."""
        return array_namespaces(self.tree, self.imports, self.source, lambda q: _own_package(self.path, q))

    # -- generic memoised providers --------------------------------------------------------------
    def get(self, provider: Callable[[FileFacts], T]) -> T:
        """`provider(self)`, computed once per file."""
        try:
            return self._memo[provider]
        except KeyError:
            v = self._memo[provider] = provider(self)
            return v

    def per(self, node: ast.AST, provider: Callable[[FileFacts, Any], T]) -> T:
        """`provider(self, node)`, computed once per node of this file (a function, a class, the module)."""
        key = (provider, id(node))
        try:
            return self._memo[key]
        except KeyError:
            v = self._memo[key] = provider(self, node)
            return v

    def state(self, owner: object, make: Callable[[], T]) -> T:
        """A per-file object of `owner`'s (a rule's): what it gathers as the walk goes."""
        key = ("state", id(owner))
        try:
            return self._memo[key]
        except KeyError:
            v = self._memo[key] = make()
            return v

    def torch_only_in(self, fn: ast.AST) -> bool:
        """torch is the only array library `fn`'s own code names (the module may import numpy for
        another function): an array of unknown origin there is probably a tensor."""
        if self.torch_only or not self._torch_heads:
            return self.torch_only
        key = ("torch_only", id(fn))
        try:
            return self._memo[key]
        except KeyError:
            other = self.get(_other_array_names)
            nodes = list(self.src.own_nodes(fn))
            scalars = {id(n.value) for n in nodes if isinstance(n, ast.Attribute) and n.attr in _LIBRARY_SCALARS}
            v = self._memo[key] = not any(isinstance(n, ast.Name) and n.id in other and id(n) not in scalars
                                          for n in nodes)
            return v

    def is_tree_module(self, name: str) -> bool:
        """`name` stands for a module of the linted tree, not a library's: imported relatively (`from . import
        misc`), or from a package that the file's own path is inside (`from pkg import misc`,
        `import pkg.misc as misc` in `.../pkg/sub/file.py`). From the syntax and the path alone. Memoised."""
        key = ("tree_module", name)
        try:
            return self._memo[key]
        except KeyError:
            src = self.index.from_imports().get(name)
            v = name in self.star_names
            if src is not None:
                level, module, attr = src
                top = (module or attr).split(".")[0]
                v = bool(level) or top in _folders(self.path) and top not in _KNOWN_LIBRARIES \
                    or _beside(self.path, top)
            self._memo[key] = v
            return v

    def _star_modules(self, path: str) -> list[str]:
        """The files of the modules of the tree that `from [.]m import *` brings in, in order (read as text:
        `text_deps`)."""
        out: list[str] = []
        modules = self.modules
        assert modules is not None
        for level, module in self.index.star_imports():
            if not level and (not module or module.startswith(_KNOWN_LIBRARIES)
                              and not _own_package(path, module)):
                continue
            target = modules.module_path(path, level, module)
            if target is None or os.path.abspath(target) == os.path.abspath(path):
                continue
            self.text_deps.add(target)
            out.append(target)
        return out

    def _star_names(self) -> dict[str, str]:
        """name -> module file, for the top-level names of the modules of the tree that `from [.]m import *`
        brings in (later imports win), less what this module defines itself."""
        out: dict[str, str] = {}
        modules = self.modules
        assert modules is not None
        own = set(self.index.funcs) | set(self.index.classes)
        for target in self._star_targets:
            out.update(dict.fromkeys(modules.top_names(target) - own, target))
        return out

    def tree_instance(self, name: str) -> str | None:
        """The class `C` that `name` holds an instance of, when every value the file assigns to `name` is
        `C(...)` of a class imported by name from a module of the tree (`corpus = Corpus()` after `from
        data_utils import Corpus`, a script's neighbour), or `m.C(...)` of a module of the tree (`m.C`).
        Memoised."""
        key = ("tree_instance", name)
        try:
            return self._memo[key]
        except KeyError:
            built = {_constructor(v) for v in self.index.assigned(name)}
            c = built.pop() if len(built) == 1 else None
            mod, _, cls = (c or "").rpartition(".")  # (`problem.MDE`: the module `problem` is what was imported)
            imported = mod or cls
            v = c if cls[:1].isupper() and imported in self.imported_names and self.is_tree_module(imported) else None
            self._memo[key] = v
            return v

    def tree_class_attr(self, cls_name: str, attr: str) -> tuple[str | None, frozenset | None, dict | None]:
        """(what the class's own methods assign to `self.<attr>`, the (method, parameter, as is) triples whose values
        reach it, method -> its positional parameters) of a class `cls_name` imported from another module of the
        tree (CrossFile.instance_attr, CrossFile.feeds). Memoised: asked of every `outputs.x` of an output class."""
        key = ("tree_class_attr", cls_name, attr)
        try:
            return self._memo[key]
        except KeyError:
            modules = self.modules
            assert modules is not None
            facts = modules.feeds(self, cls_name)
            v = self._memo[key] = (modules.instance_attr(self, cls_name, attr), facts[0].get(attr) if facts else None,
                                   facts[1] if facts else None)
            return v

    def built_with_device(self, name: str) -> bool:
        """Every value the file assigns to `name` is a call handed a `device=` that is not spelled as the CPU
        (`mde = problem.MDE(..., device=device)`): the object keeps its tensors on that device. Memoised."""
        key = ("built_with_device", name)
        try:
            return self._memo[key]
        except KeyError:
            vs = self.index.assigned(name)
            v = bool(vs) and all(isinstance(x, ast.Call) and any(
                k.arg == "device" and is_cpu_device(k.value) is not True for k in x.keywords) for x in vs)
            self._memo[key] = v
            return v

    # -- classes -------------------------------------------------------------------------------
    def is_module_class(self, node: ast.ClassDef) -> bool:
        """`node` subclasses nn.Module (by its bases' names, or a class of this module that does), or
        has a `forward`."""
        for b in node.bases:
            q = qualify(b, self.imports) or ""
            name = q or (b.id if isinstance(b, ast.Name) else getattr(b, "attr", ""))
            if name.startswith("torch.nn.") or name.endswith(_MODULE_BASE_SUFFIXES):
                return True
            if isinstance(b, ast.Name) and b.id in self.module_classes:
                return True
        return any(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward" for s in node.body)

    def class_attrs(self, cls: ast.ClassDef) -> dict[str, str | None]:
        """What `self.<attr>` holds in `cls`: the kind of what is assigned to it anywhere in the class
        (read without the methods' local names), `register_buffer` names as tensors. A fresh copy:
        the walk adds what it learns."""
        attrs = self._class_attrs.get(id(cls))
        if attrs is None:
            self._class_attrs[id(cls)] = {}  # (a base naming the class itself reads nothing)
            own = self.new_walk(TOP).read_class_attrs(cls)
            attrs = {}
            if self.modules is not None:  # what bases imported from other modules of the tree set
                attrs.update(self.modules.base_attrs(self, cls))
            for base in reversed(self.index.bases(cls)):  # what the module's own bases set (the first wins)
                attrs.update(self.class_attrs(base))
            attrs.update({k: v for k, v in own.items() if v is not None or k not in attrs})
            self._class_attrs[id(cls)] = attrs
        return dict(attrs)

    def class_attrs_so_far(self, cls: ast.ClassDef, attrs: dict[str, str | None]) -> None:
        """While `cls`'s attributes are being read (`class_attrs` answers {} meanwhile, against a cycle), let the
        walks that reading starts see those found so far."""
        if self._class_attrs.get(id(cls)) == {}:
            self._class_attrs[id(cls)] = dict(attrs)

    def class_bool_attrs(self, cls: ast.ClassDef) -> frozenset[str]:
        """`self.<attr>` that every assignment in `cls` (and its bases of the module) gives a boolean on its face
        (`self.nonzero = self.w_sum > 1e-10`): a mask, whoever reads it."""
        return self.per(cls, _bool_attrs)

    def close(self) -> None:
        """Drop the memos (they refer back to this object and to walks that do): the file's structures
        are freed as soon as its lint ends, not at the next cyclic garbage collection."""
        self._memo.clear()
        self._class_attrs.clear()
        self._call_names.clear()
        for w in self._walks:
            w.close()
        self._walks.clear()
        self.kinds.close()
        self.walker = None

    # -- rule-less walks of single functions (for the kind facts) ---------------------------------
    def new_walk(self, level: int) -> Walk:
        """A rule-less walk over this file whose parameters are learnt from `level` levels of callers."""
        assert self.walker is not None, "FileFacts made without a walker"
        w = self.walker(self, level)
        self._walks.append(w)
        return w


# Python numbers an array library names (`np.inf`, `np.pi`, `np.finfo(t).eps`): reading them computes no array
_LIBRARY_SCALARS = frozenset({"inf", "nan", "pi", "e", "euler_gamma", "finfo", "iinfo", "newaxis"})


def _other_array_names(file: FileFacts) -> frozenset[str]:
    """The module's names for array libraries other than torch (`np`, `pd`). scipy's classes
    (`OptimizeResult`, `Bounds`) hold results and settings, not arrays a function computes with."""
    return frozenset(n for n, q in file.imports.items() if q.split(".")[0] in OTHER_ARRAY_LIBRARIES
                     and not (q.startswith("scipy.") and n[:1].isupper()))


@functools.lru_cache(maxsize=1024)
def _beside(path: str, top: str) -> bool:
    """A module `top` sits beside the file (`data_utils.py` next to a script that imports `from data_utils
    import Corpus`; a folder of modules, `data/` of `from data.cifar import Cifar`), and is no library the
    inference knows."""
    if top in _KNOWN_LIBRARIES or path == "-":
        return False
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isfile(os.path.join(folder, top + ".py")):
        return True
    try:
        return any(n.endswith(".py") for n in os.listdir(os.path.join(folder, top)))
    except OSError:
        return False


# the names code conventionally gives these modules: where a module uses one it never binds and star-imports a
# module that is not found (a package without its files in the tree, a library's), the star import brought it
_CONVENTIONAL = {"torch": "torch", "np": "numpy", "math": "math", "nn": "torch.nn", "F": "torch.nn.functional"}


def _conventional_imports(tree: ast.Module, imports: dict[str, str], stars: tuple[tuple[int, str], ...]) -> None:
    """Bind the conventional module names (`torch`, `np`, `math`, `nn`, `F`) that the module uses as `name.attr`, never
    binds, and could only have from a `from m import *` of a module other than torch's (`from utils import *`
    of a script's helpers that import torch)."""
    if not any(level or not module.startswith("torch") for level, module in stars):
        return
    wanted = {n for n in _CONVENTIONAL if n not in imports}
    if not wanted:
        return
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if node.id in wanted:
                if not isinstance(node.ctx, ast.Load):
                    wanted.discard(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in wanted:
            used.add(node.value.id)
        elif isinstance(node, ast.arg) and node.arg in wanted:
            wanted.discard(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in wanted:
            wanted.discard(node.name)
    for name in used & wanted:
        imports[name] = _CONVENTIONAL[name]


def _own_package(path: str, module: str) -> bool:
    """`module` is of a package the file at `path` is inside (`torchattacks.attack` imported in
    `.../torchattacks/attacks/pgd.py`), not a library it only shares a prefix with (`torch`)."""
    top = module.split(".")[0]
    return top not in _KNOWN_LIBRARIES and top in _folders(path)


@functools.lru_cache(maxsize=256)
def _folders(path: str) -> frozenset[str]:
    """The names of the folders a file's path goes through (`torchsde`, `_core` of `.../torchsde/_core/x.py`)."""
    return frozenset(os.path.abspath(path).split(os.sep)[:-1])


def _bool_attrs(file: FileFacts, cls: ast.ClassDef) -> frozenset[str]:
    from syncscan.lint.tensors import boolean_on_its_face

    stores: dict[str, list] = {}
    for c in file.index.base_chain(cls):
        for attr, values in file.index.self_assigns(c).items():
            stores.setdefault(attr, []).extend(v for v, _ in values)
    return frozenset(a for a, vs in stores.items() if vs and all(boolean_on_its_face(v) for v in vs))


def _constructor(v: ast.AST) -> str | None:
    """`C` of `C(...)`, `m.C` of `m.C(...)` (whatever `C` is); else None."""
    if not isinstance(v, ast.Call):
        return None
    f = v.func
    if isinstance(f, ast.Name):
        return f.id
    return f"{f.value.id}.{f.attr}" if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
