"""Kinds across the modules of one tree (cross-file kinds): what a function or class that a file imports from
another module of the same tree gives (`from .misc import _error_ratio`, `from utils import
accuracy`, `from models.net import Net`).

The module is found on disk from the import and the importing file's place: relative imports from
the file's folder, absolute ones under the top package that holds the file (the folders above it
with an `__init__.py`) or beside a script. Its source is parsed on demand (files up to
`MAX_BYTES`, and only while the two files together stay under `MAX_TOTAL`); only its small answers
(a summary of what it defines, with lean signatures and return annotations; what a function returns
for given seeds; a constant's kind) are memoised for the process. A function or method whose return
annotation says what it gives is answered from the summary, with no walk. One parsed tree is held at
a time, only while the file that asked is linted (`release`), and is freed then without the cyclic
collector (FileFacts.close breaks the cycles): kept across files, the trees cost more memory than the
linted files' own and every garbage collection walked them again. Every file consulted is recorded in the asking file's `deps` (path, size, mtime) so a
cached result is linted again when one of them changes (runner).

Only returns cross files this way, from a level-0 walk of the function (its parameters known from
annotations and its own body, not from callers): what callers in other files pass is not read. Besides:
the attributes a base class of another module sets (`base_attrs`), the folder's callers of a top-level
function (`caller_kinds`) and the folder's method signatures (`interface_tensors`, read as text).
"""

from __future__ import annotations

import ast
import os
import re
from collections import OrderedDict
from typing import TYPE_CHECKING

from syncscan.lint.imports import import_map
from syncscan.lint.instances import attribute_feeds, positional_params
from syncscan.lint.interproc import names_device, settle_device
from syncscan.lint.tensors import CPU, HOST, LOADER, MODULE, OPTIMIZER, TENSOR, annotation_kind, is_cpu_device
from syncscan.lint.tree import param_defaults

# kinds that mean the same in another module (a record type does not)
_PORTABLE = (TENSOR, CPU, HOST, MODULE, LOADER, OPTIMIZER)
_ABSENT = "absent"  # a parameter a call leaves to its default (`caller_kinds`)

if TYPE_CHECKING:
    from syncscan.lint.facts import FileFacts

# Larger modules (hubs of a big package) are not read; a linted file reads a module only when the two together
# are at most MAX_TOTAL bytes: the module's tree is parsed while the file's facts are held, and the largest files
# of a tree, plus a module, would set the lint's memory peak.
MAX_BYTES = 200_000
MAX_TOTAL = 220_000
MAX_MODULES = 6  # other modules one file may read (the first ones its walk asks about: deterministic)
MAX_FILES = 1  # parsed modules held at once, and only while one file is linted (`release`)
MAX_HOPS = 3  # re-exports followed (`from .impl import f` in a package's __init__)
MAX_TEXTS = 1_000_000  # bytes of a folder's texts held while its methods' signatures are read (`_folder_texts`)
MAX_SIBLINGS = 64  # files of a folder searched for the callers of a function (`caller_kinds`)


