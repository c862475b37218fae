// Loupe's push worker. It learns the Firebase config from the page
// (FIREBASE_CONFIG message) and shows notifications for push events.
let firebaseConfig = null;

self.addEventListener('message', (event) => {
  if (event.data?.type === 'FIREBASE_CONFIG') firebaseConfig = event.data.config;
});

self.addEventListener('push', (event) => {
  const payload = event.data?.json() ?? {};
  const notification = payload.notification ?? {};
  event.waitUntil(
    self.registration.showNotification(notification.title ?? 'Loupe', {
      body: notification.body ?? '',
      icon: '/favicon.svg',
      data: {
        link: payload.fcmOptions?.link ?? payload.data?.link ?? '/notifications',
        project: firebaseConfig?.FIREBASE_PROJECT_ID,
      },
    }),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(self.clients.openWindow(event.notification.data?.link ?? '/'));
});
