"""The editor set-ups: the VS Code extension's manifest declares exactly the settings the server
reads, its script is valid JavaScript, and it packages into a .vsix (when npm is here and can
reach its registry: the packaging test is skipped otherwise)."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from dataclasses import fields
from pathlib import Path

import pytest

from syncscan.server.settings import CLIENT_KEYS, DEFAULT_SEVERITY, Settings, _camel

VSCODE = Path(__file__).resolve().parents[1] / "editors" / "vscode"


def _manifest() -> dict:
    return json.loads((VSCODE / "package.json").read_text())


def test_the_extension_declares_the_servers_settings_with_its_defaults():
    props = _manifest()["contributes"]["configuration"]["properties"]
    declared = {k.split(".", 1)[1] for k in props}
    server = {_camel(f.name) for f in fields(Settings)}
    assert declared == server | {"path", "args"} and {"path", "args"} <= CLIENT_KEYS
    defaults = Settings()
    for f in fields(Settings):
        assert props[f"syncscan.{_camel(f.name)}"]["default"] == getattr(defaults, f.name), f.name
    assert set(props["syncscan.severity"]["properties"]) == set(DEFAULT_SEVERITY)
    # and the script sends exactly those to the server
    js = (VSCODE / "extension.js").read_text()
    listed = js.split("const SERVER_SETTINGS = [", 1)[1].split("]", 1)[0]
    assert {s.strip().strip('"') for s in listed.split(",")} == server


def test_the_extension_starts_the_server_on_python_files():
    import syncscan

    m = _manifest()
    assert m["version"] == syncscan.__version__  # released together
    assert m["main"] == "./extension.js" and "onLanguage:python" in m["activationEvents"]
    assert props_default(m, "syncscan.args") == ["server"] and props_default(m, "syncscan.path") == "syncscan"


def props_default(m: dict, key: str):
    return m["contributes"]["configuration"]["properties"][key]["default"]


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
def test_extension_script_is_valid_javascript():
    p = subprocess.run(["node", "--check", str(VSCODE / "extension.js")], capture_output=True, text=True,
                       timeout=60, check=False)
    assert p.returncode == 0, p.stderr


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_package_script_builds_a_vsix(tmp_path):
    work = tmp_path / "vscode"
    shutil.copytree(VSCODE, work, ignore=shutil.ignore_patterns("node_modules", "*.vsix"))
    probe = subprocess.run(["npm", "view", "@vscode/vsce", "version"], capture_output=True, text=True, timeout=120,
                           check=False, cwd=work)
    if probe.returncode != 0:
        pytest.skip("npm cannot reach its registry")
    out = tmp_path / "syncscan.vsix"
    p = subprocess.run([str(work / "package.sh"), str(out)], capture_output=True, text=True, timeout=600,
                       check=False)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    names = set(zipfile.ZipFile(out).namelist())
    assert {"extension/package.json", "extension/extension.js", "extension/readme.md"} <= names
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    assert not any("/@vscode/vsce/" in n for n in names)  # build tools stay out
    packaged = json.loads(zipfile.ZipFile(out).read("extension/package.json"))
    assert packaged["version"] == _manifest()["version"]
