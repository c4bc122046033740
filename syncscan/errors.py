"""Errors that reach the user as one line and exit code 2, never as a traceback."""


class UserError(Exception):
    """Bad input or usage: the CLI prints `syncscan: error: <message>` and exits 2."""

    exit_code = 2
