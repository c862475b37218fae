// Loupe's push worker. It learns the Firebase config from the page
// (FIREBASE_CONFIG message) and shows notifications for push events.
//
// In production the browser's push service wakes it with `push` events. In
// local mode (loupe) there is no push service: the page hands the worker the
// URL of loupe's message stream (LOUPE_PUSH_STREAM) and the worker reads it
// itself, so messages still become notifications when no page is focused or
// every page is closed. A worker is stopped some time after its last event,
// so every message from a page (in local mode the app sends
// LOUPE_PUSH_KEEPALIVE at load and each minute) reopens the stream if needed and keeps the worker up for another
// few minutes; once the last page closes it keeps listening for that long.
let firebaseConfig = null;

// showPush shows a message (FCM's MessagePayload) as a system notification;
// shown twice (by the worker, and at the page's request), it is one.
function showPush(payload) {
  const notification = payload.notification ?? {};
  return self.registration.showNotification(notification.title ?? 'Loupe', {
    body: notification.body ?? '',
    tag: payload.messageId,
    icon: '/favicon.svg',
    data: {
      link: payload.fcmOptions?.link ?? payload.data?.link ?? '/notifications',
      project: firebaseConfig?.FIREBASE_PROJECT_ID,
    },
  });
}

self.addEventListener('push', (event) => {
  event.waitUntil(showPush(event.data?.json() ?? {}));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(self.clients.openWindow(event.notification.data?.link ?? '/'));
});

// --- local mode: loupe's message stream -------------------------------------

// How long one page message keeps the worker alive (browsers stop a worker
// whose event stays open for 5 minutes).
const HOLD_MS = 4 * 60 * 1000;
const STREAM_CACHE = 'loupe-push';
const STREAM_KEY = '/__loupe/push-stream';
let stream = null; // { url, abort: AbortController, done: Promise } while reading

// A page that is visible and focused shows messages itself (as a toast).
async function pageInFront() {
  const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  return pages.some((c) => c.visibilityState === 'visible' && c.focused);
}

async function deliver(payload) {
  if (!(await pageInFront())) await showPush(payload);
}

// read consumes server-sent events ("data: {json}" blocks) until the stream ends.
async function read(url, signal) {
  const res = await fetch(url, { headers: { Accept: 'text/event-stream' }, cache: 'no-store', signal });
  if (!res.ok || !res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffered += value;
    let end;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data) await deliver(JSON.parse(data));
    }
  }
}

async function streamURL(url) {
  const cache = await caches.open(STREAM_CACHE);
  if (url) {
    await cache.put(STREAM_KEY, new Response(url));
    return url;
  }
  const stored = await cache.match(STREAM_KEY);
  return stored ? stored.text() : null;
}

// listen makes sure the stream is being read and resolves when it ends or
// after HOLD_MS, whichever comes first.
async function listen(url) {
  const target = await streamURL(url);
  if (!target) return;
  if (stream?.url !== target) {
    stream?.abort.abort(); // a new token replaces the old one
    const current = { url: target, abort: new AbortController() };
    current.done = read(target, current.abort.signal)
      .catch(() => {})
      .finally(() => {
        if (stream === current) stream = null;
      });
    stream = current;
  }
  await Promise.race([stream.done, new Promise((resolve) => setTimeout(resolve, HOLD_MS))]);
}

self.addEventListener('message', (event) => {
  switch (event.data?.type) {
    case 'FIREBASE_CONFIG':
      firebaseConfig = event.data.config;
      break;
    case 'LOUPE_PUSH_SHOW': // a message the page took while this worker still saw it in front
      event.waitUntil(showPush(event.data.payload ?? {}));
      break;
    case 'LOUPE_PUSH_STREAM': // a new token's stream
    case 'LOUPE_PUSH_KEEPALIVE': // the stream last given, if any
      event.waitUntil(listen(event.data.url ?? null));
      break;
  }
});
