export { testPostgresUrl, testNatsUrl, createTestDatabase, MissingServiceError } from './services';
export { testServiceConfig, eventually } from './config';
export { healthStatus, reflectedServices } from './grpc-probes';
export { startAppForTest, describeServiceContract, type AppUnderTest } from './service-contract';
