#!/usr/bin/env node
// The published entry: the compiled CLI (`pnpm build` first when running from a checkout).
import '../dist/cli/main.js';
