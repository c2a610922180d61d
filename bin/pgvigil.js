#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` through the prepare script).
import('../dist/cli/main.js').then((cli) => cli.main(process.argv.slice(2))).then(
  (code) => { process.exitCode = code; },
  (err) => { console.error(err); process.exitCode = 70; },
);
