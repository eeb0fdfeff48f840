// Runs scenario files through the playground's WebAssembly module under Node, as the page runs
// them, and prints each run's summary exactly as `electsim run FILE --variant V` prints it.
// Usage: node run_module.js MODULE FILE[#VARIANT]...
'use strict';
const fs = require('fs');
const path = require('path');

async function main() {
  const [modulePath, ...runs] = process.argv.slice(2);
  const createModule = require(path.resolve(modulePath));
  const M = await createModule();
  const call = (name, ...texts) => {
    const ptrs = texts.map((t) => {
      const n = M.lengthBytesUTF8(t) + 1;
      const p = M._malloc(n);
      M.stringToUTF8(t, p, n);
      return p;
    });
    const out = M.UTF8ToString(M['_' + name](...ptrs));
    ptrs.forEach((p) => M._free(p));
    return JSON.parse(out);
  };
  let failed = false;
  let first = true;
  for (const run of runs) {
    const [file, variant] = run.split('#');
    const text = fs.readFileSync(file, 'utf8');
    const opened = call('pg_open', text, variant || '');
    if (!opened.ok) {
      process.stderr.write(opened.problems.join('\n') + '\n');
      failed = true;
      continue;
    }
    while (!JSON.parse(M.UTF8ToString(M._pg_run(1e6))).done) { /* slices of a million steps */ }
    const result = JSON.parse(M.UTF8ToString(M._pg_result()));
    if (!first) process.stdout.write('\n');
    first = false;
    process.stdout.write(result.summary);
    for (const e of result.errors) process.stderr.write('electsim run: ' + e + '\n');
  }
  process.exitCode = failed ? 2 : 0;
}
main().catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exitCode = 2; });
