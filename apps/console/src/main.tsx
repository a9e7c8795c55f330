import { QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './app';
import { BrandingProvider } from './branding';
import { createQueryClient } from './query';
import { SessionProvider } from './session';
import { reportCaughtError } from './ui/no-access';
import './styles.css';

createRoot(document.getElementById('root')!, { onCaughtError: reportCaughtError }).render(
  <StrictMode>
    <QueryClientProvider client={createQueryClient()}>
      <BrowserRouter>
        <BrandingProvider>
          <SessionProvider>
            <App />
          </SessionProvider>
        </BrandingProvider>
      </BrowserRouter>
    </QueryClientProvider>
  </StrictMode>,
);
