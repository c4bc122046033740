"""The server's settings: `initializationOptions` and `workspace/didChangeConfiguration`, either
flat or under a `syncscan` key (as VS Code sends them)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from syncscan.server import adapter

SEVERITIES = ("error", "warning", "information", "hint", "off")
CLIENT_KEYS = {"path", "args", "trace"}  # an editor extension's own settings (how to start the server)
DEFAULT_SEVERITY = {"hot": "warning", "epoch": "information", "cold": "hint", "measured": "error"}


@dataclass(frozen=True)
class Settings:
    docs_url: str = adapter.DOCS_URL  # codeDescription.href is `<docs_url>#syn301`
    report: str | None = None  # a report.json to take measured costs from (relative: to the project root)
    unsafe_fixes: bool = False  # offer unsafe fixes as quick fixes too
    debounce_ms: int = 25  # wait after a change before linting (changes in the meantime are merged)
    full_lint_delay_ms: int = 300  # quiet time after which the whole file is linted again
    severity: dict = field(default_factory=lambda: dict(DEFAULT_SEVERITY))

    @classmethod
    def parse(cls, options, base: Settings | None = None) -> tuple[Settings, list[str]]:
        """(settings, problems): unknown keys and values of the wrong type are reported, not fatal."""
        base = base or cls()
        if not isinstance(options, dict):
            return base, ([] if options is None else ["settings must be an object"])
        if isinstance(options.get("syncscan"), dict):
            options = options["syncscan"]
        names = {_camel(f.name): f.name for f in fields(cls)}
        changes, problems = {}, []
        for key, value in options.items():
            name = names.get(key) or (key if key in names.values() else None)
            if name is None and key in CLIENT_KEYS:
                continue
            if name is None:
                problems.append(f"unknown setting {key!r}")
                continue
            ok, why = _check(name, value)
            if not ok:
                problems.append(f"setting {key!r}: {why}")
                continue
            if name == "severity":
                value = {**base.severity, **{k: v.lower() for k, v in value.items()}}
            changes[name] = value
        return replace(base, **changes), problems


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(r.title() for r in rest)


def _check(name: str, value) -> tuple[bool, str]:
    if name in ("docs_url",):
        return (isinstance(value, str) and bool(value)), "must be a non-empty string"
    if name == "report":
        return (value is None or isinstance(value, str)), "must be a path"
    if name == "unsafe_fixes":
        return isinstance(value, bool), "must be true or false"
    if name in ("debounce_ms", "full_lint_delay_ms"):
        return (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 60_000), \
            "must be milliseconds (0 to 60000)"
    if name == "severity":
        ok = isinstance(value, dict) and all(
            k in DEFAULT_SEVERITY and isinstance(v, str) and v.lower() in SEVERITIES for k, v in value.items())
        return ok, f"must map {', '.join(DEFAULT_SEVERITY)} to one of {', '.join(SEVERITIES)}"
    return True, ""
