#!/usr/bin/env node
// Lists function-like definitions longer than a line limit in production .ts files.
// Usage (from the repo root): node scripts/long-functions.mjs [maxLines=80]
// A definition's length counts every line from its first to its last, nested closures included.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = process.cwd();
const maxLines = Number(process.argv[2] ?? 80);
const roots = ['apps', 'packages', 'tooling', 'examples'];
const skipDirs = new Set(['node_modules', 'dist', 'test', 'bench']);

function* sourceFiles(dir) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!skipDirs.has(entry.name)) yield* sourceFiles(path);
    } else if (
      entry.name.endsWith('.ts') &&
      !entry.name.endsWith('.test.ts') &&
      !entry.name.endsWith('.d.ts')
    ) {
      yield path;
    }
  }
}

function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name))
    return parent.name.text;
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '<anonymous>';
}

const found = [];
for (const top of roots) {
  for (const file of sourceFiles(join(root, top))) {
    const source = ts.createSourceFile(
      file,
      readFileSync(file, 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    const visit = (node) => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
        const lines = last - first + 1;
        if (lines > maxLines)
          found.push({ file: relative(root, file), line: first + 1, name: nameOf(node), lines });
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
}

found.sort((a, b) => b.lines - a.lines);
for (const f of found)
  console.log(`${String(f.lines).padStart(4)}  ${f.file}:${f.line}  ${f.name}`);
console.log(`${found.length} function(s) over ${maxLines} lines`);
