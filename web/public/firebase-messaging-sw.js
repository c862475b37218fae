// Loupe's push worker. It learns the Firebase config from the page
// (FIREBASE_CONFIG message) and shows notifications for push events.
//
// In production the browser's push service wakes it with `push` events. In
// local mode (loupe) there is no push service: the page hands the worker the
// URL of loupe's message stream (LOUPE_PUSH_STREAM) and the worker reads it
// itself and offers each message to a page in front, which shows it as a
// toast; a message no page takes becomes a notification, also when every page
// is closed. A worker is stopped some time after its last event,
// so every message from a page (in local mode the app sends
// LOUPE_PUSH_KEEPALIVE at load and each minute) reopens the stream if needed and keeps the worker up for another
// few minutes; once the last page closes it keeps listening for that long.
let firebaseConfig = null;

// showPush shows a message (FCM's MessagePayload) as a system notification;
// a message shown twice is one notification.
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

// showPushSurely shows a message and makes sure the browser kept it: Chromium
// now and then resolves showNotification yet drops the notification (a few
// times in a hundred in headless Chromium, with a page open as well as just
// after the last one closed), so one that is not listed right after is
// shown again, once (the same tag, so never twice on screen).
async function showPushSurely(payload) {
  await showPush(payload);
  const listed = await self.registration.getNotifications({ tag: payload.messageId });
  if (payload.messageId && listed.length === 0) await showPush(payload);
}

self.addEventListener('push', (event) => {
  event.waitUntil(showPushSurely(event.data?.json() ?? {}));
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

// How long a page in front has to take a message before the worker shows it.
const OFFER_MS = 3000;

// offerToPage hands a message to a page of the app that is visible and
// focused, which shows it as a toast; it resolves true once such a page took
// it. A page answers for itself (it knows its focus better than this worker,
// which may still see a page in front that just lost the focus or closed); a
// page that cannot be reached or does not answer in OFFER_MS counts as gone.
async function offerToPage(payload) {
  const pages = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const page of pages.filter((c) => c.visibilityState === 'visible' && c.focused)) {
    const taken = await new Promise((resolve) => {
      const channel = new MessageChannel();
      const timer = setTimeout(() => resolve(false), OFFER_MS);
      channel.port1.onmessage = (event) => {
        clearTimeout(timer);
        resolve(event.data?.taken === true);
      };
      try {
        page.postMessage({ type: 'LOUPE_PUSH_MESSAGE', payload }, [channel.port2]);
      } catch {
        clearTimeout(timer);
        resolve(false); // the page is gone
      }
    });
    if (taken) return true;
  }
  return false;
}

// deliver shows a message no page took; whatever fails on the way, the
// message is shown rather than lost, and the stream goes on.
async function deliver(payload) {
  const taken = await offerToPage(payload).catch(() => false);
  if (!taken)
    await showPushSurely(payload).catch((err) => console.error('Loupe push: showing a message failed:', err));
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
      let payload = null;
      try {
        payload = JSON.parse(data);
      } catch {
        console.error('Loupe push: a message that is not JSON was skipped:', data.slice(0, 200));
      }
      if (payload) await deliver(payload);
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
    case 'LOUPE_PUSH_STREAM': // a new token's stream
    case 'LOUPE_PUSH_KEEPALIVE': // the stream last given, if any
      event.waitUntil(listen(event.data.url ?? null));
      break;
  }
});
