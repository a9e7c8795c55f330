/** Polls `probe` until it returns true or `timeoutMs` passes. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs = 10_000, everyMs = 100): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs}ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
