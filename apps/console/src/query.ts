import { QueryClient } from '@tanstack/react-query';

/**
 * The console's one store of server state (TanStack Query): every screen reads through it with a key that names
 * what it shows (`['orgs', org, 'teams']`), so two screens showing the same thing share one request and one answer,
 * a change the user made invalidates the keys it touches, and an answer is refreshed when the window regains focus.
 * Errors are not retried: the API's 4xx answers are final, and a 5xx is shown to the user with the screen's retry.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, staleTime: 10_000, refetchOnWindowFocus: true },
      mutations: { retry: false },
    },
  });
}
