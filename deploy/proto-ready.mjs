// Makes sure the generated proto code is there and newer than every .proto file, generating it only when it is
// not: the admin CLI, the simulator and the license tool start in a fraction of a second instead of paying for
// Nx and buf on every call. Generating holds the checkout's build lock (build-lock.mjs), as the console's build
// does, so a start beside another never finds the code half written.
import { withBuildLock } from './build-lock.mjs';
import { protoStale, runNx } from './freshness.mjs';

if (protoStale()) {
  await withBuildLock('the generated proto code', async () => {
    if (protoStale()) await runNx('proto:generate');
  });
}
