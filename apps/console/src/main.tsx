import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter } from 'react-router';
import { App } from './app';
import { BrandingProvider } from './branding';
import { SessionProvider } from './session';
import './styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <BrandingProvider>
        <SessionProvider>
          <App />
        </SessionProvider>
      </BrandingProvider>
    </BrowserRouter>
  </StrictMode>,
);
