import { QueryClientProvider } from '@tanstack/react-query';
import { render, type RenderResult } from '@testing-library/react';
import type { ReactElement } from 'react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { createQueryClient } from '../src/query';
import { ActionScope } from '../src/ui/last-action';
import { reportCaughtError, ScreenAccess } from '../src/ui/no-access';

/** One stubbed answer of the API: a status, a JSON body and headers (`X-Total-Count` of a page), or a function of the request making one. */
type Reply = [status: number, body?: unknown, headers?: Record<string, string>];
export type Answer = Reply | ((req: Request) => Reply | Promise<Reply>);

/** What a component test's API answers, by `METHOD /path` below /api/v1 (query strings ignored), and what it was asked. */
export interface StubbedApi {
  /** Every request the screen made, as `METHOD /path?query` with its JSON body when it sent one (a multipart form is not shown). */
  calls: { call: string; body?: unknown }[];
}

/**
 * Renders a screen at `path` (matched by `pattern`, for its route parameters) as the console's shell holds it (the
 * query client, the scope of messages `ActionScope` and the "no access" page `ScreenAccess`) with an API that answers
 * from `answers`; an unstubbed request answers 404 so a test fails visibly when a screen asks for something it should
 * not.
 */
export function renderScreen(
  screen: ReactElement,
  opts: { path?: string; pattern?: string; answers: Record<string, Answer> },
): RenderResult & StubbedApi {
  const calls: StubbedApi['calls'] = [];
  globalThis.fetch = (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const text = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.text();
    const json = text && (req.headers.get('content-type') ?? '').includes('json');
    calls.push({ call: `${req.method} ${url.pathname.replace(/^\/api\/v1/, '')}${url.search}`, ...(json && { body: JSON.parse(text) }) });
    const answer = opts.answers[`${req.method} ${url.pathname.replace(/^\/api\/v1/, '')}`];
    const [status, body, headers] =
      typeof answer === 'function'
        ? await answer(new Request(req.url, { method: req.method, headers: req.headers, body: text || undefined }))
        : (answer ?? [404, { message: 'not stubbed' }]);
    return new Response(body === undefined ? null : JSON.stringify(body), {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });
  }) as typeof fetch;
  const path = opts.path ?? '/';
  const rendered = render(
    <QueryClientProvider client={createQueryClient()}>
      <MemoryRouter initialEntries={[path]}>
        {/* As the console's shell holds every screen: messages belong to the screen's last action. */}
        <ActionScope>
          <ScreenAccess>
            <Routes>
              <Route path={opts.pattern ?? path} element={screen} />
            </Routes>
          </ScreenAccess>
        </ActionScope>
      </MemoryRouter>
    </QueryClientProvider>,
    { onCaughtError: reportCaughtError },
  );
  return Object.assign(rendered, { calls });
}
