import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { ToastProvider } from '@/components/ui/toaster';
import { ConsoleApp } from './shell';
import { ConfirmProvider } from './ui/confirm';
import './console.css';

const container = document.getElementById('root');
if (!container) throw new Error('console.html has no #root element');
createRoot(container).render(
  <StrictMode>
    <BrowserRouter basename="/_/console">
      <ToastProvider>
        <ConfirmProvider>
          <ConsoleApp />
        </ConfirmProvider>
      </ToastProvider>
    </BrowserRouter>
  </StrictMode>,
);
