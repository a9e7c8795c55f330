// Makes sure the generated proto code is there and newer than every .proto file, generating it only when it is
// not: the admin CLI, the simulator and the license tool start in a fraction of a second instead of paying for
// Nx and buf on every call.
import * as path from 'node:path';
import { newest, ROOT, runNx } from './freshness.mjs';

const generatedAt = newest(path.join(ROOT, 'libs/proto/src/gen'));
if (generatedAt === 0 || newest(path.join(ROOT, 'proto')) > generatedAt) runNx('proto:generate');
