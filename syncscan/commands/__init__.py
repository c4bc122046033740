"""The CLI layer: one module per command, each with `add_arguments(parser)` and `run(args) -> int`.

A command parses its arguments, checks its inputs and outputs before any work, calls the
analysis (syncscan.trace, syncscan.runtime, syncscan.lint), chooses a renderer
(syncscan.present) and writes the result. Commands never import each other: what two of them
share lives in `_output`.
"""
