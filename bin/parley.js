#!/usr/bin/env node
// The `parley` command: runs the compiled CLI that `npm run build` writes to dist/.
import '../dist/src/cli/parley.js';
