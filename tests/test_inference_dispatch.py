"""Array-API dispatchers (session 7): autoray's `numpy` namespace and `do`, `array_namespace(x)` namespaces
compute with the library of their array arguments."""

from test_interproc import kinds

from syncscan.lint.tensors import CPU, HOST, NDARRAY, TENSOR


def test_autoray_numpy_follows_its_tensor_arguments():
    assert kinds("""
        import torch
        import numpy as np
        from autoray import numpy as anp
        def f(x: torch.Tensor, u):
            h, a = x.cpu(), np.zeros(3)
            probe(anp.sum(x), anp.any(x == 0), anp.sqrt(h), anp.sum(a), anp.sum(u), anp.sqrt(2.0))
            probe(anp.concatenate([x, x], axis=1), anp.shape(x), anp.where(h > 0, h, 0.0))
    """) == [[TENSOR, TENSOR, CPU, NDARRAY, TENSOR, NDARRAY], [TENSOR, HOST, CPU]]
    # (`anp.sum(u)` of an unknown array: the backend the user picks, a probable tensor for a PyTorch user)


def test_autoray_do_and_its_functions():
    assert kinds("""
        import torch
        import autoray
        from autoray import do, astype, to_numpy, infer_backend
        def f(x: torch.Tensor, u):
            probe(do("sum", x), autoray.do("min", x.cpu()), do(u, x), astype(x, "int64"), to_numpy(x))
            probe(infer_backend(x), autoray.do("sum", u))
    """) == [[TENSOR, CPU, None, TENSOR, NDARRAY], [HOST, TENSOR]]


def test_like_picks_the_library_and_a_creation_routine_the_device():
    # autoray injects the `like` array's device into creation routines; a backend named by a string makes
    # the array where that library makes them by default (torch: the CPU unless the program set a default)
    assert kinds("""
        import torch
        from autoray import numpy as anp
        def f(x: torch.Tensor, backend, n):
            probe(anp.ones([n], dtype=x.dtype, like=x), anp.zeros((n, 2), like=x.cpu()),
                  anp.array([1.0, 2.0], like="torch"), anp.array([1.0], like="numpy"), anp.zeros((n,), like=backend))
            probe(anp.zeros([n], like=x, device="cpu"))
    """) == [[TENSOR, CPU, CPU, NDARRAY, None], [CPU]]


def test_array_api_namespaces_follow_their_arguments():
    assert kinds("""
        import torch
        from array_api_compat import array_namespace
        def f(x: torch.Tensor, u):
            xp = array_namespace(x)
            yp = x.__array_namespace__()
            probe(xp.sum(x), yp.max(x.cpu()), xp.sum(u))
    """) == [[TENSOR, CPU, None]]


def test_a_dispatched_condition_on_a_device_tensor_is_read_on_the_host():
    from syncscan.lint.engine import lint_source
    from syncscan.lint.registry import all_rules
    src = (
        "import torch\n"
        "from autoray import numpy as anp\n"
        "def smooth(w: torch.Tensor):\n"
        "    z = w == 0\n"
        "    if anp.any(z):\n"
        "        w = w + 1\n"
        "    if anp.min(w[:, 1] - w[:, 0]) < 0.0:\n"
        "        raise ValueError\n"
        "    if anp.any(w.cpu() == 0):\n"
        "        pass\n"
        "    return w\n"
    )
    found = [(f.line, f.code) for f in lint_source("m.py", src, [r() for r in all_rules()]).findings]
    assert (5, "SYN104") in found and (7, "SYN104") in found and (9, "SYN104") not in found


def test_a_dispatched_full_reduction_is_0_dim():
    from syncscan.lint.engine import lint_source
    from syncscan.lint.registry import all_rules
    src = (
        "import torch\n"
        "from autoray import numpy as anp\n"
        "def pick(cands, scores: torch.Tensor):\n"
        "    return cands[anp.argmax(scores)], cands[anp.argmax(scores, 0, keepdims=True)]\n"
    )
    found = [(f.line, f.column, f.code) for f in lint_source("m.py", src, [r() for r in all_rules()]).findings]
    assert found == [(4, 12, "SYN302")], found