class CrossFile:
    """Per-process memo of the other modules of the tree that linted files import from."""

    def __init__(self) -> None:
        self._facts: OrderedDict[str, FileFacts | None] = OrderedDict()
        self._answers: dict[tuple[str, str], tuple | None] = {}  # (module file, name) -> what _resolve found
        self._returns: dict[tuple, tuple | None] = {}  # (module file, function, seeds) -> (kind, tuple kinds)
        self._summaries: dict[str, _Summary | None] = {}
        self._methods: dict[tuple[str, str, str], tuple | None] = {}  # (module, class, method) -> (_sig, annotation)
        self._top: dict[str, str | None] = {}  # folder -> the folder above its top package (or None)
        self._stat: dict[str, tuple[int, int] | None] = {}
        self._paths: dict[tuple[str, int, str], str | None] = {}
        self._kinds: dict[tuple[str, str], str | None] = {}
        # (folder, its files' imported names): the last one
        self._folder: tuple[str, list] | None = None
        self._bases: dict[tuple[str, str], dict[str, str]] = {}  # (module file, "class " + name) -> its attributes
        # (folder, {method: {`position/name` -> files}}): the folder asked last
        self._interface: tuple[str, dict[str, dict[str, list[str]]]] | None = None
        self._texts: tuple[str, list[tuple[str, str]]] | None = None  # a folder's files' texts (`_folder_texts`)
        # (folder, {attribute: the files that store a tensor under it}) for the folder asked last (`tensor_attr`)
        self._attrs: tuple[str, dict[str, list[str]]] | None = None
        self._callers: dict[tuple[str, str], tuple[dict[str, str], tuple[str, ...]]] = {}
        # modules whose walk is under way (`_read_callers`): not dropped by the reads their calls back make
        self._pinned: set[str] = set()
        # reads `facts` refused while a module was pinned: an answer computed across one is not kept for the
        # process, or the next file would get it whatever its own reads (`_kept`)
        self.refused = 0
        self._defined: dict[str, frozenset[str]] = {}  # module file -> its top-level names (`top_names`)
        self._top_imports: dict[str, dict[str, str]] = {}  # module file -> what its top-level imports bind
        self._star_files: dict[str, frozenset[str]] = {}  # module file -> the files its `top_imports` read
        self._defs: dict[str, frozenset[str]] = {}  # module file -> the names it defines with `def` (`method_names`)
        self._top_defs: dict[str, frozenset[str]] = {}  # module file -> its top-level `def` and `class` names
        self._torch_values: dict[str, dict[str, bool]] = {}  # module file -> its assigned names -> may be torch values
        self._bases_feeds: dict[tuple[str, str], tuple | None] = {}  # (module file, "feeds " + class) -> `feeds`
        self._words: dict[tuple[str, tuple[str, ...]], bool] = {}  # (module file, words) -> one in its text (`_says`)
        # folder -> {parameter name: how often annotated a sequence, a tensor or number, else} (`annotated_sequence`)
        self._vocab: dict[str, dict[str, tuple[int, int, int]]] = {}
        self._seq_names: dict[str, frozenset[str]] = {}  # folder -> names some annotation there calls a sequence

    # -- finding modules -------------------------------------------------------------------------
    def _package_base(self, folder: str) -> str | None:
        """The folder that holds the top package around `folder` (None when `folder` is no package)."""
        if folder in self._top:
            return self._top[folder]
        d, base = folder, None
        while os.path.isfile(os.path.join(d, "__init__.py")):
            base = os.path.dirname(d)
            if base == d:
                break
            d = base
        self._top[folder] = base
        return base

    def module_path(self, importer: str, level: int, module: str) -> str | None:
        """The file of `module` imported from the file `importer` (`level` dots before it)."""
        folder = os.path.dirname(os.path.abspath(importer))
        key = (folder, level, module)
        if key not in self._paths:
            self._paths[key] = self._find(folder, level, module)
        found = self._paths[key]
        if found is None and not level and module and self._says(importer, ("sys.path",)):
            # a script that puts a folder above it on its path (`sys.path.append(os.path.join(here, ".."))`):
            # its `from utils import *` is of the folders above, two at most
            up = (os.path.dirname(folder), -1, module)
            if up not in self._paths:
                self._paths[up] = next((f for f in (self._find(os.path.dirname(folder), 0, module),
                                                    self._find(os.path.dirname(os.path.dirname(folder)), 0, module))
                                        if f is not None), None)
            found = self._paths[up]
        return found

    def _find(self, folder: str, level: int, module: str) -> str | None:
        parts = [p for p in module.split(".") if p] if module else []
        if level:
            for _ in range(level - 1):
                folder = os.path.dirname(folder)
            bases = [folder]
        else:
            bases = [b for b in (self._package_base(folder), folder, _namespace_base(folder, parts[:1])) if b]
        for base in dict.fromkeys(bases):
            stem = os.path.join(base, *parts) if parts else base
            for cand in (stem + ".py", os.path.join(stem, "__init__.py")):
                if parts and os.path.isfile(cand):
                    return cand
            if not parts and os.path.isfile(os.path.join(stem, "__init__.py")):
                return os.path.join(stem, "__init__.py")
        return None

    def facts(self, path: str) -> FileFacts | None:
        if path in self._facts:
            self._facts.move_to_end(path)
            return self._facts[path]
        from syncscan.lint.walk import file_facts

        if self._pinned and sum(1 for p in self._facts if p in self._pinned and self._facts[p] is not None) >= MAX_FILES:
            self.refused += 1
            return None  # (a module's walk is under way: no second parsed module beside it, not memoised)
        out = None
        try:
            if os.path.getsize(path) <= MAX_BYTES:
                with open(path, encoding="utf-8") as fh:
                    source = fh.read()
                # (no project of its own: what it imports is not followed further, one hop only)
                out = file_facts(path, source, ast.parse(source, filename=path), None)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
            out = None
        self._facts[path] = out
        if len(self._facts) > MAX_FILES:
            old = next((p for p in self._facts if p not in self._pinned and p != path), None)
            if old is not None:
                _close(self._facts.pop(old))
        return out

    def release(self) -> None:
        """Drop the parsed modules (when the lint of a file ends): only the small answers stay for the
        process. Kept across files, their trees cost more memory than the linted file's own and made
        each garbage collection walk them again."""
        for target in self._facts.values():
            _close(target)
        self._facts.clear()

    def summary(self, path: str) -> _Summary | None:
        """What a module defines at its top level (kept for the process: small), from one parse."""
        if path not in self._summaries:
            before = self.refused
            target = self.facts(path)
            return self._kept(self._summaries, path, before, _Summary(target) if target is not None else None)
        return self._summaries[path]

    def _kept(self, table: dict, key, before: int, value):
        """`value`, memoised in `table` under `key` unless a read was refused while it was computed (then a
        cycle's placeholder goes too): what the process keeps must not depend on which file asked first."""
        if self.refused == before:
            table[key] = value
        else:
            table.pop(key, None)
        return value

    def stat(self, path: str) -> tuple[int, int] | None:
        """(size, mtime_ns) of a consulted file, as first seen by this process."""
        if path not in self._stat:
            try:
                st = os.stat(path)
                self._stat[path] = (st.st_size, st.st_mtime_ns)
            except OSError:
                self._stat[path] = None
        return self._stat[path]

    def size(self, path: str) -> int:
        """A consulted file's size, as first seen by this process (0 when it cannot be read)."""
        st = self.stat(path)
        return st[0] if st is not None else 0

    # -- what an imported name gives -----------------------------------------------------------
    def imported(self, file: FileFacts | _Summary, name: str) -> tuple[str, str] | None:
        """(module file, name there) for a name `file` imports from a module of this tree."""
        src = file.from_imports().get(name) if isinstance(file, _Summary) else file.index.from_imports().get(name)
        if src is None:
            # (`from .utils import *`: the star module that defines the name, FileFacts.star_names)
            path = file.star_names.get(name) if not isinstance(file, _Summary) else None
            return (path, name) if path is not None else None
        level, module, attr = src
        if not level and not module:
            return None  # `import x`: a module, not a name one defines
        path = self.module_path(file.path, level, module)
        if path is None or os.path.abspath(path) == os.path.abspath(file.path):
            return None
        return path, attr

    def function_def(self, file: FileFacts, name: str) -> tuple[FileFacts, ast.FunctionDef] | None:
        """(its module's facts, the definition) of a top-level function that `file` imports by name from another
        module of the tree, within the file's budget of modules; re-exports followed, the files read recorded in
        `deps`. (Callers pick the names first, `imported_from_saying`: each is a parse.)"""
        where = self.imported(file, name)
        if where is None or not _within_budget(file, where[0]):
            return None
        found = self._resolve(where[0], where[1], 0)
        if found is None or found[2] != "func" or not _within_budget(file, found[0]):
            return None
        file.deps.update(found[3])
        target = self.facts(found[0])
        fn = target.index.funcs.get(found[1]) if target is not None else None
        return (target, fn) if target is not None and isinstance(fn, ast.FunctionDef) else None

    def imported_from_saying(self, file: FileFacts, words: tuple[str, ...],
                             names: frozenset[str] | None = None) -> frozenset[str]:
        """The names `file` imports by name and calls (`name(` in its text), or of `names` where given, from modules of
        the tree whose text holds one of `words`: each module resolved and read once (not each name); a module whose
        imports the file only names (classes, constants) is not resolved at all."""
        by_module: dict[tuple[int, str], list[str]] = {}
        text = file.source
        for n, (level, module, _) in file.index.from_imports().items():
            if (level or module) and n in file.imported_names and (n in names if names is not None else f"{n}(" in text):
                by_module.setdefault((level, module), []).append(n)
        out: set[str] = set()
        for (level, module), names in by_module.items():
            path = self.module_path(file.path, level, module)
            if path is not None and self._says(path, words):
                out.update(names)
        return frozenset(out)

    def _says(self, path: str, words: tuple[str, ...]) -> bool:
        """The module's text holds one of `words` (memoised for the process: small)."""
        key = (path, words)
        got = self._words.get(key)
        if got is None:
            got = self._words[key] = any(w in _text(path) for w in words)
        return got

    def top_names(self, path: str) -> frozenset[str]:
        """The names a module defines at its top level, from its text (kept for the process: small)."""
        got = self._defined.get(path)
        if got is None:
            got = self._defined[path] = frozenset(_TOP_NAME.findall(_text(path)))
        return got

    def top_imports(self, path: str) -> dict[str, str]:
        """What a module's own top-level `import torch` / `from torch import nn` lines bind (import_map's answer,
        from those lines of its text only: kept for the process, small), its top-level aliases of them
        (`LongTensor = torch.LongTensor`), and what its own `from m import *` of modules of the tree bring (a
        package's `__init__` that star-imports its `utils/torch.py`). A `from m import *` of it passes them on."""
        got = self._top_imports.get(path)
        if got is None:
            self._top_imports[path] = {}  # (a cycle of star imports answers what is known so far)
            text = _text(path)
            lines = "\n".join(m.group(0) for m in _TOP_IMPORT.finditer(text))
            try:
                got = import_map(ast.parse(lines))
            except (SyntaxError, ValueError, RecursionError):
                got = {}
            files = {path}
            if got:
                for name, d in _TOP_ALIAS.findall(text):
                    root = d.split(".", 1)[0]
                    if name not in got and root in got and got[root].split(".", 1)[0] in _ALIASED_ROOTS:
                        got[name] = got[root] + d[len(root):]
            for dots, module in _STAR_LINE.findall(text):
                target = self.module_path(path, len(dots), module) if dots or module else None
                if target is not None and os.path.abspath(target) != os.path.abspath(path):
                    for name, q in self.top_imports(target).items():
                        got.setdefault(name, q)
                    files |= self._star_files.get(target, {target})
            self._top_imports[path] = got
            self._star_files[path] = frozenset(files)
        return got

    def top_defs(self, path: str) -> frozenset[str]:
        """The names a module's text defines at its top level with `def` or `class` (kept for the process: small)."""
        got = self._top_defs.get(path)
        if got is None:
            got = self._top_defs[path] = frozenset(_TOP_DEF_OR_CLASS.findall(_text(path)))
        return got

    def _torch_value(self, path: str, name: str) -> bool:
        """Whether a top-level assignment of `name` in the module's text may make a torch value: its line names
        torch, a tensor or a device (`TAB = Tableau(alpha=torch.tensor(...))`) or opens a call it closes on a later
        line (`_TABLEAU = _ButcherTableau(`), or it is not assigned there at all (re-exported: followed as before).
        The module's assignments are read once (kept for the process: small)."""
        got = self._torch_values.get(path)
        if got is None:
            got = self._torch_values[path] = {}
            for assigned, rhs in _TOP_ASSIGN.findall(_text(path)):
                got[assigned] = got.get(assigned, False) or bool(_TORCH_WORD.search(rhs)) \
                    or rhs.count("(") > rhs.count(")")  # (or a call over lines)
        return got.get(name, True)

    def method_names(self, path: str) -> frozenset[str]:
        """The names a module's text defines with `def` (functions and methods alike; kept for the process: small)."""
        got = self._defs.get(path)
        if got is None:
            got = self._defs[path] = frozenset(_ANY_DEF.findall(_text(path)))
        return got

    def star_files(self, path: str) -> frozenset[str]:
        """The modules `top_imports(path)` read: the module and those its star imports reach."""
        self.top_imports(path)
        return self._star_files.get(path, frozenset({path}))

    def module_alias(self, file: FileFacts, name: str) -> str | None:
        """The module file a name stands for (`from . import misc`, `import pkg.misc as misc`)."""
        src = file.index.from_imports().get(name)
        if src is not None:
            level, module, attr = src
            return self.module_path(file.path, level, f"{module}.{attr}" if module else attr)
        return None

    def call(self, walk, call: ast.Call) -> tuple | None:
        """What a call of a function or class of another module of the tree gives: (kind, tuple kinds),
        or None when it is not one or the answer is unknown. `walk` (walk.Walk) is where the call is: the
        kinds of its arguments seed the callee's walk where they say more than its parameters can (host
        tensors, a device in place of a `device="cpu"` default). Records the files read in `deps`."""
        file = walk.file
        f = call.func
        if isinstance(f, ast.Name):
            where = self.imported(file, f.id)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            mod = self.module_alias(file, f.value.id)
            where = (mod, f.attr) if mod else None
            if where is None and (cls := file.tree_instance(f.value.id)) is not None:
                return self._method(walk, call, cls, f.attr)
        else:
            where = None
        found = self._resolve(where[0], where[1], 0) if where is not None and _within_budget(file, where[0]) \
            else None
        if found is None:
            return None
        path, name, what, deps, args = found
        file.deps.update(deps)
        if what != "func":
            return (MODULE, None) if what == "module class" else None
        seeds = walk.call_seeds(call, _Signature(args), None)
        built = not seeds and _host_only(walk, call)

        def function():
            target = self.facts(path)
            fn = target.index.funcs.get(name) if target is not None else None
            return (target, fn, None) if fn is not None else None

        return self._returned((path, name, tuple(sorted(seeds.items())), built), seeds, function, built=built)

    def _returned(self, key: tuple, seeds: dict, find, ann: tuple | None = None, built: bool = False) -> tuple | None:
        """What the function `find()` names ((its module's facts, the function, its class), or None) returns when
        these parameters hold host tensors: (kind, tuple kinds), memoised under `key` for the process. A return
        annotation answers from the module's summary, without a parse or a walk: the walk would only say
        which of a `-> Tensor` function's tensors are host tensors, and reading the module costs more time and
        memory than that is worth (most calls that cross files are of annotated library helpers). Except for a
        call handed only Python values (`built`: `haar_kernel(4)`, `prewitt_kernel()`): what such a `-> Tensor`
        helper gives, it makes itself, and its factories say where (a kernel built on the host, then copied)."""
        if key not in self._returns:
            before = self.refused
            ann = ann or self._annotated(key[0], key[1])
            if ann is not None and (not seeds and not built or not _tensorish(ann)):
                return self._kept(self._returns, key, before, ann)
            self._returns[key] = None  # (a cycle answers unknown)
            got = find()
            r = None
            if got is not None:
                target, fn, owner = got
                r = target.kinds.returned_seeded(fn, owner, seeds) if seeds else None
                if r is None:
                    r = target.kinds.returned(fn, owner, 0)
            return self._kept(self._returns, key, before, (r.kind, r.elts)
                              if r is not None and (r.kind is not None or r.elts is not None) else None)
        return self._returns[key]

    def _annotated(self, path: str, name: str) -> tuple | None:
        summary = self.summary(path)
        return summary.returns.get(name) if summary is not None else None

    def caller_kinds(self, file: FileFacts, fn: ast.FunctionDef) -> dict[str, str]:
        """parameter -> kind that every call of `fn` (a top-level function of `file`) passes from the other modules
        of its folder that import it by name (`from .common import update_tr_radius`), read from level-0 walks of
        the calling functions; {} when no such module calls it, one calls it from module level or hands it
        around, or they are more than the file's budget of modules. Callers outside the tree (a library's
        users) may pass other kinds: the caller uses the answer as a probable kind. Records the files in `deps`."""
        here = os.path.abspath(file.path)
        key = (here, fn.name)
        if key not in self._callers:
            before = self.refused
            self._callers[key] = ({}, ())  # (a cycle answers nothing)
            got, read = self._kept(self._callers, key, before, self._read_callers(file, here, fn))
        else:
            got, read = self._callers[key]
        if any(not _within_budget(file, path) for path in read):
            return {}
        return got

    def _read_callers(self, file: FileFacts, here: str, fn: ast.FunctionDef) -> tuple[dict[str, str], tuple[str, ...]]:
        size = len(file.source)
        stem = os.path.splitext(os.path.basename(here))[0]
        # (`.fn`: called or handed around through the module's name, `_attr_calls` tells which)
        paths = self._importers(here, stem, {fn.name}, [f".{fn.name}"])
        if not paths or len(paths) > MAX_MODULES or any(size + self.size(path) > MAX_TOTAL for path in paths):
            return {}, ()
        a = fn.args
        params = [p.arg for p in a.posonlyargs + a.args]
        seen: dict[str, set] = {p.arg: set() for p in a.posonlyargs + a.args + a.kwonlyargs}
        read = []
        for path in paths:
            target = self.facts(path)
            if target is None:
                return {}, ()
            self._pinned.add(path)
            try:
                if not self._read_caller(file, here, fn, stem, path, target, params, seen, read):
                    return {}, ()
            finally:
                self._pinned.discard(path)
        if not read:
            return {}, ()
        for ks in seen.values():
            settle_device(ks)
            if TENSOR in ks and len(ks) == 2 and None in ks:
                # a tensor from some callers, a value they do not show from the others (handed an argument, not
                # a default): a tensor is what the function is written for (`strong_wolfe(..., f, g)` of a
                # closure's loss in one solver, of a value used as a tensor in the others)
                ks.discard(None)
        out = {p: next(iter(ks)) for p, ks in seen.items() if len(ks) == 1 and None not in ks and _ABSENT not in ks}
        return out, tuple(read)

    def called_from_folder(self, path: str, text: str) -> bool:
        """Whether another module of the file's folder imports one of its top-level functions, by name (`from
        .interp import linear_interp`) or through the module (`from . import interp`, then `interp.linear_interp(`).
        A module that never says `torch` is handed tensors there all the same (`caller_kinds`), so the runner's
        prefilter of words does not skip it. Read from the folder's listing and texts, nothing parsed."""
        funcs = set(_TOP_DEF.findall(text))
        if not funcs:
            return False
        here = os.path.abspath(path)
        return bool(self._importers(here, os.path.splitext(os.path.basename(here))[0], funcs, [f".{f}(" for f in funcs]))

    def _importers(self, here: str, stem: str, funcs: set[str], needles: list[str]) -> list[str]:
        """The other modules of `here`'s folder that import one of `funcs` from it by name, then (sorted) those that
        import the module itself by name (`from . import misc`) and whose text holds one of the `needles`
        (`.f(`): from the folder's listing and texts, nothing parsed."""
        folder = os.path.dirname(here)
        listed = [(path, names) for path, names in self._folder_imports(folder) if path != here]
        paths = [path for path, names in listed if any(f in names and stem in names[f] for f in funcs)]
        through = {path for path, names in listed if stem in names and path not in paths}
        if through:
            through = {path for path, text in self._folder_texts(folder)
                       if path in through and any(n in text for n in needles)}
        return paths + sorted(through)

    def _read_caller(self, file: FileFacts, here: str, fn: ast.FunctionDef, stem: str, path: str,
                     target: FileFacts, params: list[str], seen: dict[str, set], read: list[str]) -> bool:
        """Add to `seen` what the calls of `fn` in the module `path` (its facts `target`) pass, by name or through the
        module's name; False where that module says nothing for certain (it hands `fn` around, or calls it from module
        level or open-endedly). Its walks answer its calls back into `file` from `file`'s facts (`Walk.back`)."""
        imported = target.index.from_imports().items()
        back = {n: attr for n, (level, module, attr) in imported
                if (level or module) and self.module_path(path, level, module) == here}
        local = [n for n, attr in back.items() if attr == fn.name]
        aliases = frozenset((n, fn.name) for n, (level, module, attr) in imported if attr == stem
                            and self.module_path(path, level, f"{module}.{attr}" if module else attr) == here)
        calls = [c for name in local for c in target.index.calls().get(("n", name), ())]
        if aliases:
            got = _attr_calls(target.tree, aliases)
            if got is None:
                return False  # `misc.f` handed around
            calls += got
        if any(target.index.escaped(("n", name)) for name in local):
            return False
        if not calls:
            return True
        read.append(path)
        walks: dict = {}  # id(function) -> its walk: one walk per calling function, however many calls it makes
        for call, efn, ecls in calls:
            if efn is None:
                return False
            w = walks.get(id(efn))
            if w is None:
                w = walks[id(efn)] = target.new_walk(0)
                w.record_names = frozenset(local)
                w.record_attrs = aliases
                w.back = (file, back)
                w.run_function(efn, ecls)
            rec = w.calls.get(id(call))
            if rec is None or rec[3] and len(rec[1]) < len(params):
                return False
            _, pos, kws, _ = rec
            for i, p in enumerate(params):
                seen[p].add(pos[i] if i < len(pos) else kws.get(p, _ABSENT))
            for p in seen.keys() - set(params):
                seen[p].add(kws.get(p, _ABSENT))
        return True

    def interface_tensors(self, file: FileFacts, method: str, wanted: list[str]) -> set[str]:
        """Those of the `wanted` parameters (`position/name`, the receiver left out) of `file`'s method named `method`
        that two or more other modules of its folder take, in a method of the same name at the same position and
        under the same name, annotated to be or hold a tensor (`timestep: int | torch.Tensor`): the classes of one
        folder that define a method of one name and signature are used in place of one another (schedulers,
        samplers, metrics), so what their callers hand one is what they hand the others. Read from the folder's
        text (the listing `caller_kinds` reads), no module parsed; the two modules that answer are recorded in
        `text_deps` (read as text: outside the budget of modules parsed)."""
        here = os.path.abspath(file.path)
        folder = os.path.dirname(here)
        if self._interface is None or self._interface[0] != folder:
            self._interface = (folder, {})
        table = self._interface[1].get(method)
        if table is None:  # (read per method asked: most of a folder's methods never are)
            table = self._interface[1][method] = {}
            for path, text in self._folder_texts(folder):
                for key in _annotated_tensors(text, method):
                    table.setdefault(key, []).append(path)
        out = set()
        for w in wanted:
            paths = [p for p in table.get(w, ()) if p != here][:2]
            if len(paths) == 2:
                file.text_deps.update(paths)
                out.add(w)
        return out

    def tensor_attr(self, file: FileFacts, attr: str) -> bool:
        """The classes of `file`'s folder keep a tensor under `self.<attr>` (an `nn.Parameter`, a buffer, a torch
        factory's result) and never a Python value (a number, a string, a display, True / False): `layer.mask`
        with `layer` one of the folder's layers is probably that tensor. Read from the folder's text, no module
        parsed; the files that store it are recorded in `text_deps`."""
        folder = os.path.dirname(os.path.abspath(file.path))
        if self._attrs is None or self._attrs[0] != folder:
            tensor: dict[str, list[str]] = {}
            host: set[str] = set()
            for path, text in self._folder_texts(folder, hold=False):
                if "self." not in text:
                    continue
                for m in _TENSOR_STORE.finditer(text):
                    tensor.setdefault(m.group(1) or m.group(2) or m.group(3), []).append(path)
                host.update(m.group(1) for m in _HOST_STORE.finditer(text))
            self._attrs = (folder, {a: paths for a, paths in tensor.items() if a not in host})
        paths = self._attrs[1].get(attr)
        if paths:
            file.text_deps.update(paths[:2])
        return bool(paths)

    def annotated_sequence(self, file: FileFacts, name: str) -> bool:
        """The package around `file` annotates parameters called `name` as a Python sequence (`idxs: Sequence[int]`,
        `list`, `tuple[int, ...]`) two or more times, at least as often as anything else, and never as a tensor or
        a number: a value of that name whose kind nothing else says (`for dep, idxs in group:`) is probably such a
        list. A library's signatures say what its own names hold where its loops do not. Read from the texts of
        the file's folder and of the folders above it up to the top package (four at most), no module parsed:
        first only which names some annotation calls a sequence (one scan per folder), then, for a name that is
        one of those, every signature of those folders; both memoised per folder."""
        folders = []
        d = os.path.dirname(os.path.abspath(file.path))
        for _ in range(4):
            folders.append(d)
            up = os.path.dirname(d)
            if up == d or not os.path.isfile(os.path.join(d, "__init__.py")):
                break
            d = up
        for d in folders:
            if d not in self._seq_names:
                self._seq_names[d] = _sequence_names(text for _, text in self._folder_texts(d, hold=False))
        if not any(name in self._seq_names[d] for d in folders):
            return False
        seq = typed = other = 0
        for d in folders:
            v = self._vocab.get(d)
            if v is None:
                v = self._vocab[d] = _signature_sequences(text for _, text in self._folder_texts(d, hold=False))
            s, t, o = v.get(name, (0, 0, 0))
            seq, typed, other = seq + s, typed + t, other + o
        return seq >= 2 and not typed and seq >= other

    def _folder_texts(self, folder: str, hold: bool = True):
        """(path, text) of the folder's files that `_folder_imports` lists: held for the folder asked last while
        they are at most MAX_TEXTS bytes together (one read for every method asked of a folder), else read again
        for each. `hold=False` (a one-pass reader, `tensor_attr`) keeps none of them."""
        if self._texts is not None and self._texts[0] == folder:
            yield from self._texts[1]
            return
        held: list[tuple[str, str]] = []
        total = 0
        for path, _ in self._folder_imports(folder):
            try:
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError):
                continue
            total += len(text)
            if hold and total <= MAX_TEXTS:
                held.append((path, text))
            yield path, text
        if hold:
            self._texts = (folder, held) if total <= MAX_TEXTS else None

    def _folder_imports(self, folder: str) -> list[tuple[str, dict[str, str]]]:
        """The Python files of `folder` (up to MAX_SIBLINGS, of at most MAX_BYTES) with the names their
        `from ... import` statements bring in (name -> the module text it comes from), for the folder asked last
        (files are linted folder by folder). Which module a name really comes from is read from the parsed file
        later; this only keeps files that cannot call the function from being parsed."""
        if self._folder is None or self._folder[0] != folder:
            out = []
            try:
                names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))
            except OSError:
                names = []
            for n in names[:MAX_SIBLINGS]:
                path = os.path.join(folder, n)
                try:
                    if os.path.isfile(path) and os.path.getsize(path) <= MAX_BYTES:
                        with open(path, encoding="utf-8") as fh:
                            text = fh.read()
                        out.append((path, {name: m.group(1) for m in _FROM_IMPORT.finditer(text)
                                           for name in _IMPORTED_NAME.findall(m.group(2))}))
                except (OSError, UnicodeDecodeError):
                    continue
            self._folder = (folder, out)
        return self._folder[1]

    def _method(self, walk, call: ast.Call, cls_name: str, meth: str) -> tuple | None:
        """What `obj.meth(...)` gives, `obj` an instance of the class `cls_name` that `walk`'s file imports from
        another module of the tree: a walk of the method (or of a base's there) in that module. The method's
        parameters come from the module's summary, so a memoised answer costs no parse."""
        found = self._tree_class(walk.file, cls_name)
        if found is None:
            return None
        path, name = found
        mkey = (path, name, meth)

        def method():
            target = self.facts(path)
            cls = target.index.classes.get(name) if target is not None else None
            m = target.index.method(cls, meth) if cls is not None else None
            return (target, m[0], m[1]) if m is not None else None

        if mkey not in self._methods:  # (parsed once per method asked: its parameters and annotation stay)
            before = self.refused
            got = method()
            facts = self._kept(self._methods, mkey, before,
                               (_sig(got[1].args), _annotated(got[0], got[1])) if got is not None else None)
        else:
            facts = self._methods[mkey]
        if facts is None:
            return None
        sig, ann = facts
        seeds = walk.call_seeds(call, _Signature(sig), True)
        return self._returned((path, f"{name}.{meth}", tuple(sorted(seeds.items()))), seeds, method, ann)

    def instance_attr(self, file: FileFacts, cls_name: str, attr: str) -> str | None:
        """What `obj.attr` holds, `obj` an instance of the class `cls_name` that `file` imports from another module of
        the tree (`dataset = Cifar(...)`, then `for batch in dataset.train:`): what the class's own methods assign to
        `self.attr` there (a DataLoader, a model, a tensor, a host value), memoised per class and attribute."""
        found = self._tree_class(file, cls_name)
        if found is None:
            return None
        path, name = found
        key = (path, "class " + name)
        if key not in self._bases:  # (the class's attributes, as `base_attrs` keeps them)
            before = self.refused
            self._bases[key] = {}  # (a cycle answers nothing)
            target = self.facts(path)
            c = target.index.classes.get(name) if target is not None else None
            self._kept(self._bases, key, before, {a: k for a, k in target.class_attrs(c).items() if k in _PORTABLE}
                       if c is not None and target is not None else {})
        return self._bases[key].get(attr)

    def class_home(self, file: FileFacts, cls_name: str) -> tuple[FileFacts, ast.ClassDef] | None:
        """(the module's facts, the class) of a class `file` imports from another module of the tree."""
        found = self._tree_class(file, cls_name)
        target = self.facts(found[0]) if found is not None else None
        c = target.index.classes.get(found[1]) if target is not None and found is not None else None
        return (target, c) if target is not None and c is not None else None

    def feeds(self, file: FileFacts, cls_name: str) -> tuple[dict, dict] | None:
        """(attribute -> the (method, parameter, as is) triples whose values reach `self.<attribute>`
        (instances.attribute_feeds), method -> its positional parameters) of a class that `file` imports from another
        module of the tree and that is no nn.Module; memoised per class for the process (small: no parsed module)."""
        found = self._tree_class(file, cls_name)
        if found is None:
            return None
        key = (found[0], "feeds " + found[1])
        if key not in self._bases_feeds:
            before = self.refused
            self._bases_feeds[key] = None  # (a cycle answers nothing)
            target = self.facts(found[0])
            c = target.index.classes.get(found[1]) if target is not None else None
            got = None
            if target is not None and c is not None and not target.is_module_class(c):
                fed = attribute_feeds(target.src, c)
                params = {m: positional_params(fn[0]) for m in {m for triples in fed.values() for m, _, _ in triples}
                          if (fn := target.index.method(c, m)) is not None}
                got = (fed, params)
            return self._kept(self._bases_feeds, key, before, got)
        return self._bases_feeds[key]

    def _tree_class(self, file: FileFacts, cls_name: str) -> tuple[str, str] | None:
        """(module file, name there) of the class `cls_name` that `file` imports from another module of the tree, by
        name or as `m.C` of a module `m` of it, following re-exports; the files read are recorded in `deps`."""
        head, _, tail = cls_name.rpartition(".")
        if head:  # `m.C`: the class `C` of the module `m`
            mod = self.module_alias(file, head)
            where = (mod, tail) if mod else None
        else:
            where = self.imported(file, cls_name)
        found = self._resolve(where[0], where[1], 0) if where is not None and _within_budget(file, where[0]) \
            else None
        if found is None or found[2] not in ("class", "module class"):
            return None
        file.deps.update(found[3])
        return found[0], found[1]

    def imported_method(self, walk, call: ast.Call, cls_name: str, meth: str) -> tuple | None:
        """What `meth` of the class `cls_name` (imported by name from another module of the tree) gives for `call`
        (`super().meth(...)` in a subclass): `_method`'s walk of it there."""
        return self._method(walk, call, cls_name, meth)

    def base_method(self, walk, call: ast.Call, cls: ast.ClassDef, meth: str) -> tuple | None:
        """What `self.meth(...)` gives in `cls` when neither it nor its bases of the module define `meth` or assign
        `self.meth`, and a base it (or they) imports by name from another module of its folder does
        (`self.get_boundaries_intersections(p, z, r)` in a subclass of `.base`'s `BaseQuadraticSubproblem`): a walk of
        that method there, as `obj.meth(...)` of an instance of an imported class is read (`_method`)."""
        file = walk.file
        chain, bases = file.per(cls, self._folder_bases)
        if not bases or any(file.index.self_assigns(c).get(meth) for c in chain):
            return None  # (`self.meth = fn`: an attribute, not the base's method)
        for b in bases:
            got = self._method(walk, call, b, meth)
            if got is not None:
                return got
        return None

    def base_method_def(self, file: FileFacts, cls: ast.ClassDef, meth: str) -> tuple[FileFacts, ast.FunctionDef] | None:
        """(its module's facts, the definition) of the method `meth` that `self.meth(...)` in `cls` runs when neither
        `cls` nor its bases of the module define it and a base imported from another module of its folder does (as
        `base_method` finds it); the files read recorded in `deps`."""
        chain, bases = file.per(cls, self._folder_bases)
        if not bases or any(file.index.self_assigns(c).get(meth) for c in chain):
            return None
        for b in bases:
            where = self.imported(file, b)
            found = self._resolve(where[0], where[1], 0) if where is not None and _within_budget(file, where[0]) \
                else None
            if found is None or found[2] not in ("class", "module class"):
                continue
            file.deps.update(found[3])
            target = self.facts(found[0])
            c = target.index.classes.get(found[1]) if target is not None else None
            m = target.index.method(c, meth) if c is not None else None
            if m is not None:
                return (target, m[0]) if isinstance(m[0], ast.FunctionDef) else None
        return None

    def _folder_bases(self, file: FileFacts, cls: ast.ClassDef) -> tuple[list[ast.ClassDef], list[str]]:
        """(`cls` and its bases of the module, the names of the bases they import from other modules of the folder)."""
        index = file.index
        folder = os.path.dirname(os.path.abspath(file.path))
        chain = index.base_chain(cls)
        names = [b.id for c in chain for b in c.bases if isinstance(b, ast.Name) and b.id not in index.classes
                 and (where := self.imported(file, b.id)) is not None
                 and os.path.dirname(os.path.abspath(where[0])) == folder]
        return chain, names

    def base_attrs(self, file: FileFacts, cls: ast.ClassDef) -> dict[str, str]:
        """What `self.<attr>` holds (tensors, host tensors, host values, modules) in the bases of `cls` that `file`
        imports by name from other modules of its folder (`class CGSteihaug(BaseQuadraticSubproblem)` after
        `from .base import BaseQuadraticSubproblem`): their class's attributes and properties there (its own
        module's bases included, not further modules'), the last base first as Python's lookup order wants the
        first to win. Records the files read in `deps`."""
        out: dict[str, str] = {}
        folder = os.path.dirname(os.path.abspath(file.path))
        for b in reversed(cls.bases):
            if not isinstance(b, ast.Name) or b.id in file.index.classes:
                continue
            where = self.imported(file, b.id)
            # (bases of the file's own folder only: a package's local base class, whose subclasses read what it sets.
            # Bases from other packages are many, large and read for little: transformers' model files each
            # subclass other models' classes)
            if where is None or os.path.dirname(os.path.abspath(where[0])) != folder:
                continue
            found = self._resolve(where[0], where[1], 0) if _within_budget(file, where[0]) else None
            if found is None or found[2] not in ("class", "module class") \
                    or os.path.dirname(os.path.abspath(found[0])) != folder:
                continue
            path, name, _, deps, _ = found
            file.deps.update(deps)
            key = (path, "class " + name)
            if key not in self._bases:
                before = self.refused
                self._bases[key] = {}  # (a cycle of bases answers nothing)
                target = self.facts(path)
                c = target.index.classes.get(name) if target is not None else None
                out.update(self._kept(self._bases, key, before, {
                    a: k for a, k in target.class_attrs(c).items() if k in _PORTABLE} if c is not None else {}))
            else:
                out.update(self._bases[key])
        return out

    def constant(self, file: FileFacts, name: str) -> str | None:
        """The kind of a module-level value another module of the tree defines and `file` imports
        (`from .dopri5 import _TABLEAU`), from its last assignment there."""
        if self.module_alias(file, name) is not None:
            return None  # `from pkg import misc`: a module, not a value
        where = self.imported(file, name)
        if where is not None and (where[1] in self.top_defs(where[0]) or not self._torch_value(where[0], where[1])):
            # `class Dopri5Solver` / `def f` there, or `EPS = 1e-6` / `NAMES = {...}`: not a torch value, known
            # from the text without a parse (unknown, as without cross-file kinds)
            return None
        # (values have a budget of their own: a module-level table of imported names must not use up the reads
        # that the functions' calls need)
        found = self._resolve(where[0], where[1], 0) \
            if where is not None and _within_budget(file, where[0], values=True) else None
        if found is None or found[2] != "constant":
            return None
        path, defined, _, deps, _ = found
        file.value_deps.update(deps)
        key = (path, "=" + defined)
        if key not in self._kinds:
            before = self.refused
            self._kinds[key] = None  # (a cycle answers unknown)
            target = self.facts(path)
            value = _constant(target, defined) if target is not None else None
            return self._kept(self._kinds, key, before,
                              target.new_walk(0).infer.kind(value) if value is not None else None)
        return self._kinds[key]

    def _resolve(self, path: str, name: str, hops: int) -> tuple | None:
        """(module file, name, what it is: "func" / "module class" / "class" / "constant", files read,
        the function's `ast.arguments`) for a name of the module at `path`, following re-exports;
        memoised, holding no parsed module (those stay in the small `facts` memo only)."""
        key = (path, name)
        if key in self._answers:
            return self._answers[key]
        before = self.refused
        self._answers[key] = None  # a cycle of re-exports answers unknown
        target = self.summary(path)
        out = None
        if target is not None:
            if name in target.funcs:
                out = (path, name, "func", (path,), target.funcs[name])
            elif name in target.classes:
                out = (path, name, target.classes[name], (path,), None)
            elif name in target.constants:
                out = (path, name, "constant", (path,), None)
            elif hops < MAX_HOPS:  # re-exported: `from .impl import f` in the module
                where = self.imported(target, name)
                inner = self._resolve(where[0], where[1], hops + 1) if where is not None else None
                if inner is None and where is None:  # `from .utils import *` in a package's `__init__`
                    inner = self._star_resolve(target, name, hops)
                if inner is not None:
                    out = (inner[0], inner[1], inner[2], (path, *inner[3]), inner[4])
        return self._kept(self._answers, key, before, out)

    def _star_resolve(self, target: _Summary, name: str, hops: int) -> tuple | None:
        """`name` of a module that brings it in by `from [.]m import *`: the last such module (of the tree) whose
        text defines it at its top level (read as text first: a parse only for the one that does)."""
        for level, module in reversed(target.stars):
            path = self.module_path(target.path, level, module) if level or module else None  # (a library's: None)
            if path is not None and name in self.top_names(path):
                return self._resolve(path, name, hops + 1)
        return None


