// The two web sites firebase-tools' Storage conformance suite opens in its
// browser, served from this machine so that the suite runs offline: an HTTP
// proxy on 127.0.0.1 (the port is written to stdout) that answers every
// CONNECT with a TLS server of its own, whose certificate the browser is told
// to accept (--ignore-certificate-errors). https://example.com is an empty
// page; https://www.gstatic.com/firebasejs/VERSION/FILE is FILE of the npm
// package firebase@VERSION unpacked under ROOT/VERSION (run.sh unpacks the
// versions the suite names). Anything else is 502, as a host without network.
//
// usage: node offline-web.mjs ROOT KEY.pem CERT.pem
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';

const [root, keyFile, certFile] = process.argv.slice(2);

const site = https.createServer(
  { key: await readFile(keyFile), cert: await readFile(certFile) },
  async (req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '');
    const url = new URL(req.url ?? '/', `https://${host}`);
    if (host === 'example.com') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Example Domain</title><p>offline stand-in</p>');
      return;
    }
    const js = /^\/firebasejs\/([0-9][0-9.]*)\/(firebase-[a-z-]+\.js)$/.exec(url.pathname);
    if (host === 'www.gstatic.com' && js) {
      try {
        const body = await readFile(path.join(root, js[1], js[2]));
        res.writeHead(200, { 'content-type': 'text/javascript' });
        res.end(body);
      } catch {
        res.writeHead(404).end();
      }
      return;
    }
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`offline: ${host} is not served here\n`);
  },
);

const proxy = http.createServer((_req, res) => res.writeHead(405).end());
proxy.on('connect', (_req, socket) => {
  // A browser that closes resets its tunnels; that ends the socket, not this server.
  socket.on('error', () => socket.destroy());
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  site.emit('connection', socket);
});
proxy.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${proxy.address().port}\n`);
});
