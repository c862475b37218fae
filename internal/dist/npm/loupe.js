#!/usr/bin/env node
// The `loupe` command of the @loupe-dev/loupe npm package: it runs the loupe
// binary of this platform's package (an optional dependency that npm installs
// only on its os and cpu) with this command's arguments, standard streams and
// environment, passes on the signals it gets, and ends as the binary ended:
// with its exit code, or by the same signal.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const pkg = `@loupe-dev/loupe-${process.platform}-${process.arch}`;
const exe = process.platform === 'win32' ? 'loupe.exe' : 'loupe';

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`, { paths: [path.join(__dirname, '..')] });
} catch {
  process.stderr.write(
    `loupe: ${pkg} is not installed, so there is no loupe binary for ${process.platform} ${process.arch}.\n` +
      'npm installs it with @loupe-dev/loupe unless optional dependencies are left out\n' +
      '(--omit=optional, --no-optional) or the lockfile was made on another platform without it:\n' +
      'install again without those, or use a release archive or `go install`.\n',
  );
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit' });
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) process.on(signal, forward);

child.on('error', (err) => {
  process.stderr.write(`loupe: cannot run ${binary}: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  for (const s of forwarded) process.off(s, forward);
  if (signal) {
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
