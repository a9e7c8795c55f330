// The member-cluster simulator (docs/simulator.md): a library the demo seed calls in-process, and the
// `npm run simulate` command (src/main.ts).
export {
  simulate,
  formatProgress,
  HubTakenError,
  type SimulateOptions,
  type Simulation,
  type SimulationResult,
  type Progress,
} from './simulate';
export { PlatformApi, ApiError, type ApiCredentials } from './api';
export { writePrivateFile } from './state';
export { buildWorld, DEFAULTS, PRODUCTS, type World, type WorldOptions } from './world';
export { messagesOf, countMessages, type SimMessage } from './messages';