_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_TOP_DEF = re.compile(r"^(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# `self.mask = nn.Parameter(...)`, `self.register_buffer("mask", ...)`, `self.grid = torch.linspace(...)`: a tensor
# kept under an attribute; `self.mask = 0` / `= "..."` / `= [...]` / `= True`: a Python value
_TENSOR_STORE = re.compile(
    r"self\.(\w+)\s*=\s*(?:(?:torch\.)?nn\.)?Parameter\(|"
    r"register_buffer\(\s*[\"'](\w+)[\"']|"
    r"self\.(\w+)\s*=\s*torch\.(?:zeros|ones|randn|rand|empty|full|tensor|arange|eye|linspace|as_tensor)\(")
_HOST_STORE = re.compile(r"self\.(\w+)\s*=\s*(?:-?[\d.]|[\"'\[{]|True\b|False\b|\(\s*[\d\"'])")


def _text(path: str) -> str:
    """A module's text, or "" when it cannot be read or is over MAX_BYTES (read as text only: no parse)."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(MAX_BYTES + 1)
    except (OSError, UnicodeDecodeError, ValueError):
        return ""
    return text if len(text) <= MAX_BYTES else ""


# a one-line import at the top level (`import torch`, `import numpy as np`, `from torch import nn, optim`)
_TOP_IMPORT = re.compile(r"^(?:import[ \t]+[\w. \t,]+|from[ \t]+[\w.]+[ \t]+import[ \t]+[\w \t,]+)$", re.M)
# `from [.]m import *` at the top level; `NAME = a.b.c` at the top level (an alias)
_STAR_LINE = re.compile(r"^from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+\*", re.M)
_TOP_ALIAS = re.compile(r"^(\w+)[ \t]*=[ \t]*([A-Za-z_][\w.]*)[ \t]*(?:#[^\n]*)?$", re.M)
_ALIASED_ROOTS = frozenset({"torch", "numpy", "math"})
_TORCH_WORD = re.compile(r"torch|[Tt]ensor|device|cuda")
_TOP_ASSIGN = re.compile(r"^(\w+)[ \t]*(?::[^=\n]*)?=(?!=)([^\n]*)", re.M)  # `NAME = ...` / `NAME: T = ...`
_TOP_DEF_OR_CLASS = re.compile(r"^(?:(?:async[ \t]+)?def|class)[ \t]+(\w+)", re.M)
_ANY_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# a module's top-level definitions: `def f`, `class C`, `NAME = ...` / `NAME: T = ...` at column 0
_TOP_NAME = re.compile(r"^(?:(?:async[ \t]+)?def[ \t]+(?=\w)|class[ \t]+(?=\w)|(?=\w+[ \t]*[:=][^=]))(\w+)", re.M)
_IMPORTED_NAME = re.compile(r"(\w+)(?:[ \t]+as[ \t]+\w+)?")
# the parameter list after `def name`, parentheses nested two deep in it (`x=(1, (2, 3))`)
_SIGNATURE = re.compile(r"[ \t]*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)")
_TENSOR_WORD = re.compile(r"\b(?:\w+\.)*(?:Tensor|\w+Tensor)\b")
_COMMENT = re.compile(r"#[^\n]*")


_DEF_HEAD = re.compile(r"\bdef[ \t]+\w+")
# `list`, `List[int]`, `Sequence[int]`, `tuple[int, ...]`, `typing.List[int]`: a Python sequence (of indices)
_SEQ_ANN = re.compile(r"(?:typing\.)?(?:list|List|Sequence|MutableSequence|tuple|Tuple|Iterable)"
                      r"(?:\[\s*int\s*(?:,\s*\.\.\.\s*)?\])?")
_NUMBER_ANN = re.compile(r"\b(?:int|float|bool|complex|Number)\b")


# `: List[int]`, `: Sequence`, `: typing.Optional[list`: where an annotation names a sequence type (the name before
# the colon is read back from there: a scan from a literal `:` is fast, one from every word is not)
_SEQ_AT = re.compile(r":[ \t]*(?:typing\.)?(?:Optional\[[ \t]*)?(?:typing\.)?"
                     r"(?:list|List|Sequence|MutableSequence|tuple|Tuple|Iterable)\b")
_NAME_BEFORE = re.compile(r"(\w+)[ \t]*$")


def _sequence_names(texts) -> frozenset[str]:
    """The names some annotation in the texts calls a sequence type (a superset of `_signature_sequences`' own)."""
    out = set()
    for text in texts:
        for m in _SEQ_AT.finditer(text):
            b = _NAME_BEFORE.search(text, max(0, m.start() - 80), m.start())
            if b is not None:
                out.add(b.group(1))
    return frozenset(out)


def _split_params(sig: str) -> list[str]:
    """A signature's parameters (`x: Dict[str, int] = {}` is one), split at the commas outside brackets."""
    params, depth, start = [], 0, 0
    for k, c in enumerate(sig):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            params.append(sig[start:k])
            start = k + 1
    params.append(sig[start:])
    return params


def _signature_sequences(texts) -> dict[str, tuple[int, int, int]]:
    """parameter name -> how often the texts' signatures annotate it as a Python sequence, as a tensor or a number
    (`int | Tensor` included), or as something else."""
    out: dict[str, list[int]] = {}
    for text in texts:
        if "def " not in text:
            continue
        for h in _DEF_HEAD.finditer(text):
            m = _SIGNATURE.match(text, h.end())
            if m is None or ":" not in m.group(1):
                continue
            sig = _COMMENT.sub("", m.group(1)) if "#" in m.group(1) else m.group(1)
            for param in _split_params(sig):
                name, colon, ann = param.partition(":")
                name = name.strip().lstrip("*")
                if not colon or not name.isidentifier():
                    continue
                ann = ann.split("=", 1)[0].strip().strip("\"'")
                if ann.startswith(("Optional[", "typing.Optional[")) and ann.endswith("]"):
                    ann = ann[ann.index("[") + 1:-1].strip()
                ann = ann.removesuffix("| None").strip()
                c = out.setdefault(name, [0, 0, 0])
                if _TENSOR_WORD.search(ann) or _NUMBER_ANN.fullmatch(ann) or _NUMBER_ANN.search(ann) and "|" in ann:
                    c[1] += 1
                elif _SEQ_ANN.fullmatch(ann):
                    c[0] += 1
                else:
                    c[2] += 1
    return {n: (c[0], c[1], c[2]) for n, c in out.items()}


def _annotated_tensors(text: str, method: str) -> frozenset[str]:
    """`position/parameter` for each parameter of an indented `def <method>(` (a method) annotated with a type that
    names a tensor (`x: Tensor`, `t: int | torch.Tensor`, `Optional[torch.FloatTensor]`, `"torch.Tensor"`), the
    receiver left out; read from the text (a signature may span lines and hold comments)."""
    out = set()
    head = "def " + method
    i = text.find(head)
    while i >= 0:
        line = text.rfind("\n", 0, i) + 1
        before = text[line:i]
        end = i + len(head)
        m = _SIGNATURE.match(text, end) if before and before.strip() in ("", "async") else None
        i = text.find(head, end)
        if m is None or "Tensor" not in m.group(1):
            continue
        sig = _COMMENT.sub("", m.group(1)) if "#" in m.group(1) else m.group(1)
        params = _split_params(sig)
        for pos, param in enumerate(params[1:]):
            name, colon, ann = param.partition(":")
            name = name.strip()
            if colon and name.isidentifier() and _TENSOR_WORD.search(ann.partition("=")[0]):
                out.add(f"{pos}/{name}")
    return frozenset(out)


def _attr_calls(tree: ast.Module, pairs: frozenset[tuple[str, str]]) -> list | None:
    """The calls `module.name(...)` of a module's functions, for the (module name, function name) `pairs`, as
    (call, enclosing function, its class); None when one is read without being called (handed around)."""
    out: list = []
    called: set[int] = set()
    seen: list[ast.Attribute] = []

    def visit(node, efn, ecls):
        for c in ast.iter_child_nodes(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(c, c, ecls)
                continue
            if isinstance(c, ast.ClassDef):
                visit(c, None, c)
                continue
            if isinstance(c, ast.Attribute) and isinstance(c.value, ast.Name) and (c.value.id, c.attr) in pairs:
                seen.append(c)
            elif isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and id(c.func) not in called:
                f = c.func
                if isinstance(f.value, ast.Name) and (f.value.id, f.attr) in pairs:
                    out.append((c, efn, ecls))
                    called.add(id(f))
            visit(c, efn, ecls)

    visit(tree, None, None)
    return out if all(id(a) in called for a in seen) else None


def _namespace_base(folder: str, top: list[str]) -> str | None:
    """The folder above the nearest folder named as the import's top package (`pkg` of
    `from pkg.utils import f` in `.../pkg/model.py`): a namespace package (PEP 420) has no `__init__.py`
    to find its top by, and an installed one (pytorch_tabnet) is imported from the folder above."""
    if not top:
        return None
    d = folder
    while True:
        if os.path.basename(d) == top[0]:
            return os.path.dirname(d)
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def _host_only(walk, call: ast.Call) -> bool:
    """Every argument of `call` is a Python value the walk knows (a number, a string, a host name): none carries
    a tensor in (a device spelled as a string, or passed in place of a CPU default, seeds the walk instead)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    return all(walk.infer.kind(a) == HOST for a in [*call.args, *(k.value for k in call.keywords)])


def _close(target: FileFacts | None) -> None:
    if target is not None:
        target.close()


def _within_budget(file: FileFacts, path: str, values: bool = False) -> bool:
    """A file reads at most MAX_MODULES other modules for what calls give, classes hold and callers pass (those
    its walk asks about first), and as many again for module-level values it imports (`values`), whatever this
    process has read before: the answer does not depend on which files a worker linted earlier. A file reads a
    module only when the two are at most MAX_TOTAL bytes together."""
    if file.modules is None or len(file.source) + file.modules.size(path) > MAX_TOTAL:
        return False
    pool = file.value_deps if values else file.deps
    if path in pool or len(pool) < MAX_MODULES:
        pool.add(path)
        return True
    return False


class _Summary:
    """A module's top-level names: functions (their parameters), classes (nn.Modules or not), constants,
    and what it imports (for re-exports)."""

    __slots__ = ("classes", "constants", "funcs", "path", "returns", "stars", "_imports")

    def __init__(self, target: FileFacts):
        self.path = target.path
        self.funcs = {name: _sig(fn.args) for name, fn in target.index.funcs.items()}
        # function -> what its return annotation says, where it says something (`_annotated`)
        self.returns = {name: r for name, fn in target.index.funcs.items() if (r := _annotated(target, fn))}
        self.classes = {name: "module class" if name in target.module_classes else "class"
                        for name in target.index.classes}
        self.constants = {s.targets[0].id for s in target.tree.body if isinstance(s, ast.Assign)
                          and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)}
        self._imports = target.index.from_imports()
        self.stars = tuple(target.index.star_imports()) if "import *" in target.source else ()  # (level, module)

    def from_imports(self) -> dict[str, tuple[int, str, str]]:
        return self._imports


def _annotated(target: FileFacts, fn) -> tuple | None:
    """(kind, tuple kinds) that `fn`'s return annotation (or `# type:` comment) says, when it says one; None
    also where it names a device (`-> torch.device`): which device only a walk tells (`KindFacts.returned`)."""
    ann = target.index.return_annotation(fn)
    k, elts = annotation_kind(ann, target.imports)
    return (k, elts) if (k is not None or elts is not None) and not names_device(ann) else None


def _tensorish(ann: tuple) -> bool:
    k, elts = ann
    return k == TENSOR or TENSOR in (elts or ())


def _sig(a: ast.arguments) -> tuple:
    """What `Walk.call_seeds` reads of a function's parameters, small enough to keep for the process: the
    positional names, the keyword-only names, and those whose default is the CPU device."""
    return (tuple(p.arg for p in a.posonlyargs + a.args), tuple(p.arg for p in a.kwonlyargs),
            frozenset(n for n, d in param_defaults(a).items() if is_cpu_device(d) is True))


class _Signature:
    """Stands for a function of another module where only its parameters are read (`call_seeds`): an
    `ast.arguments` rebuilt from its `_sig`, the CPU-device defaults as `"cpu"`."""

    __slots__ = ("args",)

    def __init__(self, sig: tuple):
        pos, kwonly, cpu = sig
        none = ast.Constant(None)
        self.args = ast.arguments(
            posonlyargs=[], args=[ast.arg(arg=n) for n in pos], kwonlyargs=[ast.arg(arg=n) for n in kwonly],
            defaults=[ast.Constant("cpu") if n in cpu else none for n in pos],
            kw_defaults=[ast.Constant("cpu") if n in cpu else None for n in kwonly])


def _constant(target: FileFacts, name: str) -> ast.expr | None:
    """The value of the last module-level `name = value` of a module."""
    value = None
    for s in target.tree.body:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and s.targets[0].id == name:
            value = s.value
    return value
