// loupe's Node.js functions worker: loads a codebase's module once, as Cloud
// Functions loads it, and serves every function it exports on $PORT.
//
//   GET  /__/health          200 once the module is loaded
//   POST /__/event/{name}    a background event: {"data", "context"} (v1) or
//                            {"event"} (a v2 CloudEvent); 200 when the
//                            function's promise resolves, 500 when it throws
//   ANY  /__/fn/{name}/rest  an HTTP function (onRequest, onCall, blocking,
//                            task queue, onSchedule), called with Express's
//                            req and res at path /rest
//
// console.* and the firebase-functions logger write one JSON line each, with
// the severity and, inside an invocation, the function's name
// ("loupe.function") and the invocation's Function-Execution-Id as its
// execution_id label (as Cloud Functions labels a run's lines), which loupe
// reads into its log.
'use strict';
const http = require('node:http');
const path = require('node:path');
const util = require('node:util');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');
const { AsyncLocalStorage } = require('node:async_hooks');

const source = process.env.LOUPE_FUNCTIONS_SOURCE;
const invocation = new AsyncLocalStorage();

function write(severity, args) {
  let entry;
  if (args.length === 1 && typeof args[0] === 'string' && args[0].startsWith('{')) {
    try {
      const parsed = JSON.parse(args[0]);
      if (parsed && typeof parsed.severity === 'string') entry = parsed;
    } catch {
      // not a structured line
    }
  }
  entry ??= { severity, message: util.format(...args) };
  const current = invocation.getStore();
  if (current && !entry['loupe.function']) entry['loupe.function'] = current.name;
  if (current?.execution) {
    const labels = entry['logging.googleapis.com/labels'];
    entry['logging.googleapis.com/labels'] = { execution_id: current.execution, ...(typeof labels === 'object' ? labels : {}) };
  }
  const line = JSON.stringify(entry) + '\n';
  if (entry.severity === 'ERROR' || entry.severity === 'WARNING') process.stderr.write(line);
  else process.stdout.write(line);
}
console.log = (...a) => write('INFO', a);
console.info = (...a) => write('INFO', a);
console.debug = (...a) => write('DEBUG', a);
console.warn = (...a) => write('WARNING', a);
console.error = (...a) => write('ERROR', a);
// Node's process warnings (firebase-admin's MetadataLookupWarning, a
// deprecation) are warnings: Node's own handler would print them through
// console.error, as errors.
process.removeAllListeners('warning');
process.on('warning', (w) => write('WARNING', [`${w.name}: ${w.message}`]));

const userRequire = createRequire(path.join(source, 'package.json'));

function loadExpress() {
  try {
    return userRequire('express');
  } catch {
    const sdk = userRequire.resolve('firebase-functions');
    return createRequire(sdk)('express');
  }
}

async function loadModule() {
  try {
    return userRequire(source);
  } catch (e) {
    if (e.code === 'ERR_REQUIRE_ESM' || e.code === 'ERR_REQUIRE_ASYNC_MODULE') {
      return import(pathToFileURL(userRequire.resolve(source)).href);
    }
    throw e;
  }
}

function find(mod, entryPoint) {
  return entryPoint.split('.').reduce((m, part) => m?.[part], mod);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function stackOf(err) {
  return (err && err.stack) || String(err);
}

async function main() {
  let mod;
  try {
    mod = await loadModule();
  } catch (e) {
    write('ERROR', [`Failed to load the functions source ${source}: ${stackOf(e)}`]);
    process.exit(1);
  }
  const express = loadExpress();
  const saveRawBody = (req, res, buf) => {
    req.rawBody = buf;
  };
  const limit = '32mb';
  const app = express();
  app.enable('trust proxy');
  app.use(express.json({ limit, verify: saveRawBody }));
  app.use(express.text({ limit, verify: saveRawBody }));
  app.use(express.urlencoded({ extended: true, limit, verify: saveRawBody }));
  app.use(express.raw({ type: '*/*', limit, verify: saveRawBody }));
  app.use((req, res) => {
    const name = req.loupeFunction;
    const fn = find(mod, name.replace(/-/g, '.'));
    invocation.run({ name, execution: req.headers['function-execution-id'] }, async () => {
      try {
        if (typeof fn !== 'function') throw new Error(`the module exports no function ${name}`);
        await fn(req, res);
      } catch (err) {
        write('ERROR', [`Function ${name} threw: ${stackOf(err)}`]);
        if (!res.headersSent) res.status(500).send('Internal Server Error');
      }
    });
  });

  const server = http.createServer(async (req, res) => {
    const u = new URL(req.url, 'http://worker');
    if (u.pathname === '/__/health') {
      res.end('ok');
      return;
    }
    const fnMatch = u.pathname.match(/^\/__\/fn\/([^/]+)(\/.*)?$/);
    if (fnMatch) {
      req.loupeFunction = decodeURIComponent(fnMatch[1]);
      req.url = (fnMatch[2] || '/') + u.search;
      app(req, res);
      return;
    }
    const eventMatch = u.pathname.match(/^\/__\/event\/([^/]+)$/);
    if (!eventMatch || req.method !== 'POST') {
      res.statusCode = 404;
      res.end();
      return;
    }
    const name = decodeURIComponent(eventMatch[1]);
    const fn = find(mod, name.replace(/-/g, '.'));
    let body;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8'));
    } catch (e) {
      res.statusCode = 400;
      res.end(String(e));
      return;
    }
    await invocation.run({ name, execution: req.headers['function-execution-id'] }, async () => {
      try {
        if (typeof fn !== 'function') throw new Error(`the module exports no function ${name}`);
        if (body.event) await fn(body.event);
        else await fn(body.data, body.context);
        res.setHeader('content-type', 'application/json');
        res.end('{"status":"acknowledged"}');
      } catch (err) {
        write('ERROR', [`Function ${name} threw: ${stackOf(err)}`]);
        res.statusCode = 500;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: String((err && err.message) || err) }));
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(Number(process.env.PORT), '127.0.0.1');
  const stop = () => server.close(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main();
