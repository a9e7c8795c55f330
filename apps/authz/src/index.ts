export { authzApp, chooseEngine } from './app';
export { assertOpenFgaSettings } from './config';
// For the benchmarks in bench/: the engine without the service around it.
export { EmbeddedEngine, TypeSystem } from './engine';
export { migrations as authzMigrations } from '../migrations';
