// The syncscan extension: starts `syncscan server` (pip install 'syncscan[lsp]') for Python files
// and passes the "syncscan.*" settings to it. Everything else happens in the server.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

// the settings the server reads ("path" and "args" only say how to start it)
const SERVER_SETTINGS = ["docsUrl", "report", "unsafeFixes", "debounceMs", "fullLintDelayMs", "severity"];

let client;

function serverSettings() {
  const config = vscode.workspace.getConfiguration("syncscan");
  const out = {};
  for (const key of SERVER_SETTINGS) {
    out[key] = config.get(key);
  }
  return { syncscan: out };
}

async function activate(context) {
  const config = vscode.workspace.getConfiguration("syncscan");
  const serverOptions = {
    command: config.get("path", "syncscan"),
    args: config.get("args", ["server"]),
    transport: TransportKind.stdio,
  };
  const clientOptions = {
    documentSelector: [{ scheme: "file", language: "python" }],
    initializationOptions: serverSettings(),
    synchronize: {
      // new or changed Python files and profile reports: the server updates its repository index
      fileEvents: vscode.workspace.createFileSystemWatcher("**/{*.py,report.json}"),
    },
  };
  client = new LanguageClient("syncscan", "syncscan", serverOptions, clientOptions);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("syncscan") && client) {
        client.sendNotification("workspace/didChangeConfiguration", { settings: serverSettings() });
      }
    })
  );
  await client.start();
}

async function deactivate() {
  if (client) {
    await client.stop();
  }
}

module.exports = { activate, deactivate };
