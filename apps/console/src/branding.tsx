import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from 'react';
import { api, ok, type Schema } from './api/client';

type Branding = Schema<'BrandingResponse'>;

interface BrandingApi {
  branding: Branding | undefined;
  /** Reads the branding again (after the settings screen changed it) and applies it at once. */
  reload(): Promise<void>;
}

const BrandingContext = createContext<BrandingApi>({ branding: undefined, reload: async () => undefined });

export const appNameOf = (b: Branding | undefined) => b?.appName || 'Platform';

/** Applies the site's branding to the page: title, primary colour (a CSS variable) and favicon. */
function apply(b: Branding): void {
  document.title = appNameOf(b);
  const color = /^#[0-9a-f]{3,8}$/i.test(b.primaryColor ?? '') ? b.primaryColor! : '';
  // CSSOM, not an inline style attribute: allowed by the page's Content-Security-Policy.
  if (color) document.documentElement.style.setProperty('--brand', color);
  else document.documentElement.style.removeProperty('--brand');
  const favicon = Object.values(b.favicons ?? {})[0];
  if (favicon) {
    let link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
    if (!link) {
      link = document.createElement('link');
      link.rel = 'icon';
      document.head.append(link);
    }
    link.href = favicon;
  }
}

export function BrandingProvider({ children }: { children: ReactNode }) {
  const [branding, setBranding] = useState<Branding>();
  const adopt = useCallback((next: Branding) => {
    apply(next);
    setBranding(next);
  }, []);
  // no-store: a changed branding must show now, not after the browser's revalidation.
  const reload = useCallback(async () => adopt(await ok(api.GET('/branding', { cache: 'no-store' }))), [adopt]);
  useEffect(() => {
    ok(api.GET('/branding', { cache: 'no-store' })).then(adopt, () => undefined);
  }, [adopt]);
  return <BrandingContext.Provider value={{ branding, reload }}>{children}</BrandingContext.Provider>;
}

export const useBranding = () => useContext(BrandingContext);