def test_factories_given_no_device_make_on_the_default_device_the_code_sets():
    # `with torch.device(d):` is certain; a CUDA default the module sets, when imported or in one of its functions
    # (from then on the process's factories make there: GraN-DAG's `learn`), probable
    assert kinds("""
        import torch
        def f(n, dev):
            with torch.device("cuda"):
                a = torch.zeros(n)
            with torch.device(dev):
                b = torch.ones(n)
            with torch.device("cpu"):
                c = torch.ones(n)
            with torch.device("meta"):
                m = torch.ones(n)
            probe(a, b, c, m, torch.zeros(n))
    """) == [[TENSOR, TENSOR, CPU, None, CPU]]
    assert kinds("""
        import torch
        if torch.cuda.is_available():
            torch.set_default_device("cuda")
        def f(n):
            probe(torch.zeros(n), torch.arange(n, device="cpu"))
    """) == [[TENSOR, CPU]]
    assert kinds("""
        import torch
        def setup():
            torch.set_default_device("cuda")
        def f(n):
            probe(torch.zeros(n))
    """) == [[TENSOR]]
    assert kinds("""
        import torch
        def setup():
            torch.set_default_device("cpu")
        def f(n):
            probe(torch.zeros(n))
    """) == [[CPU]]


def test_a_module_default_device_gives_low_confidence_and_a_device_block_high():
    from syncscan.lint.engine import lint_source
    from syncscan.lint.registry import all_rules
    src = (
        "import torch\n"
        "torch.set_default_device('cuda')\n"
        "def f(n):\n"
        "    x = torch.randn(n)\n"
        "    if x.sum() > 0:\n"
        "        return 1\n"
        "    with torch.device('cuda'):\n"
        "        y = torch.randn(n)\n"
        "    if y.sum() > 0:\n"
        "        return 2\n"
    )
    found = [(f.line, f.code, f.confidence) for f in lint_source("m.py", src, [r() for r in all_rules()]).findings]
    assert found == [(5, "SYN104", "low"), (9, "SYN104", "high")], found


def test_pattern_libraries_give_an_array_of_their_inputs_library():
    assert kinds("""
        import torch
        import einx
        from einops import rearrange, reduce, repeat, parse_shape, pack, asnumpy
        def f(x: torch.Tensor, u, heads):
            h = x.cpu()
            probe(rearrange(x, "b (h d) -> b h d", h=heads), reduce(h, "b c -> b", "sum"), repeat(u, "b -> b n", n=2))
            probe(einx.sum("b [c]", x), parse_shape(x, "b c"), pack([x, x], "b *"), asnumpy(x))
    """) == [[TENSOR, CPU, None], [TENSOR, None, None, NDARRAY]]


def test_a_probable_tensor_the_body_uses_as_only_a_tensor_is_one():
    # `repeat` of a probable tensor is a probable tensor; `.any(dim=-1)` later proves it one (as it proved an
    # unknown value one before einops' results were known)
    from syncscan.lint.engine import lint_source
    from syncscan.lint.registry import all_rules
    src = (
        "import torch\n"
        "from einops import repeat\n"
        "def f(x: torch.Tensor, n):\n"
        "    out = norm(x)\n"
        "    out = repeat(out, 'b -> b n', n=n)\n"
        "    done = out == 0\n"
        "    if done.any(dim=-1).all():\n"
        "        return out\n"
    )
    found = [(f.line, f.code, f.confidence) for f in lint_source("m.py", src, [r() for r in all_rules()]).findings]
    assert found == [(7, "SYN104", "high")], found


def test_a_backend_namespace_told_by_use():
    # `T` is called with three of numpy's functions, `T.sqrt(v)` among them: the library's own backend layer
    assert kinds("""
        import torch
        import numpy as np
        from . import backend as T
        def f(x: torch.Tensor, u, n):
            a = np.zeros(3)
            probe(T.sqrt(T.abs(u)), T.sum(x), T.sum(x.cpu()), T.sum(a), T.zeros(n), T.is_tensor(u), T.shape(u))
    """) == [[TENSOR, TENSOR, CPU, NDARRAY, TENSOR, HOST, HOST]]
