export { callAsStranger, healthStatus, reflectedServices } from './grpc-probes';
export { startAppForTest, describeServiceContract, type AppUnderTest } from './service-contract';
export { describeMigrationRoundTrips, schemaSnapshot, type MigrationSeed } from './migration-round-trips';
export { startFakeApp, type FakeApp, type FakeHandlers, type ServiceTable } from './fake-app';
