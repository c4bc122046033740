"""`[tool.syncscan]` in the nearest pyproject.toml (or --config): select, ignore,
per-file-ignores, exclude, hot-functions; and its errors."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syncscan.cli import main
from syncscan.errors import UserError
from syncscan.lint import config

ITEM_IN_LOOP = textwrap.dedent("""\
    import torch

    def train(model, loader, opt):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            print(loss.item())
    """)  # SYN101, hot
NONZERO_IN_FORWARD = "import torch\n\ndef forward(self, x):\n    return torch.nonzero(x)\n"  # SYN301, hot
HELPER = textwrap.dedent("""\
    import torch

    def my_metric(t):
        return torch.nonzero(t)
    """)  # SYN301 in a function nothing makes hot


def lint_json(capsys, *argv):
    try:
        rc = main(["lint", "--format", "json", "--no-cache", *argv])
    except SystemExit as e:
        rc = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, (json.loads(out) if out.strip() else None), err


def found(data):
    return sorted((f["path"], f["code"]) for f in data)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(name, text):
    p = Path(name)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def pyproject(body: str, where: str = "pyproject.toml"):
    write(where, "[project]\nname = 'x'\n\n[tool.syncscan]\n" + textwrap.dedent(body))


def test_no_config_lints_with_defaults(capsys):
    write("a.py", ITEM_IN_LOOP)
    write("b.py", NONZERO_IN_FORWARD)
    rc, data, _ = lint_json(capsys, ".")
    assert rc == 1 and found(data) == [("a.py", "SYN101"), ("b.py", "SYN301")]


def test_select_and_ignore(capsys):
    write("a.py", ITEM_IN_LOOP)
    write("b.py", NONZERO_IN_FORWARD)
    pyproject('select = ["SYN3"]\n')
    assert found(lint_json(capsys, ".")[1]) == [("b.py", "SYN301")]
    pyproject('ignore = ["SYN301"]\n')
    assert found(lint_json(capsys, ".")[1]) == [("a.py", "SYN101")]
    # the command line's --select replaces the config's; --ignore adds to it
    pyproject('select = ["SYN3"]\n')
    assert found(lint_json(capsys, "--select", "SYN1", ".")[1]) == [("a.py", "SYN101")]
    pyproject('ignore = ["SYN1"]\n')
    rc, data, _ = lint_json(capsys, "--ignore", "SYN3", ".")
    assert rc == 0 and data == []


def test_per_file_ignores(capsys):
    write("src/a.py", ITEM_IN_LOOP)
    write("scripts/a.py", ITEM_IN_LOOP)
    write("scripts/b.py", NONZERO_IN_FORWARD)
    pyproject('[tool.syncscan.per-file-ignores]\n"scripts/*" = ["SYN1"]\n"b.py" = ["SYN301"]\n')
    assert found(lint_json(capsys, ".")[1]) == [("src/a.py", "SYN101")]
    # relative to the pyproject's folder, wherever syncscan runs from
    import os
    os.chdir("scripts")
    rc, data, _ = lint_json(capsys, ".")
    assert rc == 0 and data == []


def test_exclude_names_and_anchored_paths(capsys):
    for name in ("a.py", "gen/a.py", "pkg/gen/a.py", "tests/data/a.py", "other/tests/data/a.py", "x_pb2.py"):
        write(name, ITEM_IN_LOOP)
    pyproject('exclude = ["gen", "tests/data", "*_pb2.py"]\n')
    # (--all: a file under a tests/ folder is test code, cold, hidden by default)
    got = [p for p, _ in found(lint_json(capsys, "--all", ".")[1])]
    assert got == ["a.py", "other/tests/data/a.py"]
    # explicit files are excluded too (pre-commit passes them one by one)
    rc, data, _ = lint_json(capsys, "gen/a.py", "tests/data/a.py", "x_pb2.py", "a.py")
    assert [p for p, _ in found(data)] == ["a.py"]
    # from a subfolder, an anchored pattern still means the project's tests/data
    import os
    os.chdir("tests")
    rc, data, _ = lint_json(capsys, ".")
    assert rc == 0 and data == []


def test_default_excludes(capsys):
    for name in ("a.py", ".venv/lib/a.py", "build/a.py", "__pycache__/a.py", "x.egg-info/a.py",
                 "nb/.ipynb_checkpoints/a.py"):
        write(name, ITEM_IN_LOOP)
    assert [p for p, _ in found(lint_json(capsys, ".")[1])] == ["a.py"]
    # a folder named on the command line is linted even if its name is a default exclude
    assert [p for p, _ in found(lint_json(capsys, "build")[1])] == ["build/a.py"]


def test_hot_functions(capsys):
    write("m.py", HELPER)
    rc, data, _ = lint_json(capsys, "m.py")
    assert rc == 0 and data == []  # cold: hidden
    pyproject('hot-functions = ["my_*"]\n')
    rc, data, _ = lint_json(capsys, "m.py")
    assert rc == 1 and [(f["code"], f["context"]) for f in data] == [("SYN301", "hot")]


def test_nearest_pyproject_with_a_syncscan_table_wins(capsys):
    pyproject('select = ["SYN3"]\n')
    write("sub/pyproject.toml", "[project]\nname = 'sub'\n")  # no [tool.syncscan]: skipped
    write("sub/inner/pyproject.toml", "[tool.syncscan]\nselect = ['SYN1']\n")
    write("sub/a.py", ITEM_IN_LOOP + "\n\ndef forward(self, x):\n    return torch.nonzero(x)\n")
    write("sub/inner/a.py", ITEM_IN_LOOP + "\n\ndef forward(self, x):\n    return torch.nonzero(x)\n")
    assert [c for _, c in found(lint_json(capsys, "sub/a.py")[1])] == ["SYN301"]
    assert [c for _, c in found(lint_json(capsys, "sub/inner/a.py")[1])] == ["SYN101"]


def test_config_option(capsys):
    write("a.py", ITEM_IN_LOOP + "\n\ndef forward(self, x):\n    return torch.nonzero(x)\n")
    pyproject('select = ["SYN3"]\n')
    write("conf/other.toml", "[tool.syncscan]\nselect = ['SYN101']\n")
    assert [c for _, c in found(lint_json(capsys, "a.py")[1])] == ["SYN301"]
    assert [c for _, c in found(lint_json(capsys, "--config", "conf/other.toml", "a.py")[1])] == ["SYN101"]


@pytest.mark.parametrize("body,message", [
    ('selekt = ["SYN1"]\n', "unknown [tool.syncscan] key(s): selekt"),
    ('select = "SYN1"\nignore = [1]\n', "[tool.syncscan] ignore must be a list of rule codes"),
    ('select = ["SYN999"]\n', "[tool.syncscan] select: unknown rule code or prefix 'SYN999'"),
    ('per-file-ignores = ["x"]\n', "per-file-ignores must be a table"),
    ('[tool.syncscan.per-file-ignores]\n"t/*" = ["SYN9999"]\n', "per-file-ignores 't/*': unknown rule code"),
    ('exclude = "build"\n', "exclude must be a list of strings"),
    ('hot-functions = [1]\n', "hot-functions must be a list of strings"),
    ('select = [\n', "cannot read config"),
    # issue 14: a string for a flag ("false" turned cold findings on, and --fix fixed them)
    ('show-cold = "false"\n', "[tool.syncscan] show-cold must be true or false, not 'false'"),
    ('respect-gitignore = 0\n', "[tool.syncscan] respect-gitignore must be true or false"),
    ('fail-on-sync = "no"\n', "[tool.syncscan] fail-on-sync must be true or false"),
    ('cache-dir = 3\n', "[tool.syncscan] cache-dir must be a string"),
])
def test_bad_config_is_a_one_line_error_naming_the_file_and_key(capsys, body, message):
    write("a.py", ITEM_IN_LOOP)
    pyproject(body)
    rc, data, err = lint_json(capsys, "a.py")
    assert rc == 2 and data is None
    assert err.startswith("syncscan: error: pyproject.toml: ") and message in err and err.count("\n") == 1


def test_missing_config_file(capsys):
    write("a.py", ITEM_IN_LOOP)
    rc, _, err = lint_json(capsys, "--config", "nope.toml", "a.py")
    assert rc == 2 and "nope.toml: config file not found" in err


def test_unparsable_pyproject_without_our_table_is_skipped(capsys):
    write("pyproject.toml", "[project\nname = 1\n")
    write("a.py", ITEM_IN_LOOP)
    assert lint_json(capsys, "a.py")[0] == 1


def test_load_anchors_slash_patterns(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.syncscan]\nexclude = ["gen", "./scratch", "tests/data/"]\n')
    cfg = config.load(None, str(tmp_path))
    root = tmp_path.resolve().as_posix()
    assert cfg.exclude == ["gen", f"{root}/scratch", f"{root}/tests/data"]
    assert cfg.root == tmp_path.resolve()


def test_selected_prefers_the_most_specific_prefix():
    assert config.selected("SYN301", ["SYN"], [])
    assert not config.selected("SYN301", ["SYN"], ["SYN3"])
    assert config.selected("SYN301", ["SYN301"], ["SYN3"])
    assert not config.selected("SYN301", ["SYN3"], ["SYN3"])  # a tie: ignore wins
    assert config.selected("SYN101", ["ALL"], [])
    assert not config.selected("SYN101", ["SYN3"], [])


def test_find_pyproject_survives_a_symlink_loop(tmp_path):
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert config.find_pyproject(tmp_path / "loop") is None  # and no RuntimeError from resolve()
    (tmp_path / "pyproject.toml").write_text("[tool.syncscan]\n")
    assert config.find_pyproject(tmp_path / "loop") == tmp_path / "pyproject.toml"
    (tmp_path / "pyproject.toml").write_text("[tool.syncscan\n")  # ours, but broken: say so
    with pytest.raises(UserError, match="cannot read config"):
        config.find_pyproject(tmp_path / "loop")


# -- issue 14: each file's own config, and config errors that name the file ---------------------

def test_each_file_gets_its_nearest_config_whatever_the_argument_order(capsys):
    """A monorepo: two packages with their own [tool.syncscan]; the findings of each file do not
    depend on which path comes first (they did: the first path's config applied to all)."""
    both = ITEM_IN_LOOP + "\n\ndef forward(self, x):\n    return torch.nonzero(x)\n"
    pyproject('select = ["SYN1"]\n', "pkg_a/pyproject.toml")
    pyproject('select = ["SYN3"]\n', "pkg_b/pyproject.toml")
    write("pkg_a/m.py", both)
    write("pkg_b/m.py", both)
    expected = [("pkg_a/m.py", "SYN101"), ("pkg_b/m.py", "SYN301")]
    assert found(lint_json(capsys, "pkg_a/m.py", "pkg_b/m.py")[1]) == expected
    assert found(lint_json(capsys, "pkg_b/m.py", "pkg_a/m.py")[1]) == expected
    assert found(lint_json(capsys, ".")[1]) == expected
    # the command line still applies on top of every file's config
    assert found(lint_json(capsys, "--ignore", "SYN301", "pkg_b", "pkg_a")[1]) == [("pkg_a/m.py", "SYN101")]


def test_each_file_gets_its_own_excludes_and_hot_functions(capsys):
    pyproject('exclude = ["gen"]\nhot-functions = ["my_*"]\n', "pkg_a/pyproject.toml")
    write("pkg_a/gen/x.py", NONZERO_IN_FORWARD)
    write("pkg_b/gen/x.py", NONZERO_IN_FORWARD)
    write("pkg_a/h.py", HELPER)
    write("pkg_b/h.py", HELPER)
    for order in (["pkg_b", "pkg_a"], ["pkg_a", "pkg_b"]):
        assert found(lint_json(capsys, *order)[1]) == [("pkg_a/h.py", "SYN301"), ("pkg_b/gen/x.py", "SYN301")]


def test_per_file_config_with_the_cache_does_not_mix_hot_functions(capsys):
    pyproject('hot-functions = ["my_*"]\n', "pkg_a/pyproject.toml")
    write("pkg_a/h.py", HELPER)
    write("pkg_b/h.py", HELPER)
    for _ in range(2):  # cold, then from the cache
        rc = main(["lint", "--format", "json", "pkg_a", "pkg_b"])
        out, _ = capsys.readouterr()
        assert rc == 1 and found(json.loads(out)) == [("pkg_a/h.py", "SYN301")]


def test_config_option_applies_to_every_file(capsys):
    pyproject('select = ["SYN3"]\n', "pkg_a/pyproject.toml")
    write("pkg_a/m.py", ITEM_IN_LOOP)
    write("conf.toml", "[tool.syncscan]\nselect = ['SYN1']\n")
    assert found(lint_json(capsys, "--config", "conf.toml", "pkg_a")[1]) == [("pkg_a/m.py", "SYN101")]


def test_show_cold_as_a_string_does_not_turn_on_fixing_cold_code(capsys):
    write("m.py", HELPER)  # cold
    pyproject('show-cold = "false"\n')
    rc = main(["lint", "--no-cache", "--fix", "--unsafe-fixes", "m.py"])
    _, err = capsys.readouterr()
    assert rc == 2 and "show-cold must be true or false" in err
    assert Path("m.py").read_text() == HELPER


def test_a_tool_key_that_is_not_a_table(capsys):
    write("a.py", ITEM_IN_LOOP)
    write("pyproject.toml", "tool = 1\n")
    rc, data, err = lint_json(capsys, "a.py")
    assert rc == 1 and not err and found(data) == [("a.py", "SYN101")]  # no [tool.syncscan]: defaults
    rc, data, err = lint_json(capsys, "--config", "pyproject.toml", "a.py")
    assert rc == 2 and err == "syncscan: error: pyproject.toml: [tool.syncscan] must be a table\n"


def test_a_pyproject_that_is_not_utf8_is_an_error(capsys):
    write("a.py", ITEM_IN_LOOP)
    Path("pyproject.toml").write_bytes("[tool.syncscan]\nignore = ['SYN101']  # caf\xe9\n".encode("latin-1"))
    rc, data, err = lint_json(capsys, "a.py")
    assert rc == 2 and data is None
    assert err == "syncscan: error: pyproject.toml: cannot read config: not UTF-8 text (TOML files are UTF-8)\n"


# -- telling a pyproject.toml without a [tool.syncscan] table without parsing it -------------------

TOML_LINES = ["[tool.syncscan]", '[tool . "syncscan"]', "[ tool ]", "[[tool]]", 'syncscan = {select = ["SYN1"]}',
              'syncscan.select = ["SYN1"]', 'tool.syncscan.select = ["SYN1"]', "tool = {syncscan = {}}",
              '"tool"."syncscan" = {}', "'tool'.'syncscan'.x = 1", "[project]", 'name = "syncscan"',
              'dependencies = ["syncscan>=0.1"]', "[project.scripts]", 'syncscan = "syncscan.cli:main"',
              "[tool.poetry.dependencies]", 'syncscan = "^0.1"', '"sync\\u0073can" = {}', "# [tool.syncscan]",
              'x = "tool.syncscan"', "[tool.other]", "a = 1", "[tool.syncscan.per-file-ignores]",
              '"t/*" = ["SYN1"]', "tool\t.\tsyncscan = {}"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(TOML_LINES), max_size=6))
def test_a_table_of_ours_is_never_missed(lines):
    import tomllib

    text = "\n".join(lines) + "\n"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    tool = data.get("tool")
    if isinstance(tool, dict) and "syncscan" in tool and "syncscan" in text:  # (a text without the word was
        assert config.may_define_ours(text)                                 # never read: as before)


def test_a_pyproject_that_only_names_syncscan_is_not_parsed():
    repo = Path(__file__).resolve().parents[1]
    assert not config.may_define_ours((repo / "pyproject.toml").read_text())  # syncscan's own
    assert not config.may_define_ours('[project]\nname = "x"\n[project.optional-dependencies]\n'
                                      'dev = ["syncscan>=0.1", "ruff"]\n[tool.ruff]\nline-length = 100\n')
    assert config.may_define_ours('[tool.ruff]\nx = 1\n\n[tool.syncscan]\nselect = ["SYN1"]\n')
