import { MARKETPLACE_READS } from '@platform/marketplace-listener-client';
import { marketplaceListenerV1 } from '@platform/proto';
import { MARKETPLACE_LISTENER_READS } from '../src/service';

// What the readers keep of this service (MARKETPLACE_READS, beside its calls) must be reads of it: a kept method that
// wrote would change what another reader keeps with no notice. Every other method is a write, announced.

describe("marketplace-listener's reads", () => {
  it('keeps only methods the service declares reads, and announces all the others', () => {
    for (const kept of Object.keys(MARKETPLACE_READS.listener)) expect(MARKETPLACE_LISTENER_READS).toContain(kept);
    const methods = Object.keys(marketplaceListenerV1.MarketplaceListenerServiceService);
    const writes = methods.filter((m) => !(MARKETPLACE_LISTENER_READS as readonly string[]).includes(m));
    expect(writes.sort()).toEqual(['createInstaller', 'reportUsage', 'revokeSubscription']);
  });
});
