#!/usr/bin/env bash
# Package the VS Code extension: editors/vscode/package.sh [OUT.vsix]
# Installs vscode-languageclient and @vscode/vsce with npm (network), then `vsce package`.
set -euo pipefail
cd "$(dirname "$0")"
out="${1:-syncscan-$(node -p 'require("./package.json").version').vsix}"
npm install --no-audit --no-fund --loglevel=error
npx --no-install vsce package --out "$out"
